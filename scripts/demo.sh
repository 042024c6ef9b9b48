#!/usr/bin/env bash
# make demo: start the bundled demo runtime, record it with
# `d9prof record -p`, and write the task table and per-task flamegraphs.
set -eu
B=${B:-build}
OUT=${OUT:-$B/demo}
SECS=${SECS:-5}
D9=$B/d9prof
mkdir -p "$OUT"

"$B/examples/demo" -w 2 >"$OUT/demo.out" 2>"$OUT/demo.err" &
DPID=$!
trap 'kill $DPID 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	grep -q '^ready' "$OUT/demo.out" && break
	sleep 0.05
done
echo "demo runtime running as pid $DPID:"
grep '^task' "$OUT/demo.out" | sed 's/^/  /'
echo
echo "\$ d9prof record -p $DPID -d $SECS -o $OUT/d9prof.data"
"$D9" record -p "$DPID" -d "$SECS" -o "$OUT/d9prof.data"
kill "$DPID" 2>/dev/null || true
wait "$DPID" 2>/dev/null || true
trap - EXIT
echo
echo "\$ d9prof report -i $OUT/d9prof.data   # (abridged: the workers and the red flags)"
"$D9" report -i "$OUT/d9prof.data" >"$OUT/report.txt"
sed -n '/^== Workers/,/^$/p; /^== Red flags/,$p' "$OUT/report.txt"
echo
echo "\$ d9prof tasks -i $OUT/d9prof.data --by name"
"$D9" tasks -i "$OUT/d9prof.data" --by name
"$D9" flame -i "$OUT/d9prof.data" -o "$OUT/all-tasks.svg"
for t in 1 2 3 4; do
	"$D9" flame -i "$OUT/d9prof.data" --task $t -o "$OUT/task-$t.svg"
	"$D9" flame -i "$OUT/d9prof.data" --task $t --format folded >"$OUT/task-$t.folded"
done
echo
echo "task 1 (cpu_hog), hottest stacks:"
awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
	printf "%d\t%s <- %s\n", n, f[k], f[k - 1] }' "$OUT/task-1.folded" |
	sort -n -r | head -3 | awk -F'\t' '{ printf "  %6d  %s\n", $1, $2 }'
echo
echo "\$ d9prof polls -i $OUT/d9prof.data --min 1ms --limit 5"
"$D9" polls -i "$OUT/d9prof.data" --min 1ms --limit 5
"$D9" offcpu -i "$OUT/d9prof.data" --task 2 --min-poll 1ms -o "$OUT/offcpu-task-2.svg"
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
