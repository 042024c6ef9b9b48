#!/bin/sh
# Install the Debian packages d9prof builds and tests with.
#   scripts/install-deps.sh --check   exit 0 if all are present, else list them
#   scripts/install-deps.sh           install what is missing (needs root)
set -eu
PKGS="build-essential clang clang-format libpfm4-dev libdw-dev libelf-dev libzstd-dev \
zlib1g-dev libiberty-dev libcriterion-dev pkg-config linux-perf man-db hyperfine time lld \
librust-tokio-dev librust-pin-project-lite-dev chromium python3 nodejs"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "missing packages:$missing"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "d9prof: missing packages:$missing" >&2
	echo "d9prof: run 'sudo scripts/install-deps.sh' (or apt-get install them)" >&2
	exit 1
fi
echo "d9prof: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
