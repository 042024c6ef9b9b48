#!/usr/bin/env bash
# make bench: measure d9prof against its targets and its peers, print one
# table, and write it to $B/bench/results.txt.
#
#   1. shim markers      bench_shim, detached and with `d9prof record -p`
#   2. recording cost    2a-2c: PAIRS rounds, each one run per arm, the
#                        order rotating: no recorder (det), d9prof record -p
#                        (d9: BPF scheduler events), the same with --sched
#                        perf (d9perf), with --no-shim (d9ns), perf
#                        recording the same data, cpu-clock -g at 999 Hz and
#                        every sched_switch (perfsame), perf -g alone
#                        (perfg); of demo --bench-polls (2a, ~1.2M polls/s),
#                        bench_spin (2b, ~200k) and demo --bench-work-ns
#                        (2c, ~200k). Headline: CPU ns per poll, workload +
#                        recorder; targets decided on each round's paired
#                        ratios: d9 <= perfsame, d9 <= d9ns + 1% (+3% on
#                        2a), recorder <= 3% of a core on 2a, what d9 adds
#                        over det <= 0.5 x what perfsame adds; a breakdown
#                        (interrupts and switches, markers and rings, the
#                        recorders), and for 2a where the recorder's CPU
#                        goes (perf record -g of the recorder, untimed)
#                        and what one recording costs whatever its length;
#                        2d recorder RSS over a 60 s run; 2e leaf-caller
#                        step; 2h a target without frame pointers (d9prof's
#                        default and fp against perf --call-graph dwarf);
#                        2f wakeups; 2g flight recorder (FLIGHT_SECS
#                        of --flight=30s against plain recordings); 2j
#                        d9prof top; 2k what --upload costs the recorder
#                        (--rotate 1s to a local s3rver, with and without);
#                        2l what --offcpu-min saves on a target that
#                        blocks ~70k times a second; 2m the detectors as
#                        flight triggers; 2n the Parquet tables (the
#                        writer's rows/s, the tables' size against the
#                        segments', what --upload-tables costs);
#                        row 5 the Tokio binding;
#                        row 6 zero-code Tokio against perf -F 999 -g;
#                        row 8 ls and fleet of a simulated bucket of
#                        144,000 keys (100 hosts x a day of one-minute
#                        segments in a local s3rver)
#   3. analysis speed    a >= 1M-sample trace recorded by d9prof and perf at
#                        once; `d9prof flame --format folded` vs `perf script`
#   4. trace size        bytes per sample and per shim event
#
# Peers' figures are their published constants unless measured here (perf).
# A MISSED target is a result, not a failure; the script exits non-zero only
# when a step cannot run. On 2 cores: 2a-2c take ~10 minutes (6 arms x PAIRS
# x PAIR_SECS x 3 workloads, plus start-up), the whole bench ~33 minutes
# (2g alone is FLIGHT_SECS + 2 x FLIGHT_CMP_SECS).
#
# Environment (defaults in brackets): B [build], PAIRS [5] rounds of the
# interleaved runs (2a-2c: six arms; 2e, 2f, 5: two) of PAIR_SECS [5]
# seconds, RSS_SECS [60], FLIGHT_SECS [600], FLIGHT_CMP_SECS [60],
# BIG_SAMPLES [1000000], SAMPLE_HZ [25000], SPIN_US [8], DEMO_WORK_NS
# [8000], KEEP=1 keeps the traces in $B/bench/run, BENCH_ONLY=2 runs only
# sections 1 and 2a-2c (the overhead table, ~10 minutes) and prints the table,
# BENCH_ONLY=1 section 1 alone (the markers and spans, ~20 s), BENCH_ONLY=lean
# section 1 and rows 2o-2p (record --lean against perf, ~4 minutes), BENCH_ONLY=top
# row 2j alone (top's cost, ~2 minutes), BENCH_ONLY=2h
# row 2h alone (~1.5 minutes), BENCH_ONLY=2i row 2i alone (~1.5 minutes),
# BENCH_ONLY=upload row 2k alone (~1.5 minutes; s3rver from npm, as the
# e2e tests install it into $B/node/s3rver, or the row says skipped),
# BENCH_ONLY=2l row 2l alone (--offcpu-min, ~1 minute), BENCH_ONLY=zc row 6
# alone (zero-code Tokio against perf, ~2.5 minutes; ZC_SECS [8]),
# BENCH_ONLY=2m row 2m alone (the detectors as flight triggers, ~2
# minutes), BENCH_ONLY=tables row 2n alone (the Parquet tables, ~2
# minutes; s3rver as row 2k), BENCH_ONLY=scale row 7 alone (the views on traces of SCALE_SECS ["10 30"]
# seconds of the demo's --bench-polls against perf script; a few minutes),
# BENCH_ONLY=bucket row 8 alone (ls of a simulated bucket of 144,000 keys
# in s3rver and fleet over a window of BUCKET_WINDOW [10] minutes of it:
# wall time and peak RSS; ~3 minutes, with ~2 GB of small files in
# /dev/shm where it has 8 GB free, else in $B/bench/run, where deleting
# them takes ~10 minutes more).
set -u

B=${B:-build}
PAIRS=${PAIRS:-5}
BENCH_ONLY=${BENCH_ONLY:-}	# 2: sections 1 and 2a-2c only
PAIR_SECS=${PAIR_SECS:-5}
RSS_SECS=${RSS_SECS:-60}
FLIGHT_SECS=${FLIGHT_SECS:-600}	# the flight recorder's long run (2g)
FLIGHT_CMP_SECS=${FLIGHT_CMP_SECS:-60}	# each plain recording it is compared with
BIG_SAMPLES=${BIG_SAMPLES:-1000000}
SAMPLE_HZ=${SAMPLE_HZ:-25000}
SPIN_US=${SPIN_US:-8}		# bench_spin poll size for ~200k polls/s on 2 threads
DEMO_WORK_NS=${DEMO_WORK_NS:-8000}	# demo --bench-work-ns for ~200k polls/s
ZC_SECS=${ZC_SECS:-8}		# zero-code Tokio's runs (row 6)
SCALE_SECS=${SCALE_SECS:-10 30}	# trace lengths of row 7 (analysis scale)
BUCKET_HOSTS=${BUCKET_HOSTS:-100}	# row 8's bucket: hosts,
BUCKET_MINUTES=${BUCKET_MINUTES:-1440}	# ... one-minute segments each,
BUCKET_WINDOW=${BUCKET_WINDOW:-10}	# ... and fleet's window, minutes
KEEP=${KEEP:-0}

D9=$B/d9prof
DEMO=$B/examples/demo
SHIM=$B/bench/bench_shim
SPIN=$B/bench/bench_spin
PARQUET=$B/bench/bench_parquet
TOKIO=$B/cargo/release/d9demo-tokio
FPLESS=$B/e2e/fpless/recurse
ZCAPP=$B/zerocode/fp/release/zcapp
RUN=$B/bench/run
RESULTS=$B/bench/results.txt
TIME=/usr/bin/time

# ---- plumbing --------------------------------------------------------------

PIDS=""
cleanup() {
	local p
	for p in $PIDS; do
		# our /usr/bin/time wrappers first pass nothing on: their children
		pkill -TERM -P "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null
	done
	PIDS=""
	# (row 8's bucket, ~2 GB in /dev/shm, when it was cut short)
	[ -n "${BUCKET_DATA:-}" ] && rm -rf "$BUCKET_DATA"
	if [ "$KEEP" != 1 ]; then
		rm -f "$RUN"/*.d9 "$RUN"/*.d9.old "$RUN"/perf.data "$RUN"/perf.data.old \
			"$RUN"/*.folded 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT TERM
trap 'exit 1' USR1

# die MESSAGE: stop the whole script, also from inside $(...)
die() {
	echo "bench: $*" >&2
	[ "$BASH_SUBSHELL" -gt 0 ] && kill -USR1 $$
	exit 1
}
say() {
	echo "bench: $*" >&2
}

# Start "$@" in the background with stdout/stderr to $1.out/$1.err; the pid
# goes to $BG and to the cleanup list.
bg() {
	local name=$1
	shift
	"$@" >"$RUN/$name.out" 2>"$RUN/$name.err" &
	BG=$!
	PIDS="$PIDS $BG"
}
# Forget a pid we have waited for.
reaped() {
	PIDS=$(echo " $PIDS " | sed "s/ $1 / /")
}
# stop_bg PID [SIGNAL]: stop a pid started in the background (TERM by
# default), wait for it and forget it.
stop_bg() {
	kill -"${2:-TERM}" "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	reaped "$1"
}
# run CMD...: like running CMD in the foreground, but an INT or TERM sent
# to this script interrupts the wait at once (bash defers traps while a
# foreground child runs) and the cleanup stops CMD.
run() {
	"$@" &
	local p=$! rc
	PIDS="$PIDS $p"
	wait "$p"
	rc=$?
	reaped "$p"
	return $rc
}
# wait_bg PID WHAT: wait, die if it failed.
wait_bg() {
	wait "$1"
	local rc=$?
	reaped "$1"
	[ $rc = 0 ] || die "$2 failed (exit $rc); see $RUN/"
}
# wait_line FILE REGEX SECONDS
wait_line() {
	local i
	for i in $(seq $(($3 * 20))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	die "no '$2' in $1 after $3 s"
}
# key VALUE from "key value" lines
kv() {
	awk -v k="$2" '$1 == k { v = $2 } END { if (v == "") exit 1; print v }' "$1" ||
		die "no '$2' in $1"
}
# calc EXPR: an integer as such, anything else with 3 decimals
calc() {
	awk "BEGIN { v = ($*); if (v == int(v)) printf \"%.0f\", v; else printf \"%.3f\", v }" </dev/null
}
# round DECIMALS EXPR
round() {
	awk "BEGIN { printf \"%.$1f\", ($2) }" </dev/null
}
fsize() {
	stat -c %s "$1" || die "no file $1"
}
loadavg() {
	cut -d' ' -f1-3 /proc/loadavg
}
# recorder summary fields from its stderr
rec_samples() {
	sed -n 's/.*: \([0-9]*\) samples (.*/\1/p' "$1" | tail -1
}
rec_events() {
	sed -n 's/.*samples ([^)]*), \([0-9]*\) shim events.*/\1/p' "$1" | tail -1
}
rec_drops() {
	local d
	d=$(sed -n 's/.*dropped \([0-9]*\) shim events.*/\1/p' "$1" | tail -1)
	echo "${d:-0}"
}
rec_lost() {
	local d
	d=$(sed -n 's/.*lost \([0-9]*\) samples.*/\1/p' "$1" | tail -1)
	echo "${d:-0}"
}

# ---- the table ---------------------------------------------------------------

ROWS=()
# row ID MEASURE D9PROF PEER RATIO TARGET RESULT
row() {
	ROWS+=("$(printf '%-4s|%-44s|%-16s|%-22s|%-9s|%-22s|%s' "$@")")
}
verdict() {	# verdict AWK-CONDITION -> MET / MISSED
	if awk "BEGIN { exit !($1) }" </dev/null; then echo MET; else echo MISSED; fi
}
print_table() {
	{
		echo "d9prof benchmarks ($(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r)," \
			"$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
		echo "load average: at start $LOAD0; at end $(loadavg);" \
			"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
		echo
		printf '%-4s|%-44s|%-16s|%-22s|%-9s|%-22s|%s\n' \
			"row" "measure" "d9prof" "peer" "ratio" "target" "result"
		printf '%s\n' "----+--------------------------------------------+----------------+----------------------+---------+----------------------+-------"
		printf '%s\n' "${ROWS[@]}"
		echo
		echo "peers: dial9 ~50 ns/event and <1% overhead, Go execution tracer ~1%:"
		echo "published constants, not measured here. perf: measured in this run."
		printf '%s\n' "${NOTES[@]}"
	} | tee "$RESULTS"
}
NOTES=()
FAILED=0
note() {
	NOTES+=("note: $*")
}

# ---- prerequisites -------------------------------------------------------------

for t in perf hyperfine awk; do
	command -v $t >/dev/null || die "'$t' not found: run scripts/install-deps.sh"
done
[ -x $TIME ] || die "$TIME not found: run scripts/install-deps.sh (package 'time')"
for f in "$D9" "$DEMO" "$SHIM" "$SPIN"; do
	[ -x "$f" ] || die "'$f' is not built: run 'make bench'"
done
perf stat -e cpu-clock -x, true >/dev/null 2>&1 ||
	die "perf cannot count cpu-clock here (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
MAX_RATE=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 100000)
mkdir -p "$RUN" || die "cannot create $RUN"
rm -f "$RUN"/*
LOAD0=$(loadavg)
T_START=$(date +%s)
say "load average $LOAD0 (other work on this machine makes the figures noisy)"

median() {
	echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.15g", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
maxof() {
	echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -g | tail -1
}
minof() {
	echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -g | head -1
}
# lastof "VALUES": the last one (this round's)
lastof() {
	echo "$@" | awk '{ print $NF }'
}
# med DECIMALS "VALUES": the median, rounded
med() {
	awk -v v="$(median $2)" -v d="$1" 'BEGIN { printf "%.*f", d, v }'
}
# span "VALUES": "min..max"
span() {
	echo "$(minof $1)..$(maxof $1)"
}
# spread_verdict "VALUES" LIMIT: MET if all rounds are <= LIMIT, MISSED if
# all are above, else "within noise" (the rounds straddle it)
spread_verdict() {
	local lo hi
	lo=$(minof $1)
	hi=$(maxof $1)
	if awk -v h="$hi" -v l="$2" 'BEGIN { exit !(h <= l) }'; then
		echo MET
	elif awk -v x="$lo" -v l="$2" 'BEGIN { exit !(x > l) }'; then
		echo MISSED
	else
		echo "undecided within noise (median $(median $1))"
	fi
}

# A target without frame pointers (tests/e2e/fpless/recurse: 40 calls deep,
# gcc -O2 -g -fomit-frame-pointer, spinning at the bottom), PAIRS rounds of
# PAIR_SECS each, the order rotating: d9prof record -p at its defaults
# (auto: dwarf,8192 here) and with --call-graph fp (the 512-byte leaf
# step), both without off-CPU and wakeups, and perf record --call-graph
# dwarf (cpu-clock at 999 Hz; perf unwinds later, in perf script, whose
# CPU is stated apart). The recorders' CPU per sample (user + system of
# the recorder process over the same time, divided by its samples; ratios
# paired within a round) and the share of samples whose stack reaches main.
fpless_row() {
	local i k arm name pid e u s m n ras="" rfs="" rps="" rat="" a9="" af="" ap="" pscr=""
	if [ ! -x "$FPLESS" ]; then
		row 2h "no frame pointers (fpless/recurse)" "n/a" "-" "-" "-" "not built"
		return
	fi
	bg 2h-target "$FPLESS" 100000
	pid=$BG
	sleep 0.5
	for i in $(seq "$PAIRS"); do
		for k in 0 1 2; do
			arm=$(echo d9 d9fp perf | cut -d' ' -f$(((i - 1 + k) % 3 + 1)))
			name=2h-$arm-$i
			case $arm in
			d9 | d9fp)
				run $TIME -f '%e %U %S %M' -o "$RUN/$name.time" "$D9" record -p "$pid" \
					-d "$PAIR_SECS" --no-offcpu --no-wakeups \
					$([ $arm = d9fp ] && echo --call-graph fp) -o "$RUN/$name.d9" \
					2>"$RUN/$name-rec.err" ||
					die "d9prof record -p ($name) failed: $(tail -1 "$RUN/$name-rec.err")"
				n=$(rec_samples "$RUN/$name-rec.err")
				"$D9" flame -i "$RUN/$name.d9" --format folded >"$RUN/$name.folded" \
					2>/dev/null || die "flame of $name failed"
				;;
			perf)
				run $TIME -f '%e %U %S %M' -o "$RUN/$name.time" perf record -q \
					-e cpu-clock -F 999 --call-graph dwarf -p "$pid" \
					-o "$RUN/$name.data" -- sleep "$PAIR_SECS" \
					2>"$RUN/$name-rec.err" ||
					die "perf record ($name) failed: $(tail -1 "$RUN/$name-rec.err")"
				n=$(perf report -i "$RUN/$name.data" --stats 2>/dev/null |
					awk '/SAMPLE events:/ { print $3; exit }')
				run $TIME -f '%e %U %S %M' -o "$RUN/$name.script.time" sh -c \
					"perf script -i '$RUN/$name.data' -F ip,sym >'$RUN/$name.script' 2>/dev/null"
				pscr="$pscr $(calc "$(tail -1 "$RUN/$name.script.time" | awk '{ print $2 + $3 }') * 1e6 / $n")"
				;;
			esac
			read -r e u s m <<<"$(tail -1 "$RUN/$name.time")"
			case $arm in
			d9) ras="$ras $(calc "($u + $s) * 1e6 / $n")"
			    a9="$a9 $(reach_main "$RUN/$name.folded")" ;;
			d9fp) rfs="$rfs $(calc "($u + $s) * 1e6 / $n")"
			    af="$af $(reach_main "$RUN/$name.folded")" ;;
			perf) rps="$rps $(calc "($u + $s) * 1e6 / $n")"
			    ap="$ap $(awk 'BEGIN { RS = "" } { t++; if ($0 ~ /[ \t]main(\n|$)/) m++ }
				END { printf "%.1f", t ? 100 * m / t : 0 }' "$RUN/$name.script")" ;;
			esac
		done
		rat="$rat $(calc "$(lastof $ras) / $(lastof $rps)")"
	done
	stop_bg "$pid"
	row 2h "no frame pointers (fpless/recurse, gcc -O2)" "" "" "" "" ""
	row "" "  recorder CPU per sample, us (auto; fp)" "$(med 1 "$ras"); $(med 1 "$rfs")" \
		"perf dwarf $(med 1 "$rps")" "$(med 3 "$rat")" "< 1 (below perf)" \
		"$(spread_verdict "$rat" 1) ($(span "$rat"))"
	row "" "  samples reaching main, % (auto; fp)" "$(med 1 "$a9"); $(med 1 "$af")" \
		"perf dwarf $(med 1 "$ap")" "-" ">= 95" \
		"$(verdict "$(minof $a9) >= 95") ($(span "$a9"))"
	note "2h perf unwinds afterwards: perf script took $(med 1 "$pscr") us of CPU per sample"
}
# reach_main FOLDED: % of the samples whose stack holds main
reach_main() {
	awk '{ n = $NF; t += n; if ($0 ~ /(^|;)main(;| [0-9]+$)/) m += n }
		END { printf "%.1f", t ? 100 * m / t : 0 }' "$1"
}
# What recording every CPU's switches costs (who held the CPU while the
# target waited: sched:sched_switch on every CPU, unfiltered, no stacks):
# a bystander that switches all the time (perf bench sched pipe, both ends
# on CPU 1: two switches an op) runs while d9prof records the demo at its
# defaults (d9), with --no-wakeups (d9nw: no system-wide event at all) and
# with no recorder (none), PAIRS rounds, the order rotating. Its us/op per
# arm, the ratio d9/d9nw paired within a round (what the system-wide
# events cost every switch on the machine), and the recorder's CPU per
# switch of the machine over the recording (/proc/stat ctxt).
switches_row() {
	local i k arm name pid e u s m us c0 c1 ud="" un="" u0="" rat="" per="" cd cn nsw
	bg 2i-target "$DEMO" -w 2
	pid=$BG
	sleep 0.5
	for i in $(seq "$PAIRS"); do
		for k in 0 1 2; do
			arm=$(echo d9 d9nw none | cut -d' ' -f$(((i - 1 + k) % 3 + 1)))
			name=2i-$arm-$i
			c0=$(awk '/^ctxt/ { print $2 }' /proc/stat)
			case $arm in
			d9 | d9nw)
				$TIME -f '%e %U %S %M' -o "$RUN/$name.time" "$D9" record -p "$pid" \
					-d "$PAIR_SECS" $([ $arm = d9nw ] && echo --no-wakeups) \
					-o "$RUN/$name.d9" 2>"$RUN/$name-rec.err" &
				;;
			none) sleep "$PAIR_SECS" & ;;
			esac
			sleep 1
			us=$(taskset -c 1 perf bench sched pipe -l 50000 2>/dev/null |
				awk '/usecs\/op/ { print $1 }')
			wait $! || die "d9prof record -p ($name) failed: $(tail -1 "$RUN/$name-rec.err")"
			c1=$(awk '/^ctxt/ { print $2 }' /proc/stat)
			case $arm in
			d9) ud="$ud $us"
			    read -r e u s m <<<"$(tail -1 "$RUN/$name.time")"
			    cd=$(calc "$u + $s") nsw=$((c1 - c0)) ;;
			d9nw) un="$un $us"
			    read -r e u s m <<<"$(tail -1 "$RUN/$name.time")"
			    cn=$(calc "$u + $s") ;;
			none) u0="$u0 $us" ;;
			esac
		done
		rat="$rat $(calc "$(lastof $ud) / $(lastof $un)")"
		per="$per $(calc "($cd - $cn) * 1e9 / $nsw")"
	done
	stop_bg "$pid"
	row 2i "every CPU's switches (who held the CPU)" "" "" "" "" ""
	row "" "  bystander pipe us/op (d9; --no-wakeups)" "$(med 2 "$ud"); $(med 2 "$un")" \
		"no recorder $(med 2 "$u0")" "$(med 3 "$rat")" "stated" \
		"- ($(span "$rat"))"
	row "" "  recorder CPU per machine switch, ns (over d9nw)" "$(med 0 "$per")" "-" "-" \
		"stated" "- ($(span "$per"))"
}
# A target that blocks ~70k times a second: perf bench sched pipe -T (two
# threads passing a token through pipes) pinned to CPU 1, recorded with -p
# for PAIR_SECS, PAIRS rounds, the order rotating: d9prof with BPF
# scheduler events (d9), the same with --offcpu-min 1ms (d9min: the short
# intervals' stacks stay in the kernel), and --sched perf (d9perf). The
# recorder's own CPU (its summary) per off-CPU interval written, and the
# target's round trips per second over the recording.
min_row() {
	local i k arm name pid cpu n ops pd="" pm="" pp="" od="" om="" op="" rat=""
	if ! perf bench sched pipe -T -l 10 >/dev/null 2>&1; then
		row 2l "record --offcpu-min, perf bench sched pipe" "-" "-" "-" "-" \
			"skipped: no perf bench"
		return
	fi
	bg 2l-target taskset -c 1 perf bench sched pipe -T -l 2000000000
	pid=$BG
	sleep 0.5
	for i in $(seq "$PAIRS"); do
		for k in 0 1 2; do
			arm=$(echo d9 d9min d9perf | cut -d' ' -f$(((i - 1 + k) % 3 + 1)))
			name=2l-$arm-$i
			# shellcheck disable=SC2046
			run "$D9" record -p "$pid" -d "$PAIR_SECS" -o "$RUN/$name.d9" $(case $arm in
				d9) echo --sched bpf ;;
				d9min) echo --sched bpf --offcpu-min 1ms ;;
				d9perf) echo --sched perf ;;
				esac) 2>"$RUN/$name.err" ||
				die "d9prof record ($name) failed: $(tail -1 "$RUN/$name.err")"
			cpu=$(sed -n 's/.*recorder used \([0-9.]*\) s of CPU.*/\1/p' "$RUN/$name.err")
			n=$(sed -n 's/.*off-CPU ([a-z-]*): \([0-9]*\) switch.*/\1/p' "$RUN/$name.err")
			[ -n "$cpu" ] && [ -n "$n" ] && [ "$n" -gt 0 ] ||
				die "no recorder CPU or switches in $RUN/$name.err"
			# a round trip is two intervals
			ops=$(calc "$n / 2 / $PAIR_SECS")
			case $arm in
			d9) pd="$pd $(calc "$cpu * 1e9 / $n")" od="$od $ops" ;;
			d9min) pm="$pm $(calc "$cpu * 1e9 / $n")" om="$om $ops" ;;
			d9perf) pp="$pp $(calc "$cpu * 1e9 / $n")" op="$op $ops" ;;
			esac
		done
		rat="$rat $(calc "$(lastof $pm) / $(lastof $pd)")"
	done
	stop_bg "$pid"
	row 2l "a blocking target: perf bench sched pipe -T" "" "" "" "" ""
	row "" "  recorder CPU per interval, ns (bpf; --offcpu-min 1ms)" \
		"$(med 0 "$pd"); $(med 0 "$pm")" "--sched perf $(med 0 "$pp")" "$(med 3 "$rat")" \
		"stated" "- ($(span "$rat"))"
	row "" "  target round trips/s (bpf; --offcpu-min 1ms)" "$(med 0 "$od"); $(med 0 "$om")" \
		"--sched perf $(med 0 "$op")" "-" "stated" "-"
}
# Zero-code Tokio's cost (row 6): an unmodified Tokio program doing ~5M
# short polls a second on one worker (tests/e2e/zerocode: zcapp bench, 8
# tasks that yield after a little work), ZC_SECS long, run alone (det),
# under `d9prof record -- CMD` (task ids read at each sample and
# switch-out) and under `perf record -F 999 -g -- CMD`, PAIRS rounds, the
# order rotating. CPU per poll: the whole command's user + system time
# (the program's and the recorder's, /usr/bin/time) over the polls the
# program counted itself. Target: d9 within 3% of perf, paired per round.
# And --tokio probes=0 (tier 1, uprobes on every poll, no cap): the ns
# it adds per poll over the run alone, and what that is at 10k and 100k
# polls a second.
zerocode_row() {
	local i k arm name t polls rd="" rp="" rdet="" rat="" add="" rpr="" padd=""
	if [ ! -x "$ZCAPP" ]; then
		row 6 "zero-code Tokio: CPU per poll" "-" "-" "-" "-" "skipped: no $ZCAPP (needs cargo)"
		return
	fi
	for i in $(seq "$PAIRS"); do
		for k in 0 1 2 3; do
			arm=$(echo det d9 perf d9p | cut -d' ' -f$(((i - 1 + k) % 4 + 1)))
			name=zc-$arm-$i
			case $arm in
			det) run $TIME -f "%U %S" -o "$RUN/$name.time" "$ZCAPP" bench "$ZC_SECS" \
				>"$RUN/$name.out" 2>"$RUN/$name.err" ;;
			d9) run $TIME -f "%U %S" -o "$RUN/$name.time" "$D9" record \
				-o "$RUN/$name.d9" -- "$ZCAPP" bench "$ZC_SECS" \
				>"$RUN/$name.out" 2>"$RUN/$name.err" ;;
			perf) run $TIME -f "%U %S" -o "$RUN/$name.time" perf record -F 999 -g \
				-o "$RUN/$name.perf" -- "$ZCAPP" bench "$ZC_SECS" \
				>"$RUN/$name.out" 2>"$RUN/$name.err" ;;
			d9p) run $TIME -f "%U %S" -o "$RUN/$name.time" "$D9" record \
				--tokio probes=0 -o "$RUN/$name.d9" -- "$ZCAPP" bench "$ZC_SECS" \
				>"$RUN/$name.out" 2>"$RUN/$name.err" ;;
			esac || die "$name failed: $(tail -1 "$RUN/$name.err")"
			[ "$arm" != d9 ] || grep -q "zero-code" "$RUN/$name.err" ||
				die "$name: no zero-code task ids: $(grep -m1 Tokio "$RUN/$name.err")"
			t=$(awk '{ print $1 + $2 }' "$RUN/$name.time")
			polls=$(kv "$RUN/$name.out" bench_polls)
			case $arm in
			det) rdet="$rdet $(calc "$t * 1e9 / $polls")" ;;
			d9) rd="$rd $(calc "$t * 1e9 / $polls")" ;;
			perf) rp="$rp $(calc "$t * 1e9 / $polls")" ;;
			d9p) rpr="$rpr $(calc "$t * 1e9 / $polls")" ;;
			esac
			rm -f "$RUN/$name.d9" "$RUN/$name.perf"
		done
		rat="$rat $(calc "$(lastof $rd) / $(lastof $rp)")"
		add="$add $(calc "$(lastof $rd) - $(lastof $rdet)")/$(calc "$(lastof $rp) - $(lastof $rdet)")"
		padd="$padd $(calc "$(lastof $rpr) - $(lastof $rdet)")"
	done
	row 6 "zero-code Tokio, zcapp bench (1 worker, ${ZC_SECS} s)" "" "" "" "" ""
	row "" "  CPU ns/poll, program + recorder" "$(med 1 "$rd")" "perf -F 999 -g $(med 1 "$rp")" \
		"$(med 3 "$rat")" "<= 1.03 x perf" "$(spread_verdict "$rat" 1.03)"
	row "" "  alone, ns/poll; added by d9/perf per round" "$(med 1 "$rdet")" "$add" "-" \
		"stated" "- ($(span "$rat"))"
	row "" "  --tokio probes: ns/poll added (tier 1)" "$(med 0 "$padd")" "-" "-" "stated" \
		"- ($(span "$padd"))"
	row "" "  ... % of a core at 10k; 100k polls/s" \
		"$(round 1 "$(median $padd) * 1e4 / 1e7"); $(round 1 "$(median $padd) * 1e5 / 1e7")" \
		"-" "-" "stated" "-"
}
# Row 7, analysis at scale: a trace of the demo's --bench-polls (~1.2M
# polls/s) per length in SCALE_SECS, each view timed on it once (wall
# time, peak RSS), against `perf script` on a perf.data of the same
# samples (perf record -F 999 -g of the same run length).
scale_view() {	# scale_view NAME FILE ARGS...: "SECONDS MiB"
	local name=$1 f=$2
	shift 2
	run $TIME -f "%e %M" -o "$RUN/scale-$name.time" "$D9" "$@" -i "$f" \
		>/dev/null 2>"$RUN/scale-$name.err" || {
		echo "failed"
		return
	}
	awk '{ printf "%.2f s %.0f MiB", $1, $2 / 1024 }' "$RUN/scale-$name.time"
}
scale_row() {
	local s f v first=1 out t0 base mem lim
	for s in $SCALE_SECS; do
		f=$RUN/scale-$s.d9
		run "$D9" record -o "$f" -- "$DEMO" --bench-polls -d "$s" -q \
			>"$RUN/scale-$s.out" 2>"$RUN/scale-$s.rec" ||
			die "scale: record of $s s failed: $(tail -1 "$RUN/scale-$s.rec")"
		run perf record -F 999 -g -o "$RUN/scale-$s.perf" -- "$DEMO" --bench-polls -d "$s" -q \
			>/dev/null 2>&1 || die "scale: perf record of $s s failed"
		run $TIME -f "%e %M" -o "$RUN/scale-perf.time" perf script -i "$RUN/scale-$s.perf" \
			>/dev/null 2>&1 || die "scale: perf script failed"
		base=$(awk '{ printf "%.2f s %.0f MiB", $1, $2 / 1024 }' "$RUN/scale-perf.time")
		[ $first = 1 ] && row 7 "analysis scale: demo --bench-polls traces" "" "" "" "" ""
		first=0
		row "" "  ${s} s: $(kv "$RUN/scale-$s.out" polls_per_sec) polls/s, $(round 1 "$(fsize "$f") / 1048576") MiB" \
			"" "perf script $base" "" "" ""
		for v in report tasks "delays --min 1ms" "polls --min 1ms" \
			"offcpu --format folded" "flame --format folded" \
			"export --format pprof -o -" "export --format speedscope -o -" \
			"export --format chrome -o -"; do
			# shellcheck disable=SC2086
			out=$(scale_view "$(echo "$v" | tr ' ' _)-$s" "$f" $v)
			t0=${out%% s*}
			mem=$(echo "$out" | awk '{ print $3 }')
			case $v in
			report) lim=5 ;;
			tasks | delays*) lim=10 ;;
			*) lim= ;;
			esac
			row "" "    $v" "$out" "" "" \
				"${lim:+<= $lim s at 30 s, }<= 512 MiB" \
				"$(if [ "$out" = failed ]; then echo MISSED
				elif [ -n "$lim" ] && [ "$s" = 30 ]; then verdict "$t0 <= $lim && $mem <= 512"
				else verdict "$mem <= 512"; fi)"
		done
		[ "$KEEP" = 1 ] || rm -f "$f" "$RUN/scale-$s.perf"
		# the spans view on a trace with spans: requests of 10 polls
		f=$RUN/scale-spans-$s.d9
		run "$D9" record -o "$f" -- "$DEMO" --bench-polls --bench-spans 10 -d "$s" -q \
			>"$RUN/scale-spans-$s.out" 2>"$RUN/scale-spans-$s.rec" ||
			die "scale: record of $s s with spans failed: $(tail -1 "$RUN/scale-spans-$s.rec")"
		row "" "  ${s} s with --bench-spans 10: $(kv "$RUN/scale-spans-$s.out" polls_per_sec) polls/s, $(round 1 "$(fsize "$f") / 1048576") MiB" \
			"" "" "" "" ""
		for v in spans "spans --instances" report "export --format pprof -o -"; do
			# shellcheck disable=SC2086
			out=$(scale_view "spans-$(echo "$v" | tr ' ' _)-$s" "$f" $v)
			t0=${out%% s*}
			mem=$(echo "$out" | awk '{ print $3 }')
			case $v in
			spans*) lim=10 ;;
			*) lim= ;;
			esac
			row "" "    $v" "$out" "" "" "${lim:+<= $lim s at 30 s, }<= 512 MiB" \
				"$(if [ "$out" = failed ]; then echo MISSED
				elif [ -n "$lim" ] && [ "$s" = 30 ]; then verdict "$t0 <= $lim && $mem <= 512"
				else verdict "$mem <= 512"; fi)"
		done
		[ "$KEEP" = 1 ] || rm -f "$f"
	done
}
if [ "$BENCH_ONLY" = scale ]; then
	scale_row
	note "BENCH_ONLY=scale: row 7 only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = zc ]; then
	zerocode_row
	note "BENCH_ONLY=zc: row 6 only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = 2l ]; then
	min_row
	note "BENCH_ONLY=2l: row 2l only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = 2i ]; then
	switches_row
	note "BENCH_ONLY=2i: row 2i only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
# CPU seconds of pid $1 so far
top_cpu() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null |
		awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($12 + $13) / t }'
}
# settled_cpu DIGITS PID: CPU % of one core PID used over PAIR_SECS, after
# 2 s to settle (its start-up left out), to DIGITS decimals
settled_cpu() {
	local c0 c1
	sleep 2
	c0=$(top_cpu "$2")
	sleep "$PAIR_SECS"
	c1=$(top_cpu "$2")
	round "$1" "100 * ($c1 - $c0) / $PAIR_SECS"
}
# `d9prof top` (issue 28): its CPU beside a flight recorder (the usual
# case: it reads the recording's live view, which the recorder feeds only
# then) and alone (a recording of its own), next to the recorder alone,
# PAIRS rounds of PAIR_SECS on the demo at ~200k polls/s, the order
# reversed every other round. CPU % of one core of the d9prof processes.
top_row() {
	local wpid i arm order rpid tpid c0 c1 t0 t1 fl="" bes="" add="" alone="" plain=""
	bg top-demo "$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q -d 100000
	wpid=$BG
	wait_line "$RUN/top-demo.out" '^pid' 30
	for i in $(seq "$PAIRS"); do
		order="flight beside alone plain"
		[ $((i % 2)) = 0 ] && order="plain alone beside flight"
		for arm in $order; do
			rpid="" tpid=""
			case $arm in
			flight | beside)
				mkdir -p "$RUN/top-fl"
				bg "top-$arm-$i" "$D9" record -p "$wpid" --flight=30s -o "$RUN/top-fl"
				rpid=$BG
				wait_line "$RUN/top-$arm-$i.err" 'attached to the d9prof shim' 30
				;;
			plain)
				bg "top-$arm-$i" "$D9" record -p "$wpid" -o "$RUN/top-plain.d9"
				rpid=$BG
				wait_line "$RUN/top-$arm-$i.err" 'attached to the d9prof shim' 30
				;;
			esac
			if [ "$arm" = beside ] || [ "$arm" = alone ]; then
				bg "top-ui-$arm-$i" "$D9" top -p "$wpid" -b -d 1
				tpid=$BG
			fi
			sleep 2
			c0=$([ -n "$rpid" ] && top_cpu "$rpid" || echo 0)
			t0=$([ -n "$tpid" ] && top_cpu "$tpid" || echo 0)
			sleep "$PAIR_SECS"
			c1=$([ -n "$rpid" ] && top_cpu "$rpid" || echo 0)
			t1=$([ -n "$tpid" ] && top_cpu "$tpid" || echo 0)
			for p in $tpid $rpid; do
				stop_bg "$p" INT
			done
			rm -rf "$RUN/top-fl" "$RUN/top-plain.d9"
			v=$(calc "100 * ($c1 - $c0 + $t1 - $t0) / $PAIR_SECS")
			case $arm in
			flight) fl="$fl $v" ;;
			beside) bes="$bes $v" ;;
			alone) alone="$alone $v" ;;
			plain) plain="$plain $v" ;;
			esac
		done
		add="$add $(calc "$(lastof $bes) - $(lastof $fl)")"
	done
	stop_bg "$wpid"
	row 2j "d9prof top, demo ~200k polls/s, CPU % of a core" "" "" "" "" ""
	row "" "  beside a flight recorder: added CPU" "$(med 1 "$add")" \
		"flight alone $(med 1 "$fl")" "-" "<= 3 (a few %)" \
		"$(spread_verdict "$add" 3) ($(span "$add"))"
	row "" "  alone (its own recording) / record alone" "$(med 1 "$alone")" \
		"record $(med 1 "$plain")" "$(calc "$(median $alone) / $(median $plain)")" \
		"<= record + 3" "$(verdict "$(median $alone) <= $(median $plain) + 3")"
}

# s3rver for rows 2k and 8, by tests/e2e/s3lib.sh (installed from npm
# into $B/node/s3rver on first use, as the e2e tests do), its objects in
# DIR ($RUN/s3 by default): it wants the e2e harness's TMP, fail and PIDS
# as an array, whose pids go back to ours. 0; 2 where node, npm or the
# package cannot be had (said).
upload_s3_start() {
	local TMP=$RUN rc all
	S3RVER_DIR=${S3RVER_DIR:-$(cd "$B" && pwd)/node/s3rver}
	fail() { say "$*"; return 1; }
	# shellcheck source=tests/e2e/s3lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/../tests/e2e/s3lib.sh" || die "no tests/e2e/s3lib.sh"
	s3_start "${1:-$RUN/s3}" bkt
	rc=$?
	all="${PIDS[*]}"
	unset PIDS
	# shellcheck disable=SC2178
	PIDS=$all
	return $rc
}
# What --upload costs the recorder: `record -p --rotate 1s` of the demo at
# ~200k polls/s with --upload to s3rver on 127.0.0.1 and without, PAIRS
# rounds of PAIR_SECS (after 2 s to settle), the order reversed every
# other round. CPU % of one core of the recorder (/proc: every thread, the
# uploader's too), the difference and the ratio paired within a round;
# every segment of each upload arm must be uploaded by its stop.
upload_row() {
	local wpid i arm order name rpid v rc n u gu ev secs pps
	local up="" plain="" add="" rat="" evu="" evp="" nseg=0 nup=0 ngu=0
	upload_s3_start
	rc=$?
	if [ "$rc" = 2 ]; then
		row 2k "record --upload: recorder CPU" "-" "-" "-" "-" "skipped: no s3rver (node, npm)"
		return
	fi
	[ "$rc" = 0 ] || die "s3rver did not start: $(tail -c 300 "$RUN/s3rver.log" 2>/dev/null)"
	bg up-demo "$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q -d 100000
	wpid=$BG
	wait_line "$RUN/up-demo.out" '^pid' 30
	for i in $(seq "$PAIRS"); do
		order="upload plain"
		[ $((i % 2)) = 0 ] && order="plain upload"
		for arm in $order; do
			name=up-$arm-$i
			rm -rf "${RUN:?}/$name"
			mkdir -p "$RUN/$name"
			if [ "$arm" = upload ]; then
				bg "$name" "$D9" record -p "$wpid" --rotate 1s -o "$RUN/$name" \
					--upload "s3://bkt/$name" --endpoint-url "$S3_URL"
			else
				bg "$name" "$D9" record -p "$wpid" --rotate 1s -o "$RUN/$name"
			fi
			rpid=$BG
			wait_line "$RUN/$name.err" 'attached to the d9prof shim' 30
			v=$(settled_cpu 1 "$rpid")
			kill -INT "$rpid" 2>/dev/null
			wait_bg "$rpid" "d9prof record --rotate 1s ($name)"
			ev=$(rec_events "$RUN/$name.err")
			secs=$(sed -n 's/.*recorded \([0-9.]*\) s of.*/\1/p' "$RUN/$name.err" | tail -1)
			ev=$(round 0 "${ev:-0} / ${secs:-1}")
			if [ "$arm" = upload ]; then
				up="$up $v" evu="$evu $ev"
				n=$(find "$RUN/$name" -name '*.d9' | wc -l)
				u=$(sed -n 's/.*upload to .*: \([0-9]*\) uploaded.*/\1/p' "$RUN/$name.err" | tail -1)
				gu=$(sed -n 's/.*upload to .*, \([0-9]*\) given up.*/\1/p' "$RUN/$name.err" | tail -1)
				nseg=$((nseg + n)) nup=$((nup + ${u:-0})) ngu=$((ngu + ${gu:-0}))
			else
				plain="$plain $v" evp="$evp $ev"
			fi
			rm -rf "${RUN:?}/$name"
		done
		add="$add $(round 1 "$(lastof $up) - $(lastof $plain)")"
		v=$(echo $plain | awk '{ print ($NF > 0 ? $NF : 0.1) }')
		rat="$rat $(round 2 "$(lastof $up) / $v")"
	done
	stop_bg "$wpid"
	pps=$(awk '$1 == "polls_per_sec" { print $2 }' "$RUN/up-demo.out")
	stop_bg "$S3_PID"
	rm -rf "${RUN:?}/s3"
	row 2k "record --upload, demo ~200k polls/s, CPU %" "" "" "" "" ""
	row "" "  recorder with --upload (local s3rver)" "$(med 1 "$up") ($(span "$up"))" \
		"without $(med 1 "$plain") ($(span "$plain"))" "$(med 2 "$rat")" \
		"stated" "- ($(span "$rat"))"
	row "" "  added by --upload, paired per round" "$(med 1 "$add")" "-" "-" \
		"<= 1" "$(spread_verdict "$add" 1) ($(span "$add"))"
	row "" "  segments uploaded / sealed (all rounds)" "$nup/$nseg" "-" "-" "all" \
		"$(verdict "$nup == $nseg && $ngu == 0")"
	note "2k shim events/s recorded, with --upload / without: $(med 0 "$evu") / $(med 0 "$evp")" \
		"(demo polls/s over the whole row ${pps:-?})"
}

# What the detectors cost as flight triggers (issue 45): `record
# --flight=30s` with the four detector triggers and without, on the demo
# at ~200k polls/s (--bench-work-ns) and at its most (--bench-polls
# alone, ~1.2M on 2 workers), PAIRS rounds of PAIR_SECS (after 2 s to
# settle), the order reversed every other round. CPU % of one core of the
# recorder, the difference paired within a round, and per poll (the
# demo's own polls/s over the whole run).
detect_row() {
	local rate wpid i arm order name rpid v pps
	local with without add per
	for rate in 200k max; do
		with="" without="" add=""
		if [ "$rate" = 200k ]; then
			bg "det-demo-$rate" "$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q -d 100000
		else
			bg "det-demo-$rate" "$DEMO" --bench-polls -w 2 -q -d 100000
		fi
		wpid=$BG
		wait_line "$RUN/det-demo-$rate.out" '^pid' 30
		for i in $(seq "$PAIRS"); do
			order="with without"
			[ $((i % 2)) = 0 ] && order="without with"
			for arm in $order; do
				name=det-$rate-$arm-$i
				rm -rf "${RUN:?}/$name"
				mkdir -p "$RUN/$name"
				if [ "$arm" = with ]; then
					bg "$name" "$D9" record -p "$wpid" --flight=30s -o "$RUN/$name" \
						--trigger lost-waker --trigger self-wakes \
						--trigger never-yielded --trigger task-leak
				else
					bg "$name" "$D9" record -p "$wpid" --flight=30s -o "$RUN/$name"
				fi
				rpid=$BG
				wait_line "$RUN/$name.err" 'attached to the d9prof shim' 30
				v=$(settled_cpu 2 "$rpid")
				stop_bg "$rpid" INT
				# (--bench-polls tasks only yield: self-wakes, rightly)
				grep -q 'trigger .*dumping' "$RUN/$name.err" &&
					note "2m $name: $(grep -m1 'trigger .*dumping' "$RUN/$name.err" | cut -c1-120)"
				rm -rf "${RUN:?}/$name"
				if [ "$arm" = with ]; then with="$with $v"; else without="$without $v"; fi
			done
			add="$add $(round 2 "$(lastof $with) - $(lastof $without)")"
		done
		stop_bg "$wpid"
		pps=$(awk '$1 == "polls_per_sec" { print $2 }' "$RUN/det-demo-$rate.out")
		per=$(round 0 "10000000 * $(median $add) / ${pps:-1}")
		[ "$rate" = 200k ] && row 2m "flight triggers of the 4 detectors, recorder CPU %" "" "" "" "" ""
		row "" "  demo $rate (${pps:-?} polls/s): with / without" \
			"$(med 2 "$with") ($(span "$with"))" "without $(med 2 "$without") ($(span "$without"))" \
			"-" "stated" "-"
		row "" "  added, paired per round (ns per poll: $per)" "$(med 2 "$add")" "-" "-" \
			"stated" "- ($(span "$add"))"
	done
}

# The Parquet tables (issue 46): the writer alone (bench_parquet: rows
# shaped like the samples table's, 3 runs, CPU time); the demo at ~200k
# polls/s recorded TABLE_SECS with --rotate 10s, each segment exported
# (export --format parquet): the tables' bytes against the segments', the
# export's CPU per second of segment; and the same recording with
# --upload --upload-tables to s3rver: the exporters' CPU as the
# recorder's summary says it. The export streams: its peak memory for the
# whole recording (three segments read as one) against one segment's.
TABLE_SECS=${TABLE_SECS:-30}
tables_row() {
	local i v rps="" bpr="" seg tb=0 sb=0 cpu=0 rows=0 polls=0 wpid rc line rss1=0 rssn
	for i in 1 2 3; do
		run "$PARQUET" "$RUN/bench.parquet" >"$RUN/parquet-$i.out" ||
			die "bench_parquet failed"
		rps="$rps $(kv "$RUN/parquet-$i.out" rows_per_sec)"
		bpr="$bpr $(kv "$RUN/parquet-$i.out" bytes_per_row)"
	done
	rm -f "$RUN/bench.parquet"
	row 2n "Parquet tables" "" "" "" "" ""
	row "" "  writer, rows/s (13 columns, CPU time)" "$(med 0 "$rps") ($(span "$rps"))" \
		"" "" "stated" "$(med 2 "$bpr") B/row"
	bg tab-demo "$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q -d 100000
	wpid=$BG
	wait_line "$RUN/tab-demo.out" '^pid' 30
	rm -rf "${RUN:?}/tab" "${RUN:?}/tab-tables"
	mkdir -p "$RUN/tab"
	run "$D9" record -p "$wpid" --rotate 10s -d "$TABLE_SECS" -o "$RUN/tab" \
		2>"$RUN/tab-rec.err" || die "tables: record failed: $(tail -1 "$RUN/tab-rec.err")"
	for seg in "$RUN/tab"/*.d9; do
		sb=$((sb + $(fsize "$seg")))
		run $TIME -f "%U %S %M" -o "$RUN/tab-exp.time" "$D9" export -i "$seg" --format parquet \
			-o "$RUN/tab-tables" 2>"$RUN/tab-exp.err" ||
			die "tables: export failed: $(tail -1 "$RUN/tab-exp.err")"
		cpu=$(awk -v c="$cpu" '{ print c + $1 + $2 }' "$RUN/tab-exp.time")
		rss1=$(awk -v m="$rss1" '{ print ($3 > m ? $3 : m) }' "$RUN/tab-exp.time")
		v=$(sed -n 's/.*parquet: \([0-9]*\) samples, \([0-9]*\) polls, \([0-9]*\) delays, \([0-9]*\) spans, \([0-9]*\) off-CPU intervals, \([0-9]*\) stacks, \([0-9]*\) tasks.*/\1+\2+\3+\4+\5+\6+\7/p' "$RUN/tab-exp.err")
		rows=$(round 0 "$rows + ${v:-0}")
		polls=$(round 0 "$polls + $(echo "${v:-0+0}" | cut -d+ -f2)")
	done
	tb=$(find "$RUN/tab-tables" -name '*.parquet' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	# (polls a second from the traces: the demo says its own only at
	# its exit, and kv's die from inside $(...) ends the whole bench)
	row "" "  tables / segments, bytes ($(round 0 "$polls / $TABLE_SECS") polls/s)" \
		"$(round 1 "$tb / 1048576") MiB" "segments $(round 1 "$sb / 1048576") MiB" \
		"$(round 2 "$tb / $sb")" "stated" "$rows rows"
	row "" "  export --format parquet, CPU per s recorded" \
		"$(round 1 "100 * $cpu / $TABLE_SECS") %" "" "" "stated" \
		"$(round 0 "$rows / ($cpu > 0 ? $cpu : 1)") rows/s"
	rm -rf "${RUN:?}/tab-tables"
	run $TIME -f "%U %S %M" -o "$RUN/tab-exp.time" "$D9" export -i "$RUN/tab" --format parquet \
		-o "$RUN/tab-tables" 2>"$RUN/tab-exp.err" ||
		die "tables: export of the whole recording failed: $(tail -1 "$RUN/tab-exp.err")"
	rssn=$(awk '{ print $3 }' "$RUN/tab-exp.time")
	row "" "  export peak RSS: ${TABLE_SECS} s whole vs a 10 s segment" \
		"$(round 0 "$rssn / 1024") MiB" "$(round 0 "$rss1 / 1024") MiB" \
		"$(round 2 "$rssn / ($rss1 > 0 ? $rss1 : 1)")" "<= 1.5" \
		"$(verdict "$rssn <= 1.5 * $rss1")"
	rm -rf "${RUN:?}/tab" "${RUN:?}/tab-tables"
	upload_s3_start
	rc=$?
	if [ "$rc" = 2 ]; then
		row "" "  --upload-tables: exporters' CPU" "-" "-" "-" "-" "skipped: no s3rver (node, npm)"
	else
		[ "$rc" = 0 ] || die "s3rver did not start: $(tail -c 300 "$RUN/s3rver.log" 2>/dev/null)"
		mkdir -p "$RUN/tab"
		run "$D9" record -p "$wpid" --rotate 10s -d "$TABLE_SECS" -o "$RUN/tab" \
			--upload s3://bkt/tables --endpoint-url "$S3_URL" --upload-tables \
			2>"$RUN/tab-up.err" || die "tables: record --upload-tables failed: $(tail -1 "$RUN/tab-up.err")"
		line=$(grep "upload-tables: [0-9]* segments. tables" "$RUN/tab-up.err" | tail -1)
		v=$(echo "$line" | sed -n 's/.*(\([0-9.]*\)% of a core.*/\1/p')
		row "" "  --upload-tables: exporters' CPU, % of a core" "${v:-?}" "" "" "stated" \
			"$(echo "$line" | sed -n "s/.*: \([0-9]*\) segments. tables (\([0-9]*\) files.*/\1 segments, \2 files/p")"
		stop_bg "$S3_PID"
		rm -rf "${RUN:?}/s3" "${RUN:?}/tab"
	fi
	stop_bg "$wpid"
}
if [ "$BENCH_ONLY" = tables ]; then
	tables_row
	note "BENCH_ONLY=tables: row 2n only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi

# A simulated fleet's bucket (issue 46's scale): BUCKET_HOSTS [100] hosts
# sealing a segment a minute for the last BUCKET_MINUTES [1440], 144,000
# keys in the layout with their index metadata, written into s3rver's own
# files by tests/e2e/fleet/fake_fleet.py --disk (PUTs through the API
# take ~4 ms each on s3rver: 8 minutes); the objects of the BUCKET_WINDOW
# [10] minutes from the recording of a 1 s demo segment (5 minutes before
# the bucket's end) are that segment, so that fleet reads them. Then
# `ls` of the whole bucket and `fleet` of that window, each once: wall
# time and peak RSS (/usr/bin/time), beside Debian's AWS CLI listing the
# same keys (where it is installed). s3rver answers the listing (its
# DES continuation tokens, a walk of its files per page): the wall time
# is mostly its; d9prof's own CPU is said too.
bucket_row() {
	local rc start first minute made ls_t fl_t aws_t nrow nread keys
	# 432,000 small files (each key's object, md5 and metadata): deleting
	# them took 11 minutes on disk here; in memory (~2 GB) a second
	BUCKET_DATA=$RUN/s3
	if [ "$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)" -gt 8000000 ] 2>/dev/null; then
		BUCKET_DATA=$(mktemp -d /dev/shm/d9bench-bucket.XXXXXX) || BUCKET_DATA=$RUN/s3
	fi
	upload_s3_start "$BUCKET_DATA"
	rc=$?
	if [ "$rc" = 2 ]; then
		row 8 "ls of a simulated bucket (144,000 keys)" "-" "-" "-" "-" "skipped: no s3rver (node, npm)"
		return
	fi
	[ "$rc" = 0 ] || die "s3rver did not start: $(tail -c 300 "$RUN/s3rver.log" 2>/dev/null)"
	run "$D9" record -d 1 -o "$RUN/bucket-seg.d9" -- "$DEMO" -q >/dev/null \
		2>"$RUN/bucket-rec.err" || die "bucket: record failed: $(tail -1 "$RUN/bucket-rec.err")"
	start=$("$D9" info --json -i "$RUN/bucket-seg.d9" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["span"]["start_wall_ns"] // 10**9)') ||
		die "bucket: no start time in the segment"
	# the bucket: the last BUCKET_MINUTES up to 5 minutes past the window
	first=$((start - start % 60 - 60 * (BUCKET_MINUTES - BUCKET_WINDOW - 5)))
	minute=$(date -u -d "@$((start - start % 60))" +%Y-%m-%dT%H:%M)
	run python3 tests/e2e/fleet/fake_fleet.py --disk "$S3_DATA" --hosts "$BUCKET_HOSTS" \
		--minutes "$BUCKET_MINUTES" --start "$(date -u -d "@$first" +%Y-%m-%dT%H:%M)" \
		--body "$RUN/bucket-seg.d9" \
		--body-from "$(date -u -d "@$((start - start % 60 - 60))" +%Y-%m-%dT%H:%M)" \
		--body-minutes $((BUCKET_WINDOW + 1)) >"$RUN/bucket-made.out" 2>&1 ||
		die "bucket: fake_fleet.py failed: $(tail -1 "$RUN/bucket-made.out")"
	made=$(cat "$RUN/bucket-made.out")
	say "bucket: $made; load average $(loadavg)"
	run $TIME -f '%e %M %U %S' -o "$RUN/bucket-ls.time" "$D9" ls s3://bkt --format json \
		>"$RUN/bucket-ls.json" 2>"$RUN/bucket-ls.err" ||
		die "bucket: ls failed: $(tail -1 "$RUN/bucket-ls.err")"
	keys=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["segments"], j["hosts"])' \
		"$RUN/bucket-ls.json")
	ls_t=$(awk '{ printf "%.1f s %.0f MiB", $1, $2 / 1024 }' "$RUN/bucket-ls.time")
	run $TIME -f '%e %M %U %S' -o "$RUN/bucket-fleet.time" "$D9" fleet -i s3://bkt \
		--from "$minute" --to "$(date -u -d "@$((start - start % 60 + 60 * BUCKET_WINDOW))" +%Y-%m-%dT%H:%M)" \
		--format json >"$RUN/bucket-fleet.json" 2>"$RUN/bucket-fleet.err" ||
		die "bucket: fleet failed: $(tail -1 "$RUN/bucket-fleet.err")"
	read -r nrow nread < <(python3 -c 'import json, sys; h = json.load(open(sys.argv[1]))["hosts"]; print(len(h), sum(x["read"] for x in h))' \
		"$RUN/bucket-fleet.json")
	fl_t=$(awk '{ printf "%.1f s %.0f MiB", $1, $2 / 1024 }' "$RUN/bucket-fleet.time")
	aws_t="-"
	if [ -x /usr/bin/aws ]; then
		run $TIME -f '%e %M' -o "$RUN/bucket-aws.time" /usr/bin/aws --endpoint-url "$S3_URL" \
			s3api list-objects-v2 --bucket bkt --query 'length(Contents)' --output text \
			>"$RUN/bucket-aws.out" 2>"$RUN/bucket-aws.err" &&
			aws_t=$(awk '{ printf "%.1f s %.0f MiB", $1, $2 / 1024 }' "$RUN/bucket-aws.time")
	fi
	stop_bg "$S3_PID"
	rm -rf "${BUCKET_DATA:?}" "$RUN/bucket-seg.d9"
	BUCKET_DATA=
	row 8 "a simulated bucket: $BUCKET_HOSTS hosts x $BUCKET_MINUTES min" "" "" "" "" ""
	row "" "  ls of $(echo "$keys" | cut -d' ' -f1) keys, $(echo "$keys" | cut -d' ' -f2) hosts: wall, RSS" \
		"$ls_t" "aws s3api $aws_t" "-" "<= 32 MiB" \
		"$(verdict "$(awk '{ print $2 / 1024 }' "$RUN/bucket-ls.time") <= 32")"
	row "" "  fleet, a ${BUCKET_WINDOW}-min window: wall, peak RSS" "$fl_t" "-" "-" \
		"all $nrow hosts read" "$(verdict "$nread == $nrow && $nrow == $BUCKET_HOSTS")"
	note "8 $made (s3rver's files, fake_fleet.py --disk); load average after $(loadavg)"
	note "8 d9prof CPU, user + system: ls $(awk '{ print $3 + $4 }' "$RUN/bucket-ls.time") s," \
		"fleet $(awk '{ print $3 + $4 }' "$RUN/bucket-fleet.time") s; the rest of the wall time is s3rver's"
}

if [ "$BENCH_ONLY" = bucket ]; then
	bucket_row
	note "BENCH_ONLY=bucket: row 8 only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = 2m ]; then
	detect_row
	note "BENCH_ONLY=2m: row 2m only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = top ]; then
	top_row
	note "BENCH_ONLY=top: row 2j only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = 2h ]; then
	fpless_row
	note "BENCH_ONLY=2h: row 2h only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi
if [ "$BENCH_ONLY" = upload ]; then
	upload_row
	note "BENCH_ONLY=upload: row 2k only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi

# ---- 1. shim markers -----------------------------------------------------------

say "1/4 shim markers (bench_shim, ~10 s)"
bg shim "$SHIM" --attach
SPID=$BG
wait_line "$RUN/shim.out" '^pid' 60
# the recorder stops when bench_shim exits
run $TIME -f '%e %U %S %M' -o "$RUN/shim.time" \
	"$D9" record -p "$SPID" -o "$RUN/shim.d9" 2>"$RUN/shim-rec.err" ||
	die "d9prof record -p bench_shim failed: $(tail -1 "$RUN/shim-rec.err")"
wait_bg "$SPID" "bench_shim --attach"

CG=$(kv "$RUN/shim.out" clock_gettime_ns)
DET=$(calc "int($(kv "$RUN/shim.out" detached_pair_ns) * 50 + 0.5) / 100")
A1=$(calc "int($(kv "$RUN/shim.out" attached_pair_ns_1t) * 50 + 0.5) / 100")
A2=$(calc "int($(kv "$RUN/shim.out" attached_pair_ns_2t) * 50 + 0.5) / 100")
# per call, each round's (bench_shim alternates 1 and 2 threads)
A1R=$(kv "$RUN/shim.out" attached_pair_ns_1t_rounds | tr , '\n' | awk '{ printf "%.2f ", $1 / 2 }')
A2R=$(kv "$RUN/shim.out" attached_pair_ns_2t_rounds | tr , '\n' | awk '{ printf "%.2f ", $1 / 2 }')
SDROPS=$(kv "$RUN/shim.out" attached_drops)
row 1a "clock_gettime(CLOCK_MONOTONIC), ns" "$CG" "-" "-" "reference" "-"
row 1b "marker detached, ns/call (pair $(kv "$RUN/shim.out" detached_pair_ns))" \
	"$DET" "dial9 50 (published)" "$(calc "$DET / 50")" "< 2 ns/call" "$(verdict "$DET < 2")"
# attached: at most one clock read and 3 ns (issue 15), the clock being
# rdtsc where the shim uses the TSC, else clock_gettime
RD=$(kv "$RUN/shim.out" rdtsc_ns)
if awk -v r="$RD" 'BEGIN { exit !(r > 0) }'; then
	row 1f "rdtsc, ns (the shim's clock here)" "$RD" "-" "-" "reference" "-"
	LIM=$(calc "$RD + 3")
	LIMT="<= rdtsc + 3 = $LIM"
else
	LIM=$(calc "$CG + 3")
	LIMT="<= clock_gettime + 3 = $LIM"
fi
row 1c "marker attached 1 thread, ns/call" "$A1" "dial9 50 (published)" \
	"$(calc "$A1 / 50")" "$LIMT" "$(spread_verdict "$A1R" "$LIM") ($(span "$A1R"))"
row 1d "marker attached 2 threads, ns/call" "$A2" "dial9 50 (published)" \
	"$(calc "$A2 / 50")" "$LIMT" "$(spread_verdict "$A2R" "$LIM") ($(span "$A2R"))"
row 1e "drops while drained (400k rec/s/thread)" "$SDROPS" "-" "-" "0" "$(verdict "$SDROPS == 0")"
# spans (issue 27): an enter+exit pair at most 3x a poll pair, measured in
# the same rounds; dial9 publishes ~300 ns per span enter+exit
SDET=$(kv "$RUN/shim.out" detached_span_pair_ns)
SP=$(kv "$RUN/shim.out" attached_span_pair_ns)
SPR=$(kv "$RUN/shim.out" attached_span_pair_ns_rounds | tr , ' ')
PSP=$(kv "$RUN/shim.out" attached_poll_span_ns)
EV=$(kv "$RUN/shim.out" attached_event_ns)
SLIM=$(calc "3 * $(kv "$RUN/shim.out" attached_pair_ns_1t)")
row 1g "span enter+exit detached, ns/pair" "$SDET" "-" "-" "< 4 ns/pair" \
	"$(verdict "$SDET < 4")"
row 1h "span enter+exit attached 1 thread, ns/pair" "$SP" "dial9 300 (published)" \
	"$(calc "$SP / 300")" "<= 3 x poll pair = $SLIM" \
	"$(spread_verdict "$SPR" "$SLIM") ($(span "$SPR"))"
row 1i "poll pair with a span pair inside, ns" "$PSP" "-" "-" "reference" "-"
row 1j "event (name, value) attached, ns/call" "$EV" "-" "-" "reference" "-"
# lean mode (issue 48): the same markers under record --lean, whose target
# is one clock read + 3 ns a marker too
lean_markers() {
	local spid l1 l2 l1r l2r
	bg shiml "$SHIM" --attach
	spid=$BG
	wait_line "$RUN/shiml.out" '^pid' 60
	run "$D9" record --lean -p "$spid" -o "$RUN/shiml.d9" 2>"$RUN/shiml-rec.err" ||
		die "d9prof record --lean -p bench_shim failed: $(tail -1 "$RUN/shiml-rec.err")"
	wait_bg "$spid" "bench_shim --attach (lean)"
	l1=$(calc "int($(kv "$RUN/shiml.out" attached_pair_ns_1t) * 50 + 0.5) / 100")
	l2=$(calc "int($(kv "$RUN/shiml.out" attached_pair_ns_2t) * 50 + 0.5) / 100")
	l1r=$(kv "$RUN/shiml.out" attached_pair_ns_1t_rounds | tr , '\n' | awk '{ printf "%.2f ", $1 / 2 }')
	l2r=$(kv "$RUN/shiml.out" attached_pair_ns_2t_rounds | tr , '\n' | awk '{ printf "%.2f ", $1 / 2 }')
	row 1k "marker attached, --lean, 1 thread, ns/call" "$l1" "every poll $A1" \
		"$(calc "$l1 / $A1")" "$LIMT" "$(spread_verdict "$l1r" "$LIM") ($(span "$l1r"))"
	row 1l "marker attached, --lean, 2 threads, ns/call" "$l2" "every poll $A2" \
		"$(calc "$l2 / $A2")" "$LIMT" "$(spread_verdict "$l2r" "$LIM") ($(span "$l2r"))"
	rm -f "$RUN/shiml.d9"
}
lean_markers
if [ "$BENCH_ONLY" = 1 ]; then
	note "BENCH_ONLY=1: section 1 only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi

# ---- 2. recording overhead -------------------------------------------------------

# Every arm runs the workload under /usr/bin/time (its CPU time: "CPU per
# poll" does not depend on how much of the machine others leave us).
# sampled_run NAME KIND CMD...: CMD with a recorder attached from its
# "ready" line until it exits, itself under /usr/bin/time. (Not from "pid
# N": the workloads calibrate their work per poll in between, and a
# recorder starting up beside the calibration on 2 cores can skew it; a
# short trial run had one demo run at half the others' CPU per poll.) KIND:
#   d9        d9prof record -p at its defaults
#   d9fp      the same with --cpu-stack 0 (frame pointers only)
#   d9nw      the same with --no-wakeups
#   d9ns      the same with --no-shim (samples and switches; markers detached)
#   d9perf    the same with --sched perf (scheduler events by perf_event, not
#             BPF: the BPF path's peer in one build)
#   perfg     perf record -g of cpu-clock at 999 Hz (the peer, samples only)
#   perfsame  perf recording the same data as d9prof: cpu-clock at 999 Hz
#             with stacks, and every sched:sched_switch. (Not `-F 999 -e
#             sched:sched_switch`: -F puts the tracepoint in frequency mode
#             too, 999 switches/s at most; perf 6.1 takes no period= term
#             on a tracepoint, so -c 1 sets its period and cpu-clock keeps
#             its own freq=999.)
#   perftick  perfsame at the kernel's tick rate (KERNEL_HZ): as many samples
#             as --sampler tick takes
# rec_cmd NAME KIND PID: in REC, the recorder of KIND for pid PID (the
# kinds above; d9lean and d9leanfl: record --lean, and --lean --flight for
# row 2o, at the tick where BPF may be used, as by default; d9leanperf:
# --lean --sampler perf; d9tickns: lean's sampler and switch programs,
# the shim left detached: --sampler tick --no-shim), its output under NAME
rec_cmd() {
	local name=$1 kind=$2 pid=$3 extra=() pev=(-F 999 -e cpu-clock) out=$RUN/$1.d9
	case $kind in
	d9fp) extra=(--cpu-stack 0) kind=d9 ;;
	d9nw) extra=(--no-wakeups) kind=d9 ;;
	d9ns) extra=(--no-shim) kind=d9 ;;
	d9perf) extra=(--sched perf) kind=d9 ;;
	d9lean) extra=(--lean) kind=d9 ;;
	d9leanfl) extra=(--lean --flight=30s) kind=d9 out=$RUN/$name.dir && mkdir -p "$out" ;;
	d9leanperf) extra=(--lean --sampler perf) kind=d9 ;;
	d9tickns) extra=(--sampler tick --no-shim) kind=d9 ;;
	perfsame) pev=(-c 1 -e cpu-clock/freq=999/ -e sched:sched_switch) kind=perf ;;
	perftick) pev=(-c 1 -e "cpu-clock/freq=$KERNEL_HZ/" -e sched:sched_switch) kind=perf ;;
	perfg | perf) kind=perf ;;
	esac
	if [ "$kind" = d9 ]; then
		REC=("$D9" record -p "$pid" "${extra[@]}" -o "$out")
	else
		REC=(perf record -N -q -g "${pev[@]}" -p "$pid" -o "$RUN/$name.data")
	fi
}
# start_sampled NAME CMD...: CMD in the background (WPID), timed, and once
# it said "ready", its pid (PID)
start_sampled() {
	local name=$1
	shift
	bg "$name" $TIME -f '%e %U %S %M' -o "$RUN/$name.wtime" "$@"
	WPID=$BG
	wait_line "$RUN/$name.out" '^ready' 30
	PID=$(kv "$RUN/$name.out" pid)
}
sampled_run() {
	local name=$1 kind=$2
	shift 2
	start_sampled "$name" "$@"
	rec_cmd "$name" "$kind" "$PID"
	run $TIME -f '%e %U %S %M' -o "$RUN/$name.time" "${REC[@]}" 2>"$RUN/$name-rec.err" ||
		die "${REC[0]##*/} record -p ($name) failed: $(tail -1 "$RUN/$name-rec.err")"
	wait_bg "$WPID" "$name"
}
detached_run() {
	local name=$1
	shift
	run $TIME -f '%e %U %S %M' -o "$RUN/$name.wtime" "$@" >"$RUN/$name.out" \
		2>"$RUN/$name.err" || die "$name failed"
}
# cpu_s FILE: user + system seconds from a /usr/bin/time line
cpu_s() {
	tail -1 "$1" | awk '{ print $2 + $3 }'
}
# polls NAME: total polls (bench_spin says; the demo gives a rate over -d)
polls() {
	if grep -q '^polls ' "$RUN/$1.out"; then
		kv "$RUN/$1.out" polls
	else
		calc "$(kv "$RUN/$1.out" polls_per_sec) * ${POLL_SECS:-$PAIR_SECS}"
	fi
}

# The arms of an overhead round: no recorder, d9prof record -p at its
# defaults (BPF scheduler events where allowed), the same with --sched
# perf, the same with --no-shim, perf recording the same data, perf -g
# (see sampled_run).
OH_ARMS=(det d9 d9perf d9ns perfsame perfg)
# oh_fig NAME: one run's "workload-CPU-s recorder-CPU-s recorder-wall-s
# recorder-peak-RSS-KiB polls polls/s" (recorder figures 0 without one)
oh_fig() {
	local e=0 u=0 s=0 m=0
	[ -f "$RUN/$1.time" ] && read -r e u s m <<<"$(tail -1 "$RUN/$1.time")"
	echo "$(cpu_s "$RUN/$1.wtime") $(calc "$u + $s") $e $m $(polls "$1")" \
		"$(kv "$RUN/$1.out" polls_per_sec)"
}

# overhead ID LABEL NSLIM RECLIM CMD...: PAIRS rounds, each one run of CMD
# per arm of OH_ARMS, the order rotating from round to round. Per run: CPU
# ns per poll = (workload user+sys + recorder user+sys) / polls, the
# workload's part alone, the recorder's part alone, polls/s. Each target is
# decided on the rounds' paired ratios (both arms of one round) by
# spread_verdict: d9 / perfsame <= 1.000; d9 / d9ns <= NSLIM; the d9
# recorder's CPU, % of one core (user+sys over its wall time), <= RECLIM
# ("-": stated only). Beneath: what each part costs (sampling interrupts
# and the switch tracepoint, markers and ring traffic, the recorders).
overhead() {
	local id=$1 label=$2 nslim=$3 reclim=$4 i k arm n=${#OH_ARMS[@]}
	local w r e m p t name
	local -A cpp=() wpp=() C=() W=() R=() T=()
	local vpeer="" vpp="" vadd="" vaddp="" rdp="" vns="" vgdet="" vddet="" loss="" ploss="" irq="" pirq="" mark=""
	local rd="" rns="" rps="" rpct="" ppct="" rss="" drops=0 ev=0 odd=""
	shift 4
	for i in $(seq "$PAIRS"); do
		for k in $(seq 0 $((n - 1))); do
			arm=${OH_ARMS[$(((i - 1 + k) % n))]}
			if [ "$arm" = det ]; then
				detached_run "$id-$arm-$i" "$@"
			else
				sampled_run "$id-$arm-$i" "$arm" "$@"
			fi
		done
		for arm in "${OH_ARMS[@]}"; do
			name=$id-$arm-$i
			read -r w r e m p t <<<"$(oh_fig "$name")"
			C[$arm]=$(calc "($w + $r) * 1e9 / $p")
			W[$arm]=$(calc "$w * 1e9 / $p")
			R[$arm]=$(round 0 "$r * 1e9 / $p")
			T[$arm]=$t
			wpp[$arm]="${wpp[$arm]:-} ${W[$arm]}"
			cpp[$arm]="${cpp[$arm]:-} $(round 0 "${C[$arm]}")"
			case $arm in
			d9)
				rpct="$rpct $(round 1 "$r / $e * 100")"
				rss="$rss $m"
				;;
			perfsame) ppct="$ppct $(round 1 "$r / $e * 100")" ;;
			esac
		done
		# the targets, on this round's pairs
		vpeer="$vpeer $(calc "${C[d9]} / ${C[perfsame]}")"
		vpp="$vpp $(calc "${C[d9perf]} / ${C[perfsame]}")"
		# what recording adds to the workload's CPU per poll, against
		# what perf recording the same data adds (a floor on the
		# denominator: perf adding nothing measurable)
		vadd="$vadd $(calc "(${C[d9]} - ${C[det]}) / ((${C[perfsame]} - ${C[det]}) > 1 ? (${C[perfsame]} - ${C[det]}) : 1)")"
		vaddp="$vaddp $(calc "(${C[d9perf]} - ${C[det]}) / ((${C[perfsame]} - ${C[det]}) > 1 ? (${C[perfsame]} - ${C[det]}) : 1)")"
		rdp="$rdp ${R[d9perf]}"
		vns="$vns $(calc "${C[d9]} / ${C[d9ns]}")"
		vddet="$vddet $(calc "${C[d9]} / ${C[det]}")"
		vgdet="$vgdet $(calc "${C[perfg]} / ${C[det]}")"
		loss="$loss $(round 1 "(1 - ${T[d9]} / ${T[det]}) * 100")"
		ploss="$ploss $(round 1 "(1 - ${T[perfsame]} / ${T[det]}) * 100")"
		# the parts: the workload's own CPU per poll over det's (sampling
		# interrupts and the switch tracepoint), d9's over d9ns's (markers
		# and ring traffic), the recorders' CPU per poll
		irq="$irq $(calc "${W[d9ns]} / ${W[det]}")"
		pirq="$pirq $(calc "${W[perfsame]} / ${W[det]}")"
		mark="$mark $(calc "${W[d9]} / ${W[d9ns]}")"
		rd="$rd ${R[d9]}"
		rns="$rns ${R[d9ns]}"
		rps="$rps ${R[perfsame]}"
		drops=$((drops + $(rec_drops "$RUN/$id-d9-$i-rec.err")))
		ev=$((ev + $(rec_events "$RUN/$id-d9-$i-rec.err")))
		rm -f "$RUN/$id-perfsame-$i.data" "$RUN/$id-perfg-$i.data"
		[ "$i" = "$PAIRS" ] ||
			rm -f "$RUN/$id-d9-$i.d9" "$RUN/$id-d9ns-$i.d9" "$RUN/$id-d9perf-$i.d9"
	done
	# The workloads calibrate their work per poll at start-up: a run that
	# calibrated under load does less work per poll. Name any run whose
	# workload CPU/poll is below 0.9 x the median of its arm's rounds.
	for arm in "${OH_ARMS[@]}"; do
		odd="$odd$(echo "${wpp[$arm]}" | awk -v a="$arm" -v m="$(median "${wpp[$arm]}")" \
			'{ for (i = 1; i <= NF; i++) if ($i < 0.9 * m)
				printf " %s round %d: %.0f (median %.0f);", a, i, $i, m }')"
	done
	[ -z "$odd" ] ||
		note "$id workload CPU/poll < 0.9 x its arm's median (calibrated under load?):$odd"
	row "$id" "$label" "" "" "" "" ""
	# the headline: CPU ns per poll per arm, median of rounds (range)
	row "" "  CPU ns/poll incl. recorder: det" "$(med 0 "${cpp[det]}")" "-" "-" "-" \
		"($(span "${cpp[det]}"))"
	row "" "    d9 / perfsame (perf -g + switches)" "$(med 0 "${cpp[d9]}")" \
		"$(med 0 "${cpp[perfsame]}")" "-" "-" \
		"($(span "${cpp[d9]}") / $(span "${cpp[perfsame]}"))"
	row "" "    d9ns (--no-shim) / perfg (perf -g)" "$(med 0 "${cpp[d9ns]}")" \
		"$(med 0 "${cpp[perfg]}")" "-" "-" \
		"($(span "${cpp[d9ns]}") / $(span "${cpp[perfg]}"))"
	# the targets, on the rounds' paired ratios
	row "" "  CPU/poll d9 / perfsame, paired rounds" "$(med 0 "${cpp[d9]}")" \
		"perfsame $(med 0 "${cpp[perfsame]}")" "$(med 3 "$vpeer")" "<= 1.000" \
		"$(spread_verdict "$vpeer" 1) ($(span "$vpeer"))"
	row "" "  CPU/poll d9 --sched perf / perfsame" "$(med 0 "${cpp[d9perf]}")" \
		"perfsame $(med 0 "${cpp[perfsame]}")" "$(med 3 "$vpp")" "reference" \
		"($(span "$vpp"))"
	row "" "  CPU/poll added over det: d9 / perfsame's" "$(med 3 "$vadd")" \
		"perf-path $(med 3 "$vaddp")" "$(med 3 "$vadd")" "<= 0.500" \
		"$(spread_verdict "$vadd" 0.5) ($(span "$vadd") / $(span "$vaddp"))"
	row "" "  CPU/poll d9 / d9ns (shim + recorder add)" \
		"$(med 0 "${cpp[d9]}")/$(med 0 "${cpp[d9ns]}")" "-" "$(med 3 "$vns")" \
		"<= $nslim (+$(round 0 "($nslim - 1) * 100")%)" \
		"$(spread_verdict "$vns" "$nslim") ($(span "$vns"))"
	if [ "$reclim" = - ]; then
		row "" "  recorder CPU, % of one core (d9)" "$(med 1 "$rpct")" \
			"perfsame $(med 1 "$ppct")" "-" "stated" "($(span "$rpct"))"
	else
		row "" "  recorder CPU, % of one core (d9)" "$(med 1 "$rpct")" \
			"perfsame $(med 1 "$ppct")" "-" "<= $reclim%" \
			"$(spread_verdict "$rpct" "$reclim") ($(span "$rpct"))"
	fi
	row "" "  CPU/poll over det: d9 (peer perfg)" "$(med 3 "$vddet")" \
		"perfg $(med 3 "$vgdet")" "-" "reference" "($(span "$vddet") / $(span "$vgdet"))"
	row "" "  throughput loss vs det, % (peer perfsame)" "$(med 1 "$loss")" \
		"perfsame $(med 1 "$ploss")" "-" "reference" "($(span "$loss") / $(span "$ploss"))"
	# the breakdown
	row "" "  irq+switch tp: workload CPU/poll over det" "d9ns $(med 3 "$irq")" \
		"perfsame $(med 3 "$pirq")" "-" "stated" "($(span "$irq") / $(span "$pirq"))"
	row "" "  markers+ring: workload CPU/poll d9 / d9ns" "$(med 3 "$mark")" "-" "-" \
		"stated" "($(span "$mark"))"
	row "" "  recorder CPU ns/poll: d9 / d9perf / d9ns" \
		"$(med 0 "$rd")/$(med 0 "$rdp")/$(med 0 "$rns")" \
		"perfsame $(med 0 "$rps")" "-" "stated" \
		"($(span "$rd") / $(span "$rdp") / $(span "$rns") / $(span "$rps"))"
	row "" "  recorder peak RSS, KiB (d9, max of runs)" "$(maxof $rss)" "-" "-" "-" "-"
	row "" "  shim records dropped / recorded (d9)" "$drops/$ev" "-" \
		"$(calc "$drops / ($drops + $ev + 0.000001)")" "0 dropped" "$(verdict "$drops == 0")"
	LAST_ATT_TRACE=$RUN/$id-d9-$PAIRS.d9
	LAST_ATT_EVENTS=$(rec_events "$RUN/$id-d9-$PAIRS-rec.err")
	LAST_ATT_SAMPLES=$(rec_samples "$RUN/$id-d9-$PAIRS-rec.err")
}

# Lean mode (record --lean, issue 48). The demo's work per poll is fixed
# in hash iterations (--bench-iters, from one calibration for all runs):
# each run calibrating its own moved a run's CPU per poll by +-5%, more
# than what is measured. lean_run NAME KIND CMD...: CMD, then (not for
# det) the recorder of KIND (sampled_run's kinds) with -p, in the
# background; its CPU (user + system, /proc) from LEAN_WARM s after its
# start to LEAN_WARM s before the workload's end: the steady cost, without
# what any recording costs once to start and finish (recfixed, row 2a)
LEAN_WARM=${LEAN_WARM:-1.5}
LEAN_SECS=${LEAN_SECS:-8}
lean_ticks() {	# lean_ticks PID: its user + system clock ticks so far
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
lean_run() {
	local name=$1 kind=$2 rpid tpid c0 c1 t0 t1
	shift 2
	if [ "$kind" = det ]; then
		detached_run "$name" "$@"
		return
	fi
	start_sampled "$name" "$@"
	rec_cmd "$name" "$kind" "$PID"
	$TIME -f '%e %U %S %M' -o "$RUN/$name.time" "${REC[@]}" 2>"$RUN/$name-rec.err" &
	tpid=$!
	sleep 0.2
	rpid=$(pgrep -P "$tpid" | head -1)
	sleep "$LEAN_WARM"
	c0=$(lean_ticks "$rpid") t0=$(date +%s.%N)
	sleep "$(calc "$LEAN_SECS - 2 * $LEAN_WARM - 0.2")"
	c1=$(lean_ticks "$rpid") t1=$(date +%s.%N)
	echo "$(calc "($c1 - $c0) / $TICK_HZ / ($t1 - $t0) * 100")" >"$RUN/$name.steady"
	wait "$tpid" || die "recorder ($name) failed: $(tail -1 "$RUN/$name-rec.err")"
	wait_bg "$WPID" "$name"
}
TICK_HZ=$(getconf CLK_TCK)
# the kernel's HZ (a coarse clock's resolution is one tick)
KERNEL_HZ=$(python3 -c 'import time; print(round(1 / time.clock_getres(6)))') # CLOCK_MONOTONIC_COARSE

# lean_round ID ARMS CMD...: PAIRS rounds of one lean_run of CMD per arm,
# the order rotating; per run in LC[ID-ARM-ROUND] the CPU ns per poll of
# workload and recorder (/usr/bin/time), in LW[...] the workload's alone,
# in LR[...] the recorder's steady % of one core
declare -A LC=() LW=() LR=() LP=()
lean_round() {
	local id=$1 arms=($2) i k arm n w r e m p t POLL_SECS=$LEAN_SECS
	shift 2
	n=${#arms[@]}
	for i in $(seq "$PAIRS"); do
		for k in $(seq 0 $((n - 1))); do
			arm=${arms[$(((i - 1 + k) % n))]}
			lean_run "$id-$arm-$i" "$arm" "$@"
			read -r w r e m p t <<<"$(oh_fig "$id-$arm-$i")"
			LC[$id-$arm-$i]=$(calc "($w + $r) * 1e9 / $p")
			LW[$id-$arm-$i]=$(calc "$w * 1e9 / $p")
			LR[$id-$arm-$i]=$(cat "$RUN/$id-$arm-$i.steady" 2>/dev/null || echo 0)
			LP[$id-$arm-$i]=$t
			rm -rf "$RUN/$id-$arm-$i.d9" "$RUN/$id-$arm-$i.dir" "$RUN/$id-$arm-$i.data"
		done
	done
}
lean_vals() {	# lean_vals TABLE ID ARM: the rounds' values
	local -n tab=$1
	local i
	for i in $(seq "$PAIRS"); do printf ' %s' "${tab[$2-$3-$i]}"; done
}
lean_added() {	# lean_added ID ARM [PEER]: (ARM - det) / (PEER - det) per round
	local i v="" a d ps
	for i in $(seq "$PAIRS"); do
		a=${LC[$1-$2-$i]} d=${LC[$1-det-$i]} ps=${LC[$1-${3:-perfsame}-$i]}
		v="$v $(calc "($a - $d) / (($ps - $d) > 1 ? ($ps - $d) : 1)")"
	done
	echo "$v"
}
# lean_steady ID ARM ROUND: the recorder's steady CPU in ns per poll of
# that run (its steady % of a core over the run's polls a second)
lean_steady() {
	calc "${LR[$1-$2-$3]} / 100 * 1e9 / ${LP[$1-$2-$3]}"
}
lean_ratio() {	# lean_ratio ID ARM1 ARM2: C(ARM1) / C(ARM2) per round
	local i v=""
	for i in $(seq "$PAIRS"); do
		v="$v $(calc "${LC[$1-$2-$i]} / ${LC[$1-$3-$i]}")"
	done
	echo "$v"
}
# lean_iters US: hash iterations the demo does in US microseconds here
lean_iters() {
	local rate
	rate=$("$DEMO" --bench-polls -w 1 -d 0.2 2>&1 >/dev/null |
		sed -nE 's/.* ([0-9]+) hash iterations\/us.*/\1/p' | head -1)
	calc "int($1 * ${rate:-400})"
}
lean_rows() {
	local c a fl rp rd rs="" lp it i arms="det d9lean d9leanfl d9leanperf d9tickns d9 perfsame perftick"
	it=$(lean_iters 5)
	lean_round 2o "$arms" \
		"$DEMO" --bench-polls --bench-iters "$it" -w 2 -q -d "$LEAN_SECS"
	row 2o "lean mode: 2 workers, 5 us polls ($it iterations), a yield before each" \
		"" "" "" "" ""
	for c in $arms; do
		a=$(lean_vals LC 2o $c)
		row "" "  CPU ns/poll incl. recorder: $c" "$(med 0 "$a")" "-" "-" "-" "($(span "$a"))"
	done
	a=$(lean_added 2o d9lean)
	row "" "  CPU/poll added over det: lean / perfsame's" "$(med 3 "$a")" \
		"every poll $(med 3 "$(lean_added 2o d9)")" "$(med 3 "$a")" "<= 0.500" \
		"$(spread_verdict "$a" 0.5) ($(span "$a"))"
	a=$(lean_added 2o d9lean perftick)
	row "" "  CPU/poll added over det: lean / perftick's (as many samples)" "$(med 3 "$a")" \
		"-" "$(med 3 "$a")" "stated" "($(span "$a"))"
	a=$(lean_added 2o d9leanperf)
	row "" "  CPU/poll added over det: lean --sampler perf / perfsame's" "$(med 3 "$a")" \
		"-" "$(med 3 "$a")" "stated" "($(span "$a"))"
	fl=$(lean_ratio 2o d9leanfl d9lean)
	row "" "  CPU/poll lean --flight / lean, paired" "$(med 3 "$fl")" "-" "$(med 3 "$fl")" \
		"<= 1.000" "$(spread_verdict "$fl" 1) ($(span "$fl"))"
	# where it goes: in the target (sampling interrupts, the switch
	# programs, the markers) and in the recorder once started
	for c in d9lean d9leanperf d9tickns d9 perfsame perftick; do
		a=""
		for i in $(seq "$PAIRS"); do
			a="$a $(calc "${LW[2o-$c-$i]} - ${LW[2o-det-$i]}")"
		done
		row "" "  in the target, ns/poll over det: $c" "$(med 0 "$a")" "-" "-" "stated" \
			"($(span "$a"))"
	done
	# the floor: what the markers alone add in the target (lean less its
	# sampler and switch programs) against all that perf adds recording
	# as many samples; over 0.5, no sampler can meet 2o's target against
	# that peer (the markers read the clock twice a poll)
	a=""
	for i in $(seq "$PAIRS"); do
		a="$a $(calc "(${LW[2o-d9lean-$i]} - ${LW[2o-d9tickns-$i]}) / \
			((${LC[2o-perftick-$i]} - ${LC[2o-det-$i]}) > 1 ? (${LC[2o-perftick-$i]} - ${LC[2o-det-$i]}) : 1)")"
	done
	row "" "  the markers alone (lean - d9tickns, in the target) / perftick's added" \
		"$(med 3 "$a")" "-" "$(med 3 "$a")" "stated" "($(span "$a"))"
	rp=$(lean_vals LR 2o d9lean)
	rd=$(lean_vals LR 2o d9)
	rs=$(lean_vals LR 2o perfsame)
	row "" "  recorder CPU steady, % core: lean / every poll" "$(med 2 "$rp")/$(med 2 "$rd")" \
		"perfsame $(med 2 "$rs")" "-" "stated" "($(span "$rp") / $(span "$rd") / $(span "$rs"))"
	# steady state, as a recorder left on pays it: the target's added
	# CPU per poll and the recorder's steady CPU per poll, without what
	# starting and finishing cost once (both recorders pay that)
	a=""
	for i in $(seq "$PAIRS"); do
		a="$a $(calc "(${LW[2o-d9lean-$i]} - ${LW[2o-det-$i]} + $(lean_steady 2o d9lean $i)) / \
			((${LW[2o-perfsame-$i]} - ${LW[2o-det-$i]} + $(lean_steady 2o perfsame $i)) > 1 ? \
			(${LW[2o-perfsame-$i]} - ${LW[2o-det-$i]} + $(lean_steady 2o perfsame $i)) : 1)")"
	done
	row "" "  steady CPU/poll added (target + recorder's steady): lean / perfsame's" \
		"$(med 3 "$a")" "-" "$(med 3 "$a")" "stated" "($(span "$a"))"
	it=$(lean_iters 1.5)
	lean_round 2p "det d9lean d9 perfsame" \
		"$DEMO" --bench-polls --bench-iters "$it" -w 2 -q -d "$LEAN_SECS"
	row 2p "lean mode: 2 workers, 1.5 us polls ($it iterations, ~1.2M polls/s)" "" "" "" "" ""
	lp=$(lean_vals LR 2p d9lean)
	rd=$(lean_vals LR 2p d9)
	rs=$(lean_vals LR 2p perfsame)
	row "" "  recorder CPU steady, % of one core (lean)" "$(med 2 "$lp")" \
		"every poll $(med 2 "$rd"), perfsame $(med 2 "$rs")" "$(calc "$(med 2 "$lp") / $(med 2 "$rd")")" \
		"<= 3%" "$(spread_verdict "$lp" 3) ($(span "$lp") / $(span "$rd"))"
	for c in det d9lean d9 perfsame; do
		a=$(lean_vals LC 2p $c)
		row "" "  CPU ns/poll incl. recorder: $c" "$(med 0 "$a")" "-" "-" "-" "($(span "$a"))"
	done
	a=$(lean_added 2p d9lean)
	row "" "  CPU/poll added over det: lean / perfsame's" "$(med 3 "$a")" "-" \
		"$(med 3 "$a")" "<= 0.500" "$(spread_verdict "$a" 0.5) ($(span "$a"))"
}

if [ "$BENCH_ONLY" = lean ]; then
	lean_rows
	note "BENCH_ONLY=lean: rows 2o and 2p only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi

# recprof ID CMD...: an untimed run of CMD with `d9prof record -p` attached,
# and `perf record -g` of the recorder itself for ~4 s once it has settled;
# one row: the share of the recorder's samples in zstd (libzstd), encode
# (encode_events, trace_writer__*), drain/decode (drain_ring, drain_shim,
# shim_seg__ns, d9_ring_*), livestate, the kernel and the rest.
recprof() {
	local id=$1 wpid rpid split n
	shift
	bg prof-w "$@"
	wpid=$BG
	wait_line "$RUN/prof-w.out" '^ready' 30
	bg prof-rec "$D9" record -p "$(kv "$RUN/prof-w.out" pid)" -o "$RUN/prof.d9"
	rpid=$BG
	sleep 1
	run perf record -N -q -g -F 999 -p "$rpid" -o "$RUN/prof.data" -- sleep 4 \
		2>"$RUN/prof-perf.err" || die "perf record of the recorder failed: $(tail -1 "$RUN/prof-perf.err")"
	wait_bg "$rpid" "d9prof record -p (profiled)"
	wait_bg "$wpid" "the profiled workload"
	perf report -i "$RUN/prof.data" --no-children --sort dso,sym -g none --stdio \
		-q --percent-limit 0 2>/dev/null >"$RUN/prof.txt" || die "perf report of the recorder failed"
	n=$(perf report -i "$RUN/prof.data" --stats 2>/dev/null |
		awk '/^ *SAMPLE events:/ { print $3; exit }')
	split=$(awk '$1 ~ /%$/ {
		p = $1; sub(/%/, "", p); dso = $2; sym = $4
		if (dso ~ /libzstd/) c = "zstd"
		else if (sym ~ /^(encode_events|trace_writer__)/) c = "enc"
		else if (sym ~ /^(drain_ring|drain_shim|shim_seg__ns|d9_ring_)/) c = "drain"
		else if (sym ~ /^(livestate|feed_one|feed_poll)/) c = "live"
		else if (dso == "[kernel.kallsyms]") c = "kern"
		else c = "oth"
		v[c] += p
	} END { printf "%.0f/%.0f/%.0f/%.0f/%.0f/%.0f", v["zstd"], v["enc"], v["drain"],
		v["live"], v["kern"], v["oth"] }' "$RUN/prof.txt")
	row "" "  rec. CPU %: zstd/enc/drain/live/kern/other" "$split" "-" "-" "stated" \
		"(${n:-?} samples, 4 s)"
	note "$id recorder CPU split: perf record -g -F 999 of d9prof record for 4 s; % of its"
	note "   samples in libzstd / encode_events+trace_writer__* / drain_ring, drain_shim,"
	note "   shim_seg__ns, d9_ring_* / livestate*, feed_one, feed_poll / [kernel.kallsyms] / anything else"
	rm -f "$RUN/prof.d9" "$RUN/prof.data"
}

# recfixed ID CMD...: what a recording costs whatever its length (start-up:
# the kallsyms snapshot, perf buffers; the end: symbolization): the
# recorder's CPU seconds over 3 recordings of 0.2 s each, --no-shim, of one
# run of CMD, median; and that spread over a PAIR_SECS run of CMD as
# recorder CPU ns per poll (a part of every arm's recorder figure above).
recfixed() {
	local id=$1 wpid i cpu=""
	shift
	bg fix-w "$@"
	wpid=$BG
	wait_line "$RUN/fix-w.out" '^ready' 30
	for i in 1 2 3; do
		run $TIME -f '%e %U %S %M' -o "$RUN/fix-$i.time" "$D9" record --no-shim \
			-p "$(kv "$RUN/fix-w.out" pid)" -d 0.2 -o "$RUN/fix.d9" \
			2>"$RUN/fix-rec.err" || die "d9prof record -d 0.2 failed: $(tail -1 "$RUN/fix-rec.err")"
		cpu="$cpu $(cpu_s "$RUN/fix-$i.time")"
	done
	wait_bg "$wpid" "the workload of the fixed-cost runs"
	row "" "  recorder fixed CPU per recording, s" "$(med 3 "$cpu")" "-" "-" "stated" \
		"= $(round 0 "$(median $cpu) * 1e9 / ($(kv "$RUN/fix-w.out" polls_per_sec) * $PAIR_SECS)") ns/poll over $PAIR_SECS s ($(span "$cpu"))"
	note "$id recorder fixed CPU: 3 recordings of 0.2 s (--no-shim) of one run; start-up"
	note "   (kallsyms snapshot, perf buffers) and symbolization, whatever the length"
	rm -f "$RUN/fix.d9"
}

NARMS=${#OH_ARMS[@]}
say "2/4 recording overhead: demo --bench-polls, $PAIRS x $NARMS runs of $PAIR_SECS s"
overhead 2a "demo --bench-polls -w 2 (~1.2M polls/s)" 1.03 3 \
	"$DEMO" --bench-polls -w 2 -q -d "$PAIR_SECS"
DEMO_TRACE=$LAST_ATT_TRACE
DEMO_EVENTS=$LAST_ATT_EVENTS
DEMO_SAMPLES=$LAST_ATT_SAMPLES
DEMO_TRACE_SIZE=$(fsize "$DEMO_TRACE")
say "2/4 recorder CPU split and fixed cost: perf record -g of d9prof record on demo --bench-polls (~8 s), 3 short recordings (~5 s)"
recprof 2a "$DEMO" --bench-polls -w 2 -q -d 7
recfixed 2a "$DEMO" --bench-polls -w 2 -q -d 5
say "2/4 recording overhead: bench_spin -u $SPIN_US (~200k polls/s), $PAIRS x $NARMS runs"
overhead 2b "bench_spin -t 2 -u $SPIN_US (~200k polls/s)" 1.01 - \
	"$SPIN" -t 2 -u "$SPIN_US" -d "$PAIR_SECS"
say "2/4 recording overhead: demo --bench-work-ns $DEMO_WORK_NS (~200k polls/s), $PAIRS x $NARMS runs"
overhead 2c "demo --bench-work-ns $DEMO_WORK_NS (~200k polls/s)" 1.01 - \
	"$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q -d "$PAIR_SECS"
say "2/4 lean mode: the hidden-check workload and ~1.2M polls/s, $PAIRS rounds"
lean_rows
if [ "$BENCH_ONLY" = 2 ]; then
	note "BENCH_ONLY=2: sections 1 and 2a-2c only; total bench time $(($(date +%s) - T_START)) s"
	print_table
	exit 0
fi

# The leaf-caller step (ustack.h): each CPU sample carries 512 bytes of
# stack and the recorder takes a CFI step. Interleaved runs of bench_spin
# with it (default) and without (--cpu-stack 0): the recorder's CPU per
# sample, the workload's CPU per poll, trace bytes per sample.
leafstep() {
	local i k arm rns="" fns="" wr="" sz="" fsz="" e u s m n cw cf
	for i in $(seq "$PAIRS"); do
		for k in 0 1; do
			arm=$(echo d9 d9fp | cut -d' ' -f$(((i - 1 + k) % 2 + 1)))
			sampled_run "2d-$arm-$i" "$arm" "$SPIN" -t 2 -u "$SPIN_US" -d "$PAIR_SECS"
			read -r e u s m <<<"$(tail -1 "$RUN/2d-$arm-$i.time")"
			n=$(rec_samples "$RUN/2d-$arm-$i-rec.err")
			if [ "$arm" = d9 ]; then
				rns="$rns $(calc "($u + $s) * 1e9 / $n")"
				sz="$sz $(calc "$(fsize "$RUN/2d-$arm-$i.d9") / $n")"
			else
				fns="$fns $(calc "($u + $s) * 1e9 / $n")"
				fsz="$fsz $(calc "$(fsize "$RUN/2d-$arm-$i.d9") / $n")"
			fi
		done
		cw=$(calc "$(cpu_s "$RUN/2d-d9-$i.wtime") * 1e9 / $(polls "2d-d9-$i")")
		cf=$(calc "$(cpu_s "$RUN/2d-d9fp-$i.wtime") * 1e9 / $(polls "2d-d9fp-$i")")
		wr="$wr $(calc "$cw / $cf")"
	done
	row 2e "leaf-caller step (bench_spin; vs --cpu-stack 0)" "" "" "" "" ""
	row "" "  recorder CPU per sample, us (with / without)" \
		"$(calc "$(median $rns) / 1000")/$(calc "$(median $fns) / 1000")" "-" \
		"$(calc "($(median $rns) - $(median $fns)) / 1000")" "cost stated" \
		"+us/sample ($(calc "$(minof $rns) / 1000")..$(calc "$(maxof $rns) / 1000"))"
	row "" "  workload CPU/poll with / without the copy" "$(median $wr)" "-" "-" \
		"< 1.010" "$(verdict "$(median $wr) < 1.01") ($(minof $wr)..$(maxof $wr))"
	row "" "  trace bytes per sample (with / without)" \
		"$(median $sz)/$(median $fsz)" "-" "$(calc "$(median $sz) / $(median $fsz)")" \
		"-" "-"
}
say "2/4 leaf-caller step: bench_spin with and without --cpu-stack 0, $PAIRS x 2 runs"
leafstep
say "2/4 no frame pointers: fpless/recurse by d9prof (auto, fp) and perf --call-graph dwarf, $PAIRS x 3 runs"
fpless_row
switches_row
say "2/4 a blocking target: perf bench sched pipe by d9prof (bpf, --offcpu-min 1ms, perf), $PAIRS x 3 runs"
min_row

# Wakeups (run-queue time): sched_waking, system-wide and filtered to the
# target's tids, and every CPU's switches (unfiltered, no stacks; row 2i
# prices those for other processes). Interleaved runs of
# bench_spin -w (two threads passing a token through pipes: every poll
# blocks and is woken) recorded at the defaults and with --no-wakeups:
# the run-queue records per second, the recorder's CPU, the workload's
# CPU per poll.
wakecost() {
	local i k arm rate="" rw="" rn="" wr="" e u s m n cw cn secs
	for i in $(seq "$PAIRS"); do
		for k in 0 1; do
			arm=$(echo d9 d9nw | cut -d' ' -f$(((i - 1 + k) % 2 + 1)))
			sampled_run "2f-$arm-$i" "$arm" "$SPIN" -t 2 -u 5 -w -d "$PAIR_SECS"
			read -r e u s m <<<"$(tail -1 "$RUN/2f-$arm-$i.time")"
			if [ "$arm" = d9 ]; then
				n=$(sed -n 's/.*run queue ([^)]*): \([0-9]*\) intervals.*/\1/p' \
					"$RUN/2f-$arm-$i-rec.err" | tail -1)
				secs=$(sed -n 's/.*recorded \([0-9.]*\) s of.*/\1/p' \
					"$RUN/2f-$arm-$i-rec.err" | tail -1)
				rate="$rate $(calc "${n:-0} / ${secs:-1}")"
				rw="$rw $(calc "($u + $s) / ${secs:-1} * 100")"
			else
				secs=$(sed -n 's/.*recorded \([0-9.]*\) s of.*/\1/p' \
					"$RUN/2f-$arm-$i-rec.err" | tail -1)
				rn="$rn $(calc "($u + $s) / ${secs:-1} * 100")"
			fi
		done
		cw=$(calc "$(cpu_s "$RUN/2f-d9-$i.wtime") * 1e9 / $(polls "2f-d9-$i")")
		cn=$(calc "$(cpu_s "$RUN/2f-d9nw-$i.wtime") * 1e9 / $(polls "2f-d9nw-$i")")
		wr="$wr $(calc "$cw / $cn")"
	done
	row 2f "wakeups (bench_spin -w, pipe ping-pong; vs --no-wakeups)" "" "" "" "" ""
	row "" "  run-queue intervals recorded per s" "$(median $rate)" "-" "-" "stated" \
		"($(minof $rate)..$(maxof $rate))"
	row "" "  recorder CPU, % core (with / without)" \
		"$(median $rw)/$(median $rn)" "-" "$(calc "$(median $rw) - $(median $rn)")" \
		"cost stated" "($(minof $rw)..$(maxof $rw) / $(minof $rn)..$(maxof $rn))"
	row "" "  workload CPU/poll with / without wakeups" "$(median $wr)" "-" "-" \
		"cost stated" "($(minof $wr)..$(maxof $wr))"
}
# The Rust binding on Tokio: d9demo-tokio --bench interleaves, in one
# process, batches of polls of a task that only yields, spawned by
# tokio::spawn and by d9prof::tokio::spawn, and prints the median ns a
# marked poll adds; PAIRS runs detached and PAIRS with `d9prof record -p`
# attached, alternating. A marked poll writes three records (wake, poll
# begin, poll end): the attached target is twice three C markers (row 1c).
tokio_row() {
	local i k arm dd="" da="" pid plain=""
	for i in $(seq "$PAIRS"); do
		for k in 0 1; do
			arm=$(echo det att | cut -d' ' -f$(((i - 1 + k) % 2 + 1)))
			bg "tk-$arm-$i" "$TOKIO" --bench -d "$PAIR_SECS"
			pid=$BG
			wait_line "$RUN/tk-$arm-$i.out" '^ready' 30
			if [ "$arm" = att ]; then
				run "$D9" record -p "$(kv "$RUN/tk-att-$i.out" ready)" \
					-o "$RUN/tk-att-$i.d9" 2>"$RUN/tk-att-$i-rec.err" ||
					die "d9prof record -p (tokio bench) failed"
			fi
			wait_bg "$pid" "d9demo-tokio --bench"
		done
		dd="$dd $(kv "$RUN/tk-det-$i.out" added_ns_per_poll)"
		da="$da $(kv "$RUN/tk-att-$i.out" added_ns_per_poll)"
		plain="$plain $(kv "$RUN/tk-det-$i.out" plain_ns_per_poll)"
	done
	local lim
	lim=$(calc "2 * 3 * $A1") # A1: ns per attached C marker call
	row 5 "Tokio: ns a marked poll adds (d9prof::tokio)" "" "" "" "" ""
	row "" "  detached, medians of runs" "$(median $dd) ($(minof $dd)..$(maxof $dd))" \
		"tokio::spawn $(median $plain) ns/poll" "-" "<= 5 ns" "$(spread_verdict "$dd" 5)"
	row "" "  recorder attached, medians of runs" "$(median $da) ($(minof $da)..$(maxof $da))" \
		"3 C markers $(calc "3 * $A1") ns" "-" "<= $lim ns" "$(spread_verdict "$da" "$lim")"
}
say "2/4 wakeups: bench_spin -w with and without --no-wakeups, $PAIRS x 2 runs"
wakecost

if [ -x "$TOKIO" ]; then
	say "2/4 Tokio binding: $PAIRS x 2 runs of $PAIR_SECS s"
	tokio_row
else
	row 5 "Tokio: ns added per poll" "-" "-" "-" "-" "skipped: no $TOKIO (needs cargo)"
fi
say "2/4 zero-code Tokio: $PAIRS x 3 runs of $ZC_SECS s"
zerocode_row
scale_row

# sample_rec NAME PID SECS: VmRSS and CPU of PID every SECS while it runs,
# as "seconds rss_kib cpu_ticks" lines in $RUN/NAME.samples
sample_rec() {
	local t0 r c
	t0=$(date +%s.%N)
	: >"$RUN/$1.samples"
	while kill -0 "$2" 2>/dev/null; do
		r=$(awk '/^VmRSS/ { print $2 }' "/proc/$2/status" 2>/dev/null)
		c=$(sed 's/.*) //' "/proc/$2/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		[ -n "$r" ] && [ -n "$c" ] &&
			echo "$(calc "$(date +%s.%N) - $t0") $r $c" >>"$RUN/$1.samples"
		sleep "$3"
	done
}
# cpu_pct NAME: the recorder's CPU over its samples, % of a core
cpu_pct() {
	awk -v tick="$(getconf CLK_TCK)" '{ t = $1; c = $3 } END { printf "%.1f", c / tick / t * 100 }' \
		"$RUN/$1.samples"
}

say "2/4 recorder RSS over a $RSS_SECS s run of demo --bench-polls"
bg rss-demo "$DEMO" --bench-polls -w 2 -q -d $((RSS_SECS + 3))
RPID=$BG
wait_line "$RUN/rss-demo.out" '^pid' 30
bg rss-rec "$D9" record -p "$RPID" -d "$RSS_SECS" -o "$RUN/rss.d9"
DPID=$BG
sample_rec rss "$DPID" 2
wait_bg "$DPID" "d9prof record -p demo ($RSS_SECS s)"
wait_bg "$RPID" "demo ($RSS_SECS s)"
TICK=$(getconf CLK_TCK)
read -r RSS_FIRST RSS_LAST RSS_MAX RSS_CPU _ <<EOF
$(awk -v tick="$TICK" '$1 <= 10 && $2 > first { first = $2 }
	{ last = $2; if ($2 > max) max = $2; t = $1; c = $3; n++ }
	END { printf "%d %d %d %.1f %d", first, last, max, c / tick / t * 100, n }' "$RUN/rss.samples")
EOF
RSS_SERIES=$(awk '{ printf "%s%d", (NR > 1 ? " " : ""), $2 / 1024 }' "$RUN/rss.samples")
row 2d "recorder VmRSS, KiB: max first 10 s -> end" "$RSS_FIRST -> $RSS_LAST" "-" \
	"$(calc "$RSS_LAST / $RSS_FIRST")" "flat (end <= 1.10x)" \
	"$(verdict "$RSS_LAST <= 1.10 * $RSS_FIRST")"
row "" "  recorder CPU over the $RSS_SECS s run, % core" "$RSS_CPU" "-" "-" "< 5%" \
	"$(verdict "$RSS_CPU < 5")"
row "" "  shim records dropped / recorded ($RSS_SECS s)" \
	"$(rec_drops "$RUN/rss-rec.err")/$(rec_events "$RUN/rss-rec.err")" "-" "-" "0 dropped" \
	"$(verdict "$(rec_drops "$RUN/rss-rec.err") == 0")"
note "2d VmRSS every 2 s, MiB: $RSS_SERIES (peak $RSS_MAX KiB)"
rm -f "$RUN/rss.d9"

# The flight recorder: a plain recording, FLIGHT_SECS of --flight=30s, a
# plain recording again, of one demo at ~200k polls/s.
flight_row() {
	local wpid rpid p1 p2 fc r60 rend rmax series
	bg fl-demo "$DEMO" --bench-polls --bench-work-ns "$DEMO_WORK_NS" -w 2 -q \
		-d $((FLIGHT_SECS + 2 * FLIGHT_CMP_SECS + 30))
	wpid=$BG
	wait_line "$RUN/fl-demo.out" '^pid' 30
	for arm in plain1 flight plain2; do
		if [ "$arm" = flight ]; then
			mkdir -p "$RUN/flight"
			bg "fl-$arm" "$D9" record -p "$wpid" --flight=30s -d "$FLIGHT_SECS" \
				-o "$RUN/flight"
		else
			bg "fl-$arm" "$D9" record -p "$wpid" -d "$FLIGHT_CMP_SECS" -o "$RUN/fl-$arm.d9"
		fi
		rpid=$BG
		sample_rec "fl-$arm" "$rpid" 5
		wait_bg "$rpid" "d9prof record ($arm)"
		rm -f "$RUN/fl-$arm.d9"
	done
	stop_bg "$wpid"
	p1=$(cpu_pct fl-plain1)
	p2=$(cpu_pct fl-plain2)
	fc=$(cpu_pct fl-flight)
	read -r r60 rend rmax <<EOF2
$(awk '$1 <= 60 { r60 = $2 } { last = $2; if ($2 > max) max = $2 } END { print r60 + 0, last + 0, max + 0 }' "$RUN/fl-flight.samples")
EOF2
	series=$(awk 'NR % 6 == 1 { printf "%s%d", (NR > 1 ? " " : ""), $2 / 1024 }' "$RUN/fl-flight.samples")
	row 2g "flight recorder, demo ~200k polls/s, --flight=30s, $FLIGHT_SECS s" "" "" "" "" ""
	row "" "  recorder CPU % core: flight / plain (before, after)" "$fc" "$p1, $p2" \
		"$(calc "$fc / (($p1 + $p2) / 2)")" "<= plain" \
		"$(verdict "$fc <= ($p1 + $p2) / 2")"
	row "" "  recorder VmRSS, KiB: at 60 s -> end (max)" "$r60 -> $rend ($rmax)" "-" \
		"$(calc "$rmax / $r60")" "flat (max <= 1.10x)" "$(verdict "$rmax <= 1.10 * $r60")"
	note "2g VmRSS every 30 s, MiB: $series; $(grep 'flight recorder:' "$RUN/fl-flight.err" |
		sed 's/^d9prof: //')"
	rm -rf "$RUN/flight"
}
say "2/4 flight recorder: $FLIGHT_SECS s of --flight=30s between two ${FLIGHT_CMP_SECS} s plain recordings"
flight_row
say "2/4 d9prof top: beside a flight recorder and alone, $PAIRS rounds"
top_row
say "2/4 record --upload: with and without, $PAIRS rounds"
upload_row
say "2/4 the detectors as flight triggers: with and without, $PAIRS rounds at two rates"
detect_row
say "2/4 the Parquet tables: the writer, their size, --upload-tables"
tables_row
say "2/4 ls and fleet of a simulated bucket of 144,000 keys (~3 minutes)"
bucket_row



# ---- 3. analysis speed -------------------------------------------------------------

HZ=$SAMPLE_HZ
[ "$HZ" -le "$MAX_RATE" ] || HZ=$MAX_RATE
TICK=$(getconf CLK_TCK)
proc_cpu() {	# CPU seconds of pid $1 so far
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk -v t="$TICK" '{ printf "%.3f", ($12 + $13) / t }'
}
# sample_run NAME SAMPLES PERF(0/1): record a 2-thread bench_spin at $HZ with
# d9prof (and perf record -g at once when PERF=1) until the workload has used
# SAMPLES / HZ CPU-seconds (+10%), then stop both with SIGINT at the same
# moment: under other load the count comes out right anyway.
sample_run() {
	local name=$1 n=$2 withperf=$3 wpid target d9rec perfrec="" c0 c need t0 rc
	bg "spin-$name" "$SPIN" -t 2 -u 100 -d 600
	wpid=$BG
	wait_line "$RUN/spin-$name.out" '^ready' 30
	target=$(kv "$RUN/spin-$name.out" pid)
	bg "$name-rec" "$D9" record -p "$target" -F "$HZ" -o "$RUN/$name.d9"
	d9rec=$BG
	if [ "$withperf" = 1 ]; then
		bg perf-rec perf record -N -q -e cpu-clock -F "$HZ" -g -p "$target" \
			-o "$RUN/perf.data"
		perfrec=$BG
	fi
	c0=$(proc_cpu "$target")
	need=$(calc "$n * 1.10 / $HZ")
	t0=$(date +%s)
	while :; do
		sleep 0.25
		c=$(proc_cpu "$target")
		[ -n "$c" ] || die "bench_spin exited early"
		awk "BEGIN { exit !($c - $c0 >= $need) }" && break
		if [ $(($(date +%s) - t0)) -ge 240 ]; then
			say "only $(calc "$c - $c0") CPU-s of $need in 240 s; stopping there"
			break
		fi
	done
	kill -INT "$d9rec" $perfrec 2>/dev/null
	wait_bg "$d9rec" "d9prof record -F $HZ ($name)"
	if [ -n "$perfrec" ]; then
		wait "$perfrec"
		rc=$?
		reaped "$perfrec"
		[ $rc = 0 ] || [ $rc = 130 ] ||
			die "perf record -F $HZ -g failed (exit $rc): $(tail -2 "$RUN/perf-rec.err")"
	fi
	stop_bg "$wpid"
	SECS=$(($(date +%s) - t0))
}

say "3/4 analysis: d9prof record and perf record -g at $HZ Hz on one workload at once"
sample_run big "$BIG_SAMPLES" 1
BIG_SECS=$SECS
D9_N=$(rec_samples "$RUN/big-rec.err")
[ -n "$D9_N" ] || die "no sample count from d9prof record: $(tail -1 "$RUN/big-rec.err")"
PERF_N=$(perf report -i "$RUN/perf.data" --stats 2>/dev/null |
	awk '/^ *SAMPLE events:/ { print $3; exit }')
[ -n "$PERF_N" ] || die "cannot count the samples in perf.data"
PERF_THROTTLE=$(perf report -i "$RUN/perf.data" --stats 2>/dev/null |
	awk '/^ *THROTTLE events:/ { print $3; exit }')
MAX_RATE_AFTER=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo "?")
note "3 ~$BIG_SECS s at $HZ Hz: d9prof $D9_N samples (lost $(rec_lost "$RUN/big-rec.err")," \
	"$(rec_events "$RUN/big-rec.err") shim events), perf $PERF_N samples" \
	"(throttle events ${PERF_THROTTLE:-0}); perf_event_max_sample_rate $MAX_RATE -> $MAX_RATE_AFTER"

say "3/4 analysis: a ~10x smaller trace of the same workload"
sample_run small $((BIG_SAMPLES / 10)) 0
SMALL_N=$(rec_samples "$RUN/small-rec.err")
[ -n "$SMALL_N" ] || die "no sample count from d9prof record (small)"

say "3/4 analysis: timing flame, tasks and perf script"
# one run of perf script (slow), with its peak RSS
run $TIME -f '%e %M' -o "$RUN/perf-script.time" perf script -i "$RUN/perf.data" \
	>/dev/null 2>"$RUN/perf-script.err" || die "perf script failed"
read -r PS_SECS PS_RSS <<<"$(tail -1 "$RUN/perf-script.time")"
hf() {	# hf NAME CMD: mean seconds over hyperfine runs
	hyperfine -N -w 1 -m 5 --export-csv "$RUN/$1.csv" "$2" >/dev/null 2>"$RUN/$1.err" ||
		die "hyperfine '$2' failed: $(tail -2 "$RUN/$1.err")"
	awk -F, 'NR == 2 { printf "%.3f", $2 }' "$RUN/$1.csv"
}
FL_SECS=$(hf flame "$D9 flame -i $RUN/big.d9 --format folded -o /dev/null")
TK_SECS=$(hf tasks "$D9 tasks -i $RUN/big.d9")
$TIME -f '%M' -o "$RUN/flame-big.rss" "$D9" flame -i "$RUN/big.d9" --format folded \
	-o "$RUN/big.folded" 2>/dev/null || die "d9prof flame (1M) failed"
$TIME -f '%M' -o "$RUN/flame-small.rss" "$D9" flame -i "$RUN/small.d9" --format folded \
	-o "$RUN/small.folded" 2>/dev/null || die "d9prof flame (small) failed"
FL_RSS=$(tail -1 "$RUN/flame-big.rss")
FS_RSS=$(tail -1 "$RUN/flame-small.rss")
ST_BIG=$(wc -l <"$RUN/big.folded")
ST_SMALL=$(wc -l <"$RUN/small.folded")
PER_SAMPLE=$(calc "($FL_RSS - $FS_RSS) * 1024 / ($D9_N - $SMALL_N)")

row 3a "trace for analysis: samples (>= $BIG_SAMPLES)" "$D9_N" "perf $PERF_N" \
	"$(calc "$D9_N / $PERF_N")" ">= $BIG_SAMPLES" "$(verdict "$D9_N >= $BIG_SAMPLES")"
row 3b "flame --format folded, s (vs perf script)" "$FL_SECS" "perf script $PS_SECS" \
	"$(calc "$PS_SECS / $FL_SECS")x" ">= 20x faster" \
	"$(verdict "$PS_SECS / $FL_SECS >= 20")"
row 3c "  per sample, ns" "$(calc "$FL_SECS * 1e9 / $D9_N")" \
	"$(calc "$PS_SECS * 1e9 / $PERF_N")" "-" "-" "-"
row 3d "flame max RSS, KiB: ${SMALL_N} -> ${D9_N} samples" "$FS_RSS -> $FL_RSS" \
	"perf script $PS_RSS" "$(calc "$FL_RSS / $FS_RSS")" "grows w/ stacks" \
	"$(verdict "$PER_SAMPLE < 8") ($PER_SAMPLE B/sample)"
row "" "  distinct folded stacks" "$ST_SMALL -> $ST_BIG" "-" \
	"$(calc "$ST_BIG / $ST_SMALL")" "-" "-"
row 3e "tasks, s" "$TK_SECS" "-" "-" "-" "-"
if "$D9" polls --help >/dev/null 2>&1; then
	# newer than this script: a failure is reported, the table still printed
	if "$D9" polls -i "$RUN/big.d9" >/dev/null 2>"$RUN/polls.err"; then
		PL_SECS=$(hf polls "$D9 polls -i $RUN/big.d9")
		row 3f "polls, s" "$PL_SECS" "-" "-" "-" "-"
	else
		row 3f "polls, s" "FAILED" "-" "-" "-" "$(tail -1 "$RUN/polls.err" | cut -c1-40)"
		FAILED=1
	fi
else
	row 3f "polls, s" "n/a" "-" "-" "-" "(no 'polls' command)"
fi
note "3d MET when flame's RSS grows < 8 B per added sample (a design that keeps every"
note "   sample in memory pays >= 24 B); perf script's RSS is for the 1M trace"

# ---- 4. trace size -------------------------------------------------------------------

D9_BYTES=$(fsize "$RUN/big.d9")
PERF_BYTES=$(fsize "$RUN/perf.data")
D9_BPS=$(calc "$D9_BYTES / $D9_N")
PERF_BPS=$(calc "$PERF_BYTES / $PERF_N")
row 4a "trace bytes per sample (row 3 trace)" "$D9_BPS" "perf.data $PERF_BPS" \
	"$(calc "$D9_BPS / $PERF_BPS")" "<= 0.25 of perf.data" \
	"$(verdict "$D9_BPS <= 0.25 * $PERF_BPS")"
row 4b "trace bytes per shim event (row 2a trace)" \
	"$(calc "$DEMO_TRACE_SIZE / $DEMO_EVENTS")" "-" "-" "-" "-"
note "4a sizes: d9prof $D9_BYTES B (all of it, shim events included), perf.data $PERF_BYTES B"
note "4b $DEMO_TRACE_SIZE B for $DEMO_EVENTS shim events and $DEMO_SAMPLES samples"
note "total bench time $(($(date +%s) - T_START)) s"

print_table
[ "$FAILED" = 0 ] || die "a step failed (see the table)"
