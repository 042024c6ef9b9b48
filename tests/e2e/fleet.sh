#!/usr/bin/env bash
# A fleet's store: `record --upload` into a real S3-compatible server on
# 127.0.0.1 (s3rver from npm, tests/e2e/s3lib.sh), read back by an
# independent client (Debian's AWS CLI) and by `d9prof ls`:
#   - the server stopped mid-recording and started again: nothing lost,
#     the retries counted;
#   - a wrong access key or bucket: one clear line, the recording goes on
#     locally;
#   - three recorders as three hosts (--rotate --upload: every sealed
#     segment under the layout, byte for byte what is on disk, and said in
#     the summary), a flight dump with its reason: `ls` shows each host's
#     segments (as the AWS CLI lists them) and their indexes, the dump's
#     reason, and a window that cuts through segments.
#   - keys from the instance role that expire in seconds: fetched again
#     as the recording goes, every segment uploaded;
#   - a server that answers slowly (every answer held 1.5 s by
#     tests/e2e/fleet/slowproxy.py): the recording is what a recorder
#     beside it without --upload makes (runtime events per second, losses,
#     segment lengths, its own CPU; the figures said), and every segment
#     is uploaded by the end of the stop.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=fleet
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3lib.sh"
DEMO=$ROOT/$B/examples/demo
export D9PROF_CACHE=$TMP/cache # -i s3://: not the user's cache

need_perf >/dev/null || e2e_skip_all "perf_event does not record here"

# s3_up NAME: a fresh server with bucket bkt for this test (the harness
# kills what a test started), or its status (2: skipped, said why)
s3_up() { s3_start "$TMP/s3-$1" bkt; }

# record ARGS...: a recorder in the background, its stderr in $TMP/rec.err
# (emptied here, not in the child: what an earlier recorder said there
# must not be read as this one's)
record() {
	: >"$TMP/rec.err"
	"$D9" record "$@" 2>"$TMP/rec.err" &
	PIDS+=($!)
	REC=$!
}

# start_demo: the demo, DEMO_PID once it said ready (and in DEMOS)
DEMOS=()
start_demo() {
	start_ready "$TMP/demo$1.out" "$DEMO" || return 1
	DEMO_PID=$SPID
	DEMOS+=("$SPID")
}

# stop_demos: the demos this test started, stopped once their recorders
# are done, and reaped (out of PIDS): each burns a core, and what the
# test does next (the AWS CLI, python, the views) needs the two there are
stop_demos() {
	local d p keep ours
	for d in "${DEMOS[@]}"; do
		keep=() ours=0
		for p in "${PIDS[@]}"; do
			if [ "$p" = "$d" ]; then ours=1; else keep+=("$p"); fi
		done
		# (a demo of an earlier test: killed and reaped after it)
		[ "$ours" = 1 ] || continue
		stop "$d"
		PIDS=("${keep[@]}")
	done
	DEMOS=()
}

# sealed FILE: segment files the recorder said it sealed
sealed() { local n; n=$(grep -c "^d9prof: segment " "$1" 2>/dev/null); echo "${n:-0}"; }

# until_sealed FILE N: wait (up to 60 s) for N sealed segments
until_sealed() {
	local i
	for ((i = 0; i < 600; i++)); do
		(($(sealed "$1") >= $2)) && return 0
		sleep 0.1
	done
	cat "$1"
	fail "fewer than $2 segments sealed in 60 s"
}

# summary FILE WORD: the count before WORD in the upload summary line
summary() { sed -n "s/.*upload to .*[ (]\([0-9][0-9]*\) $2.*/\1/p" "$1" | tail -1; }

# s3put FILE KEY: FILE as bkt's KEY, by curl (the AWS CLI takes a second
# to start)
s3put() {
	curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -T "$1" "$S3_URL/bkt/$2" >/dev/null
}

# keys PREFIX: the keys the AWS CLI lists under PREFIX, one per line
keys() {
	awscli s3api list-objects-v2 --bucket bkt --prefix "$1" \
		--query 'Contents[].Key' --output text | tr '\t' '\n' | grep -v '^None$' | sort
}

t_server_down_and_back_loses_nothing_and_counts_retries() {
	local out=$TMP/down n up retried k
	mkdir -p "$out"
	s3_up down || return
	start_demo 2 || return 1
	record -p "$DEMO_PID" --rotate 1s -o "$out" --upload s3://bkt/down --host h2
	until_sealed "$TMP/rec.err" 1 || return 1
	s3_stop
	until_sealed "$TMP/rec.err" 2 || return 1
	s3_restart || { fail "the S3 server did not start again"; return; }
	until_sealed "$TMP/rec.err" 3 || return 1
	kill -INT "$REC"
	wait "$REC" || { cat "$TMP/rec.err"; fail "the recorder failed"; return; }
	stop_demos
	n=$(find "$out" -name '*.d9' | wc -l)
	up=$(summary "$TMP/rec.err" uploaded)
	retried=$(summary "$TMP/rec.err" retried)
	k=$(keys down/ | wc -l)
	say "    $n segments, $up uploaded, $retried retried, $k keys"
	grep -q 'warning: upload: .*failure' "$TMP/rec.err" || { cat "$TMP/rec.err"; fail "no failure said"; return; }
	[ "$up" = "$n" ] && [ "$k" = "$n" ] && ((retried > 0)) ||
		{ cat "$TMP/rec.err"; fail "lost some, or no retry counted"; return; }
}

t_wrong_credentials_or_bucket_say_one_line_and_record_on() {
	local out=$TMP/wrong n lines
	mkdir -p "$out"
	s3_up wrong || return
	start_demo 3 || return 1
	AWS_ACCESS_KEY_ID=NOSUCHKEY record -p "$DEMO_PID" --rotate 1s -o "$out" \
		--upload s3://bkt/wrong
	# no such bucket (checked below): meanwhile, of a demo of its own
	local rb out2=$TMP/wrong2
	mkdir -p "$out2"
	start_demo 3b || return 1
	"$D9" record -p "$DEMO_PID" --rotate 1s -o "$out2" --upload s3://nosuchbucket/x \
		2>"$TMP/rec2.err" &
	rb=$!
	PIDS+=("$rb")
	until_sealed "$TMP/rec.err" 2 || return 1
	kill -INT "$REC"
	wait "$REC" || { cat "$TMP/rec.err"; fail "the recorder failed"; return; }
	n=$(find "$out" -name '*.d9' | wc -l)
	lines=$(grep -c 'warning: upload' "$TMP/rec.err")
	say "    $(grep -m1 'warning: upload' "$TMP/rec.err")"
	((n >= 2)) || { fail "$n local segments"; return; }
	[ "$lines" = 1 ] || { cat "$TMP/rec.err"; fail "$lines warnings, want one"; return; }
	grep -q 'InvalidAccessKeyId' "$TMP/rec.err" || { cat "$TMP/rec.err"; fail "no reason said"; return; }
	grep -q "$AWS_SECRET_ACCESS_KEY" "$TMP/rec.err" && { fail "the secret was said"; return; }
	[ "$(summary "$TMP/rec.err" 'given up')" = "$n" ] || { cat "$TMP/rec.err"; fail "not all given up"; return; }
	# no such bucket: said once, the files stay
	until_sealed "$TMP/rec2.err" 1 || return 1
	kill -INT "$rb"
	wait "$rb" || { cat "$TMP/rec2.err"; fail "the recorder failed"; return; }
	grep -c 'warning: upload' "$TMP/rec2.err" | grep -qx 1 &&
		grep -q 'NoSuchBucket\|nosuchbucket' "$TMP/rec2.err" ||
		{ cat "$TMP/rec2.err"; fail "no one line for the bucket"; return; }
}

# Keys from the instance role (IMDSv2 faked on loopback by
# tests/e2e/creds/fakeaws.py) that expire in 5 s: the uploader, one
# struct s3 for the whole recording, fetches them again before its puts,
# and every segment is uploaded. (creds.sh tries each source without a
# recording.)
t_upload_keys_that_expire_are_fetched_again_as_it_records() {
	local out=$TMP/imds n up k fetched
	mkdir -p "$out"
	s3_up imds || return
	start_ready "$TMP/fake.out" python3 "$ROOT/tests/e2e/creds/fakeaws.py" S3RVER 5 || return 1
	start_demo 4 || return 1
	AWS_ACCESS_KEY_ID='' AWS_SECRET_ACCESS_KEY='' AWS_EC2_METADATA_DISABLED='' \
		AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$(sed -n 's/^ready //p' "$TMP/fake.out") \
		record -p "$DEMO_PID" --rotate 1s -o "$out" --upload s3://bkt/imds --host h4
	until_sealed "$TMP/rec.err" 3 || return 1
	kill -INT "$REC"
	wait "$REC" || { cat "$TMP/rec.err"; fail "the recorder failed"; return; }
	stop_demos
	n=$(find "$out" -name '*.d9' | wc -l)
	up=$(summary "$TMP/rec.err" uploaded)
	k=$(keys imds/ | wc -l)
	fetched=$(grep -c 'security-credentials/fleet-role 200 S3RVER' "$TMP/fake.out.err")
	say "    $n segments, $up uploaded, $k keys; the role's keys fetched $fetched times"
	grep -q 'credentials from IMDSv2 at http://127.0.0.1:[0-9]* (role fleet-role), fetched again before they expire' \
		"$TMP/rec.err" || { cat "$TMP/rec.err"; fail "not said where the keys come from"; return; }
	[ "$up" = "$n" ] && [ "$k" = "$n" ] || { cat "$TMP/rec.err"; fail "not every segment uploaded"; return; }
	((fetched >= 3)) || { cat "$TMP/fake.out.err"; fail "the keys were not fetched again"; }
}

# libcurl is loaded where S3 is used (store/s3.c), not linked: without it
# every other command runs, and S3's say what to install, in one line,
# before anything is recorded. Hidden by a bind mount in a mount
# namespace of the test's own.
t_without_libcurl_s3_says_what_to_install() {
	local lib out=$TMP/nocurl
	readelf -d "$D9" | grep -q 'NEEDED.*libcurl' && { fail "d9prof links libcurl"; return; }
	lib=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64|AArch64/ { print $NF; exit }')
	[ -n "$lib" ] || { say "    skip: no libcurl.so.4 to hide"; return 2; }
	lib=$(readlink -f "$lib")
	unshare -m true 2>/dev/null ||
		{ say "    skip: cannot make a mount namespace (unshare -m)"; return 2; }
	# nocurl ARGS...: d9prof ARGS with libcurl.so.4 hidden (and credentials
	# that would do, were there a server)
	nocurl() {
		# shellcheck disable=SC2016
		AWS_ACCESS_KEY_ID=K AWS_SECRET_ACCESS_KEY=S AWS_DEFAULT_REGION=us-east-1 \
			unshare -m sh -c 'mount --bind /dev/null "$1" && shift && "$@"' sh \
			"$lib" "$D9" "$@"
	}
	start_demo 3 || return 1
	mkdir -p "$out"
	nocurl ls s3://bkt/x --endpoint-url http://127.0.0.1:1 >"$out/ls.out" 2>"$out/ls.err"
	[ $? -ne 0 ] && [ "$(wc -l <"$out/ls.err")" = 1 ] &&
		grep -q 'cannot list s3://bkt/x: cannot load libcurl (libcurl.so.4).*install' "$out/ls.err" ||
		{ cat "$out/ls.err"; fail "ls without libcurl: not one line saying what to install"; return; }
	say "    $(cat "$out/ls.err")"
	nocurl record -p "$DEMO_PID" -d 1 --rotate 1s -o "$out/segs" --upload s3://bkt/x \
		--endpoint-url http://127.0.0.1:1 2>"$out/rec.err"
	[ $? -ne 0 ] && [ -z "$(find "$out/segs" -name '*.d9' 2>/dev/null)" ] &&
		grep -q -- '--upload s3://bkt/x: cannot load libcurl' "$out/rec.err" ||
		{ cat "$out/rec.err"; fail "record --upload without libcurl"; return; }
	# the rest runs without it
	nocurl record -p "$DEMO_PID" -d 0.5 -o "$out/r.d9" 2>"$out/rec2.err" &&
		"$D9" info -i "$out/r.d9" >/dev/null ||
		{ cat "$out/rec2.err"; fail "record without libcurl failed"; return; }
}

# local_inputs N: "-i FILE" for each segment host N wrote under its
# --key-prefix (one directory per minute), in the layout's time order
local_inputs() { find "$TMP/h$1/local" -name '*.d9' -printf '-i %p\n' | sort; }

t_three_hosts_and_a_dump_as_ls_shows_them() {
	local h pids=() i n up f k from att
	s3_up fleet || return
	for h in 1 2 3; do
		mkdir -p "$TMP/h$h"
		start_demo "h$h" || return 1
		"$D9" record -p "$DEMO_PID" --rotate 2s -o "$TMP/h$h" --key-prefix local \
			--upload s3://bkt/fleet --host "host$h" --service api 2>"$TMP/h$h.err" &
		pids+=($!)
		PIDS+=($!)
	done
	# a flight recorder beside them, for a dump with its reason
	start_demo dump || return 1
	record -p "$DEMO_PID" --flight=2s -o "$TMP" --upload s3://bkt/fleet --host host4 \
		--service api
	wait_for "$TMP/rec.err" 'attached to the d9prof shim' 10 || { cat "$TMP/rec.err"; fail "no attach"; return; }
	att=$(date +%s.%N)
	for h in 1 2 3; do until_sealed "$TMP/h$h.err" 3 || return 1; done
	# its dump, a second or more after it attached
	sleep "$(awk -v a="$att" -v b="$(date +%s.%N)" 'BEGIN { d = 1 - (b - a); print (d > 0 ? d : 0) }')"
	"$D9" dump "$REC" >/dev/null
	wait_for "$TMP/rec.err" '^d9prof: dump: ' 10 || { cat "$TMP/rec.err"; fail "no dump"; return; }
	for i in "${pids[@]}" "$REC"; do kill -INT "$i"; done
	for i in "${pids[@]}" "$REC"; do wait "$i" || { fail "a recorder failed"; return; }; done
	stop_demos
	keys fleet/ >"$TMP/keys"
	# every sealed segment uploaded under the layout, byte for byte the
	# local file under --key-prefix's copy of the same layout, and said so
	for h in 1 2 3; do
		n=$(find "$TMP/h$h" -name '*.d9' | wc -l)
		up=$(summary "$TMP/h$h.err" uploaded)
		say "    host$h: $n segment files, $up uploaded, $(grep -c "/host$h/" "$TMP/keys") keys"
		[ "$up" = "$n" ] && [ "$(grep -c "/host$h/" "$TMP/keys")" = "$n" ] ||
			{ cat "$TMP/h$h.err"; fail "host$h: uploaded $up of $n"; return; }
		[ "$(summary "$TMP/h$h.err" 'given up')" = 0 ] || { fail "some given up"; return; }
	done
	awscli s3 cp --recursive --quiet s3://bkt/fleet "$TMP/got" >/dev/null ||
		{ fail "aws cannot get the objects"; return; }
	while read -r k; do
		[[ $k =~ ^fleet/[0-9]{4}-[0-9]{2}-[0-9]{2}/[0-9]{4}/api/host[1-4]/[0-9a-z]+/([0-9]+-[0-9]+-[0-9a-f]{12}\.d9|d9prof-[0-9]+-.*\.data)$ ]] ||
			{ fail "key '$k' is not the layout"; return; }
		[[ $k == */host[123]/* ]] || continue
		f=$TMP/h$(sed 's|.*/host\([123]\)/.*|\1|' <<<"$k")/local/${k#fleet/}
		cmp -s "$f" "$TMP/got/${k#fleet/}" || { fail "$k differs from $f"; return; }
	done <"$TMP/keys"
	f=$(find "$TMP/got" -name '*.d9' | head -1)
	"$D9" info -i "$f" >/dev/null || { fail "an uploaded segment does not read"; return; }
	"$D9" ls s3://bkt/fleet >"$TMP/ls.txt" || { cat "$TMP/ls.txt"; fail "ls failed"; return; }
	cat "$TMP/ls.txt" | sed 's/^/    /' | head -12
	"$D9" ls s3://bkt/fleet --format json >"$TMP/ls.json" || { fail "ls --format json failed"; return; }
	for h in 1 2 3; do
		# shellcheck disable=SC2046
		"$D9" report $(local_inputs "$h") --format json >"$TMP/h$h.json" 2>/dev/null ||
			{ fail "report -i $TMP/h$h failed"; return; }
	done
	python3 - "$TMP/ls.json" "$TMP/keys" "$TMP"/h[123].json <<'EOF' || { fail "ls and the AWS CLI, or ls and the local files, disagree"; return; }
import collections, json, sys
j = json.load(open(sys.argv[1]))
keys = [k for k in open(sys.argv[2]).read().split() if k]
want = collections.Counter(k.split('/')[4] for k in keys if k.endswith('.d9'))
got = {r['host']: r['segments'] for r in j['runs']}
assert set(got) == {'host1', 'host2', 'host3', 'host4'}, got
for h, n in want.items():
    assert got[h] == n, (h, got[h], n)
assert sum(b['segments'] for b in j['buckets']) == sum(want.values())
# each segment's index, added up, is what its host's local files say
runs = {r['host']: r for r in j['runs']}
for n, f in enumerate(sys.argv[3:], 1):
    r, rep = runs['host%d' % n], json.load(open(f))
    want_polls, want_samples = rep['recorded']['polls'], rep['recorded']['samples']
    # the longest whole poll, and the longest of all: one begun before the
    # recorder attached is "at least" so long in the files, and unseen by
    # the recorder's count, which sees a poll still open at the end
    whole = [p['duration_ns'] for p in rep['longest_polls'] if not p['lower_bound']]
    want_max = max(whole or [0])
    most = max(p['duration_ns'] for p in rep['longest_polls'])
    print('    host%d: index %d polls, %d samples, longest %.2f ms; its files %d, %d, '
          'longest whole %.2f ms (of all %.2f ms)'
          % (n, r['polls'], r['samples'], r['max_poll_ns'] / 1e6, want_polls,
             want_samples, want_max / 1e6, most / 1e6))
    assert r['indexed'] == r['segments'], r
    assert abs(r['polls'] - want_polls) <= 0.01 * want_polls, (r, want_polls)
    assert abs(r['samples'] - want_samples) <= 0.01 * want_samples + 2, (r, want_samples)
    assert 0.99 * want_max <= r['max_poll_ns'] <= 1.01 * most, (r, want_max, most)
    assert r['flagged'] == 0 or r['max_poll_ns'] >= j['flag_poll_ns'] or \
        r['max_delay_ns'] >= j['flag_delay_ns'], r
assert j['unindexed'] == 0, j['unindexed']
# the one asked for, and the one at the stop, with their reasons
assert sorted(d['reason'] for d in j['dumps']) == ['SIGUSR1', 'recorder stopped'], j['dumps']
assert all(d['host'] == 'host4' for d in j['dumps']), j['dumps']
EOF
	grep -q 'dumps:' "$TMP/ls.txt" || { fail "no dumps in ls"; return; }
	# one host, and a window starting inside a segment (2 s long): that
	# segment is in
	n=$("$D9" ls s3://bkt/fleet --host host2 --format json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(len(j["runs"]), j["runs"][0]["segments"])')
	say "    --host host2: $n"
	[ "${n%% *}" = 1 ] || { fail "--host kept $n"; return; }
	# a segment at least 2 s long, and a window from its second second
	from=$(grep '/host2/.*\.d9$' "$TMP/keys" | sed 's|.*/\([0-9]*\)-[0-9]*-[0-9a-f]*\.d9|\1|' | sort -n |
		awk 'NR > 1 && $1 - p >= 2 { print p; exit } { p = $1 }')
	[ -n "$from" ] || { fail "no segment of host2 lasted 2 s"; return; }
	n=$("$D9" ls s3://bkt/fleet --host host2 --from "$(date -u -d "@$((from + 1))" +%FT%T)" --format json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["runs"][0]["first"])')
	[ "$n" = "$from" ] || { fail "the window from $((from + 1)) starts at $n, want the segment begun at $from"; return; }
	# analysis straight from the bucket: one host's window, fetched, the
	# same answer as its local files; several hosts: one line saying which
	local t0 t1
	t0=$(date -u -d "@$((from + 1))" +%FT%T)
	t1=$(date -u -d "@$((from + 4))" +%FT%T)
	"$D9" tasks -i s3://bkt/fleet --service api --host host2 --from "$t0" \
		--to "$t1" >"$TMP/s3.txt" 2>"$TMP/s3.err" || { cat "$TMP/s3.err"; fail "tasks -i s3:// failed"; return; }
	say "    $(grep 'fetched' "$TMP/s3.err")"
	# shellcheck disable=SC2046
	"$D9" tasks $(local_inputs 2) --from "$t0" --to "$t1" >"$TMP/local.txt" 2>/dev/null ||
		{ fail "tasks -i DIR failed"; return; }
	# (the count of tasks known counts those named in segments outside
	# the window too, which the bucket's read does not fetch)
	cmp -s <(grep -v '^#' "$TMP/s3.txt") <(grep -v '^#' "$TMP/local.txt") || { diff "$TMP/s3.txt" "$TMP/local.txt" | head -5; fail "the bucket's answer differs from the local files'"; return; }
	"$D9" tasks -i s3://bkt/fleet --service api --host host2 --from "$t0" \
		--to "$t1" 2>&1 >/dev/null | grep -q '(0 fetched' || { fail "the cache was not reused"; return; }
	# an object written again (same key, same size, another ETag) is
	# fetched again, not served from the cache; then put back
	local k0
	k0=$(grep "/host2/.*/$from-[0-9]*-[0-9a-f]*\.d9\$" "$TMP/keys" | head -1)
	[ -n "$k0" ] || { fail "no key of host2 begun at $from"; return; }
	cp "$TMP/got/${k0#fleet/}" "$TMP/k0.d9" || { fail "no copy of $k0"; return; }
	cp "$TMP/k0.d9" "$TMP/k0x.d9"
	printf '\x5a' | dd of="$TMP/k0x.d9" bs=1 seek=$(($(stat -c %s "$TMP/k0.d9") - 1)) conv=notrunc 2>/dev/null
	cmp -s "$TMP/k0.d9" "$TMP/k0x.d9" && printf '\xa5' |
		dd of="$TMP/k0x.d9" bs=1 seek=$(($(stat -c %s "$TMP/k0.d9") - 1)) conv=notrunc 2>/dev/null
	s3put "$TMP/k0x.d9" "$k0" || { fail "cannot put $k0"; return; }
	"$D9" tasks -i s3://bkt/fleet --service api --host host2 --from "$t0" \
		--to "$t1" 2>&1 >/dev/null | grep -q '(1 fetched' ||
		{ fail "an object written again was served from the cache"; return; }
	s3put "$TMP/k0.d9" "$k0" || { fail "cannot put $k0 back"; return; }
	# objects past the cache's bound are not fetched at all
	D9PROF_CACHE=$TMP/small D9PROF_CACHE_MAX=1024 "$D9" tasks -i s3://bkt/fleet --service api \
		--host host2 --from "$t0" --to "$t1" >/dev/null 2>"$TMP/small.err" &&
		{ fail "fetched past the cache's bound"; return; }
	grep -q "pass the cache's 1024 (D9PROF_CACHE_MAX" "$TMP/small.err" ||
		{ cat "$TMP/small.err"; fail "no line on the cache's bound"; return; }
	[ -z "$(find "$TMP/small" -type f 2>/dev/null)" ] || { fail "kept past the cache's bound"; return; }
	# eviction deletes only what d9prof put in a cache it made: a
	# directory D9PROF_CACHE names (~/.cache under sudo -E) keeps its own
	mkdir -p "$TMP/foreign/bkt"
	head -c 3000000 /dev/zero >"$TMP/foreign/bkt/fonts.cache"
	touch -d '1 hour ago' "$TMP/foreign/bkt/fonts.cache"
	D9PROF_CACHE=$TMP/foreign D9PROF_CACHE_MAX=2000000 "$D9" tasks -i s3://bkt/fleet \
		--service api --host host2 --from "$t0" --to "$t1" >/dev/null 2>"$TMP/foreign.err" ||
		{ cat "$TMP/foreign.err"; fail "tasks with a foreign cache failed"; return; }
	[ -f "$TMP/foreign/bkt/fonts.cache" ] || { fail "evicted a file d9prof did not make"; return; }
	# the fleet at a glance: every host of the window, each read, worst
	# first, each with the command that opens its report
	local s0 s1
	s0=$(date +%s.%N)
	"$D9" fleet -i s3://bkt/fleet --from "$t0" --to "$t1" >"$TMP/fleet.txt" 2>"$TMP/fleet.err" ||
		{ cat "$TMP/fleet.err"; fail "fleet failed"; return; }
	s1=$(date +%s.%N)
	sed 's/^/    /' "$TMP/fleet.txt" | head -9
	say "    fleet: first answer in $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b - a }') s"
	"$D9" fleet -i s3://bkt/fleet --from "$t0" --to "$t1" --format json >"$TMP/fleet.json" 2>/dev/null ||
		{ fail "fleet --format json failed"; return; }
	python3 - "$TMP/fleet.json" <<'PY' || { fail "the fleet's rows are not what the store holds"; return; }
import json, sys
j = json.load(open(sys.argv[1]))
hosts = {h['host'] for h in j['hosts']}
assert {'host1', 'host2', 'host3'} <= hosts, hosts
for h in j['hosts']:
    if h['host'] != 'host4':
        assert h['read'] and h['polls'] > 0 and h['span_ns'] > 0, h
flags = [h['nflags'] for h in j['hosts']]
assert flags == sorted(flags, reverse=True), flags
PY
	# the row's command, pasted into a shell, runs the report
	cmd=$(grep -m1 '^  d9prof report' "$TMP/fleet.txt" | sed "s|^  d9prof |'$D9' |")
	(cd "$TMP" && sh -c "$cmd") >/dev/null 2>&1 || { fail "its report command failed: $cmd"; return; }
	# a key anyone with PutObject can write, its SERVICE and HOST shell:
	# counted, read by no view, in no command (and the commands are the
	# argv JSON gives, quoted)
	k=$(grep -m1 '/host1/.*\.d9$' "$TMP/keys")
	awscli s3 cp --quiet "s3://bkt/$k" \
		"s3://bkt/${k%%/api/*}/api\$(id>PWNED)/web-1;touch\${IFS}PWNED2;#/b1/${k##*/}" ||
		{ fail "aws cannot put the hostile key"; return; }
	(cd "$TMP" && "$D9" fleet -i s3://bkt/fleet --from "$t0" --to "$t1" --format json) \
		>"$TMP/hostile.json" 2>"$TMP/hostile.err" || { cat "$TMP/hostile.err"; fail "fleet failed on a hostile key"; return; }
	"$D9" ls s3://bkt/fleet >"$TMP/hostile.ls" 2>&1 || { fail "ls failed on a hostile key"; return; }
	grep -q 'and 1 key not in the layout' "$TMP/hostile.ls" || { cat "$TMP/hostile.ls"; fail "the hostile key not counted"; return; }
	! grep -q 'PWNED' "$TMP/hostile.json" "$TMP/hostile.ls" || { fail "the hostile key was read"; return; }
	python3 - "$TMP/hostile.json" <<'PY' || { fail "a report command is not its argv"; return; }
import json, shlex, sys
for h in json.load(open(sys.argv[1]))['hosts']:
    assert shlex.split(h['report']) == h['report_argv'], h
PY
	[ ! -e "$TMP/PWNED" ] && [ ! -e "$TMP/PWNED2" ] || { fail "a command ran what a key said"; return; }
	say "    a hostile key: counted as not in the layout, in no command"
	"$D9" report -i s3://bkt/fleet --from "$t0" >/dev/null 2>"$TMP/many.err" && { fail "several hosts read as one"; return; }
	[ "$(wc -l <"$TMP/many.err")" = 1 ] && grep -q 'several hosts.*api/host1, api/host2' "$TMP/many.err" ||
		{ cat "$TMP/many.err"; fail "not one line naming the hosts"; return; }
}

# cpu_wall PID: "CPU-SECONDS WALL-SECONDS" of PID so far (utime + stime of
# all its threads, and the time since it started)
cpu_wall() {
	local up
	up=$(cut -d' ' -f1 /proc/uptime)
	sed 's/.*) //' "/proc/$1/stat" | awk -v t="$(getconf CLK_TCK)" -v up="$up" \
		'{ printf "%.2f %.2f", ($12 + $13) / t, up - $20 / t }'
}

# rec_figures DIR: what `info --json` says of a --rotate recording in DIR:
# "EVENTS-PER-S LOSSES LONGEST-SEGMENT-S SEGMENTS EVENTS", LOSSES the records lost
# or dropped (samples, switches, wakeups, shim records, lease lapses, gaps
# between segments; not stacks cut short, which is unwinding, not load)
rec_figures() {
	"$D9" info --json -i "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
l = j["losses"]
lost = sum(l.get(k, 0) for k in ("samples", "ctimer_samples", "switch_records",
    "unpaired_switches", "wakeups", "shim_records", "threads_without_ring",
    "reattached", "shim_garbage", "state_refused", "segment_gaps"))
segs = j["segments"]["list"]
# the last segment is cut short by the stop
longest = max((s["end_ns"] - s["start_ns"]) / 1e9 for s in segs[:-1] or segs)
ev = j["counts"]["events"]
print("%.0f %d %.2f %d %d" % (ev * 1e9 / j["span"]["duration_ns"], lost, longest,
    len(segs), ev))'
}

t_slow_server_leaves_the_recording_as_it_is_and_gets_every_segment() {
	local slow=$TMP/slow plain=$TMP/plain pport rs rp ds dp n up keys t0 t1
	local cs ws cp wp fs fp
	mkdir -p "$slow" "$plain"
	s3_up slow || return
	# every answer of the server held 1.5 s: slower than a segment a second
	start_ready "$TMP/proxy.out" python3 "$ROOT/tests/e2e/fleet/slowproxy.py" "$S3_PORT" 1.5 ||
		return 1
	pport=$(awk '/^ready/ { print $2 }' "$TMP/proxy.out")
	start_demo slow || return 1
	ds=$DEMO_PID
	start_demo plain || return 1
	dp=$DEMO_PID
	# side by side: the same recording of two demos, one uploading
	"$D9" record -p "$ds" --rotate 1s -o "$slow" --upload s3://bkt/slow \
		--endpoint-url "http://127.0.0.1:$pport" --host slow 2>"$TMP/slow.err" &
	rs=$!
	PIDS+=("$rs")
	"$D9" record -p "$dp" --rotate 1s -o "$plain" 2>"$TMP/plain.err" &
	rp=$!
	PIDS+=("$rp")
	until_sealed "$TMP/slow.err" 5 || return 1
	until_sealed "$TMP/plain.err" 5 || return 1
	read -r cs ws <<<"$(cpu_wall "$rs")"
	read -r cp wp <<<"$(cpu_wall "$rp")"
	t0=$(date +%s.%N)
	kill -INT "$rs" "$rp"
	wait "$rp" || { cat "$TMP/plain.err"; fail "the plain recorder failed"; return; }
	wait "$rs" || { cat "$TMP/slow.err"; fail "the uploading recorder failed"; return; }
	t1=$(date +%s.%N)
	stop_demos
	n=$(find "$slow" -name '*.d9' | wc -l)
	up=$(summary "$TMP/slow.err" uploaded)
	keys=$(keys slow/ | wc -l)
	read -r -a fs <<<"$(rec_figures "$slow")"
	read -r -a fp <<<"$(rec_figures "$plain")"
	say "    uploading through a server 1.5 s slow / plain:"
	say "    shim events/s ${fs[0]} / ${fp[0]}; lost ${fs[1]} / ${fp[1]};" \
		"longest segment ${fs[2]} / ${fp[2]} s; ${fs[3]} / ${fp[3]} segments"
	say "    recorder CPU ${cs} s of ${ws} s ($(awk -v c="$cs" -v w="$ws" \
		'BEGIN { printf "%.1f", 100 * c / w }')% of a core) / ${cp} s of ${wp} s" \
		"($(awk -v c="$cp" -v w="$wp" 'BEGIN { printf "%.1f", 100 * c / w }')%)"
	say "    $(grep -m1 'upload: waiting' "$TMP/slow.err" | sed 's/^d9prof: //');" \
		"the stop took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
	say "    $n segment files, $up uploaded, $keys keys," \
		"$(grep -c '^PUT .* 200 ' "$TMP/proxy.out.err") puts answered 200 by the proxy"
	# the server was behind when the recording stopped: more waiting
	# than the last segment, sealed at the stop
	(($(sed -n 's/.*upload: waiting up to .* for \([0-9]*\) files*$/\1/p' "$TMP/slow.err") >= 2)) ||
		{ cat "$TMP/slow.err"; fail "the uploads were not behind at the stop: the server was not slow"; return; }
	# every segment, none given up, none more than once
	[ "$up" = "$n" ] && [ "$keys" = "$n" ] &&
		[ "$(summary "$TMP/slow.err" 'given up')" = 0 ] &&
		[ "$(summary "$TMP/slow.err" retried)" = 0 ] ||
		{ cat "$TMP/slow.err"; fail "uploaded $up of $n ($keys keys)"; return; }
	# the recording: nothing more lost than beside it (at most twice as
	# many, give or take 1 in 10,000 events), the segments as punctual,
	# and about the same rate of runtime events (what is lost is counted
	# above: this is the gross check; two demos sharing the CPUs with
	# their hogs differ by up to a quarter on their own)
	((fs[1] <= 2 * fp[1] + fs[4] / 10000)) ||
		{ cat "$TMP/slow.err"; fail "lost ${fs[1]}, the plain recorder ${fp[1]}"; return; }
	awk -v s="${fs[0]}" -v p="${fp[0]}" 'BEGIN { exit !(s >= 0.6 * p) }' ||
		{ fail "${fs[0]} shim events/s, beside it ${fp[0]}"; return; }
	awk -v s="${fs[2]}" -v p="${fp[2]}" 'BEGIN { exit !(s <= p + 0.5) }' ||
		{ fail "a segment of ${fs[2]} s, beside it ${fp[2]} s at most"; return; }
	# the recorder's own CPU: the uploads waiting cost nothing to speak of
	# (a thread spinning on the slow answers would show here)
	awk -v s="$cs" -v ws="$ws" -v p="$cp" -v wp="$wp" \
		'BEGIN { exit !(s / ws <= 1.5 * p / wp + 0.02) }' ||
		{ fail "the uploading recorder's CPU ${cs} s of ${ws} s, beside it ${cp} s of ${wp} s"; return; }
}

# A service restarted in the window: two processes under one service and
# host, never read as one. fleet reads its last process and says so, its
# report command picks that pid and the window's start as a UTC time (and
# reads what that process's own files say); -i s3:// without --pid names
# both pids in one line
# --upload takes the recorder's keys out of the recorded command's
# environment (a command that dropped to nobody keeping its environment
# kept them); --keep-aws-env leaves them; the rest stays
t_the_recorded_command_does_not_get_the_uploads_keys() {
	local k
	s3_up envk || return
	for k in 0 1; do
		# shellcheck disable=SC2016
		MINE=kept "$D9" record --rotate 1s -o "$TMP/envk$k" --upload s3://bkt/envk \
			$([ $k = 1 ] && echo --keep-aws-env) -- \
			sh -c 'env >"$0"; sleep 1.2' "$TMP/env$k.txt" >/dev/null 2>"$TMP/envk$k.err" ||
			{ cat "$TMP/envk$k.err"; fail "record --upload -- CMD failed"; return; }
		grep -q '^MINE=kept$' "$TMP/env$k.txt" || { fail "the command lost its own environment"; return; }
	done
	! grep -q '^AWS_SECRET_ACCESS_KEY=\|^AWS_ACCESS_KEY_ID=' "$TMP/env0.txt" ||
		{ fail "the command got the recorder's keys"; return; }
	grep -q '^AWS_SECRET_ACCESS_KEY=S3RVER$' "$TMP/env1.txt" ||
		{ fail "--keep-aws-env did not leave them"; return; }
	# the layout's SERVICE is the command's name (it was d9prof, the
	# child's comm before its exec)
	keys envk/ >"$TMP/envk.keys"
	grep -q '^envk/[0-9-]*/[0-9]*/sh/' "$TMP/envk.keys" ||
		{ cat "$TMP/envk.keys"; fail "SERVICE is not the command's name"; return; }
	say "    the command's environment: no AWS keys, its own variables kept"
}

t_a_restarted_service_is_read_as_its_last_process() {
	local a b p want cmd
	s3_up restart || return
	# half a second each: the two often start in one second, where
	# their segments once had one name and the second overwrote the first
	for p in a b; do
		mkdir -p "$TMP/r$p"
		start_demo "r$p" || return 1
		"$D9" record -p "$DEMO_PID" -d 0.5 --rotate 1s -o "$TMP/r$p" --key-prefix local \
			--upload s3://bkt/rs --host hr --service api 2>"$TMP/r$p.err" ||
			{ cat "$TMP/r$p.err"; fail "record of $p failed"; return; }
		stop "$DEMO_PID"
		eval "$p=\$DEMO_PID"
	done
	"$D9" fleet -i s3://bkt/rs --from -10m >"$TMP/rs.txt" 2>"$TMP/rs.err" ||
		{ cat "$TMP/rs.err"; fail "fleet failed"; return; }
	sed 's/^/    /' "$TMP/rs.txt"
	[ "$(grep -c '^api ' "$TMP/rs.txt")" = 1 ] || { fail "want one row"; return; }
	grep -q "restarted in the window: its last process, pid $b)" "$TMP/rs.txt" ||
		{ fail "no restart said (pids $a, $b)"; return; }
	cmd=$(grep -m1 '^  d9prof report' "$TMP/rs.txt" | sed 's/^  d9prof //')
	[[ $cmd == *" --pid $b"* ]] || { fail "its report command does not pick pid $b: $cmd"; return; }
	# --from -10m: the time it named, to mean the same when pasted later
	[[ $cmd =~ \ --from\ 20[0-9-]+T[0-9:]+Z ]] || { fail "no absolute --from in: $cmd"; return; }
	# shellcheck disable=SC2086
	"$D9" $cmd --format json >"$TMP/rs.json" 2>/dev/null || { fail "its report command failed: $cmd"; return; }
	# shellcheck disable=SC2046
	"$D9" report $(find "$TMP/rb/local" -name '*.d9' -printf '-i %p\n') --format json \
		>"$TMP/rb.json" 2>/dev/null ||
		{ fail "report of b's files failed"; return; }
	want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['recorded']['polls'])" "$TMP/rb.json")
	p=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['recorded']['polls'])" "$TMP/rs.json")
	say "    report --pid $b: $p polls; pid $b's own files: $want"
	[ "$p" = "$want" ] || { fail "the bucket's pid $b reads other than its files"; return; }
	"$D9" tasks -i s3://bkt/rs --service api --host hr >/dev/null 2>"$TMP/rs2.err" &&
		{ fail "two processes read as one"; return; }
	sed 's/^/    /' "$TMP/rs2.err"
	grep -q "pid $a 'demo'.*pid $b 'demo'" "$TMP/rs2.err" && [ "$(grep -vc fetched "$TMP/rs2.err")" = 1 ] ||
		{ fail "want one line naming pids $a and $b"; return; }
}

e2e_run_tests
