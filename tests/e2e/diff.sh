#!/usr/bin/env bash
# Differential flamegraphs (d9prof flame --diff) on two real recordings of a
# runtime with a known change: task "quick" spends 100 us per poll in
# slowpoll_quick() and 200 us in slowpoll_steady() in the base, 300 us and
# 200 us in the new one. Scaled to the new total, slowpoll_quick grew and
# slowpoll_steady shrank, and the SVG paints them red and blue.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=diff
. "$(dirname "$0")/lib.sh"
SLOW=$ROOT/$B/e2e/latency/slowpoll

# rec NAME QUICK_US STEADY_US: 3 s of slowpoll into $TMP/NAME.data
rec() {
	"$SLOW" 5 99 0 "$2" "$3" >"$TMP/$1.out" &
	PIDS+=($!)
	for ((i = 0; i < 50; i++)); do grep -q '^ready' "$TMP/$1.out" && break; sleep 0.1; done
	"$D9" record -p "$!" -d 3 -o "$TMP/$1.data" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.err"; return 1; }
}

# count FOLDED FUNCTION COLUMN: the sum of COLUMN (2 base, 3 new) over the
# stacks through FUNCTION
count() {
	awk -v f="$2" -v c="$3" '{ n = split($1, s, ";"); for (i = 1; i <= n; i++) if (s[i] == f) { t += $c; break } } END { print t + 0 }' "$1"
}

t_a_known_change_reads_red_and_blue() {
	local qb qn sb sn rq rs
	rec base 100 200 || { fail "the base recording failed"; return; }
	rec new 300 200 || { fail "the new recording failed"; return; }
	"$D9" flame -i "$TMP/new.data" --diff "$TMP/base.data" --task quick --format folded \
		>"$TMP/diff.folded" 2>"$TMP/diff.err" || { cat "$TMP/diff.err"; fail "flame --diff failed"; return; }
	qb=$(count "$TMP/diff.folded" slowpoll_quick 2)
	qn=$(count "$TMP/diff.folded" slowpoll_quick 3)
	sb=$(count "$TMP/diff.folded" slowpoll_steady 2)
	sn=$(count "$TMP/diff.folded" slowpoll_steady 3)
	rq=$(awk -v a="$qb" -v b="$qn" 'BEGIN { printf "%.2f", a ? b / a : 0 }')
	rs=$(awk -v a="$sb" -v b="$sn" 'BEGIN { printf "%.2f", a ? b / a : 0 }')
	say "    slowpoll_quick $qb -> $qn samples (x$rq), slowpoll_steady $sb -> $sn (x$rs)"
	# 100 -> 300 us: about 3x; 200 -> 200 us: about 1x (a little fewer polls
	# a second: each poll is longer; 3 s each, 999 Hz)
	awk -v r="$rq" 'BEGIN { exit !(r >= 2.2 && r <= 4) }' ||
		{ fail "slowpoll_quick did not triple"; return; }
	awk -v r="$rs" 'BEGIN { exit !(r >= 0.6 && r <= 1.5) }' ||
		{ fail "slowpoll_steady changed"; return; }
	"$D9" flame -i "$TMP/new.data" --diff "$TMP/base.data" --task quick -o "$TMP/diff.svg" \
		2>"$TMP/svg.err" || { cat "$TMP/svg.err"; fail "the SVG failed"; return; }
	# scaled to the new total (300 + 200 vs 100 + 200 us a poll), quick
	# grew and steady shrank
	grep -o '<title>slowpoll_quick ([^<]*' "$TMP/diff.svg" | head -1 | grep -q '; +' ||
		{ grep -o '<title>slowpoll_quick[^<]*' "$TMP/diff.svg" | head -2; fail "slowpoll_quick is not shown as grown"; return; }
	grep -o '<title>slowpoll_steady ([^<]*' "$TMP/diff.svg" | head -1 | grep -q '; -' ||
		{ grep -o '<title>slowpoll_steady[^<]*' "$TMP/diff.svg" | head -2; fail "slowpoll_steady is not shown as shrunk"; return; }
	say "    $(grep -o '<title>slowpoll_quick ([^<]*' "$TMP/diff.svg" | head -1 | sed 's/<title>//')"
}

e2e_run_tests
