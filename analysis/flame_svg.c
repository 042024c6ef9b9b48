/* SPDX-License-Identifier: MIT */
/*
 * flame_svg.c - a self-contained interactive flamegraph SVG.
 *
 * In the spirit of flamegraph.pl and inferno: frames bottom-up, siblings in
 * alphabetical order, hover details, click to zoom, regex search with the
 * matched share, all in inline CSS and script so the file can be mailed or
 * attached to a ticket and opened anywhere.
 *
 * Each frame is <g class="f" data-s data-n data-d> holding <title>, <rect>
 * and <text>, with its start and width in weight units and its depth; the
 * script lays frames out again from those when zooming.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

#define IMG_W	    1200
#define XPAD	    10
#define FRAME_W	    (IMG_W - 2 * XPAD)
#define FRAME_H	    16
#define FONT	    12
#define CHAR_W	    (FONT * 0.59) /* average Verdana advance */
#define MIN_PX	    0.1		  /* narrower frames are left out */
#define YPAD_TOP    40
#define YPAD_SUB    20
#define YPAD_BOTTOM 34

/* Length of the valid UTF-8 character (and legal XML 1.0 character) at @s,
 * or 0 if there is none. */
static size_t xml_char(const unsigned char *s)
{
	uint32_t cp;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r';
	if (s[0] < 0xc2)
		return 0;
	if (s[0] < 0xe0)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] < 0xf0) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		cp = (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
		if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp >= 0xfffe)
			return 0;
		return 3;
	}
	if (s[0] < 0xf5) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		cp = (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
		     (s[3] & 0x3fu);
		return cp >= 0x10000 && cp <= 0x10ffff ? 4 : 0;
	}
	return 0;
}

/* Characters in @s as xml_put() writes them. */
static size_t xml_nchars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, l;

	while (*p) {
		l = xml_char(p);
		p += l ? l : 1;
		n++;
	}
	return n;
}

/* Write at most @max characters of @s, escaped; what is not valid UTF-8 or
 * not allowed in XML becomes '?', so any label makes a well-formed file. */
static void xml_put(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t l;

	for (; *p && max; max--) {
		l = xml_char(p);
		if (!l) {
			putc('?', out);
			p++;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fwrite(p, 1, l, out);
		}
		p += l;
	}
}

/* The label cut to what fits in @w px, the same rule as fit() in the
 * script: nothing under 3 characters, else cut with "..". */
static void put_fitted(FILE *out, const char *s, double w)
{
	double fit = (w - 6) / CHAR_W;
	size_t max, n;

	if (fit < 3)
		return;
	max = (size_t)fit;
	n = xml_nchars(s);
	if (n <= max) {
		xml_put(out, s, n);
	} else {
		xml_put(out, s, max - 2);
		fputs("..", out);
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/* A colour from the name, so a function keeps its colour across graphs:
 * warm for user code, aqua for the kernel, lavender for task roots, grey
 * for samples outside polls and parked time, pink for "[preempted]". */
static void frame_colour(const char *label, int depth, int task_roots, int rgb[3])
{
	uint32_t h = 2166136261u;
	double v1, v2, v3;

	for (const char *p = label; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 16777619u;
	}
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	v1 = (h & 0xff) / 255.0;
	v2 = ((h >> 8) & 0xff) / 255.0;
	v3 = ((h >> 16) & 0xff) / 255.0;

	if (depth == 0) {
		rgb[0] = 225, rgb[1] = 205, rgb[2] = 160;
	} else if (task_roots && depth == 1 &&
		   (!strcmp(label, "[no poll]") || !strcmp(label, "[idle]"))) {
		rgb[0] = rgb[1] = rgb[2] = 185 + (int)(20 * v1);
	} else if (!strcmp(label, "[preempted]")) {
		/* off-CPU graphs: runnable, not blocked */
		rgb[0] = 235, rgb[1] = 150, rgb[2] = 150;
	} else if (task_roots && depth == 1) {
		rgb[0] = 160 + (int)(40 * v1);
		rgb[1] = 135 + (int)(40 * v1);
		rgb[2] = 215 + (int)(40 * v2);
	} else if (ends_with(label, "_[k]")) {
		rgb[0] = 50 + (int)(60 * v1);
		rgb[1] = 165 + (int)(55 * v2);
		rgb[2] = 165 + (int)(55 * v2);
	} else {
		rgb[0] = 205 + (int)(50 * v3);
		rgb[1] = (int)(230 * v1);
		rgb[2] = (int)(55 * v2);
	}
}

struct kid {
	const char *label;
	uint32_t parent;
	uint32_t node;
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	c = strcmp(x->label, y->label);
	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static const char svg_style[] =
    "<style type=\"text/css\">\n"
    "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
    "#title { text-anchor: middle; font-size: 17px; }\n"
    "#subtitle { text-anchor: middle; fill: rgb(110,110,110); }\n"
    "#search, #unzoom { cursor: pointer; }\n"
    "#search { opacity: 0.3; }\n"
    "#search:hover, #search.show { opacity: 1; }\n"
    "#matched { text-anchor: end; }\n"
    ".f text { pointer-events: none; }\n"
    ".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
    ".f { cursor: pointer; }\n"
    ".hide { display: none; }\n"
    ".parent { opacity: 0.5; }\n"
    "</style>\n";

/* Only numbers are spliced into the script: labels live in the titles. */
static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "\"use strict\";\n"
    "var FW = %d, XPAD = %d, CW = %.2f;\n"
    "var frames, details, matched, searchbtn, unzoombtn, total, searching = false;\n"
    "function init(evt) {\n"
    "\tframes = document.getElementById(\"frames\");\n"
    "\tdetails = document.getElementById(\"details\").firstChild;\n"
    "\tmatched = document.getElementById(\"matched\").firstChild;\n"
    "\tsearchbtn = document.getElementById(\"search\");\n"
    "\tunzoombtn = document.getElementById(\"unzoom\");\n"
    "\ttotal = +frames.getAttribute(\"data-total\");\n"
    "\tframes.addEventListener(\"click\", function (e) {\n"
    "\t\tvar g = frame_of(e.target);\n"
    "\t\tif (g) zoom(g);\n"
    "\t});\n"
    "\tframes.addEventListener(\"mouseover\", function (e) {\n"
    "\t\tvar g = frame_of(e.target);\n"
    "\t\tif (g) details.nodeValue = \"Function: \" + "
    "g.querySelector(\"title\").textContent;\n"
    "\t});\n"
    "\tframes.addEventListener(\"mouseout\", function () { details.nodeValue = \" \"; "
    "});\n"
    "\tsearchbtn.addEventListener(\"click\", search_prompt);\n"
    "\tunzoombtn.addEventListener(\"click\", unzoom);\n"
    "\twindow.addEventListener(\"keydown\", function (e) {\n"
    "\t\tif (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
    "\t\t\te.preventDefault();\n"
    "\t\t\tsearch_prompt();\n"
    "\t\t} else if (e.keyCode === 27) {\n"
    "\t\t\treset_search();\n"
    "\t\t}\n"
    "\t});\n"
    "}\n"
    "function frame_of(n) {\n"
    "\tfor (; n && n !== frames; n = n.parentNode)\n"
    "\t\tif (n.parentNode === frames) return n;\n"
    "\treturn null;\n"
    "}\n"
    "function num(g, a) { return +g.getAttribute(a); }\n"
    "function label_of(g) {\n"
    "\tvar t = g.querySelector(\"title\").textContent, i = t.lastIndexOf(\" (\");\n"
    "\treturn i < 0 ? t : t.substring(0, i);\n"
    "}\n"
    "function fit(g, w) {\n"
    "\tvar s = label_of(g), n = Math.floor((w - 6) / CW);\n"
    "\tg.querySelector(\"text\").textContent =\n"
    "\t\tn < 3 ? \"\" : s.length <= n ? s : s.substring(0, n - 2) + \"..\";\n"
    "}\n"
    "function place(g, x, w) {\n"
    "\tvar r = g.querySelector(\"rect\");\n"
    "\tr.setAttribute(\"x\", x.toFixed(2));\n"
    "\tr.setAttribute(\"width\", w.toFixed(2));\n"
    "\tg.querySelector(\"text\").setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "\tfit(g, w);\n"
    "}\n"
    "function zoom(z) {\n"
    "\tvar zs = num(z, \"data-s\"), zn = num(z, \"data-n\"), zd = num(z, \"data-d\");\n"
    "\tvar gs = frames.children, scale = zn ? FW / zn : 0, i;\n"
    "\tunzoombtn.classList.remove(\"hide\");\n"
    "\tfor (i = 0; i < gs.length; i++) {\n"
    "\t\tvar g = gs[i], s = num(g, \"data-s\"), n = num(g, \"data-n\"), d = num(g, "
    "\"data-d\");\n"
    "\t\tg.classList.remove(\"parent\");\n"
    "\t\tg.classList.remove(\"hide\");\n"
    "\t\tif (d < zd && s <= zs && s + n >= zs + zn) {\n"
    "\t\t\tg.classList.add(\"parent\");\n"
    "\t\t\tplace(g, XPAD, FW);\n"
    "\t\t} else if ((d > zd || g === z) && s >= zs && s + n <= zs + zn) {\n"
    "\t\t\tplace(g, XPAD + (s - zs) * scale, n * scale);\n"
    "\t\t} else {\n"
    "\t\t\tg.classList.add(\"hide\");\n"
    "\t\t}\n"
    "\t}\n"
    "}\n"
    "function unzoom() {\n"
    "\tvar gs = frames.children, scale = total ? FW / total : 0, i;\n"
    "\tunzoombtn.classList.add(\"hide\");\n"
    "\tfor (i = 0; i < gs.length; i++) {\n"
    "\t\tgs[i].classList.remove(\"parent\");\n"
    "\t\tgs[i].classList.remove(\"hide\");\n"
    "\t\tplace(gs[i], XPAD + num(gs[i], \"data-s\") * scale, num(gs[i], \"data-n\") * "
    "scale);\n"
    "\t}\n"
    "}\n"
    "function search_prompt() {\n"
    "\tif (searching) {\n"
    "\t\treset_search();\n"
    "\t\treturn;\n"
    "\t}\n"
    "\tvar term = prompt(\"Enter a search term (regexp allowed, eg: ^ext4_)\", \"\");\n"
    "\tif (term) search(term);\n"
    "}\n"
    "function search(term) {\n"
    "\tvar re, gs = frames.children, iv = [], i, sum = 0, end = -1;\n"
    "\ttry {\n"
    "\t\tre = new RegExp(term);\n"
    "\t} catch (e) {\n"
    "\t\talert(\"bad regexp: \" + e.message);\n"
    "\t\treturn;\n"
    "\t}\n"
    "\treset_search();\n"
    "\tfor (i = 0; i < gs.length; i++) {\n"
    "\t\tvar g = gs[i], r = g.querySelector(\"rect\"), s = num(g, \"data-s\");\n"
    "\t\tif (!re.test(label_of(g))) continue;\n"
    "\t\tr.setAttribute(\"data-fill\", r.getAttribute(\"fill\"));\n"
    "\t\tr.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
    "\t\tiv.push([s, s + num(g, \"data-n\")]);\n"
    "\t}\n"
    "\t/* matches nest (a function and its callee): count the union */\n"
    "\tiv.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
    "\tfor (i = 0; i < iv.length; i++) {\n"
    "\t\tif (iv[i][1] <= end) continue;\n"
    "\t\tsum += iv[i][1] - Math.max(iv[i][0], end);\n"
    "\t\tend = iv[i][1];\n"
    "\t}\n"
    "\tsearching = true;\n"
    "\tsearchbtn.classList.add(\"show\");\n"
    "\tsearchbtn.firstChild.nodeValue = \"Reset Search\";\n"
    "\tmatched.nodeValue = \"Matched: \" + (total ? (100 * sum / total).toFixed(1) : "
    "\"0.0\") + \"%%\";\n"
    "}\n"
    "function reset_search() {\n"
    "\tvar gs = frames.children, i;\n"
    "\tfor (i = 0; i < gs.length; i++) {\n"
    "\t\tvar r = gs[i].querySelector(\"rect\");\n"
    "\t\tif (!r.hasAttribute(\"data-fill\")) continue;\n"
    "\t\tr.setAttribute(\"fill\", r.getAttribute(\"data-fill\"));\n"
    "\t\tr.removeAttribute(\"data-fill\");\n"
    "\t}\n"
    "\tsearching = false;\n"
    "\tsearchbtn.classList.remove(\"show\");\n"
    "\tsearchbtn.firstChild.nodeValue = \"Search\";\n"
    "\tmatched.nodeValue = \" \";\n"
    "}\n"
    "]]></script>\n";

/* Frame layout: start (weight units) and depth of every drawn node, in
 * pre-order. */
struct layout {
	uint64_t *start;
	uint32_t *depth;
	uint32_t *order;
	size_t n;
	uint32_t max_depth;
};

static int lay_out(const struct flame *f, struct layout *L)
{
	struct kid *kids = NULL;
	size_t kids_cap = 0, nk, i, top = 0;
	uint32_t *stack = NULL;
	double scale;
	int err = -ENOMEM;

	memset(L, 0, sizeof(*L));
	L->start = calloc(f->nnodes, sizeof(*L->start));
	L->depth = calloc(f->nnodes, sizeof(*L->depth));
	L->order = malloc(f->nnodes * sizeof(*L->order));
	stack = malloc(f->nnodes * sizeof(*stack));
	if (!L->start || !L->depth || !L->order || !stack)
		goto out;

	/* Only drawn frames are expanded, and the children of each are put
	 * in alphabetical order then: a graph of millions of nodes has only
	 * thousands wider than MIN_PX. Iterative, as a path may be as deep
	 * as its caller made it. */
	scale = (double)FRAME_W / f->nodes[0].total;
	stack[top++] = 0;
	while (top) {
		uint32_t n = stack[--top], c;
		uint64_t x = L->start[n];

		L->order[L->n++] = n;
		if (L->depth[n] > L->max_depth)
			L->max_depth = L->depth[n];
		nk = 0;
		for (c = f->nodes[n].child; c != FNODE_NONE; c = f->nodes[c].next) {
			if (nk == kids_cap) {
				size_t cap = kids_cap ? kids_cap * 2 : 64;
				struct kid *k = realloc(kids, cap * sizeof(*k));

				if (!k)
					goto out;
				kids = k;
				kids_cap = cap;
			}
			kids[nk].label = flame_label_str(f, f->nodes[c].label);
			kids[nk].parent = n;
			kids[nk].node = c;
			nk++;
		}
		qsort(kids, nk, sizeof(*kids), kid_cmp);
		for (i = 0; i < nk; i++) {
			c = kids[i].node;
			L->start[c] = x;
			x += f->nodes[c].total;
			if (f->nodes[c].total * scale < MIN_PX)
				continue;
			L->depth[c] = L->depth[n] + 1;
			stack[top++] = c;
		}
	}
	err = 0;
out:
	free(stack);
	free(kids);
	if (err) {
		free(L->start);
		free(L->depth);
		free(L->order);
	}
	return err;
}

int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit)
{
	struct layout L = {0};
	uint64_t total;
	long height, ytop;
	int err;
	double scale;
	size_t i;

	if (!f || !out)
		return -EINVAL;
	if (!title)
		title = "Flame Graph";
	if (!unit)
		unit = "samples";
	total = flame__total(f);
	if (total) {
		err = lay_out(f, &L);
		if (err)
			return err;
	}
	ytop = YPAD_TOP + (subtitle ? YPAD_SUB : 0);
	height = ytop + ((long)L.max_depth + 1) * FRAME_H + YPAD_BOTTOM;

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%ld\" viewBox=\"0 0 %d %ld\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		IMG_W, height, IMG_W, height);
	fputs("<!-- d9prof flamegraph: click a frame to zoom, Ctrl-F to search -->\n",
	      out);
	fputs(
	    "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	    "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	    "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	    "</linearGradient></defs>\n",
	    out);
	fputs(svg_style, out);
	fprintf(out, svg_script, FRAME_W, XPAD, CHAR_W);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%ld\" "
		"fill=\"url(#background)\"/>\n",
		IMG_W, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", IMG_W / 2);
	xml_put(out, title, SIZE_MAX);
	fputs("</text>\n", out);
	if (subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"44\">", IMG_W / 2);
		xml_put(out, subtitle, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%ld\"> </text>\n", XPAD,
		height - 12);
	fprintf(
	    out,
	    "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
	    XPAD);
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n",
		IMG_W - XPAD - 100);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%ld\"> </text>\n", IMG_W - XPAD,
		height - 12);
	if (!total)
		fprintf(
		    out,
		    "<text x=\"%d\" y=\"%ld\" text-anchor=\"middle\">no samples</text>\n",
		    IMG_W / 2, ytop + FRAME_H - 4);

	fprintf(out, "<g id=\"frames\" data-total=\"%" PRIu64 "\">\n", total);
	scale = total ? (double)FRAME_W / total : 0;
	for (i = 0; i < L.n; i++) {
		uint32_t n = L.order[i];
		const struct fnode *nd = &f->nodes[n];
		const char *label = flame_label_str(f, nd->label);
		double x = XPAD + L.start[n] * scale, w = nd->total * scale;
		long y = height - YPAD_BOTTOM - ((long)L.depth[n] + 1) * FRAME_H;
		int rgb[3];

		frame_colour(label, L.depth[n], f->task_roots, rgb);
		fprintf(out,
			"<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
			"\" data-d=\"%" PRIu32 "\"><title>",
			L.start[n], nd->total, L.depth[n]);
		xml_put(out, label, SIZE_MAX);
		fprintf(out, " (%" PRIu64 " ", nd->total);
		xml_put(out, unit, SIZE_MAX);
		fprintf(out, ", %.2f%%)</title>", 100.0 * nd->total / total);
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%ld\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>"
			"<text x=\"%.2f\" y=\"%ld\">",
			x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3,
			y + FRAME_H - 5);
		put_fitted(out, label, w);
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	free(L.start);
	free(L.depth);
	free(L.order);
	return ferror(out) ? -EIO : 0;
}
