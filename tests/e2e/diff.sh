#!/usr/bin/env bash
# Differential flamegraphs (d9prof flame --diff) on two real recordings of a
# runtime with a known change: task "quick" spends 100 us per poll in
# slowpoll_quick() and 200 us in slowpoll_steady() in the base, 300 us and
# 200 us in the new one. Scaled to the new total, slowpoll_quick grew and
# slowpoll_steady shrank, and the SVG paints them red and blue.
# The numbers are read as ratios within each recording (quick : steady,
# 1 : 2 then 3 : 2): the two do a fixed amount of work (slowpoll.c), so a
# ratio holds however much CPU a busy machine lends the program, while the
# number of samples a recording holds follows that CPU, which two
# recordings need not share; each recording is made long enough for 150
# samples of slowpoll_quick in the base (1 s at 3999 Hz, up to 12 s).
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=diff
. "$(dirname "$0")/lib.sh"
SLOW=$ROOT/$B/e2e/latency/slowpoll
# 4x the default rate: the ratios do not depend on it, and the 150
# samples come in a quarter of the time
HZ=3999

# rec NAME QUICK_US STEADY_US SECS: SECS s of slowpoll into $TMP/NAME.data,
# in the background (REC_PID; record's exit status in NAME.rc)
rec() {
	start_ready "$TMP/$1.out" "$SLOW" $(($4 + 2)) 99 0 "$2" "$3" || return 1
	("$D9" record -p "$SPID" -F "$HZ" -d "$4" -o "$TMP/$1.data" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
	kill "$SPID" 2>/dev/null) &
	REC_PID=$!
	PIDS+=("$REC_PID")
}

# rec_both SECS: base and new, SECS s each, at once (two processes: the
# ratios are each one's own); GOT: the base's samples of slowpoll_quick
# (the smallest count of the four)
rec_both() {
	local n p=()
	rec base 100 200 "$1" || { fail "the base program did not start"; return 1; }
	p+=("$REC_PID")
	rec new 300 200 "$1" || { fail "the new program did not start"; return 1; }
	p+=("$REC_PID")
	wait "${p[0]}"
	wait "${p[1]}"
	for n in base new; do
		[ "$(cat "$TMP/$n.rc" 2>/dev/null)" = 0 ] ||
			{ cat "$TMP/$n.err"; fail "the $n recording failed"; return 1; }
	done
	"$D9" flame -i "$TMP/new.data" --diff "$TMP/base.data" --task quick --format folded \
		>"$TMP/diff.folded" 2>"$TMP/diff.err" || { cat "$TMP/diff.err"; fail "flame --diff failed"; return 1; }
	GOT=$(count "$TMP/diff.folded" slowpoll_quick 2)
}

# count FOLDED FUNCTION COLUMN: the sum of COLUMN (2 base, 3 new) over the
# stacks through FUNCTION
count() {
	awk -v f="$2" -v c="$3" '{ n = split($1, s, ";"); for (i = 1; i <= n; i++) if (s[i] == f) { t += $c; break } } END { print t + 0 }' "$1"
}

t_a_known_change_reads_red_and_blue() {
	local qb qn sb sn b n rq
	enough 150 1 12 rec_both
	case $? in 0) ;; 3) fail "too few base samples of slowpoll_quick in 12 s at $HZ Hz: $GOT"; return 1 ;; *) return 1 ;; esac
	qb=$(count "$TMP/diff.folded" slowpoll_quick 2)
	qn=$(count "$TMP/diff.folded" slowpoll_quick 3)
	sb=$(count "$TMP/diff.folded" slowpoll_steady 2)
	sn=$(count "$TMP/diff.folded" slowpoll_steady 3)
	# quick : steady in each recording, and how much that grew
	b=$(awk -v q="$qb" -v s="$sb" 'BEGIN { printf "%.2f", s ? q / s : 0 }')
	n=$(awk -v q="$qn" -v s="$sn" 'BEGIN { printf "%.2f", s ? q / s : 0 }')
	rq=$(awk -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", (b > 0 ? n / b : 0) }')
	say "    base: slowpoll_quick $qb, slowpoll_steady $sb samples (quick:steady $b);" \
		"new: $qn, $sn ($n); quick grew x$rq against steady (${ENOUGH_SECS} s each)"
	# 100 : 200 us is 0.5, 300 : 200 us 1.5: quick tripled, steady stayed
	awk -v r="$b" 'BEGIN { exit !(r >= 0.35 && r <= 0.7) }' ||
		{ fail "base quick:steady $b, want about 0.5 (100 : 200 us)"; return; }
	awk -v r="$n" 'BEGIN { exit !(r >= 1.1 && r <= 2.1) }' ||
		{ fail "new quick:steady $n, want about 1.5 (300 : 200 us)"; return; }
	awk -v r="$rq" 'BEGIN { exit !(r >= 2.2 && r <= 4) }' ||
		{ fail "slowpoll_quick did not triple against slowpoll_steady"; return; }
	"$D9" flame -i "$TMP/new.data" --diff "$TMP/base.data" --task quick -o "$TMP/diff.svg" \
		2>"$TMP/svg.err" || { cat "$TMP/svg.err"; fail "the SVG failed"; return; }
	# scaled to the new total (300 + 200 vs 100 + 200 us a poll), quick
	# grew and steady shrank: their heaviest frames (a function may also
	# show in a few samples on another path, whichever way those moved)
	heaviest slowpoll_quick | grep -q '; +' ||
		{ grep -o '<title>slowpoll_quick[^<]*' "$TMP/diff.svg" | head -3; fail "slowpoll_quick is not shown as grown"; return; }
	heaviest slowpoll_steady | grep -q '; -' ||
		{ grep -o '<title>slowpoll_steady[^<]*' "$TMP/diff.svg" | head -3; fail "slowpoll_steady is not shown as shrunk"; return; }
	say "    $(heaviest slowpoll_quick)"
	say "    $(heaviest slowpoll_steady)"
}

# heaviest FUNCTION: the title of FUNCTION's frame with the most samples in
# $TMP/diff.svg ("FUNCTION (N samples, ...")
heaviest() {
	grep -o "<title>$1 ([^<]*" "$TMP/diff.svg" | sed 's/<title>//' |
		awk -F'(' '{ n = $2 + 0; if (n > m) { m = n; t = $0 } } END { print t }'
}

e2e_run_tests
