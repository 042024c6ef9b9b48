#!/usr/bin/env bash
# The flamegraph SVG in a real browser: headless Chromium opens the graphs
# tests/e2e/svg/gen writes (2,000 tasks, a long C++ name, a long C name) at
# two window widths, after the script in the SVG ran, and checks that
#  - the graph is as wide as the window (the width the script measured, and
#    the root frame's pixels in a screenshot, from margin to margin);
#  - the long C++ frame's text keeps "method", cut in the middle at 800 px
#    and longer at 1920 px; the long C name is cut on the right;
#  - no frame's text is wider than its frame (measured by the browser);
#  - search: "METHOD" matches nothing, then with "ignore case" the C++
#    frame; zooming on that frame gives it the whole width and its full name;
#  - the icicle/off-CPU style draws the root at the top, in blues;
#  - a subtitle longer than a line (off-CPU's, with its filter and losses)
#    is in lines a 1400 px window shows whole, and reads as it was.
#
#   tests/e2e/svg.sh            B=build; gen from $B/e2e/svg/gen
#   CHROMIUM=/path/to/chrome tests/e2e/svg.sh
#
# Output (SVGs, DOM dumps, screenshots) stays in $B/e2e/svg/out. Skips,
# exit 0, without Chromium or python3 (which reads the screenshots).
#
# On lib.sh's harness, not its runner: the checks are the python3 below,
# one "ok - ..." or "not ok - ..." line each, counted in the summary.
NAME=svg
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
GEN=$ROOT/$B/e2e/svg/gen
OUT=$ROOT/$B/e2e/svg/out
WIDTHS="1920 1400 800"

CHROMIUM=${CHROMIUM:-}
if [ -z "$CHROMIUM" ]; then
	for c in chromium chromium-browser google-chrome; do
		command -v "$c" >/dev/null 2>&1 && { CHROMIUM=$c; break; }
	done
fi
[ -n "$CHROMIUM" ] || e2e_skip_all "no chromium on PATH (apt-get install chromium)"
command -v python3 >/dev/null 2>&1 || e2e_skip_all "no python3 to read the screenshots"
if [ ! -x "$GEN" ]; then
	say "svg: $GEN is missing: make $B/e2e/svg/gen"
	exit 1
fi

rm -rf "$OUT"
mkdir -p "$OUT"
PROFILE=$TMP

"$GEN" "$OUT" || { say "not ok - gen failed"; exit 1; }

# browser WIDTH ARGS...: headless Chromium, a WIDTH x 400 window (a
# profile of its own per width: the widths are drawn at once)
browser() {
	local w=$1; shift
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --no-first-run --disable-dev-shm-usage \
		--user-data-dir="$PROFILE/chromium-$w" --window-size="$w,400" "$@" \
		2>>"$OUT/chromium-$w.log"
}

# A copy of the graph whose init() goes on, once the SVG's own script has
# laid it out, to measure text against frames, search and zoom, and leaves
# what it saw in the root's data-probe attribute.
probe_svg() {
	sed 's|</svg>$||' "$OUT/cpu.svg"
	cat <<'EOF'
<script type="text/ecmascript"><![CDATA[
var init0 = init;
init = function (evt) {
	init0(evt);
	var gs = frames.children, px = svg.getBoundingClientRect().width / 100;
	var over = 0, cxx = null, r = [], i;
	for (i = 0; i < gs.length; i++) {
		var t = gs[i].querySelector("text"), rect = gs[i].querySelector("rect");
		if (label_of(gs[i]).indexOf("ns::detail::Type<std::vector<int>") === 0) cxx = gs[i];
		if (t && t.textContent &&
		    t.getComputedTextLength() > parseFloat(rect.getAttribute("width")) * px - 3 + 0.5)
			over++;
	}
	r.push("overflow=" + over);
	var st = document.getElementById("subtitle"), bb = st.getBBox();
	r.push("sub=" + Math.floor(bb.x) + "," + Math.ceil(bb.x + bb.width) + "," +
	       st.children.length + "," + st.textContent);
	search("METHOD");
	r.push("case=" + matched.nodeValue);
	toggle_case();
	r.push("icase=" + matched.nodeValue);
	r.push("button=" + casebtn.textContent);
	if (cxx) {
		zoom(cxx);
		r.push("zoomed=" + cxx.querySelector("rect").getAttribute("width"));
		r.push("zoomtext=" + cxx.querySelector("text").textContent);
	}
	svg.setAttribute("data-probe", r.join("|"));
};
]]></script>
</svg>
EOF
}
probe_svg >"$OUT/probe.svg"

# the widths at once, each its four pages one after the other
BPIDS=()
for w in $WIDTHS; do
	(browser "$w" --dump-dom "file://$OUT/cpu.svg" >"$OUT/cpu-$w.dom"
	browser "$w" --dump-dom "file://$OUT/probe.svg" >"$OUT/probe-$w.dom"
	browser "$w" --screenshot="$OUT/cpu-$w.png" "file://$OUT/cpu.svg" >/dev/null
	browser "$w" --screenshot="$OUT/icicle-$w.png" "file://$OUT/icicle.svg" >/dev/null) &
	BPIDS+=($!)
	PIDS+=($!)
done
for p in "${BPIDS[@]}"; do wait "$p"; done

# The checks, one line each: "ok - ..." or "not ok - ..." with the reason.
python3 - "$OUT" $WIDTHS <<'EOF' | tee "$OUT/result.txt"
import html, re, struct, sys, zlib

out, widths = sys.argv[1], [int(w) for w in sys.argv[2:]]
CXX = "ns::detail::Type<std::vector<int>, Alloc>::method(int, char const*)"
CNAME = "a_very_long_c_function_name_that_is_cut_on_the_right"
LONG_SUB = ("microseconds off-CPU, stacks at switch-out: 2.09s in 704 intervals (76.8ms "
            "waiting for a CPU, marked [runqueue: holder], charged to what ran by time); "
            "polls >= 1.00ms; span slow_route, its enters longer than 10.0ms; lost: 4 "
            "switch-ins the kernel did not report, 5 off-CPU stacks cut short (unwind "
            "failed); tests/e2e/svg.sh")
failed = 0

def check(ok, what, why=""):
    global failed
    print(("ok - " if ok else "not ok - ") + what + ("" if ok or not why else ": " + why))
    failed += not ok

def png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB(A) PNG"""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    i, idat = 8, b""
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG format"
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows

def frames(dom):
    """(title, text or None, rect attributes) of every frame"""
    res = []
    for g in re.findall(r'<g class="f[^"]*"[^>]*>(.*?)</g>', dom):
        title = html.unescape(re.search(r"<title>(.*?)</title>", g).group(1))
        rect = dict(re.findall(r'(\w+)="([^"]*)"', re.search(r"<rect ([^>]*)>", g).group(1)))
        t = re.search(r"<text[^>]*>(.*?)</text>", g)
        res.append((title, html.unescape(t.group(1)) if t else None, rect))
    return res

def root_span(rows, colour, y):
    """first and last column of row y within 3 of colour"""
    xs = [x for x, p in enumerate(rows[y]) if all(abs(p[k] - colour[k]) <= 3 for k in range(3))]
    return (xs[0], xs[-1]) if xs else (None, None)

def width(w):
    dom = open(f"{out}/cpu-{w}.dom").read()
    m = re.search(r'<svg[^>]*data-width="(\d+)"', dom)
    check(m and abs(int(m.group(1)) - w) <= 20, f"{w} px: the script laid out for the window",
          "data-width " + (m.group(1) if m else "missing: the script did not run"))
    fr = frames(dom)
    cxx = [t for title, t, _ in fr if title.startswith(CXX + " (")]
    cn = [t for title, t, _ in fr if title.startswith(CNAME + " (")]
    check(len(cxx) == 1 and cxx[0] and "method" in cxx[0] and cxx[0].startswith("ns::"),
          f"{w} px: the C++ frame shows its start and method: {cxx[0] if cxx else None!r}")
    check(len(cn) == 1 and cn[0] and cn[0].startswith("a_very") and
          (cn[0] == CNAME or cn[0].endswith("..")),
          f"{w} px: the C frame is cut on the right: {cn[0] if cn else None!r}")
    check(any(title.startswith(tuple("0123456789")) and " small frames, " in title
              for title, _, _ in fr), f"{w} px: small frames are merged into one")
    texts[w] = cxx[0] if cxx else ""

    probe = re.search(r'data-probe="([^"]*)"', open(f"{out}/probe-{w}.dom").read())
    p = dict(kv.split("=", 1) for kv in html.unescape(probe.group(1)).split("|")) if probe else {}
    check(p.get("overflow") == "0", f"{w} px: every frame's text fits its frame",
          f"{p.get('overflow')} overflow" if p else "no probe result")
    check(p.get("case") == "Matched: 0.0%", f"{w} px: search is case-sensitive by default",
          repr(p.get("case")))
    im = re.match(r"Matched: ([\d.]+)%", p.get("icase", ""))
    check(im and float(im.group(1)) > 20 and p.get("button", "").startswith("[x]"),
          f"{w} px: 'ignore case' finds METHOD: {p.get('icase')!r}")
    sub = p.get("sub", ",,,").split(",", 3)
    if w >= 1400:
        check(sub[0] != "" and int(sub[0]) >= 0 and int(sub[1]) <= w and int(sub[2]) >= 2
              and sub[3] == LONG_SUB,
              f"{w} px: the long subtitle is in {sub[2]} lines, all of it in "
              f"columns {sub[0]}..{sub[1]}", repr(sub[3][:60]))
    check(p.get("zoomed") == "98.3333%" and p.get("zoomtext") == CXX,
          f"{w} px: a zoomed frame fills the width with its full name",
          f"{p.get('zoomed')!r} {p.get('zoomtext')!r}")

    # the root frame "all" (225,205,160) spans the window, less 0.83% margins
    h = int(re.search(r'<svg[^>]*height="(\d+)"', dom).group(1))
    pw, ph, rows = png(f"{out}/cpu-{w}.png")
    lo, hi = root_span(rows, (225, 205, 160), h - 34 - 16 + 4)
    check(pw == w and lo is not None and lo <= w * 0.0083 + 3 and hi >= w * (1 - 0.0083) - 4,
          f"{w} px: the root frame spans the window: columns {lo}..{hi} of {pw}")
    # icicle: the root row right under the subtitle (ytop 60), frames in blues
    pw, ph, rows = png(f"{out}/icicle-{w}.png")
    lo, hi = root_span(rows, (225, 205, 160), 60 + 4)
    blue = sum(1 for p in rows[60 + 16 + 4] if p[2] > p[0] + 40 and p[2] > p[1] + 20)
    check(lo is not None and hi >= w * (1 - 0.0083) - 4 and blue > w // 4,
          f"{w} px: the icicle has its root on top and blue frames below",
          f"root {lo}..{hi}, {blue} blue pixels")

texts = {}
for w in widths:
    try:
        width(w)
    except Exception as e:  # a missing file or element: say so, go on
        check(False, f"{w} px: the checks ran", f"{type(e).__name__}: {e}")

a, b = texts.get(widths[0], ""), texts.get(widths[-1], "")
check(len(a) > len(b) and ".." in b, f"the C++ text follows the width: {a!r} vs {b!r}")
sys.exit(1 if failed else 0)
EOF
rc=${PIPESTATUS[0]}
pass=$(grep -c '^ok - ' "$OUT/result.txt")
fail=$(grep -c '^not ok - ' "$OUT/result.txt")
[ "$rc" = 0 ] || [ "$fail" != 0 ] || { say "not ok - the checks ran to the end"; fail=1; }
say "svg: screenshots in $OUT"
e2e_summary
