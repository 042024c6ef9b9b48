#!/usr/bin/env bash
# Run every libFuzzer target for FUZZ_SECS seconds each (FUZZ_SECS_<target>,
# e.g. FUZZ_SECS_diff=5, for one of them), one after the other, from the
# seed corpus in tests/fuzz/corpus/ (copied: the repo's seeds are not
# grown), plus generated seeds: the golden trace and its segments, a valid
# segment, and for the targets of several files (inputs, diff) those
# traces joined by fuzz_io.h's FUZZ_NEXT. Prints each target's
# executions; any crash, leak or sanitizer report fails.
#
# FUZZ_TARGETS="trace inputs" runs only those. run.sh --seeds DIR writes
# the seed corpora (DIR/TARGET/) and runs nothing, for a run by hand.
set -u
B=${B:-build}
FUZZ_B=${FUZZ_B:-$B-fuzz}
FUZZ_SECS=${FUZZ_SECS:-60}
FUZZ_TARGETS=${FUZZ_TARGETS:-trace kallsyms maps segment inputs export diff store live parquet}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
TMP=$(mktemp -d /tmp/d9fuzz.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail=0 total=0
S=$TMP
if [ "${1:-}" = --seeds ]; then
	[ $# = 2 ] || { echo "usage: run.sh [--seeds DIR]" >&2; exit 2; }
	S=$2
fi

for t in trace kallsyms maps segment inputs export diff store live parquet; do
	mkdir -p "$S/$t"
	cp tests/fuzz/corpus/$t/* "$S/$t/" 2>/dev/null
done
# the traces: the golden one; a flight recorder's dump (segments back to
# back, the last one cut); its segments alone and in pairs; the corpus's
# recordings of the demo (less their flags byte)
mk() { "$B/tests/golden/mktrace" "$@" || exit 1; }
mk "$TMP/golden.data"
mk --hostile "$TMP/hostile.data"
mk --lean "$TMP/lean.data"
mk --segments 0-3 --cut --dump SIGUSR1 "$TMP/segs.data"
for s in 0-0 1-1 2-2 3-3 0-1 2-3; do
	mk --segments $s "$TMP/seg$s.data"
done
for f in tests/fuzz/corpus/trace/demo-*; do
	tail -c +2 "$f" >"$TMP/${f##*/}.data"
done

# seed TARGET NAME FLAGS FILE...: the flags byte, then the files joined by
# FUZZ_NEXT
NEXT=$'\n--d9fuzz-next--\n'
seed() {
	local t=$1 name=$2 flags=$3 f
	shift 3
	{
		printf "\\$(printf %03o "$flags")"
		cat "$TMP/$1.data"
		shift
		for f; do
			printf '%s' "$NEXT"
			cat "$TMP/$f.data"
		done
	} >"$S/$t/$name"
}
# trace: the first byte picks the read flags
seed trace golden 0 golden
seed trace golden-lazy 1 golden
seed trace lean 0 lean
seed trace segments 0 segs
seed trace segments-lazy 3 segs
"$FUZZ_B/mkseed" "$S/segment" || exit 1
# live: snapshots packed by this build (fuzz_live.c says how)
D9FUZZ_SEEDS="$S/live" "$FUZZ_B/fuzz_live" || exit 1
# inputs: bits 0-1 read flags, 2 window, 3 a directory, 4 a copy, 5 JSON
seed inputs four 0 seg0-0 seg1-1 seg2-2 seg3-3
seed inputs four-lazy 1 seg0-0 seg1-1 seg2-2 seg3-3
seed inputs reversed 3 seg3-3 seg2-2 seg1-1 seg0-0
seed inputs gap 0 seg0-0 seg2-2
seed inputs overlap 1 seg0-1 seg1-1 seg2-3
seed inputs dir 8 seg0-0 seg1-1 seg2-2 seg3-3
seed inputs dir-lazy-copy 25 seg2-3 seg0-1
seed inputs window 5 seg0-0 seg1-1 seg2-2 seg3-3
seed inputs copy-json 48 segs seg3-3
seed inputs recordings 0 golden seg0-1
seed inputs demos 1 demo-perf demo-ctimer
# export: bits 0-1 pprof, pprof --offcpu, speedscope, chrome; 2 lazy; 3
# no inline; 4-5 --task; 6-7 speedscope --by, else window and frame leaf
for f in 0 1 2 3; do
	seed export golden-$f $f golden
	seed export segs-$f $((f | 4)) segs
	seed export demo-perf-$f $((f | 4)) demo-perf
	seed export demo-ctimer-$f $((f | 4)) demo-ctimer
done
seed export task-id $((1 | 16)) golden
seed export task-name $((2 | 32)) golden
seed export no-task $((3 | 48)) golden
seed export window-leaf $((3 | 64 | 128)) segs
seed export window-segs $((0 | 64)) segs
seed export by-thread $((2 | 192)) golden
seed export lean 0 lean
# parquet: bit 0 lazy; 4-5 --task
seed parquet golden 0 golden
seed parquet segs 1 segs
seed parquet demo-perf 1 demo-perf
seed parquet demo-ctimer 0 demo-ctimer
seed parquet task-name 32 golden
seed parquet hostile 0 hostile
seed parquet lean 0 lean
# diff: bit 0 folded; 1-2 --by; 3 lazy; 4-5 --task; 6 --min-poll; 7 one
# trace in two windows
seed diff same 1 golden golden
seed diff lean-full 1 golden lean
seed diff same-svg 0 golden golden
seed diff segments 1 seg0-1 seg2-3
seed diff by-task 3 seg2-3 seg0-1
seed diff by-thread-lazy $((1 | 6 | 8)) golden segs
seed diff demos 1 demo-perf demo-ctimer
seed diff task-id $((1 | 16)) golden segs
seed diff task-name $((0 | 32)) segs golden
seed diff min-poll $((1 | 64)) golden golden
seed diff windows 128 golden
seed diff windows-folded $((128 | 1 | 8)) segs
[ "$S" = "$TMP" ] || exit 0

for t in $FUZZ_TARGETS; do
	v=FUZZ_SECS_$t
	secs=${!v:-$FUZZ_SECS}
	# one process, -max_total_time: a crash stops it and exits non-zero
	(cd "$TMP" && "$ROOT/$FUZZ_B/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$TMP/crash-$t-" \
		"$TMP/$t") >"$TMP/$t.log" 2>&1
	rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/$t.log")
	total=$((total + ${n:-0}))
	if [ "$rc" = 0 ]; then
		echo "ok - fuzz_$t: ${n:-?} executions in ${secs}s, no finding"
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
