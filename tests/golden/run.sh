#!/usr/bin/env bash
# Golden-file tests: every command's --help, and the text tables and
# folded outputs on a fixed synthetic trace (tests/golden/mktrace.c),
# compared byte for byte with tests/golden/expected/. UPDATE=1 rewrites
# the expected files (review the diff before committing). Then every
# example in the commands' --help is run as pasted, against the same trace.
set -u
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
EXP=tests/golden/expected
TMP=$(mktemp -d /tmp/d9golden.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0 skip=0
# wall-clock times (info, --from HH:MM:SS) are local: pin the zone
export PATH="$ROOT/$B:$PATH" LC_ALL=C TZ=UTC

mk() { "$ROOT/$B/tests/golden/mktrace" "$@" || { echo "mktrace $* failed"; exit 1; }; }
mk "$TMP/d9prof.data"
mk --losses "$TMP/lossy.data"
mk "$TMP/before.data"					# the base of flame --diff's example
mk --hostile "$TMP/hostile.data"			# names with escapes, bad UTF-8
mk --lean "$TMP/lean.data"				# as record --lean writes it
cp tests/golden/textcheck.py "$TMP/"
# the same records as a flight recorder's segments (rotated files are
# named {unix-epoch}-{index}.d9; dumps d9prof-PID-DATE-TIME.data):
mk --segments 0-3 "$TMP/split.data"			# one file, back to back
mkdir -p "$TMP/rot" "$TMP/gap" "$TMP/dumps" "$TMP/cutdir"
for k in 0 1 2 3; do mk --segments $k-$k "$TMP/rot/1795219199-$k.d9"; done
cp "$TMP"/rot/*-[023].d9 "$TMP/gap/"			# segment 1 missing
mk --segments 0-2 --dump SIGUSR1 "$TMP/dumps/d9prof-4242-20261121-000000.data"
mk --segments 1-3 --dump "target exited: exit 3" --exit "exit 3" \
	"$TMP/dumps/d9prof-4242-20261121-000003.data"	# overlaps the first
mk --segments 0-1 --cut "$TMP/cut.data"			# the recorder killed
cp "$TMP/rot/1795219199-0.d9" "$TMP/cutdir/"
mk --segments 1-1 --cut "$TMP/cutdir/1795219199-1.d9"

# check NAME CMD: run CMD in $TMP, compare with $EXP/NAME.out
check() {
	local name=$1 cmd=$2 got="$TMP/$1.out"
	(cd "$TMP" && bash -c "$cmd" >"$got" 2>&1; echo "[exit $?]" >>"$got")
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$got" "$EXP/$name.out"
		pass=$((pass + 1))
	elif [ ! -f "$EXP/$name.out" ]; then
		echo "not ok - $name: no $EXP/$name.out (UPDATE=1 to write it)"
		fail=$((fail + 1))
	elif diff -u "$EXP/$name.out" "$got" >"$TMP/$name.diff"; then
		pass=$((pass + 1))
	else
		echo "not ok - $name: output differs from $EXP/$name.out"
		head -40 "$TMP/$name.diff" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
}

for c in "" record top flame tasks polls offcpu delays spans events report info dump export; do
	check "help${c:+-$c}" "d9prof ${c:+$c }--help"
done
while IFS='|' read -r name cmd; do
	name=$(echo "$name" | xargs)
	case $name in ''|'#'*) continue ;; esac
	check "$name" "$cmd"
done <tests/golden/cases

# the help examples, as pasted (record needs a process: left out)
for c in flame tasks polls offcpu delays report info export; do
	d9prof "$c" --help | sed -n '/^examples:/,$p' | sed -n 's/^  \(d9prof .*\)/\1/p' |
		sed 's/ *# .*$//' >"$TMP/ex-$c"
	while read -r ex; do
		case $ex in *"d9prof record"*) skip=$((skip + 1)); continue ;; esac
		tool=$(grep -o '| *[a-z]*' <<<"$ex" | tr -d '| ' | sort -u | grep -vxE 'awk|sort|tail|head|grep|sed' | head -1)
		if [ -n "$tool" ] && ! command -v "$tool" >/dev/null; then
			echo "skip - example needs $tool: $ex"
			skip=$((skip + 1))
			continue
		fi
		touch "$TMP/ex.stamp"
		sleep 0.01
		# it must succeed and print something, or write a file
		if (cd "$TMP" && bash -o pipefail -c "$ex" >"$TMP/ex.out" 2>&1) &&
			{ [ -s "$TMP/ex.out" ] ||
			  [ -n "$(find "$TMP" -maxdepth 1 -type f -newer "$TMP/ex.stamp" \
				! -name ex.out -size +0)" ]; }; then
			pass=$((pass + 1))
		else
			echo "not ok - the example of 'd9prof $c --help' fails as pasted: $ex"
			sed 's/^/    /' "$TMP/ex.out" | head -5
			fail=$((fail + 1))
		fi
	done <"$TMP/ex-$c"
done
echo "golden: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
