#!/usr/bin/env bash
# Zero-code Tokio (tier 0): `d9prof record` on unmodified Tokio programs
# (tests/e2e/zerocode: no d9prof code, built by `make zerocode-bin` into
# $B/zerocode/fp with frame pointers and $B/zerocode/nofp without) reads
# Tokio's current task id in its threads with BPF at each sample and each
# switch-out. Checked against what the programs measured themselves:
#   zcapp mix SECS       a CPU hog task (hog_work, ~200 us a poll), a task
#                        that blocks its worker in std::thread::sleep
#                        (blocking_sleep, 3 ms), short tasks by thousands;
#                        at exit hog_work_ns, blocker_slept_ns, cpu_ns, ...
#   zchyper serve SECS   a hyper 0.14 server (a task per connection,
#                        spawned by hyper): /cpu burns ~2 ms in cpu_route,
#                        /block sleeps 2 ms in block_route; at exit conns,
#                        cpu_reqs, cpu_ns, block_reqs, block_ns
# Recorded with `record -- CMD` (threads that inherit the event) and with
# `record -p PID` (threads that exist at the attach), without frame
# pointers (CFI), stripped (no task ids, said in one line), as a shared
# library loaded by dlopen (host.c: refused in one line), with --tokio
# off, and with --tokio probes (tier 1: every poll counted, as the app
# counted them). The tasks are found by name in `d9prof tasks`; the flame
# graphs read with --by task (roots "task ID NAME" whatever the count of
# tasks); ratios to the programs' counters, recordings as long as it takes
# to gather the samples a ratio needs (enough.sh).
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=zerocode
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
FP=$ROOT/$B/zerocode/fp/release
NOFP=$ROOT/$B/zerocode/nofp/release
# the Tokio the programs are built with (the summary names it)
TOKIO_V=$(awk '$0 == "name = \"tokio\"" { getline; gsub(/version = |"/, ""); print; exit }' \
	"$ROOT/tests/e2e/zerocode/Cargo.lock")
ZC_LINE="tasks: Tokio $TOKIO_V read from outside (zero-code)"
HOG=zcapp::hog_task
NEWSVC=hyper::server::server::new_svc::NewSvcTask

# need BIN...: each program built, perf_event and BPF allowed, else skip
need() {
	local b
	for b in "$@"; do
		[ -x "$b" ] && continue
		say "    skip: no $b (make zerocode-bin; it needs cargo)"
		return 2
	done
	need_perf || return 2
	need_bpf || return 2
}

# pct FILE ERE: percent (integer) of a folded file's weight on lines matching ERE
pct() {
	awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) h += n }
		END { if (!t) print 0; else printf "%d\n", 100 * h / t }' "$1"
}
# pct_prefix FILE PREFIX: the same for lines starting with PREFIX (literal)
pct_prefix() {
	awk -v p="$2" '{ n = $NF; t += n; if (index($0, p) == 1) h += n }
		END { if (!t) print 0; else printf "%d\n", 100 * h / t }' "$1"
}
# near A B PCT: A within PCT% of B
near() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }
# ratio A B: A/B to 3 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }
# top FOLDED: its heaviest line, cut (for reasons)
top() { awk '{ print $NF, $0 }' "$1" | sort -n | tail -1 | cut -c1-300; }
# ctr NAME FILE: the value of a "NAME VALUE" line a program printed
ctr() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
# tid N NAME: the first task named NAME in N's `tasks --limit 0 --wide`
tid() { awk -v n="$2" 'NR > 1 && $2 == n { print $1; exit }' "$TMP/$1.tasks"; }
# ns DUR: a duration as `tasks` prints it (2.79s, 11.0ms, 500us, 0ns) in ns
ns() {
	awk -v s="$1" 'BEGIN { m = s ~ /ns$/ ? 1 : s ~ /us$/ ? 1e3 : s ~ /ms$/ ? 1e6 : s ~ /s$/ ? 1e9 : -1
		printf "%.0f\n", (s + 0) * m }'
}
# cpu_of N ID: the CPU column of task ID's row in N's tasks, in ns
# (TASK NAME POLLS CPU CPU% and 7 columns more: the 9th from the end)
cpu_of() { ns "$(awk -v id="$2" 'NR > 1 && $1 == id { print $(NF - 9); exit }' "$TMP/$1.tasks")"; }
# in_tasks FOLDED: percent (1 decimal) of the weight under a "task " root
in_tasks() {
	awk '{ t += $NF; if (index($0, "task ") == 1) h += $NF }
		END { printf "%.1f\n", t ? 100 * h / t : 0 }' "$1"
}

# analyse N: N's tasks, its flame by task; GOT: the samples in hog_work
analyse() {
	local n=$1
	"$D9" tasks -i "$TMP/$n.data" --limit 0 --wide >"$TMP/$n.tasks" 2>"$TMP/$n.tasks.err" ||
		fail "tasks failed: $(cat "$TMP/$n.tasks.err")" || return 1
	"$D9" flame -i "$TMP/$n.data" --by task --format folded >"$TMP/$n.folded" \
		2>"$TMP/$n.flame.err" || fail "flame failed: $(cat "$TMP/$n.flame.err")" || return 1
	GOT=$(awk '/;zcapp::hog_work(;| )/ { s += $NF } END { print s + 0 }' "$TMP/$n.folded")
}

# rec_cmd DUR N BIN [RECORD OPTION...]: `record -- BIN mix DUR`
rec_cmd() {
	local dur=$1 n=$2 bin=$3
	shift 3
	"$D9" record "$@" -o "$TMP/$n.data" -- "$bin" mix "$dur" >"$TMP/$n.out" 2>"$TMP/$n.rec" ||
		fail "record failed: $(tail -3 "$TMP/$n.rec")" || return 1
	analyse "$n"
}

# rec_pid DUR N BIN: BIN mix DUR+1.5 (PID_APP_SECS) started, then
# `record -p PID -d DUR`; waits for it to print its counters
PID_APP_SECS=0
rec_pid() {
	local dur=$1 n=$2 bin=$3
	PID_APP_SECS=$(awk -v d="$dur" 'BEGIN { print d + 1.5 }')
	start_ready "$TMP/$n.out" "$bin" mix "$PID_APP_SECS" || return 1
	"$D9" record -p "$SPID" -d "$dur" -o "$TMP/$n.data" 2>"$TMP/$n.rec" ||
		fail "record failed: $(tail -3 "$TMP/$n.rec")" || return 1
	wait "$SPID"
	grep -q '^cpu_ns ' "$TMP/$n.out" || fail "zcapp did not finish: $(tail -3 "$TMP/$n.out")" ||
		return 1
	analyse "$n"
}

# the hog's task holds its work, cut at the poll: >= 95% of all samples in
# hog_work under the hog's task; its stacks "task N zcapp::hog_task;
# [runtime];zcapp::hog_task::{{closure}};zcapp::hog_work" for >= 90%
check_hog() {
	local n=$1 id h c
	id=$(tid "$n" "$HOG")
	[ -n "$id" ] || fail "no task $HOG in tasks: $(sed -n 1,4p "$TMP/$n.tasks")" || return 1
	h=$(pct_prefix <(grep -E ';zcapp::hog_work(;| )' "$TMP/$n.folded") "task $id $HOG;")
	say "    $n: $HOG is task $id; it holds $h% of the $GOT samples in zcapp::hog_work"
	[ "$h" -ge 95 ] || fail "only $h%; the heaviest hog_work line elsewhere:" \
		"$(grep -E ';zcapp::hog_work(;| )' "$TMP/$n.folded" | grep -v "^task $id $HOG;" |
			awk '{ print $NF, $0 }' | sort -n | tail -1 | cut -c1-300)" || return 1
	"$D9" flame -i "$TMP/$n.data" --task "$HOG" --by task --format folded \
		>"$TMP/$n.hog" 2>/dev/null || fail "flame --task $HOG failed" || return 1
	c=$(pct_prefix "$TMP/$n.hog" \
		"task $id $HOG;[runtime];zcapp::hog_task::{{closure}};zcapp::hog_work")
	say "    $n: flame --task $HOG: $c% of $(weight "$TMP/$n.hog") samples cut at the poll" \
		"([runtime];zcapp::hog_task::{{closure}};zcapp::hog_work)"
	[ "$c" -ge 90 ] || fail "stacks not cut at the poll: $(top "$TMP/$n.hog")" || return 1
}

# ---- zcapp, with frame pointers -------------------------------------------

# check_only_app_tasks N: every task in N's tasks is named as one of the
# futures zcapp spawns (hog_task, blocker_task, spawner_task, short_task):
# not after Tokio's code, not blank; for one that is not, the innermost
# frames of its samples (--full-stacks)
check_only_app_tasks() {
	local n=$1 other id
	other=$(awk 'NR > 1 && !/^#/ && NF && $2 !~ /^zcapp::(hog|blocker|spawner|short)_task$/' \
		"$TMP/$n.tasks")
	[ -z "$other" ] && return 0
	fail "tasks not named as one of zcapp's futures (TASK NAME POLLS CPU):" \
		"$(tr -s ' ' <<<"$other" | cut -d' ' -f1-4 | tr '\n' ';')"
	inner_frames "$n" "$(awk '{ print $1; exit }' <<<"$other")"
	return 1
}

# inner_frames N ID: the innermost frames of task ID's CPU samples in N
inner_frames() {
	"$D9" flame -i "$TMP/$1.data" --task "$2" --by task --full-stacks --format folded \
		2>/dev/null | awk -F';' '{ s = $1; for (i = NF - 3; i <= NF; i++) if (i > 1) s = s ";" $i
			print "    a CPU stack of it, innermost frames: " substr(s, 1, 400) }' | head -3
}

# check_app N cmd|pid: the checks on a recording of zcapp mix (ratios to
# the app's own counters; with cmd, the recording is the app's whole run)
check_app() {
	local n=$1 mode=$2 bad=0 id bid cpu work appcpu tot slept sh sh_app short dur ow ob
	grep -qF "$ZC_LINE" "$TMP/$n.rec" ||
		fail "no line '$ZC_LINE': $(grep -i tokio "$TMP/$n.rec")" || bad=1
	check_hog "$n" || bad=1
	id=$(tid "$n" "$HOG")
	work=$(ctr hog_work_ns "$TMP/$n.out")
	appcpu=$(ctr cpu_ns "$TMP/$n.out")
	if [ -n "$id" ]; then
		cpu=$(cpu_of "$n" "$id")
		if [ "$mode" = cmd ]; then
			say "    $n: $HOG's CPU in tasks $((cpu / 1000000)) ms, the app's hog_work_ns" \
				"$((work / 1000000)) ms"
			near "$cpu" "$work" 15 || fail "not within 15%" || bad=1
		else
			# its share of the CPU sampled, as the app's hog_work of its CPU
			tot=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/$n.folded")
			sh=$(ratio "$(awk -v p="task $id $HOG;" 'index($0, p) == 1 { s += $NF }
				END { print s + 0 }' "$TMP/$n.folded")" "$tot")
			sh_app=$(ratio "$work" "$appcpu")
			say "    $n: $HOG's share of the CPU sampled $sh, the app's hog_work_ns/cpu_ns $sh_app"
			near "$sh" "$sh_app" 15 || fail "not within 15%" || bad=1
		fi
	fi
	# the blocked time on the blocking task, under blocking_sleep
	bid=$(tid "$n" zcapp::blocker_task)
	if [ -z "$bid" ]; then
		fail "no task zcapp::blocker_task: $(sed -n 1,5p "$TMP/$n.tasks")"
		bad=1
	elif ! "$D9" offcpu -i "$TMP/$n.data" --task "$bid" --format folded >"$TMP/$n.off" \
		2>"$TMP/$n.off.err"; then
		fail "offcpu --task $bid failed: $(cat "$TMP/$n.off.err")"
		bad=1
	else
		ow=$(weight "$TMP/$n.off")
		ob=$(pct "$TMP/$n.off" ';zcapp::blocking_sleep(;| )')
		slept=$(ctr blocker_slept_ns "$TMP/$n.out")
		if [ "$mode" = cmd ]; then
			say "    $n: offcpu --task $bid (blocker_task): $((ow / 1000)) ms, $ob% under" \
				"blocking_sleep; the app slept $((slept / 1000000)) ms"
			near "$ow" "$((slept / 1000))" 20 || fail "not within 20%" || bad=1
		else
			# as a share of the wall time: the recording's, the app's run
			dur=$(info_json "$TMP/$n.data" 'j["span"]["duration_ns"]')
			sh=$(ratio "$((ow * 1000))" "$dur")
			sh_app=$(ratio "$slept" "$(awk -v s="$PID_APP_SECS" 'BEGIN { print s * 1e9 }')")
			say "    $n: offcpu --task $bid (blocker_task): $sh of the recording, $ob% under" \
				"blocking_sleep; the app slept $sh_app of its run"
			near "$sh" "$sh_app" 20 || fail "not within 20%" || bad=1
		fi
		[ "$ob" -ge 90 ] || fail "blocking_sleep holds only $ob%: $(top "$TMP/$n.off")" || bad=1
	fi
	# many short tasks, each its own id
	"$D9" tasks -i "$TMP/$n.data" --by name --limit 0 --wide >"$TMP/$n.names" 2>/dev/null ||
		fail "tasks --by name failed" || bad=1
	short=$(awk 'NR > 1 && $1 == "zcapp::short_task" { print $(NF - 11); exit }' "$TMP/$n.names")
	say "    $n: ${short:-no} zcapp::short_task tasks seen (the app spawned" \
		"$(ctr short_tasks "$TMP/$n.out"))"
	[ "${short:-0}" -ge 20 ] || fail "want >= 20: $(head -6 "$TMP/$n.names")" || bad=1
	# a short task lives ~20 us, so two samples in one are rare: the
	# samples in short tasks should name about as many distinct ids
	read -r ss si < <(awk '$1 == "task" && index($3, "zcapp::short_task;") == 1 {
		s += $NF; if (!($2 in id)) { id[$2]; n++ } } END { print s + 0, n + 0 }' \
		"$TMP/$n.folded")
	say "    $n: $ss samples in zcapp::short_task name $si distinct tasks"
	[ "$ss" -ge 20 ] && [ "$((si * 10))" -ge "$((ss * 8))" ] ||
		fail "want >= 20 samples and >= 80% of them distinct tasks" || bad=1
	# no task named after the runtime's own launch (a worker is no task)
	! grep -E 'launch|BlockingTask' "$TMP/$n.tasks" | sed 's/^/    a runtime task: /' | grep . ||
		bad=1
	# and no task but the app's: it spawns these four futures, nothing else
	check_only_app_tasks "$n" || bad=1
	say "    $n: $(in_tasks "$TMP/$n.folded")% of the samples in tasks ($(weight "$TMP/$n.folded") samples)"
	return $bad
}

# pprof: a profile whose task_name label selects the hog's samples
check_pprof() {
	local n=$1
	"$D9" export -i "$TMP/$n.data" --format pprof -o "$TMP/$n.pb.gz" 2>"$TMP/$n.pprof.err" ||
		fail "export --format pprof failed: $(cat "$TMP/$n.pprof.err")" || return 1
	gzip -t "$TMP/$n.pb.gz" || fail "not gzip" || return 1
	command -v go >/dev/null || { say "    (no go on PATH: not read with go tool pprof)"; return 0; }
	go tool pprof -symbolize=none -tagfocus "task_name=$HOG" -top "$TMP/$n.pb.gz" \
		>"$TMP/$n.top" 2>&1
	grep -q 'zcapp::hog_work' "$TMP/$n.top" && {
		say "    $n: go tool pprof -tagfocus task_name=$HOG -top: hog_work there"
		return 0
	}
	fail "go tool pprof -tagfocus task_name=$HOG -top has no hog_work:" \
		"$(grep -v '^ ' "$TMP/$n.top" | head -3 | tr '\n' ' ')"
	go tool pprof -tags "$TMP/$n.pb.gz" 2>/dev/null | sed -n 1,5p | sed 's/^/    tags: /'
	return 1
}

# report: the hog in its section of CPU hot spots per task
check_report() {
	local n=$1
	"$D9" report -i "$TMP/$n.data" >"$TMP/$n.report" 2>/dev/null ||
		fail "report failed" || return 1
	awk '/^== / { on = ($0 ~ /CPU hot spots per task/) } on' "$TMP/$n.report" >"$TMP/$n.hot"
	grep -q "$HOG" "$TMP/$n.hot" ||
		fail "report's 'CPU hot spots per task' has no $HOG: $(tr '\n' ' ' <"$TMP/$n.hot" | cut -c1-300)" ||
		return 1
	say "    $n: report's CPU hot spots per task name $HOG"
}

# hog_work samples gathered: >= 800 (1.5 s where the hog has a CPU)
t_app_cmd() {
	local bad=0
	need "$FP/zcapp" || return 2
	enough 800 1.5 6 rec_cmd cmd "$FP/zcapp"
	case $? in 0) ;; 3) fail "too few hog_work samples" ;& *) return 1 ;; esac
	check_app cmd cmd || bad=1
	check_pprof cmd || bad=1
	check_report cmd || bad=1
	return $bad
}

t_app_pid() {
	need "$FP/zcapp" || return 2
	enough 800 1.5 6 rec_pid pid "$FP/zcapp"
	case $? in 0) ;; 3) fail "too few hog_work samples" ;& *) return 1 ;; esac
	check_app pid pid
}

# ---- zcapp without frame pointers: CFI ------------------------------------

t_app_nofp() {
	need "$NOFP/zcapp" || return 2
	enough 800 1.5 6 rec_cmd nofp "$NOFP/zcapp"
	case $? in 0) ;; 3) fail "too few hog_work samples" ;& *) return 1 ;; esac
	grep -q 'call graph: dwarf' "$TMP/nofp.rec" ||
		fail "not unwound by CFI: $(grep 'call graph' "$TMP/nofp.rec")" || return 1
	grep -qF "$ZC_LINE" "$TMP/nofp.rec" ||
		fail "no line '$ZC_LINE': $(grep -i tokio "$TMP/nofp.rec")" || return 1
	check_hog nofp
}

# ---- hyper: a task per connection -----------------------------------------

# 20 connections of 10 /cpu requests and 10 of 10 /block ones, all while
# recorded (the recorder attached before, stopped after)
t_hyper() {
	local bad=0 rpid port f cpu_ns wgt n freq route_ns inr blk blk_ns
	need "$FP/zchyper" || return 2
	start_ready "$TMP/h.out" "$FP/zchyper" serve 5 || return 1
	port=$(ctr port "$TMP/h.out")
	"$D9" record -p "$SPID" -d 20 -o "$TMP/h.data" 2>"$TMP/h.rec" &
	rpid=$!
	PIDS+=("$rpid")
	wait_for "$TMP/h.rec" 'off-CPU from BPF' 4 ||
		fail "the recorder did not start: $(cat "$TMP/h.rec")" || return 1
	"$FP/zchyper" load "$port" 20 10 /cpu >"$TMP/h.cpu" &
	f=$!
	"$FP/zchyper" load "$port" 10 10 /block >"$TMP/h.block"
	wait "$f"
	kill -0 "$rpid" 2>/dev/null || fail "the recorder ended before the load: $(tail -3 "$TMP/h.rec")" ||
		return 1
	kill -TERM "$rpid"
	wait "$rpid" || fail "record failed: $(tail -3 "$TMP/h.rec")" || return 1
	wait "$SPID"
	grep -q '^cpu_ns ' "$TMP/h.out" || fail "the server did not finish: $(cat "$TMP/h.out")" ||
		return 1
	grep -qx 'conns 20 requests 200' "$TMP/h.cpu" && grep -qx 'conns 10 requests 100' "$TMP/h.block" ||
		fail "the load failed: $(cat "$TMP/h.cpu" "$TMP/h.block")" || return 1
	grep -qF "$ZC_LINE" "$TMP/h.rec" ||
		fail "no line '$ZC_LINE': $(grep -i tokio "$TMP/h.rec")" || bad=1
	analyse h || return 1
	# every connection a task of its own
	n=$(awk -v s="$NEWSVC" 'NR > 1 && $2 == s' "$TMP/h.tasks" | wc -l)
	say "    hyper: $n $NEWSVC tasks in tasks, the server counted $(ctr conns "$TMP/h.out") connections"
	[ "$n" = "$(ctr conns "$TMP/h.out")" ] || {
		fail "their ids: $(awk -v s="$NEWSVC" 'NR > 1 && $2 == s { print $1 }' "$TMP/h.tasks" |
			sort -n | tr '\n' ' ')"
		n=$(awk -v s="$NEWSVC" 'NR > 1 && $2 == s { print $1 }' "$TMP/h.tasks" | sort -n | head -1)
		inner_frames h "$n"
		bad=1
	}
	# the /cpu requests' CPU, in the connections' tasks
	freq=$(info_json "$TMP/h.data" 'j["sampling"]["frequency"]')
	wgt=$(awk '/;zchyper::cpu_route(;| )/ { s += $NF } END { print s + 0 }' "$TMP/h.folded")
	route_ns=$(awk -v w="$wgt" -v f="$freq" 'BEGIN { printf "%.0f", w * 1e9 / f }')
	cpu_ns=$(ctr cpu_ns "$TMP/h.out")
	say "    hyper: $wgt samples in cpu_route ($((route_ns / 1000000)) ms), the server measured" \
		"$((cpu_ns / 1000000)) ms for $(ctr cpu_reqs "$TMP/h.out") requests"
	near "$route_ns" "$cpu_ns" 15 || fail "not within 15%" || bad=1
	inr=$(pct <(grep -E ';zchyper::cpu_route(;| )' "$TMP/h.folded") "^task [0-9]+ $NEWSVC;")
	say "    hyper: $inr% of cpu_route's samples in $NEWSVC tasks"
	[ "$inr" -ge 90 ] || fail "$(grep -E ';zchyper::cpu_route(;| )' "$TMP/h.folded" |
		grep -v "^task [0-9]* $NEWSVC;" | awk '{ print $NF, $0 }' | sort -n | tail -1 |
		cut -c1-300)" || bad=1
	# the /block connections: off-CPU in block_route, in tasks of their own
	"$D9" offcpu -i "$TMP/h.data" --by task --format folded >"$TMP/h.off" 2>/dev/null ||
		fail "offcpu failed" || return 1
	grep -E ';zchyper::block_route(;| )' "$TMP/h.off" >"$TMP/h.blk"
	blk=$(grep -o "^task [0-9]* $NEWSVC;" "$TMP/h.blk" | sort -u | wc -l)
	blk_ns=$(($(weight "$TMP/h.blk") * 1000))
	say "    hyper: $blk $NEWSVC tasks off-CPU in block_route, $((blk_ns / 1000000)) ms;" \
		"the server slept $(($(ctr block_ns "$TMP/h.out") / 1000000)) ms for" \
		"$(ctr block_reqs "$TMP/h.out") requests"
	[ "$blk" = 10 ] || fail "want the 10 /block connections: $(top "$TMP/h.blk")" || bad=1
	near "$blk_ns" "$(ctr block_ns "$TMP/h.out")" 20 || fail "not within 20%" || bad=1
	n=$(grep -o "^task [0-9]* " "$TMP/h.blk" | sort -u | while read -r _ i; do
		grep -c "^task $i .*;zchyper::cpu_route(;| )" "$TMP/h.folded"
	done | awk '{ s += $1 } END { print s + 0 }')
	[ "$n" = 0 ] || fail "$n cpu_route stacks in the /block connections' tasks" || bad=1
	# line-tables-only DWARF names the handler's inlined body
	# "{async_fn#0}": by its path, the async fn that alone calls
	# cpu_route and block_route (the source); no body unnamed anywhere
	n=$(pct <(grep -E ';zchyper::cpu_route(;| )' "$TMP/h.folded") \
		';zchyper::handle::\{\{closure\}\} \[inlined\];zchyper::cpu_route(;| )')
	inr=$(pct "$TMP/h.blk" ';zchyper::handle::\{\{closure\}\} \[inlined\];zchyper::block_route(;| )')
	say "    hyper: $n% of cpu_route's samples and $inr% of block_route's off-CPU time" \
		"right under zchyper::handle::{{closure}} [inlined]"
	[ "$n" -ge 95 ] && [ "$inr" -ge 95 ] || fail "$(grep -E ';zchyper::cpu_route(;| )' \
		"$TMP/h.folded" | grep -oE '[^;]*;zchyper::cpu_route' | sort | uniq -c)" || bad=1
	n=$(cat "$TMP/h.folded" "$TMP/h.off" | grep -cE '(^|;)\{[a-z_]+#[0-9]+\}')
	[ "$n" = 0 ] || fail "$n stacks with a body unnamed: $(grep -oE '(^|;)\{[a-z_]+#[0-9]+\}[^;]*' \
		"$TMP/h.folded" "$TMP/h.off" | sort | uniq -c | head -3)" || bad=1
	say "    hyper: $(in_tasks "$TMP/h.folded")% of the samples in tasks ($(weight "$TMP/h.folded") samples)"
	return $bad
}

# With -p, no warning that the samples will carry no task ids (no shim)
# while Tokio's are read: it would contradict the zero-code line
t_pid_no_shim_warning() {
	need "$FP/zcapp" || return 2
	start_ready "$TMP/w.out" "$FP/zcapp" mix 1 || return 1
	"$D9" record -p "$SPID" -d 0.4 -o "$TMP/w.data" 2>"$TMP/w.rec" ||
		fail "record failed: $(tail -3 "$TMP/w.rec")" || return 1
	wait "$SPID"
	grep -qF "$ZC_LINE" "$TMP/w.rec" ||
		fail "no line '$ZC_LINE': $(grep -i tokio "$TMP/w.rec")" || return 1
	! grep -E 'no d9prof shim.*(no task ids|carry no task)' "$TMP/w.rec" |
		sed 's/^/    contradicts the zero-code line: /' | grep .
}

# ---- stripped, off ----------------------------------------------------------

# stripped: one line says so, the recording goes on, without tasks
t_stripped() {
	local n s
	need "$FP/zcapp" || return 2
	strip -o "$TMP/zcapp" "$FP/zcapp" || fail "strip failed" || return 1
	"$D9" record -o "$TMP/st.data" -- "$TMP/zcapp" mix 0.5 >"$TMP/st.out" 2>"$TMP/st.rec" ||
		fail "record failed: $(tail -3 "$TMP/st.rec")" || return 1
	n=$(grep -c stripped "$TMP/st.rec")
	say "    stripped: $n line saying so: $(grep -m1 stripped "$TMP/st.rec" | cut -c1-200)"
	[ "$n" = 1 ] || fail "want one line with 'stripped': $(grep -i -E 'tokio|strip' "$TMP/st.rec")" ||
		return 1
	! grep -q 'zero-code' "$TMP/st.rec" || fail "task ids claimed: $(grep zero-code "$TMP/st.rec")" ||
		return 1
	s=$(info_json "$TMP/st.data" 'j["counts"]["samples"], j["counts"]["tasks"]')
	say "    stripped: samples and tasks in the trace: $s"
	[ "${s%% *}" -gt 0 ] && [ "${s##* }" = 0 ] || fail "want samples and no tasks" || return 1
}

# Tokio in a shared library a host loads with dlopen: one line says so
# (its thread-locals are dynamic TLS), and the recording goes on
t_dlopen() {
	local n
	need "$FP/libzerocode.so" || return 2
	cc -O2 -o "$TMP/host" "$ROOT/tests/e2e/zerocode/host.c" -ldl ||
		fail "cannot build the host" || return 1
	start_ready "$TMP/dl.out" "$TMP/host" "$FP/libzerocode.so" 3 || return 1
	"$D9" record -p "$SPID" -d 0.5 -o "$TMP/dl.data" 2>"$TMP/dl.rec" ||
		fail "record failed: $(tail -3 "$TMP/dl.rec")" || return 1
	n=$(grep -c 'Tokio is in a shared library (libzerocode.so)' "$TMP/dl.rec")
	say "    dlopen: $n line saying so: $(grep -m1 'shared library' "$TMP/dl.rec" | cut -c1-200)"
	[ "$n" = 1 ] || fail "want one line: $(grep -i tokio "$TMP/dl.rec")" || return 1
	[ "$(info_json "$TMP/dl.data" 'j["counts"]["samples"]')" -gt 0 ] ||
		fail "no samples" || return 1
}

# No BPF (a user without CAP_BPF, a container's seccomp: noperf.c makes
# bpf(2) fail with EPERM): one line says BPF is what is missing, and the
# recording goes on as a plain CPU profile
t_no_bpf() {
	local n
	need "$FP/zcapp" || return 2
	cc -O1 "$ROOT/tests/e2e/noperf.c" -o "$TMP/noperf" || fail "cannot build noperf" || return 1
	"$TMP/noperf" --system-wide "$D9" record -o "$TMP/nb.data" -- "$FP/zcapp" mix 0.5 \
		>"$TMP/nb.out" 2>"$TMP/nb.rec" || fail "record failed: $(tail -3 "$TMP/nb.rec")" || return 1
	n=$(grep -c "Tokio's task ids cannot be read from outside: BPF refused" "$TMP/nb.rec")
	say "    no BPF: $(grep -m1 "Tokio's task ids" "$TMP/nb.rec" | cut -c1-200)"
	[ "$n" = 1 ] || fail "want one line of BPF refused: $(grep -i -E 'tokio|bpf' "$TMP/nb.rec")" ||
		return 1
	! grep -q 'zero-code' "$TMP/nb.rec" || fail "task ids claimed: $(grep zero-code "$TMP/nb.rec")" ||
		return 1
	[ "$(info_json "$TMP/nb.data" 'j["counts"]["samples"]')" -gt 0 ] || fail "no samples" ||
		return 1
}

# --tokio off: no task ids
t_tokio_off() {
	local s
	need "$FP/zcapp" || return 2
	"$D9" record --tokio off -o "$TMP/off.data" -- "$FP/zcapp" mix 0.5 >"$TMP/off.out" \
		2>"$TMP/off.rec" || fail "record failed: $(tail -3 "$TMP/off.rec")" || return 1
	! grep -E 'zero-code|Tokio .* found' "$TMP/off.rec" | sed 's/^/    with --tokio off: /' |
		grep . || return 1
	"$D9" tasks -i "$TMP/off.data" --limit 0 --wide >"$TMP/off.tasks" 2>/dev/null
	! grep zcapp "$TMP/off.tasks" | sed 's/^/    a task with --tokio off: /' | grep . || return 1
	s=$(info_json "$TMP/off.data" 'j["counts"]["samples"], j["counts"]["tasks"]')
	say "    --tokio off: samples and tasks in the trace: $s"
	[ "${s%% *}" -gt 0 ] && [ "${s##* }" = 0 ] || fail "want samples and no tasks" || return 1
}

# ---- tier 1: --tokio probes, uprobes on Tokio's polls ----------------------

# polls N NAME: the polls of the tasks named NAME in N's `tasks --by name`
# (NAME TASKS POLLS ...), and their tasks
polls_of() { awk -v n="$2" 'NR > 1 && $1 == n { print $3; exit }' "$TMP/$1.names"; }
tasks_of() { awk -v n="$2" 'NR > 1 && $1 == n { print $2; exit }' "$TMP/$1.names"; }

# Every poll, counted: the probes' polls per task equal what the app's
# tasks counted themselves (the hog's and the blocker's loops, 2 polls a
# short task), every task named from its raw::poll instance, and the
# wakes make wake-to-poll delays. With -- CMD the probes are on from the
# app's first instruction, no cap (probes=0).
t_probes() {
	local bad=0 n want got d
	need "$FP/zcapp" || return 2
	"$D9" record --tokio probes=0 -o "$TMP/pr.data" -- "$FP/zcapp" mix 1 >"$TMP/pr.out" \
		2>"$TMP/pr.rec" || fail "record failed: $(tail -3 "$TMP/pr.rec")" || return 1
	grep -E 'poll probes on [0-9]+ raw::poll instances:' "$TMP/pr.rec" | sed 's/^d9prof:/   /' |
		grep . || fail "no probes' summary: $(grep -i probe "$TMP/pr.rec")" || return 1
	"$D9" tasks -i "$TMP/pr.data" --by name --limit 0 --wide >"$TMP/pr.names" 2>/dev/null ||
		fail "tasks --by name failed" || return 1
	for n in hog blocker; do
		want=$(ctr "${n}_polls" "$TMP/pr.out")
		got=$(polls_of pr "zcapp::${n}_task")
		say "    probes: zcapp::${n}_task: ${got:-no} polls, the app counted $want"
		[ "$got" = "$want" ] || bad=1
	done
	want=$(ctr short_polls "$TMP/pr.out")
	got=$(polls_of pr zcapp::short_task)
	say "    probes: zcapp::short_task: ${got:-no} polls in $(tasks_of pr zcapp::short_task) tasks;" \
		"the app counted $want polls in $(ctr short_tasks "$TMP/pr.out") tasks"
	[ "$got" = "$want" ] && [ "$(tasks_of pr zcapp::short_task)" = "$(ctr short_tasks "$TMP/pr.out")" ] ||
		bad=1
	! grep -E '^\[unnamed|^-' "$TMP/pr.names" | sed 's/^/    unnamed: /' | grep . || bad=1
	# delays: each short task is woken by its spawn and by its yield
	"$D9" delays -i "$TMP/pr.data" --task zcapp::short_task --limit 1 >"$TMP/pr.delays" 2>&1 ||
		fail "delays failed: $(cat "$TMP/pr.delays")" || return 1
	d=$(sed -n 's/^# [0-9]* of \([0-9]*\) delays.*/\1/p' "$TMP/pr.delays")
	say "    probes: delays of zcapp::short_task: ${d:-none}"
	[ "${d:-0}" -ge "$(ctr short_tasks "$TMP/pr.out")" ] ||
		fail "want a delay per short task at least: $(tail -2 "$TMP/pr.delays")" || bad=1
	return $bad
}

# The cap: probes off for good once the target is hit faster, said in the
# summary and in the trace (a gap from then on, no polls written in it:
# fewer polls than the app counted, none flagged as woken and not polled)
t_probes_cap() {
	local got want
	need "$FP/zcapp" || return 2
	"$D9" record --tokio probes=1000 -o "$TMP/pc.data" -- "$FP/zcapp" mix 2 >"$TMP/pc.out" \
		2>"$TMP/pc.rec" || fail "record failed: $(tail -3 "$TMP/pc.rec")" || return 1
	grep -E 'poll probes off at [0-9.]+ s: hit [0-9]+ times a second, over the cap' "$TMP/pc.rec" |
		sed 's/^d9prof:/   /' | grep . ||
		fail "no probes off: $(grep -i probe "$TMP/pc.rec")" || return 1
	! grep 'nothing lost' "$TMP/pc.rec" | sed 's/^/    after the probes came off: /' | grep . ||
		fail "the summary says nothing was lost" || return 1
	"$D9" report -i "$TMP/pc.data" >"$TMP/pc.report" 2>&1 ||
		fail "report failed: $(tail -3 "$TMP/pc.report")" || return 1
	grep 'gap (the poll probes came off)' "$TMP/pc.report" |
		sed 's/^ */    report: /' | grep . ||
		fail "no gap in the report: $(grep lost: "$TMP/pc.report")" || return 1
	got=$(sed -n 's/^  runtime: [0-9]* tasks, \([0-9]*\) polls.*/\1/p' "$TMP/pc.report")
	want=$(($(ctr hog_polls "$TMP/pc.out") + $(ctr blocker_polls "$TMP/pc.out") +
		$(ctr short_polls "$TMP/pc.out") + $(ctr spawner_polls "$TMP/pc.out")))
	say "    probes: ${got:-no} polls in the trace of the $want the app counted"
	[ "${got:-0}" -gt 0 ] && [ "$got" -lt $((want * 4 / 5)) ] ||
		fail "want some polls, fewer than the app's" || return 1
	! grep -A3 'never polled again' "$TMP/pc.report" | grep '! woken, never polled' ||
		fail "wakes in the gap taken for lost wake-ups" || return 1
}

e2e_run_tests t_app_cmd t_app_pid t_app_nofp t_hyper t_pid_no_shim_warning t_stripped \
	t_dlopen t_no_bpf t_tokio_off t_probes t_probes_cap
