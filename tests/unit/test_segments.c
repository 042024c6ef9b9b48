// SPDX-License-Identifier: MIT
/*
 * test_segments.c - a trace as several self-contained segments: read
 * alone or together (one file, several files, a directory), copies and
 * gaps, the STATE of a segment's start, and the join of a segment read
 * alone matching the join of the whole.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/join.h"
#include "tests/unit/writer.h"
#include "trace/reader_int.h"
#include "trace/trace.h"

#define MS     1000000ULL
#define T0     (1000 * MS)
#define SEG_NS (100 * MS)

static int resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static char sym[64];

	(void)ctx;
	snprintf(sym, sizeof(sym), "fn_%llx", (unsigned long long)addr);
	out->sym = sym;
	out->module = "demo";
	return 0;
}

static const uint64_t cs_a[] = {0x401010, 0x401120, 0x401230};
static const uint64_t cs_b[] = {0x401500, 0x401230};

/*
 * Segment @k of recording "rec-1" ([T0 + k * SEG_NS, + SEG_NS)) on @fd:
 * thread 7 runs task 1 in polls of 30 ms every 50 ms starting at T0 + 20 ms,
 * so one poll is open across each boundary at 100 ms: its BEGIN is in the
 * segment before, and in this one's STATE. A sample every 10 ms, stack a
 * inside polls and b outside.
 */
static void write_segment(int fd, unsigned k)
{
	struct trace_writer *w = new_writer(fd);
	uint64_t start = T0 + k * SEG_NS, end = start + SEG_NS;
	struct trace_counters c = {
		.start_time = start, .end_time = end, .lost_samples = 1};
	uint32_t sa, sb;
	char v[32];

	cr_assert_not_null(w);
	snprintf(v, sizeof(v), "%u", k);
	cr_assert_eq(trace_writer__meta(w, "recording", "rec-1"), 0);
	cr_assert_eq(trace_writer__meta(w, "segment", v), 0);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)start);
	cr_assert_eq(trace_writer__meta(w, "segment_start", v), 0);
	cr_assert_eq(trace_writer__meta(w, "pid", "7"), 0);
	cr_assert_eq(trace_writer__thread(w, 7, "worker"), 0);
	cr_assert_eq(trace_writer__task(w, 1, "ticker"), 0);
	/* the poll open at the start: polls begin at 20 + 50 n ms */
	for (uint64_t b = T0 + 20 * MS; b < start; b += 50 * MS)
		if (b + 30 * MS >= start) { /* its END at start is this segment's */
			struct trace_event st = {.time = b,
						 .task = 1,
						 .tid = 7,
						 .type = TRACE_EV_POLL_BEGIN};

			cr_assert_eq(trace_writer__state(w, &st, 1), 0);
		}
	/* stack b first in odd segments: ids differ between segments */
	if (k & 1) {
		cr_assert_eq(trace_writer__stack(w, cs_b, 2, &sb), 0);
		cr_assert_eq(trace_writer__stack(w, cs_a, 3, &sa), 0);
	} else {
		cr_assert_eq(trace_writer__stack(w, cs_a, 3, &sa), 0);
		cr_assert_eq(trace_writer__stack(w, cs_b, 2, &sb), 0);
	}
	for (uint64_t t = start; t < end; t += MS) {
		uint64_t rel = (t - T0) % (50 * MS);

		if (t >= T0 + 20 * MS && rel == 20 * MS) {
			struct trace_event e = {.time = t,
						.task = 1,
						.tid = 7,
						.type = TRACE_EV_POLL_BEGIN};
			cr_assert_eq(trace_writer__event(w, &e), 0);
		}
		if (t > T0 + 20 * MS && rel == 0) {
			struct trace_event e = {.time = t,
						.task = 1,
						.tid = 7,
						.type = TRACE_EV_POLL_END};
			cr_assert_eq(trace_writer__event(w, &e), 0);
		}
		if ((t - start) % (10 * MS) == 5 * MS) {
			int in = t >= T0 + 20 * MS && rel > 20 * MS;
			struct trace_sample s = {.time = t,
						 .tid = 7,
						 .stack = in ? sa : sb,
						 .weight = 1,
						 .sampler = TRACE_SAMPLER_PERF};

			cr_assert_eq(trace_writer__sample(w, &s), 0);
		}
	}
	cr_assert_eq(trace_writer__finish(w, resolve, NULL, &c), 0);
	trace_writer__free(w);
}

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/d9seg-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A file in the test's directory holding segments @first..@last. */
static char *file_of(const char *name, unsigned first, unsigned last)
{
	char *p = malloc(256);
	int fd;

	cr_assert_not_null(p);
	snprintf(p, 256, "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	for (unsigned k = first; k <= last; k++)
		write_segment(fd, k);
	close(fd);
	return p;
}

static struct trace *read1(const char *path, unsigned flags)
{
	struct trace_read_opts o = {.flags = flags};
	struct trace *t = NULL;
	const char *msg = NULL;
	int err = trace__read_paths(&path, 1, &o, &t, &msg);

	cr_assert_eq(err, 0, "%s: %s", path, msg ? msg : strerror(-err));
	return t;
}

static size_t count_events(const struct trace *t, uint32_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nevents; i++)
		n += t->events[i].type == type;
	return n;
}

TestSuite(segments, .init = setup, .fini = teardown);

Test(segments, back_to_back_segments_read_as_one_trace_with_shared_ids)
{
	char *p = file_of("dump.data", 0, 2);
	struct trace *t = read1(p, 0);

	cr_assert_eq(t->nsegments, 3);
	cr_assert(t->complete);
	cr_assert_eq(t->dup_segments, 0);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(t->segments[i].index, i);
		cr_assert_str_eq(t->segments[i].recording, "rec-1");
		cr_assert_eq(t->segments[i].start, T0 + i * SEG_NS);
		cr_assert_eq(t->segments[i].end, T0 + (i + 1) * SEG_NS);
		/* only the first needs what was open at its start */
		cr_assert_eq(t->segments[i].state_used, i == 0);
	}
	/* one frame per address and one stack per callchain across them */
	cr_assert_eq(t->nframes, 4);
	cr_assert_eq(t->nstacks, 2);
	cr_assert_eq(t->nsamples, 30);
	for (size_t i = 0; i < t->nsamples; i++) {
		uint32_t s = t->samples[i].stack;
		uint32_t depth = t->stack_off[s + 1] - t->stack_off[s];
		uint64_t leaf = t->frames[t->stack_frames[t->stack_off[s]]].addr;

		cr_assert(depth == 3 ? leaf == cs_a[0] : leaf == cs_b[0]);
		cr_assert_not_null(t->frames[t->stack_frames[t->stack_off[s]]].sym);
	}
	/* the STATE copies of segments 1 and 2 are not read twice: begins at
	 * 20, 70, ... 270, ends at 50, ... 250 */
	cr_assert_eq(count_events(t, TRACE_EV_POLL_BEGIN), 6);
	cr_assert_eq(count_events(t, TRACE_EV_POLL_END), 5);
	cr_assert_eq(t->counters.start_time, T0);
	cr_assert_eq(t->counters.end_time, T0 + 3 * SEG_NS);
	cr_assert_eq(t->counters.lost_samples, 3);
	cr_assert_eq(t->counters.samples, 30);
	cr_assert_null(trace__meta(t, "segment_gap"));
	trace__free(t);
	free(p);
}

Test(segments, a_segment_alone_starts_from_its_state)
{
	char *p = file_of("1.d9", 1, 1);
	struct trace *t = read1(p, 0);

	cr_assert_eq(t->nsegments, 1);
	cr_assert(t->segments[0].state_used);
	/* the poll open at its start (100 ms) began at 70 ms */
	cr_assert_eq(t->events[0].type, TRACE_EV_POLL_BEGIN);
	cr_assert_eq(t->events[0].time, T0 + 70 * MS);
	cr_assert_eq(count_events(t, TRACE_EV_POLL_BEGIN), 3); /* 70, 120, 170 */
	cr_assert_eq(count_events(t, TRACE_EV_POLL_END), 2);
	cr_assert_eq(t->counters.events, t->nevents - 1,
		     "STATE is not counted as recorded");
	trace__free(t);
	free(p);
}

Test(segments, files_in_any_order_and_overlapping_dumps_read_each_segment_once)
{
	char *a = file_of("b-late.data", 1, 3), *b = file_of("a-early.data", 0, 2);
	struct trace *t = read1(dir, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS);

	cr_assert_eq(t->nsegments, 4);
	cr_assert_eq(t->dup_segments, 2);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(t->segments[i].index, i);
	cr_assert_eq(t->counters.samples, 40);
	cr_assert_eq(t->counters.lost_samples, 4);
	cr_assert_null(trace__meta(t, "segment_gap"));
	trace__free(t);
	free(a);
	free(b);
}

Test(segments, a_missing_segment_is_a_gap_and_the_next_starts_from_its_state)
{
	char *a = file_of("0.d9", 0, 0), *b = file_of("2.d9", 2, 2);
	const char *paths[] = {b, a};
	struct trace *t = NULL;
	const char *msg = NULL;
	char want[64];

	cr_assert_eq(trace__read_paths(paths, 2, NULL, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->nsegments, 2);
	cr_assert_eq(t->segments[0].index, 0);
	cr_assert_eq(t->segments[1].index, 2);
	cr_assert(t->segments[1].state_used);
	snprintf(want, sizeof(want), "%llu-%llu", (unsigned long long)(T0 + SEG_NS),
		 (unsigned long long)(T0 + 2 * SEG_NS));
	cr_assert_str_eq(trace__meta(t, "segment_gap"), want);
	trace__free(t);
	free(a);
	free(b);
}

static int window_ms(void *ctx, const struct trace_segment *seg, size_t n, uint64_t *from,
		     uint64_t *to)
{
	const uint64_t *ms = ctx;

	cr_assert_gt(n, 0);
	*from = seg[0].start + ms[0] * MS;
	*to = seg[0].start + ms[1] * MS;
	return 0;
}

struct seen {
	size_t n;
	uint64_t lo, hi;
};

static int see(void *ctx, const struct trace_sample *s, size_t n)
{
	struct seen *x = ctx;

	for (size_t i = 0; i < n; i++) {
		x->lo = x->n ? (s[i].time < x->lo ? s[i].time : x->lo) : s[i].time;
		x->hi = s[i].time > x->hi ? s[i].time : x->hi;
		x->n++;
	}
	return 0;
}

Test(segments, a_window_keeps_its_records_loaded_or_walked)
{
	char *p = file_of("dump.data", 0, 2);
	const uint64_t ms[2] = {150, 210};
	struct trace_read_opts o = {.window = window_ms, .ctx = (void *)ms};
	const char *path = p;
	struct trace *t = NULL;
	struct seen x = {0};

	cr_assert_eq(trace__read_paths(&path, 1, &o, &t, NULL), 0);
	cr_assert_eq(t->nsamples, 6); /* 155 .. 205 */
	cr_assert_eq(t->counters.start_time, T0 + 150 * MS);
	cr_assert_eq(t->counters.end_time, T0 + 210 * MS);
	trace__free(t);

	o.flags = TRACE_READ_NO_SAMPLES;
	cr_assert_eq(trace__read_paths(&path, 1, &o, &t, NULL), 0);
	cr_assert_eq(trace__for_each_sample(t, see, &x), 0);
	cr_assert_eq(x.n, 6);
	cr_assert_eq(x.lo, T0 + 155 * MS);
	cr_assert_eq(x.hi, T0 + 205 * MS);
	trace__free(t);
	free(p);
}

Test(segments, a_directory_without_traces_says_so)
{
	struct trace *t = NULL;
	const char *msg = NULL;

	cr_assert_eq(trace__read(dir, &t, &msg), -ENOENT);
	cr_assert_null(t);
	cr_assert(msg && strstr(msg, "no trace files"), "%s", msg ? msg : "(null)");
}

/* The polls that end in [lo, hi) (not cut by the end of what was read). */
static size_t polls_in(const struct trace *t, uint64_t lo, uint64_t hi, struct poll *out,
		       size_t max)
{
	struct join *j = NULL;
	size_t n = 0;

	cr_assert_eq(join__new(t, JOIN_POLL_LIST, &j), 0);
	for (size_t i = 0; i < j->npolls && n < max; i++)
		if (j->polls[i].end >= lo && j->polls[i].end < hi &&
		    !j->polls[i].open_end)
			out[n++] = j->polls[i];
	join__free(j);
	return n;
}

Test(segments, a_segment_read_alone_joins_as_the_whole)
{
	char *whole = file_of("dump.data", 0, 2), *one = file_of("1.d9", 1, 1);
	struct trace *tw = read1(whole, 0), *t1 = read1(one, 0);
	struct poll pw[8], p1[8];
	size_t nw = polls_in(tw, T0 + SEG_NS, T0 + 2 * SEG_NS, pw, 8);
	size_t n1 = polls_in(t1, T0 + SEG_NS, T0 + 2 * SEG_NS, p1, 8);

	cr_assert_eq(nw, 2); /* 70-100 (across the start), 120-150 */
	cr_assert_eq(n1, nw);
	for (size_t i = 0; i < nw; i++) {
		cr_assert_eq(p1[i].start, pw[i].start);
		cr_assert_eq(p1[i].end, pw[i].end);
		cr_assert_eq(p1[i].tid, pw[i].tid);
		cr_assert_eq(p1[i].task, pw[i].task);
		cr_assert_eq(p1[i].open_start, 0);
	}
	/* samples: the segment's own (the first poll's are in segment 0) */
	cr_assert_eq(p1[1].samples, pw[1].samples);
	cr_assert_eq(p1[1].samples, 3);
	cr_assert_eq(p1[0].start, T0 + 70 * MS,
		     "the poll open at the start begins where it did");
	trace__free(tw);
	trace__free(t1);
	free(whole);
	free(one);
}

/* Ten flushes a 100 ms apart, each with its samples and events (a poll
 * crossing each flush), as the recorder writes a trace. */
static char *file_of_flushes(void)
{
	char *p = malloc(256);
	struct trace_counters c = {.start_time = T0, .end_time = T0 + 1000 * MS};
	struct trace_writer *w;
	uint32_t st;
	int fd;

	cr_assert_not_null(p);
	snprintf(p, 256, "%s/flushes.data", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	w = new_writer(fd);
	cr_assert_eq(trace_writer__stack(w, cs_a, 3, &st), 0);
	for (uint64_t f = 0; f < 10; f++) {
		uint64_t a = T0 + f * 100 * MS;

		for (uint64_t k = 0; k < 10; k++) {
			struct trace_sample x = {.time = a + k * 10 * MS + 1,
						 .tid = 7,
						 .stack = st,
						 .weight = 1,
						 .sampler = TRACE_SAMPLER_PERF};
			struct trace_event e = {.time = a + k * 10 * MS + 95 * MS / 10,
						.task = 1 + k % 3,
						.tid = 7,
						.type = TRACE_EV_POLL_BEGIN};

			cr_assert_eq(trace_writer__sample(w, &x), 0);
			cr_assert_eq(trace_writer__event(w, &e), 0);
			e.time += MS;
			e.type = TRACE_EV_POLL_END;
			cr_assert_eq(trace_writer__event(w, &e), 0);
		}
		cr_assert_eq(trace_writer__flush(w), 0);
	}
	cr_assert_eq(trace_writer__finish(w, resolve, NULL, &c), 0);
	trace_writer__free(w);
	close(fd);
	return p;
}

static int see_events(void *ctx, const struct trace_event *e, size_t n)
{
	struct seen *x = ctx;

	for (size_t i = 0; i < n; i++) {
		x->lo = x->n ? (e[i].time < x->lo ? e[i].time : x->lo) : e[i].time;
		x->hi = e[i].time > x->hi ? e[i].time : x->hi;
		x->n++;
	}
	return 0;
}

Test(segments, a_window_skips_the_chunks_the_index_puts_outside_it)
{
	char *p = file_of_flushes();
	const uint64_t ms[2] = {330, 520};
	struct trace_read_opts o = {.window = window_ms, .ctx = (void *)ms};
	const char *path = p;
	struct trace *t = NULL;
	struct seen ls = {0}, le = {0}, ws = {0}, we = {0};
	size_t timed = 0, outside = 0;

	/* loaded, the window read record by record */
	cr_assert_eq(trace__read_paths(&path, 1, &o, &t, NULL), 0);
	cr_assert_eq(trace__for_each_sample(t, see, &ls), 0);
	cr_assert_eq(trace__for_each_event(t, see_events, &le), 0);
	trace__free(t);
	/* walked: the same records, most chunks never read */
	o.flags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	cr_assert_eq(trace__read_paths(&path, 1, &o, &t, NULL), 0);
	cr_assert_eq(trace__for_each_sample(t, see, &ws), 0);
	cr_assert_eq(trace__for_each_event(t, see_events, &we), 0);
	cr_assert(ls.n == ws.n && ls.lo == ws.lo && ls.hi == ws.hi, "samples %zu %zu",
		  ls.n, ws.n);
	cr_assert(le.n == we.n && le.lo == we.lo && le.hi == we.hi, "events %zu %zu",
		  le.n, we.n);
	cr_assert_eq(ws.n, 19, "330 .. 520 ms: a sample each 10 ms");
	cr_assert_eq(we.lo, T0 + 3305 * MS / 10, "the end of a poll begun before");
	for (size_t i = 0; i < t->src->samples.n + t->src->events.n; i++) {
		const struct src_chunk *k =
			i < t->src->samples.n ? &t->src->samples.v[i]
					      : &t->src->events.v[i - t->src->samples.n];

		timed += k->timed;
		outside +=
			k->timed && (k->tmax < T0 + 330 * MS || k->tmin > T0 + 520 * MS);
	}
	cr_assert_eq(timed, 20, "every samples and events chunk has its times");
	cr_assert_eq(outside, 14, "7 flushes of 10 lie outside the window");
	trace__free(t);
	free(p);
}
