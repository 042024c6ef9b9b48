/* SPDX-License-Identifier: MIT */
/*
 * window.h - --from/--to: a time as users type it, and the window of
 * CLOCK_MONOTONIC it makes once the segments read are known (window.c).
 */
#ifndef D9_ANALYSIS_WINDOW_H
#define D9_ANALYSIS_WINDOW_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "trace/trace.h"

/* A time as --from and --to take it. */
enum time_kind {
	TIME_NONE = 0,
	TIME_SINCE_START = 1, /* ns from the start of the trace read */
	TIME_OF_DAY = 2,      /* ns past local midnight, on the day the
			       * recording started (the next day if that
			       * is before the start and it ran past
			       * midnight) */
	TIME_WALL = 3,	      /* unix ns (CLOCK_REALTIME): a UTC date and
			       * time, or a duration before now */
};

struct time_spec {
	enum time_kind kind;
	uint64_t ns;
	const char *text; /* as typed, for messages */
};

/* Parse seconds from the start ("12.5", or with a unit as
 * duration_parse() reads it: "12.5s", "500ms"), a time of day
 * "HH:MM:SS[.frac]" (H 0-23), a UTC date and time "YYYY-MM-DD",
 * "YYYY-MM-DDTHH:MM[:SS][Z]" (or a space for the T), or a duration before
 * @now (unix seconds) "-DUR" ("-15m", "-2h", "-1d"; h and d are hours and
 * days here). 0, or -EINVAL (@out->text still set). */
int time_spec_parse_at(const char *s, time_t now, struct time_spec *out);
/* time_spec_parse_at() now. */
int time_spec_parse(const char *s, struct time_spec *out);
/* -1, 0 or 1 as @a is before, at or after @b; -2 when they cannot be
 * compared without the trace (a time of day may fall on the next day;
 * seconds from the start and wall-clock times are on different axes). */
int time_spec_cmp(const struct time_spec *a, const struct time_spec *b);
/* @ts for a message: "12.5 s", or a time of day as typed. Returns @buf or
 * @ts->text. */
const char *time_spec_text(const struct time_spec *ts, char *buf, size_t len);
/* @ts as a command line gives it again later: as typed, but a time
 * before now ("-5m") as the UTC time it named ("2026-11-29T04:35:12Z").
 * Returns @buf or @ts->text. */
const char *time_spec_arg(const struct time_spec *ts, char *buf, size_t len);

/* A window to read: the ctx of trace_window_resolve(). */
struct trace_window {
	struct time_spec from, to; /* TIME_NONE: unbounded */
	uint64_t origin;	   /* out: the start of the segments
				    * given (where TIME_SINCE_START
				    * counts from); 0 without a window */
	char why[256];		   /* out: why the window was refused */
};

/* The window callback of struct trace_read_opts, @ctx a struct
 * trace_window: the bounds in CLOCK_MONOTONIC ns of the segments @seg
 * (@n, in start order). Seconds count from the earliest segment start; a
 * time of day goes through the segments' wall_offset. A bound at or past
 * the trace's own becomes 0 (none). 0, or -EINVAL/-ERANGE with @ctx's why
 * set: a time of day without the wall clock in the trace, no start known
 * (a trace cut short before segments had one), --from at or past the end,
 * --to at or before the start, --from not before --to. */
int trace_window_resolve(void *ctx, const struct trace_segment *seg, size_t n,
			 uint64_t *from, uint64_t *to);
/* @ns as seconds with at most 3 decimals, no trailing zeros ("12.3",
 * "0"). Returns @buf. */
char *window_secs(uint64_t ns, char *buf, size_t len);

#endif /* D9_ANALYSIS_WINDOW_H */
