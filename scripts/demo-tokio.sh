#!/usr/bin/env bash
# make demo-tokio: build and start the Tokio demo service
# (examples/tokio), record it with `d9prof record -p`, and show the same
# views as make demo: task table, hottest stacks, slowest polls, what the
# blocking handler waited on, flamegraphs.
set -eu
B=${B:-build}
OUT=${OUT:-$B/demo-tokio}
SECS=${SECS:-5}
D9=$B/d9prof
BIN=$B/cargo/release/d9demo-tokio
mkdir -p "$OUT"
# shellcheck source=scripts/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"

demo_start "$BIN"
echo "Tokio demo service running as pid $DPID (examples/tokio/src/main.rs)"
echo
demo_record
echo
echo "\$ d9prof tasks -i $OUT/d9prof.data   (unnamed tasks: their spawn location)"
view tasks -i "$OUT/d9prof.data" | head -10
# task ids by name, from the table
tid() { "$D9" tasks -i "$OUT/d9prof.data" | awk -v n="$1" '$2 == n { print $1; exit }'; }
CPU=$(tid cpu_handler)
BLK=$(tid blocking_handler)
view flame -i "$OUT/d9prof.data" -o "$OUT/all-tasks.svg"
view flame -i "$OUT/d9prof.data" --task "$CPU" -o "$OUT/cpu_handler.svg"
view flame -i "$OUT/d9prof.data" --task "$CPU" --format folded >"$OUT/cpu_handler.folded"
echo
echo "task $CPU (cpu_handler), hottest stacks:"
hottest_stacks "$OUT/cpu_handler.folded" 3
echo
echo "\$ d9prof polls -i $OUT/d9prof.data --min 1ms --limit 5"
view polls -i "$OUT/d9prof.data" --min 1ms --limit 5
view offcpu -i "$OUT/d9prof.data" --task "$BLK" --min-poll 1ms -o "$OUT/blocking_handler-offcpu.svg"
view offcpu -i "$OUT/d9prof.data" --task "$BLK" --min-poll 1ms --format folded \
	>"$OUT/blocking_handler-offcpu.folded"
echo
echo "task $BLK (blocking_handler) blocked its worker in (us off-CPU, slow polls):"
# (stacks that meet in the same application frame and call are one path)
awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
	for (i = k; i > 1 && f[i] !~ /^d9demo_tokio::/; i--) ;
	us[f[i] " -> " f[i + 1]] += n }
	END { for (p in us) printf "%d\t%s\n", us[p], p }' "$OUT/blocking_handler-offcpu.folded" |
		sort -n -r | head -2 | awk -F'\t' '{ printf "  %9d  %s\n", $1, $2 }'
echo
echo "\$ d9prof spans -i $OUT/d9prof.data   # tracing's spans, through d9prof::tracing"
view spans -i "$OUT/d9prof.data"
echo
echo "\$ d9prof spans -i $OUT/d9prof.data --name slow_route --instances --limit 1"
view spans -i "$OUT/d9prof.data" --name slow_route --instances --limit 1
echo
echo "flamegraphs (open in a browser):"
echo "  $OUT/all-tasks.svg                  every sample, one root frame per task"
echo "  $OUT/cpu_handler.svg                task $CPU only"
echo "  $OUT/blocking_handler-offcpu.svg    what task $BLK's slow polls blocked on"
echo "the trace: $OUT/d9prof.data"
