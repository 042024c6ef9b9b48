/* SPDX-License-Identifier: MIT */
/*
 * flame_svg.c - a self-contained interactive flamegraph SVG.
 *
 * In the spirit of flamegraph.pl and inferno: frames bottom-up (or top-down,
 * an icicle), siblings in alphabetical order, hover details, click to zoom,
 * regex search with the matched share, all in inline CSS and script so the
 * file can be mailed or attached to a ticket and opened anywhere.
 *
 * The picture is as wide as the window: frames are placed in % of the
 * width, so only their text depends on it, and the script fits the text
 * again on load and whenever the window is resized. The text written here
 * fits a 1200 px picture, for viewers without script.
 *
 * Each frame is <g class="f" data-s data-n data-d> holding <title> (the
 * full name), <rect> and, if there is room for 3 characters, <text>, with
 * its start and width in weight units and its depth; the script lays
 * frames out again from those when zooming. A parent's children narrower
 * than a pixel (at 1200 px), if more than one, are one frame, <g class="f
 * m">, "N small frames": the size of the file is bounded by its pixels,
 * not by the number of stacks.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/labels.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/text.h"

#define IMG_W	    1200 /* the width text is fitted to when written */
#define XPAD	    10
#define FRAME_W	    (IMG_W - 2 * XPAD)
#define XPAD_PCT    (100.0 * XPAD / IMG_W) /* the margins, in % */
#define FRAME_PCT   (100.0 * FRAME_W / IMG_W)
#define FRAME_H	    16
#define FONT	    12
#define CHAR_W	    (FONT * 0.59) /* average Verdana advance */
#define ONE_PX	    1.0		  /* narrower siblings are merged */
#define MIN_PX	    0.1		  /* narrower merged frames are left out */
#define YPAD_TOP    40
#define YPAD_SUB    20	/* a line of the subtitle */
#define SUB_CHARS   150 /* of it: a 1400 px window shows 160 */
#define YPAD_BOTTOM 34

/* Length of the character at @s if it is shown as it is: well-formed
 * UTF-8 (text_utf8()), printable (text_printable(): no C0, DEL, C1, line
 * separator or bidi control reaches the picture or the terminal that
 * shows its source) and legal in XML 1.0 (not U+FFFE, U+FFFF); else 0,
 * and it is one '?' for *@used bytes (a character, or a bad byte). */
static size_t xml_char(const unsigned char *s, size_t *used)
{
	uint32_t cp;
	size_t l = text_utf8((const char *)s, 4, &cp);

	*used = l ? l : 1;
	return l && text_printable(cp) && cp != 0xfffe && cp != 0xffff ? l : 0;
}

/* Write at most @max characters of @s, escaped; what xml_char() does not
 * show becomes '?', so any label or title makes a well-formed file with
 * nothing a terminal acts on. */
static void xml_put(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t l, used;

	for (; *p && max; max--) {
		l = xml_char(p, &used);
		if (!l) {
			putc('?', out);
			p += used;
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
 * script. */
static int put_fitted(FILE *out, const char *s, double w)
{
	double fit = (w - 6) / CHAR_W;
	char *buf;
	int err;

	if (fit < 3)
		return 0;
	if ((size_t)fit >= text_chars(s)) {
		xml_put(out, s, SIZE_MAX);
		return 0;
	}
	buf = malloc(strlen(s) * 3 / 2 + 16);
	if (!buf)
		return -ENOMEM;
	err = analysis_shorten(s, (size_t)fit, buf);
	if (!err)
		xml_put(out, buf, SIZE_MAX);
	free(buf);
	return err;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/* A colour from the name, so a function keeps its colour across graphs:
 * warm for user code, aqua for the kernel (CPU graphs), or blues for both
 * (@offcpu, the off-CPU convention); lavender for task roots, grey for
 * samples outside polls and parked time, pink for "[preempted]". */
static void frame_colour(const char *label, int depth, int task_roots, int offcpu,
			 int rgb[3])
{
	uint32_t h = lib_hash_fnv1a32(label);
	double v1, v2, v3;

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
	} else if (offcpu && ends_with(label, "_[k]")) {
		rgb[0] = 40 + (int)(40 * v1);
		rgb[1] = 150 + (int)(45 * v2);
		rgb[2] = 205 + (int)(50 * v2);
	} else if (offcpu) {
		rgb[0] = 70 + (int)(60 * v1);
		rgb[1] = 100 + (int)(70 * v2);
		rgb[2] = 200 + (int)(55 * v3);
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

/* The style and the script are files of their own (flame_svg.css,
 * flame_svg.js), made C strings at build time (scripts/cstring.sh). */
static const char svg_style[] =
#include "flame_svg.css.h"
	;

/* Only numbers are spliced into the script (svg_script_head): labels live
 * in the titles. */
static const char svg_script_head[] = "<script type=\"text/ecmascript\"><![CDATA[\n"
				      "\"use strict\";\n"
				      "var XP = %.4f, FR = %.4f, CW = %.2f, TY = %d;\n";

static const char svg_script[] =
#include "flame_svg.js.h"
	;

/* One frame to draw: a node, or the children of node narrower than a
 * pixel, merged (nmerged > 1). */
struct entry {
	uint64_t start; /* weight units from the left */
	uint64_t total;
	uint32_t node;
	uint32_t depth;
	uint32_t nmerged; /* 0: the node itself */
};

/* The frames to draw, in pre-order. */
struct layout {
	struct entry *e;
	size_t n, cap;
	uint32_t max_depth;
};

static int push(struct entry **v, size_t *n, size_t *cap, const struct entry *e)
{
	if (*n == *cap && LIB_GROW(*v, *cap, *n + 1))
		return -ENOMEM;
	(*v)[(*n)++] = *e;
	return 0;
}

static int lay_out(const struct flame *f, struct layout *L)
{
	struct kid *kids = NULL;
	struct entry *stack = NULL, e = {.total = f->nodes[0].total};
	size_t kids_cap = 0, nk, i, top = 0, stack_cap = 0;
	double scale = (double)FRAME_W / f->nodes[0].total;
	int err = -ENOMEM;

	/* Only drawn frames are expanded, and only the children of each
	 * that are a pixel wide are sorted: a graph of millions of nodes
	 * has only thousands that wide. The rest of a parent's children are
	 * one frame after them. Iterative, as a path may be as deep as its
	 * caller made it. */
	memset(L, 0, sizeof(*L));
	if (push(&stack, &top, &stack_cap, &e))
		goto out;
	while (top) {
		struct entry cur = stack[--top];
		uint64_t x = cur.start, small = 0;
		uint32_t nsmall = 0, one = FNODE_NONE, c;

		if (push(&L->e, &L->n, &L->cap, &cur))
			goto out;
		if (cur.depth > L->max_depth)
			L->max_depth = cur.depth;
		if (cur.nmerged)
			continue;
		nk = 0;
		for (c = f->nodes[cur.node].child; c != FNODE_NONE;
		     c = f->nodes[c].next) {
			if (f->nodes[c].total * scale < ONE_PX) {
				small += f->nodes[c].total;
				nsmall++;
				one = c;
				continue;
			}
			if (LIB_GROW(kids, kids_cap, nk + 1))
				goto out;
			kids[nk].label = flame_label_str(f, f->nodes[c].label);
			kids[nk].parent = cur.node;
			kids[nk].node = c;
			nk++;
		}
		qsort(kids, nk, sizeof(*kids), kid_cmp);
		for (i = 0; i < nk; i++)
			x += f->nodes[kids[i].node].total;
		/* pushed right to left, so that they come out left to right */
		if (nsmall && small * scale >= MIN_PX) {
			e = (struct entry){.start = x,
					   .total = small,
					   .node = nsmall == 1 ? one : cur.node,
					   .depth = cur.depth + 1,
					   .nmerged = nsmall == 1 ? 0 : nsmall};
			if (push(&stack, &top, &stack_cap, &e))
				goto out;
		}
		for (i = nk; i--;) {
			x -= f->nodes[kids[i].node].total;
			e = (struct entry){.start = x,
					   .total = f->nodes[kids[i].node].total,
					   .node = kids[i].node,
					   .depth = cur.depth + 1};
			if (push(&stack, &top, &stack_cap, &e))
				goto out;
		}
	}
	err = 0;
out:
	free(stack);
	free(kids);
	if (err)
		free(L->e);
	return err;
}

/* The end of the next line of subtitle @s (at most SUB_CHARS bytes): after
 * the last "; " that fits, else the last space, else SUB_CHARS; the whole
 * rest if it fits */
static size_t sub_line(const char *s)
{
	size_t n = strlen(s), cut = 0;

	if (n <= SUB_CHARS)
		return n;
	for (size_t i = 0; i + 1 < SUB_CHARS; i++)
		if (s[i] == ';' && s[i + 1] == ' ')
			cut = i + 2;
	for (size_t i = SUB_CHARS; !cut && i > 0; i--)
		if (s[i] == ' ')
			cut = i + 1;
	/* (no character cut in two where no space came first) */
	for (cut = cut ? cut : SUB_CHARS; (s[cut] & 0xc0) == 0x80 && cut < SUB_CHARS + 4;)
		cut++;
	return cut;
}

/* The subtitle, centred, in lines that a 1400 px window shows whole (the
 * text as it was: the lines' tspans together read as the subtitle) */
static void write_subtitle(FILE *out, const char *s)
{
	fputs("<text id=\"subtitle\" x=\"50%\" y=\"44\">", out);
	for (int first = 1; *s; first = 0) {
		char line[SUB_CHARS + 8];
		size_t n = sub_line(s);

		memcpy(line, s, n);
		line[n] = '\0';
		fprintf(out, "<tspan x=\"50%%\" dy=\"%d\">", first ? 0 : YPAD_SUB);
		xml_put(out, line, SIZE_MAX);
		fputs("</tspan>", out);
		s += n;
	}
	fputs("</text>\n", out);
}

static int sub_lines(const char *s)
{
	int n = 0;

	for (; s && *s; n++)
		s += sub_line(s);
	return n;
}

/* The SVG up to its frames: the document, its style and script, the
 * title and subtitle, the buttons and the lines the script writes */
static void write_head(FILE *out, const char *title, const char *subtitle, long height)
{
	/* no viewBox: the width is the window's, and x is in % of it, while
	 * text keeps its size */
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"100%%\" height=\"%ld\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		height);
	fputs("<!-- d9prof flamegraph: click a frame to zoom, Ctrl-F to search -->\n",
	      out);
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	      "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n",
	      out);
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", svg_style);
	fprintf(out, svg_script_head, XPAD_PCT, FRAME_PCT, CHAR_W, FRAME_H - 5);
	fprintf(out, "%s]]></script>\n", svg_script);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"%ld\" "
		"fill=\"url(#background)\"/>\n",
		height);
	fputs("<text id=\"title\" x=\"50%\" y=\"24\">", out);
	xml_put(out, title, SIZE_MAX);
	fputs("</text>\n", out);
	if (subtitle && *subtitle)
		write_subtitle(out, subtitle);
	fprintf(out, "<text id=\"details\" x=\"%.4f%%\" y=\"%ld\"> </text>\n", XPAD_PCT,
		height - 12);
	fprintf(out,
		"<text id=\"unzoom\" class=\"hide\" x=\"%.4f%%\" y=\"24\">Reset "
		"Zoom</text>\n",
		XPAD_PCT);
	fprintf(out, "<text id=\"search\" x=\"%.4f%%\" y=\"24\">Search</text>\n",
		XPAD_PCT + FRAME_PCT);
	fprintf(out,
		"<text id=\"icase\" x=\"%.4f%%\" dx=\"-110\" y=\"24\">[ ] ignore "
		"case</text>\n",
		XPAD_PCT + FRAME_PCT);
	fprintf(out, "<text id=\"matched\" x=\"%.4f%%\" y=\"%ld\"> </text>\n",
		XPAD_PCT + FRAME_PCT, height - 12);
}

int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit)
{
	struct layout L = {0};
	uint64_t total;
	long height, ytop;
	int err = 0, reverse;
	double scale, pct;
	size_t i;

	if (!f || !out)
		return -EINVAL;
	if (!title)
		title = "Flame Graph";
	if (!unit)
		unit = "samples";
	reverse = f->style.reverse;
	total = flame__total(f);
	if (total) {
		err = lay_out(f, &L);
		if (err)
			return err;
	}
	ytop = YPAD_TOP + sub_lines(subtitle) * YPAD_SUB;
	height = ytop + ((long)L.max_depth + 1) * FRAME_H + YPAD_BOTTOM;

	write_head(out, title, subtitle, height);
	if (!total)
		fprintf(out,
			"<text x=\"50%%\" y=\"%ld\" text-anchor=\"middle\">no "
			"samples</text>\n",
			ytop + FRAME_H - 4);

	fprintf(out, "<g id=\"frames\" data-total=\"%" PRIu64 "\" data-layout=\"%s\">\n",
		total, reverse ? "icicle" : "flame");
	scale = total ? (double)FRAME_W / total : 0;
	pct = total ? FRAME_PCT / total : 0;
	for (i = 0; i < L.n && !err; i++) {
		const struct entry *e = &L.e[i];
		const char *label = flame_label_str(f, f->nodes[e->node].label);
		long y = reverse ? ytop + (long)e->depth * FRAME_H
				 : height - YPAD_BOTTOM - ((long)e->depth + 1) * FRAME_H;
		char merged[160], tip[256];
		int rgb[3];

		fprintf(out,
			"<g class=\"%s\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
			"\" data-d=\"%" PRIu32 "\"><title>",
			e->nmerged ? "f m" : "f", e->start, e->total, e->depth);
		if (e->nmerged) {
			/* what label_of() in the script reads back */
			snprintf(merged, sizeof(merged),
				 "%" PRIu32 " small frames, %" PRIu64 " %s", e->nmerged,
				 e->total, unit);
			label = merged;
			rgb[0] = rgb[1] = rgb[2] = 220;
			fprintf(out, "%" PRIu32 " small frames, %" PRIu64 " ", e->nmerged,
				e->total);
			xml_put(out, unit, SIZE_MAX);
			fprintf(out, " (%.2f%%)</title>", 100.0 * e->total / total);
		} else {
			tip[0] = '\0';
			if (f->paint)
				f->paint(f, e->node, rgb, tip, sizeof(tip));
			else
				frame_colour(label, e->depth, f->task_roots,
					     f->style.offcpu, rgb);
			xml_put(out, label, SIZE_MAX);
			if (!strcmp(unit, "us")) { /* a time: say it as one */
				char d[32];

				fprintf(out, " (%s",
					text_duration(e->total * 1000, d, sizeof(d)));
			} else {
				char d[32];

				fprintf(out, " (%" PRIu64 " ", e->total);
				xml_put(out, unit, SIZE_MAX);
				if (f->style.sample_ns > 0)
					fprintf(out, ", %s",
						text_duration(
							(uint64_t)((double)e->total *
									   f->style.sample_ns +
								   0.5),
							d, sizeof(d)));
			}
			fprintf(out, ", %.2f%%", 100.0 * e->total / total);
			if (*tip) {
				fputs("; ", out);
				xml_put(out, tip, SIZE_MAX);
			}
			fputs(")</title>", out);
		}
		fprintf(out,
			"<rect x=\"%.4f%%\" y=\"%ld\" width=\"%.4f%%\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
			XPAD_PCT + e->start * pct, y, e->total * pct, FRAME_H - 1, rgb[0],
			rgb[1], rgb[2]);
		/* too narrow for 3 characters: no <text>, fit() adds one */
		if ((e->total * scale - 6) / CHAR_W >= 3) {
			fprintf(out, "<text x=\"%.4f%%\" dx=\"3\" y=\"%ld\">",
				XPAD_PCT + e->start * pct, y + FRAME_H - 5);
			err = put_fitted(out, label, e->total * scale);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	free(L.e);
	if (err)
		return err;
	return ferror(out) ? -EIO : 0;
}
