#!/usr/bin/env bash
# Tokio as a target: the Tokio demo service (examples/tokio, built by
# `make tokio-demo-bin` with the d9prof crate) recorded through real
# perf_events and through the ctimer sampler. Task ids are looked up by
# name in `d9prof tasks`; names of functions come from the program's
# source (examples/tokio/src/main.rs), demangled, without ::h<hash>.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=tokio
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
BIN="$ROOT/$B/cargo/release/d9demo-tokio"

# pct FOLDED ERE: percent (integer) of the weight whose line matches ERE
pct() {
	awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) h += n }
		END { if (!t) print 0; else printf "%d\n", 100 * h / t }' "$1"
}

# record_demo NAME [ARGS]: start the service, record it 4 s with ARGS
record_demo() {
	local n=$1 pid
	shift
	start_ready "$TMP/$n.out" "$BIN" -d 30 || return 1
	pid=$SPID
	"$D9" record -p "$pid" "$@" -d 4 -o "$TMP/$n.data" 2>"$TMP/$n.rec" ||
		fail "record failed: $(tail -3 "$TMP/$n.rec")" || return 1
	stop "$pid"
	"$D9" tasks -i "$TMP/$n.data" --limit 0 --wide >"$TMP/$n.tasks" ||
		fail "tasks failed" || return 1
}
tid() { awk -v n="$2" '$2 == n { print $1; exit }' "$TMP/$1.tasks"; }

# cpu_handler: >= 90% of its CPU under burn_cpu, called from the async
# fn's body (inlined into the poll wrapper), no other task in burn_cpu
check_cpu_task() {
	local n=$1 id s c other
	id=$(tid "$n" cpu_handler)
	[ -n "$id" ] || fail "no cpu_handler task: $(head -5 "$TMP/$n.tasks")" || return 1
	"$D9" flame -i "$TMP/$n.data" --task "$id" --format folded >"$TMP/$n.cpu" || return 1
	s=$(pct "$TMP/$n.cpu" ';d9demo_tokio::burn_cpu(;| )')
	c=$(pct "$TMP/$n.cpu" \
		';d9demo_tokio::cpu_handler::\{\{closure\}\} \[inlined\];d9demo_tokio::burn_cpu(;| )')
	say "    $n: cpu_handler (task $id): $s% under burn_cpu, $c% with its caller chain"
	[ "$s" -ge 90 ] || fail "burn_cpu holds only $s% of cpu_handler" || return 1
	[ "$c" -ge 90 ] || fail "burn_cpu's caller chain in only $c%:" \
		"$(sort -t' ' -k2 -n "$TMP/$n.cpu" | tail -1 | cut -c1-300)" || return 1
	! grep -Eq '::h[0-9a-f]{16}(;| )' "$TMP/$n.cpu" || fail "a Rust hash in names" || return 1
	"$D9" flame -i "$TMP/$n.data" --format folded >"$TMP/$n.all" || return 1
	# (samples before the shim attached, the first ms or two, are
	# "[no poll]": they belong to no task, so to no other task either)
	other=$(grep '^task ' "$TMP/$n.all" | grep -v "^task $id cpu_handler;" |
		grep -c 'd9demo_tokio::burn_cpu')
	[ "$other" = 0 ] || fail "$other stacks of other tasks hold burn_cpu" || return 1
}

# blocking_handler: its own frame above libc's sleep in >= 90% of its
# off-CPU time; unnamed tasks carry their future's type and spawn location
check_blocking_and_names() {
	local n=$1 id s
	id=$(tid "$n" blocking_handler)
	"$D9" offcpu -i "$TMP/$n.data" --task "$id" --min-poll 1ms --format folded \
		>"$TMP/$n.off" || fail "offcpu failed" || return 1
	s=$(pct "$TMP/$n.off" ';d9demo_tokio::blocking_read;std::thread::functions::sleep;')
	say "    $n: blocking_handler (task $id): $s% of its off-CPU time under blocking_read -> sleep"
	[ "$s" -ge 90 ] || fail "only $s%: $(sort -t' ' -k2 -n "$TMP/$n.off" | tail -1 |
		cut -c1-300)" || return 1
	s=$(grep -Ec '^[0-9]+ +main::\{\{closure\}\}::\{\{closure\}\} src/main\.rs:[0-9]+ ' \
		"$TMP/$n.tasks")
	say "    $n: $s tasks named by type and spawn location (main::{{closure}}::{{closure}} src/main.rs:LINE)"
	[ "$s" -ge 40 ] || fail "want the 50 timer tasks by type and spawn location, got $s:" \
		"$(grep -v _handler "$TMP/$n.tasks" | sed -n 2p)" || return 1
}

t_perf_sampler() {
	record_demo perf || return 1
	check_cpu_task perf && check_blocking_and_names perf
}

t_ctimer_sampler() {
	record_demo ctimer --sampler ctimer || return 1
	grep -q "sampler: ctimer" "$TMP/ctimer.rec" || fail "did not use ctimer" || return 1
	check_cpu_task ctimer && check_blocking_and_names ctimer
}

[ -x "$BIN" ] || e2e_skip_all "no $BIN (make tokio-demo-bin; needs cargo)"
e2e_run_tests t_perf_sampler t_ctimer_sampler
