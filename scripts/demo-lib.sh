# shellcheck shell=bash
# demo-lib.sh - what demo.sh and demo-tokio.sh share, sourced by both
# after they set B, OUT, SECS and D9: start a demo service, record it,
# show views (what was lost said once) and a task's hottest stacks.

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
	# (RECORD_ARGS: more of record's options, for tests)
	# shellcheck disable=SC2086
	"$D9" record -p "$DPID" -d "$SECS" ${RECORD_ARGS:-} -o "$OUT/d9prof.data"
	kill "$DPID" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	trap - EXIT
}

# view ARGS...: `d9prof ARGS`, its output shown without the line each view
# adds about what the recording lost ("# lost: ..." on stdout, "d9prof:
# lost: ..." on stderr): record's summary just said it, and a page of
# views says it once. Run alone, each view says it, as do the files
# written here. Its exit status is d9prof's.
view() {
	local rc=0
	"$D9" "$@" >"$OUT/view.out" 2>"$OUT/view.err" || rc=$?
	grep -v '^# lost: ' "$OUT/view.out" || true
	grep -v '^d9prof: lost: ' "$OUT/view.err" >&2 || true
	rm -f "$OUT/view.out" "$OUT/view.err"
	return $rc
}

# hottest_stacks FOLDED DEPTH: the 3 heaviest stacks of FOLDED, each as
# its DEPTH innermost frames, leaf first ("n  leaf <- caller ...").
hottest_stacks() {
	awk -v depth="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";");
		s = f[k]; for (i = 1; i < depth; i++) s = s " <- " f[k - i];
		printf "%d\t%s\n", n, s }' "$1" |
		sort -n -r | head -3 | awk -F'\t' '{ printf "  %6d  %s\n", $1, $2 }'
}
