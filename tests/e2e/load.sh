#!/usr/bin/env bash
# The recorder under load (tests/e2e/many_threads.c): 400 threads that
# each spin ~10 us and sleep 1 ms, which saturates two cores and switches
# context as fast as they can (~150,000 times a second here). Recorded for
# 3 s, the recorder must lose at most 1% of CPU samples and of switch
# records, and return within 4.5 s of wall time, not counting the kernel's
# wait at the first per-thread event (an RCU grace period, which the
# recorder reports: it is the kernel's, perf pays it too) nor the time the
# recorder was runnable without a CPU outside the 3 s it records: from its
# exec to its exit, as the kernel counted it (tests/e2e/lifetime.c), less
# the waits while recording that the recorder reports (other work on a
# busy machine, not its own doing).
# With an fd limit
# too small for 400 threads' events, it says so before recording.
NAME=load
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

cc -O1 -g -fno-omit-frame-pointer -I"$ROOT/include" tests/e2e/many_threads.c \
	-o "$TMP/many_threads" "$ROOT/$B/libd9prof.a" -lpthread &&
	cc -O1 tests/e2e/lifetime.c -o "$TMP/lifetime" || { say "cannot build"; exit 1; }
need_perf >/dev/null || e2e_skip_all "$PERF_WHY"

# start THREADS: the load, LPID once every thread runs
# (it lives 180 s, killed after its test: three recordings and their
# readings took 60 s on a 2026-11 VM, and a third recorded it exiting)
start() {
	start_ready -2 -t 10 "$TMP/load.out" "$TMP/many_threads" "$1" 10 1000 180 || return 1
	LPID=$SPID
}

# The measuring shell must not starve with the target's threads: it runs
# SCHED_FIFO, and the recorder it starts runs as an ordinary process again
# (chrt -o 0), which raises its own priority as it does for a user.
if chrt -f 10 true 2>/dev/null; then
	FIFO="chrt -f 10" OTHER="chrt -o 0"
else
	FIFO="" OTHER=""
fi

# rec N: record the load for 3 s as a user would start it (LOAD_SCHED=perf
# or bpf: that scheduler event path); its stderr in $TMP/load.N.err, with
# lifetime's "rc RC wall SECONDS waited SECONDS" last. Losses at most 1%
# of samples and of switches.
rec() {
	$FIFO "$TMP/lifetime" $OTHER "$D9" record -p "$LPID" ${LOAD_SCHED:+--sched "$LOAD_SCHED"} \
		-d 3 -o "$TMP/load.data" 2>"$TMP/load.$1.err"
	grep -q "^rc 0 " "$TMP/load.$1.err" || fail "record failed: $(cat "$TMP/load.$1.err")" ||
		return 1
	awk -v lim=0.01 '
		/ samples? \(/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^samples?$/ && $i ~ /^[0-9]+$/) kept = $i }
		/lost [0-9]+ samples? \(perf ring full\)/ { lost = $3 }
		/off-CPU \(/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^switch(es)?$/) sw = $i }
		/lost [0-9]+ context-switch records?/ { swlost = $3 }
		/the recorder used/ { res = $0; sub(/^d9prof: the recorder used /, "", res) }
		/opening the events took/ { for (i = 1; i <= NF; i++) if ($i == "took") k = $(i + 1) }
		/^rc / { wall = $4 }
		END {
			printf "    samples lost %d of %d, switch records lost %d of %d switches; " \
				"wall %.2f s (%.2f s of it the kernel'"'"'s first open); used %s\n",
				lost, kept + lost, swlost, sw, wall, k, res
			if (kept == 0 || sw == 0) exit 1
			if (lost > lim * (kept + lost) || swlost > lim * sw) exit 1
		}' "$TMP/load.$1.err" || fail "over 1% lost: $(cat "$TMP/load.$1.err")" || return 1
	# the workers block only in usleep() (many_threads.c): 99% of the
	# blocked time is under worker;usleep, the caller CFI recovers over
	# glibc, whole stack copies or copies cut short (the ring half full);
	# read at the measuring shell's priority, not starved by the load
	$FIFO "$D9" offcpu -i "$TMP/load.data" -f folded 2>/dev/null | grep -v '\[runqueue' |
		awk -v short="$(sed -n 's/^d9prof: copied \([0-9]*\) off-CPU stacks* short.*/\1/p' \
			"$TMP/load.$1.err")" '
		{ t += $NF; if ($0 ~ /;worker;usleep;/) w += $NF }
		END { printf "    blocked time under worker;usleep: %.2f%% (%d stack copies cut short)\n",
			t ? 100 * w / t : 0, short
			exit !(t > 0 && w >= 0.99 * t) }' ||
		fail "blocked time not in usleep's caller: $(grep 'off-CPU stacks' "$TMP/load.$1.err")" ||
		return 1
}

# own_wall N: recording N's wall time less the kernel's wait at the first
# open (the time opening took less its waits for a CPU, counted next) and
# the recorder's waits for a CPU outside the recording (all its waits from
# exec to exit, less those while recording)
own_wall() {
	awk '/^rc / {w = $4; q = $6} /opening the events took/ {
		for (i = 1; i <= NF; i++) if ($i == "took") k = $(i + 1)
		for (i = 1; i <= NF; i++) if ($i == "waiting" && $(i + 1) == "for") y = substr($(i - 4), 2) }
		/s while recording\)$/ { for (i = 1; i <= NF; i++) if ($i == "while") d = substr($(i - 2), 2) }
		END {print w - (k - y) - (q - d)}' "$TMP/load.$1.err"
}

t_400_busy_threads_lose_under_1_percent() {
	local sw0 sw1 i
	start 400 || return 1
	sleep 1
	sw0=$(awk '/^ctxt/ {print $2}' /proc/stat)
	sleep 1
	sw1=$(awk '/^ctxt/ {print $2}' /proc/stat)
	say "    load: 400 threads, $(((sw1 - sw0) / 1000))k context switches/s on $(nproc) CPUs"
	# -d 3 returns within 4.5 s, less the kernel's wait at the first open
	# and the waits for a CPU outside the recording: the median of three,
	# or one that leaves the median no doubt (under 3.6 s: two more over
	# 4.5 s would be needed to fail)
	rec 1 || return 1
	if [ "$(own_wall 1 | awk '{ print ($1 <= 3.6) }')" = 1 ]; then
		own_wall 1 | awk '{ printf "    wall %.2f s (less the first open and the waits for a CPU outside the recording), well under 4.5 s: one recording is enough\n", $1 }'
		return 0
	fi
	for i in 2 3; do
		rec "$i" || return 1
	done
	for i in 1 2 3; do own_wall "$i"; done | sort -n | sed -n 2p |
		awk '{ printf "    median wall %.2f s (less the first open and the waits for a CPU outside the recording)\n", $1
			exit !($1 <= 4.5) }' ||
		fail "record -d 3 took too long" || return 1
}

t_too_few_fds_is_said_before_recording() {
	start 400 || return 1
	(ulimit -n 512 && "$D9" record -p "$LPID" -d 1 -o "$TMP/fd.data") 2>"$TMP/fd.err" &&
		fail "recorded with 512 fds for 400 threads" && return 1
	sed 's/^/    /' "$TMP/fd.err"
	grep -q "401 threads: 401 x $(nproc) CPUs x 2 events needs about [0-9]* open files, over the limit of 512" \
		"$TMP/fd.err" || fail "not said clearly" || return 1
	[ ! -e "$TMP/fd.data" ] || fail "a trace file was left behind" || return 1
	# room for the sampler's events, not for perf_event's off-CPU ones:
	# BPF needs none of them and records; refused BPF is said, with why
	# (40 threads: 400 busy ones make each recording take seconds)
	kill -KILL "$LPID" 2>/dev/null
	start 40 || return 1
	local lim=$(( $(nproc) * 41 + 130 ))
	(ulimit -n "$lim" && "$D9" record -p "$LPID" -d 0.3 -o "$TMP/fd2.data") \
		2>"$TMP/fd2.err" || {
		grep -q "BPF" "$TMP/fd2.err" && say "    skip (BPF here): $(tail -1 "$TMP/fd2.err")" &&
			return 0
		fail "record with $lim fds failed: $(tail -1 "$TMP/fd2.err")"
		return 1
	}
	grep -q "off-CPU (bpf)" "$TMP/fd2.err" ||
		fail "with $lim fds: $(grep off-CPU "$TMP/fd2.err")" || return 1
	say "    with $lim fds: $(grep -m1 'off-CPU (bpf)' "$TMP/fd2.err" | sed 's/^d9prof: //')"
	cc -O1 tests/e2e/noperf.c -o "$TMP/noperf" || fail "cannot build noperf" || return 1
	(ulimit -n "$lim" && "$TMP/noperf" --system-wide "$D9" record -p "$LPID" -d 0.3 \
		-o "$TMP/fd3.data") 2>"$TMP/fd3.err" && fail "recorded without BPF in $lim fds" && return 1
	grep -q "BPF refused.*perf_event would need about [0-9]* open files for 41 threads" \
		"$TMP/fd3.err" || fail "not said clearly: $(cat "$TMP/fd3.err")" || return 1
	sed 's/^/    /' "$TMP/fd3.err"
}

e2e_run_tests
