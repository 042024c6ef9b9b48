#!/usr/bin/env bash
# End-to-end tests: the real d9prof binary against real processes on real
# perf_events. Each t_* function is one test; it prints its own reason on
# failure. A test that needs perf_event skips only where perf_event_open is
# refused on this machine.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests (a test that needs another's
#              trace says so)
NAME=e2e
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
DEMO="$ROOT/$B/examples/demo"

# start_demo FILE ARGS...: start the demo, wait for "ready", set DPID
start_demo() {
	local out=$1; shift
	start_ready "$out" "$DEMO" "$@" || return 1
	DPID=$SPID
}

# share FOLDED PATTERN: percentage (integer) of the weight whose stack
# contains PATTERN as a frame
share() {
	awk -v pat="$2" '{ n = $NF; tot += n; if (index(";" $0, ";" pat)) hit += n }
		END { if (tot == 0) print 0; else printf "%d\n", 100 * hit / tot }' "$1"
}
weight_of() { awk -v pat="$2" 'index(";" $0, ";" pat) { s += $NF } END { print s + 0 }' "$1"; }

# record_task1 DUR SAMPLER DATA FOLDED: record the demo ($DPID) for DUR s
# with SAMPLER (perf, ctimer or - for the default) into DATA (its stderr
# into DATA.err), task 1's folded stacks into FOLDED, GOT their weight
# (see enough)
record_task1() {
	local sampler=()
	[ "$2" = - ] || sampler=(--sampler "$2")
	"$D9" record "${sampler[@]}" -p "$DPID" -d "$1" -o "$3" 2>"$3.err" ||
		fail "record ${sampler[*]} failed: $(cat "$3.err")" || return 1
	grep -q "samples" "$3.err" || fail "no summary on stderr" || return 1
	"$D9" flame -i "$3" --task 1 --format folded >"$4" ||
		fail "flame --task 1 failed" || return 1
	GOT=$(weight "$4")
}

# ---- tests ----------------------------------------------------------------

t_record_demo_pid_task_flamegraphs() {
	need_perf || return
	start_demo "$TMP/demo.out" -w 2 || return 1
	# 500 samples of task 1 give its shares their meaning: 4 s, longer
	# (up to 16 s) when the machine lends the demo too little CPU (and 4 s
	# give the other tasks some 10 samples of their own functions, checked
	# below: 1 s gave 1 to 3, sometimes none)
	enough 500 4 16 record_task1 - "$TMP/demo.data" "$TMP/t1.folded"
	case $? in 0) ;; 3) fail "too few samples for task 1 in 16 s: $GOT"; return 1 ;; *) return 1 ;; esac
	local s w; s=$(share "$TMP/t1.folded" demo_hot_spin); w=$(weight "$TMP/t1.folded")
	say "    task 1 (cpu_hog): $w samples in $ENOUGH_SECS s, demo_hot_spin holds $s%"
	[ "$s" -gt 90 ] || fail "demo_hot_spin holds only $s% of task 1" || return 1
	local t
	for t in 2 3 4; do
		"$D9" flame -i "$TMP/demo.data" --task $t --format folded >"$TMP/t$t.folded" \
			2>/dev/null
		w=$(weight_of "$TMP/t$t.folded" demo_hot_spin)
		[ "$w" = 0 ] || fail "task $t holds $w samples of demo_hot_spin" || return 1
	done
	grep -q "demo_blocking_read\|demo_short_work\|demo_tick_work" "$TMP"/t[234].folded ||
		fail "other tasks show none of their own functions" || return 1
	# the whole picture: thousands of short tasks, so one root per task
	# name by default; --by task for one per task
	"$D9" flame -i "$TMP/demo.data" --format folded >"$TMP/all.folded" || return 1
	grep -q '^cpu_hog;' "$TMP/all.folded" && grep -q '^short;' "$TMP/all.folded" ||
		fail "no 'cpu_hog' and 'short' name roots" || return 1
	! grep -q '^task [0-9]' "$TMP/all.folded" || fail "task roots past 100 tasks" || return 1
	# the shim's own code (the functions libd9prof.a defines, linked into
	# the demo) is one frame, "[d9prof shim]", never read as the demo's
	local shim n
	shim=$(nm --defined-only "$ROOT/$B/libd9prof.a" | awk '$2 ~ /^[tT]$/ { sub(/\..*/, "", $3); print $3 }' |
		sort -u | paste -sd'|')
	n=$(tr ';' '\n' <"$TMP/all.folded" | sed 's/ [0-9]*$//; s/ \[inlined\]$//' |
		grep -cxE "$shim")
	say "    $(grep -c '\[d9prof shim\]' "$TMP/all.folded") stacks end in [d9prof shim]; frames named as the shim's functions: $n"
	[ "$n" = 0 ] || fail "the shim's functions drawn as frames: $(tr ';' '\n' <"$TMP/all.folded" |
		sed 's/ [0-9]*$//; s/ \[inlined\]$//' | grep -xE "$shim" | sort -u | head -3 | tr '\n' ' ')" ||
		return 1
	"$D9" flame -i "$TMP/demo.data" --by task --format folded >"$TMP/bytask.folded" ||
		return 1
	grep -q '^task 1 cpu_hog;' "$TMP/bytask.folded" ||
		fail "no 'task 1 cpu_hog' root with --by task" || return 1
	# a task's stacks start where the runtime called it: run_poll called
	# d9_poll_begin, so it and what is below it are one "[runtime]" frame;
	# --full-stacks keeps them; stacks outside polls stay whole
	local cut full tw
	tw=$(weight "$TMP/t1.folded")
	cut=$(awk '/^[^;]*;\[runtime\];cpu_hog_poll;/ { s += $NF } END { print s + 0 }' \
		"$TMP/t1.folded")
	"$D9" flame -i "$TMP/demo.data" --task 1 --full-stacks --format folded \
		>"$TMP/t1full.folded" || return 1
	full=$(weight_of "$TMP/t1full.folded" "worker_main;run_poll;cpu_hog_poll;")
	say "    task 1: $cut of $tw samples from [runtime];cpu_hog_poll, $full with --full-stacks from worker_main;run_poll"
	[ "$tw" -gt 0 ] && [ $((cut * 10)) -ge $((tw * 9)) ] ||
		fail "task 1's stacks not cut at run_poll: $(head -c 300 "$TMP/t1.folded")" || return 1
	[ $((full * 10)) -ge $((tw * 9)) ] && ! grep -q '\[runtime\]' "$TMP/t1full.folded" ||
		fail "--full-stacks: $(head -c 300 "$TMP/t1full.folded")" || return 1
	! grep -q '^\[no poll\];\[runtime\]' "$TMP/bytask.folded" ||
		fail "a stack outside any poll was cut" || return 1
	"$D9" info -i "$TMP/demo.data" | grep -qx 'poll sites:  run_poll (demo)' ||
		fail "info names no poll site run_poll: $("$D9" info -i "$TMP/demo.data" | grep -i poll)" ||
		return 1
	# --task NAME: every short task, under its name
	"$D9" flame -i "$TMP/demo.data" --task short --format folded >"$TMP/short.folded" ||
		return 1
	[ -s "$TMP/short.folded" ] && ! grep -vq '^short;' "$TMP/short.folded" ||
		fail "--task short kept other tasks" || return 1
	# SVG by default, self-contained
	"$D9" flame -i "$TMP/demo.data" --task 1 -o "$TMP/t1.svg" || return 1
	grep -q '<svg' "$TMP/t1.svg" && grep -q 'demo_hot_spin' "$TMP/t1.svg" ||
		fail "svg lacks the hot function" || return 1
	! grep -q 'http[s]*://[^"]*\.js' "$TMP/t1.svg" || fail "svg loads external script" || return 1
	# tasks table
	"$D9" tasks -i "$TMP/demo.data" --limit 0 >"$TMP/tasks.txt" || return 1
	grep -q 'cpu_hog' "$TMP/tasks.txt" && grep -q 'blocker' "$TMP/tasks.txt" ||
		fail "tasks table lacks cpu_hog/blocker: $(head -5 "$TMP/tasks.txt")" || return 1
	kill "$DPID"; wait "$DPID" 2>/dev/null
	return 0
}

t_kernel_frames_are_symbolized() {
	need_perf || return
	[ -s "$TMP/all.folded" ] || fail "needs the demo recording" || return 1
	local named raw
	named=$(tr ';' '\n' <"$TMP/all.folded" | grep '_\[k\]' | grep -vc '^0x')
	raw=$(tr ';' '\n' <"$TMP/all.folded" | grep '_\[k\]' | grep -c '^0x')
	say "    kernel frames: $named named, $raw bare addresses"
	[ "$named" -gt 0 ] || fail "no symbolized kernel frames" || return 1
	[ "$raw" -le "$named" ] || fail "most kernel frames unresolved" || return 1
}

t_record_command_mode() {
	need_perf || return
	"$D9" record -d 2 -o "$TMP/cmd.data" -- "$DEMO" -d 5 -q >/dev/null 2>"$TMP/cmd.err" ||
		fail "record -- CMD failed: $(cat "$TMP/cmd.err")" || return 1
	"$D9" flame -i "$TMP/cmd.data" --task 1 --format folded >"$TMP/cmd.folded" || return 1
	local s; s=$(share "$TMP/cmd.folded" demo_hot_spin)
	[ "$s" -gt 90 ] || fail "demo_hot_spin holds $s% of task 1 in command mode" || return 1
	# from the first marker: the demo's first polls, cpu_hog's (task 1) and
	# the spawner's (task 4, which spawns task 5 on), are in the trace,
	# none of them cut at its start
	"$D9" polls -i "$TMP/cmd.data" --sort start --limit 4 >"$TMP/cmd.polls" || return 1
	sed -n 2p "$TMP/cmd.polls" | sed 's/^/    first poll: /'
	awk 'NR > 1 && /^[0-9]/ { n++; t[$2] = 1; if (index($0, "+ ")) bad = 1 }
		END { exit !(n == 4 && t[1] && t[4] && !bad) }' "$TMP/cmd.polls" ||
		fail "the first polls are not the demo's first tasks': $(cat "$TMP/cmd.polls")" ||
		return 1
	# and the first task the spawner made (task 5: without the wait for
	# the attach, the first short task recorded was the 20th or so). Its
	# poll, not the first short poll: two workers may take task 6 first
	s=$("$D9" polls -i "$TMP/cmd.data" --task 5 --limit 0 | awk '$2 == 5' | wc -l)
	[ "$s" -gt 0 ] || fail "the spawner's first task (5) has no poll recorded ($(grep -m1 -E 'attached|refused' "$TMP/cmd.err"); first short polls: $("$D9" polls -i "$TMP/cmd.data" --task short --sort start --limit 3 | awk 'NR > 1 { printf "%s ", $2 }'))" || return 1
	# thousands of tasks: the all-tasks SVG stays small
	"$D9" flame -i "$TMP/cmd.data" -o "$TMP/cmd.svg" || return 1
	s=$(stat -c %s "$TMP/cmd.svg")
	say "    all-tasks SVG: $s bytes, $(grep -c '^short;' <("$D9" flame -i "$TMP/cmd.data" --format folded)) short stacks"
	[ "$s" -lt 300000 ] || fail "the all-tasks SVG is $s bytes" || return 1
}

# Commands that live 8 ms in clock_gettime: each exec maps a vDSO of its
# own (the kernel says where in an MMAP2 record, the only word of it once
# the command has exited: /proc/PID/maps of a zombie is empty), and its
# frames are named as perf names them, not bare addresses, with the
# callers the vDSO's CFI finds. Runs until 100 samples, at most 12.
t_vdso_frames_of_a_command_that_exited_are_named() {
	need_perf || return
	cc -O1 -g -fno-omit-frame-pointer tests/e2e/vdso_spin.c -o "$TMP/vdso_spin" ||
		fail "cannot build vdso_spin" || return 1
	local n=0 tot=0 callee named lost
	: >"$TMP/vdso.folded"
	# 30 ms of spin: the exec, ld.so and the recorder's own start take a
	# fixed 5 to 10 ms of samples, over half of an 8 ms spin's on a VM of
	# 2026-11 (kernel 6.18)
	while [ $n -lt 12 ] && [ "$tot" -lt 100 ]; do
		"$D9" record -F 4999 -o "$TMP/vdso.data" -- "$TMP/vdso_spin" 30 >/dev/null \
			2>"$TMP/vdso.err" || fail "record failed: $(cat "$TMP/vdso.err")" || return 1
		"$D9" flame -i "$TMP/vdso.data" --by thread --format folded 2>/dev/null |
			sed 's/^[^;]*;//' >>"$TMP/vdso.folded" || return 1
		tot=$(weight "$TMP/vdso.folded")
		n=$((n + 1))
	done
	# below spin() is the vDSO alone: each of its frames named
	# clock_gettime, and clock_gettime nowhere else (its callers lost);
	# samples in spin()'s own loop (about a tenth) are neither
	read -r callee named lost < <(awk '{ w = $NF }
		/;main;spin;/ { c += w; if (/;main;spin;clock_gettime[; ]/) n += w; next }
		/clock_gettime/ { l += w }
		END { print c + 0, n + 0, l + 0 }' "$TMP/vdso.folded")
	say "    $callee of $tot samples in $n runs below main;spin (the rest: exec, ld.so, spin's loop), $named of them in clock_gettime, named; $lost in it elsewhere"
	[ "$tot" -ge 100 ] || fail "only $tot samples in $n runs" || return 1
	[ $((callee * 10)) -ge $((tot * 6)) ] && [ $((named * 100)) -ge $((callee * 95)) ] &&
		[ $((lost * 10)) -le "$named" ] ||
		fail "vDSO frames unnamed or callers lost: $(sort -t' ' -k2 -n "$TMP/vdso.folded" | tail -2)" || return 1
}

t_target_exit_leaves_complete_trace() {
	need_perf || return
	start_demo "$TMP/exit.out" -d 1.5 || return 1
	"$D9" record -p "$DPID" -d 20 -o "$TMP/exit.data" 2>"$TMP/exit.err" ||
		fail "record failed when the target exited: $(cat "$TMP/exit.err")" || return 1
	grep -q "exited" "$TMP/exit.err" || fail "summary does not say the target exited" || return 1
	"$D9" tasks -i "$TMP/exit.data" >/dev/null 2>"$TMP/exit.tasks.err" || return 1
	! grep -q truncated "$TMP/exit.tasks.err" || fail "trace reads as truncated" || return 1
}

t_installed_shim_own_process() {
	need_perf || return
	local pfx="$TMP/prefix"
	make -s install PREFIX="$pfx" B="$B" >/dev/null ||
		fail "make install failed" || return 1
	[ -f "$pfx/share/man/man1/d9prof.1" ] && [ -f "$pfx/share/man/man3/d9prof.3" ] ||
		fail "man pages not installed" || return 1
	local cflags libs
	cflags=$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --cflags d9prof) &&
		libs=$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --libs d9prof) ||
		fail "pkg-config d9prof failed" || return 1
	# shellcheck disable=SC2086
	cc -O1 -g -fno-omit-frame-pointer $cflags tests/e2e/own_runtime.c -o "$TMP/own" \
		$libs -lpthread || fail "cannot build against the installed shim" || return 1
	LD_LIBRARY_PATH="$pfx/lib" "$TMP/own" 8 >"$TMP/own.out" &
	local opid=$!; PIDS+=("$opid")
	sleep 0.3
	"$pfx/bin/d9prof" record -p "$opid" -d 4 -o "$TMP/own.data" 2>"$TMP/own.err" ||
		fail "record failed: $(cat "$TMP/own.err")" || return 1
	"$pfx/bin/d9prof" flame -i "$TMP/own.data" --task 1 --format folded >"$TMP/own1.f" ||
		return 1
	"$pfx/bin/d9prof" flame -i "$TMP/own.data" --task 2 --format folded >"$TMP/own2.f" ||
		return 1
	local s w2; s=$(share "$TMP/own1.f" own_hot_function)
	w2=$(weight_of "$TMP/own2.f" own_hot_function)
	say "    own process: hot task $(weight "$TMP/own1.f") samples, own_hot_function $s%;" \
		"light task holds $w2 of it; trace $(stat -c %s "$TMP/own.data") bytes"
	[ "$s" -gt 90 ] || fail "own_hot_function holds $s%" || return 1
	[ "$w2" = 0 ] || fail "light task holds $w2 samples of own_hot_function" || return 1
	kill "$opid"; wait "$opid" 2>/dev/null
	return 0
}

t_target_without_shim_warns() {
	need_perf || return
	"$D9" record -d 0.5 -o "$TMP/noshim.data" -- sh -c 'while :; do :; done' \
		2>"$TMP/noshim.err" || fail "record failed: $(cat "$TMP/noshim.err")" || return 1
	grep -q "no d9prof shim" "$TMP/noshim.err" || fail "no warning about the shim" || return 1
	"$D9" flame -i "$TMP/noshim.data" --format folded >"$TMP/noshim.f" || return 1
	grep -q '^\[no poll\];' "$TMP/noshim.f" || fail "samples missing" || return 1
}

t_killed_recorder_leaves_readable_trace_and_live_target() {
	need_perf || return
	start_demo "$TMP/kill.out" || return 1
	"$D9" record -p "$DPID" -o "$TMP/kill.data" 2>/dev/null &
	local rpid=$!
	sleep 2.5
	kill -KILL "$rpid"; wait "$rpid" 2>/dev/null
	kill -0 "$DPID" || fail "target died with the recorder" || return 1
	"$D9" tasks -i "$TMP/kill.data" >"$TMP/kill.tasks" 2>"$TMP/kill.err" ||
		fail "cut trace unreadable: $(cat "$TMP/kill.err")" || return 1
	grep -q truncated "$TMP/kill.err" || fail "no truncation warning" || return 1
	sleep 0.5
	kill -0 "$DPID" || fail "target died after the recorder" || return 1
	kill "$DPID"; wait "$DPID" 2>/dev/null
	return 0
}

# ---- record's perf conventions ---------------------------------------------

# recorded_ms ERRFILE: the time the summary says was recorded, in ms
recorded_ms() {
	awk '/^d9prof: recorded / { printf "%d\n", $3 * 1000 }' "$1"
}

t_record_pid_while_command_runs() {
	need_perf || return
	start_demo "$TMP/pc.out" -w 2 || return 1
	"$D9" record -p "$DPID" -o "$TMP/pc.data" -- sleep 1 2>"$TMP/pc.err" ||
		fail "record -p PID -- sleep 1 failed: $(cat "$TMP/pc.err")" || return 1
	kill -0 "$DPID" || fail "the target died" || return 1
	kill "$DPID"; wait "$DPID" 2>/dev/null
	local ms; ms=$(recorded_ms "$TMP/pc.err")
	say "    $(grep '^d9prof: recorded' "$TMP/pc.err" | cut -c1-110)"
	[ -n "$ms" ] && [ "$ms" -ge 900 ] && [ "$ms" -le 1600 ] ||
		fail "recorded '$ms' ms while sleep 1 ran" || return 1
	grep -q "recorded .* of pid $DPID:" "$TMP/pc.err" ||
		fail "did not record the demo (pid $DPID)" || return 1
	"$D9" tasks -i "$TMP/pc.data" >"$TMP/pc.tasks" 2>&1 || return 1
	grep -q cpu_hog "$TMP/pc.tasks" || fail "no cpu_hog in the trace" || return 1
}

t_record_duration_units() {
	need_perf || return
	local r=0 ms
	"$D9" record -d 500ms -o "$TMP/du.data" -- sleep 5 2>"$TMP/du.err" ||
		fail "record -d 500ms failed (exit $?): $(cat "$TMP/du.err")" || return 1
	ms=$(recorded_ms "$TMP/du.err")
	say "    -d 500ms: recorded $ms ms"
	[ -n "$ms" ] && [ "$ms" -ge 450 ] && [ "$ms" -le 900 ] ||
		{ fail "recorded '$ms' ms for -d 500ms"; r=1; }
	# the recorder ended sleep: not the command's failure
	! grep -q "killed by signal\|exited with" "$TMP/du.err" ||
		{ fail "reports the command it ended: $(grep -m1 'signal\|exited' "$TMP/du.err")"; r=1; }
	"$D9" record -d 0.3 -o "$TMP/du2.data" -- sleep 5 2>"$TMP/du2.err" ||
		{ fail "record -d 0.3 failed"; r=1; }
	ms=$(recorded_ms "$TMP/du2.err")
	[ -n "$ms" ] && [ "$ms" -ge 250 ] && [ "$ms" -le 700 ] ||
		{ fail "recorded '$ms' ms for -d 0.3"; r=1; }
	expect 2 "bad duration '5x'" "$D9" record -p 1 -d 5x || r=1
	expect 2 "bad duration '0ms'" "$D9" record -p 1 -d 0ms || r=1
	return $r
}

t_record_command_exit_status() {
	need_perf || return
	local r=0 rc
	"$D9" record -o "$TMP/ex.data" -- sh -c 'exit 3' 2>"$TMP/ex.err"; rc=$?
	[ "$rc" = 3 ] || { fail "record -- sh -c 'exit 3' exited $rc, want 3"; r=1; }
	grep -q "^d9prof: sh exited with status 3$" "$TMP/ex.err" ||
		{ fail "does not say 'sh exited with status 3': $(cat "$TMP/ex.err")"; r=1; }
	grep -q "^d9prof: wrote " "$TMP/ex.err" || { fail "no trace written"; r=1; }
	"$D9" record -o "$TMP/ex.data" -- sh -c 'kill -9 $$' 2>"$TMP/ex9.err"; rc=$?
	[ "$rc" = 137 ] || { fail "a command killed by SIGKILL: exit $rc, want 137"; r=1; }
	grep -q "^d9prof: sh was killed by signal 9" "$TMP/ex9.err" ||
		{ fail "does not say 'killed by signal 9': $(tail -1 "$TMP/ex9.err")"; r=1; }
	"$D9" record -o "$TMP/ex.data" -- true 2>"$TMP/ex0.err"; rc=$?
	[ "$rc" = 0 ] || { fail "record -- true exited $rc"; r=1; }
	! grep -q "exited with\|killed by" "$TMP/ex0.err" || { fail "reports a success"; r=1; }
	return $r
}

t_record_unrunnable_command_touches_nothing() {
	local rc out
	# an earlier trace (its magic: other files are never replaced anyway)
	printf 'D9PROF\000\nkeep me\n' >"$TMP/nx.data"
	cp "$TMP/nx.data" "$TMP/nx.orig"
	rm -f "$TMP/nx.data.old"
	out=$("$D9" record -o "$TMP/nx.data" -- /nonexistent/cmd 2>&1 >/dev/null); rc=$?
	say "    $out"
	[ "$rc" = 1 ] || fail "exited $rc, want 1" || return 1
	[ "$(wc -l <<<"$out")" = 1 ] || fail "more than one line: $out" || return 1
	grep -q "^d9prof: cannot run '/nonexistent/cmd': No such file or directory$" <<<"$out" ||
		fail "not the line wanted: $out" || return 1
	cmp -s "$TMP/nx.data" "$TMP/nx.orig" || fail "the output was overwritten" || return 1
	[ ! -e "$TMP/nx.data.old" ] || fail "the output was renamed to .old" || return 1
	# not executable (not even root may run a file without an x bit)
	printf '#!/bin/sh\n' >"$TMP/noexec.sh"; chmod 644 "$TMP/noexec.sh"
	out=$("$D9" record -o "$TMP/nx.data" -- "$TMP/noexec.sh" 2>&1 >/dev/null); rc=$?
	[ "$rc" = 1 ] && [ "$out" = "d9prof: cannot run '$TMP/noexec.sh': Permission denied" ] ||
		fail "non-executable: exit $rc, $out" || return 1
	cmp -s "$TMP/nx.data" "$TMP/nx.orig" || fail "the output was overwritten" || return 1
	# an output that cannot be written is said before anything runs
	out=$("$D9" record -o "$TMP/nodir/x.data" -- touch "$TMP/ran" 2>&1); rc=$?
	[ "$rc" = 1 ] && grep -q "cannot write '$TMP/nodir/x.data'" <<<"$out" ||
		fail "unwritable output: exit $rc, $out" || return 1
	[ ! -e "$TMP/ran" ] || fail "the command ran although the output cannot be written" ||
		return 1
}

t_record_progress_line_on_a_terminal() {
	need_perf || return
	command -v script >/dev/null || { say "    skip: no script(1) (bsdutils)"; return 2; }
	local esc; esc=$(printf '\r\033\\[K')
	# no -d and no command: it says how to stop; the target's exit ends it
	sleep 1.2 & local spid=$!; PIDS+=("$spid")
	script -qfc "'$D9' record -p $spid -o '$TMP/tty.data'" /dev/null >"$TMP/tty.out" 2>&1 ||
		fail "record under script failed: $(cat -v "$TMP/tty.out")" || return 1
	say "    $(tr '\r' '\n' <"$TMP/tty.out" | grep -a -m1 'recording pid' | cat -v)"
	grep -aq "${esc}d9prof: recording pid $spid: [0-9.]* s, [0-9]* samples\?, [0-9]* shim events\?, [0-9]* drops\? - Ctrl-C to stop" \
		"$TMP/tty.out" || fail "no status line: $(cat -v "$TMP/tty.out")" || return 1
	grep -aq "${esc}d9prof: recorded " "$TMP/tty.out" ||
		fail "the status line is not erased before the summary" || return 1
	# with -d: no Ctrl-C hint; with stderr a file: no status line at all
	script -qfc "'$D9' record -d 0.6 -o '$TMP/tty.data' -- sleep 5" /dev/null \
		>"$TMP/tty2.out" 2>&1 || fail "record -d under script failed" || return 1
	grep -aq "recording pid .* of 0.6 s" "$TMP/tty2.out" ||
		fail "no status line with -d: $(cat -v "$TMP/tty2.out")" || return 1
	! grep -aq "Ctrl-C" "$TMP/tty2.out" || fail "Ctrl-C hint with -d" || return 1
	"$D9" record -d 0.6 -o "$TMP/tty.data" -- sleep 5 2>"$TMP/notty.err" || return 1
	! grep -aq "$(printf '\033')\|recording pid" "$TMP/notty.err" ||
		fail "status line written to a file: $(cat -v "$TMP/notty.err")" || return 1
}

t_record_messages() {
	need_perf || return
	local r=0 out n
	"$D9" record -o "$TMP/msg.data" -- sleep 0.3 2>"$TMP/msg.err" || return 1
	grep -q "sampling .* 1 thread of pid" "$TMP/msg.err" ||
		{ fail "no '1 thread': $(grep sampling "$TMP/msg.err")"; r=1; }
	! grep -q "\b1 threads\|\b1 samples\|\b1 switches\|\b1 intervals" "$TMP/msg.err" ||
		{ fail "a plural for 1: $(grep '\b1 [a-z]*s\b' "$TMP/msg.err")"; r=1; }
	# the no-shim warning, once
	sleep 5 & local spid=$!; PIDS+=("$spid")
	"$D9" record -p "$spid" -d 0.3 -o "$TMP/msg2.data" 2>"$TMP/msg2.err" || r=1
	kill "$spid" 2>/dev/null
	n=$(grep -c "no d9prof shim" "$TMP/msg2.err")
	[ "$n" = 1 ] || { fail "the no-shim warning $n times"; r=1; }
	# a bad option: our line naming it, then where to look; not getopt's
	out=$("$D9" record -x -p 1 2>&1)
	[ "$out" = "d9prof: unknown option '-x'
try 'd9prof record --help'" ] || { fail "bad option said: $out"; r=1; }
	expect 2 "option '--pid' needs a value" "$D9" record --pid || r=1
	expect 2 "unknown option '--frob'" "$D9" record --frob || r=1
	[ "$("$D9" record --frob 2>&1 | wc -l)" = 2 ] ||
		{ fail "'record --frob' says more than 2 lines"; r=1; }
	# another user's process: what is wrong and what to do, one line
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		sleep 5 & spid=$!; PIDS+=("$spid")
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$D9" record -p "$spid" \
			-d 0.5 -o /tmp/d9-nobody-$$.data 2>&1); n=$?
		kill "$spid" 2>/dev/null
		rm -f /tmp/d9-nobody-$$.data
		say "    $out"
		[ "$n" = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
			grep -q "cannot record pid $spid: it belongs to another user (uid 0); run d9prof as root or as its owner" <<<"$out" ||
			{ fail "another user's process: exit $n, $out"; r=1; }
	fi
	return $r
}

# expect CODE PATTERN CMD...: exit code and a one-line message on stderr
expect() {
	local code=$1 pat=$2; shift 2
	local out rc
	out=$("$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" = "$code" ] || fail "'$*' exited $rc, want $code: $out" || return 1
	grep -q -- "$pat" <<<"$out" || fail "'$*' said '$out', want /$pat/" || return 1
	! grep -qi "segmentation\|core dumped\|assert" <<<"$out" || fail "crash: $out" || return 1
}

t_bad_input_is_one_clear_line() {
	local r=0
	expect 1 "cannot attach to pid 999999.*no such process" "$D9" record -p 999999 -d 1 \
		-o "$TMP/x.data" || r=1
	expect 2 "bad pid 'abc'" "$D9" record -p abc || r=1
	expect 2 "bad duration '-3'" "$D9" record -p 1 -d -3 || r=1
	expect 2 "bad frequency '0'" "$D9" record -p 1 -F 0 || r=1
	expect 2 "bad format 'png'" "$D9" flame --format png || r=1
	expect 2 "bad task '0'" "$D9" flame --task 0 || r=1
	expect 2 "bad --by 'color'" "$D9" polls --by color || r=1
	expect 2 "bad --min-poll '5': want a number and a unit" "$D9" offcpu --min-poll 5 || r=1
	expect 2 "bad --min '1x'" "$D9" polls --min 1x || r=1
	expect 2 "bad sort key 'size'" "$D9" polls --sort size || r=1
	expect 2 "unknown command 'frob'" "$D9" frob || r=1
	expect 1 "no such file" "$D9" tasks -i "$TMP/missing.data" || r=1
	head -c 4096 /dev/urandom >"$TMP/garbage.data"
	expect 1 "corrupt or not a d9prof trace" "$D9" flame -i "$TMP/garbage.data" || r=1
	if [ -s "$TMP/demo.data" ]; then
		expect 1 "no task 987654" "$D9" flame -i "$TMP/demo.data" --task 987654 || r=1
		expect 1 "no poll 987654321" "$D9" flame -i "$TMP/demo.data" --poll 987654321 ||
			r=1
		local sz; sz=$(stat -c %s "$TMP/demo.data")
		head -c $((sz * 2 / 3)) "$TMP/demo.data" >"$TMP/cut.data"
		expect 0 "truncated" "$D9" tasks -i "$TMP/cut.data" || r=1
		# flip a byte in the middle of the file: a corrupt chunk is an error
		cp "$TMP/demo.data" "$TMP/flip.data"
		printf '\xff\x00\xff' | dd of="$TMP/flip.data" bs=1 seek=$((sz / 2)) conv=notrunc \
			2>/dev/null
		expect 1 "corrupt" "$D9" tasks -i "$TMP/flip.data" || r=1
	fi
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		# a process we may not trace: pid 1 seen by an unprivileged user
		expect 1 "cannot record pid 1" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$D9" record -p 1 -d 0.5 -o /tmp/d9-nobody-$$.data || r=1
	fi
	return $r
}

t_help_and_man() {
	local c r=0
	"$D9" --help | grep -q "^usage: d9prof" || { fail "d9prof --help"; r=1; }
	for c in record flame tasks polls offcpu; do
		"$D9" $c --help | grep -q "^usage: d9prof $c" || { fail "$c --help"; r=1; }
		grep -q "^\.B.*$c\|$c" man/d9prof.1 || { fail "man page lacks $c"; r=1; }
	done
	local w
	for m in man/d9prof.1 man/d9prof.3; do
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
		[ -z "$w" ] || { fail "$m renders with warnings: $w"; r=1; }
	done
	return $r
}

# ---- off-CPU --------------------------------------------------------------

# offcpu_of FILE TASK OUT: the task's off-CPU folded stacks inside polls of
# at least 1 ms, in microseconds blocked
offcpu_of() {
	"$D9" offcpu -i "$1" --task "$2" --min-poll 1ms --format folded >"$3" 2>"$3.err" ||
		fail "offcpu --task $2 failed: $(cat "$3.err")"
}
# within A B PCT: A is within PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
	exit !(b > 0 && d <= b * p / 100) }'; }
# blocked_weight FOLDED: weight of the stacks not marked [preempted] (a
# preemption may be followed by its [runqueue: holder] frame)
blocked_weight() { awk '!/\[preempted\]/ { s += $NF } END { print s + 0 }' "$1"; }

# offcpu_demo SRC LABEL: the demo recorded from start to exit with off-CPU
# source SRC; its blocker (task 2) blocks ~3 ms per poll in
# demo_blocking_read's nanosleep, its hog (task 1) never blocks
# offcpu_demo SRC LABEL: the demo's off-CPU time recorded with
# --offcpu-source SRC (perf_event), or with --sched bpf for SRC bpf
offcpu_demo() {
	local src=$1 label=$2 d="$TMP/oc-$1" how
	how="--offcpu-source $src"
	[ "$src" = bpf ] && how="--sched bpf"
	# shellcheck disable=SC2086
	"$D9" record $how -o "$d.data" -- "$DEMO" -d 3 >/dev/null \
		2>"$d.err" || fail "record failed: $(cat "$d.err")" || return 1
	grep -q "off-CPU ($label): [1-9][0-9]* switches" "$d.err" ||
		fail "no off-CPU summary from $label: $(grep -i off-cpu "$d.err")" || return 1
	# a switch-out without its switch-in: lost by us at most 0.2%; or
	# never reported by the kernel (each CPU's chain of prev -> next
	# breaks at ~0.1% of its switches on this machine's 6.18): said apart,
	# at most 0.5%
	awk -v src="$src" '/off-CPU \(/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^switch(es)?$/) n = $i }
		/without a switch-in/ { u = $2 }
		/the kernel did not report [0-9]+ switch-in/ { k = $6 }
		END { exit !(src != "bpf" || (u * 500 <= n && k * 200 <= n)) }' "$d.err" ||
		fail "$(grep "without a switch-in\|did not report" "$d.err")" || return 1
	local polls expect_us
	polls=$(awk '$1 == "demo:" && $2 == "blocker" { print $NF }' "$d.err")
	[ -n "$polls" ] && [ "$polls" -gt 100 ] || fail "demo blocker polls: '$polls'" || return 1
	# what the blocker really lost in its blocking call, as the demo timed it
	expect_us=$(awk '$1 == "demo:" && $2 == "blocked_us" { print $3 }' "$d.err")
	[ -n "$expect_us" ] || fail "the demo did not report blocked_us" || return 1
	offcpu_of "$d.data" 2 "$d.t2" || return 1
	offcpu_of "$d.data" 1 "$d.t1" || return 1
	local w2 wcall wsys b1
	w2=$(weight "$d.t2")
	wcall=$(weight_of "$d.t2" demo_blocking_read)
	wsys=$(awk '/demo_blocking_read;.*nanosleep[^;]*_\[k\]/ { s += $NF } END { print s + 0 }' \
		"$d.t2")
	b1=$(blocked_weight "$d.t1")
	say "    $label: blocker off-CPU ${w2} us for $polls polls (${expect_us} us in the blocking call)," \
		"$((100 * wsys / (w2 > 0 ? w2 : 1)))% under demo_blocking_read -> nanosleep;" \
		"hog blocked ${b1} us, preempted $(($(weight "$d.t1") - b1)) us"
	within "$w2" "$expect_us" 15 || fail "blocker off-CPU $w2 us, want $expect_us +-15%" ||
		return 1
	# the kernel part starts at the tracepoint on either path: no frame of
	# the BPF program or of the kernel code that ran it
	! grep -q "bpf_trace_run\|bpf_prog_" "$d.t2" "$d.t1" ||
		fail "BPF's own frames in the stacks: $(grep -o '[^;]*bpf_[^;]*' "$d.t2" | sort -u | head -3)" ||
		return 1
	[ "$wsys" -gt $((w2 * 9 / 10)) ] ||
		fail "only $wsys of $w2 us under demo_blocking_read -> nanosleep" || return 1
	[ "$wcall" -ge "$wsys" ] || return 1
	[ "$b1" -le $((w2 / 20)) ] || fail "the hog blocked $b1 us: more than noise" || return 1
}

t_offcpu_demo_tracepoint() {
	need_perf || return
	offcpu_demo tracepoint tracepoint
}

t_offcpu_demo_bpf() {
	need_perf && need_bpf || return
	offcpu_demo bpf bpf
}

t_offcpu_demo_context_switch_fallback() {
	need_perf || return
	offcpu_demo switch context-switch
}

# $TMP/sleeper (tests/e2e/sleeper.c), built once
sleeper_built() {
	[ -x "$TMP/sleeper" ] ||
		cc -O1 -g -fno-omit-frame-pointer -Iinclude tests/e2e/sleeper.c -o "$TMP/sleeper" \
			"$B/libd9prof.a" -lpthread || fail "cannot build the sleeper"
}

# sleepers_recorded: the sleeper (3 s) recorded by each off-CPU source
# (SRC as offcpu_demo's; bpf where need_bpf passes) at once, into
# $TMP/sl-SRC.data, .out, .err and .rc (record's exit status), the first
# time a test needs one: three processes that sleep, recorded apart
SLEEPERS_RECORDED=0
sleepers_recorded() {
	local src how p pids=()
	[ "$SLEEPERS_RECORDED" = 1 ] && return 0
	SLEEPERS_RECORDED=1
	sleeper_built || return 1
	for src in tracepoint bpf switch; do
		how="--offcpu-source $src"
		if [ "$src" = bpf ]; then
			need_bpf >/dev/null || continue
			how="--sched bpf"
		fi
		# shellcheck disable=SC2086
		("$D9" record $how -o "$TMP/sl-$src.data" -- "$TMP/sleeper" 3 >"$TMP/sl-$src.out" \
			2>"$TMP/sl-$src.err"
		echo $? >"$TMP/sl-$src.rc") &
		pids+=($!)
		PIDS+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
}

# offcpu_sleeper SRC: (SRC as offcpu_demo's) a process of our own whose
# task sleeps ~3 ms per poll in libc's nanosleep()/usleep() called from
# sleeper_wait_for_io(), a frame-pointer walk from inside libc skips that
# function
offcpu_sleeper() {
	local src=$1 d="$TMP/sl-$1"
	sleepers_recorded || return 1
	[ "$(cat "$d.rc" 2>/dev/null)" = 0 ] || fail "record failed: $(cat "$d.err")" || return 1
	local slept w wcall
	slept=$(awk '$1 == "slept_us" { print $2 }' "$d.out")
	[ -n "$slept" ] && [ "$slept" -gt 1000000 ] || fail "sleeper slept '$slept' us" || return 1
	offcpu_of "$d.data" 1 "$d.f" || return 1
	w=$(weight "$d.f")
	# a user-side (libc) nanosleep frame below the calling function
	wcall=$(awk '{ n = split($0, f, ";"); seen = 0; hit = 0
		for (i = 1; i <= n; i++) {
			if (f[i] == "sleeper_wait_for_io") seen = 1
			else if (seen && f[i] ~ /nanosleep/ && f[i] !~ /_\[k\]/) hit = 1
		}
		if (hit) s += $NF } END { print s + 0 }' "$d.f")
	say "    $src: off-CPU ${w} us, slept ${slept} us; $((100 * wcall / (w > 0 ? w : 1)))%" \
		"under sleeper_wait_for_io -> libc nanosleep; $(grep -h 'off-CPU stacks' "$d.err" |
		sed 's/^d9prof: //')"
	within "$w" "$slept" 15 || fail "off-CPU $w us, slept $slept us" || return 1
	[ "$wcall" -gt $((w * 9 / 10)) ] ||
		fail "only $wcall of $w us under sleeper_wait_for_io -> nanosleep" || return 1
}

t_offcpu_own_sleeper_tracepoint() {
	need_perf || return
	offcpu_sleeper tracepoint
}

t_offcpu_own_sleeper_bpf() {
	need_perf && need_bpf || return
	offcpu_sleeper bpf
}

# offcpu_min SRC: --offcpu-min 2ms on the sleeper with a usleep(200) in
# sleeper_short_wait() after each 3 ms sleep (~0.4 ms with timer slack). Checked against the sleeper's
# own count and timing: the long sleeps keep their stacks and their time,
# the short ones keep their time (one interval each) under the frame
# "[stack not kept ...]"; with BPF their stacks stayed in the kernel.
# Then a thread still asleep as `record -d` ends (sleeper_final_wait) is
# written with its stack: on the BPF path its switch-out was still waiting
# in the kernel.
offcpu_min() {
	local src=$1 d="$TMP/min-$1" how="--sched $1"
	[ "$src" = tracepoint ] && how="--offcpu-source tracepoint"
	sleeper_built || return 1
	# shellcheck disable=SC2086
	"$D9" record $how --offcpu-min 2ms -o "$d.data" -- "$TMP/sleeper" 2 200 \
		>"$d.out" 2>"$d.err" || fail "record failed: $(cat "$d.err")" || return 1
	local slept shorts short_us nk wl wnk wsk
	slept=$(awk '$1 == "slept_us" { print $2 }' "$d.out")
	shorts=$(awk '$1 == "shorts" { print $2 }' "$d.out")
	short_us=$(awk '$1 == "short_us" { print $2 }' "$d.out")
	# the worker's blocked intervals without a stack (the main thread
	# has a few of its own, page faults as it starts; preemptions are
	# the machine's)
	"$D9" export -i "$d.data" --format chrome -o "$d.json" 2>"$d.json.err" ||
		fail "export failed: $(cat "$d.json.err")" || return 1
	read -r nk wnk < <(python3 -c "import json,sys
ev = json.load(open(sys.argv[1]))['traceEvents']
w = [e['tid'] for e in ev if e.get('name') == 'thread_name' and
     e['args']['name'] == 'sleeper-worker']
nk = [e for e in ev if e.get('cat') == 'offcpu' and e.get('tid') in w and
      e.get('name') == 'off-CPU (blocked)' and
      e['args'].get('top', '').startswith('[stack not kept')]
print(len(nk), int(sum(e['dur'] for e in nk)))" "$d.json")
	"$D9" offcpu -i "$d.data" --format folded >"$d.f" 2>"$d.f.err" ||
		fail "offcpu failed: $(cat "$d.f.err")" || return 1
	wl=$(awk '/;sleeper_wait_for_io;/ { s += $NF } END { print s + 0 }' "$d.f")
	wsk=$(awk '/;sleeper_short_wait;/ { s += $NF } END { print s + 0 }' "$d.f")
	say "    $src: long sleeps ${wl} us under sleeper_wait_for_io (slept ${slept} us);" \
		"short ones: ${nk:-0} of the worker's intervals without a stack (${shorts} slept)," \
		"${wnk} us," \
		"${wsk} us with a stack (${short_us} us slept)"
	[ -n "$shorts" ] && ((shorts > 100)) || fail "the sleeper's short sleeps: '$shorts'" ||
		return 1
	within "$wl" "$slept" 15 || fail "long sleeps: $wl us off-CPU, slept $slept us" ||
		return 1
	# one interval per short sleep, none kept whole (a few over 2 ms
	# on a busy machine: their stack is kept, and it is sleeper_short_wait)
	((${nk:-0} >= shorts * 8 / 10 && ${nk:-0} <= shorts + shorts / 10)) ||
		fail "$nk intervals without a stack for $shorts short sleeps" || return 1
	((wsk <= (wnk + wsk) / 5)) || fail "short sleeps kept their stack: $wsk of $((wnk + wsk)) us" ||
		return 1
	# their time: what the sleeper measured around usleep, less its
	# on-CPU part (the syscall, the timer)
	((wnk + wsk >= short_us / 2 && wnk + wsk <= short_us * 11 / 10)) ||
		fail "short sleeps: $((wnk + wsk)) us off-CPU, slept $short_us us" || return 1
	# asleep at the end of the recording
	# (the final wait from 1 s to 5 s: a 2 s recording ends in it even
	# if attaching takes 2 s)
	start_ready "$d.out2" "$TMP/sleeper" 1 200 4000 || return 1
	# shellcheck disable=SC2086
	"$D9" record $how --offcpu-min 2ms -p "$SPID" -d 2 -o "$d.2.data" 2>"$d.err2" ||
		fail "record -p failed: $(cat "$d.err2")" || return 1
	"$D9" info -i "$d.2.data" 2>/dev/null |
		grep -q "stacks kept for intervals of 2.00ms or more" ||
		fail "info does not show --offcpu-min: $("$D9" info -i "$d.2.data" | grep off-CPU)" ||
		return 1
	stop "$SPID" # (its final wait has nothing more to show: no need to sleep it out)
	local wf
	wf=$("$D9" offcpu -i "$d.2.data" --format folded 2>/dev/null |
		awk '/;sleeper_final_wait;/ { s += $NF } END { print s + 0 }')
	say "    $src: asleep in sleeper_final_wait at the end: ${wf} us with its stack"
	((wf > 500000)) || fail "the thread asleep at the end: ${wf} us under sleeper_final_wait" ||
		return 1
}

t_offcpu_min_keeps_time_not_stacks_bpf() {
	need_perf && need_bpf || return
	offcpu_min bpf
}

t_offcpu_min_keeps_time_not_stacks_tracepoint() {
	need_perf || return
	offcpu_min tracepoint
}

# --children on the BPF path: a shell that runs 150 sleeps one after
# another; their blocked time is recorded (each sleep is a child of the
# target), and each is forgotten once gone: the program's map of followed
# processes, read with bpftool in the middle of the recording, holds the
# few alive, not every one that ran (about 100 before d9_free).
t_children_followed_and_forgotten_bpf() {
	need_perf && need_bpf || return
	command -v bpftool >/dev/null || { say "    skip: no bpftool"; return 2; }
	local d=$TMP/kids ids n=0 id k w
	# shellcheck disable=SC2016
	"$D9" record --sched bpf --children -o "$d.data" -- \
		sh -c 'for i in $(seq 150); do sleep 0.02; done' 2>"$d.err" &
	local rp=$!
	PIDS+=("$rp")
	sleep 2.5
	ids=$(bpftool map show name children 2>/dev/null | sed -n 's/^\([0-9]*\): hash .*/\1/p')
	for id in $ids; do
		k=$(bpftool map dump id "$id" 2>/dev/null | grep -c '"key"\|^key')
		n=$((n > k ? n : k))
	done
	wait "$rp" || fail "record failed: $(cat "$d.err")" || return 1
	[ -n "$ids" ] || fail "no children map found by bpftool" || return 1
	w=$("$D9" offcpu -i "$d.data" --by thread --format folded 2>/dev/null |
		awk '/^sleep\[[0-9]+\];.*nanosleep/ { s += $NF } END { print s + 0 }')
	say "    children followed: $n in the map after ~100 had run; sleep's processes off-CPU ${w} us"
	# (a dead one goes an RCU grace period after its exit: a few linger)
	((n <= 20)) || fail "the map holds $n processes: the dead are kept" || return 1
	# 150 x 20 ms asleep, all of it in the children
	((w > 150 * 20000 * 8 / 10)) || fail "the children's sleeps: ${w} us off-CPU" || return 1
}

# BPF refused (a seccomp filter on bpf(2), as a container's): auto says
# why and records with perf_event; --sched bpf is one clear line and fails
t_bpf_refused_falls_back_to_perf() {
	need_perf || return
	local d="$TMP/nobpf"
	cc -O1 tests/e2e/noperf.c -o "$TMP/noperf" || fail "cannot build noperf" || return 1
	"$TMP/noperf" --system-wide "$D9" record -o "$d.data" -- sleep 0.3 >/dev/null \
		2>"$d.err" || fail "record failed: $(cat "$d.err")" || return 1
	grep -q "scheduler events from perf_event, not BPF: BPF refused" "$d.err" ||
		fail "no word of BPF refused: $(cat "$d.err")" || return 1
	grep -q "off-CPU (tracepoint): [1-9]" "$d.err" ||
		fail "no perf_event off-CPU: $(grep off-CPU "$d.err")" || return 1
	grep -m1 "not BPF" "$d.err" | sed 's/^/    /'
	expect 1 "BPF refused" "$TMP/noperf" --system-wide "$D9" record --sched bpf \
		-o "$d.2.data" -- sleep 0.1 || return 1
	expect 2 "bad scheduler event path 'ebpf'" "$D9" record --sched ebpf -p 1 || return 1
}

t_offcpu_own_sleeper_context_switch() {
	need_perf || return
	offcpu_sleeper switch
}

t_offcpu_mounts_tracefs_when_missing() {
	need_perf || return
	if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
		say "    skip: needs root and unshare(1) for a private mount namespace"
		return 2
	fi
	# in a mount namespace of its own, so the machine's mounts stay as
	# they are
	unshare --mount --propagation private sh -c '
		for m in $(awk "\$3 == \"tracefs\" { print \$2 }" /proc/mounts | sort -r); do
			umount "$m" || exit 3
		done
		! grep -q " tracefs " /proc/mounts || exit 3
		"$1" record --sched perf -o "$2" -- sleep 0.5' sh "$D9" "$TMP/mnt.data" >/dev/null \
		2>"$TMP/mnt.err" || fail "record failed: $(cat "$TMP/mnt.err")" || return 1
	grep -q "mounted tracefs at /sys/kernel/tracing" "$TMP/mnt.err" ||
		fail "no word about mounting tracefs: $(cat "$TMP/mnt.err")" || return 1
	grep -q "off-CPU (tracepoint)" "$TMP/mnt.err" ||
		fail "not the tracepoint after mounting" || return 1
}

t_offcpu_options_and_refusal() {
	need_perf || return
	local r=0
	expect 2 "bad off-CPU source 'frob'" "$D9" record -p 1 --offcpu-source frob || r=1
	expect 2 "bad stack size '100'" "$D9" record -p 1 --offcpu-stack 100 || r=1
	"$D9" record --no-offcpu -o "$TMP/nooc.data" -- sleep 0.3 >/dev/null 2>"$TMP/nooc.err" ||
		{ fail "record --no-offcpu failed: $(cat "$TMP/nooc.err")"; r=1; }
	! grep -q "off-CPU (" "$TMP/nooc.err" || { fail "--no-offcpu still records switches"; r=1; }
	"$D9" record --offcpu-stack 0 -o "$TMP/fp.data" -- sleep 0.3 >/dev/null 2>"$TMP/fp.err" ||
		{ fail "record --offcpu-stack 0 failed"; r=1; }
	grep -q "frame pointers only" "$TMP/fp.err" || { fail "no 'frame pointers only'"; r=1; }
	local par; par=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$par" -ge 1 ]; then
		# unprivileged, the switch events are refused: CPU samples go on
		setpriv --reuid=65534 --regid=65534 --clear-groups "$D9" record \
			-o /tmp/d9-nobody-oc-$$.data -- sleep 0.5 >/dev/null 2>"$TMP/nobody.err" ||
			{ fail "unprivileged record failed: $(cat "$TMP/nobody.err")"; r=1; }
		rm -f /tmp/d9-nobody-oc-$$.data
		grep -q "off-CPU collection refused.*perf_event_paranoid" "$TMP/nobody.err" ||
			{ fail "no refusal warning: $(cat "$TMP/nobody.err")"; r=1; }
	fi
	return $r
}

# polls and flame --poll on the demo trace t_offcpu_demo_tracepoint made:
# the blocker's slow polls show their off-CPU time and where they blocked,
# and one of them drawn alone has both its CPU and its off-CPU stacks
t_offcpu_polls_and_poll_flame_on_the_demo() {
	need_perf || return
	local d="$TMP/oc-tracepoint.data" rows id off
	[ -s "$d" ] || { say "    skip: no off-CPU demo trace (offcpu_demo_tracepoint failed)"; return 2; }
	"$D9" polls -i "$d" --min 1ms --task 2 --limit 5 >"$TMP/pl.txt" 2>"$TMP/pl.err" ||
		fail "polls failed: $(cat "$TMP/pl.err")" || return 1
	sed -n '1,3p' "$TMP/pl.txt" | sed 's/^/    /'
	rows=$(grep -c '^[0-9]' "$TMP/pl.txt")
	[ "$rows" = 5 ] || fail "want 5 slow polls of task 2, got $rows" || return 1
	# every slow blocker poll blocked in it. Its top frame is off-CPU,
	# or a kernel frame of its sleep: on a shared VM a vCPU stolen by the
	# host while the thread is on its way into nanosleep shows as CPU
	# samples in do_nanosleep (seen in CI: 14 ms of them in a 27 ms poll).
	# Never a user frame of another task (demo_hot_spin).
	# (columns: POLL, TASK id and name, THREAD tid and name, START,
	# DURATION, SAMPLES, OFF-CPU (blocked), RUNQ, TOP-FRAME)
	! awk '/^[0-9]/ && !($3 == "blocker" && $9 ~ /^[0-9.]+ms$/)' "$TMP/pl.txt" | grep . ||
		fail "a blocker poll without milliseconds off-CPU (above)" || return 1
	# (or "(run queue)": off-CPU there, but mostly waiting for a CPU after
	# the sleep, behind the hog on a loaded machine). A poll that waited
	# for a CPU more than half its time is not "mostly blocked", so its
	# top frame is where its CPU samples are (polls(1)): there a frame
	# of the blocker's own, never the hog's
	! awk 'function ns(d,   v) { v = d + 0
			if (d ~ /us$/) return v * 1e3; if (d ~ /ms$/) return v * 1e6
			if (d ~ /ns$/) return v; return v * 1e9 }
		/^[0-9]/ && !/\(off-CPU\)$/ && !/\(run queue\)$/ && !/_\[k\]$/ {
			if (!(ns($10) * 2 > ns($7) && $0 !~ /demo_hot_spin|hash_loop/)) print }' \
		"$TMP/pl.txt" | grep . ||
		fail "blocker polls whose top frame is not off-CPU, kernel or, waiting, their own (above)" ||
		return 1
	id=$(awk '/^[0-9]/ { print $1; exit }' "$TMP/pl.txt")
	"$D9" flame -i "$d" --poll "$id" --format folded >"$TMP/pf.f" 2>"$TMP/pf.err" ||
		fail "flame --poll $id failed: $(cat "$TMP/pf.err")" || return 1
	off=$(awk '/^\[off-cpu\];.*demo_blocking_read/ { s += $NF } END { print s + 0 }' "$TMP/pf.f")
	say "    poll $id: $(awk '/^\[cpu\]/ { s += $NF } END { print s + 0 }' "$TMP/pf.f") us on" \
		"CPU, $off us off-CPU under demo_blocking_read"
	[ "$off" -ge 2000 ] || fail "poll $id: only $off us off-CPU under demo_blocking_read" ||
		return 1
	"$D9" polls -i "$d" --task 1 --limit 3 >"$TMP/pl1.txt" || return 1
	! grep '^[0-9]' "$TMP/pl1.txt" | grep -q '(off-CPU)$' ||
		fail "the CPU hog's polls have an off-CPU top frame" || return 1
}

# ---- where a recording starts ----------------------------------------------

# dur_ns DURATION: a DURATION of the polls table ("3.05ms+", "812us") in ns
dur_ns() {
	awk -v d="$1" 'BEGIN { sub(/\+$/, "", d); n = d + 0; u = d; sub(/^[0-9.]+/, "", u)
		m = u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : -1
		printf "%.0f\n", m < 0 ? -1 : n * m }'
}

# One worker alternates task A (3 ms in nanosleep) and task B (~2 ms on the
# CPU) from before the recorder attaches; five recordings of 1 s, so that
# attaches land in polls of both. The program logs the shim's attached
# word around each marker (tests/e2e/sleep_spin.c). In each trace the
# thread's first poll is the first whose END the shim recorded: it is
# marked + exactly when its BEGIN ran before the attach, and is then never
# longer than it truly was (a floor taken before the attach's store drew
# it from before its BEGIN); no poll of B shows nanosleep, on the CPU or
# off it, while A's do.
t_attach_lands_mid_poll() {
	need_perf || return
	cc -O1 -g -fno-omit-frame-pointer -Iinclude tests/e2e/sleep_spin.c -o "$TMP/sleep_spin" \
		"$B/libd9prof.a" -lpthread || fail "cannot build sleep_spin" || return 1
	start_ready "$TMP/ss.out" "$TMP/sleep_spin" || return 1
	local spid=$SPID k
	for k in 1 2 3 4 5; do
		"$D9" record -p "$spid" -d 1 -o "$TMP/ss$k.data" 2>"$TMP/ss$k.err" ||
			fail "record $k failed: $(cat "$TMP/ss$k.err")" || return 1
	done
	kill -TERM "$spid"
	wait "$spid" || fail "sleep_spin failed" || return 1
	# per recording (a run of polls that saw the shim attached), the
	# first poll whose END surely recorded: "K TASK PLUS TRUE_NS", PLUS 1
	# if its BEGIN surely did not record, 0 if it surely did; "K ?" where
	# a marker raced the attach
	awk '$1 != "poll" { next }
		{ on = $5 + $6 + $7 + $8 > 0 }
		on && !was { k++; done = 0 }
		{ was = on }
		!on || done { next }
		$8 && !$7 { print k, "?"; done = 1; next }
		!$7 { next }
		{ done = 1
		  if (!$5 && $6) print k, "?"
		  else printf "%d %s %d %.0f\n", k, $2 == 1 ? "A" : "B", $6 ? 0 : 1, $4 - $3 }' \
		"$TMP/ss.out" >"$TMP/ss.want"
	[ "$(wc -l <"$TMP/ss.want")" = 5 ] ||
		fail "want 5 attached runs in the program's log, got: $(cat "$TMP/ss.want")" ||
		return 1
	local r=0 conclusive=0 k2 task plus true row got shown offa=0
	while read -r k2 task plus true; do
		row=$("$D9" polls -i "$TMP/ss$k2.data" --sort start --limit 1 | awk 'NR == 2')
		say "    attach $k2: first poll: $(awk '{ print $3, $7 }' <<<"$row");" \
			"program: ${task}${plus:+ plus=$plus true=$((true / 1000))us}"
		[ "$task" = "?" ] && continue
		conclusive=$((conclusive + 1))
		got=$(awk '{ print $3 }' <<<"$row")
		[ "$got" = "$task" ] || { fail "attach $k2: first poll of task $got, want $task"; r=1; }
		shown=$(awk '{ print $7 }' <<<"$row")
		case $shown in *+) got=1 ;; *) got=0 ;; esac
		[ "$got" = "$plus" ] ||
			{ fail "attach $k2: first poll '$shown', its BEGIN recorded: $((1 - plus))"; r=1; }
		shown=$(dur_ns "$shown")
		[ "$shown" -le $((true + 50000)) ] ||
			{ fail "attach $k2: first poll lasted $shown ns, truly $true ns"; r=1; }
	done <"$TMP/ss.want"
	[ "$conclusive" -ge 3 ] ||
		{ fail "only $conclusive of 5 attaches could be checked (markers raced them)"; r=1; }
	for k in 1 2 3 4 5; do
		# (B may have no off-CPU time at all: a warning, not an error)
		"$D9" offcpu -i "$TMP/ss$k.data" --task B --format folded >"$TMP/ssB$k.off" \
			2>/dev/null &&
			"$D9" flame -i "$TMP/ss$k.data" --task B --format folded >"$TMP/ssB$k.cpu" &&
			"$D9" offcpu -i "$TMP/ss$k.data" --task A --format folded >"$TMP/ssA$k.off" ||
			{ fail "offcpu or flame failed on attach $k"; r=1; continue; }
		! grep -i nanosleep "$TMP/ssB$k.off" "$TMP/ssB$k.cpu" | head -3 | sed 's/^/    /' |
			grep . || { fail "attach $k: task B shows nanosleep (above)"; r=1; }
		offa=$((offa + $(weight_of "$TMP/ssA$k.off" nanosleep)))
	done
	say "    task A: ${offa} us off-CPU under nanosleep in 5 traces"
	[ "$offa" -gt 0 ] || { fail "task A shows no nanosleep off-CPU: the check sees nothing"; r=1; }
	return $r
}

# ---- the ctimer sampler ----------------------------------------------------

# leaf_shares FOLDED: "function<TAB>percent" per deepest user-space frame
# (kernel frames, "_[k]", skipped: ctimer has none), by weight, largest
# first; names may hold spaces ("hash_loop [inlined]")
leaf_shares() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		while (k > 1 && f[k] ~ /_\[k\]$/) k--
		s[f[k]] += n; t += n }
		END { for (x in s) printf "%s\t%.1f\n", x, 100 * s[x] / t }' "$1" |
		sort -t"$(printf '\t')" -k2 -nr
}

t_ctimer_and_perf_agree_on_the_demo() {
	start_demo "$TMP/ct.out" -w 2 || return 1
	# 500 samples per sampler for shares worth comparing: 1 s each (some
	# 990 at 999 Hz), longer (up to 16 s) when the machine lends the demo
	# too little CPU
	enough 500 1 16 record_task1 ctimer "$TMP/ct.data" "$TMP/ct1.f"
	case $? in 0) ;; 3) fail "too little ctimer weight for task 1 in 16 s: $GOT"; return 1 ;; *) return 1 ;; esac
	grep -q "sampler: ctimer" "$TMP/ct.data.err" || fail "does not say it uses ctimer" || return 1
	grep -q "no kernel frames" "$TMP/ct.data.err" || fail "does not say: no kernel frames" ||
		return 1
	local s w; s=$(share "$TMP/ct1.f" demo_hot_spin); w=$(weight "$TMP/ct1.f")
	say "    ctimer: task 1 weight $w in $ENOUGH_SECS s, demo_hot_spin holds $s%"
	[ "$s" -gt 90 ] || fail "demo_hot_spin holds only $s% of task 1 with ctimer" || return 1
	! grep -q '_\[k\]' "$TMP/ct1.f" || fail "kernel frames in ctimer stacks" || return 1
	"$D9" tasks -i "$TMP/ct.data" >"$TMP/ct.tasks" || return 1
	grep -q cpu_hog "$TMP/ct.tasks" || fail "tasks table lacks cpu_hog" || return 1
	need_perf || { kill "$DPID"; wait "$DPID" 2>/dev/null; return 2; }
	enough 500 1 16 record_task1 perf "$TMP/pf.data" "$TMP/pf1.f"
	case $? in 0) ;; 3) fail "too few perf samples for task 1 in 16 s: $GOT"; return 1 ;; *) return 1 ;; esac
	kill "$DPID"; wait "$DPID" 2>/dev/null
	s=$(share "$TMP/pf1.f" demo_hot_spin)
	[ "$s" -gt 90 ] || fail "demo_hot_spin holds only $s% of task 1 with perf" || return 1
	leaf_shares "$TMP/pf1.f" >"$TMP/pf1.shares"
	leaf_shares "$TMP/ct1.f" >"$TMP/ct1.shares"
	say "    task 1 leaf shares, perf | ctimer:"
	awk -F'\t' 'NR == FNR { c[$1] = $2; next } { p[$1] = $2 }
		END { for (x in p) if (p[x] >= 0.5 || c[x] >= 0.5) printf "      %-24s %5.1f%% | %5.1f%%\n", x, p[x], c[x]
		      for (x in c) if (!(x in p) && c[x] >= 0.5) printf "      %-24s %5.1f%% | %5.1f%%\n", x, 0, c[x] }' \
		"$TMP/ct1.shares" "$TMP/pf1.shares"
	# every function holding 2% or more with either sampler agrees within 5 points
	awk -F'\t' 'NR == FNR { c[$1] = $2; next } { p[$1] = $2 }
		END { for (x in p) if (p[x] >= 2 || c[x] >= 2) { d = p[x] - c[x]; if (d < 0) d = -d
			if (d > 5) { printf "%s: perf %.1f%%, ctimer %.1f%%\n", x, p[x], c[x]; bad = 1 } }
		      for (x in c) if (!(x in p) && c[x] > 5) { printf "%s: perf 0%%, ctimer %.1f%%\n", x, c[x]; bad = 1 }
		      exit bad }' "$TMP/ct1.shares" "$TMP/pf1.shares" >"$TMP/shares.diff" ||
		fail "shares differ by more than 5 points: $(cat "$TMP/shares.diff")" || return 1
}

t_ctimer_fallback_under_seccomp() {
	cc -O1 tests/e2e/noperf.c -o "$TMP/noperf" || fail "cannot build noperf" || return 1
	start_demo "$TMP/np.out" -w 2 || return 1
	"$TMP/noperf" "$D9" record -p "$DPID" -d 3 -o "$TMP/np.data" 2>"$TMP/np.err" ||
		fail "record under seccomp failed: $(cat "$TMP/np.err")" || return 1
	kill "$DPID"; wait "$DPID" 2>/dev/null
	say "    $(grep -m1 'sampler:' "$TMP/np.err" | cut -c1-150)..."
	grep -q "sampler: ctimer.*perf_event_open failed: Operation not permitted" "$TMP/np.err" ||
		fail "no fallback to ctimer with the reason: $(cat "$TMP/np.err")" || return 1
	grep -q "kernel.perf_event_paranoid" "$TMP/np.err" ||
		fail "does not name the sysctl" || return 1
	"$D9" flame -i "$TMP/np.data" --task 1 --format folded >"$TMP/np1.f" || return 1
	local s; s=$(share "$TMP/np1.f" demo_hot_spin)
	[ "$s" -gt 90 ] || fail "demo_hot_spin holds only $s% of task 1 under seccomp" || return 1
	# --sampler perf does not fall back
	"$TMP/noperf" "$D9" record --sampler perf -d 0.5 -o "$TMP/np2.data" -- sleep 1 \
		2>"$TMP/np2.err" && fail "--sampler perf recorded without perf_event" && return 1
	grep -q "perf_event_open refused" "$TMP/np2.err" ||
		fail "--sampler perf said: $(cat "$TMP/np2.err")" || return 1
}

t_ctimer_needs_the_shim() {
	local r=0
	sleep 30 & local spid=$!; PIDS+=("$spid")
	expect 1 "pid $spid has no d9prof shim.*link libd9prof" \
		"$D9" record --sampler ctimer -p "$spid" -d 1 -o "$TMP/ns.data" || r=1
	expect 1 "has no d9prof shim.*link libd9prof" \
		"$D9" record --sampler ctimer -d 3 -o "$TMP/ns.data" -- sleep 5 || r=1
	expect 2 "bad sampler 'x'" "$D9" record --sampler x -p 1 || r=1
	kill "$spid" 2>/dev/null
	return $r
}

t_killed_ctimer_recorder_leaves_target_as_before() {
	cc -O1 -g -fno-omit-frame-pointer -I. -Iinclude tests/e2e/marker_probe.c \
		-o "$TMP/probe" "$B/libd9prof.a" -lpthread || fail "cannot build probe" || return 1
	"$TMP/probe" >"$TMP/probe.out" &
	local ppid=$! i; PIDS+=("$ppid")
	# its first three measurements (t < 2), never attached
	for i in $(seq 200); do
		[ "$(grep -c '^t ' "$TMP/probe.out")" -ge 3 ] && break
		sleep 0.05
	done
	"$D9" record --sampler ctimer -F 4999 -p "$ppid" -o "$TMP/pk.data" 2>"$TMP/pk.err" &
	local rpid=$!
	# the recorder attaches after its off-CPU setup, whose tracepoint
	# opens can take the kernel seconds under load: wait for its word,
	# then for the probe to report armed timers
	for i in $(seq 150); do
		grep -q "the shim samples on signal" "$TMP/pk.err" && break
		sleep 0.1
	done
	for i in $(seq 30); do
		grep -q "attached 1 timers [1-9]" "$TMP/probe.out" && break
		sleep 0.1
	done
	grep -q "attached 1 timers [1-9]" "$TMP/probe.out" ||
		fail "timers never armed: $(tail -3 "$TMP/probe.out")" || return 1
	kill -KILL "$rpid"; wait "$rpid" 2>/dev/null
	# the lease (2 s), then a tick of each thread's timer: the first line
	# printed since the kill that says detached and no timers (up to 10 s;
	# none, and the lines after the wait say what was left)
	local killed seen
	killed=$(wc -l <"$TMP/probe.out")
	for i in $(seq 100); do
		tail -n +"$((killed + 1))" "$TMP/probe.out" |
			grep -q '^t .* attached 0 timers 0 ' && break
		sleep 0.1
	done
	# lines printed from now on were measured after the lease ran out:
	# four of them (a line each 0.5 s; up to 10 s)
	seen=$(wc -l <"$TMP/probe.out")
	for i in $(seq 100); do
		(($(wc -l <"$TMP/probe.out") >= seen + 4)) && break
		sleep 0.1
	done
	kill -0 "$ppid" || fail "target died with the recorder" || return 1
	kill "$ppid"; wait "$ppid" 2>/dev/null
	local before after
	before=$(awk '$1 == "t" && $2 < 2 && $4 == 0 { print $8 }' "$TMP/probe.out" |
		sort -n | head -1)
	after=$(awk -v n="$seen" 'NR > n && $1 == "t"' "$TMP/probe.out")
	say "    never attached: $before ns per marker pair; after the SIGKILL:" \
		"$(awk '{ printf "%s ", $8 }' <<<"$after")ns"
	[ -n "$after" ] || fail "no measurement after the kill" || return 1
	! awk '$4 != 0 || $6 != 0' <<<"$after" | grep -q . ||
		fail "still attached or timers left: $after; the whole probe log: $(cat "$TMP/probe.out"); recorder: $(tail -5 "$TMP/pk.err")" || return 1
	# detached cost again (attached, a pair costs hundreds of ns): the best
	# later run within 3x + 10 ns of never-attached, leaving room for the
	# noise of three busy threads on two cores
	awk -v b="$before" '{ if (min == "" || $8 < min) min = $8 }
		END { exit !(min <= 3 * b + 10) }' <<<"$after" ||
		fail "markers cost more than before: $before vs $after" || return 1
}

# The shim's USDT probes (libprof/usdt.h), no recorder attached. perf stat
# counts, in the demo (libd9prof.a: its probes are in the demo binary), as
# many poll starts and ends as the demo ran polls, and as many spawns and
# terminates as it made and ended tasks: the probes' semaphore opens the
# inline gates. Then a demo built on libd9prof.so (PIE: the gate words are
# copy-relocated into it) is attached by pid: perf record sees its polls,
# in pairs, at the rate the demo reports. Probes are per machine: one run
# at a time holds them (flock), and deletes them whatever happened.
usdt_events() {
	perf probe -q -d 'sdt_d9prof:*' >/dev/null 2>&1
	perf probe -x "$1" -a 'sdt_d9prof:*' >"$TMP/usdt.probe" 2>&1
}
usdt_counts() {
	local ev=sdt_d9prof:task_poll_start,sdt_d9prof:task_poll_end
	local stat="$TMP/usdt.stat" so="$TMP/demo-so" k want got
	usdt_events "$DEMO" || { say "    skip: perf probe refused:" \
		"$(grep -m1 -i 'error\|fail\|permission' "$TMP/usdt.probe")"; return 2; }
	perf stat -x, -o "$stat" -e "$ev,sdt_d9prof:task_spawn,sdt_d9prof:task_terminate" \
		-- "$DEMO" -d 1 >"$TMP/usdt.out" 2>"$TMP/usdt.err" ||
		fail "perf stat on the demo failed: $(tail -3 "$TMP/usdt.err") $(tail -3 "$stat")" ||
		return 1
	# the demo's own counts: "demo: elapsed ... N polls", "KIND tasks N ended N"
	local polls tasks ended
	polls=$(awk '/elapsed/ { for (i = 2; i <= NF; i++) if ($i ~ /^polls/) print $(i - 1) }' \
		"$TMP/usdt.err")
	tasks=$(awk '$3 == "tasks" { s += $4 } END { print s + 0 }' "$TMP/usdt.err")
	ended=$(awk '$3 == "tasks" { s += $6 } END { print s + 0 }' "$TMP/usdt.err")
	say "    demo: $polls polls, $tasks tasks, $ended ended; perf stat:" \
		"$(awk -F, '/sdt_d9prof/ { printf "%s %s ", $3, $1 }' "$stat")"
	[ "${polls:-0}" -gt 100 ] || fail "the demo ran ${polls:-no} polls" || return 1
	for k in task_poll_start:$polls task_poll_end:$polls task_spawn:$tasks \
		task_terminate:$ended; do
		want=${k#*:}
		got=$(awk -F, -v e="sdt_d9prof:${k%%:*}" '$3 == e { print $1 }' "$stat")
		[ "$got" = "$want" ] || fail "${k%%:*}: perf counted ${got:-nothing}," \
			"the demo $want" || return 1
	done
	# the shared shim, attached by pid mid-run
	cc -O2 -g -fno-omit-frame-pointer -D_GNU_SOURCE -I. -Iinclude examples/demo.c \
		-o "$so" "$B/libd9prof.so" -Wl,-rpath,"$ROOT/$B" -lpthread -lm ||
		fail "cannot build the demo on libd9prof.so" || return 1
	usdt_events "$B/libd9prof.so" ||
		fail "perf probe on libd9prof.so failed: $(tail -3 "$TMP/usdt.probe")" || return 1
	start_ready "$TMP/usdt-so.out" "$so" -d 20 || return 1
	local spid=$SPID try lost
	# a record perf lost (its ring full, on a busy machine) would break a
	# pair that the probes made: such a recording judges nothing, another
	# is made (three at most)
	for try in 1 2 3; do
		perf record -q -m 1024 -e "$ev" -p "$spid" -o "$TMP/usdt.perf" -- sleep 1 \
			>/dev/null 2>"$TMP/usdt.rec.err" ||
			fail "perf record -p failed: $(tail -3 "$TMP/usdt.rec.err")" || return 1
		lost=$(perf report -i "$TMP/usdt.perf" --stats 2>/dev/null |
			awk '/^ *LOST(_SAMPLES)? events:/ { if ($3 > n) n = $3 } END { print n + 0 }')
		[ "$lost" = 0 ] && break
		say "    perf lost $lost records in recording $try (its ring full)"
	done
	stop "$spid" # the demo says its poll rate as it stops
	[ "$lost" = 0 ] || fail "perf lost records in 3 recordings: too busy to judge the pairs" ||
		return 1
	local begins ends rate
	begins=$(perf script -i "$TMP/usdt.perf" -F event 2>/dev/null | grep -c 'task_poll_start:')
	ends=$(perf script -i "$TMP/usdt.perf" -F event 2>/dev/null | grep -c 'task_poll_end:')
	rate=$(awk '/elapsed/ { for (i = 2; i <= NF; i++) if ($i == "polls") print $(i + 1) }' \
		"$TMP/usdt-so.out.err" | tr -d '(/s)')
	say "    libd9prof.so, perf record -p for 1 s: $begins poll starts, $ends ends;" \
		"the demo ran ${rate:-?} polls/s"
	[ "$begins" -gt 50 ] || fail "perf record saw $begins poll starts" || return 1
	# the probes come in pairs: per thread, start and end alternate but at
	# the edges, where a run of one of them is perf enabling or disabling
	# its two events a few ms apart (on a busy machine: a dozen polls, as
	# CI saw: 2846 starts, 2859 ends)
	local bad threads
	read -r bad threads <<<"$(perf script -i "$TMP/usdt.perf" -F tid,event 2>/dev/null | awk '
		{ k = ($2 ~ /task_poll_start:/) ? "S" : ($2 ~ /task_poll_end:/) ? "E" : ""
		  if (k != "") seq[$1] = seq[$1] k }
		END { for (t in seq) { m++; if (seq[t] !~ /^(E*|S*)(SE)*(E*|S*)$/) n++ }
		      print n + 0, m + 0 }')"
	say "    starts and ends in pairs on $threads threads ($bad with one out of pairs)"
	[ "$threads" -ge 2 ] && [ "$bad" = 0 ] ||
		fail "$begins poll starts, $ends ends: $bad thread(s) with a start or an end out of pairs" ||
		return 1
	awk -v n="$begins" -v r="${rate:-0}" 'BEGIN { exit !(n >= 0.5 * r && n <= 1.5 * r) }' ||
		fail "$begins poll starts in 1 s, the demo ran $rate/s" || return 1
	if command -v bpftrace >/dev/null; then
		k=$(bpftrace -l "usdt:$B/libd9prof.so:*" 2>/dev/null | grep -c ':d9prof:')
		say "    bpftrace -l lists $k d9prof probes in libd9prof.so"
		[ "$k" = 9 ] || fail "bpftrace -l lists $k probes, not 9" || return 1
	fi
	return 0
}
t_usdt_probes_count_the_demos_polls() {
	command -v perf >/dev/null || { say "    skip: no perf on PATH"; return 2; }
	local lock r
	exec {lock}>/tmp/d9prof-e2e-usdt.lock
	flock -w 120 "$lock" || { say "    skip: another run holds the probes' lock"; exec {lock}>&-; return 2; }
	usdt_counts
	r=$?
	perf probe -q -d 'sdt_d9prof:*' >/dev/null 2>&1
	exec {lock}>&-
	return $r
}

# ---- runner ---------------------------------------------------------------
# in this order: a test may read the trace of one before it
e2e_run_tests t_record_demo_pid_task_flamegraphs t_kernel_frames_are_symbolized \
	t_record_command_mode t_record_pid_while_command_runs t_record_duration_units \
	t_record_command_exit_status t_record_unrunnable_command_touches_nothing \
	t_record_progress_line_on_a_terminal t_record_messages \
	t_target_exit_leaves_complete_trace t_vdso_frames_of_a_command_that_exited_are_named \
	t_installed_shim_own_process \
	t_target_without_shim_warns t_killed_recorder_leaves_readable_trace_and_live_target \
	t_ctimer_and_perf_agree_on_the_demo t_ctimer_fallback_under_seccomp \
	t_ctimer_needs_the_shim t_killed_ctimer_recorder_leaves_target_as_before \
	t_bad_input_is_one_clear_line t_help_and_man \
	t_offcpu_demo_tracepoint t_offcpu_demo_bpf t_offcpu_demo_context_switch_fallback \
	t_offcpu_own_sleeper_tracepoint t_offcpu_own_sleeper_bpf \
	t_offcpu_own_sleeper_context_switch t_children_followed_and_forgotten_bpf \
	t_offcpu_min_keeps_time_not_stacks_bpf t_offcpu_min_keeps_time_not_stacks_tracepoint \
	t_bpf_refused_falls_back_to_perf \
	t_offcpu_mounts_tracefs_when_missing t_offcpu_options_and_refusal \
	t_offcpu_polls_and_poll_flame_on_the_demo t_attach_lands_mid_poll \
	t_usdt_probes_count_the_demos_polls
