/* SPDX-License-Identifier: MIT */
/*
 * info.c - the work behind `d9prof info`: what a trace holds (target,
 * host, recorder, sources, the time it covers, its segments, counts,
 * losses, why it was dumped and how its target ended), computed first
 * into struct info, then rendered as text or JSON, so both say the same.
 * Nothing here joins: it reads what the reader and the meta keys say.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/stacks.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/text.h"

#define NS	    1000000000ULL
#define MAX_REASONS 8

struct gap {
	uint64_t start, end;
};

struct info {
	const struct trace *t;
	const char *input;	      /* the file of segments without one */
	uint64_t start, end;	      /* the span covered, CLOCK_MONOTONIC */
	int wall;		      /* a segment carries the wall clock */
	int64_t wall_start, wall_end; /* CLOCK_REALTIME ns */
	int64_t wall_last;	      /* the last segment's wall_offset */
	struct gap *gaps;	      /* between segments, in time order */
	size_t ngaps, gaps_cap;
	uint64_t gap_ns;
	size_t files, recordings, cut;
	const char *reasons[MAX_REASONS]; /* distinct dump reasons */
	size_t nreasons;
	const char *exit;   /* meta target_exit */
	uint64_t exit_time; /* meta target_exit_time; 0 unknown */
};

/* ---- computing ---------------------------------------------------------- */

/* Widen [lh[0], lh[1]] to @t. */
static void see(uint64_t *lh, uint64_t t)
{
	if (t < lh[0])
		lh[0] = t;
	if (t > lh[1])
		lh[1] = t;
}

static int see_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		see(ctx, s[i].time);
	return 0;
}

static int see_events(void *ctx, const struct trace_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		see(ctx, e[i].time);
	return 0;
}

/* The span: the segments' start and end, else (a trace cut short) its
 * records' first and last times, which takes a walk. */
static int span(struct info *in)
{
	const struct trace *t = in->t;
	uint64_t lh[2] = {UINT64_MAX, 0};
	int err;

	in->start = t->counters.start_time;
	in->end = t->counters.end_time;
	for (size_t i = 0; i < t->nsegments; i++) {
		const struct trace_segment *g = &t->segments[i];

		if (g->start && (!in->start || g->start < in->start))
			in->start = g->start;
		if (g->end > in->end)
			in->end = g->end;
	}
	if (t->complete && in->start)
		return 0;
	err = trace__for_each_sample(t, see_samples, lh);
	if (!err)
		err = trace__for_each_event(t, see_events, lh);
	if (err)
		return err;
	for (size_t i = 0; i < t->nswitches; i++) {
		see(lh, t->switches[i].time);
		see(lh, t->switches[i].time_in ? t->switches[i].time_in
					       : t->switches[i].time);
	}
	if (!in->start && lh[0] != UINT64_MAX)
		in->start = lh[0];
	if (lh[1] > in->end)
		in->end = lh[1];
	return 0;
}

static void wall(struct info *in)
{
	const struct trace *t = in->t;
	int64_t first = 0, last = 0;

	for (size_t i = 0; i < t->nsegments; i++)
		if (t->segments[i].wall_offset) {
			if (!in->wall)
				first = t->segments[i].wall_offset;
			last = t->segments[i].wall_offset;
			in->wall = 1;
		}
	in->wall_start = (int64_t)in->start + first;
	in->wall_end = (int64_t)in->end + last;
	in->wall_last = last;
}

static int gap_cmp(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int gaps(struct info *in)
{
	const struct trace *t = in->t;

	for (size_t i = 0; i < t->nmeta; i++) {
		struct gap g;

		if (strcmp(t->meta[i].key, TRACE_META_SEGMENT_GAP) ||
		    analysis_meta_gap(t->meta[i].value, &g.start, &g.end))
			continue;
		if (LIB_GROW(in->gaps, in->gaps_cap, in->ngaps + 1))
			return -ENOMEM;
		in->gaps[in->ngaps++] = g;
		in->gap_ns += g.end - g.start;
	}
	if (in->ngaps > 1)
		qsort(in->gaps, in->ngaps, sizeof(*in->gaps), gap_cmp);
	return 0;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Files, recordings and segments cut short, counted over the segments
 * (in start order: a file or a recording seen before is seen again). */
static void segments(struct info *in)
{
	const struct trace *t = in->t;

	for (size_t i = 0; i < t->nsegments; i++) {
		const struct trace_segment *g = &t->segments[i];
		size_t k;

		for (k = 0; k < i && !same(t->segments[k].file, g->file); k++)
			;
		in->files += k == i;
		for (k = 0; k < i && !same(t->segments[k].recording, g->recording); k++)
			;
		in->recordings += k == i;
		in->cut += !g->complete;
	}
}

/* Does segment @s end its file (a dump's last segment, where its own
 * reason is: a later dump holding @s holds that reason too)? */
static int ends_file(const struct trace *t, const struct trace_segment *s)
{
	for (size_t i = 0; i < t->nsegments; i++) {
		const struct trace_segment *g = &t->segments[i];

		/* (file NULL: the one file of a single-file read) */
		if (g->offset > s->offset &&
		    (g->file == s->file ||
		     (g->file && s->file && !strcmp(g->file, s->file))))
			return 0;
	}
	return 1;
}

static void dump(struct info *in)
{
	const struct trace *t = in->t;
	const char *v;

	for (size_t g = 0; g < t->nsegments; g++) {
		const struct trace_segment *s = &t->segments[g];

		if (!ends_file(t, s))
			continue;
		for (size_t i = s->meta_from; i < s->meta_to && i < t->nmeta; i++) {
			size_t k;

			if (strcmp(t->meta[i].key, TRACE_META_DUMP_REASON))
				continue;
			for (k = 0;
			     k < in->nreasons && strcmp(in->reasons[k], t->meta[i].value);
			     k++)
				;
			if (k == in->nreasons && k < MAX_REASONS)
				in->reasons[in->nreasons++] = t->meta[i].value;
		}
	}
	in->exit = analysis_meta(t, TRACE_META_TARGET_EXIT);
	v = analysis_meta(t, TRACE_META_TARGET_EXIT_TIME);
	if (v)
		in->exit_time = strtoull(v, NULL, 10);
}

/* ---- shared by both forms ----------------------------------------------- */

/* A meta value that is a whole unsigned number, into *@v. 1 if it is. */
static int meta_num(const struct trace *t, const char *key, uint64_t *v)
{
	const char *s = analysis_meta(t, key);
	char *end = NULL;

	if (!s || *s < '0' || *s > '9')
		return 0;
	*v = strtoull(s, &end, 10);
	return !*end;
}

/* CLOCK_REALTIME ns @wall as local "2026-11-20 23:59:59.800 UTC" (@iso:
 * "2026-11-20T23:59:59.800+00:00"). */
static char *fmt_wall(int64_t wall, int iso, char *buf, size_t len)
{
	time_t s = (time_t)(wall / (int64_t)NS);
	char day[32], zone[16];
	struct tm tm;
	int ms = (int)(wall % (int64_t)NS / 1000000);

	if (!localtime_r(&s, &tm) ||
	    !strftime(day, sizeof(day), iso ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S",
		      &tm) ||
	    !strftime(zone, sizeof(zone), iso ? "%z" : "%Z", &tm)) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (iso && strlen(zone) == 5) /* +0100 -> +01:00 */
		snprintf(buf, len, "%s.%03d%.3s:%s", day, ms, zone, zone + 3);
	else
		snprintf(buf, len, "%s.%03d%s%s", day, ms, iso ? "" : " ", zone);
	return buf;
}

/* Seconds from the start, signed, 3 decimals. */
static char *fmt_since(const struct info *in, uint64_t t, char *buf, size_t len)
{
	snprintf(buf, len, "%.3f", ((double)t - (double)in->start) / 1e9);
	return buf;
}

static const char *seg_file(const struct info *in, const struct trace_segment *g)
{
	return g->file ? g->file : in->input;
}

/* ---- text --------------------------------------------------------------- */

/* @s as shown (text_put(): no control, no invalid UTF-8), or "unknown". */
static void put(FILE *out, const char *s)
{
	text_put(out, s && *s ? s : "unknown");
}

/* The meta of the head, in the order shown: the text before each value. */
static const struct {
	const char *text, *key;
} head_text[] = {
	{"target:      ", TRACE_META_CMDLINE},
	{" (pid ", TRACE_META_PID},
	{", comm ", TRACE_META_COMM},
	{")\nhost:        ", TRACE_META_HOSTNAME},
	{", kernel ", TRACE_META_KERNEL},
	{"\nrecorder:    ", TRACE_META_RECORDER},
	{"\nsampling:    ", TRACE_META_SAMPLER},
	{" sampler, event ", TRACE_META_EVENT},
	{", ", TRACE_META_FREQUENCY},
};

static void text_head(const struct info *in, FILE *out)
{
	const struct trace *t = in->t;
	const char *v;
	uint64_t min, lean_delay;

	for (size_t i = 0; i < sizeof(head_text) / sizeof(head_text[0]); i++) {
		fputs(head_text[i].text, out);
		put(out, analysis_meta(t, head_text[i].key));
	}
	fputs(" Hz\noff-CPU:     ", out);
	v = offcpu_missing(t);
	if (v && !t->nswitches && !analysis_meta(t, TRACE_META_OFFCPU))
		fprintf(out, "none: %s", v);
	else
		put(out, analysis_meta(t, TRACE_META_OFFCPU));
	if (meta_num(t, TRACE_META_OFFCPU_MIN, &min) && min) {
		char d[32];

		fprintf(out, "; stacks kept for intervals of %s or more (--offcpu-min)",
			text_duration(min, d, sizeof(d)));
	}
	fputs("\nwakeups:     ", out);
	v = analysis_runq_missing(t);
	if (v)
		fprintf(out, "none: %s", v);
	else
		put(out, analysis_meta(t, TRACE_META_WAKEUPS));
	fputc('\n', out);
	if (analysis_is_lean(t, &min, &lean_delay, NULL)) {
		char a[32], b[32];

		fprintf(out,
			"polls:       lean (record --lean): written when %s or longer, or "
			"woken %s or more before; every poll counted per task (%zu sums)\n",
			text_duration(min, a, sizeof(a)),
			text_duration(lean_delay, b, sizeof(b)), t->nsums);
	}
	v = analysis_meta(t, TRACE_META_TOKIO);
	if (v) {
		fputs("tasks:       zero-code, Tokio ", out);
		put(out, v);
		fputs(analysis_tokio_unpolled(t)
			      ? ": read in its threads at each sample and switch-out; no "
				"polls, wakes or spawns\n"
			      : ": read in its threads at each sample and switch-out; polls "
				"and wakes from uprobes (--tokio probes), no spawns\n",
		      out);
	}
}

static void text_span(const struct info *in, FILE *out)
{
	char a[64], b[64];

	fprintf(out, "span:        %s%s, CLOCK_MONOTONIC %.9f to %.9f s%s\n",
		in->end > in->start ? text_duration(in->end - in->start, a, sizeof(a))
				    : "0ns",
		in->t->complete ? "" : " or more", (double)in->start / 1e9,
		(double)in->end / 1e9, in->t->complete ? "" : " (its last record)");
	if (in->wall)
		fprintf(out, "wall clock:  %s to %s\n",
			fmt_wall(in->wall_start, 0, a, sizeof(a)),
			fmt_wall(in->wall_end, 0, b, sizeof(b)));
	else
		fputs("wall clock:  unknown (recorded by an older d9prof)\n", out);
}

/* One line of the segment list. */
static void text_seg(const struct info *in, const struct trace_segment *g, FILE *out)
{
	char id[64], a[32], b[32], c[32];
	size_t n;

	if (in->recordings > 1) {
		/* room kept for ':' and a 20-digit index */
		n = text_clean(g->recording ? g->recording : "?", id, sizeof(id) - 21);
		snprintf(id + n, sizeof(id) - n, ":%" PRIu64, g->index);
	} else {
		snprintf(id, sizeof(id), "%" PRIu64, g->index);
	}
	fprintf(out, "  %-9s %9s %9s %8s  ", id,
		g->start ? fmt_since(in, g->start, a, sizeof(a)) : "-",
		g->end ? fmt_since(in, g->end, b, sizeof(b)) : "-",
		g->start && g->end > g->start
			? text_duration(g->end - g->start, c, sizeof(c))
			: "-");
	put(out, seg_file(in, g));
	if (g->offset)
		fprintf(out, " @%" PRIu64, g->offset);
	fputs(g->complete ? "\n" : " (cut short)\n", out);
}

static void text_segments(const struct info *in, FILE *out)
{
	const struct trace *t = in->t;
	char a[32], b[32], c[32];
	size_t i, k = 0;

	fprintf(out, "segments:    %zu", t->nsegments);
	if (in->recordings == 1 && t->segments[0].recording) {
		fputs(" of recording ", out);
		put(out, t->segments[0].recording);
	} else if (in->recordings > 1) {
		fprintf(out, " of %zu recordings", in->recordings);
	}
	if (in->files > 1)
		fprintf(out, " in %zu files", in->files);
	if (t->dup_segments)
		fprintf(out, ", %zu cop%s skipped", t->dup_segments,
			t->dup_segments == 1 ? "y" : "ies");
	if (in->ngaps)
		fprintf(out, ", %zu gap%s (%s not recorded)", in->ngaps,
			in->ngaps == 1 ? "" : "s",
			text_duration(in->gap_ns, a, sizeof(a)));
	if (in->cut && t->nsegments == 1)
		fputs(", cut short", out);
	else if (in->cut)
		fprintf(out, ", %zu cut short", in->cut);
	fputc('\n', out);
	if (t->nsegments < 2 && !in->ngaps)
		return;
	fprintf(out, "  %-9s %9s %9s %8s  %s\n", "SEGMENT", "START", "END", "LENGTH",
		"FILE");
	for (i = 0; i < t->nsegments; i++) {
		for (; k < in->ngaps && in->gaps[k].start <= t->segments[i].start; k++)
			fprintf(out, "  %-9s %9s %9s %8s  (not recorded)\n", "gap",
				fmt_since(in, in->gaps[k].start, a, sizeof(a)),
				fmt_since(in, in->gaps[k].end, b, sizeof(b)),
				text_duration(in->gaps[k].end - in->gaps[k].start, c,
					      sizeof(c)));
		text_seg(in, &t->segments[i], out);
	}
}

/* "1 frame" or "2 frames", then @sep. */
static void count(FILE *out, size_t n, const char *what, const char *sep)
{
	fprintf(out, "%zu %s%s%s", n, what, n == 1 ? "" : "s", sep);
}

/* Poll site @v ("MODULE\tNAME...") split: the module's length in *@mlen,
 * the innermost function returned (up to the next tab). */
static const char *site_split(const char *v, size_t *mlen)
{
	const char *tab = strchr(v, '\t');

	*mlen = (size_t)(tab - v); /* analysis_poll_sites() keeps tabbed ones */
	return tab + 1;
}

/* "run_poll (demo), ..." */
static void text_sites(const struct trace *t, FILE *out)
{
	const char *site[ANALYSIS_POLL_SITES_MAX], *m, *fn, *end, *base;
	size_t mlen, n = analysis_poll_sites(t, site, ANALYSIS_POLL_SITES_MAX);
	char buf[1024];

	for (size_t i = 0; i < n; i++) {
		m = site[i];
		fn = site_split(m, &mlen);
		end = strchr(fn, '\t');
		snprintf(buf, sizeof(buf), "%.*s",
			 (int)(end ? (size_t)(end - fn) : strlen(fn)), fn);
		fputs(i ? ", " : "poll sites:  ", out);
		put(out, buf);
		base = memrchr(m, '/', mlen);
		base = base ? base + 1 : m;
		snprintf(buf, sizeof(buf), "%.*s", (int)(mlen - (size_t)(base - m)),
			 base);
		fputs(" (", out);
		put(out, buf);
		fputc(')', out);
	}
	if (n)
		fputc('\n', out);
}

static void text_tail(const struct info *in, FILE *out)
{
	const struct trace *t = in->t;
	struct loss l[LOSS_KINDS];
	size_t nl = analysis_losses(t, LOSS_ALL, l);
	char a[32], b[64];

	fputs("records:     ", out);
	count(out, t->nsamples, "sample", ", ");
	count(out, t->nevents, "runtime event", ", ");
	count(out, t->nswitches, "off-CPU interval", ", ");
	count(out, t->nspans, "span record", "\nnames:       ");
	count(out, t->nthreads, "thread", ", ");
	count(out, t->ntasks, "task", ", ");
	count(out, t->ncomms, "other thread", ", ");
	count(out, t->nframes, "frame", ", ");
	count(out, t->nstacks, "stack", "\n");
	text_sites(t, out);
	if (!nl)
		fputs("lost:        nothing\n", out);
	for (size_t i = 0; i < nl; i++)
		fprintf(out, "lost:        %" PRIu64 " %s\n", l[i].count, l[i].what);
	for (size_t i = 0; i < in->nreasons; i++) {
		fputs("dumped:      ", out);
		put(out, in->reasons[i]);
		fputc('\n', out);
	}
	if (in->exit || in->exit_time) {
		fputs("target end:  ", out);
		put(out, in->exit);
		if (in->exit_time)
			fprintf(out, " at %s s",
				fmt_since(in, in->exit_time, a, sizeof(a)));
		if (in->exit_time && in->wall)
			fprintf(out, " (%s)",
				fmt_wall((int64_t)in->exit_time + in->wall_last, 0, b,
					 sizeof(b)));
		fputc('\n', out);
	}
}

/* ---- JSON --------------------------------------------------------------- */

/* A number that may be unknown (0 or missing): null then. */
static void json_num(struct lib_json *w, const char *key, int have, uint64_t v)
{
	lib_json_name(w, key);
	if (have)
		lib_json_uint(w, v);
	else
		lib_json_null(w);
}

/* Meta @key as a member: its value as a string, or with @num as a number
 * (null if it is none). */
static void json_meta(const struct info *in, const char *key, int num, struct lib_json *w)
{
	uint64_t v = 0;
	int have;

	if (num) {
		have = meta_num(in->t, key, &v);
		json_num(w, key, have, v);
	} else
		lib_json_str_field(w, key, analysis_meta(in->t, key));
}

/* "lean": its thresholds and sums, or null */
static void json_lean(const struct trace *t, struct lib_json *w)
{
	uint64_t poll, delay;

	lib_json_name(w, "lean");
	if (!analysis_is_lean(t, &poll, &delay, NULL)) {
		lib_json_null(w);
		return;
	}
	lib_json_object_begin(w);
	lib_json_uint_field(w, "poll_ns", poll);
	lib_json_uint_field(w, "delay_ns", delay);
	lib_json_uint_field(w, "sums", t->nsums);
	lib_json_object_end(w);
}

static void json_head(const struct info *in, struct lib_json *w)
{
	lib_json_name(w, "target");
	lib_json_object_begin(w);
	json_meta(in, TRACE_META_PID, 1, w);
	json_meta(in, TRACE_META_COMM, 0, w);
	json_meta(in, TRACE_META_CMDLINE, 0, w);
	lib_json_object_end(w);
	lib_json_name(w, "host");
	lib_json_object_begin(w);
	json_meta(in, TRACE_META_HOSTNAME, 0, w);
	json_meta(in, TRACE_META_KERNEL, 0, w);
	lib_json_object_end(w);
	json_meta(in, TRACE_META_RECORDER, 0, w);
	lib_json_name(w, "sampling");
	lib_json_object_begin(w);
	json_meta(in, TRACE_META_SAMPLER, 0, w);
	json_meta(in, TRACE_META_EVENT, 0, w);
	json_meta(in, TRACE_META_FREQUENCY, 1, w);
	lib_json_object_end(w);
	json_meta(in, TRACE_META_OFFCPU, 0, w);
	json_meta(in, TRACE_META_OFFCPU_MIN, 1, w);
	json_meta(in, TRACE_META_WAKEUPS, 0, w);
	json_meta(in, TRACE_META_TOKIO, 0, w);
	json_lean(in->t, w);
}

static void json_span(const struct info *in, struct lib_json *w)
{
	char a[64];

	lib_json_name(w, "span");
	lib_json_object_begin(w);
	lib_json_uint_field(w, "start_ns", in->start);
	lib_json_uint_field(w, "end_ns", in->end);
	lib_json_uint_field(w, "duration_ns",
			    in->end > in->start ? in->end - in->start : 0);
	lib_json_bool_field(w, "complete", in->t->complete);
	lib_json_str_field(w, "start_wall",
			   in->wall ? fmt_wall(in->wall_start, 1, a, sizeof(a)) : NULL);
	lib_json_str_field(w, "end_wall",
			   in->wall ? fmt_wall(in->wall_end, 1, a, sizeof(a)) : NULL);
	if (in->wall) {
		lib_json_int_field(w, "start_wall_ns", in->wall_start);
		lib_json_int_field(w, "end_wall_ns", in->wall_end);
	} else {
		json_num(w, "start_wall_ns", 0, 0);
		json_num(w, "end_wall_ns", 0, 0);
	}
	lib_json_object_end(w);
}

static void json_segments(const struct info *in, struct lib_json *w)
{
	const struct trace *t = in->t;
	size_t i;

	lib_json_name(w, "segments");
	lib_json_object_begin(w);
	lib_json_uint_field(w, "count", t->nsegments);
	lib_json_uint_field(w, "copies_skipped", t->dup_segments);
	lib_json_uint_field(w, "recordings", in->recordings);
	lib_json_uint_field(w, "files", in->files);
	lib_json_uint_field(w, "gap_ns", in->gap_ns);
	lib_json_name(w, "list");
	lib_json_array_begin(w);
	for (i = 0; i < t->nsegments; i++) {
		const struct trace_segment *g = &t->segments[i];

		lib_json_object_begin(w);
		lib_json_str_field(w, "recording", g->recording);
		lib_json_uint_field(w, "index", g->index);
		json_num(w, "start_ns", g->start != 0, g->start);
		json_num(w, "end_ns", g->end != 0, g->end);
		lib_json_str_field(w, "file", seg_file(in, g));
		lib_json_uint_field(w, "offset", g->offset);
		lib_json_bool_field(w, "complete", g->complete);
		lib_json_bool_field(w, "state_used", g->state_used);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "gaps");
	lib_json_array_begin(w);
	for (i = 0; i < in->ngaps; i++) {
		lib_json_object_begin(w);
		lib_json_uint_field(w, "start_ns", in->gaps[i].start);
		lib_json_uint_field(w, "end_ns", in->gaps[i].end);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_object_end(w);
}

static void json_tail(const struct info *in, struct lib_json *w)
{
	const struct trace *t = in->t;
	struct loss l[LOSS_KINDS];
	size_t i, nl = analysis_losses(t, LOSS_ALL, l), mlen, nsites;
	const char *site[ANALYSIS_POLL_SITES_MAX];

	lib_json_name(w, "counts");
	lib_json_object_begin(w);
	lib_json_uint_field(w, "samples", t->nsamples);
	lib_json_uint_field(w, "events", t->nevents);
	lib_json_uint_field(w, "switches", t->nswitches);
	lib_json_uint_field(w, "span_records", t->nspans);
	lib_json_uint_field(w, "threads", t->nthreads);
	lib_json_uint_field(w, "tasks", t->ntasks);
	lib_json_uint_field(w, "comms", t->ncomms);
	lib_json_uint_field(w, "frames", t->nframes);
	lib_json_uint_field(w, "stacks", t->nstacks);
	lib_json_uint_field(w, "chunks", t->chunks);
	lib_json_object_end(w);
	/* always there, {} when nothing was lost (analysis_losses_json()
	 * leaves it out) */
	lib_json_name(w, "losses");
	lib_json_object_begin(w);
	for (i = 0; i < nl; i++)
		lib_json_uint_field(w, l[i].key, l[i].count);
	lib_json_object_end(w);
	/* where stacks are cut: [{"module": ..., "functions": [innermost
	 * first, the symbol last]}] */
	lib_json_name(w, "poll_sites");
	lib_json_array_begin(w);
	nsites = analysis_poll_sites(t, site, ANALYSIS_POLL_SITES_MAX);
	for (i = 0; i < nsites; i++) {
		const char *fn = site_split(site[i], &mlen), *tab;
		char mod[4096];

		snprintf(mod, sizeof(mod), "%.*s", (int)mlen, site[i]);
		lib_json_object_begin(w);
		lib_json_str_field(w, "module", mod);
		lib_json_name(w, "functions");
		lib_json_array_begin(w);
		for (; fn; fn = tab ? tab + 1 : NULL) {
			char name[1024];

			tab = strchr(fn, '\t');
			snprintf(name, sizeof(name), "%.*s",
				 (int)(tab ? (size_t)(tab - fn) : strlen(fn)), fn);
			lib_json_str(w, name);
		}
		lib_json_array_end(w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "dump_reasons");
	lib_json_array_begin(w);
	for (i = 0; i < in->nreasons; i++)
		lib_json_str(w, in->reasons[i]);
	lib_json_array_end(w);
	lib_json_str_field(w, "target_exit", in->exit);
	json_num(w, "target_exit_ns", in->exit_time != 0, in->exit_time);
}

static int json_info(const struct info *in, FILE *out)
{
	struct lib_json w;

	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	json_head(in, &w);
	json_span(in, &w);
	json_segments(in, &w);
	json_tail(in, &w);
	lib_json_object_end(&w);
	return lib_json_finish(&w);
}

/* ---- entry points ------------------------------------------------------- */

int analysis__info(const struct trace *t, const struct info_opts *o, FILE *out)
{
	struct info in = {.t = t, .input = o ? o->input : NULL};
	int err;

	err = span(&in);
	if (!err)
		err = gaps(&in);
	if (err)
		goto out;
	wall(&in);
	segments(&in);
	dump(&in);
	if (o && o->json) {
		err = json_info(&in, out);
	} else {
		text_head(&in, out);
		text_span(&in, out);
		text_segments(&in, out);
		text_tail(&in, out);
		err = ferror(out) ? -EIO : 0;
	}
out:
	free(in.gaps);
	return err;
}

char *analysis_segments_text(const struct trace *t, char *buf, size_t len)
{
	struct info in = {.t = t};
	size_t at;
	char a[32];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (gaps(&in) || (!t->dup_segments && !in.ngaps))
		goto out;
	segments(&in);
	at = (size_t)snprintf(buf, len, "%zu segment%s from %zu file%s", t->nsegments,
			      t->nsegments == 1 ? "" : "s", in.files,
			      in.files == 1 ? "" : "s");
	if (t->dup_segments && at < len)
		at += (size_t)snprintf(buf + at, len - at, ", %zu cop%s skipped",
				       t->dup_segments,
				       t->dup_segments == 1 ? "y" : "ies");
	if (in.ngaps && at < len)
		snprintf(buf + at, len - at, ", %zu gap%s (%s not recorded)", in.ngaps,
			 in.ngaps == 1 ? "" : "s",
			 text_duration(in.gap_ns, a, sizeof(a)));
out:
	free(in.gaps);
	return buf;
}
