/* SPDX-License-Identifier: MIT */
/*
 * window.c - --from/--to: a time as users type it, and the window of
 * CLOCK_MONOTONIC it makes once the segments read are known.
 *
 * A time is either seconds from the start of what was read ("12.5",
 * "500ms") or a time of day ("14:03:07.25"): local time, on the day the
 * recording started, or the next day when that is before the start and
 * the recording runs past midnight. The segments carry what turns either
 * into the trace's clock: their start, and CLOCK_REALTIME - CLOCK_MONOTONIC
 * (wall_offset). The reader calls trace_window_resolve() with them
 * (struct trace_read_opts.window) before it reads a record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/labels.h"
#include "analysis/window.h"

#define NS 1000000000ULL

/* "HH:MM:SS[.frac]" into ns since midnight. 0 or -EINVAL. */
static int parse_clock(const char *s, uint64_t *ns)
{
	unsigned int h = 0, m, sec;
	uint64_t frac = 0, scale = 1;
	const char *p = s;
	int hd = 0;

	for (; *p >= '0' && *p <= '9' && hd < 2; p++, hd++)
		h = h * 10 + (unsigned int)(*p - '0');
	if (!hd || *p != ':' || p[1] < '0' || p[1] > '5' || p[2] < '0' || p[2] > '9' ||
	    p[3] != ':' || p[4] < '0' || p[4] > '5' || p[5] < '0' || p[5] > '9')
		return -EINVAL;
	m = (unsigned int)(p[1] - '0') * 10 + (unsigned int)(p[2] - '0');
	sec = (unsigned int)(p[4] - '0') * 10 + (unsigned int)(p[5] - '0');
	p += 6;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale < NS) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	}
	if (*p || h > 23)
		return -EINVAL;
	*ns = ((uint64_t)h * 3600 + m * 60 + sec) * NS + frac * (NS / scale);
	return 0;
}

/* "YYYY-MM-DD[(T| )HH:MM[:SS]][Z]" (UTC) into unix ns. 0 or -EINVAL. */
static int parse_utc(const char *s, uint64_t *ns)
{
	struct tm tm;
	const char *end;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && (*end == 'T' || *end == ' ')) {
		const char *hms = strptime(end + 1, "%H:%M:%S", &tm);

		end = hms ? hms : strptime(end + 1, "%H:%M", &tm);
	}
	if (end && *end == 'Z')
		end++;
	if (!end || *end)
		return -EINVAL;
	t = timegm(&tm);
	if (t < 0)
		return -EINVAL;
	*ns = (uint64_t)t * NS;
	return 0;
}

/* "-DUR" before @now: s, m, h or d. 0 or -EINVAL. */
static int parse_ago(const char *s, time_t now, uint64_t *ns)
{
	char *end;
	double v = strtod(s + 1, &end);
	uint64_t ago;

	if (end == s + 1 || !(v >= 0))
		return -EINVAL;
	if (!strcmp(end, "d") || !strcmp(end, "h") || !strcmp(end, "m"))
		v *= *end == 'd' ? 86400 : *end == 'h' ? 3600 : 60;
	else if (strcmp(end, "s")) /* a unit: "-1" is a typo more often */
		return -EINVAL;
	ago = (uint64_t)(v * 1e9);
	if (now < 0 || ago > (uint64_t)now * NS)
		return -EINVAL;
	*ns = (uint64_t)now * NS - ago;
	return 0;
}

int time_spec_parse(const char *s, struct time_spec *out)
{
	return time_spec_parse_at(s, time(NULL), out);
}

int time_spec_parse_at(const char *s, time_t now, struct time_spec *out)
{
	char buf[64];

	if (!s || !out || !*s)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->text = s;
	if (s[0] == '-') {
		out->kind = TIME_WALL;
		return parse_ago(s, now, &out->ns);
	}
	if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		out->kind = TIME_WALL;
		return parse_utc(s, &out->ns);
	}
	if (strchr(s, ':')) {
		out->kind = TIME_OF_DAY;
		return parse_clock(s, &out->ns);
	}
	out->kind = TIME_SINCE_START;
	if (!duration_parse(s, &out->ns))
		return 0;
	/* a bare number is seconds */
	if ((size_t)snprintf(buf, sizeof(buf), "%ss", s) >= sizeof(buf))
		return -EINVAL;
	return duration_parse(buf, &out->ns) ? -EINVAL : 0;
}

int time_spec_cmp(const struct time_spec *a, const struct time_spec *b)
{
	/* times of day may fall on either side of midnight */
	if (a->kind != b->kind || a->kind == TIME_OF_DAY || a->kind == TIME_NONE)
		return -2;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

const char *time_spec_text(const struct time_spec *ts, char *buf, size_t len)
{
	char a[32];

	if (ts->kind != TIME_SINCE_START)
		return ts->text;
	snprintf(buf, len, "%s s", window_secs(ts->ns, a, sizeof(a)));
	return buf;
}

const char *time_spec_arg(const struct time_spec *ts, char *buf, size_t len)
{
	time_t t = (time_t)(ts->ns / NS);
	struct tm tm;

	if (ts->kind != TIME_WALL || ts->text[0] != '-' || !gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return ts->text;
	return buf;
}

/* ---- the trace's extent -------------------------------------------------- */

struct extent {
	uint64_t start; /* the earliest segment start; 0 unknown */
	uint64_t end;	/* the latest end, or a lower bound of it */
	int end_known;	/* the last segment is whole */
	int64_t wall0;	/* wall_offset of the first segment with one */
	int wall;	/* one has */
	const struct trace_segment *seg;
	size_t n;
};

static void extent_of(struct extent *x, const struct trace_segment *seg, size_t n)
{
	memset(x, 0, sizeof(*x));
	x->seg = seg;
	x->n = n;
	for (size_t i = 0; i < n; i++) {
		if (seg[i].start && (!x->start || seg[i].start < x->start))
			x->start = seg[i].start;
		if (seg[i].end > x->end)
			x->end = seg[i].end;
		if (seg[i].start > x->end)
			x->end = seg[i].start;
		if (seg[i].wall_offset && !x->wall) {
			x->wall = 1;
			x->wall0 = seg[i].wall_offset;
		}
	}
	/* segments come in start order: the last one says how it ends */
	x->end_known = n && seg[n - 1].complete;
}

/* The wall-clock offset in effect at CLOCK_MONOTONIC @mono (the last
 * segment starting at or before it that has one). */
static int64_t offset_at(const struct extent *x, uint64_t mono)
{
	int64_t off = x->wall0;

	for (size_t i = 0; i < x->n && x->seg[i].start <= mono; i++)
		if (x->seg[i].wall_offset)
			off = x->seg[i].wall_offset;
	return off;
}

static int64_t to_wall(const struct extent *x, uint64_t mono)
{
	return (int64_t)mono + offset_at(x, mono);
}

/* "hh:mm:ss.mmm" (local) of CLOCK_REALTIME ns @wall. */
static char *fmt_clock(int64_t wall, char *buf, size_t len)
{
	time_t s = (time_t)(wall / (int64_t)NS);
	struct tm tm;

	if (!localtime_r(&s, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + strlen(buf), len - strlen(buf), ".%03d",
			 (int)(wall % (int64_t)NS / 1000000));
	return buf;
}

char *window_secs(uint64_t ns, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%.3f", (double)ns / 1e9);
	n = strlen(buf);
	while (n > 1 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = '\0';
	return buf;
}

/* "0 to 12.3 s, 10:00:01.200 to 10:00:13.500" */
static void coverage(const struct extent *x, char *buf, size_t len)
{
	char a[32], b[32];
	int k;

	k = snprintf(buf, len, "0 to %s%s s", x->end_known ? "" : "at least ",
		     window_secs(x->end - x->start, a, sizeof(a)));
	if (x->wall && k > 0 && (size_t)k < len)
		snprintf(buf + k, len - (size_t)k, ", %s to %s",
			 fmt_clock(to_wall(x, x->start), a, sizeof(a)),
			 fmt_clock(to_wall(x, x->end), b, sizeof(b)));
}

/* Local calendar day of CLOCK_REALTIME ns @wall, comparable. */
static long day_of(int64_t wall)
{
	time_t s = (time_t)(wall / (int64_t)NS);
	struct tm tm;

	if (!localtime_r(&s, &tm))
		return 0;
	return (long)tm.tm_year * 400 + tm.tm_yday;
}

/* CLOCK_REALTIME ns of @ns past local midnight of the day of @wall, plus
 * @days. 0 or -ERANGE. */
static int wall_on_day(int64_t wall, uint64_t ns, int days, int64_t *out)
{
	time_t s = (time_t)(wall / (int64_t)NS), t;
	struct tm tm;

	if (!localtime_r(&s, &tm))
		return -ERANGE;
	tm.tm_hour = (int)(ns / NS / 3600);
	tm.tm_min = (int)(ns / NS / 60 % 60);
	tm.tm_sec = (int)(ns / NS % 60);
	tm.tm_mday += days;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -ERANGE;
	*out = (int64_t)t * (int64_t)NS + (int64_t)(ns % NS);
	return 0;
}

/* @ts as CLOCK_MONOTONIC ns into *@mono (0 when before the trace's
 * clock began). 0, or -errno with w->why set. */
static int resolve(struct trace_window *w, const struct extent *x, const char *opt,
		   const struct time_spec *ts, uint64_t *mono)
{
	int64_t start_wall, target, m;

	if (ts->kind == TIME_SINCE_START) {
		if (ts->ns > UINT64_MAX - x->start)
			*mono = UINT64_MAX;
		else
			*mono = x->start + ts->ns;
		return 0;
	}
	if (!x->wall) {
		snprintf(
			w->why, sizeof(w->why),
			"%s %s is a wall-clock time, but the trace does not carry the "
			"wall clock (recorded by an older d9prof): give seconds from its "
			"start",
			opt, ts->text);
		return -EINVAL;
	}
	if (ts->kind == TIME_WALL) {
		target = ts->ns > INT64_MAX ? INT64_MAX : (int64_t)ts->ns;
		goto place;
	}
	start_wall = to_wall(x, x->start);
	if (wall_on_day(start_wall, ts->ns, 0, &target))
		goto range;
	/* before the start on its first day: the next day, if recorded */
	if (target < start_wall && day_of(to_wall(x, x->end)) != day_of(start_wall) &&
	    wall_on_day(start_wall, ts->ns, 1, &target))
		goto range;
place:
	/* the segment holding @target says which offset turns it back */
	m = target - x->wall0;
	m = target - offset_at(x, m > 0 ? (uint64_t)m : 0);
	*mono = m > 0 ? (uint64_t)m : 0;
	return 0;
range:
	snprintf(w->why, sizeof(w->why), "cannot place %s %s on the local clock", opt,
		 ts->text);
	return -ERANGE;
}

int trace_window_resolve(void *ctx, const struct trace_segment *seg, size_t n,
			 uint64_t *from, uint64_t *to)
{
	struct trace_window *w = ctx;
	struct extent x;
	uint64_t f = 0, t = 0;
	char cov[128], a[48], b[48];
	int err;

	w->why[0] = '\0';
	w->origin = 0;
	*from = *to = 0;
	if (w->from.kind == TIME_NONE && w->to.kind == TIME_NONE)
		return 0;
	extent_of(&x, seg, n);
	if (!x.start) {
		snprintf(
			w->why, sizeof(w->why),
			"cannot apply --from/--to: the trace does not say when it started "
			"(it was cut short)");
		return -EINVAL;
	}
	w->origin = x.start;
	coverage(&x, cov, sizeof(cov));
	if (w->from.kind != TIME_NONE) {
		err = resolve(w, &x, "--from", &w->from, &f);
		if (err)
			return err;
		if (x.end_known && f >= x.end) {
			snprintf(w->why, sizeof(w->why),
				 "--from %s is past the end of the trace (it covers %s)",
				 time_spec_text(&w->from, a, sizeof(a)), cov);
			return -ERANGE;
		}
	}
	if (w->to.kind != TIME_NONE) {
		err = resolve(w, &x, "--to", &w->to, &t);
		if (err)
			return err;
		if (t <= x.start) {
			snprintf(
				w->why, sizeof(w->why),
				"--to %s is not after the start of the trace (it covers %s)",
				time_spec_text(&w->to, a, sizeof(a)), cov);
			return -ERANGE;
		}
	}
	if (w->from.kind != TIME_NONE && w->to.kind != TIME_NONE && f >= t) {
		snprintf(w->why, sizeof(w->why), "--from %s is not before --to %s",
			 time_spec_text(&w->from, a, sizeof(a)),
			 time_spec_text(&w->to, b, sizeof(b)));
		return -EINVAL;
	}
	/* a bound at or past the trace's own is none: what lies outside its
	 * segments' times (what was open at a segment's start) stays */
	*from = f > x.start ? f : 0;
	*to = x.end_known && t >= x.end ? 0 : t;
	return 0;
}
