# shellcheck shell=bash
# Record until there is enough to judge: a test that needs N samples (or N
# of anything a recording yields) to give a ratio its meaning gets them by
# recording longer on a busy machine, not by asking for fewer. Sourced by
# the e2e scripts (lib.sh sources it); needs say().
#
# enough NEED SECS CAP FN ARGS...: call FN DUR ARGS... with DUR = SECS,
# then twice that, and so on while FN's count is short of NEED and DUR
# stays <= CAP. FN records for DUR seconds (replacing what it recorded
# before), sets GOT to its count and returns non-zero only when it failed
# outright. Says what each recording got when one was not enough. Returns
# 0 with NEED reached, 1 when FN failed, 3 when CAP came first (the
# caller fails, saying the machine was too busy to give NEED in CAP s).
# ENOUGH_SECS is the duration of the last recording, GOT its count.
enough() {
	local need=$1 dur=$2 cap=$3 fn=$4 trail=""
	shift 4
	while :; do
		GOT=0
		"$fn" "$dur" "$@" || return 1
		ENOUGH_SECS=$dur
		trail="$trail${trail:+, }$GOT in $dur s"
		[ "$GOT" -ge "$need" ] && break
		dur=$(awk -v d="$dur" 'BEGIN { print d * 2 }')
		awk -v d="$dur" -v c="$cap" 'BEGIN { exit !(d <= c) }' || {
			say "    want $need: got $trail (recording longer than $cap s: no)"
			return 3
		}
	done
	[ "$trail" = "$GOT in $dur s" ] || say "    want $need: got $trail"
	return 0
}
