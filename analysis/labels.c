// SPDX-License-Identifier: MIT
/*
 * labels.c - how the views name and format what they show: frames (as
 * flamegraphs name them), durations, thread labels, cleaned names and
 * column widths, the trace's meta values and command (JSON strings:
 * lib/json.h). A task's label is the join's (join.c): this floor stands
 * below it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/labels.h"
#include "lib/text.h"

const char *analysis_meta(const struct trace *t, const char *key)
{
	const char *v = NULL;

	for (size_t i = 0; i < t->nmeta; i++)
		if (t->meta[i].key && !strcmp(t->meta[i].key, key))
			v = t->meta[i].value;
	return v;
}

/* Copy @s into @buf as a single-line, ';'-free name (task names come from
 * the target program and are printed and folded): text_clean(), then ';'
 * (which separates folded frames) as ':'. */
void analysis_clean_name(const char *s, char *buf, size_t len)
{
	size_t n = text_clean(s, buf, len);

	for (size_t i = 0; i < n; i++)
		if (buf[i] == ';')
			buf[i] = ':';
}

char *analysis_thread_label(const struct trace *t, uint32_t tid, char *buf, size_t len)
{
	const char *n = trace__thread_name(t, tid);
	char name[96];

	/* a thread of the target has its whole name; another (a run-queue
	 * holder) only the comm its switches carried (15 characters) */
	if (!n || !*n)
		n = trace__comm(t, tid);

	analysis_clean_name(n && *n ? n : "?", name, sizeof(name));
	snprintf(buf, len, "%s[%" PRIu32 "]", name, tid);
	return buf;
}

const char *analysis_trace_command(const struct trace *t)
{
	static const char *const keys[] = {TRACE_META_CMDLINE, TRACE_META_COMMAND,
					   TRACE_META_COMM, TRACE_META_EXE};
	const char *v;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = analysis_meta(t, keys[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}

char *analysis_svg_title(const struct trace *t, const char *title, const char *what,
			 char *buf, size_t len)
{
	const char *cmd = analysis_trace_command(t);

	if (title)
		snprintf(buf, len, "%s", title);
	else if (cmd)
		snprintf(buf, len, "%s: %s", what, cmd);
	else
		snprintf(buf, len, "%s", what);
	return buf;
}

int analysis_col_unit(uint64_t max)
{
	return max < 1000000 ? 0 : max < 100000000000ULL ? 1 : 2;
}

char *analysis_fmt_in(uint64_t ns, int unit, char *buf, size_t len)
{
	if (unit == 0)
		snprintf(buf, len, "%.1fus", (double)ns / 1e3);
	else if (unit == 1)
		snprintf(buf, len, "%.3fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	return buf;
}

/* Characters (not bytes) of a UTF-8 string, for column padding. */
size_t analysis_u8_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void analysis_u8_cut(char *s, size_t w)
{
	size_t n = 0;

	for (; *s; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80 && n++ == w) {
			*s = '\0';
			return;
		}
	}
}

void analysis_fit_name(const char *name, size_t w, char *buf, size_t len)
{
	char tmp[4096], cut[4096 * 3 / 2 + 16];

	analysis_clean_name(name ? name : "-", buf, len);
	if (!w || analysis_u8_width(buf) <= w)
		return;
	/* the flamegraph's rule: a qualified name keeps its own name */
	snprintf(tmp, sizeof(tmp), "%s", buf);
	if (analysis_shorten(tmp, w < 3 ? 3 : w, cut) || !*cut)
		return;
	snprintf(buf, len, "%s", cut);
}

double analysis_period_ns(const struct trace *t)
{
	const char *v = analysis_meta(t, TRACE_META_FREQUENCY);
	char *end;
	double hz;

	if (!v || !*v)
		return 0;
	hz = strtod(v, &end);
	if (end == v || (*end && strcmp(end, "Hz") && strcmp(end, " Hz")) || !(hz > 0) ||
	    hz > 1e9)
		return 0;
	return 1e9 / hz;
}

void tcol_see(struct tcol *c, uint64_t ns)
{
	if (ns > c->max)
		c->max = ns;
}

void tcol_fix(struct tcol *c, const char *title, int extra)
{
	char v[32];

	c->unit = analysis_col_unit(c->max);
	c->w = (int)strlen(analysis_fmt_in(c->max, c->unit, v, sizeof(v))) + extra;
	if (c->w < (int)strlen(title))
		c->w = (int)strlen(title);
}

char *analysis_frame_label(const struct trace *t, uint32_t id, char *buf, size_t len)
{
	const struct trace_frame *f;
	const char *suffix;
	size_t slen, room, n;

	if (!buf || !len)
		return buf;
	if (!t || id >= t->nframes) {
		snprintf(buf, len, "[bad frame %" PRIu32 "]", id);
		return buf;
	}
	f = &t->frames[id];
	/* "_[k]" tells kernel apart, " [inlined]" code inlined into the frame
	 * below (perf --inline and dial9 mark them alike) */
	suffix = f->inlined ? " [inlined]" : f->kernel ? "_[k]" : "";
	slen = strlen(suffix);
	/* keep room for the suffix */
	room = len > slen + 1 ? len - slen : len;

	/* cleaned as every shown name (analysis_clean_name(): no control or
	 * invalid UTF-8, ';' separates folded frames), cut at whole
	 * characters so the SVG stays valid XML */
	if (f->full) {
		analysis_clean_name(f->full, buf, room);
	} else if (f->sym && *f->sym) {
		analysis_clean_name(f->sym, buf, room);
	} else if (f->module && *f->module) {
		const char *base = strrchr(f->module, '/');
		char off[24];
		size_t olen;

		base = base && base[1] ? base + 1 : f->module;
		olen = (size_t)snprintf(off, sizeof(off), "+0x%" PRIx64, f->offset);
		analysis_clean_name(base, buf, room > olen + 1 ? room - olen : 1);
		n = strlen(buf);
		snprintf(buf + n, room - n, "%s", off);
	} else {
		snprintf(buf, room, "0x%" PRIx64, f->addr);
	}
	n = strlen(buf);
	if (n + slen < len)
		memcpy(buf + n, suffix, slen + 1);
	return buf;
}
