/* SPDX-License-Identifier: MIT */
/*
 * test_window.c - --from/--to: times as users type them, and the window
 * of CLOCK_MONOTONIC they make over a trace's segments.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "analysis/window.h"

#define MS 1000000ULL
#define S  1000000000ULL
#define T0 (1000 * S)
/* T0 is 2026-11-20 23:59:59.800 UTC */
#define WALL (INT64_C(1795219199800000000) - (int64_t)T0)

static void utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

TestSuite(window, .init = utc);

static struct time_spec parse(const char *s)
{
	struct time_spec ts;

	cr_assert_eq(time_spec_parse(s, &ts), 0, "'%s' is a time", s);
	return ts;
}

Test(window, reads_seconds_with_or_without_a_unit)
{
	cr_assert_eq(parse("12.5").ns, 12500 * MS);
	cr_assert_eq(parse("12.5").kind, TIME_SINCE_START);
	cr_assert_eq(parse("12.5s").ns, 12500 * MS);
	cr_assert_eq(parse("500ms").ns, 500 * MS);
	cr_assert_eq(parse("0").ns, 0);
}

Test(window, reads_a_time_of_day)
{
	struct time_spec ts = parse("23:59:59.9");

	cr_assert_eq(ts.kind, TIME_OF_DAY);
	cr_assert_eq(ts.ns, (23 * 3600 + 59 * 60 + 59) * S + 900 * MS);
	cr_assert_eq(parse("0:00:01").ns, S);
	cr_assert_eq(parse("00:00:00.000000001").ns, 1);
}

Test(window, refuses_what_is_not_a_time)
{
	static const char *const bad[] = {
		"",	 "x",	     "-1",	  "1e3",   "12x",	"24:00:00",
		"1:2:3", "12:60:00", "12:00:00.", "12:00", "123:00:00", "12:00:00x"};
	struct time_spec ts;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(time_spec_parse(bad[i], &ts), 0, "'%s' is not a time",
			      bad[i]);
}

/* A UTC date and time, or a duration before now: the wall clock. */
Test(window, reads_a_date_and_time_or_a_time_ago)
{
	struct time_spec ts;

	cr_assert_eq(time_spec_parse_at("2026-11-20T23:59:59.8", 0, &ts), -EINVAL);
	cr_assert_eq(time_spec_parse_at("2026-11-21T00:00:01Z", 0, &ts), 0);
	cr_assert_eq(ts.kind, TIME_WALL);
	cr_assert_eq(ts.ns, 1795219201 * S);
	cr_assert_eq(time_spec_parse_at("2026-11-21 00:00", 0, &ts), 0);
	cr_assert_eq(ts.ns, 1795219200 * S);
	cr_assert_eq(time_spec_parse_at("2026-11-21", 0, &ts), 0);
	cr_assert_eq(ts.ns, 1795219200 * S);
	cr_assert_eq(time_spec_parse_at("-2h", 1795219200, &ts), 0);
	cr_assert_eq(ts.ns, (1795219200 - 7200) * S);
	cr_assert_eq(time_spec_parse_at("-1.5m", 1795219200, &ts), 0);
	cr_assert_eq(ts.ns, (1795219200 - 90) * S);
	cr_assert_eq(time_spec_parse_at("2026-11-21T25:00", 0, &ts), -EINVAL);
	cr_assert_eq(time_spec_parse_at("-2y", 0, &ts), -EINVAL);
}

Test(window, compares_only_seconds_without_the_trace)
{
	struct time_spec a = parse("2"), b = parse("1"), c = parse("23:00:00"),
			 d = parse("01:00:00");

	cr_assert_eq(time_spec_cmp(&a, &b), 1);
	cr_assert_eq(time_spec_cmp(&b, &a), -1);
	cr_assert_eq(time_spec_cmp(&c, &d), -2, "01:00 may be the next day");
	cr_assert_eq(time_spec_cmp(&a, &c), -2);
}

/* Two segments of 3 s from T0, the wall clock in the first only; the
 * second cut short when @cut. */
static struct trace_segment segs[2];

static void two_segments(int cut)
{
	memset(segs, 0, sizeof(segs));
	segs[0] = (struct trace_segment){
		.start = T0, .end = T0 + 1500 * MS, .wall_offset = WALL, .complete = 1};
	segs[1] = (struct trace_segment){
		.start = T0 + 1500 * MS, .end = cut ? 0 : T0 + 3 * S, .complete = !cut};
}

/* What window() resolved last: the window (its why) and its bounds. */
static struct trace_window win;
static uint64_t from_ns, to_ns;

/* trace_window_resolve() of --from @from --to @to (NULL: not given) over
 * segs, into win, from_ns and to_ns. */
static int window(const char *from, const char *to)
{
	memset(&win, 0, sizeof(win));
	if (from)
		win.from = parse(from);
	if (to)
		win.to = parse(to);
	return trace_window_resolve(&win, segs, 2, &from_ns, &to_ns);
}

Test(window, counts_seconds_from_the_first_segment)
{
	two_segments(0);
	cr_assert_eq(window("0.5", "2s"), 0);
	cr_assert_eq(from_ns, T0 + 500 * MS);
	cr_assert_eq(to_ns, T0 + 2 * S);
	cr_assert_eq(win.origin, T0);
}

Test(window, leaves_bounds_at_or_past_the_trace_unset)
{
	two_segments(0);
	cr_assert_eq(window("0", "99"), 0);
	cr_assert_eq(from_ns, 0,
		     "--from 0 is no bound: what was open at the start stays");
	cr_assert_eq(to_ns, 0);
}

Test(window, places_a_time_of_day_on_the_recording_day_or_past_midnight)
{
	two_segments(0);
	cr_assert_eq(window("23:59:59.900", "00:00:01"), 0);
	cr_assert_eq(from_ns, T0 + 100 * MS);
	cr_assert_eq(to_ns, T0 + 1200 * MS, "before the start: the next day");
}

Test(window, says_a_window_outside_the_trace)
{
	two_segments(0);
	cr_assert_eq(window("99", NULL), -ERANGE);
	cr_assert_str_eq(win.why,
			 "--from 99 s is past the end of the trace (it covers 0 to "
			 "3 s, 23:59:59.800 to 00:00:02.800)");
	cr_assert_eq(window(NULL, "0"), -ERANGE);
	cr_assert_str_eq(win.why,
			 "--to 0 s is not after the start of the trace (it covers 0 "
			 "to 3 s, 23:59:59.800 to 00:00:02.800)");
	cr_assert_eq(window("00:00:01", "0.5"), -EINVAL);
	cr_assert_str_eq(win.why, "--from 00:00:01 is not before --to 0.5 s");
}

Test(window, takes_any_from_when_the_end_was_cut)
{
	two_segments(1);
	cr_assert_eq(window("99", NULL), 0);
	cr_assert_eq(from_ns, T0 + 99 * S);
	cr_assert_eq(window(NULL, "99"), 0);
	cr_assert_eq(to_ns, T0 + 99 * S, "the end is not known: the bound stays");
}

Test(window, needs_the_wall_clock_for_a_time_of_day)
{
	two_segments(0);
	segs[0].wall_offset = 0;
	cr_assert_eq(window("12:00:00", NULL), -EINVAL);
	cr_assert(strstr(win.why, "does not carry the wall clock"), "%s", win.why);
	cr_assert_eq(window("1", NULL), 0, "seconds need no wall clock");
}

Test(window, needs_a_start)
{
	two_segments(1);
	segs[0].start = segs[1].start = 0;
	segs[0].end = 0;
	cr_assert_eq(window("1", NULL), -EINVAL);
	cr_assert(strstr(win.why, "does not say when it started"), "%s", win.why);
}

Test(window, prints_seconds_short)
{
	char b[32];

	cr_assert_str_eq(window_secs(12300 * MS, b, sizeof(b)), "12.3");
	cr_assert_str_eq(window_secs(0, b, sizeof(b)), "0");
	cr_assert_str_eq(window_secs(1234567 * 1000, b, sizeof(b)), "1.235");
}

Test(window, places_a_wall_clock_time_through_the_segments)
{
	two_segments(0);
	cr_assert_eq(window("2026-11-21T00:00:00", "2026-11-21T00:00:01"), 0);
	cr_assert_eq(from_ns, T0 + 200 * MS);
	cr_assert_eq(to_ns, T0 + 1200 * MS);
}
