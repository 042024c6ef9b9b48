#!/usr/bin/env bash
# Run every libFuzzer target for FUZZ_SECS seconds each, from the seed
# corpus in tests/fuzz/corpus/ (copied: the repo's seeds are not grown),
# plus generated seeds: the golden trace, a valid segment. Prints each
# target's executions; any crash, leak or sanitizer report fails.
set -u
B=${B:-build}
FUZZ_B=${FUZZ_B:-$B-fuzz}
FUZZ_SECS=${FUZZ_SECS:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
TMP=$(mktemp -d /tmp/d9fuzz.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail=0 total=0

for t in trace kallsyms maps segment; do
	mkdir -p "$TMP/$t"
	cp tests/fuzz/corpus/$t/* "$TMP/$t/" 2>/dev/null
done
# (the trace target's first byte picks the read flags)
"$B/tests/golden/mktrace" "$TMP/golden.data" || exit 1
{ printf '\000'; cat "$TMP/golden.data"; } >"$TMP/trace/golden"
{ printf '\001'; cat "$TMP/golden.data"; } >"$TMP/trace/golden-lazy"
# a flight recorder's dump: segments back to back, the last one cut
"$B/tests/golden/mktrace" --segments 0-3 --cut --dump SIGUSR1 "$TMP/segs.data" || exit 1
{ printf '\000'; cat "$TMP/segs.data"; } >"$TMP/trace/segments"
{ printf '\003'; cat "$TMP/segs.data"; } >"$TMP/trace/segments-lazy"
"$FUZZ_B/mkseed" "$TMP/segment" || exit 1

for t in trace kallsyms maps segment; do
	# one process, -max_total_time: a crash stops it and exits non-zero
	(cd "$TMP" && "$ROOT/$FUZZ_B/fuzz_$t" -max_total_time="$FUZZ_SECS" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$TMP/crash-$t-" \
		"$TMP/$t") >"$TMP/$t.log" 2>&1
	rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/$t.log")
	total=$((total + ${n:-0}))
	if [ "$rc" = 0 ]; then
		echo "ok - fuzz_$t: ${n:-?} executions in ${FUZZ_SECS}s, no finding"
	else
		echo "not ok - fuzz_$t (exit $rc):"
		grep -m5 -E "ERROR|SUMMARY|runtime error|Test unit written" "$TMP/$t.log" | sed 's/^/    /'
		mkdir -p "$B/fuzz-crashes" && cp "$TMP"/crash-$t-* "$B/fuzz-crashes/" 2>/dev/null &&
			echo "    the input is in $B/fuzz-crashes/"
		fail=$((fail + 1))
	fi
done
echo "fuzz: $total executions, $fail target(s) with findings"
[ "$fail" = 0 ]
