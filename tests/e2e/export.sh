#!/usr/bin/env bash
# d9prof export --format pprof on a real recording of the demo, decoded by
# an independent decoder (the pprof-format npm package, installed into
# $B/e2e/export from tests/e2e/export/package.json): its totals and every
# stack's count match 'flame --by task --format folded' exactly (the
# folded roots are the task_id/task_name labels), every sample carries
# task_id, task_name, thread and tid, --task N keeps task N only, and
# --offcpu adds the off-CPU values. Skips if node, npm or the package
# cannot be had.
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=export
. "$(dirname "$0")/lib.sh"
DEMO=$ROOT/$B/examples/demo
NODE_DIR=$ROOT/$B/e2e/export
TRACE=$TMP/demo.data

# the decoder; 0, or 2 after saying why it is missing
need_decoder() {
	command -v node >/dev/null && command -v npm >/dev/null ||
		{ say "skip - no node or npm on this machine (apt-get install nodejs npm)"; return 2; }
	[ -d "$NODE_DIR/node_modules/pprof-format" ] && return 0
	mkdir -p "$NODE_DIR" && cp tests/e2e/export/package.json "$NODE_DIR/" &&
		(cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error >"$TMP/npm.log" 2>&1) ||
		{ tail -3 "$TMP/npm.log"; say "skip - cannot install pprof-format from npm"; return 2; }
}

# a 2 s recording of the demo in $TRACE, once
record_demo() {
	[ -s "$TRACE" ] && return 0
	"$DEMO" >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 0.3
	"$D9" record -p "$!" -d 2 -o "$TRACE" 2>"$TMP/rec.err" ||
		{ cat "$TMP/rec.err"; fail "record failed"; return 1; }
}

# check ARGS...: export with ARGS, compare with folded of the same ARGS
check() {
	local task=$1; shift
	"$D9" export -i "$TRACE" --format pprof -o "$TMP/p.pb.gz" "$@" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export $* failed"; return 1; }
	"$D9" flame -i "$TRACE" --by task --format folded ${task:+--task $task} >"$TMP/f.txt" \
		2>/dev/null || { fail "flame failed"; return 1; }
	NODE_PATH=$NODE_DIR/node_modules node tests/e2e/export/check.js "$TMP/p.pb.gz" "$TMP/f.txt" $task |
		sed 's/^/    /'
	return "${PIPESTATUS[0]}"
}

t_pprof_matches_folded_stacks_and_labels() {
	need_decoder || return
	record_demo || return
	check ""
}

t_pprof_task_keeps_only_that_task() {
	local task
	need_decoder || return
	record_demo || return
	# the task with the most samples
	task=$("$D9" tasks -i "$TRACE" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
	[ -n "$task" ] || { fail "no task in the demo's recording"; return 1; }
	check "$task" --task "$task"
}

t_pprof_offcpu_adds_a_third_value() {
	need_decoder || return
	record_demo || return
	"$D9" export -i "$TRACE" --format pprof --offcpu -o "$TMP/o.pb.gz" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export --offcpu failed"; return 1; }
	NODE_PATH=$NODE_DIR/node_modules node -e '
		const { Profile } = require("pprof-format");
		const p = Profile.decode(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
		const S = (i) => p.stringTable.strings[Number(i)];
		const t = p.sampleType.map((v) => S(v.type) + "/" + S(v.unit)).join(",");
		const off = p.sample.reduce((a, s) => a + Number(s.value[2]), 0);
		console.log("    " + t + ": " + (off / 1e6).toFixed(1) + " ms off-CPU");
		process.exit(t === "samples/count,cpu/nanoseconds,off-cpu/nanoseconds" && off > 0 ? 0 : 1);
	' "$TMP/o.pb.gz"
}

t_pprof_size_and_time_against_the_trace() {
	local s e
	record_demo || return
	s=$(date +%s%N)
	"$D9" export -i "$TRACE" --format pprof -o "$TMP/t.pb.gz" 2>/dev/null || { fail "export failed"; return 1; }
	e=$(date +%s%N)
	say "    trace $(stat -c %s "$TRACE") B, $("$D9" info -i "$TRACE" 2>/dev/null | grep -m1 -i 'samples' | xargs); pprof $(stat -c %s "$TMP/t.pb.gz") B in $(((e - s) / 1000000)) ms"
}

e2e_run_tests
