// SPDX-License-Identifier: MIT
/*
 * json.c - the streaming JSON writer (json.h). Commas are written before
 * a token, when it turns out not to be the first of its container, so a
 * writer never has to take one back.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "lib/json.h"
#include "lib/text.h"

enum {
	LEVEL_OBJECT = 1, /* else an array */
	LEVEL_ITEMS = 2,  /* a member or element written: the next takes a comma */
};

void lib_json_init(struct lib_json *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

int lib_json_error(const struct lib_json *w)
{
	if (w->err)
		return w->err;
	return ferror(w->out) ? -EIO : 0;
}

static int fail(struct lib_json *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* The pending line break, if any. */
static void put_break(struct lib_json *w)
{
	if (w->brk) {
		putc('\n', w->out);
		w->brk = 0;
	}
}

/* Before a value: its comma and line break, or -EINVAL where no value may
 * go. A top-level value is whole when it is a scalar, or when the close
 * brings the depth back to 0. */
static int value_start(struct lib_json *w)
{
	unsigned char *l;

	if (w->err)
		return w->err;
	if (!w->depth) {
		if (w->done)
			return fail(w, -EINVAL);
		put_break(w);
		return 0;
	}
	l = &w->level[w->depth - 1];
	if (*l & LEVEL_OBJECT) {
		if (!w->named)
			return fail(w, -EINVAL);
		w->named = 0;
	} else {
		if (*l & LEVEL_ITEMS)
			putc(',', w->out);
		*l |= LEVEL_ITEMS;
	}
	put_break(w);
	return 0;
}

static void value_end(struct lib_json *w)
{
	if (!w->depth)
		w->done = 1;
}

/* The one escaping rule (json.h): lib/text.h's decoder and printable. */
static void put_str(FILE *out, const char *s)
{
	uint32_t cp;
	size_t k;

	putc('"', out);
	for (; *s; s += k) {
		/* RFC 3629 exactly: an overlong form, a surrogate or a code
		 * point past U+10FFFF is U+FFFD a byte, as a cut or lone byte
		 * is, so that strict parsers take every string */
		k = text_utf8(s, 4, &cp);
		if (!k) {
			fputs("\\ufffd", out);
			k = 1;
		} else if (cp == '"' || cp == '\\') {
			putc('\\', out);
			putc((int)cp, out);
		} else if (!text_printable(cp)) {
			/* C0, DEL, C1, U+2028/2029 (line ends to JavaScript) and
			 * bidi controls: escaped, never raw on a terminal */
			fprintf(out, "\\u%04" PRIx32, cp);
		} else {
			fwrite(s, 1, k, out);
		}
	}
	putc('"', out);
}

static void push(struct lib_json *w, unsigned char kind, int c)
{
	if (value_start(w))
		return;
	if (w->depth == LIB_JSON_DEPTH) {
		fail(w, -EINVAL);
		return;
	}
	w->level[w->depth++] = kind;
	putc(c, w->out);
}

static void pop(struct lib_json *w, unsigned char kind, int c)
{
	if (w->err)
		return;
	if (!w->depth || (w->level[w->depth - 1] & LEVEL_OBJECT) != kind || w->named) {
		fail(w, -EINVAL);
		return;
	}
	w->depth--;
	put_break(w);
	putc(c, w->out);
	value_end(w);
}

void lib_json_object_begin(struct lib_json *w)
{
	push(w, LEVEL_OBJECT, '{');
}

void lib_json_object_end(struct lib_json *w)
{
	pop(w, LEVEL_OBJECT, '}');
}

void lib_json_array_begin(struct lib_json *w)
{
	push(w, 0, '[');
}

void lib_json_array_end(struct lib_json *w)
{
	pop(w, 0, ']');
}

void lib_json_name(struct lib_json *w, const char *name)
{
	unsigned char *l;

	if (w->err)
		return;
	if (!w->depth || !(w->level[w->depth - 1] & LEVEL_OBJECT) || w->named || !name) {
		fail(w, -EINVAL);
		return;
	}
	l = &w->level[w->depth - 1];
	if (*l & LEVEL_ITEMS)
		putc(',', w->out);
	*l |= LEVEL_ITEMS;
	put_break(w);
	put_str(w->out, name);
	putc(':', w->out);
	w->named = 1;
}

void lib_json_str(struct lib_json *w, const char *s)
{
	if (value_start(w))
		return;
	if (s)
		put_str(w->out, s);
	else
		fputs("null", w->out);
	value_end(w);
}

/* Every value but a string is printf's. */
void lib_json_printf(struct lib_json *w, const char *fmt, ...)
{
	va_list ap;

	if (value_start(w))
		return;
	va_start(ap, fmt);
	vfprintf(w->out, fmt, ap);
	va_end(ap);
	value_end(w);
}

void lib_json_uint(struct lib_json *w, uint64_t v)
{
	lib_json_printf(w, "%" PRIu64, v);
}

void lib_json_int(struct lib_json *w, int64_t v)
{
	lib_json_printf(w, "%" PRId64, v);
}

void lib_json_double(struct lib_json *w, const char *fmt, double v)
{
	if (isfinite(v))
		lib_json_printf(w, fmt, v);
	else
		lib_json_null(w);
}

void lib_json_bool(struct lib_json *w, int v)
{
	lib_json_printf(w, "%s", v ? "true" : "false");
}

void lib_json_null(struct lib_json *w)
{
	lib_json_printf(w, "%s", "null");
}

void lib_json_str_field(struct lib_json *w, const char *name, const char *s)
{
	lib_json_name(w, name);
	lib_json_str(w, s);
}

void lib_json_uint_field(struct lib_json *w, const char *name, uint64_t v)
{
	lib_json_name(w, name);
	lib_json_uint(w, v);
}

void lib_json_int_field(struct lib_json *w, const char *name, int64_t v)
{
	lib_json_name(w, name);
	lib_json_int(w, v);
}

void lib_json_bool_field(struct lib_json *w, const char *name, int v)
{
	lib_json_name(w, name);
	lib_json_bool(w, v);
}

void lib_json_break(struct lib_json *w)
{
	if (!w->err)
		w->brk = 1;
}

void lib_json_newline(struct lib_json *w)
{
	if (!w->err)
		putc('\n', w->out);
}

int lib_json_finish(struct lib_json *w)
{
	if (!w->err && (w->depth || !w->done))
		fail(w, -EINVAL);
	if (!w->err)
		putc('\n', w->out);
	return lib_json_error(w);
}
