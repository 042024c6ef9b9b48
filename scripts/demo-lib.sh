# shellcheck shell=bash
# demo-lib.sh - what demo.sh and demo-tokio.sh share, sourced by both
# after they set B, OUT, SECS and D9: start a demo service, record it,
# and show a task's hottest stacks.

# demo_start BIN: run BIN -w 2 in the background (its output in
# $OUT/demo.out and demo.err; killed at exit) and wait up to 5 s for its
# "ready" line. DPID: its pid.
demo_start() {
	"$1" -w 2 >"$OUT/demo.out" 2>"$OUT/demo.err" &
	DPID=$!
	trap 'kill $DPID 2>/dev/null || true' EXIT
	for _ in $(seq 100); do
		grep -q '^ready' "$OUT/demo.out" && break
		sleep 0.05
	done
}

# demo_record: record the service for $SECS s into $OUT/d9prof.data,
# saying the command, then stop it.
demo_record() {
	echo "\$ d9prof record -p $DPID -d $SECS -o $OUT/d9prof.data"
	"$D9" record -p "$DPID" -d "$SECS" -o "$OUT/d9prof.data"
	kill "$DPID" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	trap - EXIT
}

# hottest_stacks FOLDED DEPTH: the 3 heaviest stacks of FOLDED, each as
# its DEPTH innermost frames, leaf first ("n  leaf <- caller ...").
hottest_stacks() {
	awk -v depth="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
		s = f[k]; for (i = 1; i < depth; i++) s = s " <- " f[k - i];
		printf "%d\t%s\n", n, s }' "$1" |
		sort -n -r | head -3 | awk -F'\t' '{ printf "  %6d  %s\n", $1, $2 }'
}
