#!/usr/bin/env bash
# Right answers on an ordinary busy machine (issue 23), each checked against
# a ground truth the test measures itself, not against what d9prof said
# before:
#   runq_split      a worker pinned to CPU 0 beside a CPU hog (thief,
#                   "cputhief") and a kworker-like short waker (waker,
#                   "shortwaker": 30 us of CPU every 500 us, which preempts
#                   the worker at nearly every wakeup): the worker's
#                   run-queue time split among them must match their own CPU
#                   time over the recording (/proc/PID/schedstat) within 10
#                   percentage points, and the waker must not be the top
#                   holder; report's CPU time of task busy, the worker's
#                   only task, is its thread's schedstat CPU time within 10%
#   blocking_read   a poll blocked in libc's read() inside slow_read():
#                   polls, report and delays name slow_read, not libc
#   report_flame    report's hottest stack share for the demo's cpu_hog
#                   task is the one `flame --task 1 --format folded` shows
#   middle_frame    a function without a frame pointer in the middle of
#                   a stack (midframe, --call-graph fp): its caller stays
#                   in >= 95% of the samples
#   tokio_now       the Tokio demo's clock_gettime samples keep
#                   Timespec::now, their caller through libc (no frame
#                   pointers there), in >= 90% of them
#   span_request    requests as spans across two tasks (request: a handler
#                   that burns CPU, a db task that blocks in db_read()):
#                   each span's duration is the program's own measure of
#                   that request within 2% (or 300 us), the slowest ones
#                   name both tasks, burn_slow and db_read, and flame
#                   --span --min keeps the slow requests' CPU only
#   span_segments   each segment of a --rotate 1s recording of request,
#                   read alone, has no span longer than the longest request
#                   the program measured (the spans open at its start come
#                   from its SPAN_STATE, none it saw closed stays open); a
#                   segment in which no span was alive has none to judge
#   span_window     spans --from 1 --to 1.5 of a recording of request: the
#                   spans alive in that window, no span closed before it,
#                   each closed in it as long as the whole trace says
#   span_trigger    a flight recorder with --trigger 'span:request>15ms'
#                   dumps for a slow request: the span its reason names
#                   lasted over 15 ms by the program's own measure, and
#                   the dump holds it
#
#   B=build      build directory (d9prof, libd9prof.a, e2e/latency/ and
#                e2e/answers/ programs)
#   ONLY=REGEX   only the tests whose names match
NAME=answers
. "$(dirname "$0")/lib.sh"

LAT="$ROOT/$B/e2e/latency"
ANS="$ROOT/$B/e2e/answers"
TOKIO="$ROOT/$B/cargo/release/d9demo-tokio"
for p in "$LAT/pinned" "$LAT/thief" "$ANS/waker" "$ANS/slowread" "$ANS/midframe" "$ANS/request" \
	"$ROOT/$B/examples/demo"; do
	[ -x "$p" ] || { say "answers.sh: no $p (make $p)"; exit 1; }
done


# ---- run-queue time charged to what ran ---------------------------------

# runq_rec SECS: record the pinned worker SECS s; GOT: its run-queue ms.
# Sets HOG_NS, WAKER_NS, BUSY_NS: the hog's, the waker's and the worker
# thread's (all of it task busy's polls) CPU time over the recording
# (ground truth): over the trace's own span, not the recorder's life,
# whose start and finish took 10% more of the worker's CPU time here
# (2026-11 VM): their schedstat read every 10 ms on CLOCK_MONOTONIC,
# which the trace's span is in, and taken between the reads around
# each end of the span
runq_rec() {
	local sp
	python3 - "/proc/$TPID/schedstat" "/proc/$WPID/schedstat" \
		"/proc/$PPID_/task/$BTID/schedstat" >"$TMP/rq.stat" <<-'EOF' &
	import sys, time
	while True:
	    try:
	        v = [open(f).read().split()[0] for f in sys.argv[1:]]
	    except OSError:
	        break
	    print(time.monotonic_ns(), *v, flush=True)
	    time.sleep(0.01)
	EOF
	sp=$!
	PIDS+=("$sp")
	sleep 0.05
	"$D9" record -p "$PPID_" --sched "$RQ_SCHED" -d "$1" -o "$TMP/rq.data" 2>"$TMP/rq.err" ||
		fail "record failed: $(tail -3 "$TMP/rq.err")" || return 1
	sleep 0.05
	kill "$sp"
	wait "$sp" 2>/dev/null
	"$D9" info --json -i "$TMP/rq.data" >"$TMP/rq.info" ||
		fail "info --json failed" || return 1
	read -r HOG_NS WAKER_NS BUSY_NS < <(python3 - "$TMP/rq.stat" "$TMP/rq.info" <<-'EOF'
	import json, sys
	span = json.load(open(sys.argv[2]))["span"]
	rows = [[int(x) for x in l.split()] for l in open(sys.argv[1]) if len(l.split()) == 4]
	def at(t):
	    # the CPU times at t, between the reads around it
	    for a, b in zip(rows, rows[1:]):
	        if a[0] <= t <= b[0]:
	            f = (t - a[0]) / (b[0] - a[0])
	            return [x + f * (y - x) for x, y in zip(a[1:], b[1:])]
	    sys.exit("the schedstat reads do not cover the span")
	s, e = at(span["start_ns"]), at(span["end_ns"])
	print(*(int(y - x) for x, y in zip(s, e)))
	EOF
	) && [ -n "$BUSY_NS" ] || fail "no schedstat over the trace's span" || return 1
	"$D9" report -i "$TMP/rq.data" --format json >"$TMP/rq.json" ||
		fail "report --format json failed" || return 1
	GOT=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(w["runq_ns"] for w in r["workers"]) // 1000000)' "$TMP/rq.json") || return 1
}

t_runq_split() {
	need_perf || return
	start_ready -t 10 "$TMP/pinned.out" taskset -c 0 "$LAT/pinned" 120 || return 1
	PPID_=$(awk '/^pid/ { print $2 }' "$TMP/pinned.out")
	BTID=$(grep -lx worker-0 /proc/"$PPID_"/task/*/comm | awk -F/ '{ print $5; exit }')
	[ -n "$BTID" ] || fail "no thread worker-0 in pinned" || return 1
	start_ready -t 10 "$TMP/thief.out" taskset -c 0 "$LAT/thief" 120 || return 1
	TPID=$(awk '/^pid/ { print $2 }' "$TMP/thief.out")
	start_ready -t 10 "$TMP/waker.out" taskset -c 0 "$ANS/waker" 120 || return 1
	WPID=$(awk '/^pid/ { print $2 }' "$TMP/waker.out")
	# each scheduler path judged against the same ground truth: BPF (the
	# default where the kernel allows it) and perf_event
	for RQ_SCHED in bpf perf; do
		if [ "$RQ_SCHED" = bpf ] && ! "$D9" record --sched bpf -d 0.01 -o "$TMP/rqb.data" \
			-- true 2>"$TMP/rqb.err"; then
			say "    bpf: skip: $(tail -1 "$TMP/rqb.err")"
			continue
		fi
		say "    --sched $RQ_SCHED:"
		runq_judge || return
	done
}

runq_judge() {
	# 1 s of run-queue time to judge: 3 s usually, up to 12 s
	enough 1000 3 12 runq_rec
	case $? in 0) ;; 3) fail "too little run-queue time" ;& *) return 1 ;; esac
	if grep -q "approximated.*refused" "$TMP/rq.err"; then
		say "    skip: $(grep -m1 approximated "$TMP/rq.err")"
		return 2
	fi
	grep -q "off-CPU ($([ "$RQ_SCHED" = bpf ] && echo bpf || echo tracepoint))" "$TMP/rq.err" ||
		fail "not recorded by --sched $RQ_SCHED: $(grep 'off-CPU' "$TMP/rq.err")" || return 1
	grep -q "charged to" "$TMP/rq.err" ||
		fail "record does not say how run-queue time was charged: $(cat "$TMP/rq.err")" ||
		return 1
	python3 - "$TMP/rq.json" "$TPID" "$WPID" "$HOG_NS" "$WAKER_NS" "$BUSY_NS" <<-'EOF'
	import json, sys
	r = json.load(open(sys.argv[1]))
	hog, waker, hog_ns, waker_ns, busy_ns = (int(x) for x in sys.argv[2:7])
	# CPU% is of one CPU: task busy's CPU time against its thread's own
	busy = [h for h in r["hot"] if h["task"] == 1]
	if not busy or not busy_ns:
	    sys.exit("    no CPU time for task busy, or its thread's unknown")
	print("    task busy: CPU %.0f ms; its thread's schedstat: %.0f ms" %
	      (busy[0]["cpu_ns"] / 1e6, busy_ns / 1e6))
	if abs(busy[0]["cpu_ns"] / busy_ns - 1) > 0.1:
	    sys.exit("    task busy's CPU time is over 10% off its thread's")
	w = max(r["workers"], key=lambda w: w["runq_ns"])
	held = {h["pid"]: h["ns"] for h in w["holders"]}
	d_hog, d_waker = held.get(hog, 0), held.get(waker, 0)
	if d_hog + d_waker == 0 or hog_ns + waker_ns == 0:
	    sys.exit("    neither hog nor waker held the CPU: %s" % w["holders"])
	share = 100.0 * d_hog / (d_hog + d_waker)
	truth = 100.0 * hog_ns / (hog_ns + waker_ns)
	print("    worker waited %.0f ms: hog %.0f ms, waker %.0f ms (hog %.1f%%); "
	      "schedstat: hog %.0f ms, waker %.0f ms (hog %.1f%%)" %
	      (w["runq_ns"] / 1e6, d_hog / 1e6, d_waker / 1e6, share,
	       hog_ns / 1e6, waker_ns / 1e6, truth))
	if abs(share - truth) > 10:
	    sys.exit("    the split is %.1f points off its ground truth" % abs(share - truth))
	if w["holders"][0]["pid"] == waker:
	    sys.exit("    the short waker is the top holder")
	top = r["thieves"][0]["pid"]
	if top != hog:
	    sys.exit("    the top holder over all threads is %d, not the hog %d" % (top, hog))
	EOF
}

# ---- the application's frame for a blocking call ------------------------

sr_rec() {
	"$D9" record -p "$SPID" -d "$1" -o "$TMP/sr.data" 2>"$TMP/sr.err" ||
		fail "record failed: $(tail -3 "$TMP/sr.err")" || return 1
	"$D9" polls -i "$TMP/sr.data" --task reader --limit 0 >"$TMP/sr.polls" || return 1
	GOT=$(grep -c "reader" "$TMP/sr.polls")
}

t_blocking_read() {
	need_perf || return
	start_ready -t 10 "$TMP/sr.out" "$ANS/slowread" 120 || return 1
	# 100 polls of the reader: 4 ms each, so well under a second; but 2 s
	# at least, so that the victim's longest waits include some behind
	# a blocking read, not only behind the recorder on a busy machine (1
	# s failed so, once)
	enough 100 2 8 sr_rec || return 1
	local tot named
	tot=$(awk '/^[0-9]/ && $3 == "reader"' "$TMP/sr.polls" | grep -c "off-CPU")
	named=$(awk '/^[0-9]/ && $3 == "reader"' "$TMP/sr.polls" | grep -c "<- slow_read (off-CPU)")
	say "    $named of $tot blocked reader polls: '<- slow_read'"
	[ "$tot" -ge 50 ] || fail "only $tot blocked polls of the reader" || return 1
	[ $((100 * named)) -ge $((95 * tot)) ] ||
		fail "polls name: $(awk '/^[0-9]/ && $3 == "reader"' "$TMP/sr.polls" | head -3)" ||
		return 1
	"$D9" report -i "$TMP/sr.data" >"$TMP/sr.report" || return 1
	grep -q "blocking call in polls.*<- slow_read\|<- slow_read.*blocking call" "$TMP/sr.report" ||
		grep -A3 "blocking call" "$TMP/sr.report" | grep -q "slow_read" ||
		fail "report's flag: $(grep -A3 'blocking call' "$TMP/sr.report")" || return 1
	"$D9" delays -i "$TMP/sr.data" --task victim >"$TMP/sr.delays" || return 1
	grep -q "in read <- slow_read inside task 1 reader's poll\|<- slow_read inside" \
		"$TMP/sr.delays" ||
		fail "delays: $(head -3 "$TMP/sr.delays")" || return 1
	# --frame leaf: the raw call into the kernel, no application frame
	"$D9" polls -i "$TMP/sr.data" --task reader --frame leaf >"$TMP/sr.leaf" || return 1
	! grep -q "slow_read" "$TMP/sr.leaf" ||
		fail "--frame leaf still names slow_read" || return 1
}

# ---- report and flame agree on the hottest stack ------------------------

demo_rec() {
	"$D9" record -p "$SPID" -d "$1" -o "$TMP/demo.data" 2>"$TMP/demo.err" ||
		fail "record failed: $(tail -3 "$TMP/demo.err")" || return 1
	"$D9" flame -i "$TMP/demo.data" --task 1 --format folded >"$TMP/t1.folded" || return 1
	GOT=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/t1.folded")
}

t_report_flame() {
	need_perf || return
	start_ready -t 10 "$TMP/demo.out" "$ROOT/$B/examples/demo" -w 2 || return 1
	# 500 samples of task 1: 1 s (some 990 at 999 Hz), longer on a busy
	# machine
	enough 500 1 8 demo_rec || return 1
	local flame report
	flame=$(awk '{ if ($NF > m) m = $NF; s += $NF } END { printf "%.0f", 100 * m / s }' \
		"$TMP/t1.folded")
	"$D9" report -i "$TMP/demo.data" >"$TMP/demo.report" || return 1
	report=$(grep -m1 "^  task 1 " "$TMP/demo.report" |
		sed -n 's/.*hottest stack \([0-9]*\)%.*/\1/p')
	say "    task 1: report's hottest stack ${report:-?}%, flame's largest folded line $flame%"
	[ -n "$report" ] || fail "no hot spot line: $(grep -A3 'hot spots' "$TMP/demo.report")" ||
		return 1
	[ "$report" = "$flame" ] || fail "they differ" || return 1
	# each flag's next command pastes: it names the input and the window
	# (a time before now as the UTC time it was), and runs from elsewhere
	local n=0 cmd
	"$D9" report -i "$TMP/demo.data" --from -1h --format json >"$TMP/next.json" || return 1
	while read -r cmd; do
		[[ $cmd == 'd9prof record '* ]] && continue
		n=$((n + 1))
		say "    next: $cmd"
		[[ $cmd == *" -i $TMP/demo.data "* ]] || fail "no -i in it" || return 1
		[[ $cmd == 'd9prof info '* || $cmd =~ \ --from\ 20[0-9-]+T[0-9:]+Z ]] ||
			fail "no absolute --from in it" || return 1
		cmd=${cmd%%  #*}
		# shellcheck disable=SC2086
		(cd / && "$D9" ${cmd#d9prof } >/dev/null 2>"$TMP/next.err") ||
			fail "it does not run: $(cat "$TMP/next.err")" || return 1
	done < <(python3 -c "import json,sys
for f in json.load(open(sys.argv[1]))['flags']: print(f['next'].replace(' -o off.svg', ' -o $TMP/off.svg'))" \
		"$TMP/next.json")
	[ "$n" -ge 1 ] || fail "no red flag to follow: $(cat "$TMP/next.json")" || return 1
}

# ---- callers of frameless middle functions ------------------------------

# stack_rec FILE PATTERN-ALL PATTERN-KEPT SECS [record options]: GOT the
# samples matching PATTERN-ALL, KEPT those also matching PATTERN-KEPT
stack_rec() {
	local secs=$1
	shift
	"$D9" record -p "$SPID" -d "$secs" -o "$TMP/st.data" "$@" 2>"$TMP/st.err" ||
		fail "record failed: $(tail -3 "$TMP/st.err")" || return 1
	"$D9" flame -i "$TMP/st.data" --format folded >"$TMP/st.folded" 2>/dev/null ||
		return 1
	GOT=$(awk -v p="$STACK_ALL" '$0 ~ p { s += $NF } END { print s + 0 }' "$TMP/st.folded")
	KEPT=$(awk -v p="$STACK_ALL" -v k="$STACK_KEEP" '$0 ~ p && $0 ~ k { s += $NF } END { print s + 0 }' \
		"$TMP/st.folded")
}

t_middle_frame() {
	need_perf || return
	start_ready -t 10 "$TMP/mf.out" "$ANS/midframe" 120 || return 1
	STACK_ALL="midframe_work" STACK_KEEP="midframe_caller;midframe_middle;midframe_leaf;midframe_work"
	# 500 samples in midframe_work: 1 s (some 1000), longer on a busy
	# machine
	enough 500 1 8 stack_rec --call-graph fp || return 1
	say "    $KEPT of $GOT samples in midframe_work keep midframe_caller"
	[ $((100 * KEPT)) -ge $((95 * GOT)) ] || fail "the caller is lost" || return 1
}

t_tokio_now() {
	need_perf || return
	[ -x "$TOKIO" ] || { say "    skip: no $TOKIO (no cargo here)"; return 2; }
	start_ready -t 10 "$TMP/tok.out" "$TOKIO" -w 2 || return 1
	STACK_ALL=";clock_gettime" STACK_KEEP="Timespec>::now"
	enough 100 2 8 stack_rec || return 1
	say "    $KEPT of $GOT clock_gettime samples keep Timespec::now"
	[ $((100 * KEPT)) -ge $((90 * GOT)) ] || fail "the caller is lost" || return 1
}

# ---- requests as spans ----------------------------------------------------

# req_rec SECS: record request SECS s; GOT: the slow requests closed in it
req_rec() {
	"$D9" record -p "$SPID" -d "$1" -o "$TMP/req.data" 2>"$TMP/req.err" ||
		fail "record failed: $(tail -3 "$TMP/req.err")" || return 1
	"$D9" spans -i "$TMP/req.data" --instances --limit 0 --format json >"$TMP/req.json" ||
		fail "spans --instances failed" || return 1
	GOT=$(python3 -c '
import json, sys
print(sum(1 for s in json.load(open(sys.argv[1]))["instances"]
          if s["fields"] == "route=/slow" and not s["open_start"] and not s["open_end"]))' \
		"$TMP/req.json") || return 1
}

# Attach mode states the window it holds: every request the program
# created and closed inside it (its own CLOCK_MONOTONIC log) is in the
# trace, whole (a window stated from before the sources were live held
# ~60 ms with nothing in it, and the requests of that time were missing).
# And the recorder's start and finish do not hold the target back: the
# requests created in its life come at most 40 ms later than the latest
# of those created in as long before it (at nice -20 from the start,
# its BTF and kallsyms took the handler's CPU: 75-128 ms late)
t_attach_window_holds_every_request() {
	local t0 t1
	need_perf || return
	start_ready -t 10 "$TMP/win.out" "$ANS/request" 120 || return 1
	mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
	sleep 2
	t0=$(mono)
	"$D9" record -p "$SPID" -d 1 -o "$TMP/win.data" 2>"$TMP/win.err" ||
		fail "record failed: $(tail -3 "$TMP/win.err")" || return 1
	t1=$(mono)
	sleep 0.1 # (the requests closed by the end, printed)
	python3 - "$TMP/win.out" "$t0" "$t1" <<'PY' || fail "the recorder held the target back" || return 1
import sys
t0, t1 = int(sys.argv[2]), int(sys.argv[3])
def late(a, b):
    # past its own work (a /slow request 20 ms, a /fast one 10 ms)
    return max([int(f[3]) / 1e6 - (20 if f[2] == "/slow" else 10)
                for f in (l.split() for l in open(sys.argv[1]))
                if f and f[0] == "req" and a <= int(f[4]) < b] or [0])
before, during = late(t0 - (t1 - t0), t0), late(t0, t1)
print(f"    requests at most {during:.1f} ms late in the recorder's life "
      f"({(t1 - t0) / 1e9:.2f} s), {before:.1f} ms in as long before it")
sys.exit(1 if during > before + 40 else 0)
PY
	"$D9" info --json -i "$TMP/win.data" >"$TMP/win.info" &&
		"$D9" spans -i "$TMP/win.data" --instances --limit 0 --format json >"$TMP/win.json" ||
		fail "info or spans failed" || return 1
	python3 - "$TMP/win.info" "$TMP/win.json" "$TMP/win.out" <<'PY'
import json, sys
span = json.load(open(sys.argv[1]))["span"]
got = {s["id"] for s in json.load(open(sys.argv[2]))["instances"]
       if not s["open_start"] and not s["open_end"]}
inside = [int(f[1]) for f in (l.split() for l in open(sys.argv[3]))
          if f and f[0] == "req" and int(f[4]) >= span["start_ns"] and int(f[5]) <= span["end_ns"]]
missing = [i for i in inside if i not in got]
print(f"    {len(inside) - len(missing)} of the {len(inside)} requests created and closed in the "
      f"stated {span['duration_ns'] / 1e9:.3f} s are in the trace, whole")
if missing:
    print(f"    missing: {missing[:10]}")
sys.exit(1 if missing or len(inside) < 20 else 0)
PY
}

t_span_request() {
	need_perf || return
	start_ready -t 10 "$TMP/req.out" "$ANS/request" 120 || return 1
	# 8 slow requests: one in four of a request every 30 ms, ~1 s
	enough 8 2 16 req_rec
	case $? in 0) ;; 3) fail "too few slow requests" ;& *) return 1 ;; esac
	"$D9" info --json -i "$TMP/req.data" >"$TMP/req.info" || fail "info failed" || return 1
	python3 - "$TMP/req.json" "$TMP/req.out" "$TMP/req.info" <<'PY' || return 1
import json, sys
inst = json.load(open(sys.argv[1]))["instances"]
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "req":
        truth[int(f[1])] = (f[2], int(f[3]))
whole = [s for s in inst if not s["open_start"] and not s["open_end"]]
off = [s for s in whole if s["id"] in truth
       and abs(s["duration_ns"] - truth[s["id"]][1]) > max(300000, truth[s["id"]][1] // 50)]
print(f"    {len(whole) - len(off)} of {len(whole)} spans last what the program measured")
for s in off[:3]:
    print(f"    span {s['id']}: {s['duration_ns']} ns, the program: {truth[s['id']][1]} ns")
if len(whole) < 8 or len(off) * 10 > len(whole):
    sys.exit(1)
# the slowest seen whole are /slow, served by both tasks, CPU in burn_slow,
# blocked in db_read (one cut by the recording's start has no fields, and
# only the part of its polls the recording saw). A switch-in the kernel
# did not report leaves its off-CPU interval out (a loss, said): as many
# of them, no more, may leave a span without its db_read
lost = json.load(open(sys.argv[3]))["losses"].get("unreported_switch_ins", 0)
bad = unblocked = 0
for s in whole[:4]:
    tasks = {t["name"] for t in s["tasks"]}
    cpu = any(c["what"] == "poll" and "burn_slow" in c["stack"] for c in s["causes"])
    blocked = [c for c in s["causes"] if c["what"] == "blocked" and c["function"] == "db_read"]
    ok = (s["fields"] == "route=/slow" and tasks == {"handler", "db"} and cpu
          and s["blocked_ns"] <= s["duration_ns"])
    if ok and not (blocked and blocked[0]["ns"] >= 7_000_000):
        unblocked += 1
        ok = unblocked <= lost
        print(f"    span {s['id']}: no db_read, {lost} switch-ins unreported by the kernel")
    if not ok:
        bad += 1
        print(f"    not explained: {json.dumps(s)[:600]}")
sys.exit(1 if bad else 0)
PY
	"$D9" flame -i "$TMP/req.data" --span request --min 15ms --format folded \
		>"$TMP/slow.folded" 2>/dev/null || fail "flame --span --min failed" || return 1
	"$D9" flame -i "$TMP/req.data" --span request --format folded >"$TMP/all.folded" \
		2>/dev/null || fail "flame --span failed" || return 1
	local slow fast all_fast
	slow=$(awk '/;burn_slow/ { s += $NF } END { print s + 0 }' "$TMP/slow.folded")
	fast=$(awk '/;burn_fast/ { s += $NF } END { print s + 0 }' "$TMP/slow.folded")
	all_fast=$(awk '/;burn_fast/ { s += $NF } END { print s + 0 }' "$TMP/all.folded")
	# a /fast request the machine held 15 ms or more is a slow request
	# too (the program's own timing says which): its few samples may be in
	local late
	late=$(awk '$1 == "req" && $3 != "/slow" && $4 >= 15000000 { n++ } END { print n + 0 }' "$TMP/req.out")
	say "    flame --span request --min 15ms: $slow samples in burn_slow, $fast in burn_fast" \
		"(all requests: $all_fast; /fast requests that took 15 ms or more: $late)"
	[ "$slow" -ge 50 ] && [ "$all_fast" -gt 0 ] &&
		{ [ $((100 * fast)) -le "$slow" ] || { [ "$late" -gt 0 ] && [ $((10 * fast)) -le "$slow" ]; }; } ||
		fail "the slow requests' profile is not theirs" || return 1
	"$D9" spans -i "$TMP/req.data" >"$TMP/req.txt" || return 1
	grep -q "^request " "$TMP/req.txt" || fail "spans: $(cat "$TMP/req.txt")" || return 1
}

# each segment of a rotated recording read alone knows the spans open at
# its start (SPAN_STATE) and no span it saw closed: no span there lasts
# longer than the longest request the program measured
t_span_segments() {
	need_perf || return
	start_ready -t 10 "$TMP/seg.out" "$ANS/request" 120 || return 1
	mkdir -p "$TMP/rot"
	"$D9" record -p "$SPID" --rotate 1s -d 3 -o "$TMP/rot" 2>"$TMP/rot.err" ||
		fail "record --rotate failed: $(tail -3 "$TMP/rot.err")" || return 1
	local f n=0 worst truth
	truth=$(awk '$1 == "req" && $4 > m { m = $4 } END { print m + 0 }' "$TMP/seg.out")
	for f in "$TMP"/rot/*.d9; do
		"$D9" spans -i "$f" --format json >"$TMP/seg.json" 2>"$TMP/seg.err" || {
			# a second with no request alive, or the last sliver
			grep -q "has no application spans" "$TMP/seg.err" && continue
			fail "spans of $f: $(cat "$TMP/seg.err")" || return 1
		}
		worst=$(python3 -c 'import json, sys; print(max(r["max_ns"] for r in json.load(open(sys.argv[1]))["spans"]))' \
			"$TMP/seg.json") || fail "spans of $f" || return 1
		n=$((n + 1))
		[ "$worst" -le $((truth + truth / 5 + 2000000)) ] ||
			fail "$(basename "$f") alone: a span of $worst ns, the longest request $truth ns" ||
			return 1
	done
	say "    $n segments alone: no span longer than the longest request ($truth ns)"
	[ "$n" -ge 3 ] || fail "only $n segments" || return 1
}

# --from/--to: the spans alive in the window (created before its end,
# closed at or after its start), each with the duration the whole trace
# gives it unless it is still open at the window's end
t_span_window() {
	need_perf || return
	start_ready -t 10 "$TMP/win.out" "$ANS/request" 120 || return 1
	"$D9" record -p "$SPID" -d 2 -o "$TMP/win.data" 2>"$TMP/win.err" ||
		fail "record failed: $(tail -3 "$TMP/win.err")" || return 1
	"$D9" spans -i "$TMP/win.data" --instances --limit 0 --format json >"$TMP/whole.json" ||
		fail "spans --instances failed" || return 1
	"$D9" spans -i "$TMP/win.data" --from 1 --to 1.5 --instances --limit 0 --format json \
		>"$TMP/win.json" || fail "spans --from 1 --to 1.5 failed" || return 1
	"$D9" spans -i "$TMP/win.data" --from 1 --to 1.5 >"$TMP/win.txt" ||
		fail "spans --from 1 --to 1.5 (text) failed" || return 1
	python3 - "$TMP/whole.json" "$TMP/win.json" <<'PY' || return 1
import json, sys
whole = {s["id"]: s for s in json.load(open(sys.argv[1]))["instances"]}
win = json.load(open(sys.argv[2]))["instances"]
lo, hi, ms = 1_000_000_000, 1_500_000_000, 1_000_000
# the window counts from the first segment's start, which may not be
# where the whole trace's times count from: align them on the spans both
# saw created
d = sorted(s["start_ns"] - whole[s["id"]]["start_ns"] for s in win
           if s["id"] in whole and not s["open_start"])
d = d[len(d) // 2] if d else 0
for s in whole.values():
    s["start_ns"] += d
end = lambda s: s["start_ns"] + s["duration_ns"]
# alive in the window, clear of its edges by 1 ms either way
must = {i for i, s in whole.items() if s["start_ns"] <= hi - ms and end(s) >= lo + ms}
may = {i for i, s in whole.items() if s["start_ns"] <= hi + ms and end(s) >= lo - ms}
got = {s["id"] for s in win}
print(f"    {len(got)} spans in the window, {len(must)} alive in it by the whole trace;"
      f" {sum(s['open_end'] for s in win)} open at its end")
bad = 0
for i in sorted(must - got)[:3]:
    print(f"    span {i} alive in the window is missing: {whole[i]}"); bad += 1
for i in sorted(got - may)[:3]:
    s = next(s for s in win if s["id"] == i)
    print(f"    span {i} is not alive in the window: whole {whole.get(i)}, window {s}"); bad += 1
for s in win:
    w = whole.get(s["id"])
    if w and not s["open_end"] and s["duration_ns"] != w["duration_ns"]:
        print(f"    span {s['id']}: {s['duration_ns']} ns in the window, {w['duration_ns']} ns whole")
        bad += 1
sys.exit(1 if bad or len(must) < 5 else 0)
PY
	grep -q "^request " "$TMP/win.txt" || fail "spans: $(cat "$TMP/win.txt")" || return 1
}

t_span_trigger() {
	need_perf || return
	local out=$TMP/flight why id truth f
	mkdir -p "$out"
	start_ready -t 10 "$TMP/trig.out" "$ANS/request" 120 || return 1
	"$D9" record -p "$SPID" --flight=2s --trigger 'span:request>15ms' -o "$out" \
		2>"$TMP/trig.err" &
	PIDS+=($!)
	wait_for "$TMP/trig.err" 'dump: .*trigger span:request>15ms' 20 ||
		fail "no trigger dump: $(tail -3 "$TMP/trig.err")" || return 1
	f=$(ls "$out"/*.data | head -1)
	why=$(info_json "$f" "j['dump_reasons'][0]")
	say "    $why"
	id=$(sed -n 's/^trigger span:request>15ms: span \([0-9]*\) lasted [0-9.]* ms at .*/\1/p' \
		<<<"$why")
	[ -n "$id" ] || fail "the reason names no span" || return 1
	truth=$(awk -v id="$id" '$1 == "req" && $2 == id { print $4 }' "$TMP/trig.out")
	[ -n "$truth" ] && [ "$truth" -gt 15000000 ] ||
		fail "span $id: the program measured '${truth:-nothing}' ns" || return 1
	"$D9" spans -i "$f" --instances --limit 0 --format json |
		python3 -c 'import json, sys
sys.exit(not any(s["id"] == int(sys.argv[1]) and s["duration_ns"] > 15000000
                 for s in json.load(sys.stdin)["instances"]))' "$id" ||
		fail "the dump does not hold span $id as slow" || return 1
}

e2e_run_tests
