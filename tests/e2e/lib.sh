# shellcheck shell=bash
# The harness the e2e scripts share: source it with NAME set, from the repo
# root's tests/e2e/. It sets B, ROOT (and cd's there), D9 (the recorder under
# test: D9=path overrides), TMP (removed at exit), PIDS (processes a test
# started: killed after each test and at exit), say and fail; define tests
# as t_* functions and end with e2e_run_tests, which runs them in the order
# declared (ONLY=REGEX picks some) and exits non-zero if one failed. A test
# returns 0 (ok), 2 (skipped: it said why) or anything else (not ok).
set -u
B=${B:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
D9=${D9:-$ROOT/$B/d9prof}
TMP=$(mktemp -d "/tmp/d9$NAME.XXXXXX")
PIDS=()
pass=0 fail=0 skip=0
e2e_kill_started() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	PIDS=()
}
trap 'e2e_kill_started; rm -rf "$TMP"' EXIT
say() { printf '%s\n' "$*"; }
fail() { say "    $*"; return 1; }

# need_perf: 0 where perf_event can record here (as root it can, whatever
# perf_event_paranoid says), else say why and return 2 (skipped). The
# probe is one short recording, made on the first call.
PERF_WHY=unprobed
need_perf() {
	local probe
	if [ "$PERF_WHY" = unprobed ]; then
		PERF_WHY=""
		if ! probe=$("$D9" record -d 0.3 -o "$TMP/probe.data" -- sleep 1 2>&1) &&
			grep -q "perf_event_open refused" <<<"$probe"; then
			PERF_WHY=$(grep -m1 refused <<<"$probe")
		fi
	fi
	[ -z "$PERF_WHY" ] && return 0
	say "    skip: $PERF_WHY"
	return 2
}

e2e_run_tests() {
	local t rc
	for t in $(declare -F | awk '{print $3}' | grep '^t_'); do
		[ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$t" && continue
		say "== $NAME: ${t#t_}"
		t0=$(date +%s.%N)
		$t; rc=$?
		e2e_kill_started
		secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		case $rc in
		0) pass=$((pass + 1)); say "ok - ${t#t_} (${secs}s)" ;;
		2) skip=$((skip + 1)) ;;
		*) fail=$((fail + 1)); say "not ok - ${t#t_} (${secs}s)" ;;
		esac
	done
	say "$NAME: $pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}
