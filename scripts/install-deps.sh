#!/bin/sh
# Install the Debian packages d9prof needs, by what it is for:
#   scripts/install-deps.sh [--check] [build|demo|tokio|all]
#     build  build d9prof and record (what 'make' needs)
#     demo   build + what 'make demo' runs (the same: the C demo is ours)
#     tokio  demo + the Tokio and tracing crates 'make demo-tokio' builds
#            offline (and hyper: the zero-code tests' server)
#     all    tokio + what 'make check' and 'make bench' use (the default)
#   --check  exit 0 if all are present, else list what is missing
# Installing needs root; it waits up to 10 minutes for another apt or
# dpkg that holds the lock (unattended-upgrades on a fresh machine).
set -eu
BUILD="build-essential clang libpfm4-dev libdw-dev libelf-dev libzstd-dev zlib1g-dev \
libiberty-dev pkg-config man-db systemtap-sdt-dev libncurses-dev libcurl4-openssl-dev \
libbpf-dev bpftool"
TOKIO="librust-tokio-dev librust-pin-project-lite-dev librust-tracing-dev \
librust-tracing-subscriber-dev librust-hyper-dev"
CHECK="clang-format libcriterion-dev linux-perf hyperfine time lld chromium python3 nodejs golang-go \
tmux awscli"

check=0
case "${1:-}" in --check) check=1; shift ;; esac
case "${1:-all}" in
build | demo) PKGS=$BUILD ;;
tokio) PKGS="$BUILD $TOKIO" ;;
all) PKGS="$BUILD $TOKIO $CHECK" ;;
*) echo "usage: scripts/install-deps.sh [--check] [build|demo|tokio|all]" >&2; exit 2 ;;
esac

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$check" = 1 ]; then
	echo "missing packages:$missing"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "d9prof: missing packages:$missing" >&2
	echo "d9prof: run 'sudo scripts/install-deps.sh ${1:-all}' (or apt-get install them)" >&2
	exit 1
fi
echo "d9prof: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# another apt holding the lock: wait for it rather than fail at once
LOCK="-o DPkg::Lock::Timeout=600"
# shellcheck disable=SC2086
apt-get $LOCK update -q >/dev/null
# shellcheck disable=SC2086
apt-get $LOCK install -y -q --no-install-recommends $missing >/dev/null
