// SPDX-License-Identifier: MIT
/*
 * rust_names.c - Rust functions named in full where line-tables-only
 * DWARF names them short (see rust_names.h).
 *
 * A name is read as runs of path characters ("app::handle::{closure#0}"),
 * each a path of segments split at "::", between the punctuation of types
 * ('<', ',', ' ', '&', ...). A segment in braces is rustc's: "{impl#2}",
 * a body "{closure#0}" (or a symbol's "{{closure}}"), or a body's type
 * "{closure_env#0}".
 */
#include <stdio.h>
#include <string.h>

#include "lib/rust_names.h"

#define CLOSURE "{{closure}}"

enum seg { SEG_OTHER, SEG_LEGACY, SEG_BODY, SEG_ENV };

static int path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '{' || c == '}' ||
	       c == '#';
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* What segment @s (@n bytes) is; a body's or an environment's kind and
 * number in *@b (an environment's kind without "_env"). */
static enum seg segment(const char *s, size_t n, struct lib_rust_body *b)
{
	size_t k = 1, h;
	unsigned long num = 0;

	if (n == strlen(CLOSURE) && !memcmp(s, CLOSURE, n))
		return SEG_LEGACY;
	if (n < 4 || s[0] != '{' || s[n - 1] != '}')
		return SEG_OTHER;
	while (k < n && ((s[k] >= 'a' && s[k] <= 'z') || s[k] == '_'))
		k++;
	if (k == 1 || k + 3 > n || s[k] != '#')
		return SEG_OTHER;
	h = k;
	for (k++; k < n - 1; k++) {
		if (s[k] < '0' || s[k] > '9' || num > 100000000)
			return SEG_OTHER;
		num = num * 10 + (unsigned long)(s[k] - '0');
	}
	if (h - 1 == 4 && !memcmp(s + 1, "impl", 4))
		return SEG_OTHER;
	b->kind = s + 1;
	b->klen = h - 1;
	b->num = num;
	if (b->klen > 4 && !memcmp(s + h - 4, "_env", 4)) {
		b->klen -= 4;
		return SEG_ENV;
	}
	return SEG_BODY;
}

static int same_body(const struct lib_rust_body *a, const struct lib_rust_body *b)
{
	return a->klen == b->klen && a->num == b->num &&
	       !memcmp(a->kind, b->kind, a->klen);
}

/* "P::{{closure}}" into @out, P's bodies as a symbol names them */
/* "P::{{closure}}" into @out, P's bodies as a symbol names them: 1, or 0
 * (@out untouched) where it does not fit: a name cut short is another's */
static int legacy_body(const char *p, size_t n, char *out, size_t len)
{
	size_t o = 0, i, need = 0;
	struct lib_rust_body b;

	for (int pass = 0; pass < 2; pass++) {
		if (pass && need + strlen(CLOSURE) >= len)
			return 0;
		for (i = 0; i < n;) {
			const char *e = p + i, *x = e;
			size_t sn;

			while (x < p + n &&
			       !(x[0] == ':' && x + 1 < p + n && x[1] == ':'))
				x++;
			sn = (size_t)(x - e);
			if (segment(e, sn, &b) == SEG_BODY)
				e = CLOSURE, sn = strlen(CLOSURE);
			if (pass) {
				memcpy(out + o, e, sn);
				memcpy(out + o + sn, "::", 2);
				o += sn + 2;
			} else {
				need += sn + 2;
			}
			i = (size_t)(x - p) + 2;
		}
	}
	memcpy(out + o, CLOSURE, strlen(CLOSURE) + 1);
	return 1;
}

/* A walk over a name's paths, each byte read a bounded number of times
 * (a trace's names are untrusted, and may be long). */
struct runs {
	const char *s;
	size_t at;	 /* where the next run is looked for */
	size_t start, n; /* the run: its path, leading colons left out */
	int depth;	 /* '<' minus '>' before it ("->" is no bracket) */
};

/* The next run of path characters: 1, or 0 at the end */
static int next_run(struct runs *r)
{
	const char *s = r->s;
	size_t i = r->at, e, i0;

	for (; s[i] && !path_char(s[i]); i++)
		if (s[i] == '<')
			r->depth++;
		else if (s[i] == '>' && !(i && s[i - 1] == '-'))
			r->depth--;
	for (e = i0 = i; s[e] && path_char(s[e]); e++)
		;
	r->at = e;
	while (i < e && s[i] == ':')
		i++;
	r->start = i;
	r->n = e - i;
	return e > i0;
}

/* The end of the segment at @i of run @r: the next "::" or the run's end */
static size_t seg_end(const struct runs *r, size_t i)
{
	size_t e = r->start + r->n;

	for (; i + 1 < e; i++)
		if (r->s[i] == ':' && r->s[i + 1] == ':')
			return i;
	return e;
}

struct pick {
	size_t start, len; /* the path before the segment found */
	int depth;
	int found;
};

/* Keep path [start, start + len) at @depth if it is nested no deeper
 * than the one kept (a later one of the same depth wins). */
static void keep(struct pick *pk, size_t start, size_t len, int depth)
{
	if (len && (!pk->found || depth <= pk->depth))
		*pk = (struct pick){
			.start = start, .len = len, .depth = depth, .found = 1};
}

int lib_rust_body_from_env(const char *name, const struct lib_rust_body *b, char *out,
			   size_t len)
{
	struct pick pk = {0};
	struct runs r = {.s = name};

	while (next_run(&r)) {
		for (size_t i = r.start, e; i < r.start + r.n; i = e + 2) {
			struct lib_rust_body f;

			e = seg_end(&r, i);
			if (i > r.start && segment(name + i, e - i, &f) == SEG_ENV &&
			    same_body(&f, b))
				keep(&pk, r.start, i - 2 - r.start, r.depth);
		}
	}
	return pk.found && legacy_body(name + pk.start, pk.len, out, len);
}

int lib_rust_body_from_inner(const char *name, const struct lib_rust_body *b, char *out,
			     size_t len)
{
	struct pick pk = {0};
	struct runs r = {.s = name};

	while (next_run(&r)) {
		size_t lastlen = 0;
		int match = 0;

		/* the innermost body the path's last segment is in */
		for (size_t i = r.start, e; i < r.start + r.n; i = e + 2) {
			struct lib_rust_body f;
			enum seg sg;

			e = seg_end(&r, i);
			sg = segment(name + i, e - i, &f);
			if (i > r.start && e < r.start + r.n &&
			    (sg == SEG_LEGACY || sg == SEG_BODY)) {
				lastlen = i - 2 - r.start;
				match = sg == SEG_LEGACY || same_body(&f, b);
			}
		}
		if (match)
			keep(&pk, r.start, lastlen, r.depth);
	}
	return pk.found && legacy_body(name + pk.start, pk.len, out, len);
}

int lib_rust_body(const char *sym, struct lib_rust_body *b)
{
	const char *e;

	if (!sym || sym[0] != '{' || !(e = strchr(sym, '}')))
		return 0;
	if (e[1] && e[1] != '<')
		return 0;
	return segment(sym, (size_t)(e + 1 - sym), b) == SEG_BODY;
}

int lib_rust_is_body(const char *sym)
{
	size_t i, seg = 0, end = 0;
	int d = 0;
	struct lib_rust_body b;
	enum seg sg;

	if (!sym)
		return 0;
	for (i = 0; sym[i]; i++) {
		if (sym[i] == '<') {
			if (!d && !end)
				end = i;
			d++;
		} else if (sym[i] == '>' && !(i && sym[i - 1] == '-')) {
			d--;
		} else if (!d && sym[i] == ':' && sym[i + 1] == ':') {
			seg = i + 2;
			end = 0;
			i++;
		}
	}
	if (!end || end < seg)
		end = i;
	sg = segment(sym + seg, end - seg, &b);
	return sg == SEG_LEGACY || sg == SEG_BODY;
}

/* The crate directory's "NAME-VERSION" segment ending at @e: NAME's end */
static const char *versioned(const char *file, const char *e)
{
	const char *s = e, *dash = NULL;

	while (s > file && s[-1] != '/')
		s--;
	for (const char *p = s; p < e; p++)
		if (*p == '-' && p + 1 < e && p[1] >= '0' && p[1] <= '9')
			dash = p;
	return dash && dash > s ? dash : NULL;
}

int lib_rust_module(const char *file, char *out, size_t len)
{
	const char *crate = NULL, *ce = NULL, *rest = NULL, *p, *q;
	size_t o = 0, n = file ? strlen(file) : 0;

	if (n < 4 || strcmp(file + n - 3, ".rs") || !len)
		return 0;
	if ((p = strstr(file, "/library/"))) {
		crate = p + 9;
		ce = strchr(crate, '/');
		rest = ce && !strncmp(ce, "/src/", 5) ? ce + 5 : NULL;
	}
	for (p = file; !rest && (p = strstr(p, "/src/")); p++) {
		ce = versioned(file, p);
		if (ce) {
			for (crate = ce; crate > file && crate[-1] != '/'; crate--)
				;
			rest = p + 5;
		}
	}
	if (!rest || ce == crate)
		return 0;
	if ((size_t)(ce - crate) + 1 > len)
		return 0;
	for (p = crate; p < ce; p++) {
		if (!ident_char(*p) && *p != '-')
			return 0;
		out[o++] = *p == '-' ? '_' : *p;
	}
	for (p = rest; *p; p = *q ? q + 1 : q) {
		size_t sn;

		q = strchr(p, '/');
		if (!q)
			q = file + n;
		sn = (size_t)(q - p) - (*q ? 0 : 3);
		for (size_t k = 0; k < sn; k++)
			if (!ident_char(p[k]))
				return 0;
		if (!*q && ((sn == 3 && (!memcmp(p, "mod", 3) || !memcmp(p, "lib", 3))) ||
			    (sn == 4 && !memcmp(p, "main", 4)) ||
			    (sn >= 6 && !memcmp(p + sn - 6, "macros", 6))))
			break;
		if (sn && o + sn + 3 > len)
			return 0; /* a module cut short is another */
		if (sn) {
			memcpy(out + o, "::", 2);
			memcpy(out + o + 2, p, sn);
			o += sn + 2;
		}
	}
	out[o < len ? o : len - 1] = '\0';
	return o > 0;
}
