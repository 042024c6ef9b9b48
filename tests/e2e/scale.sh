#!/usr/bin/env bash
# ls and fleet over simulated buckets (tests/e2e/fleet/fake_fleet.py: a
# fleet's keys in the layout, with their index metadata, in s3rver on
# 127.0.0.1, tests/e2e/s3lib.sh); nothing is recorded:
#   - ls's peak memory does not grow with the keys: a bucket of ~20,000
#     keys lists within 10% of the RSS of one of ~700 with the same
#     hosts (the keys are folded as the pages come, not held);
#   - ls counts hosts, not service/host pairs: a host running two
#     services is one host, in the summary and in each bucket (and -i
#     s3:// of it says it holds two services, not two hosts);
#   - a window's listing (its day up to its end) keeps exactly the keys
#     that the generator says are in it, with each run's segment that
#     runs into its start; the indexes are read for each run's latest
#     segments, and what was left out is said.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=scale
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3lib.sh"
FAKE=$ROOT/tests/e2e/fleet/fake_fleet.py
TIME=/usr/bin/time

[ -x "$TIME" ] || e2e_skip_all "no $TIME to read a peak RSS (apt-get install time)"

# the two buckets, made once: "small" by signed PUTs (the S3 API), "big"
# in s3rver's own files (PUTs take ~4 ms each on s3rver); 10 hosts, 4 of
# them with a second service, one minute a segment
BUCKETS=''
buckets() {
	local rc
	if [ -n "$BUCKETS" ]; then
		# (the harness stopped the server after the last test)
		[ "$BUCKETS" = 0 ] || return "$BUCKETS"
		s3_restart
		return
	fi
	s3_start "$TMP/s3" bkt
	rc=$?
	BUCKETS=$rc
	[ "$rc" = 0 ] || return "$rc"
	python3 "$FAKE" --url "$S3_URL" --prefix small --hosts 10 --minutes 50 \
		--services 2 --two 3 >"$TMP/small.made" 2>&1 ||
		{ cat "$TMP/small.made"; BUCKETS=1; fail "cannot make the small bucket"; return; }
	python3 "$FAKE" --disk "$S3_DATA" --prefix big --hosts 10 --minutes 1440 \
		--services 2 --two 3 >"$TMP/big.made" 2>&1 ||
		{ cat "$TMP/big.made"; BUCKETS=1; fail "cannot make the big bucket"; return; }
	say "    small: $(cat "$TMP/small.made"); big: $(cat "$TMP/big.made")"
}

# ls_rss NAME ARGS...: d9prof ls ARGS as JSON into $TMP/NAME.json; prints
# its peak RSS in KB
ls_rss() {
	local name=$1
	shift
	$TIME -f '%M' -o "$TMP/$name.time" "$D9" ls "$@" --format json \
		>"$TMP/$name.json" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err" >&2; return 1; }
	tail -1 "$TMP/$name.time"
}

t_ls_memory_does_not_grow_with_the_keys() {
	local small big
	buckets || return
	# (twice each, the least: a page cache cold or warm is not the keys)
	small=$( (ls_rss small s3://bkt/small; ls_rss small s3://bkt/small) | sort -n | head -1)
	big=$( (ls_rss big s3://bkt/big; ls_rss big s3://bkt/big) | sort -n | head -1)
	[ -n "$small" ] && [ -n "$big" ] || { fail "ls failed"; return; }
	python3 - "$TMP/small.json" "$TMP/big.json" "$small" "$big" <<'EOF' || { fail "the listings are not what was made, or ls grew with the keys"; return; }
import json, sys
small, big = (json.load(open(f)) for f in sys.argv[1:3])
rs, rb = int(sys.argv[3]), int(sys.argv[4])
ks, kb = (sum(r['segments'] for r in j['runs']) for j in (small, big))
print('    ls of %d keys: peak RSS %d KB; of %d keys: %d KB (x%.3f for x%.1f the keys)'
      % (ks, rs, kb, rb, rb / rs, kb / ks))
assert ks == 10 * 50 + 4 * 50 and kb == 10 * 1440 + 4 * 1440, (ks, kb)
# the keys a run holds are not in memory: ~20,000 keys held cost ~8 MB
assert rb <= 1.10 * rs, (rs, rb)
EOF
}

t_ls_counts_hosts_not_service_host_pairs() {
	buckets || return
	"$D9" ls s3://bkt/small >"$TMP/small.txt" 2>"$TMP/small.err" ||
		{ cat "$TMP/small.err"; fail "ls failed"; return; }
	head -1 "$TMP/small.txt" | sed 's/^/    /'
	grep -q '^s3://bkt/small: 700 segments and 0 dumps (.*) of 10 hosts and 3 services, ' \
		"$TMP/small.txt" || { fail "not 10 hosts and 3 services"; return; }
	"$D9" ls s3://bkt/small --format json >"$TMP/small2.json" || { fail "ls failed"; return; }
	python3 - "$TMP/small2.json" <<'EOF' || { fail "the hosts are not counted once"; return; }
import json, sys
j = json.load(open(sys.argv[1]))
assert (j['hosts'], j['services'], len(j['runs'])) == (10, 3, 14), j
# every bucket has every host once, whatever its services
assert all(b['hosts'] == 10 for b in j['buckets']), [b['hosts'] for b in j['buckets']]
assert sum(b['segments'] for b in j['buckets']) == 700
# 2000 HEADs for 14 runs: 142 each, more than any has: all read
assert j['index_left_out'] == 0 and j['unindexed'] == 0, j
assert all(r['indexed'] == r['segments'] == 50 for r in j['runs']), j['runs']
EOF
	# -i s3:// of that host alone: one host, two services, said so
	"$D9" tasks -i s3://bkt/small --host host-000 >/dev/null 2>"$TMP/two.err" &&
		{ fail "two services read as one"; return; }
	sed 's/^/    /' "$TMP/two.err"
	[ "$(wc -l <"$TMP/two.err")" = 1 ] &&
		grep -q 'several services of one host (svc-side/host-000, svc0/host-000): choose one with --service (' \
			"$TMP/two.err" || { fail "not one line naming the host's services"; return; }
}

t_a_window_keeps_what_the_generator_put_in_it() {
	local from=2026-11-26T07:30 to=2026-11-26T08:00
	buckets || return
	"$D9" ls s3://bkt/big --from "$from" --to "$to" --format json >"$TMP/win.json" \
		2>"$TMP/win.err" || { cat "$TMP/win.err"; fail "ls failed"; return; }
	"$D9" ls s3://bkt/big >"$TMP/big.txt" 2>&1 || { fail "ls failed"; return; }
	grep '^(indexes read' "$TMP/big.txt" | sed 's/^/    /'
	python3 - "$FAKE" "$TMP/win.json" "$from" "$to" <<'EOF' || { fail "the window is not what the generator made"; return; }
import argparse, calendar, collections, importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location('fake_fleet', sys.argv[1])
ff = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ff)
a = argparse.Namespace(prefix='big', hosts=10, minutes=1440, services=2, two=3,
                       start='2026-11-26T00:00')
t = lambda s: calendar.timegm(time.strptime(s, '%Y-%m-%dT%H:%M'))
lo, hi = t(sys.argv[3]), t(sys.argv[4])
runs = collections.defaultdict(list)
for key, _, meta in ff.keys(a):
    p = key.split('/')
    runs[(p[3], p[4], p[5])].append(int(meta['d9prof-from']) // 10**9)
want = {}
for r, walls in runs.items():
    inside = [w for w in walls if lo <= w < hi]
    before = [w for w in walls if w < lo]
    # the one before the window runs into it, unless one begins at its start
    if before and lo not in walls:
        inside.append(max(before))
    want[r] = len(inside)
j = json.load(open(sys.argv[2]))
got = {(r['service'], r['host'], r['boot']): r['segments'] for r in j['runs']}
print('    %s to %s: %d segments of %d runs, as made' % (sys.argv[3], sys.argv[4],
      sum(got.values()), len(got)))
assert got == want, (got, want)
assert j['hosts'] == 10 and j['services'] == 3, j
# every segment of the window's runs is within the share of each: all read
assert j['index_left_out'] == 0 and j['unindexed'] == 0, j
assert all(r['indexed'] == r['segments'] for r in j['runs'])
EOF
	# the day: each run's latest 142 (2000 / 14 runs) read, the rest said
	grep -q "^(indexes read for the latest 142 segments of each run: 18172 of 20160 segments left out" \
		"$TMP/big.txt" || { fail "what was left out is not said"; return; }
}

e2e_run_tests
