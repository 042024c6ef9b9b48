/* SPDX-License-Identifier: MIT */
/*
 * json.h - the one JSON writer of the tree: every JSON output (the views'
 * --format json, info --json, the speedscope and chrome exports) is
 * written through it, never by hand (bpftool's json_writer.c is the
 * model).
 *
 * It streams to a FILE and keeps no document: the caller opens and closes
 * objects and arrays, names members and writes values; the writer puts
 * the commas and checks the nesting. Output is compact (no space at
 * all); lib_json_break() and lib_json_newline() put line breaks where an
 * output wants them (one event per line in the chrome export), and
 * lib_json_finish() ends the document with one.
 *
 * Strings: what the target named is shown only through lib/text.h's rule,
 * and in JSON that is lib_json_str() (member names too): well-formed
 * UTF-8 (text_utf8(), RFC 3629 exactly) is copied, each byte that starts
 * no well-formed character becomes \ufffd, '"' and '\\' are escaped, and
 * what text_printable() hides (C0, DEL, C1, U+2028/2029, bidi controls)
 * becomes \uXXXX. So every output is printable UTF-8 that strict parsers
 * and JavaScript take, and puts no control on a terminal.
 *
 * Errors are sticky, as ferror() is: a misuse (a value where an object
 * wants a name, a name in an array, a close of what is not open, nesting
 * deeper than LIB_JSON_DEPTH, a second top-level value) sets -EINVAL and
 * makes every later call a no-op; lib_json_error() and lib_json_finish()
 * say it, and -EIO once the stream has an error. So a writer of JSON
 * checks once, at the end.
 *
 * Not thread-safe (one writer, one thread); it allocates nothing. The
 * prefix is lib_json_ as lib_grow() and lib_hash64() have lib_: "json_"
 * is the namespace of the C JSON libraries (jansson's json_string(),
 * json-c's json_object_*), which a program may link with ours.
 */
#ifndef D9_LIB_JSON_H
#define D9_LIB_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Deepest nesting of objects and arrays (the chrome export needs 9). */
#define LIB_JSON_DEPTH 32

struct lib_json {
	FILE *out;
	int err;			     /* 0 or the first error, -errno */
	unsigned int depth;		     /* open objects and arrays */
	unsigned char level[LIB_JSON_DEPTH]; /* LEVEL_* flags (json.c) */
	unsigned char named;		     /* a member's name waits for its value */
	unsigned char brk;  /* lib_json_break(): a line break before the next token */
	unsigned char done; /* the top-level value is whole */
};

/* Start a document on @out. Nothing to release: lib_json_finish() ends it. */
void lib_json_init(struct lib_json *w, FILE *out);
/* The document is whole: a line break after it, then the sticky error:
 * 0, -EINVAL (a misuse, or the document is not one whole value), -EIO
 * (the stream's error). The stream is not closed. */
int lib_json_finish(struct lib_json *w);
/* The sticky error so far (0, -EINVAL, -EIO), the document left open. */
int lib_json_error(const struct lib_json *w);

/* Objects and arrays. In an object each value follows a lib_json_name(). */
void lib_json_object_begin(struct lib_json *w);
void lib_json_object_end(struct lib_json *w);
void lib_json_array_begin(struct lib_json *w);
void lib_json_array_end(struct lib_json *w);
/* The name of the next member of the open object, as lib_json_str(). */
void lib_json_name(struct lib_json *w, const char *name);

/* Values. */
void lib_json_str(struct lib_json *w, const char *s); /* NULL: null */
void lib_json_uint(struct lib_json *w, uint64_t v);
void lib_json_int(struct lib_json *w, int64_t v);
/* @v by the printf format @fmt, which takes one double and must make a
 * JSON number ("%.0f", "%.3f"); null if @v is NaN or infinite, which
 * JSON has no number for. */
void lib_json_double(struct lib_json *w, const char *fmt, double v);
void lib_json_bool(struct lib_json *w, int v);
void lib_json_null(struct lib_json *w);
/* A value formatted by the caller (a number made of parts, such as the
 * chrome export's microseconds "12.345"): written as it is, so it must be
 * a JSON number, true, false or null. Never a string of the target's. */
void lib_json_printf(struct lib_json *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A member: lib_json_name(@name) and the value. */
void lib_json_str_field(struct lib_json *w, const char *name, const char *s);
void lib_json_uint_field(struct lib_json *w, const char *name, uint64_t v);
void lib_json_int_field(struct lib_json *w, const char *name, int64_t v);
void lib_json_bool_field(struct lib_json *w, const char *name, int v);

/* Layout. lib_json_break(): the next token (a member's name, an element,
 * a close) starts a line: "\n" after its comma, `[` `,\n{...}`.
 * lib_json_newline(): "\n" here and now, before any comma. */
void lib_json_break(struct lib_json *w);
void lib_json_newline(struct lib_json *w);

#endif /* D9_LIB_JSON_H */
