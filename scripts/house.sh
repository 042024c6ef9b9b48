#!/usr/bin/env bash
# make check-house: the house rules of docs/DESIGN.md ("The house
# rules") as numbers, one line each, read from the objects make built in
# $B and from the sources. A rule fails when its number passes its
# ceiling below; when a number falls, lower its ceiling in the same
# commit (a ratchet: never raise one to get green).
#
#   views      references from a view (analysis/views/) to another view's
#              symbols other than its analysis__* entry points (nm)
#   core       references from the core (every object but the views and
#              the cli) to a view's symbols (nm)
#   circles    groups of files that call each other round (nm, all
#              objects: core, views, cli, shim) that DESIGN.md does not
#              declare between its <!-- circles --> marks
#   realloc    raw realloc()/reallocarray() outside lib/, kallsyms/ and
#              the shim (lib/grow.h's LIB_GROW is the one way to grow);
#              where it is 0, lib/banned.h makes it a compile error
#   umbrella   files that include analysis/analysis.h (the one header
#              the analysis had; each core object has its own now)
#   strhash    hand-written string hashes (FNV-1a, xxh32 constants)
#              outside lib/ and the shim: lib/hash.h has the tree's
#   clock      perf_event_attrs that set the perf clock themselves
#              (use_clockid) rather than through the one function
#   copies     functions the shim copies from lib/ (a "copy of lib/"
#              comment in libprof/) that no test pins equal
#   long       functions over 150 lines, but the DWARF expression
#              interpreter (eval in symbol/unwind.c)
#   format     source folders the format check (FORMAT_SRCS) leaves out
#   duplicates pairs of places that `duplicates` finds neither
#              boilerplate nor in tests/ or scripts/ (where that tool is
#              installed: a developer's, not CI's)
set -u
B=${B:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

# the ceilings: lower them as the numbers fall
declare -A CEIL=(
	[views]=0 [core]=0 [circles]=0 [realloc]=0 [umbrella]=0 [strhash]=0
	[clock]=1 [copies]=0 [long]=0 [format]=0 [duplicates]=12
)
fail=0 TMP=$(mktemp -d /tmp/d9house.XXXXXX)
trap '[ -n "${HOUSE_KEEP:-}" ] || rm -rf "$TMP"' EXIT

# rule NAME VALUE [OFFENDERS-FILE]: one line; the offenders indented
rule() {
	local name=$1 n=$2 c=${CEIL[$1]}
	if [ "$n" -le "$c" ]; then
		echo "ok - $name: $n (ceiling $c)"
	else
		echo "not ok - $name: $n, over its ceiling $c:"
		fail=1
	fi
	if [ -n "${3:-}" ] && [ -s "$3" ] && { [ "$n" -gt "$c" ] || [ -n "${HOUSE_VERBOSE:-}" ]; }; then
		head -20 "$3" | sed 's/^/    /'
	fi
}

# ---- the objects: who defines and who uses what (nm) --------------------
# the objects of today's sources (a stale object of a removed file is not
# the house's)
objs() {
	git ls-files -- "$@" | grep '\.c$' | grep -v '\.bpf\.c$' | sed "s|^|$B/${PIC:-}|; s|\\.c$|.o|"
}
core=$(objs lib kallsyms trace symbol record analysis store | grep -v "/analysis/views/")
views=$(objs analysis/views)
cli=$(objs cli)
shim=$(PIC=pic/ objs libprof)
for o in $core $views $cli $shim; do
	[ -f "$o" ] || { echo "not ok - house: no $o: run make first"; exit 1; }
done
# "SOURCE SYMBOL" per defined global, and per undefined reference
# (build/x/y.o and build/pic/x/y.o stand for x/y.c)
src() { sed -E "s|^$B/(pic/)?||; s|\\.o:[^ ]*|.c|"; }
# shellcheck disable=SC2086
nm -A -g --defined-only $core $views $cli $shim 2>/dev/null |
	awk '$2 ~ /^[TDBRVWG]$/ { print $1, $3 }' | src | sort -k2,2 >"$TMP/defs"
# shellcheck disable=SC2086
nm -A -u $core $views $cli $shim 2>/dev/null | awk '{ print $1, $NF }' | src |
	sort -k2,2 >"$TMP/uses"
# "USER DEFINER SYMBOL" per reference to a symbol of another file
join -1 2 -2 2 -o 1.1,2.1,0 "$TMP/uses" "$TMP/defs" | awk '$1 != $2' | sort -u >"$TMP/refs"

awk '$1 ~ /^analysis\/views\// && $2 ~ /^analysis\/views\// && $3 !~ /^analysis__/ {
	print $1 " -> " $2 ": " $3 }' "$TMP/refs" >"$TMP/views"
rule views "$(wc -l <"$TMP/views")" "$TMP/views"

awk '$1 !~ /^(analysis\/views|cli)\// && $2 ~ /^analysis\/views\// {
	print $1 " -> " $2 ": " $3 }' "$TMP/refs" >"$TMP/core"
rule core "$(wc -l <"$TMP/core")" "$TMP/core"

# ---- circles: files that reach each other (a closure over the file graph)
awk '{ print $1, $2 }' "$TMP/refs" | sort -u >"$TMP/edges"
awk '/<!-- circles -->/ { on = 1; next } /<!-- \/circles -->/ { on = 0 } on && /^ *- / {
	line = ""; s = $0
	while (match(s, /`[a-z0-9_\/]+\.c`/)) {
		f = substr(s, RSTART + 1, RLENGTH - 2); line = line (line == "" ? "" : " ") f
		s = substr(s, RSTART + RLENGTH)
	}
	if (line != "") print line }' docs/DESIGN.md >"$TMP/declared"
awk -v declared="$TMP/declared" '
	{ if (!($1 in id)) { id[$1] = n; name[n++] = $1 }
	  if (!($2 in id)) { id[$2] = n; name[n++] = $2 }
	  r[id[$1], id[$2]] = 1 }
	END {
		for (k = 0; k < n; k++) for (i = 0; i < n; i++) if ((i, k) in r)
			for (j = 0; j < n; j++) if ((k, j) in r) r[i, j] = 1
		while ((getline line < declared) > 0) {
			m = split(line, f, " "); asorti_ok = 1
			key = ""; for (x = 1; x <= m; x++) g[x] = f[x]
			# declared sets compare sorted
			for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++)
				if (g[y] < g[x]) { t = g[x]; g[x] = g[y]; g[y] = t }
			for (x = 1; x <= m; x++) key = key " " g[x]
			ok[key] = 1
		}
		for (i = 0; i < n; i++) {
			if (i in seen || !((i, i) in r)) continue
			m = 0
			for (j = 0; j < n; j++) if ((i, j) in r && (j, i) in r) { seen[j] = 1; g[++m] = name[j] }
			for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++)
				if (g[y] < g[x]) { t = g[x]; g[x] = g[y]; g[y] = t }
			key = ""; for (x = 1; x <= m; x++) key = key " " g[x]
			if (!(key in ok)) print substr(key, 2)
		}
	}' "$TMP/edges" >"$TMP/circles"
rule circles "$(wc -l <"$TMP/circles")" "$TMP/circles"

# ---- the sources --------------------------------------------------------
product="analysis cli kallsyms lib libprof record store symbol trace include"
grep -rnE '\b(realloc|reallocarray)[[:space:]]*\(' --include='*.c' --include='*.h' \
	analysis cli record store symbol trace >"$TMP/realloc"
rule realloc "$(wc -l <"$TMP/realloc")" "$TMP/realloc"

git grep -l '#include "analysis/analysis.h"' -- '*.c' '*.h' >"$TMP/umbrella"
rule umbrella "$(wc -l <"$TMP/umbrella")" "$TMP/umbrella"

# FNV-1a's offset bases and primes (32 and 64 bits), xxh32's primes
grep -rniE '0x811c9dc5|0x01000193|16777619|0xcbf29ce484222325|0x100000001b3|2654435761|0x9e3779b1|2246822519|3266489917|668265263|374761393' \
	--include='*.c' --include='*.h' analysis cli record store symbol trace >"$TMP/strhash"
rule strhash "$(wc -l <"$TMP/strhash")" "$TMP/strhash"

grep -rn 'use_clockid' --include='*.c' record >"$TMP/clock"
rule clock "$(wc -l <"$TMP/clock")" "$TMP/clock"

# a copy names what it copies: "copy of lib/FILE's NAME()"; a test pins
# it when tests/unit/ names both
: >"$TMP/copies"
grep -rhoE 'copy of lib/[a-z_]+\.h.s [a-z_0-9]+\(\)' libprof | sort -u |
	while read -r _ _ _ name; do
		name=${name%()}
		grep -rqw "$name" tests/unit || echo "$name: a copy no test in tests/unit pins"
	done >>"$TMP/copies"
grep -rlE 'the same function|same as lib/' libprof | while read -r f; do
	grep -qE 'copy of lib/' "$f" || echo "$f: says it copies lib/ without naming what (copy of lib/FILE's NAME())"
done >>"$TMP/copies"
rule copies "$(wc -l <"$TMP/copies")" "$TMP/copies"

# functions: a signature at column 0, "{" and "}" alone at column 0 (the
# Linux style .clang-format keeps)
# shellcheck disable=SC2086
awk '/^[A-Za-z_]/ && !/;$/ && !/^(struct|enum|union|typedef)[^(]*$/ { sig = FNR; text = $0 }
	/^\{$/ { start = sig; name = text; sub(/\(.*/, "", name)
		k = split(name, p, /[ *]+/); name = p[k]; in_fn = 1 }
	/^\}/ && in_fn { n = FNR - start + 1; in_fn = 0
		if (n > 150 && !(FILENAME == "symbol/unwind.c" && name == "eval"))
			print FILENAME ": " name "(): " n " lines" }' \
	$(git ls-files -- $product | grep -E '\.c$') >"$TMP/long"
rule long "$(wc -l <"$TMP/long")" "$TMP/long"

fmt=$(sed -n '/^FORMAT_SRCS/,/sort)/p' Makefile)
: >"$TMP/format"
for d in $product; do
	case " $fmt " in *" $d "* | *"	$d "*) ;; *) echo "$d/ is not in FORMAT_SRCS" >>"$TMP/format" ;; esac
done
rule format "$(wc -l <"$TMP/format")" "$TMP/format"

if command -v duplicates >/dev/null 2>&1; then
	duplicates --most 200 --seconds 120 >"$TMP/dup.all" 2>&1
	grep '^D[0-9]' "$TMP/dup.all" | grep -v boilerplate |
		awk '$2 !~ /^(tests|scripts)\// && $4 !~ /^(tests|scripts)\//' >"$TMP/dup"
	rule duplicates "$(wc -l <"$TMP/dup")" "$TMP/dup"
else
	echo "ok - duplicates: skip: the duplicates tool is not installed (a developer's)"
fi
[ "$fail" = 0 ] && echo "house: every rule holds" || echo "house: a rule is broken"
exit "$fail"
