#!/usr/bin/env bash
# The Parquet tables (`export --format parquet`, `record --upload-tables`)
# read by a real SQL engine, DuckDB (npm's @duckdb/node-api, installed
# into $B/e2e/tables from tests/e2e/tables/package.json; sql.mjs runs the
# queries), on real recordings of the demo as three hosts of one service:
#   - DuckDB's answers over the three hosts' tables (Hive partitions read
#     from the paths) are d9prof's own views' of each host's recording:
#     polls per task name (`tasks --by name`), the longest poll (`report`),
#     CPU per task name (`flame --by name`, within a ns of rounding per
#     sample), the hot stack of the busiest task (`flame --task`),
#     span p99 per name (`spans`), polls over 1 ms (`polls --min`);
#   - every row carries service and host, and the partitions say them too;
#   - `record --upload --upload-tables` to a local S3 (s3rver) puts each
#     sealed segment's tables beside it: fetched back by the AWS CLI
#     (DuckDB has no S3 reader here: its httpfs extension is downloaded
#     from the internet), they are byte for byte what `export` makes of
#     each segment, DuckDB reads them, and `ls` still counts the segments;
#   - random tables of every kind of column (pqrand.c) read back by
#     DuckDB as written, their statistics true;
#   - bad requests are one clear line.
# Skips if node, npm, the package, the AWS CLI or python3 cannot be had.
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=tables
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3lib.sh"
DEMO=$ROOT/$B/examples/demo
NODE_DIR=$ROOT/$B/e2e/tables
TABLES=$TMP/tables
HOSTS=(h1 h2 h3)

need_perf >/dev/null || e2e_skip_all "perf_event does not record here"

# DuckDB installed: 0, or 2 after saying why not
need_duckdb() {
	command -v node >/dev/null && command -v npm >/dev/null ||
		{ say "skip - no node or npm on this machine (apt-get install nodejs npm)"; return 2; }
	[ -d "$NODE_DIR/node_modules/@duckdb/node-api" ] && return 0
	mkdir -p "$NODE_DIR" && cp tests/e2e/tables/package.json "$NODE_DIR/" &&
		(cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error >"$TMP/npm.log" 2>&1) ||
		{ tail -3 "$TMP/npm.log"; say "skip - cannot install @duckdb/node-api from npm"; return 2; }
}

# sql QUERY...: DuckDB's rows, tab-separated (sql.mjs)
sql() {
	cp tests/e2e/tables/sql.mjs "$NODE_DIR/" && node "$NODE_DIR/sql.mjs" "$@"
}

# t TABLE: the table as DuckDB reads all its files, with their partitions
t() { echo "read_parquet('$TABLES/$1/**/*.parquet', hive_partitioning = true)"; }

# recorded: three demos recorded at once for 3 s as hosts h1, h2, h3 of
# service demo (--rotate 1s: segments in $TMP/HOST), each exported into
# $TABLES; once
RECORDED=0
recorded() {
	local h i=0 pids=() recs=()
	[ "$RECORDED" = 1 ] && return 0
	RECORDED=1
	for h in "${HOSTS[@]}"; do
		start_ready "$TMP/demo-$h.out" "$DEMO" || return 1
		pids+=("$SPID")
		"$D9" record -p "$SPID" -d 3 --rotate 1s --service demo --host "$h" \
			-o "$TMP/$h" 2>"$TMP/rec-$h.err" &
		recs+=($!)
		PIDS+=($!)
	done
	for h in "${HOSTS[@]}"; do
		wait "${recs[$i]}" || { cat "$TMP/rec-$h.err"; fail "record of $h failed"; return 1; }
		i=$((i + 1))
	done
	kill "${pids[@]}" 2>/dev/null
	for h in "${HOSTS[@]}"; do
		"$D9" export -i "$TMP/$h" --format parquet -o "$TABLES" 2>"$TMP/exp-$h.err" ||
			{ cat "$TMP/exp-$h.err"; fail "export of $h failed"; return 1; }
	done
}

ready() { need_duckdb || return; recorded; }

# same WHAT EXPECTED GOT: equal, or say both
same() {
	[ "$2" = "$3" ] && return 0
	fail "$1 differ: d9prof says"
	printf '%s\n' "$2" | head -20 | sed 's/^/      /'
	say "    DuckDB says"
	printf '%s\n' "$3" | head -20 | sed 's/^/      /'
	return 1
}

t_export_writes_hive_partitioned_tables_named_for_service_and_host() {
	local h tab f n
	ready || return
	for tab in samples stacks polls tasks delays spans offcpu; do
		for h in "${HOSTS[@]}"; do
			n=$(find "$TABLES/$tab/service=demo/host=$h" -name '*.parquet' | wc -l)
			[ "$n" = 1 ] || { fail "$tab of $h: $n files, want 1"; find "$TABLES" | head; return 1; }
			f=$(find "$TABLES/$tab/service=demo/host=$h" -name '*.parquet')
			[[ $f == */date=20[0-9][0-9]-[01][0-9]-[0-3][0-9]/*.parquet ]] ||
				{ fail "not a UTC date partition: $f"; return 1; }
		done
	done
	grep -q "^d9prof: parquet: [1-9][0-9]* samples, [1-9][0-9]* polls" "$TMP/exp-h1.err" ||
		{ cat "$TMP/exp-h1.err"; fail "export did not say what it wrote"; return 1; }
	# every row carries service and host, the partition's
	same "service and host of the rows" "$(printf 'demo\th1\ndemo\th2\ndemo\th3')" \
		"$(sql "SELECT DISTINCT service, host FROM read_parquet('$TABLES/polls/**/*.parquet', hive_partitioning = false) ORDER BY 2")"
}

# (each test asks DuckDB once for the three hosts: it takes a second to
# start)
t_duckdb_counts_polls_per_task_name_as_tasks_does() {
	local h want=''
	ready || return
	for h in "${HOSTS[@]}"; do
		want+=$("$D9" tasks -i "$TMP/$h" --by name --limit 0 2>/dev/null |
			awk -v h="$h" 'NR > 1 && !/^#/ { if ($1 == "[unnamed") { $1 = "[unnamed tasks]"; $3 = $4 }
				if ($3 > 0) print h "\t" $1 "\t" $3 }')$'\n'
	done
	[ "$(printf '%s' "$want" | grep -c .)" -ge 3 ] || { fail "tasks --by name listed no polls"; return 1; }
	same "polls per task name" "$(printf '%s' "$want" | grep . | sort)" \
		"$(sql "SELECT host, coalesce(task_name, '[unnamed tasks]'), count(*) FROM $(t polls) GROUP BY 1, 2" | sort)"
}

t_duckdb_finds_the_longest_poll_as_report_does() {
	local h want=''
	ready || return
	for h in "${HOSTS[@]}"; do
		want+=$("$D9" report -i "$TMP/$h" --format json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["longest_polls"][0]
print(sys.argv[1], p["poll"], p["task"], p["duration_ns"], sep="\t")' "$h")$'\n'
	done
	same "the longest poll per host" "${want%$'\n'}" \
		"$(sql "SELECT host, poll, task, duration_ns FROM $(t polls)
			QUALIFY row_number() OVER (PARTITION BY host ORDER BY duration_ns DESC, poll) = 1
			ORDER BY host")"
}

# the delays table is made in the polls' walk (the two streams meet by
# time): each delay names the poll that began at its end, on its thread,
# of its task, as the delays view does for its longest
t_duckdb_joins_each_delay_to_its_poll_as_delays_does() {
	local h want=''
	ready || return
	for h in "${HOSTS[@]}"; do
		want+=$("$D9" delays -i "$TMP/$h" --format json --limit 5 2>/dev/null | python3 -c '
import json, sys
for d in json.load(sys.stdin)["delays"]:
    print(sys.argv[1], d["task"], d["delay_ns"], d["poll"], sep="\t")' "$h")$'\n'
	done
	same "the 5 longest delays per host and their polls" "${want%$'\n'}" \
		"$(sql "SELECT host, task, delay_ns, poll FROM $(t delays)
			QUALIFY row_number() OVER (PARTITION BY host ORDER BY delay_ns DESC, woken_ns) <= 5
			ORDER BY host, delay_ns DESC, woken_ns")" || return
	same "delays without their poll, or not of it" "0	0" \
		"$(sql "SELECT count(*) FILTER (WHERE d.poll IS NULL),
				count(*) FILTER (WHERE p.task IS DISTINCT FROM d.task OR p.tid <> d.tid
						 OR p.start_ns <> d.woken_ns + d.delay_ns)
			FROM $(t delays) d LEFT JOIN $(t polls) p USING (host, poll)")"
}

t_duckdb_sums_cpu_per_task_name_as_flame_does() {
	local h
	ready || return
	for h in "${HOSTS[@]}"; do
		"$D9" flame -i "$TMP/$h" --by name --format folded 2>/dev/null |
			awk -v h="$h" -v f="$(info_json "$TMP/$h" 'j["sampling"]["frequency"]')" \
				'{ n = split($0, a, ";"); w[a[1]] += $NF } END { for (k in w) print h "\t" k "\t" w[k] "\t" f }'
	done | sort >"$TMP/want-cpu"
	sql "SELECT host, coalesce(task_name, '[no poll]'), sum(weight_ns), count(*) FROM $(t samples)
		GROUP BY 1, 2" | sort >"$TMP/got-cpu"
	# each sample's weight_ns is rounded: a ns of it at most
	python3 - "$TMP/want-cpu" "$TMP/got-cpu" <<-'EOF' || { fail "CPU per task name"; return 1; }
		import sys
		want = {tuple(l.split("\t")[:2]): l.rstrip("\n").split("\t")[2:] for l in open(sys.argv[1])}
		got = {tuple(l.split("\t")[:2]): l.rstrip("\n").split("\t")[2:] for l in open(sys.argv[2])}
		bad = set(want) ^ set(got)
		for k in set(want) & set(got):
		    period = 1e9 / float(want[k][1])
		    ns, n = int(got[k][0]), int(got[k][1])
		    if abs(int(want[k][0]) * period - ns) > n:
		        bad.add(k)
		for k in sorted(bad):
		    print("      %s: flame %s (samples, Hz), DuckDB %s (ns, samples)" % (k, want.get(k), got.get(k)))
		sys.exit(1 if bad or len({k[0] for k in want}) != 3 else 0)
	EOF
}

t_duckdb_finds_the_hot_stack_of_the_busiest_task_as_flame_does() {
	local h task want='' got
	ready || return
	# the busiest task of each host, and its heaviest stacks, whole (the
	# tables keep the runtime's frames; a stack is in each file that names
	# it: once each, by its id)
	got=$(sql "WITH busy AS (SELECT host, task FROM $(t samples) WHERE task IS NOT NULL
			GROUP BY 1, 2 QUALIFY row_number() OVER (PARTITION BY host
			ORDER BY sum(weight_ns) DESC, task) = 1)
		SELECT s.host, s.task, k.frames, count(*) FROM $(t samples) s JOIN busy USING (host, task)
		JOIN (SELECT DISTINCT stack_id, frames FROM $(t stacks)) k USING (stack_id)
		GROUP BY 1, 2, 3")
	for h in "${HOSTS[@]}"; do
		task=$(printf '%s\n' "$got" | awk -F'\t' -v h="$h" '$1 == h { print $2; exit }')
		[ -n "$task" ] || { fail "no task of $h has samples"; return 1; }
		# the root (the task) left out; ties in the same order on both sides
		want+=$("$D9" flame -i "$TMP/$h" --task "$task" --full-stacks --format folded 2>/dev/null |
			awk '{ c = $NF; sub(/ [0-9]+$/, ""); sub(/^[^;]*;/, ""); print $0 "\t" c }' |
			sort -t$'\t' -k2,2nr -k1,1 | head -3 | sed "s/^/$h\t/")$'\n'
	done
	same "the hot stacks of each host's busiest task" "${want%$'\n'}" \
		"$(for h in "${HOSTS[@]}"; do printf '%s\n' "$got" | awk -F'\t' -v h="$h" \
			'$1 == h { print $1 "\t" $3 "\t" $4 }' | sort -t$'\t' -k3,3nr -k2,2 | head -3; done)"
}

t_duckdb_gives_span_p99_per_name_as_spans_does() {
	local h want=''
	ready || return
	for h in "${HOSTS[@]}"; do
		want+=$("$D9" spans -i "$TMP/$h" --format json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["spans"]:
    print(sys.argv[1], r["name"], r["count"], r["p99_ns"], r["max_ns"], sep="\t")' "$h")$'\n'
	done
	[ "$(printf '%s' "$want" | grep -c .)" -ge 3 ] || { fail "the demos made no spans"; return 1; }
	# nearest rank, as d9prof counts it
	same "spans per name" "$(printf '%s' "$want" | grep . | sort)" \
		"$(sql "SELECT host, name, count(*), list_sort(list(duration_ns))[ceil(0.99 * count(*))::INT],
			max(duration_ns) FROM $(t spans) GROUP BY 1, 2" | sort)"
}

t_duckdb_finds_the_hosts_with_polls_over_1ms() {
	local h n want='' got
	ready || return
	for h in "${HOSTS[@]}"; do
		n=$("$D9" polls -i "$TMP/$h" --min 1ms --limit 0 2>/dev/null | grep -c '^ *[0-9]')
		want+="$h	$n"$'\n'
	done
	got=$(sql "SELECT h, count(p.poll) FROM (VALUES ('h1'), ('h2'), ('h3')) v(h)
		LEFT JOIN $(t polls) p ON p.host = v.h AND p.duration_ns >= 1000000 GROUP BY 1 ORDER BY 1")
	same "polls over 1 ms per host" "${want%$'\n'}" "$got"
}

# The writer against DuckDB on random tables of every kind of column
# (tests/e2e/tables/pqrand.c: extremes, NULLs, dictionaries and not, long
# UTF-8 strings, lists), several seeds and sizes across row groups: the
# rows DuckDB reads are those written, and the statistics it prunes by
# are the columns' minimum and maximum
t_duckdb_reads_random_tables_as_written() {
	local seed rows sizes=(0 1 5000 133000 3000)
	need_duckdb || return
	cc -std=gnu11 -O1 -g -I"$ROOT" tests/e2e/tables/pqrand.c -o "$TMP/pqrand" \
		"$ROOT/$B/libd9core.a" -lzstd -lz -lm || { fail "cannot build pqrand"; return 1; }
	for seed in 1 2 3 4; do
		rows=${sizes[$seed]}
		"$TMP/pqrand" "$TMP/r$seed.parquet" "$TMP/r$seed.txt" "$rows" "$seed" ||
			{ fail "pqrand $seed failed"; return 1; }
		# the rows, then the minimum and maximum of v as the rows and as
		# the statistics say them, in one start of DuckDB
		sql "SELECT v, b, s, l, t, w FROM '$TMP/r$seed.parquet'" \
			"SELECT min(v), max(v) FROM '$TMP/r$seed.parquet'" \
			"SELECT min(stats_min_value::BIGINT), max(stats_max_value::BIGINT)
				FROM parquet_metadata('$TMP/r$seed.parquet') WHERE path_in_schema = 'v'" \
			>"$TMP/r$seed.duck" || return 1
		head -n "$rows" "$TMP/r$seed.duck" | cmp -s "$TMP/r$seed.txt" - ||
			{ diff "$TMP/r$seed.txt" <(head -n "$rows" "$TMP/r$seed.duck") | head -5
			fail "seed $seed, $rows rows: DuckDB read other rows"; return 1; }
		same "statistics of seed $seed" "$(tail -2 "$TMP/r$seed.duck" | head -1)" \
			"$(tail -1 "$TMP/r$seed.duck")" || return 1
	done
	# the growing columns took the deltas (the other path)
	same "encodings of t and w" "$(printf 't\tPLAIN, RLE, DELTA_BINARY_PACKED\nw\tPLAIN, RLE, DELTA_BINARY_PACKED')" \
		"$(sql "SELECT DISTINCT path_in_schema, encodings FROM parquet_metadata('$TMP/r3.parquet')
			WHERE path_in_schema IN ('t', 'w') ORDER BY 1")"
}

t_upload_tables_puts_each_segments_tables_beside_it() {
	local rc h=u1 seg n got want
	need_duckdb || return
	command -v python3 >/dev/null || { say "skip - no python3"; return 2; }
	s3_start "$TMP/s3" bkt; rc=$?
	[ "$rc" = 0 ] || return "$rc"
	start_ready "$TMP/demo-up.out" "$DEMO" || return 1
	"$D9" record -p "$SPID" -d 3 --rotate 1s --service demo --host "$h" -o "$TMP/$h" \
		--upload s3://bkt/fleet --upload-tables 2>"$TMP/rec-up.err" ||
		{ cat "$TMP/rec-up.err"; fail "record --upload-tables failed"; return 1; }
	grep -q "upload-tables: [1-9][0-9]* segments' tables" "$TMP/rec-up.err" ||
		{ cat "$TMP/rec-up.err"; fail "record did not say what the tables cost"; return 1; }
	# what the AWS CLI fetches back is what export makes of each segment
	awscli s3 cp --recursive --quiet s3://bkt/fleet "$TMP/fetched" || return
	n=0
	for seg in "$TMP/$h"/*.d9; do
		"$D9" export -i "$seg" --format parquet -o "$TMP/local" 2>/dev/null ||
			{ fail "export of $seg failed"; return 1; }
		n=$((n + 1))
	done
	((n >= 2)) || { fail "only $n segments"; return 1; }
	rm -rf "$TMP/fetched-tables" && mkdir -p "$TMP/fetched-tables" &&
		for t in samples stacks polls tasks delays spans offcpu; do
			[ -d "$TMP/fetched/$t" ] && mv "$TMP/fetched/$t" "$TMP/fetched-tables/"
		done
	diff -r "$TMP/local" "$TMP/fetched-tables" >"$TMP/diff.out" ||
		{ head "$TMP/diff.out"; fail "the uploaded tables are not export's"; return 1; }
	# and DuckDB reads them: a poll per row of each segment's polls
	want=$(for seg in "$TMP/$h"/*.d9; do "$D9" polls -i "$seg" --limit 0 2>/dev/null | grep -c '^ *[0-9]'; done |
		awk '{ s += $1 } END { print s }')
	got=$(sql "SELECT count(*) FROM read_parquet('$TMP/fetched-tables/polls/**/*.parquet', hive_partitioning = true) WHERE host = '$h'")
	same "polls uploaded" "$want" "$got" || return 1
	# ls counts the segments, not the tables' keys
	"$D9" ls s3://bkt/fleet >"$TMP/ls.out" 2>&1 || { cat "$TMP/ls.out"; fail "ls failed"; return 1; }
	grep -q "not in the layout" "$TMP/ls.out" &&
		{ cat "$TMP/ls.out"; fail "ls took the tables for strangers"; return 1; }
	grep -q "^(and [1-9][0-9]* Parquet table files beside them)" "$TMP/ls.out" ||
		{ cat "$TMP/ls.out"; fail "ls did not count the tables"; return 1; }
	return 0
}

# A lean trace (record --lean): its tasks table counts every poll from
# the shim's sums, as the demo counted them and as `tasks` shows them;
# its polls table holds the polls lean mode wrote, fewer
t_duckdb_counts_every_poll_of_a_lean_trace() {
	local polls want got written dir=$TMP/lean-tables
	need_duckdb || return
	"$D9" record --lean -o "$TMP/lean.d9" -- "$DEMO" --bench-polls -w 2 \
		--bench-work-ns 5000 -d 1 >"$TMP/lean.out" 2>"$TMP/lean.err" ||
		{ fail "record --lean: $(tail -1 "$TMP/lean.err")"; return 1; }
	polls=$(sed -nE 's/^demo: elapsed .* ([0-9]+) polls .*/\1/p' "$TMP/lean.err" | head -1)
	[ -n "$polls" ] || { fail "the demo did not say how many polls it made"; return 1; }
	"$D9" export -i "$TMP/lean.d9" --format parquet -o "$dir" 2>"$TMP/lean-exp.err" ||
		{ cat "$TMP/lean-exp.err"; fail "export of the lean trace failed"; return 1; }
	want=$("$D9" tasks -i "$TMP/lean.d9" --limit 0 2>/dev/null |
		awk '$1 == "TASK" { for (i = 1; i <= NF; i++) { if ($i == "POLLS") c = i; if ($i == "WAKES") w = i }; next }
			c && w && /^[0-9]/ && $c > 0 { print $1 "\t" $c "\t" $w }' | sort)
	read -r got written <<<"$(sql "SELECT sum(polls), (SELECT count(*) FROM read_parquet('$dir/polls/**/*.parquet'))
		FROM read_parquet('$dir/tasks/**/*.parquet')")"
	say "    the demo made $polls polls; the tasks table counts $got; $written written"
	same "every poll counted" "$polls" "$got" || return 1
	[ "$written" -lt "$polls" ] || { fail "$written polls written of $polls: not lean"; return 1; }
	same "polls and delays per task" "$want" \
		"$(sql "SELECT task, polls, delays FROM read_parquet('$dir/tasks/**/*.parquet') WHERE polls > 0" | sort)"
}

t_bad_requests_are_one_clear_line() {
	local out
	ready || return
	out=$("$D9" export -i "$TMP/h1" --format parquet 2>&1)
	[ $? = 2 ] && [[ $out == *"give -o DIR"* ]] || { say "$out"; fail "no -o: want a usage error"; return 1; }
	: >"$TMP/afile"
	out=$("$D9" export -i "$TMP/h1" --format parquet -o "$TMP/afile" 2>&1)
	[ $? = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == *afile* ]] ||
		{ say "$out"; fail "-o a file: want one line naming it"; return 1; }
	out=$("$D9" record -p 1 --upload-tables 2>&1)
	[ $? = 2 ] && [[ $out == *"--upload-tables needs --upload and --rotate"* ]] ||
		{ say "$out"; fail "--upload-tables alone: want a usage error"; return 1; }
}

e2e_run_tests
