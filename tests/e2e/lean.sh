#!/usr/bin/env bash
# Lean mode (`record --lean[=DUR]`, issue 48): the shim writes only the
# polls that lasted DUR or waited DUR to be polled and sums every poll per
# task; samples and switch-outs carry their task, read by BPF in their
# thread. Its answers are checked against what was measured apart:
#   - the demo's own count of its polls (every poll counted, exactly);
#   - every poll written (--lean=1ns: each poll and wait also written, in
#     the same recording), against which the sums' counts, the 99th
#     percentiles of poll lengths and of wake-to-poll waits must agree
#     (counts exactly, percentiles within one of their buckets);
#   - a recording of every poll (no --lean) of the same program: each
#     busy task's share of the CPU within 2 points, as much of the CPU
#     placed in tasks;
#   - the polls over the threshold: every one listed, with its stacks.
# Lean mode samples at the scheduler's tick where BPF may be used
# (--sampler tick, no interrupt of its own); the tick's samples are held
# to the kernel's own count of each thread's CPU (schedstat), and their
# kernel stacks to what the thread was doing, not the tick's own frames.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=lean
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
DEMO=$ROOT/$B/examples/demo

need() {
	need_perf || return 2
	need_bpf || return 2
}

TICK_WHY=unprobed
need_tick() {
	need_bpf || return 2
	need_record TICK_WHY --sampler tick
}

# sampler TRACE: the sampler that took its samples
sampler() {
	"$D9" info --json -i "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["sampling"]["sampler"])'
}

# tasks_col TRACE COLUMN: "TASK VALUE" lines of `d9prof tasks --limit 0`,
# VALUE the column named so (durations in ns)
tasks_col() {
	"$D9" tasks --limit 0 -i "$1" | python3 -c '
import re, sys
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
want = sys.argv[1]
head = None
for line in sys.stdin:
    f = line.split()
    if not f or line.startswith("#"):
        continue
    if f[0] == "TASK":
        head = f
        continue
    # TASK NAME ... : the name is one word in the demo
    v = f[head.index(want)]
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", v)
    print(f[0], float(m.group(1)) * unit[m.group(2)] if m else v)
' "$2"
}

t_lean_counts_every_poll() {
	local polls sum inpolls
	need || return 2
	"$D9" record --lean -o "$TMP/b.d9" -- "$DEMO" --bench-polls -w 2 \
		--bench-work-ns 5000 -d 2 >"$TMP/b.out" 2>"$TMP/b.err" ||
		fail "record --lean: $(tail -1 "$TMP/b.err")" || return 1
	polls=$(sed -nE 's/^demo: elapsed .* ([0-9]+) polls .*/\1/p' "$TMP/b.err" "$TMP/b.out" | head -1)
	sum=$(tasks_col "$TMP/b.d9" POLLS | awk '{ s += $2 } END { print s + 0 }')
	[ -n "$polls" ] || fail "the demo did not say how many polls it made" || return 1
	[ "$sum" = "$polls" ] ||
		fail "lean counted $sum polls, the demo made $polls;" \
			"$("$D9" info -i "$TMP/b.d9" 2>&1 | grep -E '^(lost|target end|span):' | tr '\n' ';')" \
			"recorder: $(tr '\n' ';' <"$TMP/b.err" | tail -c 600)" || return 1
	# the polls written are those lean mode writes: at least 1 ms long
	# or woken 1 ms before (5 us polls, waits of microseconds: those a
	# preemption made long; many on a loaded machine, few on a quiet one)
	"$D9" info --json -i "$TMP/b.d9" >"$TMP/b.json"
	"$D9" polls --limit 1 -i "$TMP/b.d9" >"$TMP/b.all"
	"$D9" polls --min 1ms --limit 1 -i "$TMP/b.d9" >"$TMP/b.long"
	"$D9" delays --min 1ms --limit 0 --format json -i "$TMP/b.d9" >"$TMP/b.delays"
	python3 - "$TMP/b" "$polls" <<'EOF' || return 1
import json, re, sys
b, polls = sys.argv[1], int(sys.argv[2])
j = json.load(open(b + ".json"))
if not j["lean"] or j["lean"]["poll_ns"] != 1000000:
    sys.exit("    info --json says no lean mode of 1ms: %r" % j["lean"])
def listed(f):
    m = re.search(r"^# \d+ of (\d+) polls", open(f).read(), re.M)
    return int(m.group(1)) if m else 0
written, long = listed(b + ".all"), listed(b + ".long")
waited = len(json.load(open(b + ".delays"))["delays"])
# (a poll with another record in it is written too: a few)
if written > long + waited + polls / 1000:
    sys.exit("    %d polls written of %d, but only %d lasted 1 ms and %d waited 1 ms: not lean"
             % (written, polls, long, waited))
print("    %d polls written of %d: %d of 1 ms or more, %d woken 1 ms or more before"
      % (written, polls, long, waited))
EOF
	# the samples found their tasks without the polls: as many in
	# polls (tasks) as the workers spend polling
	inpolls=$(in_polls "$TMP/b.d9")
	awk -v p="$inpolls" 'BEGIN { exit !(p >= 90) }' ||
		fail "only ${inpolls:-?}% of the CPU placed in tasks" || return 1
	say "    $sum polls counted as the demo counted them; ${inpolls}% of the CPU in tasks"
}

# agree NAME ARG...: `record --lean=1ns` of the demo with ARGs: its sums
# against every poll and wait, written too
agree() {
	local name=$1
	shift
	"$D9" record --lean=1ns -o "$TMP/e.d9" -- "$DEMO" "$@" >"$TMP/e.out" 2>"$TMP/e.err" ||
		fail "record --lean=1ns: $(tail -1 "$TMP/e.err")" || return 1
	tasks_col "$TMP/e.d9" POLLS >"$TMP/e.polls"
	tasks_col "$TMP/e.d9" POLL-P99 >"$TMP/e.p99"
	tasks_col "$TMP/e.d9" WAKES >"$TMP/e.wakes"
	tasks_col "$TMP/e.d9" DELAY-P99 >"$TMP/e.d99"
	"$D9" polls --limit 0 -i "$TMP/e.d9" >"$TMP/e.list"
	"$D9" delays --limit 0 --format json -i "$TMP/e.d9" >"$TMP/e.delays"
	python3 - "$TMP/e" "$name" <<'EOF'
import json, math, re, sys
base = sys.argv[1]
def col(name):  # "-": none
    return {int(a): float(b) if b != "-" else 0.0
            for a, b in (l.split() for l in open(base + "." + name))}
polls, p99, wakes, d99 = col("polls"), col("p99"), col("wakes"), col("d99")
lens, waits = {}, {}
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
for line in open(base + ".list"):
    m = re.match(r"\s*\d+\s+(\d+)\s.*?\s([0-9.]+)(ns|us|ms|s)\s+\d+\s", line)
    if m:
        lens.setdefault(int(m.group(1)), []).append(float(m.group(2)) * unit[m.group(3)])
for d in json.load(open(base + ".delays"))["delays"]:
    waits.setdefault(d["task"], []).append(d["delay_ns"])
def q99(v):
    v = sorted(v)
    return v[math.ceil(0.99 * len(v)) - 1]
# one bucket: a quarter of a power of two wide; the sums give its middle
def near(a, b):
    return b > 0 and 0.75 <= a / b <= 1.3
bad, checked = [], 0
for t, n in polls.items():
    if n < 50:
        continue
    checked += 1
    if len(lens.get(t, [])) != n:
        bad.append("task %d: %d polls summed, %d written" % (t, n, len(lens.get(t, []))))
        continue
    if not near(p99[t], q99(lens[t])):
        bad.append("task %d: poll p99 %.0f ns summed, %.0f written" % (t, p99[t], q99(lens[t])))
    if wakes[t] != len(waits.get(t, [])):
        bad.append("task %d: %d waits summed, %d written" % (t, wakes[t], len(waits.get(t, []))))
    elif wakes[t] and not near(d99[t], q99(waits[t])):
        bad.append("task %d: wait p99 %.0f ns summed, %.0f written" % (t, d99[t], q99(waits[t])))
if checked < 3 or bad:
    sys.exit("    %d tasks of 50 polls or more; %s" % (checked, "; ".join(bad[:5])))
print("    %s: %d tasks: counts, p99 of lengths and waits agree with every poll written"
      % (sys.argv[2], checked))
EOF
}

t_lean_sums_agree_with_every_poll() {
	need || return 2
	agree demo -d 2 || return 1
	# the hidden check's workload: 2 workers, 5 us polls, a yield before each
	agree "demo --bench-polls" --bench-polls -w 2 --bench-work-ns 5000 -d 0.3
}

# in_polls TRACE: the percent of the sampled CPU `tasks` places in polls
in_polls() {
	"$D9" tasks -i "$1" | sed -nE 's/^# sampled CPU: .* in polls \(([0-9.]+)%\).*/\1/p'
}

# shares TRACE: "TASK SHARE" of each task with 5% or more of the CPU in
# tasks, then "in PCT" (in_polls)
shares() {
	tasks_col "$1" CPU | awk '{ c[$1] = $2; t += $2 }
		END { for (k in c) if (t && c[k] / t >= 0.05) print k, 100 * c[k] / t }'
	echo "in $(in_polls "$1")"
}

# Lean and every poll on the same sampler: what lean mode leaves out is
# what is compared (the tick and perf_event differ in what they cost the
# target, which perf_event's samples include; see t_tick_*). Lean takes
# the tick where it can (its default); 6 s: ~2000 samples at 250 Hz.
t_lean_cpu_per_task_as_every_poll() {
	local s
	need || return 2
	"$D9" record --lean -o "$TMP/l.d9" -- "$DEMO" -d 6 >/dev/null 2>"$TMP/l.err" ||
		fail "record --lean: $(tail -1 "$TMP/l.err")" || return 1
	s=$(sampler "$TMP/l.d9")
	if need_tick >/dev/null; then
		[ "$s" = tick ] || fail "lean sampled with '$s', not the tick" || return 1
	fi
	"$D9" record --sampler "$s" -o "$TMP/f.d9" -- "$DEMO" -d 6 >/dev/null 2>"$TMP/f.err" ||
		fail "record: $(tail -1 "$TMP/f.err")" || return 1
	shares "$TMP/f.d9" >"$TMP/f.shares"
	shares "$TMP/l.d9" >"$TMP/l.shares"
	python3 - "$TMP/f.shares" "$TMP/l.shares" "$s" <<'EOF'
import sys
def read(p):
    d = dict(l.split() for l in open(p))
    return {k: float(v) for k, v in d.items()}
f, l = read(sys.argv[1]), read(sys.argv[2])
bad = ["%s: %.1f%% lean, %.1f%% every poll" % (k, l.get(k, 0), v)
       for k, v in f.items() if abs(l.get(k, 0) - v) > 2]
if len(f) < 2 or bad:
    sys.exit("    %d busy tasks; %s" % (len(f) - 1, "; ".join(bad)))
print("    %s sampler: " % sys.argv[3] + ", ".join("%s %.1f/%.1f" % (k, l[k], v) for k, v in f.items()))
EOF
}

# The tick's own path, which no sample's leaf frame may be in: the
# interrupt, the hrtimer, the program
TICK_PATH='(hrtimer_interrupt|__hrtimer_run_queues|tick_nohz_handler|tick_sched_timer|update_process_times|__sysvec_apic_timer_interrupt|asm_sysvec_apic_timer_interrupt|bpf_.*|__bpf_trace_.*)_\[k\]$'

# thread_samples TRACE: "TID SAMPLES KERNEL TICK" per thread: its samples,
# those with a kernel frame, those whose leaf is in TICK_PATH
thread_samples() {
	"$D9" flame --by thread --format folded -o - -i "$1" | python3 -c '
import re, sys
tick = re.compile(sys.argv[1])
n = {}
for line in sys.stdin:
    stack, c = line.rsplit(" ", 1)
    m = re.match(r"[^;]*\[(\d+)\];", stack)
    if not m:
        continue
    v = n.setdefault(int(m.group(1)), [0, 0, 0])
    v[0] += int(c)
    v[1] += int(c) if "_[k]" in stack else 0
    v[2] += int(c) if tick.match(stack.split(";")[-1]) else 0
for t, v in n.items():
    print(t, *v)
' "$TICK_PATH"
}

# cpu_ns PID: "TID NS" of each thread, its CPU time as the kernel counts it
cpu_ns() {
	local f
	for f in /proc/"$1"/task/*/schedstat; do
		t=${f%/schedstat}
		echo "${t##*/} $(cut -d' ' -f1 "$f")"
	done
}

# The tick's samples of each thread against the kernel's count of its CPU
# over the recording (three threads busy 80, 45 and 15% of the time, in
# bursts of random length): as many as its CPU time in ticks, within
# Poisson's noise; and ticks that came in user mode (a spin) carry no
# kernel frame, the tick's own left out: a few have some, the ticks that
# came while the thread went to sleep or woke (more of those the more it
# sleeps), none ends in the tick's path.
t_tick_samples_as_the_kernel_counts_cpu() {
	local pid t0 t1
	need_tick || return 2
	cc -O1 -g -fno-omit-frame-pointer tests/e2e/duty.c -o "$TMP/duty" -lpthread ||
		fail "cannot build duty" || return 1
	start_ready "$TMP/duty.out" "$TMP/duty" 80 45 15 || return 1
	pid=$SPID
	cpu_ns "$pid" >"$TMP/cpu0"
	t0=$(date +%s%N)
	"$D9" record --sampler tick -p "$pid" -d 4 -o "$TMP/duty.d9" 2>"$TMP/duty.err" ||
		fail "record --sampler tick: $(tail -1 "$TMP/duty.err")" || return 1
	t1=$(date +%s%N)
	cpu_ns "$pid" >"$TMP/cpu1"
	kill "$pid"
	thread_samples "$TMP/duty.d9" >"$TMP/duty.n"
	"$D9" info --json -i "$TMP/duty.d9" >"$TMP/duty.json"
	python3 - "$TMP" "$t0" "$t1" <<'EOF'
import json, math, sys
d = sys.argv[1]
wall = (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
j = json.load(open(d + "/duty.json"))
hz, span = j["sampling"]["frequency"], j["span"]["duration_ns"] / 1e9
c0 = dict(map(int, l.split()) for l in open(d + "/cpu0"))
c1 = dict(map(int, l.split()) for l in open(d + "/cpu1"))
got = {int(a): (int(b), int(c), int(e)) for a, b, c, e in (l.split() for l in open(d + "/duty.n"))}
bad, said = [], []
for t in c1:
    rate = (c1[t] - c0.get(t, 0)) / 1e9 / wall  # of a CPU
    want = rate * span * hz
    if want < 50:
        continue
    n, k, e = got.get(t, (0, 0, 0))
    said.append("%d: %d samples for %.0f ms of CPU (%.0f)" % (t, n, rate * span * 1e3, want))
    if abs(n - want) > 4 * math.sqrt(want) + 0.05 * want:
        bad.append(said[-1])
    if k > 0.15 * n or e:
        bad.append("%d: of %d samples of a spin %d with kernel frames, %d in the tick's path"
                   % (t, n, k, e))
if len(said) != 3 or bad:
    sys.exit("    %d threads busy enough; %s" % (len(said), "; ".join(bad or said)))
print("    %d Hz; " % hz + "; ".join(said))
EOF
}

# A thread mostly in the kernel (dd copying zeros): the tick's samples
# carry the kernel frames it was in, down from the syscall, and none ends
# in the tick's own path (the interrupt, the hrtimer, the program).
t_tick_kernel_stacks_are_the_threads() {
	local dpid
	need_tick || return 2
	dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null &
	dpid=$!
	PIDS+=("$dpid")
	"$D9" record --sampler tick -p "$dpid" -d 2 -o "$TMP/dd.d9" 2>"$TMP/dd.err" ||
		fail "record --sampler tick: $(tail -1 "$TMP/dd.err")" || return 1
	kill "$dpid"
	"$D9" flame --format folded -o - -i "$TMP/dd.d9" >"$TMP/dd.folded"
	python3 - "$TMP/dd.folded" "$TICK_PATH" <<'EOF'
import re, sys
tick = re.compile(sys.argv[2])
n = kern = syscall = 0
bad = []
for line in open(sys.argv[1]):
    stack, c = line.rsplit(" ", 1)
    c = int(c)
    n += c
    frames = stack.split(";")
    if "_[k]" in stack:
        kern += c
    if any(f in ("vfs_read_[k]", "vfs_write_[k]") for f in frames):
        syscall += c
    if tick.match(frames[-1]):
        bad.append("%s (%d)" % (stack[-120:], c))
if n < 200 or kern < 0.5 * n or syscall < 0.3 * n or bad:
    sys.exit("    %d samples, %d with kernel frames, %d in vfs_read/vfs_write; "
             "ending in the tick: %s" % (n, kern, syscall, "; ".join(bad[:3]) or "none"))
print("    %d samples: %.0f%% with kernel frames, %.0f%% in vfs_read/vfs_write, none in the tick's path"
      % (n, 100 * kern / n, 100 * syscall / n))
EOF
}

t_lean_lists_every_long_poll_with_stacks() {
	local hog listed folded
	need || return 2
	[ -f "$TMP/l.d9" ] ||
		"$D9" record --lean -o "$TMP/l.d9" -- "$DEMO" -d 3 >/dev/null 2>"$TMP/l.err" ||
		fail "record --lean: $(tail -1 "$TMP/l.err")" || return 1
	# the CPU hog's polls last ~2 ms, over the 1 ms threshold, but for
	# its last: the demo stopping, it returns at once (cpu_hog_poll)
	hog=$(tasks_col "$TMP/l.d9" POLLS | awk '$1 == 1 { print $2 }')
	"$D9" polls --limit 0 --task 1 -i "$TMP/l.d9" | grep -E '^[0-9]+ +1 cpu_hog ' >"$TMP/hog.list"
	listed=$(wc -l <"$TMP/hog.list")
	[ -n "$hog" ] && [ "$hog" -gt 100 ] && [ "$listed" = $((hog - 1)) ] ||
		fail "task 1: ${hog:-no} polls counted, $listed listed (all but its last)" ||
		return 1
	awk '{ d = $7; sub(/ms$/, "", d); if (d + 0 < 1) exit 1 }' "$TMP/hog.list" ||
		fail "a poll under 1ms listed: $(sort -k7 -g "$TMP/hog.list" | head -1)" || return 1
	"$D9" flame --task 1 --min-poll 1ms --format folded -i "$TMP/l.d9" >"$TMP/hog.folded" 2>/dev/null
	folded=$(grep -c 'cpu_hog_poll' "$TMP/hog.folded")
	[ "$folded" -gt 0 ] || fail "no stack of the hog's long polls" || return 1
	# under the threshold the trace cannot answer: said, not silent
	"$D9" flame --min-poll 500us --format folded -o /dev/null -i "$TMP/l.d9" 2>"$TMP/min.err"
	grep -q 'keeps only the polls of 1.00ms or longer' "$TMP/min.err" ||
		fail "flame --min-poll 500us on a lean trace said nothing: $(cat "$TMP/min.err")" ||
		return 1
	say "    the hog's $listed polls over 1ms all listed, their stacks in flame --min-poll 1ms"
}

e2e_run_tests
