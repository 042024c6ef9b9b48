#!/usr/bin/env bash
# End-to-end tests: the real d9prof binary against real processes on real
# perf_events. Each t_* function is one test; it prints its own reason on
# failure. A test that needs perf_event skips only where perf_event_open is
# refused on this machine.
set -u
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
D9="$ROOT/$B/d9prof"
DEMO="$ROOT/$B/examples/demo"
TMP=$(mktemp -d /tmp/d9e2e.XXXXXX)
PIDS=()
pass=0 fail=0 skip=0

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

say() { printf '%s\n' "$*"; }
fail() { say "    $*"; return 1; }

# perf_event usable? (as root it is, whatever perf_event_paranoid says)
PERF_OK=1
PERF_WHY=""
if ! perf_out=$("$D9" record -d 0.3 -o "$TMP/probe.data" -- sleep 1 2>&1); then
	if grep -q "perf_event_open refused" <<<"$perf_out"; then
		PERF_OK=0
		PERF_WHY=$(grep -m1 refused <<<"$perf_out")
	fi
fi

need_perf() {
	if [ "$PERF_OK" = 0 ]; then
		say "    skip: $PERF_WHY"
		return 2
	fi
}

# start_demo FILE ARGS...: start the demo, wait for "ready", set DPID
start_demo() {
	local out=$1; shift
	"$DEMO" "$@" >"$out" 2>"$out.err" &
	DPID=$!
	PIDS+=("$DPID")
	local i
	for i in $(seq 100); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "demo did not get ready: $(cat "$out.err")"
}

# share FOLDED PATTERN: percentage (integer) of the weight whose stack
# contains PATTERN as a frame
share() {
	awk -v pat="$2" '{ n = $NF; tot += n; if (index(";" $0, ";" pat)) hit += n }
		END { if (tot == 0) print 0; else printf "%d\n", 100 * hit / tot }' "$1"
}
weight() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
weight_of() { awk -v pat="$2" 'index(";" $0, ";" pat) { s += $NF } END { print s + 0 }' "$1"; }

# ---- tests ----------------------------------------------------------------

t_record_demo_pid_task_flamegraphs() {
	need_perf || return
	start_demo "$TMP/demo.out" -w 2 || return 1
	"$D9" record -p "$DPID" -d 4 -o "$TMP/demo.data" 2>"$TMP/rec.err" ||
		fail "record failed: $(cat "$TMP/rec.err")" || return 1
	grep -q "samples" "$TMP/rec.err" || fail "no summary on stderr" || return 1
	"$D9" flame -i "$TMP/demo.data" --task 1 --format folded >"$TMP/t1.folded" ||
		fail "flame --task 1 failed" || return 1
	local s w; s=$(share "$TMP/t1.folded" demo_hot_spin); w=$(weight "$TMP/t1.folded")
	say "    task 1 (cpu_hog): $w samples, demo_hot_spin holds $s%"
	[ "$w" -ge 500 ] || fail "too few samples for task 1: $w" || return 1
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
	# the whole picture: one root per task
	"$D9" flame -i "$TMP/demo.data" --format folded >"$TMP/all.folded" || return 1
	grep -q '^task 1 cpu_hog;' "$TMP/all.folded" || fail "no 'task 1 cpu_hog' root" || return 1
	# SVG by default, self-contained
	"$D9" flame -i "$TMP/demo.data" --task 1 -o "$TMP/t1.svg" || return 1
	grep -q '<svg' "$TMP/t1.svg" && grep -q 'demo_hot_spin' "$TMP/t1.svg" ||
		fail "svg lacks the hot function" || return 1
	! grep -q 'http[s]*://[^"]*\.js' "$TMP/t1.svg" || fail "svg loads external script" || return 1
	# tasks table
	"$D9" tasks -i "$TMP/demo.data" >"$TMP/tasks.txt" || return 1
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
	expect 2 "bad task id 'x'" "$D9" flame --task x || r=1
	expect 2 "unknown command 'frob'" "$D9" frob || r=1
	expect 1 "no such file" "$D9" tasks -i "$TMP/missing.data" || r=1
	head -c 4096 /dev/urandom >"$TMP/garbage.data"
	expect 1 "corrupt or not a d9prof trace" "$D9" flame -i "$TMP/garbage.data" || r=1
	if [ -s "$TMP/demo.data" ]; then
		expect 1 "no task 987654" "$D9" flame -i "$TMP/demo.data" --task 987654 || r=1
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
	for c in record flame tasks; do
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

# ---- runner ---------------------------------------------------------------
tests=$(declare -F | awk '{print $3}' | grep '^t_')
order="t_record_demo_pid_task_flamegraphs t_kernel_frames_are_symbolized
	t_record_command_mode t_target_exit_leaves_complete_trace t_installed_shim_own_process
	t_target_without_shim_warns t_killed_recorder_leaves_readable_trace_and_live_target
	t_bad_input_is_one_clear_line t_help_and_man"
for t in $order; do
	grep -qx "$t" <<<"$tests" || { say "missing test $t"; exit 1; }
done
for t in $order; do
	say "== e2e: ${t#t_}"
	$t; rc=$?
	case $rc in
	0) pass=$((pass + 1)); say "ok - ${t#t_}" ;;
	2) skip=$((skip + 1)); say "skip - ${t#t_}" ;;
	*) fail=$((fail + 1)); say "not ok - ${t#t_}" ;;
	esac
done
say "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
