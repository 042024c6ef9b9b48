#!/usr/bin/env bash
# Tokio as a target: the Tokio demo service (examples/tokio, built by
# `make tokio-demo-bin` with the d9prof crate) recorded through real
# perf_events and through the ctimer sampler. Task ids are looked up by
# name in `d9prof tasks`; names of functions come from the program's
# source (examples/tokio/src/main.rs), demangled, without ::h<hash>.
# And a new user's app: `cargo new`, README.md's snippets applied as they
# are written, built offline and recorded with no environment variable.
# And its requests as tracing spans (d9prof::tracing::D9Layer), checked
# against what the demo measured itself: each request's number and the
# slow route's sleep, printed per request ("req N ROUTE SLEPT_NS").
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

# record_demo NAME [ARGS]: start the service (its pid in SPID), record it
# 4 s with ARGS (in the background: its exit status in NAME.rc, RD_PID
# the recorder's)
record_demo() {
	local n=$1
	shift
	start_ready "$TMP/$n.out" "$BIN" -d 30 || return 1
	("$D9" record -p "$SPID" "$@" -d 4 -o "$TMP/$n.data" 2>"$TMP/$n.rec"
	echo $? >"$TMP/$n.rc") &
	RD_PID=$!
	PIDS+=("$RD_PID")
}

# demos_recorded: two services recorded at once, one by perf_event (NAME
# perf), one by the ctimer sampler (ctimer), the first time a test needs
# one
DEMOS_RECORDED=0
demos_recorded() {
	local p s
	[ "$DEMOS_RECORDED" = 1 ] && return 0
	DEMOS_RECORDED=1
	record_demo perf || return 1
	p=$RD_PID s=$SPID
	record_demo ctimer --sampler ctimer || return 1
	wait "$p"
	wait "$RD_PID"
	stop "$s"
	stop "$SPID"
	return 0
}

# demo_recorded NAME: NAME's recording (demos_recorded) and its tasks
demo_recorded() {
	local n=$1
	demos_recorded || return 1
	[ "$(cat "$TMP/$n.rc" 2>/dev/null)" = 0 ] ||
		fail "record failed: $(tail -3 "$TMP/$n.rec")" || return 1
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
	# the task's own code right under "[runtime]" (Tokio's frames down to
	# the crate's poll_marked, which called d9_poll_begin); all of them
	# with --full-stacks
	s=$(pct "$TMP/$n.cpu" "^task $id cpu_handler;\\[runtime\\];d9demo_tokio::cpu_handler::")
	"$D9" flame -i "$TMP/$n.data" --task "$id" --full-stacks --format folded \
		>"$TMP/$n.full" || return 1
	c=$(pct "$TMP/$n.full" ';d9prof::tokio::Marked<F>::poll_marked;d9demo_tokio::cpu_handler::')
	say "    $n: cpu_handler: $s% right under [runtime], $c% under poll_marked with --full-stacks"
	[ "$s" -ge 90 ] && [ "$c" -ge 90 ] ||
		fail "stacks not cut at the poll: $(sort -t' ' -k2 -n "$TMP/$n.cpu" | tail -1 |
			cut -c1-300)" || return 1
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

# pprof as Rust users read it: `<T as Trait>::method` frames whole (pprof
# cuts what is in <...> of a name it takes for C++ not yet simplified:
# "::lt"), in -top, -traces and -list; the tracing fields of a sample's
# spans (the request's route, of the span around slow_route) as string
# labels, so -tagfocus route=/slow keeps the slow route's spans and
# none of the fast one's
t_pprof_keeps_rust_names_and_span_fields() {
	local n
	need_demo || return 2
	need_go || return
	demo_recorded perf || return 1
	"$D9" export -i "$TMP/perf.data" --format pprof -o "$TMP/rs.pb.gz" ||
		fail "export --format pprof failed" || return 1
	pp -top -nodefraction=0 -nodecount=100000 "$TMP/rs.pb.gz" >"$TMP/rs.top" ||
		fail "pprof -top: $(tail -1 "$TMP/pp.err")" || return 1
	pp -traces "$TMP/rs.pb.gz" >"$TMP/rs.traces" ||
		fail "pprof -traces: $(tail -1 "$TMP/pp.err")" || return 1
	n=$(grep -cE '(^|[[:space:]])::[A-Za-z_]' "$TMP/rs.top" "$TMP/rs.traces" | awk -F: '{ s += $2 } END { print s }')
	[ "$n" = 0 ] || fail "$n frames cut to ::NAME:" \
		"$(grep -hE '(^|[[:space:]])::[A-Za-z_]' "$TMP/rs.top" "$TMP/rs.traces" | sort -u | head -3)" || return 1
	n=$(grep -cE ' <[^ ]+ as [^>]+>::[a-z_]+' "$TMP/rs.top")
	say "    -top: $n trait-impl functions named whole (<T as Trait>::method), none cut"
	[ "$n" -ge 1 ] || fail "no <T as Trait>::method function in -top" || return 1
	pp -list '<u64 as core::cmp::PartialOrd>::lt' "$TMP/rs.pb.gz" >"$TMP/rs.list"
	grep -q '^ROUTINE =* <u64 as core::cmp::PartialOrd>::lt ' "$TMP/rs.list" ||
		fail "pprof -list finds no <u64 as core::cmp::PartialOrd>::lt: $(head -2 "$TMP/rs.list")" ||
		return 1
	for r in slow fast; do
		pp -tagfocus "route=/$r" -tags "$TMP/rs.pb.gz" >"$TMP/rs.$r.tags" ||
			fail "pprof -tagfocus route=/$r: $(tail -1 "$TMP/pp.err")" || return 1
		sed -n '/^ span: /,/^$/p' "$TMP/rs.$r.tags" | sed -n 's/.*): //p' | sort -u >"$TMP/rs.$r.spans"
		say "    -tagfocus route=/$r: spans $(paste -sd' ' "$TMP/rs.$r.spans")"
	done
	[ "$(paste -sd' ' "$TMP/rs.slow.spans")" = "request slow_route" ] ||
		fail "route=/slow keeps other spans than request and slow_route" || return 1
	[ "$(paste -sd' ' "$TMP/rs.fast.spans")" = "fast_route request" ] ||
		fail "route=/fast keeps other spans than fast_route and request" || return 1
}

need_demo() {
	[ -x "$BIN" ] && return 0
	say "    no $BIN (make tokio-demo-bin; needs cargo)"
	return 2
}

# Beside the crate: library_flush, spawned with plain tokio::spawn (as a
# library spawns its tasks), unmarked, is seen from outside (zero-code: a
# task of its own, its polls not known) with >= 90% of library_work's
# samples; the crate's tasks keep their polls, and none is counted twice
# (no zero-code task for a marked one: only library_flush has none)
check_beside_crate() {
	local n=$1 z s id
	grep -q 'zero-code' "$TMP/$n.rec" ||
		fail "no zero-code tasks: $(grep -i tokio "$TMP/$n.rec")" || return 1
	z=$(awk 'NR > 1 && !/^#/ && $3 == "-"' "$TMP/$n.tasks")
	say "    $n: zero-code tasks: $(awk '{ print $1, $2 }' <<<"$z" | tr '\n' ' ')"
	[ "$(wc -l <<<"$z")" = 1 ] && grep -q ' d9demo_tokio::library_flush ' <<<"$z" ||
		fail "want library_flush alone: $z" || return 1
	"$D9" flame -i "$TMP/$n.data" --by task --format folded >"$TMP/$n.lib" || return 1
	s=$(pct <(grep -E ';d9demo_tokio::library_work(;| )' "$TMP/$n.lib") \
		'^task [0-9]+ d9demo_tokio::library_flush;')
	say "    $n: library_flush holds $s% of library_work's samples"
	[ "$s" -ge 90 ] || fail "only $s%" || return 1
	# its number may be a marked task's too: tokio:N is the one from outside
	id=$(awk '{ print $1 }' <<<"$z")
	"$D9" flame -i "$TMP/$n.data" --task "tokio:$id" --format folded >"$TMP/$n.tk" ||
		fail "flame --task tokio:$id failed" || return 1
	grep -q . "$TMP/$n.tk" && ! grep -v "^task $id d9demo_tokio::library_flush;" "$TMP/$n.tk" |
		head -2 | grep . || fail "--task tokio:$id is not library_flush alone" || return 1
	[ "$(awk '$2 == "cpu_handler" { print $3 }' "$TMP/$n.tasks")" -gt 0 ] ||
		fail "cpu_handler lost its polls: $(grep cpu_handler "$TMP/$n.tasks")" || return 1
}

t_perf_sampler() {
	need_demo || return 2
	demo_recorded perf || return 1
	check_cpu_task perf && check_blocking_and_names perf && check_beside_crate perf
}

t_ctimer_sampler() {
	need_demo || return 2
	demo_recorded ctimer || return 1
	grep -q "sampler: ctimer" "$TMP/ctimer.rec" || fail "did not use ctimer" || return 1
	check_cpu_task ctimer && check_blocking_and_names ctimer
}

# ---- requests as tracing spans --------------------------------------------

# spans_rec SECS: record the running demo SECS s; GOT: the slow_route spans
# whole in it
spans_rec() {
	"$D9" record -p "$SPID" -d "$1" -o "$TMP/sp.data" 2>"$TMP/sp.rec" ||
		fail "record failed: $(tail -3 "$TMP/sp.rec")" || return 1
	"$D9" spans -i "$TMP/sp.data" --instances --name slow_route --limit 0 --format json \
		>"$TMP/slow.json" || fail "spans --instances failed" || return 1
	GOT=$(python3 -c '
import json, sys
print(sum(1 for s in json.load(open(sys.argv[1]))["instances"]
          if not s["open_start"] and not s["open_end"]))' "$TMP/slow.json") || return 1
}

# The slow route's spans: served by the connection's task, blocked in the
# handler's own frame over the sleep, for as long as the handler measured
# its sleep (less what of it was the run queue after the wake-up); each in
# its request span; the slow route's event carries the same sleep. Its
# CPU profile (flame --span slow_route --min) is render_report's, and the
# fast route's holds none of it.
t_tracing_spans() {
	need_demo || return 2
	need_perf || return
	start_ready -t 10 "$TMP/sp.out" "$BIN" -d 120 || return 1
	# 60 slow requests (one in four, ~15 a second): ~90 ms of render_report
	# (3 s: 2 s held 50 to 62 whole slow_route spans, and 60 or more only
	# now and then, so that most runs recorded 2 s, then 4 s)
	enough 60 3 16 spans_rec
	case $? in 0) ;; 3) fail "too few slow requests" ;& *) return 1 ;; esac
	stop "$SPID"
	"$D9" spans -i "$TMP/sp.data" --instances --name request --limit 0 --format json \
		>"$TMP/req.json" || fail "spans --name request failed" || return 1
	"$D9" events -i "$TMP/sp.data" --name "slow route served" --format json \
		>"$TMP/ev.json" || fail "events failed" || return 1
	"$D9" info --json -i "$TMP/sp.data" >"$TMP/sp.info" || fail "info failed" || return 1
	python3 - "$TMP/slow.json" "$TMP/req.json" "$TMP/ev.json" "$TMP/sp.out" "$TMP/sp.info" <<'PY' || return 1
import json, re, sys
slow = json.load(open(sys.argv[1]))["instances"]
reqs = json.load(open(sys.argv[2]))["instances"]
events = json.load(open(sys.argv[3]))["events"]
truth = {}
for line in open(sys.argv[4]):
    f = line.split()
    if len(f) == 4 and f[0] == "req" and f[2] == "slow":
        truth[int(f[1])] = int(f[3])
def req_of(s):
    m = re.search(r"(?:^| )req=(\d+)(?: |$)", s["fields"] or "")
    return int(m.group(1)) if m else None
whole = [s for s in slow if not s["open_start"] and not s["open_end"]]
known = [s for s in whole if req_of(s) in truth]
print(f"    {len(known)} of {len(whole)} whole slow_route spans are requests the demo printed")
bad = []
for s in known:
    slept = truth[req_of(s)]
    tol = max(300_000, slept // 20)
    tasks = {t["name"] for t in s["tasks"]}
    sleep = [c for c in s["causes"] if c["what"] == "blocked"
             and "nanosleep" in c["call"] and "slow_route" in c["function"]]
    parent = [r for r in reqs if r["id"] == s["parent"] and req_of(r) == req_of(s)
              and "route=/slow" in (r["fields"] or "")]
    why = []
    if tasks != {"req_conn"}:
        why.append(f"tasks {sorted(tasks)}")
    if not sleep:
        why.append("no blocked cause in nanosleep under slow_route")
    if not slept - s["runq_ns"] - tol <= s["blocked_ns"] <= slept + tol:
        why.append(f"blocked {s['blocked_ns']} ns, runq {s['runq_ns']} ns, slept {slept} ns")
    if not parent:
        why.append(f"no request span {s['parent']} with req={req_of(s)} route=/slow")
    if why:
        bad.append((s, why))
ok = len(known) - len(bad)
print(f"    {ok} of {len(known)} named req_conn and the sleep under slow_route, blocked"
      " for what the handler measured (within 5% or 300 us, less its run queue), in their request")
for s, why in bad[:3]:
    print(f"    span req={req_of(s)}: {'; '.join(why)}: {json.dumps(s)[:400]}")
if len(whole) < 60 or len(known) * 10 < len(whole) * 9 or len(bad) * 10 > len(known):
    sys.exit(1)
# blocked in all as the handlers measured it, less the run queue; a
# switch-in the kernel did not report leaves its off-CPU interval out (a
# loss, said): as many spans short of their sleep, no more, are left out
lost = json.load(open(sys.argv[5]))["losses"].get("unreported_switch_ins", 0)
short = [s for s in known if s["blocked_ns"] <
         truth[req_of(s)] - s["runq_ns"] - max(300_000, truth[req_of(s)] // 20)]
out = {s["id"] for s in short[:lost]}
if out:
    print(f"    {len(out)} spans short of their sleep left out of the sums:"
          f" {lost} switch-ins unreported by the kernel")
b = sum(s["blocked_ns"] for s in known if s["id"] not in out)
t = sum(truth[req_of(s)] for s in known if s["id"] not in out)
q = sum(s["runq_ns"] for s in known if s["id"] not in out)
print(f"    blocked {b / 1e6:.1f} ms in all, the handlers measured {t / 1e6:.1f} ms"
      f" (run queue {q / 1e6:.1f} ms)")
if not 0.98 * (t - q) <= b <= 1.02 * t:
    sys.exit(1)
# the event: its values are the sleeps in us, as many as the spans
ev = events[0] if events else None
med = sorted(truth.values())[len(truth) // 2] / 1000
print(f"    event 'slow route served': {ev and ev['count']} of them, p50 {ev and ev['p50']} us,"
      f" the demo's median {med:.0f} us")
if not ev or ev["count"] < len(whole) or abs(ev["p50"] - med) > max(100, med / 20):
    sys.exit(1)
PY
	"$D9" flame -i "$TMP/sp.data" --span slow_route --min 3ms --format folded \
		>"$TMP/slow.folded" 2>/dev/null || fail "flame --span slow_route failed" || return 1
	"$D9" flame -i "$TMP/sp.data" --span fast_route --format folded \
		>"$TMP/fast.folded" 2>/dev/null || fail "flame --span fast_route failed" || return 1
	local sw sr fw fr fc
	sw=$(weight "$TMP/slow.folded")
	sr=$(pct "$TMP/slow.folded" ';d9demo_tokio::render_report(;| )')
	fw=$(weight "$TMP/fast.folded")
	fr=$(pct "$TMP/fast.folded" ';d9demo_tokio::render_report(;| )')
	fc=$(pct "$TMP/fast.folded" ';d9demo_tokio::checksum_body(;| )')
	say "    flame --span slow_route --min 3ms: $sw samples, $sr% in render_report;" \
		"--span fast_route: $fw samples, $fr% in render_report, $fc% in checksum_body"
	[ "$sw" -ge 40 ] && [ "$sr" -ge 80 ] ||
		fail "the slow route's profile is not render_report's:" \
			"$(sort -t' ' -k2 -n "$TMP/slow.folded" | tail -1 | cut -c1-300)" || return 1
	[ "$fw" -ge 10 ] && [ "$fr" = 0 ] && [ "$fc" -ge 50 ] ||
		fail "the fast route's profile: $(sort -t' ' -k2 -n "$TMP/fast.folded" | tail -1 |
			cut -c1-300)" || return 1
}

# snippet NAME: the code of README.md's block marked <!-- snippet: NAME -->
snippet() {
	awk -v m="<!-- snippet: $1 -->" '$0 == m { on = 1; next }
		on && /^<!-- \/snippet -->$/ { exit }
		on && !/^```/ { print }' "$ROOT/README.md"
}

# A fresh `cargo new` app with README's snippets (this checkout's path for
# /path/to/d9prof) builds offline, runs with no environment variable and no
# libd9prof beside it, and its task spawned by plain spawn() is named by
# its future's type; a broken D9PROF_LIB_DIR fails the build in one line.
t_new_app() {
	local app=$TMP/app s n
	command -v cargo >/dev/null || { say "    no cargo on PATH"; return 2; }
	ls -d /usr/share/cargo/registry/tokio-1.* >/dev/null 2>&1 ||
		{ say "    no Tokio crate in /usr/share/cargo/registry (scripts/install-deps.sh tokio)"; return 2; }
	for s in Cargo.toml .cargo/config.toml offline; do
		[ -n "$(snippet "$s")" ] || fail "README.md has no '$s' snippet" || return 1
	done
	(cd "$TMP" && cargo new --quiet --vcs none app) || fail "cargo new failed" || return 1
	snippet Cargo.toml | sed "s|/path/to/d9prof|$ROOT|" >>"$app/Cargo.toml"
	mkdir -p "$app/.cargo"
	{ snippet offline; snippet .cargo/config.toml; } >"$app/.cargo/config.toml"
	cat >"$app/src/main.rs" <<-'EOF'
		use std::time::{Duration, Instant};

		async fn compute_report(ms: u64) -> u64 {
		    let end = Instant::now() + Duration::from_millis(ms);
		    let mut h = 1u64;
		    while Instant::now() < end {
		        for i in 0..10_000u64 {
		            h = std::hint::black_box(h.wrapping_mul(31).wrapping_add(i));
		        }
		        tokio::task::yield_now().await;
		    }
		    h
		}

		fn main() {
		    let mut b = tokio::runtime::Builder::new_multi_thread();
		    d9prof::tokio::instrument(&mut b);
		    let rt = b.worker_threads(2).enable_all().build().unwrap();
		    rt.block_on(async {
		        let h = d9prof::tokio::spawn(compute_report(1500));
		        println!("report {}", h.await.unwrap());
		    });
		}
	EOF
	(cd "$app" && env -u D9PROF_LIB_DIR -u D9PROF_STATIC -u D9PROF_PKG_CONFIG \
		-u RUSTFLAGS -u CARGO_TARGET_DIR cargo build --release --offline --quiet) \
		>"$TMP/app.build" 2>&1 || fail "cargo build failed: $(tail -5 "$TMP/app.build")" || return 1
	! ldd "$app/target/release/app" | grep -q d9prof ||
		fail "app links libd9prof dynamically: $(ldd "$app/target/release/app" | grep d9prof)" ||
		return 1
	(cd "$app" && env -u LD_LIBRARY_PATH "$D9" record -o "$TMP/app.data" -- ./target/release/app) \
		>"$TMP/app.out" 2>"$TMP/app.rec" || fail "record failed: $(tail -3 "$TMP/app.rec")" || return 1
	grep -q '^report ' "$TMP/app.out" || fail "the app did not finish: $(cat "$TMP/app.out")" || return 1
	"$D9" tasks -i "$TMP/app.data" --wide --limit 0 >"$TMP/app.tasks" || fail "tasks failed" || return 1
	n=$(grep -Ec '^[0-9]+ +app::compute_report::\{\{closure\}\} src/main\.rs:20 +[1-9]' "$TMP/app.tasks")
	say "    app: $n task named app::compute_report::{{closure}} src/main.rs:20, with polls"
	[ "$n" = 1 ] || fail "no such task: $(head -3 "$TMP/app.tasks")" || return 1
	# and its stacks trimmed: the task's own code right under "[runtime]"
	# (README's debug = 1 names the async fn's body in full; neither
	# Tokio's nor the crate's frames)
	local id all top
	id=$(awk '$2 ~ /^app::compute_report::/ { print $1; exit }' "$TMP/app.tasks")
	"$D9" flame -i "$TMP/app.data" --task "$id" --format folded >"$TMP/app.folded" 2>/dev/null ||
		fail "flame failed" || return 1
	all=$(weight "$TMP/app.folded")
	top=$(awk -F';' '$2 == "[runtime]" && $3 ~ /^app::compute_report::/ { n = split($NF, w, " ");
		s += w[n] } END { print s + 0 }' "$TMP/app.folded")
	say "    app: $top of $all samples of the task right under [runtime], in app::compute_report::"
	[ "$all" -gt 0 ] && [ $((top * 10)) -ge $((all * 9)) ] ||
		fail "stacks not trimmed: $(sort -t' ' -k2 -n "$TMP/app.folded" | tail -1 | cut -c1-300)" ||
		return 1

	# an override that cannot work: one line naming it and the fix
	(cd "$app" && D9PROF_LIB_DIR=/nonexistent cargo build --release --offline --quiet) \
		>"$TMP/app.bad" 2>&1 && fail "a build with D9PROF_LIB_DIR=/nonexistent passed" && return 1
	n=$(grep -c 'D9PROF_LIB_DIR=/nonexistent has no libd9prof.* unset it' "$TMP/app.bad")
	[ "$n" -ge 1 ] || fail "no one-line reason: $(head -5 "$TMP/app.bad")" || return 1
	! grep -Eq 'panicked|stack backtrace' "$TMP/app.bad" ||
		fail "a panic: $(grep -m1 panicked "$TMP/app.bad")" || return 1
}

# make demo-tokio's page says each loss once: record's summary line, no
# view's "# lost:" footer or "data lost" flag again, each loss that the
# trace holds (info --json) said, and no "nothing lost" beside it
t_demo_says_each_loss_once() {
	local out=$TMP/demo
	need_demo || return
	OUT=$out SECS=1 B=$B "$ROOT/scripts/demo-tokio.sh" >"$TMP/demo.log" 2>&1 ||
		{ tail -5 "$TMP/demo.log"; fail "demo-tokio.sh failed"; return; }
	"$D9" info --json -i "$out/d9prof.data" 2>/dev/null | python3 -c "import json,sys
print(' '.join('%s=%d' % kv for kv in sorted(json.load(sys.stdin)['losses'].items())))" \
		>"$TMP/demo.losses" || { fail "info failed"; return; }
	say "    the trace's losses: $(cat "$TMP/demo.losses")"
	grep -E 'lost|cut short' "$TMP/demo.log" | sed 's/^/    page: /'
	python3 - "$TMP/demo.losses" "$TMP/demo.log" <<'PY' || { fail "a loss said other than once"; return; }
import re, sys
losses = dict(kv.split('=') for kv in open(sys.argv[1]).read().split())
page = open(sys.argv[2]).read().splitlines()
def lines(pat):
    return sum(1 for l in page if re.search(pat, l))
assert lines(r'^# lost: ') == 0 and lines(r'! data lost') == 0, 'a view said it again'
for key, pat in (('cpu_stacks_cut', r'CPU stacks cut short'),
                 ('tokio_untagged', r'found no task tag for'),
                 ('unreported_switch_ins', r'did not report \d+ switch-in')):
    n = int(losses.get(key, 0))
    want = 1 if n else 0
    assert lines(pat) == want, (key, n, lines(pat))
    assert not n or [l for l in page if re.search(pat, l) and
                     re.search(r'\b%d\b' % n, l)], (key, n, 'not its count')
assert not losses or lines(r'nothing lost') == 0, 'nothing lost beside a loss'
PY
}

e2e_run_tests t_perf_sampler t_ctimer_sampler t_pprof_keeps_rust_names_and_span_fields \
	t_new_app t_tracing_spans \
	t_demo_says_each_loss_once
