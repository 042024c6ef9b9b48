#!/usr/bin/env bash
# d9prof export --format pprof on a real recording of the demo, decoded by
# an independent decoder (the pprof-format npm package, installed into
# $B/e2e/export from tests/e2e/export/package.json): its totals and every
# stack's count match 'flame --by task --format folded' exactly (the
# folded roots are the task_id/task_name labels), every sample carries
# task_id, task_name, thread and tid, --task N keeps task N only, and
# --offcpu adds the off-CPU values. The speedscope export validates
# against the schema the speedscope package ships (with ajv), matches
# folded stack for stack (--by task and --by thread), and loads in
# speedscope itself, served from node_modules to headless Chromium: the
# page names the busiest task and demo_hot_spin (Sandwich view, a DOM
# table) and shows no error; screenshots stay in $B/e2e/export/out. Skips
# if node, npm, the packages, Chromium or python3 cannot be had. The chrome
# (Trace Event Format) export is checked by check_chrome.py: valid JSON,
# durations >= 0, polls in order and disjoint per thread, flows paired,
# X slices nest per thread, every sf a stackFrames id whose chain ends,
# profile samples = info's counts.samples, poll slices = polls --limit 0;
# and it loads in Chromium's own DevTools Performance panel (devtools.js,
# through playwright-core): DevTools' trace engine finds the same thread
# tracks, polls, samples and wake flows, and the panel loads it without
# error (screenshot in $B/e2e/export/out). Perfetto UI cannot be had
# offline here.
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
	local m
	for m in pprof-format speedscope ajv playwright-core ""; do
		[ -z "$m" ] && return 0
		[ -d "$NODE_DIR/node_modules/$m" ] || break
	done
	mkdir -p "$NODE_DIR" && cp tests/e2e/export/package.json "$NODE_DIR/" &&
		(cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error >"$TMP/npm.log" 2>&1) ||
		{ tail -3 "$TMP/npm.log"; say "skip - cannot install the test packages (pprof-format, speedscope, ajv, playwright-core) from npm"; return 2; }
}

# a 2 s recording of the demo in $TRACE, once
record_demo() {
	[ -s "$TRACE" ] && return 0
	start_ready "$TMP/demo.out" "$DEMO" || return 1
	"$D9" record -p "$SPID" -d 2 -o "$TRACE" 2>"$TMP/rec.err" ||
		{ cat "$TMP/rec.err"; fail "record failed"; return 1; }
}

# busiest_task: TASK, the id of the task with the most samples in $TRACE
busiest_task() {
	TASK=$("$D9" tasks -i "$TRACE" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
	[ -n "$TASK" ] || fail "no task in the demo's recording"
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
	need_decoder || return
	record_demo || return
	busiest_task || return 1
	check "$TASK" --task "$TASK"
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

# speedscope BY [ARGS...]: export --by BY ARGS and compare with folded
# --by BY ARGS
speedscope() {
	"$D9" export -i "$TRACE" --format speedscope --by "$@" -o "$TMP/s-$1.json" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export --format speedscope --by $* failed"; return 1; }
	"$D9" flame -i "$TRACE" --by "$@" --format folded >"$TMP/f-$1.txt" 2>/dev/null ||
		{ fail "flame failed"; return 1; }
	NODE_PATH=$NODE_DIR/node_modules node tests/e2e/export/speedscope.js "$TMP/s-$1.json" \
		"$TMP/f-$1.txt" | sed 's/^/    /'
	return "${PIPESTATUS[0]}"
}

t_speedscope_validates_and_matches_folded_by_task() {
	need_decoder || return
	record_demo || return
	speedscope task
}

t_speedscope_validates_and_matches_folded_by_thread() {
	need_decoder || return
	record_demo || return
	speedscope thread
}

t_speedscope_task_keeps_only_that_task() {
	local task
	need_decoder || return
	record_demo || return
	busiest_task || return 1
	task=$TASK
	speedscope task --task "$task" || return
	node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1])).profiles;
		process.exit(p.length === 1 && p[0].name.startsWith("task " + process.argv[2]) ? 0 : 1)' \
		"$TMP/s-task.json" "$task" || { fail "--task $task: not one profile of that task"; return 1; }
}

t_speedscope_bad_requests_are_clear_errors() {
	local rc
	record_demo || return
	"$D9" export -i "$TRACE" --format speedscope --offcpu -o "$TMP/x.json" 2>"$TMP/e.err"
	rc=$?
	[ "$rc" = 2 ] && grep -q -- '--offcpu is for --format pprof only' "$TMP/e.err" ||
		{ cat "$TMP/e.err"; fail "--offcpu with speedscope: exit $rc"; return 1; }
	"$D9" export -i "$TRACE" --format speedscope --task 999999999 -o "$TMP/x.json" 2>"$TMP/e.err"
	rc=$?
	[ "$rc" = 1 ] || { cat "$TMP/e.err"; fail "a task not in the trace: exit $rc"; return 1; }
}

# Chromium's command in $CHROME; 0, or 2 after saying it is missing
find_chromium() {
	for CHROME in ${CHROMIUM:-} chromium chromium-browser google-chrome ""; do
		command -v "$CHROME" >/dev/null 2>&1 && return 0
	done
	say "skip - no chromium on PATH (apt-get install chromium)"
	return 2
}

# speedscope in headless Chromium: a load failure is an alert(), which
# leaves the dumped DOM empty, so the checks below catch it too
t_speedscope_loads_in_speedscope_in_chromium() {
	local out=$ROOT/$B/e2e/export/out www=$TMP/www port url busiest c
	need_decoder || return
	command -v python3 >/dev/null || { say "skip - no python3 to serve speedscope"; return 2; }
	find_chromium || return
	c=$CHROME
	record_demo || return
	mkdir -p "$out" "$www" || return
	ln -s "$NODE_DIR/node_modules/speedscope/dist/release" "$www/speedscope"
	"$D9" export -i "$TRACE" --format speedscope -o "$www/p.json" 2>/dev/null ||
		{ fail "export failed"; return 1; }
	cp "$www/p.json" "$out/"
	python3 tests/e2e/export/serve.py "$www" "$TMP/port" &
	PIDS+=($!)
	for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	port=$(cat "$TMP/port" 2>/dev/null) || { fail "the http server did not start"; return 1; }
	url="http://127.0.0.1:$port/speedscope/index.html#profileURL=http%3A%2F%2F127.0.0.1%3A$port%2Fp.json"
	busiest=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).profiles[0].name)' "$www/p.json")
	for v in sandwich left-heavy; do
		timeout 60 "$c" --headless --no-sandbox --disable-gpu --disable-background-networking \
			--no-first-run --disable-dev-shm-usage --user-data-dir="$TMP/chromium" \
			--window-size=1400,900 --virtual-time-budget=10000 \
			--screenshot="$out/speedscope-$v.png" "$url&view=$v" >/dev/null 2>>"$out/chromium.log"
	done
	timeout 60 "$c" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--no-first-run --disable-dev-shm-usage --user-data-dir="$TMP/chromium" \
		--window-size=1400,900 --virtual-time-budget=10000 \
		--dump-dom "$url&view=sandwich" >"$out/sandwich.dom" 2>>"$out/chromium.log"
	[ -s "$out/sandwich.dom" ] || { fail "speedscope rendered nothing (a load error alert?)"; return 1; }
	grep -qi 'something went wrong\|unrecognized format' "$out/sandwich.dom" &&
		{ fail "speedscope says it could not load the export"; return 1; }
	grep -q "$busiest" "$out/sandwich.dom" ||
		{ fail "speedscope does not show the busiest profile '$busiest'"; return 1; }
	grep -q '>demo_hot_spin<' "$out/sandwich.dom" ||
		{ fail "speedscope does not list demo_hot_spin"; return 1; }
	[ -s "$out/speedscope-left-heavy.png" ] || { fail "no screenshot"; return 1; }
	say "    speedscope shows '$busiest' and demo_hot_spin (screenshots in $out)"
}

# size_and_time FORMAT: the export's size and time against the trace's
size_and_time() {
	local s e
	record_demo || return
	s=$(date +%s%N)
	"$D9" export -i "$TRACE" --format "$1" -o "$TMP/size.$1" 2>/dev/null ||
		{ fail "export --format $1 failed"; return 1; }
	e=$(date +%s%N)
	say "    trace $(stat -c %s "$TRACE") B, $("$D9" info -i "$TRACE" 2>/dev/null | grep -m1 -i 'samples' | xargs); $1 $(stat -c %s "$TMP/size.$1") B in $(((e - s) / 1000000)) ms"
}

t_pprof_size_and_time_against_the_trace() {
	size_and_time pprof
}

t_speedscope_size_and_time_against_the_trace() {
	size_and_time speedscope
}

# chrome_export [TASK]: the chrome export (of task TASK's polls) in
# $TMP/c.json, and what it must hold in $SAMPLES and $POLLS: the trace's
# samples (info; folded's of TASK) and polls (polls --limit 0)
chrome_export() {
	local task=${1:-}

	"$D9" export -i "$TRACE" --format chrome ${task:+--task "$task"} -o "$TMP/c.json" \
		2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export --format chrome ${task:+--task $task} failed"; return 1; }
	if [ -n "$task" ]; then
		SAMPLES=$("$D9" flame -i "$TRACE" --task "$task" --format folded 2>/dev/null |
			weight /dev/stdin)
	else
		SAMPLES=$(info_json "$TRACE" "j['counts']['samples']" 2>/dev/null)
	fi
	POLLS=$("$D9" polls -i "$TRACE" ${task:+--task "$task"} --limit 0 2>/dev/null |
		sed -n 's/^# [0-9]* of \([0-9]*\) polls.*/\1/p')
	[ -n "$SAMPLES" ] && [ -n "$POLLS" ] || { fail "no sample or poll count from info/polls"; return 1; }
}

# chrome: structure (check_chrome.py) against the trace's own counts
t_chrome_is_well_formed_and_counts_match() {
	command -v python3 >/dev/null || { say "skip - no python3 for the structural check"; return 2; }
	record_demo || return
	chrome_export || return
	python3 tests/e2e/export/check_chrome.py "$TMP/c.json" "$SAMPLES" "$POLLS" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "chrome export is malformed"
}

# the chrome export in Chromium's DevTools Performance panel
t_chrome_loads_in_devtools_performance_panel() {
	local out=$ROOT/$B/e2e/export/out
	need_decoder || return
	command -v python3 >/dev/null || { say "skip - no python3 to read the counts"; return 2; }
	find_chromium || return
	record_demo || return
	mkdir -p "$out" || return
	chrome_export || return
	NODE_PATH=$NODE_DIR/node_modules timeout 180 node tests/e2e/export/devtools.js \
		"$(command -v "$CHROME")" "$TMP/c.json" "$SAMPLES" "$POLLS" "$out/devtools.png" |
		sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "DevTools does not show the chrome export as it should"
}

t_chrome_task_keeps_only_that_task() {
	local task
	command -v python3 >/dev/null || { say "skip - no python3 for the structural check"; return 2; }
	record_demo || return
	busiest_task || return 1
	task=$TASK
	chrome_export "$task" || return
	python3 tests/e2e/export/check_chrome.py "$TMP/c.json" "$SAMPLES" "$POLLS" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || { fail "chrome export of task $task is malformed"; return 1; }
	python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
other = [e for e in ev if e.get("cat") == "task" and e["ph"] == "X" and e["args"]["task"] != int(sys.argv[2])]
sys.exit(1 if other or any(e.get("cat") == "park" for e in ev) else 0)' "$TMP/c.json" "$task" ||
		fail "--task $task: a poll of another task, or parks, in the export"
}

t_chrome_bad_requests_are_clear_errors() {
	local rc
	record_demo || return
	"$D9" export -i "$TRACE" --format chrome --task 999999999 -o "$TMP/c.json" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 1 ] && grep -q "999999999" "$TMP/err" ||
		{ cat "$TMP/err"; fail "a task not in the trace: exit $rc, want 1 and a clear message"; }
	"$D9" export -i "$TRACE" --format chrome --offcpu -o "$TMP/c.json" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 2 ] || { cat "$TMP/err"; fail "--offcpu with chrome: exit $rc, want 2"; }
}

t_chrome_size_and_time_against_the_trace() {
	size_and_time chrome
}

e2e_run_tests
