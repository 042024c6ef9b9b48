#!/usr/bin/env bash
# A hostile target against the recorder (tests/e2e/hostile.c): it
# scribbles over its segment while recorded, masquerades a regular file or
# an unsealed memfd as its segment and shrinks it, floods its ctimer sample
# areas. The recorder must survive (no SIGBUS, no hang), drop and count
# what cannot be real, and write a readable trace. And the recorder is
# resilient: it attaches again after a stall past the lease, leaves forked
# children's samples out, never writes through a link or over a file that
# is not a trace, and refuses a FIFO as input. D9=path picks the
# recorder (make check-hostile runs it on an ASan/UBSan build).
NAME=hostile
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

cc -O1 -g -fno-omit-frame-pointer -I"$ROOT" -I"$ROOT/include" tests/e2e/hostile.c \
	-o "$TMP/hostile" "$ROOT/$B/libd9prof.a" -lpthread || { say "cannot build hostile"; exit 1; }
need_perf >/dev/null || e2e_skip_all "$PERF_WHY"

# start MODE SECS: the hostile target, HPID once it said ready
start() {
	start_ready -2 "$TMP/$1.out" "$TMP/hostile" "$1" "$2" || return 1
	HPID=$SPID
}

# rec MODE ARGS...: record the target for 1.5 s, within 20 s of wall time;
# the recorder must exit by itself with 0
rec() {
	local m=$1 rc
	shift
	timeout 20 "$D9" record -p "$HPID" -d 1.5 -o "$TMP/$m.data" "$@" 2>"$TMP/$m.err"
	rc=$?
	[ "$rc" = 124 ] && { fail "the recorder hung (killed after 20 s)"; return 1; }
	[ "$rc" -lt 128 ] || fail "the recorder died of signal $((rc - 128)): $(tail -3 "$TMP/$m.err")" ||
		return 1
	[ "$rc" = 0 ] || fail "record failed ($rc): $(tail -3 "$TMP/$m.err")" || return 1
	grep -qi "AddressSanitizer\|runtime error" "$TMP/$m.err" &&
		fail "sanitizer report: $(grep -m3 -i 'sanitizer\|runtime error' "$TMP/$m.err")" && return 1
	"$D9" polls -i "$TMP/$m.data" --limit 1 >/dev/null 2>"$TMP/$m.read" ||
		grep -q "no tasks" "$TMP/$m.read" ||
		fail "the trace does not read: $(cat "$TMP/$m.read")" || return 1
}

# (its recording, and the target's threads seen meanwhile, are
# values_that_cannot_be_real_reach_no_view's too)
SCRIBBLE_RECORDED=0
t_scribbled_rings_are_dropped_and_counted() {
	start scribble 4 || return 1
	sees scribble
	rec scribble || return 1
	SCRIBBLE_RECORDED=1
	grep "dropped\|lost" "$TMP/scribble.err" | sed 's/^/    /'
	! grep -q "1844674407" "$TMP/scribble.err" || fail "garbage counted as drops" || return 1
}

t_a_regular_file_is_no_segment() {
	start fakefile 4 || return 1
	rec fakefile || return 1
	grep -q "no d9prof shim" "$TMP/fakefile.err" ||
		fail "not treated as a target without the shim: $(cat "$TMP/fakefile.err")" || return 1
}

t_an_unsealed_segment_is_refused_once() {
	start unsealed 4 || return 1
	rec unsealed || return 1
	local n
	n=$(grep -c "refusing the d9prof segment.*not sealed against shrinking" "$TMP/unsealed.err")
	say "    $(grep -m1 refusing "$TMP/unsealed.err")"
	[ "$n" = 1 ] || fail "said $n times, want once" || return 1
}

t_a_ctimer_flood_does_not_hold_the_recorder() {
	start flood 4 || return 1
	local t0=$SECONDS
	rec flood --sampler ctimer || return 1
	say "    recorded in $((SECONDS - t0)) s: $(grep -m1 'recorded' "$TMP/flood.err")"
	[ $((SECONDS - t0)) -le 8 ] || fail "took $((SECONDS - t0)) s for -d 1.5" || return 1
}

# ---- one recorder, resilient ---------------------------------------------

# polls_rate POLLS A0 A1 B0 B1: the polls table's polls that started in
# [B0, B1) s came at least a tenth as often as those in [A0, A1) s, and
# there were some (says both rates)
polls_rate() {
	awk -v a0="$2" -v a1="$3" -v b0="$4" -v b1="$5" '/^[0-9]/ { t = $6 + 0
			if (t >= a0 && t < a1) a++; else if (t >= b0 && t < b1) b++ }
		END { ra = a / (a1 - a0); rb = b / (b1 - b0)
		      printf "    %d polls in %s-%s s (%.0f/s), %d in %s-%s s (%.0f/s)\n", a, a0, a1, ra, b, b0, b1, rb
		      exit !(b > 0 && rb * 10 >= ra) }' "$1"
}

t_a_stalled_recorder_attaches_again() {
	start_ready -2 "$TMP/demo.out" "$ROOT/$B/examples/demo" -d 9 -q || return 1
	HPID=$SPID
	sleep 0.5
	"$D9" record -p "$HPID" -d 5 -o "$TMP/stall.data" 2>"$TMP/stall.err" &
	local rp=$!
	sleep 1
	kill -STOP "$rp"; sleep 3; kill -CONT "$rp"
	wait "$rp" || fail "record failed: $(tail -3 "$TMP/stall.err")" || return 1
	grep -m1 "attached again" "$TMP/stall.err" | sed 's/^/    /'
	grep -q "stalled past its .* lease" "$TMP/stall.err" || fail "no word of the stall" || return 1
	# polls were recorded after the stall (its last 0.8 s) at a tenth or more
	# of the rate before it (0.2 - 1 s): a rate, as a busy machine slows
	# the demo down throughout
	"$D9" polls -i "$TMP/stall.data" --sort start --limit 0 >"$TMP/stall.polls" || return 1
	polls_rate "$TMP/stall.polls" 0.2 1 4.2 5 ||
		fail "too few polls after the re-attach" || return 1
	# the gap, from the lapsed lease to the attach again: said, with its
	# length, by record and report
	local gap
	gap=$(sed -n 's/.*runtime events of the \([0-9.]*\) s gap are lost.*/\1/p' \
		"$TMP/stall.err" | head -1)
	[ -n "$gap" ] && awk -v g="$gap" 'BEGIN { exit !(g >= 0.2) }' ||
		fail "no gap of at least 0.2 s said: '$gap'" || return 1
	"$D9" report -i "$TMP/stall.data" >"$TMP/stall.report" || return 1
	grep -m1 "of runtime events in" "$TMP/stall.report" | sed 's/^/    /'
	grep -q "lost: .* of runtime events in 1 gap (the recorder stalled past the shim's lease" "$TMP/stall.report" ||
		fail "the report does not state the gap" || return 1
	# no poll spans the gap: a poll open when the shim let go ends there,
	# not at its worker's next BEGIN after the attach again (the demo's
	# polls take milliseconds), and the hog's polls, which only spin,
	# hold none of the blocker's sleeps from the gap
	! awk -v g="$gap" '/^[0-9]/ { d = $7; sub(/\+$/, "", d); n = d + 0; u = d
			sub(/^[0-9.]+/, "", u)
			s = n * (u == "s" ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : 1e-9)
			if (s >= g) print }' "$TMP/stall.polls" | head -3 | sed 's/^/    /' | grep . ||
		fail "polls as long as the $gap s gap (above)" || return 1
	"$D9" offcpu -i "$TMP/stall.data" --task 1 --format folded >"$TMP/stall.hog" || return 1
	! grep -qi nanosleep "$TMP/stall.hog" || fail "the hog's polls hold nanosleep" || return 1
}

t_forked_children_are_not_the_target() {
	sh -c 'while :; do timeout 0.2 yes >/dev/null; done' &
	HPID=$!
	PIDS+=("$HPID")
	sleep 0.3
	rec forkers || return 1
	grep -m1 "forked children" "$TMP/forkers.err" | sed 's/^/    /'
	grep -q "left out [0-9]* samples* of forked children" "$TMP/forkers.err" ||
		fail "children's samples not left out: $(cat "$TMP/forkers.err")" || return 1
	pkill -P "$HPID" 2>/dev/null || true # a child may be between two timeouts
}

t_output_never_follows_a_link_nor_clobbers() {
	echo "precious" >"$TMP/precious.txt"
	ln -s "$TMP/precious.txt" "$TMP/link.data"
	"$D9" record -o "$TMP/link.data" -- sleep 0.3 2>"$TMP/link.err" && fail "recorded through a link"
	grep -q "symbolic link" "$TMP/link.err" || fail "no word of the link: $(cat "$TMP/link.err")" ||
		return 1
	"$D9" record -o "$TMP/precious.txt" -- sleep 0.3 2>"$TMP/clob.err" && fail "clobbered a file"
	grep -q "not a d9prof trace" "$TMP/clob.err" || fail "$(cat "$TMP/clob.err")" || return 1
	[ "$(cat "$TMP/precious.txt")" = precious ] && [ ! -e "$TMP/precious.txt.old" ] ||
		fail "the file was touched" || return 1
	mkfifo "$TMP/fifo"
	timeout 5 "$D9" tasks -i "$TMP/fifo" 2>"$TMP/fifo.err"
	[ $? = 1 ] && grep -q "not a regular file" "$TMP/fifo.err" ||
		fail "a FIFO input: $(cat "$TMP/fifo.err")" || return 1
}

t_two_recorders_started_together_attach_one() {
	local i a b na
	"$ROOT/$B/examples/demo" -d 20 -q >"$TMP/race.out" 2>&1 &
	HPID=$!
	PIDS+=("$HPID")
	sleep 0.3
	# five times, both started at once: one of them is turned away
	for i in 1 2 3 4 5; do
		"$D9" record -p "$HPID" -d 0.5 -o "$TMP/ra$i.data" 2>"$TMP/ra$i.err" &
		a=$!
		"$D9" record -p "$HPID" -d 0.5 -o "$TMP/rb$i.data" 2>"$TMP/rb$i.err" &
		b=$!
		wait "$a" && wait "$b" || fail "a recorder failed: $(cat "$TMP/ra$i.err" "$TMP/rb$i.err")" ||
			return 1
		# the other one is turned away (it may attach once the first
		# left); neither turned away: both attached at once
		na=$(grep -l "another recorder (pid [0-9]*) is attached" "$TMP/ra$i.err" \
			"$TMP/rb$i.err" | wc -l)
		[ "$na" = 1 ] || fail "round $i: $na recorders turned away: $(cat "$TMP/ra$i.err" \
			"$TMP/rb$i.err")" || return 1
	done
	say "    5 rounds of two recorders at once: one turned away each time"
}

t_a_second_recorder_leaves_the_first_alone() {
	start_ready -2 "$TMP/two.out" "$ROOT/$B/examples/demo" -d 6 -q || return 1
	HPID=$SPID
	sleep 0.3
	"$D9" record -p "$HPID" -d 3 -o "$TMP/first.data" 2>"$TMP/first.err" &
	local fp=$! n
	sleep 0.7
	"$D9" record -p "$HPID" -d 1 -o "$TMP/second.data" 2>"$TMP/second.err" ||
		fail "the second recorder failed: $(cat "$TMP/second.err")" || return 1
	wait "$fp" || fail "the first recorder failed: $(cat "$TMP/first.err")" || return 1
	grep -m1 "another recorder" "$TMP/second.err" | sed 's/^/    /'
	grep -q "another recorder (pid $fp) is attached" "$TMP/second.err" ||
		fail "the second one did not say why it has no task ids" || return 1
	# the first one kept its events to the end: polls in its last second
	# at a tenth or more of the rate before the second came (0 - 0.7 s)
	"$D9" polls -i "$TMP/first.data" --sort start --limit 0 >"$TMP/first.polls" || return 1
	polls_rate "$TMP/first.polls" 0 0.7 2 3 ||
		fail "the first recorder lost its events" || return 1
}

# ---- nothing the target writes is believed past what could be real -------

# watch NAME SECS ARGS...: record the target for SECS s like rec (within
# SECS + 40 s of wall time), sampling every 0.2 s the recorder's own memory
# (RssAnon + RssShmem: its heap, rings and memfds, not the binaries and
# ELF files it maps, page cache that VmHWM and its summary count: 25 MiB
# more in one CI run than here) and the bytes of its flight memfds:
# NAME.hwm holds the most kB, NAME.memfd the most bytes. ASan's quarantine
# is kept to 8 MiB, so that the memory measured is the recorder's own.
watch() {
	local m=$1 secs=$2 rp rc t0=$SECONDS hwm=0 mem=0 h b f sum
	shift 2
	ASAN_OPTIONS="quarantine_size_mb=8:${ASAN_OPTIONS:-}" \
		"$D9" record -p "$HPID" -d "$secs" "$@" 2>"$TMP/$m.err" &
	rp=$!
	while kill -0 "$rp" 2>/dev/null; do
		h=$(awk '/^Rss(Anon|Shmem):/ { s += $2 } END { if (NR) print s }' \
			"/proc/$rp/status" 2>/dev/null)
		[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
		sum=0
		for f in /proc/"$rp"/fd/*; do
			[[ "$(readlink "$f" 2>/dev/null)" == /memfd:d9prof-flight* ]] || continue
			b=$(stat -L -c %s "$f" 2>/dev/null) && sum=$((sum + b))
		done
		[ "$sum" -gt "$mem" ] && mem=$sum
		[ $((SECONDS - t0)) -gt $((secs + 40)) ] && kill -KILL "$rp"
		sleep 0.2
	done
	wait "$rp"
	rc=$?
	[ "$rc" = 137 ] && { fail "the recorder hung (killed after $((secs + 40)) s)"; return 1; }
	[ "$rc" = 0 ] || fail "record failed ($rc): $(tail -3 "$TMP/$m.err")" || return 1
	grep -qi "AddressSanitizer\|runtime error" "$TMP/$m.err" &&
		fail "sanitizer report: $(grep -m3 -i 'sanitizer\|runtime error' "$TMP/$m.err")" && return 1
	echo "$hwm" >"$TMP/$m.hwm"
	echo "$mem" >"$TMP/$m.memfd"
}

# sees NAME: the target's threads, as /proc/HPID/task lists them every
# 0.1 s, into NAME.tids, in the background until it ends
sees() {
	(while [ -d "/proc/$HPID" ]; do ls "/proc/$HPID/task"; sleep 0.1; done) \
		>"$TMP/$1.tids" 2>/dev/null &
	PIDS+=("$!")
}

# real NAME: polls, tasks and report of NAME.data show no duration longer
# than the recording, no thread that was not one of the target's
# (NAME.tids) and no task 0 or ~0 (says what they show)
real() {
	local m=$1
	"$D9" report -i "$TMP/$m.data" --format json >"$TMP/$m.json" &&
		"$D9" polls -i "$TMP/$m.data" --limit 20 >"$TMP/$m.polls" &&
		"$D9" polls -i "$TMP/$m.data" --by thread --limit 0 >"$TMP/$m.bythread" &&
		"$D9" tasks -i "$TMP/$m.data" --limit 0 >"$TMP/$m.tasks" ||
		fail "the views failed on $m.data" || return 1
	python3 - "$TMP/$m" <<'PY'
import json, re, sys
m = sys.argv[1]
rep = json.load(open(m + ".json"))
span = rep["recorded"]["span_ns"]
tids = {int(t) for t in open(m + ".tids").read().split()}
bad, longest = [], 0
def walk(x, path):
    global longest
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, int) and k.endswith("_ns") and k != "span_ns":
                longest = max(longest, v)
                if v > span + 10**7:
                    bad.append("%s.%s = %d ns, the recording %d ns" % (path, k, v, span))
            if k == "tid" and isinstance(v, int) and v not in tids:
                bad.append("%s.tid = %d, not a thread of the target" % (path, v))
            if k == "task" and v in (0, 2**64 - 1):
                bad.append("%s.task = %d" % (path, v))
            walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i))
walk(rep, "report")
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
for view in ("polls", "bythread", "tasks"):
    for line in open(m + "." + view):
        if (line.startswith(("#", "POLL", "TASK", "THREAD")) or
                not line[:1].isalnum()):
            continue
        for tok in line.split():
            d = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)\+?", tok)
            if d and float(d.group(1)) * unit[d.group(2)] * 1e9 > span + 10**7:
                bad.append("%s: %s, the recording %.3f s" % (view, tok, span / 1e9))
        t = re.match(r"\S*\[(\d+)\]", line)
        if view == "bythread" and t and int(t.group(1)) not in tids:
            bad.append("%s: thread %s, not one of the target's" % (view, t.group(1)))
        if view == "tasks" and line.split()[0] in ("0", str(2**64 - 1)):
            bad.append("tasks: task %s" % line.split()[0])
print("    %s: %.2f s recorded, longest time shown %.3f s, threads shown %s; %s" % (
    m.split("/")[-1], span / 1e9, longest / 1e9,
    sorted({w["tid"] for w in rep["workers"]}), rep["recorded"].get("losses", {})))
for b in bad[:5]:
    print("    " + b)
sys.exit(1 if bad else 0)
PY
}

t_values_that_cannot_be_real_reach_no_view() {
	local m
	# forge: records well-formed but impossible, a ring of no thread;
	# scribble: 0xff over rings and records (recorded once: by
	# scribbled_rings_are_dropped_and_counted when it ran)
	for m in forge scribble; do
		if [ "$m" != scribble ] || [ "$SCRIBBLE_RECORDED" != 1 ]; then
			start "$m" 4 || return 1
			sees "$m"
			rec "$m" || return 1
		fi
		real "$m" || fail "$m: impossible values in the views (above)" || return 1
		grep -q "could not be real" "$TMP/$m.err" ||
			fail "$m: nothing said dropped: $(cat "$TMP/$m.err")" || return 1
	done
	grep -q "names thread 655736137, which pid [0-9]* does not have" "$TMP/forge.err" ||
		fail "the ring of no thread not said" || return 1
}

# a ctimer flood of 6 s (well-formed samples of made-up threads, and of
# the area's owner with ever new frames): the recorder takes no more than
# the sampler could at 999 Hz of the target's CPU time, says what it
# refused, and stays under 96 MiB of its own (in 20 s it took 414 MiB
# without ASan, 718 with, and 8.3M frames: past 128 MiB in 4 s)
t_a_ctimer_flood_is_refused_past_the_sampler_rate() {
	local hwm frames
	start flood 14 || return 1
	watch ctflood 6 -o "$TMP/ctflood.data" --sampler ctimer || return 1
	hwm=$(cat "$TMP/ctflood.hwm")
	frames=$(sed -n 's/.* \([0-9]*\) unique frames.*/\1/p' "$TMP/ctflood.err")
	say "    $(grep -m1 'recorded' "$TMP/ctflood.err" | cut -c9-)"
	grep "refused" "$TMP/ctflood.err" | sed 's/^d9prof: /    /'
	say "    recorder: $((hwm / 1024)) MiB at most"
	grep -q "refused [0-9]* ctimer samples that came faster" "$TMP/ctflood.err" ||
		fail "nothing refused" || return 1
	[ "$hwm" -lt $((96 * 1024)) ] || fail "the recorder took $((hwm / 1024)) MiB" || return 1
	[ "${frames:-0}" -lt 500000 ] || fail "$frames frames taken" || return 1
	"$D9" info -i "$TMP/ctflood.data" | grep -q "lost: .*ctimer samples refused" ||
		fail "info does not count them" || return 1
}

# a flood of poll, wake and spawn markers of ever new tasks (wakes never
# polled stay open) for 6 s, recorded with --flight --max-size 8M: the
# segments in memory (the recorder's memfds, measured from outside, and
# what it says it held) never pass 8 MiB, the recorder stays under 96 MiB
# (it took 627 MiB in 15 s, past 128 MiB in 4 s, held 8.2-9.6 MiB)
t_flight_memory_holds_under_a_marker_flood() {
	local hwm mem held
	start markers 14 || return 1
	watch flflood 6 --flight --max-size 8M -o "$TMP/flflood" || return 1
	hwm=$(cat "$TMP/flflood.hwm")
	mem=$(cat "$TMP/flflood.memfd")
	held=$(sed -n 's/.* \([0-9.]*\) MiB held at most.*/\1/p' "$TMP/flflood.err")
	say "    $(grep -m1 'recorded' "$TMP/flflood.err" | cut -c9-)"
	say "    recorder: $((hwm / 1024)) MiB at most; segments in memory: $mem bytes at most" \
		"seen, $held MiB held said; max-size 8 MiB"
	[ "$mem" -gt 0 ] || fail "no flight memfd seen" || return 1
	[ "$mem" -le $((8 << 20)) ] || fail "$mem bytes of segments in memory" || return 1
	awk -v h="${held:-99}" 'BEGIN { exit !(h <= 8) }' || fail "held $held MiB" || return 1
	[ "$hwm" -lt $((96 * 1024)) ] || fail "the recorder took $((hwm / 1024)) MiB" || return 1
}

# 65536 open spans, each named and with four fields, never closed (a
# server holding that many websockets): each flight segment started with
# ~18 MB of span state and was sealed at once, --flight=10s kept 0.13 s and
# info said "lost: nothing". The span state is sized to the segment
# budget now, what it refuses is a loss, and the window holds
t_open_spans_leave_the_flight_window_whole() {
	local f span held refused
	start openspans 16 || return 1
	watch flspans 7 --flight=3s --max-size 8M -o "$TMP/flspans" || return 1
	# in MiB, whatever unit it was said in (a slow machine holds less)
	held=$(sed -n 's/.* \([0-9.]*\) \([KMG]*\)i*B held at most.*/\1 \2/p' "$TMP/flspans.err" |
		awk '{ print $1 / ($2 == "" ? 1048576 : $2 == "K" ? 1024 : $2 == "M" ? 1 : 1 / 1024) }')
	f=$(ls -t "$TMP"/flspans/d9prof-*.data 2>/dev/null | head -1)
	[ -f "$f" ] || { cat "$TMP/flspans.err"; fail "no dump"; return 1; }
	span=$("$D9" info --json -i "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["span"]["duration_ns"] / 1e9)')
	refused=$("$D9" info --json -i "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["losses"].get("spans_left_out", 0))')
	say "    $(grep -m1 'flight recorder:' "$TMP/flspans.err" | cut -c9-)"
	say "    the last dump: $span s of the 3 s window; $refused open spans its start lacks (a loss)"
	awk -v s="$span" 'BEGIN { exit !(s >= 2.4) }' || fail "the dump holds $span s of a 3 s window" || return 1
	awk -v h="${held:-99}" 'BEGIN { exit !(h <= 8) }' || fail "held $held MiB" || return 1
	[ "${refused:-0}" -gt 0 ] || fail "nothing refused said" || return 1
}

# the same flood for 10 s with --rotate 1s: sealing a segment and opening
# the next never holds the lease past its end, and what is open, which
# each new segment's STATE carries, stays bounded (it grew to 4M tasks,
# 650 MiB, each seal taking up to 1.7 s to walk, sort and write it: the
# recorder lapsed once in 25 s here, 4 times in 30 s in the review)
t_rotation_keeps_the_lease_under_a_flood() {
	local n hwm
	start markers 14 || return 1
	watch rotflood 10 --rotate 1s -o "$TMP/rotflood" || return 1
	n=$(find "$TMP/rotflood" -name '*.d9' | wc -l)
	hwm=$(cat "$TMP/rotflood.hwm")
	say "    $(grep -m1 'recorded' "$TMP/rotflood.err" | cut -c9-)"
	say "    $n segment files; recorder: $((hwm / 1024)) MiB at most"
	! grep -m1 "stalled past its" "$TMP/rotflood.err" | sed 's/^/    /' | grep . ||
		fail "the lease lapsed" || return 1
	[ "$n" -ge 8 ] || fail "$n segment files for 10 s of --rotate 1s" || return 1
	[ "$hwm" -lt $((96 * 1024)) ] || fail "the recorder took $((hwm / 1024)) MiB" || return 1
}

# 272 threads that took (or tried for) a ring slot before the recorder
# came, 256 slots: the 16 without one are a loss everywhere it is said
t_threads_without_a_ring_slot_are_a_loss() {
	start threads 5 || return 1
	say "    $(ls "/proc/$HPID/task" | wc -l) threads"
	rec threads || return 1
	grep -m1 "found no free ring slot" "$TMP/threads.err" | sed 's/^d9prof: /    /'
	! grep -q "nothing lost" "$TMP/threads.err" || fail "the recorder said nothing lost" ||
		return 1
	grep -q "^d9prof: 16 threads of the target found no free ring slot" "$TMP/threads.err" ||
		fail "not said: $(cat "$TMP/threads.err")" || return 1
	"$D9" info -i "$TMP/threads.data" | grep -q "lost: *16 threads' runtime events" ||
		fail "info does not say it" || return 1
	"$D9" report -i "$TMP/threads.data" | grep -q "lost: .*16 threads' runtime events" ||
		fail "report does not say it" || return 1
}

# A real recording (the starve program under load, wakeups refused)
# whose chunks of samples held more bytes than its largest chunk of
# events: the walks shared one buffer sized in records of the last walk,
# and the views wrote past it (polls crashed). Under ASan: every view
# reads it whole, exit 0, no error
t_a_samples_chunk_larger_than_the_events_chunks_reads_whole() {
	local f=$ROOT/tests/e2e/fixtures/small-events-big-samples.data c
	for c in polls report tasks delays; do
		"$D9" "$c" -i "$f" >/dev/null 2>"$TMP/big.err" ||
			{ head -5 "$TMP/big.err"; fail "$c failed on $f"; return; }
		! grep -q 'ERROR: AddressSanitizer' "$TMP/big.err" ||
			{ head -5 "$TMP/big.err"; fail "$c: ASan"; return; }
	done
}

e2e_run_tests
