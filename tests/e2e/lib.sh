# shellcheck shell=bash
# The harness every e2e script runs on: source it with NAME set, from the
# repo root's tests/e2e/. It sets B, ROOT (and cd's there), D9 (the
# recorder under test: D9=path overrides), TMP (removed at exit; KEEP=1
# keeps it and says where; a failed suite's goes to $E2E_KEEP_FAILED/NAME
# when set), PIDS (processes a test started: killed after
# each test and at exit), CLEAN_FILES (files outside TMP removed at exit),
# puts /usr/bin/python3 first on PATH (see below), and sources
# enough.sh. Define tests as t_* functions and end with e2e_run_tests. A
# test prints its reasons indented ("    ...", see fail) and returns 0
# (ok), 2 (skipped: it said why) or anything else (not ok).
#
# The runner
#   e2e_run_tests [T...]  e2e_run T... (default: every t_* function, by
#                         name), then e2e_summary
#   e2e_run T...          runs each test T matching ONLY=REGEX (against T
#                         with or without its t_), printing "== NAME: T",
#                         then "ok - T (Ns)", "skip - T" or "not ok - T
#                         (Ns)"; E2E_WRAP=FN runs "FN T" instead of T (a
#                         retry, a load around it), E2E_TAG is appended to
#                         T's name (" #2" for a second run)
#   e2e_summary           "NAME: N passed, N failed, N skipped" (the line
#                         scripts/check.sh reads); non-zero if one failed
#   e2e_skip_all WHY      the whole script skips: says "NAME: skip: WHY"
#                         and a summary of 1 skipped, exits 0
#
# Tools for tests
#   say TEXT, fail TEXT   a line; an indented reason, returning 1
#   need_perf             0 where perf_event records here, else says why: 2
#   start_ready [-2] [-t SECS] OUT CMD [ARG...]
#                         CMD in the background (SPID, in PIDS), stdout in
#                         OUT, stderr in OUT.err (-2: in OUT too); waits
#                         up to SECS (5) for a line "ready..." in OUT: 1,
#                         said, if none came or CMD died first
#   stop PID              SIGTERM and reap (quiet when PID is gone)
#   wait_for FILE ERE SECS  until FILE has a line matching ERE: 1 if not
#   weight FOLDED         the total weight of a folded file
#   info_json TRACE EXPR  a python3 expression over j, `d9prof info --json`
set -u
B=${B:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
D9=${D9:-$ROOT/$B/d9prof}
TMP=$(mktemp -d "/tmp/d9$NAME.XXXXXX")
PIDS=()
CLEAN_FILES=()
pass=0 fail=0 skip=0
# python3, for the checks that read JSON: Debian's (what
# scripts/install-deps.sh installs, as s3lib.sh takes Debian's AWS CLI)
# where PATH would find another first, as pyenv's shim: it started in
# 78 ms, /usr/bin/python3 in 13, and the e2e suites start it some 100
# times
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir -p "$TMP/bin" && ln -s /usr/bin/python3 "$TMP/bin/python3" && PATH=$TMP/bin:$PATH
fi
# S3's credential chain ends with the instance metadata: never asked of
# 169.254.169.254 here (tests that want it name a fake on loopback)
export AWS_EC2_METADATA_DISABLED=true
e2e_kill_started() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	PIDS=()
}
e2e_cleanup() {
	local f
	e2e_kill_started
	for f in "${CLEAN_FILES[@]}"; do rm -f "$f"; done
	case ${KEEP:-0} in
	0) ;;
	*) printf '%s: kept %s\n' "$NAME" "$TMP"; return ;;
	esac
	# a failure's traces and outputs, for the post-mortem (make check
	# names the place: a CI flake seen once is not lost with its trace)
	if [ "${fail:-0}" -gt 0 ] && [ -n "${E2E_KEEP_FAILED:-}" ] &&
		mkdir -p "$E2E_KEEP_FAILED" && rm -rf "${E2E_KEEP_FAILED:?}/$NAME" &&
		mv "$TMP" "$E2E_KEEP_FAILED/$NAME" 2>/dev/null; then
		printf '%s: kept what the failed tests left in %s\n' "$NAME" "$E2E_KEEP_FAILED/$NAME"
	else
		rm -rf "$TMP"
	fi
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '%s\n' "$*"; }
fail() { say "    $*"; return 1; }
# shellcheck source=tests/e2e/enough.sh
. "$ROOT/tests/e2e/enough.sh"

# need_perf: 0 where perf_event can record here (as root it can, whatever
# perf_event_paranoid says), else say why and return 2 (skipped). The
# probe is one short recording, made on the first call (of 0.01 s: the
# events are opened, or refused, before it starts; 0.3 s of it cost each
# suite a quarter of a second more).
PERF_WHY=unprobed
# need_record VAR ARG...: 0 when `record ARG...` works here, else 2 and
# why; probed once, the answer kept in VAR ("unprobed" before)
need_record() {
	local -n why=$1
	shift
	if [ "$why" = unprobed ]; then
		why=""
		"$D9" record "$@" -d 0.01 -o "$TMP/probe-rec.data" -- true \
			2>"$TMP/probe-rec.err" || why=$(tail -1 "$TMP/probe-rec.err")
	fi
	[ -z "$why" ] && return 0
	say "    skip: $why"
	return 2
}

# need_bpf: 0 when `record --sched bpf` works here, else 2 and why (once)
BPF_WHY=unprobed
need_bpf() {
	need_record BPF_WHY --sched bpf
}

need_perf() {
	local probe
	if [ "$PERF_WHY" = unprobed ]; then
		PERF_WHY=""
		if ! probe=$("$D9" record -d 0.01 -o "$TMP/probe.data" -- sleep 1 2>&1) &&
			grep -q "perf_event_open refused" <<<"$probe"; then
			PERF_WHY=$(grep -m1 refused <<<"$probe")
		fi
	fi
	[ -z "$PERF_WHY" ] && return 0
	say "    skip: $PERF_WHY"
	return 2
}

wait_for() {
	local i n
	n=$(awk -v s="$3" 'BEGIN { print int(s * 20) }')
	for ((i = 0; i < n; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

start_ready() {
	local merge=0 secs=5 out i n
	while :; do
		case $1 in
		-2) merge=1; shift ;;
		-t) secs=$2; shift 2 ;;
		*) break ;;
		esac
	done
	out=$1
	shift
	# emptied here, not in the child: a "ready" left by an earlier run
	# into the same file must not be read before the child truncates it
	: >"$out"
	if [ "$merge" = 1 ]; then
		"$@" >"$out" 2>&1 &
	else
		"$@" >"$out" 2>"$out.err" &
	fi
	SPID=$!
	PIDS+=("$SPID")
	n=$(awk -v s="$secs" 'BEGIN { print int(s * 20) }')
	for ((i = 0; i < n; i++)); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^ready' "$out" 2>/dev/null && return 0
	if [ "$merge" = 1 ]; then
		fail "${1##*/} did not get ready: $(head -c 300 "$out")"
	else
		fail "${1##*/} did not get ready: $(head -c 300 "$out.err")"
	fi
}

stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

weight() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

info_json() {
	"$D9" info --json -i "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}

e2e_run() {
	local t rc secs t0 name
	for t in "$@"; do
		declare -F "$t" >/dev/null || { say "missing test $t"; exit 1; }
	done
	for t in "$@"; do
		[ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$t" &&
			! grep -qE -- "$ONLY" <<<"${t#t_}" && continue
		name=${t#t_}${E2E_TAG:-}
		say "== $NAME: $name"
		t0=$(date +%s.%N)
		${E2E_WRAP:+"$E2E_WRAP"} "$t"; rc=$?
		e2e_kill_started
		secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		case $rc in
		0) pass=$((pass + 1)); say "ok - $name (${secs}s)" ;;
		2) skip=$((skip + 1)); say "skip - $name" ;;
		*) fail=$((fail + 1)); say "not ok - $name (${secs}s)" ;;
		esac
	done
}

e2e_summary() {
	say "$NAME: $pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}

e2e_run_tests() {
	if [ $# = 0 ]; then
		# shellcheck disable=SC2046
		set -- $(declare -F | awk '{print $3}' | grep '^t_')
	fi
	e2e_run "$@"
	e2e_summary
}

e2e_skip_all() {
	say "$NAME: skip: $*"
	say "$NAME: 0 passed, 0 failed, 1 skipped"
	exit 0
}

# need_go: 0 where `go tool pprof` runs, else say why and return 2
need_go() {
	command -v go >/dev/null ||
		{ say "skip - no go on this machine (apt-get install golang-go)"; return 2; }
	go tool pprof -h >/dev/null 2>&1 ||
		{ say "skip - 'go tool pprof' does not run here"; return 2; }
}

# pp ARGS...: go tool pprof ARGS, offline (its stderr in $TMP/pp.err)
pp() {
	PPROF_TMPDIR=$TMP PPROF_BINARY_PATH=/nonexistent go tool pprof "$@" 2>"$TMP/pp.err"
}

# svg_subtitle FILE: the subtitle of a flame graph SVG, its lines joined
# as they read (the tags of its lines dropped)
svg_subtitle() {
	grep -o '<text id="subtitle".*</text>' "$1" | sed 's/<[^>]*>//g'
}
