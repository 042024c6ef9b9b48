#!/usr/bin/env bash
# make demo: start the bundled demo runtime, record it with
# `d9prof record -p`, and write the task table and per-task flamegraphs.
set -eu
B=${B:-build}
OUT=${OUT:-$B/demo}
SECS=${SECS:-5}
D9=$B/d9prof
mkdir -p "$OUT"
# shellcheck source=scripts/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"

demo_start "$B/examples/demo"
echo "demo runtime running as pid $DPID:"
grep '^task' "$OUT/demo.out" | sed 's/^/  /'
echo
demo_record
echo
echo "\$ d9prof report -i $OUT/d9prof.data   # (abridged: the workers and the red flags)"
"$D9" report -i "$OUT/d9prof.data" >"$OUT/report.txt" 2>"$OUT/report.err" ||
	{ cat "$OUT/report.err" >&2; exit 1; }
# (record's summary said what was lost: the flag that says it again, and
# its next line, are left to report.txt)
sed -n '/^== Workers/,/^$/p; /^== Red flags/,$p' "$OUT/report.txt" |
	sed '/^  ! data lost/,+1d'
rm -f "$OUT/report.err"
echo
echo "\$ d9prof tasks -i $OUT/d9prof.data --by name"
view tasks -i "$OUT/d9prof.data" --by name
view flame -i "$OUT/d9prof.data" -o "$OUT/all-tasks.svg"
for t in 1 2 3 4; do
	view flame -i "$OUT/d9prof.data" --task $t -o "$OUT/task-$t.svg"
	view flame -i "$OUT/d9prof.data" --task $t --format folded >"$OUT/task-$t.folded"
done
echo
echo "task 1 (cpu_hog), hottest stacks:"
hottest_stacks "$OUT/task-1.folded" 2
echo
echo "\$ d9prof polls -i $OUT/d9prof.data --min 1ms --limit 5"
view polls -i "$OUT/d9prof.data" --min 1ms --limit 5
view offcpu -i "$OUT/d9prof.data" --task 2 --min-poll 1ms -o "$OUT/offcpu-task-2.svg"
echo
echo "\$ d9prof spans -i $OUT/d9prof.data   # the demo's own spans: batch, read"
view spans -i "$OUT/d9prof.data"
echo
echo "\$ d9prof spans -i $OUT/d9prof.data --name read --instances --limit 1"
view spans -i "$OUT/d9prof.data" --name read --instances --limit 1
echo
echo "flamegraphs (open in a browser):"
echo "  $OUT/all-tasks.svg      every sample, one root frame per task name"
for t in 1 2 3 4; do
	echo "  $OUT/task-$t.svg         task $t only ($(grep "^task $t " "$OUT/demo.out" | cut -d' ' -f3))"
done
echo "  $OUT/offcpu-task-2.svg  what task 2's slow polls blocked on (us off-CPU)"
echo "folded stacks: $OUT/task-N.folded; the trace: $OUT/d9prof.data;"
echo "the whole report: $OUT/report.txt"
echo
echo "d9prof itself is $D9: run it from here, e.g."
echo "  $D9 delays -i $OUT/d9prof.data --min 1ms"
echo "or put it on PATH with 'sudo make install' (PREFIX=/usr/local; man d9prof then works too)."
