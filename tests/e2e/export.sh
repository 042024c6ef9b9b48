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
# offline here. `go tool pprof` itself (Debian's golang-go) reads the pprof
# export of a known program, tests/e2e/export/hot.c (built -O1 -g), recorded
# once: -top names its hot function, -list shows counts on the line marked
# HOT (found by its marker), -lines names file:line, -tagfocus on the
# string label task keeps that task, -sample_index=off-cpu shows where it
# slept, -traces prints stacks with labels; and -list shows the demo's
# source lines. Skips where go is absent.
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

# ---- go tool pprof on a known program -----------------------------------

HOT_SRC=tests/e2e/export/hot.c
HOT_PB=$TMP/hot.pb.gz


# hot_recorded: hot.c built as a PIE ($TMP/hot) and not ($TMP/hotnp, for
# t_gopprof_disasm_and_weblist_count_the_hot_instructions), both run and
# recorded 2 s at once into $TMP/hot.data and $TMP/hotnp.data, their
# record's exit status in hot.rc and hotnp.rc, the first time a test
# needs one
HOT_RECORDED=0
hot_recorded() {
	local n pids=() rps=()
	[ "$HOT_RECORDED" = 1 ] && return 0
	HOT_RECORDED=1
	cc -O1 -g -fno-omit-frame-pointer -Wall -Wextra -I"$ROOT/include" "$HOT_SRC" \
		-o "$TMP/hot" "$ROOT/$B/libd9prof.a" -lpthread || { fail "cannot build $HOT_SRC"; return 1; }
	cc -O1 -g -fno-omit-frame-pointer -no-pie -Wall -Wextra -I"$ROOT/include" "$HOT_SRC" \
		-o "$TMP/hotnp" "$ROOT/$B/libd9prof.a" -lpthread || { fail "cannot build $HOT_SRC -no-pie"; return 1; }
	for n in hot hotnp; do
		start_ready "$TMP/$n.out" "$TMP/$n" || return 1
		pids+=("$SPID")
		("$D9" record -p "$SPID" -d 2 -o "$TMP/$n.data" 2>"$TMP/$n-rec.err"
		echo $? >"$TMP/$n.rc") &
		rps+=($!)
		PIDS+=($!)
	done
	for n in "${rps[@]}"; do wait "$n"; done
	kill "${pids[@]}" 2>/dev/null
}

# record_hot: hot.c built, recorded 2 s (hot_recorded) and exported with
# --offcpu into $HOT_PB, once; HOT_LINE and NAP_LINE from its markers
record_hot() {
	HOT_LINE=$(grep -n '/\* HOT \*/' "$HOT_SRC" | cut -d: -f1)
	NAP_LINE=$(grep -n '/\* NAP \*/' "$HOT_SRC" | cut -d: -f1)
	[ -n "$HOT_LINE" ] && [ -n "$NAP_LINE" ] || { fail "no HOT or NAP marker in $HOT_SRC"; return 1; }
	[ -s "$HOT_PB" ] && return 0
	need_perf || return
	hot_recorded || return 1
	[ "$(cat "$TMP/hot.rc" 2>/dev/null)" = 0 ] ||
		{ cat "$TMP/hot-rec.err"; fail "record failed"; return 1; }
	"$D9" export -i "$TMP/hot.data" --format pprof --offcpu -o "$HOT_PB" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; rm -f "$HOT_PB"; fail "export failed"; return 1; }
}

t_gopprof_top_names_the_hot_function() {
	need_go || return
	record_hot || return
	pp -top "$HOT_PB" >"$TMP/top.txt" || { cat "$TMP/pp.err"; fail "pprof -top failed"; return 1; }
	awk '/flat%/ {getline; print $NF; exit}' "$TMP/top.txt" | grep -qx crunch_numbers ||
		{ cat "$TMP/top.txt"; fail "-top does not put crunch_numbers first"; return 1; }
	say "    $(grep -m1 crunch_numbers "$TMP/top.txt" | xargs)"
	# the profile is the program's (its Mapping first), not libc's
	grep -qx 'File: hot' "$TMP/top.txt" ||
		{ head -3 "$TMP/top.txt"; fail "-top names another file than the program"; return 1; }
}

t_gopprof_list_counts_the_hot_line_of_the_source() {
	need_go || return
	record_hot || return
	pp -list '^crunch_numbers$' "$HOT_PB" >"$TMP/list.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -list failed"; return 1; }
	grep -q "could not find file" "$TMP/list.txt" &&
		{ cat "$TMP/list.txt"; fail "pprof cannot find the source file"; return 1; }
	# "  FLAT  CUM  LINE:  source": the HOT line, with its own text and a
	# count of its own
	awk -v l="$HOT_LINE" '$3 == l ":" && $1 != "." && /HOT/ {ok = 1} END {exit !ok}' \
		"$TMP/list.txt" || { cat "$TMP/list.txt"; fail "no count on line $HOT_LINE (HOT)"; return 1; }
	say "    $(grep -m1 '/\* HOT \*/' "$TMP/list.txt" | xargs)"
}

t_gopprof_lines_name_file_and_line() {
	need_go || return
	record_hot || return
	pp -lines -top "$HOT_PB" >"$TMP/lines.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -lines failed"; return 1; }
	grep -q "crunch_numbers $ROOT/$HOT_SRC:$HOT_LINE\$" "$TMP/lines.txt" ||
		{ cat "$TMP/lines.txt"; fail "-lines does not name $HOT_SRC:$HOT_LINE"; return 1; }
	grep -q "take_a_nap $ROOT/$HOT_SRC:$NAP_LINE\$" "$TMP/lines.txt" ||
		pp -lines -top -sample_index=off-cpu "$HOT_PB" | grep -q "take_a_nap .*:$NAP_LINE" ||
		{ cat "$TMP/lines.txt"; fail "-lines does not name take_a_nap at line $NAP_LINE"; return 1; }
}

# The program's Mapping says where it was mapped (start, limit, file
# offset), so that an address finds its place in the file (-disasm,
# -weblist): every location pprof names crunch_numbers lies, so
# translated, inside crunch_numbers as nm reads the binary.
t_pprof_mapping_puts_addresses_in_the_file() {
	need_go || return
	record_hot || return
	pp -raw "$HOT_PB" >"$TMP/raw.txt" || { cat "$TMP/pp.err"; fail "pprof -raw failed"; return 1; }
	nm -S "$TMP/hot" | grep ' crunch_numbers$' >"$TMP/nm.txt" || { fail "nm: no crunch_numbers"; return 1; }
	python3 - "$TMP/raw.txt" "$TMP/nm.txt" "$TMP/hot" <<'PY' | sed 's/^/    /'
import re, subprocess, sys
raw, nm, binary = open(sys.argv[1]).read(), open(sys.argv[2]).read().split(), sys.argv[3]
val, size = int(nm[0], 16), int(nm[1], 16)
# file offset -> address in the ELF file: the PT_LOAD holding it
loads = [l.split() for l in subprocess.run(['readelf', '-lW', binary], capture_output=True,
         text=True).stdout.splitlines() if l.strip().startswith('LOAD')]
def vaddr(off):
    for l in loads:
        o, v, fs = int(l[1], 16), int(l[2], 16), int(l[4], 16)
        if o <= off < o + fs:
            return off - o + v
    return None
maps = {m[0]: m for m in re.findall(r'^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)', raw, re.M)}
locs = re.findall(r'^ +\d+: 0x([0-9a-f]+) M=(\d+) crunch_numbers ', raw, re.M)
ok = 0
for addr, mid in locs:
    _, start, limit, off, path = maps[mid]
    a = int(addr, 16)
    v = vaddr(a - int(start, 16) + int(off, 16)) if int(start, 16) <= a < int(limit, 16) else None
    ok += v is not None and val <= v < val + size
print(f'{ok} of {len(locs)} crunch_numbers locations inside [0x{val:x}, 0x{val + size:x}) of {binary.split("/")[-1]}')
sys.exit(0 if locs and ok == len(locs) else 1)
PY
	[ "${PIPESTATUS[0]}" = 0 ] || { fail "the program's Mapping does not put its addresses in the file"; return 1; }
}

# -disasm and -weblist read the binary at the Mapping's place. Debian's
# go tool pprof (Go 1.19's cmd/pprof) does not shift a PIE's symbols by
# its load address (its objTool's Symbols), so a PIE shows "no matches"
# whatever the profile says (the test above checks the addresses of
# one); a non-PIE build of the same program: its hot instructions counted
# in -disasm, and source interleaved with them in -weblist.
t_gopprof_disasm_and_weblist_count_the_hot_instructions() {
	need_go || return
	need_perf || return
	hot_recorded || return 1
	[ "$(cat "$TMP/hotnp.rc" 2>/dev/null)" = 0 ] ||
		{ cat "$TMP/hotnp-rec.err"; fail "record failed"; return 1; }
	"$D9" export -i "$TMP/hotnp.data" --format pprof -o "$TMP/hotnp.pb.gz" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export failed"; return 1; }
	pp -disasm crunch_numbers "$TMP/hotnp.pb.gz" >"$TMP/disasm.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -disasm failed"; return 1; }
	# instructions with a count of their own, on the HOT line
	local n
	HOT_LINE=$(grep -n '/\* HOT \*/' "$HOT_SRC" | cut -d: -f1)
	n=$(awk -v l="hot.c:$HOT_LINE" '$1 != "." && $3 ~ /^[0-9a-f]+:$/ && index($0, l) {n++} END {print n + 0}' \
		"$TMP/disasm.txt")
	say "    -disasm: $n counted instructions on hot.c:$HOT_LINE"
	[ "$n" -ge 1 ] || { head -20 "$TMP/disasm.txt"; fail "-disasm counts no instruction of the HOT line"; return 1; }
	pp -weblist crunch_numbers -output "$TMP/weblist.html" "$TMP/hotnp.pb.gz" >/dev/null ||
		{ cat "$TMP/pp.err"; fail "pprof -weblist failed"; return 1; }
	grep -q 'class=asm' "$TMP/weblist.html" && grep -q '/\* HOT \*/' "$TMP/weblist.html" ||
		{ fail "-weblist shows no source with its instructions"; return 1; }
}

t_gopprof_tagfocus_on_a_string_label_keeps_that_task() {
	need_go || return
	record_hot || return
	pp -tags "$HOT_PB" >"$TMP/tags.txt" || { cat "$TMP/pp.err"; fail "pprof -tags failed"; return 1; }
	grep -q ': 1 crunch$' "$TMP/tags.txt" && grep -q ': 2 nap$' "$TMP/tags.txt" &&
		grep -q ': hot-worker\[[0-9]*\]$' "$TMP/tags.txt" ||
		{ cat "$TMP/tags.txt"; fail "-tags shows no task '1 crunch', '2 nap' or thread 'hot-worker[TID]'"; return 1; }
	# (nap sleeps: its time is off-CPU, a CPU sample of it is luck)
	pp -top -sample_index=off-cpu -tagfocus='task=^2 nap$' "$HOT_PB" >"$TMP/focus.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -tagfocus failed"; return 1; }
	grep -q take_a_nap "$TMP/focus.txt" && ! grep -q crunch_numbers "$TMP/focus.txt" ||
		{ cat "$TMP/focus.txt"; fail "-tagfocus task=2 nap keeps more or less than task 2"; return 1; }
	pp -top -tagfocus='task=crunch' "$HOT_PB" | grep -q crunch_numbers ||
		{ fail "-tagfocus task=crunch loses crunch_numbers"; return 1; }
}

t_gopprof_sample_index_off_cpu_shows_where_it_slept() {
	need_go || return
	record_hot || return
	pp -top -cum -sample_index=off-cpu -tagfocus='task=nap' "$HOT_PB" >"$TMP/off.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -sample_index=off-cpu failed"; return 1; }
	grep -q '^Type: off-cpu$' "$TMP/off.txt" && grep -q take_a_nap "$TMP/off.txt" ||
		{ cat "$TMP/off.txt"; fail "-sample_index=off-cpu does not show take_a_nap"; return 1; }
	say "    $(grep -m1 take_a_nap "$TMP/off.txt" | xargs)"
}

t_gopprof_traces_print_stacks_with_labels() {
	need_go || return
	record_hot || return
	pp -traces "$HOT_PB" >"$TMP/traces.txt" || { cat "$TMP/pp.err"; fail "pprof -traces failed"; return 1; }
	# a stack: crunch_numbers called from main, labelled with its task
	awk '/^-+\+-+$/ {if (s ~ /task: +1 crunch\n/ && s ~ /crunch_numbers\n +\[runtime\]\n/) ok = 1; s = ""; next}
		{s = s $0 "\n"} END {exit !ok}' \
		"$TMP/traces.txt" || { head -40 "$TMP/traces.txt"; fail "-traces shows no crunch_numbers <- [runtime] stack of task 1 (main called d9_poll_begin)"; return 1; }
}

t_gopprof_list_shows_the_demos_source() {
	need_go || return
	record_demo || return
	"$D9" export -i "$TRACE" --format pprof -o "$TMP/demo.pb.gz" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export failed"; return 1; }
	pp -list '^demo_hot_spin$' "$TMP/demo.pb.gz" >"$TMP/dlist.txt" ||
		{ cat "$TMP/pp.err"; fail "pprof -list failed"; return 1; }
	# a line of examples/demo.c with its text and a count
	grep -q "in $ROOT/examples/demo.c" "$TMP/dlist.txt" && ! grep -q "could not find" "$TMP/dlist.txt" &&
		awk '$3 ~ /^[0-9]+:$/ && ($1 != "." || $2 != ".") {ok = 1} END {exit !ok}' "$TMP/dlist.txt" ||
		{ cat "$TMP/dlist.txt"; fail "-list demo_hot_spin shows no counted source line of examples/demo.c"; return 1; }
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

# no --by: a profile a task up to 16 tasks; the demo's spawner makes more
# (a task a request, as a server's): a profile a task name, and it says so
t_speedscope_groups_by_task_name_past_16_tasks() {
	local n
	need_decoder || return
	record_demo || return
	# (the tasks the views know: named ones, as info counts them, and
	# those a record names by id only)
	n=$("$D9" tasks -i "$TRACE" --limit 1 | sed -nE 's/^# 1 of ([0-9]+) tasks.*/\1/p')
	[ -n "$n" ] || { fail "tasks did not say how many tasks"; return 1; }
	[ "$n" -gt 16 ] || { fail "the demo has $n tasks, want more than 16 for this test"; return 1; }
	"$D9" export -i "$TRACE" --format speedscope -o "$TMP/s-auto.json" 2>"$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export --format speedscope failed"; return 1; }
	grep -q "speedscope: a profile per task name, past 16 tasks ($n here)" "$TMP/exp.err" ||
		{ cat "$TMP/exp.err"; fail "export does not say it chose a profile per task name"; return 1; }
	"$D9" flame -i "$TRACE" --by name --format folded >"$TMP/f-auto.txt" 2>/dev/null ||
		{ fail "flame failed"; return 1; }
	NODE_PATH=$NODE_DIR/node_modules node tests/e2e/export/speedscope.js "$TMP/s-auto.json" \
		"$TMP/f-auto.txt" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "the export by default is not flame --by name's"
}

t_speedscope_validates_and_matches_folded_by_thread() {
	need_decoder || return
	record_demo || return
	speedscope thread
}

# the demo's spans: "batch" (its short tasks) and "read" (the blocker)
t_speedscope_validates_and_matches_folded_by_span() {
	need_decoder || return
	record_demo || return
	speedscope span
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
	# one picture (the sandwich view is read from its DOM below)
	timeout 60 "$c" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--no-first-run --disable-dev-shm-usage --user-data-dir="$TMP/chromium" \
		--window-size=1400,900 --virtual-time-budget=10000 \
		--screenshot="$out/speedscope-left-heavy.png" "$url&view=left-heavy" >/dev/null \
		2>>"$out/chromium.log"
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
	say "    speedscope shows '$busiest' and demo_hot_spin (screenshot in $out)"
	# each frame's file and line, as speedscope's tooltip shows them: the
	# line its function begins at in the demo's source
	NODE_PATH=$NODE_DIR/node_modules timeout 120 node tests/e2e/export/ss_hover.js "$(command -v "$c")" "$url" \
		>"$TMP/hover.txt" 2>>"$out/chromium.log" || { fail "hovering speedscope failed"; return 1; }
	python3 - "$TMP/hover.txt" <<-'PY' | sed 's/^/    /'
		import re, sys
		rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
		mine = [(n, f, int(k)) for n, f, k in rows if f.endswith("examples/demo.c")]
		bad = [(n, k) for n, f, k in mine
		       if n.split(" [")[0] not in open(f).read().splitlines()[k - 1]]
		print(f"tooltips name {len(rows)} frames, {len(mine)} in demo.c: "
		      + ", ".join(f"{n} {f.split('/')[-1]}:{k}" for n, f, k in mine))
		sys.exit(f"not where the function begins: {bad}" if bad or len(mine) < 2 else 0)
	PY
	[ "${PIPESTATUS[0]}" = 0 ] || fail "speedscope's frames want the file and line of their function"
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

# A trace too big for a viewer (three seconds of the bench's ~1.1M polls a
# second, each entering a span, some 2.6 GB in full) past --max-size: cut to
# fit, every poll still counted (whole, or in its task's runs), the
# longest spans kept, and it opens in DevTools
t_chrome_past_max_size_fits_and_opens_in_devtools() {
	local out=$ROOT/$B/e2e/export/out big=$TMP/bench.d9 n sz slices
	need_decoder || return
	command -v python3 >/dev/null || { say "skip - no python3 to read the counts"; return 2; }
	find_chromium || return
	mkdir -p "$out" || return
	"$D9" record -o "$big" -- "$DEMO" --bench-polls --bench-spans 10 -d 3 -q >/dev/null 2>"$TMP/big.err" ||
		{ cat "$TMP/big.err"; fail "record of the bench failed"; return 1; }
	"$D9" export -i "$big" --format chrome --max-size 16M -o "$TMP/big.json" 2>"$TMP/bigx.err" ||
		{ cat "$TMP/bigx.err"; fail "export failed"; return 1; }
	sed 's/^/    /' "$TMP/bigx.err"
	grep -q "^d9prof: chrome: about .* in full, past --max-size 16.0 MiB" "$TMP/bigx.err" ||
		{ fail "no line saying it was cut down"; return 1; }
	grep -q "^d9prof: chrome: spans past --max-size: the [1-9][0-9]* span enters" "$TMP/bigx.err" ||
		{ fail "no line saying the spans were cut down"; return 1; }
	sz=$(stat -c %s "$TMP/big.json")
	[ "$sz" -le $((16 << 20)) ] || { fail "$sz bytes, past 16 MiB"; return 1; }
	n=$("$D9" polls -i "$big" --limit 1 2>/dev/null | sed -n 's/^# [0-9]* of \([0-9]*\) polls.*/\1/p')
	slices=$(python3 - "$TMP/big.json" "$n" <<-'PY'
		import json, sys
		ev = json.load(open(sys.argv[1]))['traceEvents']
		whole = [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'task' and 'poll' in e['args']]
		runs = [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'task' and 'polls' in e['args']]
		got = len(whole) + sum(e['args']['polls'] for e in runs)
		if got != int(sys.argv[2]):
		    sys.exit(f'{len(whole)} whole and {got - len(whole)} merged polls, the trace has {sys.argv[2]}')
		if not runs:
		    sys.exit('no runs')
		if not any(e['ph'] == 'X' and e.get('cat') == 'span' for e in ev):
		    sys.exit('no span slices')
		# a run track's slices never overlap
		by = {}
		for e in runs:
		    by.setdefault(e['tid'], []).append((e['ts'], e['ts'] + e['dur']))
		for tid, v in by.items():
		    v.sort()
		    if any(b[0] < a[1] for a, b in zip(v, v[1:])):
		        sys.exit(f'run track {tid} has overlapping slices')
		print(len(whole) + len(runs))
	PY
	) || { fail "$slices"; return 1; }
	say "    $sz bytes; $n polls: $slices slices"
	NODE_PATH=$NODE_DIR/node_modules timeout 180 node tests/e2e/export/devtools.js \
		"$(command -v "$CHROME")" "$TMP/big.json" "$(info_json "$big" "j['counts']['samples']")" \
		"$slices" "$out/devtools-cut.png" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || fail "DevTools does not show the cut export as it should"
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
