#!/usr/bin/env bash
# What a hostile target controls must not reach root's files, shell or
# terminal through what the recorder writes (issue 24). The target
# (tests/e2e/outputs/named.c) runs as nobody, names itself, and its owner
# plants links; the recorder runs as root:
#   - dumps and rotated segments never write through a planted link, even
#     where links are followed (fs.protected_symlinks=0), and are 0600 in
#     0700 directories; a directory of the target's owner is refused;
#   - the target's name is one safe path component under --key-prefix and
#     never shell text in --on-segment, whatever the quotes around {};
#   - --on-segment commands: nothing of the recorder's but stdio, at most
#     four at once, killed past --hook-timeout;
#   - trigger dumps: each trigger cools down, all dumps within --max-total;
#   - a FIFO at /tmp/perf-PID.map does not hold the recorder, a map of
#     another user is not read;
#   - 'd9prof dump' signals only the recorder that maps the target's
#     segment, not one the target names.
# D9=path picks the recorder (make check-hostile runs it on an ASan build).
NAME=outputs
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

chmod 755 "$TMP"
NAMED=$TMP/named
cc -O1 -g -fno-omit-frame-pointer -I"$ROOT" -I"$ROOT/include" tests/e2e/outputs/named.c \
	-o "$NAMED" "$ROOT/$B/libd9prof.a" -lpthread || { say "cannot build named"; exit 1; }
[ "$(id -u)" = 0 ] ||
	e2e_skip_all "the recorder must be root here (the attacks are those of a target's owner on root)"
need_perf >/dev/null || e2e_skip_all "$PERF_WHY"
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# start NAME SECS [ARGS...]: the target as nobody, HPID once it said ready
start() {
	local out=$TMP/named.$RANDOM.out
	: >"$out"
	chmod 666 "$out"
	start_ready -2 "$out" "${AS_NOBODY[@]}" "$NAMED" "$@" || return 1
	HPID=$(sed -n 's/^pid //p' "$out")
	JIT=$(sed -n 's/^jit //p' "$out")
}

# no_controls FILE: FILE holds no terminal control (C0 but tab and
# newline, DEL, C1 as UTF-8 or as a byte)
no_controls() {
	! LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$1" ||
		fail "control characters in $1: $(LC_ALL=C grep -nP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$1" | head -2 | cat -v)"
}

t_dumps_and_segments_never_write_through_a_planted_link() {
	local ps pub=$TMP/pub victim=$TMP/victim rp e t
	ps=$(sysctl -n fs.protected_symlinks)
	sysctl -qw fs.protected_symlinks=0 || { say "    skip: cannot set fs.protected_symlinks"; return 2; }
	mkdir -m 1777 "$pub"
	echo precious >"$victim"
	chmod 600 "$victim"
	start attacker 30 || { sysctl -qw fs.protected_symlinks="$ps"; return 1; }
	# every name the recorder used to write through, for the next 20 s:
	# dumps' .d9prof-PID-YYYYmmdd-HHMMSS.data.tmp and their final names,
	# segments' .EPOCH-INDEX.d9.tmp (their names end in the recording's
	# random tag now)
	e=$(date +%s)
	"${AS_NOBODY[@]}" bash -c 'for ((t = $1; t < $1 + 20; t++)); do
			d=$(date -d @$t +%Y%m%d-%H%M%S)
			ln -s "$3" "$2/.d9prof-$4-$d.data.tmp"; ln -s "$3" "$2/d9prof-$4-$d.data"
			for i in 0 1 2 3 4 5 6; do ln -s "$3" "$2/.$t-$i.d9.tmp"; done
		done' _ "$e" "$pub" "$victim" "$HPID"
	"$D9" record -p "$HPID" --flight=1s -d 4 -o "$pub" 2>"$TMP/fl.err" &
	rp=$!
	sleep 1.5; kill -USR1 "$rp"; sleep 1; kill -USR1 "$rp"
	wait "$rp" || fail "record --flight failed: $(tail -3 "$TMP/fl.err")"
	"$D9" record -p "$HPID" --rotate 1s -d 3 -o "$pub" 2>"$TMP/rot.err" ||
		fail "record --rotate failed: $(tail -3 "$TMP/rot.err")"
	sysctl -qw fs.protected_symlinks="$ps"
	[ "$(cat "$victim")" = precious ] || fail "the victim was written: $(head -c 60 "$victim" | cat -v)" ||
		return 1
	say "    $(grep -c '^d9prof: dump:' "$TMP/fl.err") dumps, $(ls "$pub"/*.d9 | wc -l) segments beside $(find "$pub" -type l | wc -l) planted links"
	[ "$(find "$pub" -maxdepth 1 -type f -name 'd9prof-*.data' | wc -l)" -ge 3 ] ||
		fail "dumps missing: $(ls "$pub" | grep -v '^\.' | head)" || return 1
	[ "$(find "$pub" -maxdepth 1 -type f -name '*.d9' | wc -l)" -ge 3 ] ||
		fail "segments missing" || return 1
	for t in "$pub"/d9prof-*.data "$pub"/*.d9; do
		[ -L "$t" ] && continue
		[ "$(stat -c %a "$t")" = 600 ] || fail "$t is mode $(stat -c %a "$t")" || return 1
		"$D9" info -i "$t" >/dev/null || fail "$t does not read" || return 1
	done
	! find "$pub" -name '*.tmp' -type f | grep -q . || fail "temporary files left behind" || return 1
}

t_a_directory_of_the_targets_owner_is_refused() {
	local own=$TMP/own
	mkdir -m 755 "$own"
	chown nobody "$own"
	start owned 10 || return 1
	"$D9" record -p "$HPID" --flight -d 1 -o "$own/traces" 2>"$TMP/own.err" &&
		fail "recorded into a directory of the target's owner" || true
	say "    $(head -1 "$TMP/own.err")"
	grep -q "belongs to uid 65534, the target's owner" "$TMP/own.err" ||
		fail "no word of the owner: $(cat "$TMP/own.err")" || return 1
	[ ! -e "$own/traces" ] || fail "made $own/traces" || return 1
	# a link of theirs as the directory is not followed
	"${AS_NOBODY[@]}" ln -s / "$TMP/pub-link" 2>/dev/null || ln -s / "$TMP/pub-link"
	chown -h nobody "$TMP/pub-link"
	"$D9" record -p "$HPID" --rotate 1s -d 1 -o "$TMP/pub-link" 2>"$TMP/link.err" &&
		fail "recorded through the link" || true
	grep -q "symbolic link of uid 65534" "$TMP/link.err" ||
		fail "no word of the link: $(cat "$TMP/link.err")" || return 1
	# where root made it: 0700
	"$D9" record -p "$HPID" --rotate 1s -d 1.5 --key-prefix k -o "$TMP/fresh" 2>"$TMP/fresh.err" ||
		fail "$(tail -2 "$TMP/fresh.err")" || return 1
	! find "$TMP/fresh" -type d ! -perm 700 | grep . || fail "directories not 0700" || return 1
}

t_the_targets_name_stays_one_component_and_never_shell() {
	local w n i rps=() names=('../../../../..' '$(touch P)' "$(printf 'a\033[2J\a\302\233b')")
	# the three names at once, each its own target, recorder and directory
	for i in 0 1 2; do
		w=$TMP/work$i
		mkdir "$w"
		start "${names[i]}" 10 || return 1
		(cd "$w" && exec "$D9" record -p "$HPID" --rotate 1s -d 2 --key-prefix k -o out \
			--on-segment 'echo "{}" >>log; echo {} >>log; echo '"'"'{}'"'"' >>log; echo "$D9PROF_SEGMENT" >>log' \
			2>"$TMP/name$i.err") &
		rps+=($!)
		PIDS+=($!)
	done
	for i in 0 1 2; do
		wait "${rps[i]}" || fail "record failed: $(tail -2 "$TMP/name$i.err")" || return 1
	done
	sleep 0.5 # the last commands
	for i in 0 1 2; do
		n=${names[i]} w=$TMP/work$i
		[ ! -e "$w/P" ] || fail "comm '$n' ran a command" || return 1
		[ "$(find "$w" -name '*.d9' | wc -l)" -ge 2 ] || fail "no segments: $(find "$w")" || return 1
		find "$w" -name '*.d9' | grep -v "^$w/out/k/[0-9-]*/[0-9]*/[A-Za-z0-9_][A-Za-z0-9._-]*/[^/]*/[^/]*/[0-9]*-[0-9]*-[0-9a-f]\{12\}.d9$" |
			sed 's/^/    outside the layout: /' | grep . && return 1
		# each command saw the sealed file's path four ways
		awk -v w="$w/" '{ if (system("test -f \"" w $0 "\"")) { print "    not a file: " $0; bad = 1 } }
			END { exit bad || NR < 8 }' "$w/log" || fail "the paths the commands saw" || return 1
		no_controls "$TMP/name$i.err" || return 1
		say "    comm $(printf %q "$n") -> $(find "$w/out/k" -mindepth 3 -maxdepth 3 -printf '%f\n' | head -1)"
	done
}

t_on_segment_commands_are_bounded() {
	local w=$TMP/hooks n most=0 t0 s=77.$RANDOM
	mkdir "$w"
	start hooks 30 || return 1
	t0=$SECONDS
	# (-d 20: a bound; it is stopped once it showed what it must)
	(cd "$w" && exec "$D9" record -p "$HPID" --rotate 1s -d 20 -o out --hook-timeout 5s \
		--on-segment "exec >fds.\$\$; ls -l /proc/self/fd; exec sleep $s" 2>"$TMP/hooks.err") &
	local rp=$! stopped=0 ts=0
	while kill -0 "$rp" 2>/dev/null; do
		n=$(pgrep -fc "^sleep $s\$")
		[ "$n" -gt "$most" ] && most=$n
		# four at once (the fifth segment's, sealed at 5 s, waits) and
		# the first killed at its timeout (at 6 s): the stop, then
		if [ "$stopped" = 0 ] && [ "$most" -ge 4 ] &&
			grep -q 'killed after 5 s' "$TMP/hooks.err"; then
			kill -INT "$rp"
			stopped=1 ts=$SECONDS
		fi
		sleep 0.2
	done
	wait "$rp" || fail "record failed: $(tail -3 "$TMP/hooks.err")" || return 1
	say "    at most $most commands at once; $(grep -c 'killed after 5 s' "$TMP/hooks.err") killed after 5 s; recorded in $((SECONDS - t0)) s"
	pkill -f "^sleep $s\$"
	[ "$most" = 4 ] || fail "$most commands at once, want 4" || return 1
	grep -q "killed after 5 s" "$TMP/hooks.err" || fail "none killed: $(cat "$TMP/hooks.err")" || return 1
	# its stop, with four commands running and more waiting, within 7 s
	# (as when it recorded 8 s, and took 15 s at most in all)
	[ "$stopped" = 1 ] && [ $((SECONDS - ts)) -le 7 ] ||
		fail "the commands held the recorder" || return 1
	# the commands had stdin, stdout, stderr and no other descriptor of
	# ours (the shell's own copies of /dev/null aside)
	awk '$9 > 2 && $11 != "/dev/null" && $11 !~ /^\/proc\// { print $9 " -> " $11 }' \
		"$w"/fds.* | sort -u >"$TMP/fds"
	[ -s "$w/$(cd "$w" && ls fds.* | head -1)" ] && [ ! -s "$TMP/fds" ] ||
		fail "descriptors: $(tr '\n' ' ' <"$TMP/fds")" || return 1
}

t_trigger_dumps_cool_down_and_stay_within_max_total() {
	local d=$TMP/dumps total
	start dumper 30 || return 1
	# every poll passes the trigger; 1 s window and cooldown; at most 50K
	"$D9" record -p "$HPID" --flight=1s --trigger 'poll>10us' --max-size 1M --max-total 50K \
		-d 6 -o "$d" 2>"$TMP/dump.err" || fail "record failed: $(tail -3 "$TMP/dump.err")" || return 1
	grep "dump\|trigger" "$TMP/dump.err" | tail -3 | sed 's/^/    /'
	total=$(du -cb "$d"/d9prof-*.data | tail -1 | cut -f1)
	say "    $(ls "$d" | wc -l) dumps kept, $total bytes; $(grep -c '^d9prof: dump:' "$TMP/dump.err") written"
	grep -q "held [0-9]* more times* in its cooldown" "$TMP/dump.err" ||
		fail "the cooldown not said" || return 1
	grep -q "deleted the [0-9]* oldest dumps* of this recording" "$TMP/dump.err" ||
		fail "no dump deleted for --max-total" || return 1
	# within the cap, but for the newest, which always stays
	local newest
	newest=$(ls -t "$d"/d9prof-*.data | head -1)
	[ $((total - $(stat -c %s "$newest"))) -le 51200 ] || fail "$total bytes kept" || return 1
}

t_a_fifo_perf_map_holds_nothing_and_a_strangers_map_is_not_read() {
	local rc
	start jitter 30 jit || return 1
	mkfifo "/tmp/perf-$HPID.map"
	chown nobody "/tmp/perf-$HPID.map"
	timeout 30 "$D9" record -p "$HPID" -d 1 -o "$TMP/fifo.data" 2>"$TMP/fifo.err"
	rc=$?
	rm -f "/tmp/perf-$HPID.map"
	[ "$rc" = 0 ] || fail "record: exit $rc: $(tail -2 "$TMP/fifo.err")" || return 1
	# a map of the target's owner names the JIT code; one of another user not
	printf '%s 10 jitted_spin_loop\n' "$JIT" >"/tmp/perf-$HPID.map"
	chown nobody "/tmp/perf-$HPID.map"
	"$D9" record -p "$HPID" -d 1 -o "$TMP/jit.data" 2>/dev/null || return 1
	chown daemon "/tmp/perf-$HPID.map"
	"$D9" record -p "$HPID" -d 1 -o "$TMP/stranger.data" 2>/dev/null || return 1
	rm -f "/tmp/perf-$HPID.map"
	"$D9" flame -i "$TMP/jit.data" --format folded | grep -q jitted_spin_loop ||
		fail "the owner's map was not read" || return 1
	! "$D9" flame -i "$TMP/stranger.data" --format folded | grep -q jitted_spin_loop ||
		fail "another user's map was read" || return 1
}

# attached ERR: the recorder writing ERR attached to its target's shim
attached() {
	wait_for "$1" "attached to the d9prof shim" 10 ||
		fail "the recorder did not attach: $(cat "$1")"
}

t_dump_signals_only_the_recorder_of_the_target() {
	local other rp
	# a flight recorder of something else, which the target names as its own
	"$ROOT/$B/examples/demo" -d 20 -q >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 0.3
	"$D9" record -p $! --flight -d 8 -o "$TMP/other" 2>"$TMP/other.err" &
	other=$!
	PIDS+=("$other")
	attached "$TMP/other.err" || return 1
	start liar 20 "recorder=$other" || return 1
	sleep 0.3
	"$D9" dump "$HPID" 2>"$TMP/dump.err" && fail "dump believed the target" || true
	say "    $(head -1 "$TMP/dump.err")"
	sleep 0.5
	! grep -q "dump:" "$TMP/other.err" || fail "the other recorder dumped" || return 1
	# an honest target's recorder is found
	start honest 20 || return 1
	"$D9" record -p "$HPID" --flight -d 6 -o "$TMP/honest" 2>"$TMP/honest.err" &
	rp=$!
	PIDS+=("$rp")
	attached "$TMP/honest.err" || return 1
	"$D9" dump "$HPID" >/dev/null 2>"$TMP/dump2.err" || fail "$(cat "$TMP/dump2.err" "$TMP/honest.err")" ||
		return 1
	# its dump, said before the stop's own
	wait_for "$TMP/honest.err" "dump: .*SIGUSR1" 10 || fail "its recorder did not dump" || return 1
	kill -INT "$rp"
	wait "$rp" || fail "its recorder failed: $(tail -3 "$TMP/honest.err")" || return 1
}

e2e_run_tests
