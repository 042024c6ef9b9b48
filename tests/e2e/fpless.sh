#!/usr/bin/env bash
# Targets built without frame pointers (issue 23 item 5): a 40-deep
# recursion in C (-O2 -g -fomit-frame-pointer) and in Rust (a release build
# without force-frame-pointers), each spinning at the bottom. By default
# record sees that the program lacks frame pointers, says so naming it, and
# copies enough stack for CFI to reach main: at least 95% of the samples
# must (a ratio, so each recording runs until it holds 500 samples, 1 s
# doubling up to 16 s: some 1000 in 1 s). With --call-graph fp the chains are cut in the
# recursion, and every view's loss line counts them.
#
#   B=build    build directory
#   ONLY=REGEX run only the matching tests
NAME=fpless
. "$(dirname "$0")/lib.sh"
REC_C=$ROOT/$B/e2e/fpless/recurse
REC_RS=$ROOT/$B/e2e/fpless/recurse-rs
NEED=500

# rec DUR PROG NAME [RECORD OPTIONS...]: PROG run DUR s under record into
# $TMP/NAME.data (its summary in NAME.err, the folded stacks in
# NAME.folded, the loss line flame printed in NAME.lost); GOT: the samples
rec() {
	local dur=$1 prog=$2 name=$3
	shift 3
	"$D9" record "$@" -o "$TMP/$name.data" -- "$prog" "$dur" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; return 1; }
	"$D9" flame -i "$TMP/$name.data" --format folded >"$TMP/$name.folded" \
		2>"$TMP/$name.lost" || { cat "$TMP/$name.lost"; return 1; }
	GOT=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/$name.folded")
}

# reach FOLDED: per mille of the samples whose stack holds main (C's, or
# a Rust crate's NAME::main)
reach() {
	awk '{ n = $NF; t += n; if ($0 ~ /(^|;)([A-Za-z0-9_]+::)?main(;| [0-9]+$)/) m += n }
		END { print t ? int(1000 * m / t) : 0 }' "$1"
}

# default_reaches_main PROG NAME: the default records PROG's stacks whole
# and names it in the summary as lacking frame pointers
default_reaches_main() {
	local prog=$1 name=$2 r
	enough "$NEED" 1 16 rec "$prog" "$name"
	case $? in 0) ;; 1) return 1 ;; *) fail "too few samples (machine busy?)"; return 1 ;; esac
	grep -q "call graph: dwarf,8192 (no frame pointers in $(basename "$prog")" "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "the summary does not name $(basename "$prog")"; return 1; }
	r=$(reach "$TMP/$name.folded")
	say "    $((r / 10)).$((r % 10))% of $GOT samples reach main"
	[ "$r" -ge 950 ] || { sort -k2 -nr "$TMP/$name.folded" | head -5 | cut -c1-200;
		fail "want >= 95%"; return 1; }
}

# fp_counts_cut PROG NAME: --call-graph fp cuts the recursion's chains, and
# flame's loss line, info's text and its JSON all count them
fp_counts_cut() {
	local prog=$1 name=$2 n
	enough "$NEED" 1 16 rec "$prog" "$name" --call-graph fp
	case $? in 0) ;; 1) return 1 ;; *) fail "too few samples (machine busy?)"; return 1 ;; esac
	grep -q "CPU stacks (fp, 512 bytes copied)" "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "record did not say fp"; return 1; }
	n=$(sed -n 's/.* \([0-9][0-9]*\) CPU stacks cut short.*/\1/p' "$TMP/$name.lost")
	say "    ${n:-no} cut stack(s) of $GOT samples; $(( $(reach "$TMP/$name.folded") / 10 ))% reach main"
	[ -n "$n" ] && [ "$n" -gt 0 ] ||
		{ cat "$TMP/$name.lost"; fail "flame's loss line does not count cut stacks"; return 1; }
	"$D9" info -i "$TMP/$name.data" | grep -q "^lost: .*$n CPU stacks cut short" ||
		{ fail "info does not say $n CPU stacks cut short"; return 1; }
	"$D9" info -i "$TMP/$name.data" --json | grep -q "\"cpu_stacks_cut\":$n[,}]" ||
		{ fail "info --json has no cpu_stacks_cut: $n"; return 1; }
}

need_rust() {
	[ -x "$REC_RS" ] && return 0
	say "    skip: no $REC_RS (no rustc on PATH when it was built)"
	return 2
}

t_c_default_reaches_main() { need_perf || return; default_reaches_main "$REC_C" c; }
t_c_fp_counts_cut_stacks() { need_perf || return; fp_counts_cut "$REC_C" cfp; }
t_rust_default_reaches_main() { need_perf || return; need_rust || return; default_reaches_main "$REC_RS" rs; }
t_rust_fp_counts_cut_stacks() { need_perf || return; need_rust || return; fp_counts_cut "$REC_RS" rsfp; }

e2e_run_tests
