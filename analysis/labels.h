/* SPDX-License-Identifier: MIT */
/*
 * labels.h - how the views name and format what they show: frames as
 * flamegraphs name them, durations as users type them, thread labels,
 * cleaned names and column widths, the trace's meta values (labels.c,
 * duration.c).
 */
#ifndef D9_ANALYSIS_LABELS_H
#define D9_ANALYSIS_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Render frame @id of @t into @buf: the symbol, else "module+0xoff" (the
 * module's base name), else "0xaddr"; kernel frames end in "_[k]" (the
 * flamegraph.pl convention), inlined ones in " [inlined]". The name is
 * the target's: it is cleaned (analysis_clean_name(): controls and invalid
 * UTF-8 as '?', ';' as ':') so that no view shows a control and folded
 * output stays parseable; a label cut to fit @len keeps its suffix and
 * whole UTF-8 characters. A bad id gives "[bad frame ID]".
 * Returns @buf. */
char *analysis_frame_label(const struct trace *t, uint32_t id, char *buf, size_t len);

/* Parse a duration as users type it: a decimal number and a unit, "ns",
 * "us" (or "µs"), "ms" or "s": "100ns", "500us", "1ms", "2.5s". No sign,
 * no exponent, no spaces; a bare number is rejected (the unit is not
 * guessed). Fractions round to the nearest ns. 0 and *@ns, or -EINVAL
 * (malformed) or -ERANGE (over 2^64 ns). Defined in duration.c. */
int duration_parse(const char *s, uint64_t *ns);

/* One sample's worth of CPU, ns: 1e9 / meta "frequency"; 0 if unknown. */
double analysis_period_ns(const struct trace *t);

/* qsort()/bsearch() order of uint32_t. */
static inline int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sample weight: 0 (a writer that did not fill it in) counts as 1. */
static inline uint64_t sample_weight(const struct trace_sample *s)
{
	return s->weight ? s->weight : 1;
}

/* A table's column of durations is shown in one unit, chosen by its
 * largest value @max: us (one decimal) below 1 ms, ms (three) below 100 s,
 * else s (three); analysis_fmt_in() writes @ns in @unit, so that a
 * column's decimal points line up ("0.130ms", "48.900ms"). */
int analysis_col_unit(uint64_t max);
char *analysis_fmt_in(uint64_t ns, int unit, char *buf, size_t len);
/* A column of durations: shown in one unit (analysis_col_unit() of its
 * largest value), as wide as its widest value or its title. tcol_see()
 * each value, then tcol_fix(): the unit and the width, @extra characters
 * more for a mark after the value. */
struct tcol {
	uint64_t max;
	int unit, w;
};
void tcol_see(struct tcol *c, uint64_t ns);
void tcol_fix(struct tcol *c, const char *title, int extra);

/* Last value of meta @key, or NULL (trace__meta()'s lookup, without depending on
 * it: analysis links against the struct only). */
const char *analysis_meta(const struct trace *t, const char *key);

/* Copy @s into @buf as a single-line, ';'-free name: text_clean() (no
 * control, no invalid UTF-8, whole characters; @buf may be @s), then ';'
 * as ':'. Every name a text view shows goes through it. */
void analysis_clean_name(const char *s, char *buf, size_t len);
/* Characters (not bytes) of a UTF-8 string, for column padding. */
size_t analysis_u8_width(const char *s);
/* Cut UTF-8 @s in place after its first @w characters. */
void analysis_u8_cut(char *s, size_t w);
/* @name (NULL: "-") cleaned and cut to @w characters (0: never) the way
 * the flamegraph cuts its labels (analysis_shorten()): a qualified name
 * keeps its own name ("ns::Type<..>::method(..)"), others lose their end
 * ("a_very_lo.."). */
void analysis_fit_name(const char *name, size_t w, char *buf, size_t len);
/* "name[tid]" of a thread of the target ("?[tid]" if unnamed), and "task
 * ID name" ("task ID" if unnamed); names cleaned. Return @buf. */
char *analysis_thread_label(const struct trace *t, uint32_t tid, char *buf, size_t len);
/* The target's command line as the trace's meta says it (cmdline,
 * command, comm or exe), or NULL. */
const char *analysis_trace_command(const struct trace *t);
/* A flamegraph's title into @buf: @title (--title) if given, else @what
 * and the target's command ("CPU flame graph: ./server"), or @what alone. */
char *analysis_svg_title(const struct trace *t, const char *title, const char *what,
			 char *buf, size_t len);

/* @s shown in at most @n characters into @out (room for strlen(s) * 3 / 2
 * + 16): templates, then parameters, then middle scopes become "..", so a
 * qualified name keeps its own name; others are cut on the right. Under 3
 * characters, nothing. 0 or -ENOMEM. (The SVG's script, flame_svg.js,
 * mirrors it.) */
int analysis_shorten(const char *s, size_t n, char *out);

#define ANALYSIS_RUNTIME_LABEL "[runtime]"
/* Run-queue time no switch the recorder kept can name (TRACE_HOLD_UNKNOWN):
 * older than the CPU's history (record/bpf/sched.h, record/cputl.h) */
#define ANALYSIS_HOLD_UNKNOWN_LABEL "[earlier than the CPU's history]"

#endif /* D9_ANALYSIS_LABELS_H */
