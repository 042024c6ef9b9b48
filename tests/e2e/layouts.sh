#!/usr/bin/env bash
# Layout matrix ("right names on every binary"): one small program, a hot
# leaf without a frame called through a caller with one
# (tests/e2e/layouts/), built in many ELF layouts; each is recorded for 0.5 s
# at 1999 Hz with `d9prof record -p` and must fold to CALLER;LEAF (the caller frame
# right before the leaf, the leaf the innermost user frame) in >= 95% of at
# least 500 samples (a case short of them runs again recording 1 s, then
# 2 s, and so on up to 8 s: a busy machine gives the program less CPU, not other stacks). Expected names come from the unstripped build's symbol
# table (nm -C), offsets from its symbols and program headers (readelf),
# never from hard-coded addresses.
#
#   tests/e2e/layouts.sh                 B=build, d9prof from $B/d9prof
#   D9=/path/to/d9prof tests/e2e/layouts.sh
#   ONLY=REGEX ...                       only the layouts whose names match
#   KEEP=1 ...                           keep the traces (path printed)
#
# Programs are built into $B/layouts/ (in parallel), then recorded one
# after the other. Each case prints one line, "layout NAME: X% caller;leaf
# (N samples)", its reasons below it when it fails, or "layout NAME: skip:
# WHY" when this machine lacks what it needs (lld, cargo, root for
# /usr/lib/debug, perf_event). The cases are t_* tests on lib.sh's runner,
# each through layout(), which records a case short of samples again.
NAME=layouts
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
SRC=$ROOT/tests/e2e/layouts
L=$ROOT/$B/layouts
SECS=0.5	# recorded per layout (~1000 samples at $HZ)
HZ=1999		# twice the default rate: the samples in half the time
SECS_MAX=8	# ... doubled up to this while a case is short of MIN_SAMPLES
MIN_PCT=95	# share of the samples that must fold to CALLER;LEAF
MIN_SAMPLES=500

[ -x "$D9" ] || { say "layouts: no d9prof at $D9 (make first)"; exit 1; }
[ -d "$HOME/.cargo/bin" ] && ! command -v cargo >/dev/null && PATH=$PATH:$HOME/.cargo/bin

# ---- build (in parallel) ------------------------------------------------------
CF=(-O2 -g -fno-omit-frame-pointer -Wall -Wextra -I"$SRC")
C_SRCS=("$SRC/main.c" "$SRC/hot.c")
mkdir -p "$L/full" "$L/debuglink" "$L/buildid" "$L/nodebug"

# a build id of our own per variant: the stripped variants must not find
# each other's debug files by it, nor anything installed on the machine
build_id() { printf 'd9prof-layouts-%s' "$1" | sha1sum | cut -c1-40; }

b_gcc_pie() { gcc "${CF[@]}" -fPIE -pie "${C_SRCS[@]}" -o "$L/gcc_pie"; }
# a function inlined into the leaf
b_inline() {
	gcc "${CF[@]}" -DLAYOUT_INLINE "${C_SRCS[@]}" -o "$L/inline"
}
# the shim linked in, for the ctimer sampler
b_ctimer() {
	gcc "${CF[@]}" -DLAYOUT_SHIM -I"$ROOT/include" "${C_SRCS[@]}" "$ROOT/$B/libd9prof.a" \
		-lpthread -o "$L/ctimer"
}
b_gcc_nopie() { gcc "${CF[@]}" -fno-PIE -no-pie "${C_SRCS[@]}" -o "$L/gcc_nopie"; }
b_clang_lld_pie() {
	clang "${CF[@]}" -fPIE -pie -fuse-ld=lld "${C_SRCS[@]}" -o "$L/clang_lld_pie"
}
b_clang_lld_nopie() {
	clang "${CF[@]}" -fno-PIE -no-pie -fuse-ld=lld "${C_SRCS[@]}" -o "$L/clang_lld_nopie"
}
b_gcc_static() { gcc "${CF[@]}" -static "${C_SRCS[@]}" -o "$L/gcc_static"; }
b_gcc_static_pie() {
	gcc "${CF[@]}" -fPIE -static-pie "${C_SRCS[@]}" -o "$L/gcc_static_pie"
}
b_gxx_templates() { g++ "${CF[@]}" "$SRC/hot.cpp" -o "$L/gxx_templates"; }
# so_LD: layout_caller and layout_leaf in libhot_LD.so, linked by LD
b_so() {
	gcc "${CF[@]}" -fPIC -shared -fuse-ld="$1" "$SRC/hot.c" -o "$L/libhot_$1.so" &&
		gcc "${CF[@]}" "$SRC/main.c" -o "$L/so_$1" -L"$L" -lhot_"$1" \
			-Wl,-rpath,"\$ORIGIN"
}
b_dlopen() {
	gcc "${CF[@]}" -fPIC -shared "$SRC/hot.c" -o "$L/libhot_dl.so" &&
		gcc "${CF[@]}" "$SRC/dl_main.c" -o "$L/dl_main" -ldl
}
# stripped NAME [LD]: $L/full/NAME (unstripped, linked by LD, default
# bfd), $L/full/NAME.debug (its debug info alone) and the stripped copy the
# case places: with a .gnu_debuglink to a debug file next to it, for the
# build-id directory, or with nothing
b_stripped() {
	local n=$1 full=$L/full/$1
	gcc "${CF[@]}" -fPIE -pie -fuse-ld="${2:-bfd}" "${C_SRCS[@]}" \
		-Wl,--build-id=0x"$(build_id "$n")" -o "$full" &&
		objcopy --only-keep-debug "$full" "$full.debug" || return 1
	case $n in
	debuglink)
		cp "$full.debug" "$L/debuglink/layout_debuglink.debug" &&
			strip --strip-all -o "$L/debuglink/layout_debuglink" "$full" &&
			(cd "$L/debuglink" && objcopy --add-gnu-debuglink=layout_debuglink.debug \
				layout_debuglink) ;;
	buildid) strip --strip-all -o "$L/buildid/layout_buildid" "$full" ;;
	nodebug*) strip --strip-all -o "$L/nodebug/layout_$n" "$full" ;;
	esac
}
b_jit() { gcc "${CF[@]}" "$SRC/jit.c" -o "$L/jit"; }
# rust DIR [RUSTFLAGS...]: cargo, offline, frame pointers forced
b_rust() {
	local dir=$1; shift
	RUSTFLAGS="-C force-frame-pointers=yes $*" cargo build --release --offline -q \
		--manifest-path "$SRC/rust/Cargo.toml" --target-dir "$L/$dir"
}

# bg NAME CMD...: build in the background; $L/NAME.ok when it worked,
# the compiler's words in $L/NAME.log
bg() {
	local n=$1; shift
	rm -f "$L/$n.ok"
	{ "$@" >"$L/$n.log" 2>&1 && touch "$L/$n.ok"; } &
}
# built NAME: the build worked, else say why (fails the case)
built() {
	[ -e "$L/$1.ok" ] && return 0
	fail "cannot build: $(grep -m3 -i 'error\|undefined\|cannot\|not found' "$L/$1.log" |
		tr '\n' ' ' | cut -c1-300)"
}

# tools that run (a rustup proxy without a toolchain does not)
HAVE_CLANG=1 HAVE_LLD=1 HAVE_CARGO=1
clang --version >/dev/null 2>&1 || HAVE_CLANG=0
ld.lld --version >/dev/null 2>&1 || HAVE_LLD=0
cargo --version >/dev/null 2>&1 || HAVE_CARGO=0

t0=$(date +%s.%N)
bg gcc_pie b_gcc_pie
bg gcc_nopie b_gcc_nopie
bg ctimer b_ctimer
bg inline b_inline
[ "$HAVE_CLANG$HAVE_LLD" = 11 ] && bg clang_lld_pie b_clang_lld_pie &&
	bg clang_lld_nopie b_clang_lld_nopie
bg gcc_static b_gcc_static
bg gcc_static_pie b_gcc_static_pie
bg gxx_templates b_gxx_templates
bg so_bfd b_so bfd
[ "$HAVE_LLD" = 1 ] && bg so_lld b_so lld
bg dlopen b_dlopen
bg debuglink b_stripped debuglink
bg buildid b_stripped buildid
bg nodebug b_stripped nodebug
[ "$HAVE_LLD" = 1 ] && bg nodebug_lld b_stripped nodebug_lld lld
bg jit b_jit
if [ "$HAVE_CARGO" = 1 ]; then
	# one after the other: cargo takes a lock on the shared package cache
	bg rust 'eval' 'b_rust rust-legacy && b_rust rust-v0 -C symbol-mangling-version=v0'
fi
wait
# the two Rust builds shared one .ok: split it
[ -e "$L/rust.ok" ] && touch "$L/rust_legacy.ok" "$L/rust_v0.ok"
cp "$L/rust.log" "$L/rust_legacy.log" 2>/dev/null
cp "$L/rust.log" "$L/rust_v0.log" 2>/dev/null
say "layouts: built in $(awk -v a="$t0" -v b="$(date +%s.%N)" \
	'BEGIN { printf "%.1f", b - a }') s into $B/layouts"

# ---- recording ----------------------------------------------------------------

# start NAME CMD...: start a layout program, wait for its "ready PID"; PID
start() {
	local out=$TMP/$1.out; shift
	start_ready "$out" "$@" || return 1
	PID=$SPID
}
# stop_now PID: at once (the layout programs spin until killed)
stop_now() { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# record NAME [ARGS]: record $PID (with ARGS) for $SECS s into
# $TMP/NAME.data, stop it, fold
# the trace into $TMP/NAME.folded
record() {
	local n=$1
	shift
	"$D9" record -p "$PID" -F "$HZ" "$@" -d "$SECS" -o "$TMP/$n.data" 2>"$TMP/$n.rec" ||
		fail "record failed: $(tail -3 "$TMP/$n.rec")" || { stop_now "$PID"; return 1; }
	stop_now "$PID"
	fold "$n"
}
fold() {
	"$D9" flame -i "$TMP/$1.data" --format folded >"$TMP/$1.folded" 2>"$TMP/$1.flame" ||
		fail "flame failed: $(cat "$TMP/$1.flame")"
}

# sym FILE ERE: the one defined function of FILE whose demangled name
# (nm -C, a Rust "::h<hash>" dropped) matches ERE
sym() {
	local names n
	names=$(nm -C --defined-only "$1" 2>/dev/null | sed -nE 's/^[0-9a-f]+ [tTwW] //p' |
		sed -E 's/::h[0-9a-f]{16}$//' | grep -E -- "$2" | sort -u)
	n=$(grep -c . <<<"$names")
	[ "$n" = 1 ] || {
		say "    no single function /$2/ in $1: $n of them ${names//$'\n'/, }" >&2
		return 1
	}
	printf '%s\n' "$names"
}

# AWK: hex("1f") = 31; is(FRAME, M): FRAME is M, where M is a name or
# "@MODULE@LO@HI", any "MODULE+0xOFF" with LO <= OFF < HI (decimal)
AWK_LIB='
function hex(s,   i, c, v) {
	v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (!c) return -1
		v = v * 16 + c - 1
	}
	return v
}
function is(fr, m,   p, o) {
	if (substr(m, 1, 1) != "@") return fr == m
	split(m, p, "@")
	if (substr(fr, 1, length(p[2]) + 3) != p[2] "+0x") return 0
	o = hex(substr(fr, length(p[2]) + 4))
	return o >= p[3] + 0 && o < p[4] + 0
}
# user(LINE): the user frames of a folded line into u[1..m], returns m;
# the root frame ([no poll] or the task) and kernel frames left out
# (and inline frames, "NAME [inlined]", unless keep_inl is set: the
# out-of-line functions are what each layout is about)
function user(line,   f, k, i, m) {
	sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
	m = 0
	for (i = 2; i <= k; i++)
		if (f[i] !~ /_\[k\]$/ && (keep_inl || f[i] !~ / \[inlined\]$/)) u[++m] = f[i]
	return m
}'

# shown M: a matcher as people read it ("MODULE+[0xLO,0xHI)" for a range)
shown() {
	local m=$1 mod lo hi
	[ "${m:0:1}" = @ ] || { printf '%s' "$m"; return; }
	IFS=@ read -r _ mod lo hi <<<"$m"
	printf '%s+[0x%x,0x%x)' "$mod" "$lo" "$hi"
}

# score NAME CALLER LEAF: the layout line; 0 when >= MIN_PCT% of at least
# MIN_SAMPLES samples end their user frames in CALLER;LEAF (names or
# "@MODULE@LO@HI" matchers, see is()), 3 when there are fewer samples (the
# runner records the case again, longer), else 1; inline frames count only
# when LEAF is one
score() {
	local f=$TMP/$1.folded tot hit pct keep=0
	[[ $3 == *" [inlined]" ]] && keep=1
	read -r tot hit < <(awk -v c="$2" -v l="$3" -v keep_inl=$keep "$AWK_LIB"'
		{ n = $NF; tot += n; m = user($0)
		  if (m >= 2 && is(u[m - 1], c) && is(u[m], l)) hit += n }
		END { print tot + 0, hit + 0 }' "$f")
	pct=$(awk -v h="$hit" -v t="$tot" 'BEGIN { printf "%.1f", t ? 100 * h / t : 0 }')
	say "layout $1: $pct% caller;leaf ($tot samples)"
	local r=0
	[ "$tot" -ge "$MIN_SAMPLES" ] ||
		{ fail "fewer than $MIN_SAMPLES samples in $SECS s: too few to judge"; return 3; }
	awk -v h="$hit" -v t="$tot" -v p="$MIN_PCT" 'BEGIN { exit !(h * 100 >= p * t) }' ||
		{ fail "want >= $MIN_PCT% ending in $(shown "$2");$(shown "$3")"; r=1; }
	if [ "$r" != 0 ]; then
		# what they end in instead: the last three user frames, heaviest first
		awk -v keep_inl=1 "$AWK_LIB"'{ n = $NF; m = user($0); s = ""
			for (i = (m > 3 ? m - 2 : 1); i <= m; i++) s = s (s == "" ? "" : ";") u[i]
			w[s] += n; tot += n }
			END { for (s in w) printf "%d %.1f%% ...;%s\n", w[s], 100 * w[s] / tot, s }' "$f" |
			sort -nr | head -3 | cut -d' ' -f2- | cut -c1-200 | sed 's/^/    instead: /'
	fi
	return $r
}

# names FILE CALLER_ERE LEAF_ERE: "CALLER|LEAF" from FILE's symbol table
names() {
	local c l
	c=$(sym "$1" "$2") && l=$(sym "$1" "$3") || return 1
	printf '%s|%s\n' "$c" "$l"
}

# plain NAME BIN [LIB]: the C program; names from LIB (the .so holding
# them) or BIN itself
plain() {
	local n=$1 bin=$2 lib=${3:-$2} cl
	built "$n" || return 1
	cl=$(names "$lib" '^layout_caller$' '^layout_leaf$') || return 1
	start "$n" "$bin" || return 1
	record "$n" || return 1
	score "$n" "${cl%%|*}" "${cl#*|}"
}

# ---- cases --------------------------------------------------------------------

need_lld() {
	[ "$HAVE_LLD" = 1 ] || { say "layout $1: skip: no ld.lld (apt-get install lld)"; return 2; }
}
need_clang() {
	[ "$HAVE_CLANG" = 1 ] || { say "layout $1: skip: no clang (apt-get install clang)"; return 2; }
}

t_gcc_pie() { plain gcc_pie "$L/gcc_pie"; }
t_gcc_nopie() { plain gcc_nopie "$L/gcc_nopie"; }
t_clang_lld_pie() { need_clang clang_lld_pie && need_lld clang_lld_pie || return
	plain clang_lld_pie "$L/clang_lld_pie"; }
t_clang_lld_nopie() { need_clang clang_lld_nopie && need_lld clang_lld_nopie || return
	plain clang_lld_nopie "$L/clang_lld_nopie"; }
t_gcc_static() {
	[ -e "$L/gcc_static.ok" ] || ! grep -q "cannot find -lc" "$L/gcc_static.log" ||
		{ say "layout gcc_static: skip: no static libc (libc6-dev's libc.a)"; return 2; }
	plain gcc_static "$L/gcc_static"
}
t_gcc_static_pie() {
	[ -e "$L/gcc_static_pie.ok" ] || {
		say "layout gcc_static_pie: skip: does not link here: $(grep -m1 . "$L/gcc_static_pie.log")"
		return 2
	}
	plain gcc_static_pie "$L/gcc_static_pie"
}
# DWARF inline scopes: the leaf's samples end in "layout_round [inlined]"
# above the leaf (most of them: not the leaf's own loop control), and
# with --no-inline the stacks are caller;leaf as everywhere else
t_inline_frames() {
	local n=inline_frames cl
	built inline || return 1
	cl=$(names "$L/inline" '^layout_caller$' '^layout_leaf$') || return 1
	objdump -d --disassemble=layout_round "$L/inline" | grep -q '>:$' &&
		{ fail "layout_round was not inlined"; return 1; }
	start $n "$L/inline" || return 1
	record $n || return 1
	MIN_PCT=60 score $n "${cl#*|}" "layout_round [inlined]" || return
	"$D9" flame -i "$TMP/$n.data" --format folded --no-inline >"$TMP/$n.folded" ||
		fail "flame --no-inline failed" || return 1
	! grep -q '\[inlined\]' "$TMP/$n.folded" || fail "--no-inline shows inlined frames" ||
		return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

# the in-process sampler (where perf_event is refused): the signal handler
# copies the top of the stack for the recorder's CFI step
t_ctimer_sampler() {
	local n=ctimer cl
	built ctimer || return 1
	cl=$(names "$L/ctimer" '^layout_caller$' '^layout_leaf$') || return 1
	start ctimer_sampler "$L/ctimer" || return 1
	record ctimer_sampler --sampler ctimer || return 1
	score ctimer_sampler "${cl%%|*}" "${cl#*|}"
}
t_gxx_templates() {
	local n=gxx_templates cl
	built "$n" || return 1
	cl=$(names "$L/$n" '^[^(]* ns::caller<' '^[^(]* ns::Hasher<.*>::leaf<') || return 1
	start $n "$L/$n" || return 1
	record $n || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}
t_so_bfd() { plain so_bfd "$L/so_bfd" "$L/libhot_bfd.so"; }
t_so_lld() { need_lld so_lld || return; plain so_lld "$L/so_lld" "$L/libhot_lld.so"; }

# the library is loaded 0.5 s after the recorder has started sampling
t_dlopen_during_recording() {
	local n=dlopen_during_recording cl rpid
	built dlopen || return 1
	cl=$(names "$L/libhot_dl.so" '^layout_caller$' '^layout_leaf$') || return 1
	start $n "$L/dl_main" "$L/libhot_dl.so" || return 1
	grep -q libhot_dl "/proc/$PID/maps" && fail "the library is loaded already" && return 1
	# half a second more than the others: the library comes 0.5 s in
	"$D9" record -p "$PID" -F "$HZ" -d "$(awk -v s="$SECS" 'BEGIN { print s + 0.5 }')" \
		-o "$TMP/$n.data" 2>"$TMP/$n.rec" &
	rpid=$!
	PIDS+=("$rpid")
	wait_for "$TMP/$n.rec" "d9prof: sampling" 5
	sleep 0.5
	kill -USR1 "$PID"
	wait "$rpid" || fail "record failed: $(tail -3 "$TMP/$n.rec")" || { stop_now "$PID"; return 1; }
	grep -q '^loaded' "$TMP/$n.out" ||
		fail "dl_main did not load the library: $(cat "$TMP/$n.out.err")" || return 1
	stop_now "$PID"
	fold $n || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

t_stripped_debuglink() {
	local n=stripped_debuglink cl
	built debuglink || return 1
	cl=$(names "$L/full/debuglink" '^layout_caller$' '^layout_leaf$') || return 1
	[ -z "$(nm "$L/debuglink/layout_debuglink" 2>/dev/null)" ] ||
		fail "layout_debuglink has symbols" || return 1
	start $n "$L/debuglink/layout_debuglink" || return 1
	record $n || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

t_stripped_build_id_dir() {
	local n=stripped_build_id_dir cl id dir=/usr/lib/debug/.build-id
	built buildid || return 1
	cl=$(names "$L/full/buildid" '^layout_caller$' '^layout_leaf$') || return 1
	id=$(build_id buildid)
	local sub=$dir/${id:0:2} dbg=$dir/${id:0:2}/${id:2}.debug made=0
	[ -d "$sub" ] || made=1
	if ! { mkdir -p "$sub" 2>/dev/null && [ -w "$sub" ]; }; then
		say "layout $n: skip: cannot write $sub (needs root)"
		return 2
	fi
	CLEAN_FILES+=("$dbg")
	cp "$L/full/buildid.debug" "$dbg" || fail "cannot write $dbg" || return 1
	start $n "$L/buildid/layout_buildid" && record $n
	local r=$?
	rm -f "$dbg"
	[ "$made" = 0 ] || rmdir "$sub" 2>/dev/null
	[ "$r" = 0 ] || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

# frange FULL STRIPPED FUNC: "LO HI", the file offsets of FUNC's bytes,
# from FULL's symbol and program headers (the stripped copy must have the
# same PT_LOADs, so the same offsets)
frange() {
	local v sz
	read -r v sz < <(nm -S --defined-only "$1" | awk -v f="$3" '$4 == f { print $1, $2 }')
	[ -n "$v" ] || { say "    no $3 in $1" >&2; return 1; }
	[ "$(readelf -lW "$1" | grep LOAD)" = "$(readelf -lW "$2" | grep LOAD)" ] ||
		{ say "    $2 has other PT_LOADs than $1" >&2; return 1; }
	readelf -lW "$1" | awk -v v=$((16#$v)) -v sz=$((16#$sz)) "$AWK_LIB"'
		$1 == "LOAD" { off = hex($2); va = hex($3); fsz = hex($5)
			if (v >= va && v < va + fsz) { print off + v - va, off + v - va + sz; exit } }'
}

# nodebug CASE BUILD: no symbols, no debug file: caller and leaf named by
# file offset, and no user frame anywhere named after one of the program's
# own functions
nodebug() {
	local n=$1 full=$L/full/$2 bin=$L/nodebug/layout_$2 mod=layout_$2
	local c l wrong r=0
	built "$2" || return 1
	c=$(frange "$full" "$bin" layout_caller) && l=$(frange "$full" "$bin" layout_leaf) ||
		return 1
	start "$n" "$bin" || return 1
	record "$n" || return 1
	score "$n" "@$mod@${c// /@}" "@$mod@${l// /@}" || r=$?
	# names only the unstripped build knows (its .dynsym exports stay)
	nm --defined-only "$full" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$TMP/$n.own"
	nm -D --defined-only "$bin" 2>/dev/null | awk '{ print $3 }' | sort -u >"$TMP/$n.dyn"
	comm -23 "$TMP/$n.own" "$TMP/$n.dyn" >"$TMP/$n.wrong"
	wrong=$(awk "$AWK_LIB"'NR == FNR { bad[$1] = 1; next }
		{ n = $NF; m = user($0); for (i = 1; i <= m; i++) if (u[i] in bad) { w[u[i]] += n } }
		END { for (x in w) printf "%s (%d samples) ", x, w[x] }' "$TMP/$n.wrong" \
		"$TMP/$n.folded")
	[ -z "$wrong" ] || { fail "user frames named from symbols the binary no longer has: $wrong"; r=1; }
	return $r
}
# bfd PIE: file offsets equal link-time addresses; lld PIE: they do not
# (lld shares a page between the read-only and the executable segment)
t_stripped_no_debug() { nodebug stripped_no_debug nodebug; }
t_stripped_no_debug_lld() {
	need_lld stripped_no_debug_lld || return
	nodebug stripped_no_debug_lld nodebug_lld
}

t_deleted_binary() {
	local n=deleted_binary cl
	built gcc_pie || return 1
	cl=$(names "$L/gcc_pie" '^layout_caller$' '^layout_leaf$') || return 1
	mkdir -p "$TMP/del" && cp "$L/gcc_pie" "$TMP/del/layout_deleted" || return 1
	start $n "$TMP/del/layout_deleted" || return 1
	rm "$TMP/del/layout_deleted"
	readlink "/proc/$PID/exe" | grep -q '(deleted)' || fail "exe not deleted" || return 1
	record $n || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

# the path now names another program (a new inode): the mapped file is the
# one to read, through /proc/PID/map_files, not the one on disk
t_replaced_binary() {
	local n=replaced_binary cl
	built gcc_pie && built gxx_templates || return 1
	cl=$(names "$L/gcc_pie" '^layout_caller$' '^layout_leaf$') || return 1
	mkdir -p "$TMP/rep" && cp "$L/gcc_pie" "$TMP/rep/layout_replaced" || return 1
	start $n "$TMP/rep/layout_replaced" || return 1
	cp "$L/gxx_templates" "$TMP/rep/new" && mv "$TMP/rep/new" "$TMP/rep/layout_replaced" ||
		return 1
	record $n || return 1
	score $n "${cl%%|*}" "${cl#*|}"
}

t_perf_map_jit() {
	local n=perf_map_jit c l map
	built jit || return 1
	c=$(sym "$L/jit" '^jit_caller$') || return 1
	start $n "$L/jit" || return 1
	map=/tmp/perf-$PID.map
	CLEAN_FILES+=("$map")
	l=$(awk 'NR == 1 { print $3 }' "$map")
	[ -n "$l" ] || fail "no $map" || return 1
	record $n || return 1
	rm -f "$map"
	score $n "$c" "$l"
}

rust() {
	local n=$1 bin=$L/$2/release/layout_rs cl
	[ "$HAVE_CARGO" = 1 ] || { say "layout $n: skip: no working cargo on PATH (rustup.rs)"; return 2; }
	built "$n" || return 1
	cl=$(names "$bin" '^layout_rs::hot::caller$' '^layout_rs::hot::leaf$') || return 1
	start "$n" "$bin" || return 1
	record "$n" || return 1
	score "$n" "${cl%%|*}" "${cl#*|}"
}
t_rust_legacy() { rust rust_legacy rust-legacy; }
t_rust_v0() { rust rust_v0 rust-v0; }

# sanity: the leaf of the plain gcc build really has no frame setup (else
# this matrix would not test the frameless-leaf path at all)
leaf_is_frameless() {
	built gcc_pie || return 1
	! objdump -d --disassemble=layout_leaf "$L/gcc_pie" | grep -q 'push *%rbp' ||
		fail "gcc emitted a frame in layout_leaf: the frameless case is not tested"
}

# ---- runner -------------------------------------------------------------------

# layout T: the case T with its layout line; a case short of MIN_SAMPLES
# (3) runs again whole, recording twice as long, up to SECS_MAX
layout() {
	local c=${1#t_} rc secs=$SECS
	if ! need_perf >/dev/null; then
		say "layout $c: skip: $PERF_WHY"
		return 2
	fi
	: >"$TMP/case.all"
	while "$1" >"$TMP/case.out" 2>&1; rc=$?; cat "$TMP/case.out" >>"$TMP/case.all"
		[ "$rc" = 3 ]; do
		e2e_kill_started
		awk -v s="$SECS" -v m="$SECS_MAX" 'BEGIN { exit !(s * 2 <= m) }' || break
		SECS=$(awk -v s="$SECS" 'BEGIN { print s * 2 }')
		say "    again, recording $SECS s" >>"$TMP/case.all"
	done
	SECS=$secs
	[ "$rc" = 3 ] && rc=1 && say "    still too few at $SECS_MAX s: FAIL" >>"$TMP/case.all"
	# a case that failed before its layout line still gets one
	grep -q "^layout $c:" "$TMP/case.all" || say "layout $c: FAIL"
	cat "$TMP/case.all"
	return "$rc"
}

leaf_is_frameless || fail=$((fail + 1))
E2E_WRAP=layout
e2e_run_tests t_gcc_pie t_gcc_nopie t_ctimer_sampler t_inline_frames t_clang_lld_pie \
	t_clang_lld_nopie t_gcc_static t_gcc_static_pie t_gxx_templates t_so_bfd t_so_lld \
	t_dlopen_during_recording t_stripped_debuglink t_stripped_build_id_dir \
	t_stripped_no_debug t_stripped_no_debug_lld t_deleted_binary t_replaced_binary \
	t_perf_map_jit t_rust_legacy t_rust_v0
