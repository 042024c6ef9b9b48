// SPDX-License-Identifier: MIT
/*
 * labels.c - how the views name and format what they show: frames (as
 * flamegraphs name them), durations, thread labels, cleaned names and
 * column widths, the trace's meta values and command (JSON strings:
 * lib/json.h). A task's label is the join's (join.c): this floor stands
 * below it.
 */
#include <ctype.h>
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

/* ---- cutting names to fit ------------------------------------------- */

/* A C++ or Rust name is read as tokens: "::" scopes, brackets (<...>
 * templates, (...) parameters), and text; "operator<<", "operator()" and
 * "->" are text, not brackets. analysis_shorten() here and the flamegraph
 * SVG's script (flame_svg.js) must agree: they cut the same way. */
enum { TK_END, TK_TEXT, TK_OPEN, TK_CLOSE, TK_SEP };

static int is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The token at @s[i], its length in *@len. */
static int name_token(const char *s, size_t i, size_t *len)
{
	static const char ops[] = "<>=!+-*/%^&|~,[]";
	size_t j;

	if (!s[i])
		return TK_END;
	if (!strncmp(s + i, "operator", 8) && (i == 0 || !is_ident(s[i - 1]))) {
		j = i + 8;
		if (s[j] == '(' && s[j + 1] == ')')
			j += 2;
		else
			while (s[j] && strchr(ops, s[j]))
				j++;
		*len = j - i;
		return TK_TEXT;
	}
	*len = 2;
	if (s[i] == '-' && s[i + 1] == '>')
		return TK_TEXT;
	if (s[i] == ':' && s[i + 1] == ':')
		return TK_SEP;
	*len = 1;
	if (strchr("<([{", s[i]))
		return TK_OPEN;
	if (strchr(">)]}", s[i]))
		return TK_CLOSE;
	return TK_TEXT;
}

/* Offsets of the top-level "::" of @s into @sep (room for strlen(s) / 2
 * + 1); their number. */
static size_t scope_seps(const char *s, size_t *sep)
{
	size_t i = 0, n = 0, len;
	int kind, depth = 0;

	while ((kind = name_token(s, i, &len)) != TK_END) {
		if (kind == TK_OPEN)
			depth++;
		else if (kind == TK_CLOSE && depth)
			depth--;
		else if (kind == TK_SEP && !depth)
			sep[n++] = i;
		i += len;
	}
	return n;
}

/* @s into @out with what is inside each top-level <...>, and each
 * top-level (...) at offset @par_from or later (SIZE_MAX: none), replaced
 * by "..". @out needs room for strlen(s) * 3 / 2 + 3. */
static void collapse(const char *s, size_t par_from, char *out)
{
	size_t i = 0, len;
	int kind, depth = 0, cut = 0, skipped = 0;

	while ((kind = name_token(s, i, &len)) != TK_END) {
		if (kind == TK_OPEN) {
			if (!depth && (s[i] == '<' || (s[i] == '(' && i >= par_from))) {
				*out++ = s[i];
				cut = 1;
				skipped = 0;
				depth++;
				i += len;
				continue;
			}
			depth++;
		} else if (kind == TK_CLOSE) {
			if (depth)
				depth--;
			if (!depth && cut) {
				if (skipped)
					out = stpcpy(out, "..");
				*out++ = s[i];
				cut = 0;
				i += len;
				continue;
			}
		}
		if (cut) {
			skipped = 1;
		} else {
			memcpy(out, s + i, len);
			out += len;
		}
		i += len;
	}
	if (cut && skipped)
		out = stpcpy(out, "..");
	*out = '\0';
}

/* The first @n - 2 characters of @s and "..", into @out. */
static void cut_right(const char *s, size_t n, char *out)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p && n > 2; n--) {
		size_t l = text_utf8((const char *)p, 4, NULL);

		l = l ? l : 1;
		memcpy(out, p, l);
		out += l;
		p += l;
	}
	strcpy(out, "..");
}

/* Cut @s before its parameters: "method(..) const" is "method". */
static void drop_params(char *s)
{
	size_t i = 0, len;
	int kind, depth = 0;

	while ((kind = name_token(s, i, &len)) != TK_END) {
		if (kind == TK_OPEN && !depth && i && s[i] == '(') {
			s[i] = '\0';
			return;
		}
		if (kind == TK_OPEN)
			depth++;
		else if (kind == TK_CLOSE && depth)
			depth--;
		i += len;
	}
}

/* @s as shown in at most @n characters (as text_chars() counts), into
 * @out (room for strlen(s) * 3 / 2 + 16). Names with a scope ("::") are
 * cut in the middle, to keep the function's own name: first what is
 * inside templates becomes "..", then its parameters, then the scopes
 * between the first and the last: "ns::detail::Type<..>::method(int)",
 * "ns::detail::Type<..>::method(..)", "ns::..::method(..)", then the own
 * name alone, "method(..)", without its parameters, "method", and cut on
 * the right, "met..". Other names are cut on the right: "a_very_lo..".
 * Under 3 characters, nothing. 0 or -ENOMEM. Also the tables' rule
 * (analysis_fit_name()). */
int analysis_shorten(const char *s, size_t n, char *out)
{
	size_t len = strlen(s), *sep, k, j;
	char *b = NULL, *own;

	*out = '\0';
	if (n < 3)
		return 0;
	if (text_chars(s) <= n) {
		strcpy(out, s);
		return 0;
	}
	sep = malloc((len / 2 + 1) * sizeof(*sep));
	b = malloc(len * 3 / 2 + 3);
	if (!sep || !b) {
		free(sep);
		free(b);
		return -ENOMEM;
	}
	k = scope_seps(s, sep);
	if (!k) {
		cut_right(s, n, out);
		goto out;
	}
	collapse(s, SIZE_MAX, out);
	if (text_chars(out) <= n)
		goto out;
	collapse(s, sep[k - 1] + 2, b);
	if (text_chars(b) <= n) {
		strcpy(out, b);
		goto out;
	}
	k = scope_seps(b, sep);
	own = k ? b + sep[k - 1] + 2 : b;
	for (j = k; j-- > 1;) {
		memcpy(out, b, sep[j - 1]);
		strcpy(stpcpy(out + sep[j - 1], "::..::"), own);
		if (text_chars(out) <= n)
			goto out;
	}
	if (text_chars(own) <= n) {
		strcpy(out, own);
		goto out;
	}
	drop_params(own);
	if (text_chars(own) <= n)
		strcpy(out, own);
	else
		cut_right(own, n, out);
out:
	free(sep);
	free(b);
	return 0;
}
