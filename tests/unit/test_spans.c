/* SPDX-License-Identifier: MIT */
/*
 * test_spans.c - the application's spans and events: their trace records
 * written and read back (a window keeps the records of the spans' lives
 * before it), and span accounting on synthetic traces (a span entered on
 * several threads and tasks, nested spans, a span entered again on its
 * thread, one still open at the end, an enter without an exit and an exit
 * without an enter, an id used again, a window that spans end before or
 * cross), the span filter, the views' numbers (event sums past 64 bits)
 * and the report's command for the slowest span.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "tests/unit/view_fixture.h"
#include "tests/unit/writer.h"

#define MS 1000000ULL
#define US 1000ULL

static struct spans *SP;

static void fini(void)
{
	spans__free(SP);
	SP = NULL;
	teardown();
}

TestSuite(spans, .init = setup, .fini = fini);

static void build(void)
{
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(offcpu__new(J, 0, &OC), 0);
	cr_assert_eq(delays__new(J, NULL, &D), 0);
	cr_assert_eq(spans__new(J, OC, &SP), 0);
}

/* The instance of application id @id created @nth (0: first). */
static const struct span *inst(uint64_t id, int nth)
{
	for (size_t i = 0; i < SP->n; i++)
		if (SP->v[i].id == id && !nth--)
			return &SP->v[i];
	cr_assert_fail("no instance %d of span %" PRIu64, nth, id);
	return NULL;
}

/* ---- the trace's records ------------------------------------------------- */

static int window_40_60(void *ctx, const struct trace_segment *seg, size_t n,
			uint64_t *from, uint64_t *to)
{
	(void)ctx, (void)seg, (void)n;
	*from = 40 * MS;
	*to = 60 * MS;
	return 0;
}

Test(spans, records_are_written_and_read_back)
{
	static const struct trace_span in[] = {
		{10 * MS, 5, 4, "request", NULL, 100, TRACE_SPAN_NEW},
		{10 * MS, 5, 0, "route", "/slow", 100, TRACE_SPAN_FIELD},
		{11 * MS, 5, -42, "id", NULL, 100, TRACE_SPAN_FIELD},
		{12 * MS, 7, 0, "quick", NULL, 100, TRACE_SPAN_NEW},
		{20 * MS, 5, 0, NULL, NULL, 101, TRACE_SPAN_ENTER},
		{25 * MS, 7, 0, NULL, NULL, 100, TRACE_SPAN_CLOSE},
		{30 * MS, 0, 3, "early", NULL, 101, TRACE_SPAN_EVENT},
		{50 * MS, 0, -7, "retry", "timeout", 101, TRACE_SPAN_EVENT},
		{70 * MS, 5, 0, NULL, NULL, 101, TRACE_SPAN_EXIT},
		{80 * MS, 5, 0, NULL, NULL, 100, TRACE_SPAN_CLOSE},
		{80 * MS, 6, 0, "request", NULL, 100, TRACE_SPAN_NEW}, /* same name */
	};
	char path[] = "/tmp/d9spans-XXXXXX";
	struct trace_read_opts o = {.window = window_40_60};
	const char *err = NULL, *paths[] = {path};
	struct trace_writer *w;
	struct trace *t;
	size_t i;
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	w = new_writer(fd);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		cr_assert_eq(trace_writer__span(w, &in[i]), 0);
	cr_expect_eq(trace_writer__span(w, &(struct trace_span){.type = 7}), -EINVAL);
	cr_assert_eq(trace_writer__finish(w, NULL, NULL, NULL), 0);
	trace_writer__free(w);
	close(fd);

	cr_assert_eq(trace__read(path, &t, &err), 0, "%s", err);
	cr_assert_eq(t->nspans, sizeof(in) / sizeof(in[0]));
	for (i = 0; i < t->nspans; i++) {
		const struct trace_span *a = &in[i], *b = &t->spans[i];

		cr_expect_eq(b->time, a->time, "record %zu", i);
		cr_expect_eq(b->id, a->id, "record %zu", i);
		cr_expect_eq(b->value, a->value, "record %zu", i);
		cr_expect_eq(b->tid, a->tid, "record %zu", i);
		cr_expect_eq(b->type, a->type, "record %zu", i);
		cr_expect_str_eq(b->name ? b->name : "-", a->name ? a->name : "-");
		cr_expect_str_eq(b->text ? b->text : "-", a->text ? a->text : "-");
	}
	trace__free(t);

	/* a window keeps what is in it, and the records of the spans' lives
	 * before it (not the events before it, nothing after it): a span
	 * closed before it is seen closed */
	cr_assert_eq(trace__read_paths(paths, 1, &o, &t, &err), 0, "%s", err);
	cr_expect_eq(t->nspans, 7);
	cr_expect_eq(t->spans[4].type, TRACE_SPAN_ENTER);
	cr_expect_eq(t->spans[5].type, TRACE_SPAN_CLOSE);
	cr_expect_eq(t->spans[6].type, TRACE_SPAN_EVENT);
	cr_expect_str_eq(t->spans[6].name, "retry");
	/* ... and left out of the spans: the one entered before the window
	 * and still entered in it counts from its enter */
	cr_assert_eq(join__new(t, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(spans__new(J, NULL, &SP), 0);
	cr_assert_eq(SP->n, 1);
	cr_expect_str_eq(spans_name(&SP->v[0]), "request");
	cr_expect_eq(SP->v[0].created, 10 * MS);
	cr_expect_eq(SP->v[0].closed, 60 * MS);
	cr_expect(SP->v[0].open_end);
	cr_expect_eq(SP->v[0].entered_ns, 40 * MS);
	cr_expect_eq(SP->unmatched_exits, 0);
	spans__free(SP);
	SP = NULL;
	join__free(J);
	J = NULL;
	trace__free(t);
	unlink(path);
}

/* Each span record, as the walk gives them */
struct walked {
	struct trace_span *v;
	size_t n;
};

static int walk_spans(void *ctx, const struct trace_span *s, size_t n)
{
	struct walked *w = ctx;

	w->v = realloc(w->v, (w->n + n) * sizeof(*w->v));
	cr_assert_not_null(w->v);
	memcpy(w->v + w->n, s, n * sizeof(*s));
	w->n += n;
	return 0;
}

/* The spans of @path read with @flags, windowed by @o's */
static struct spans *spans_of(const char *path, unsigned int flags, struct trace **t,
			      struct join **j, int window)
{
	struct trace_read_opts o = {.flags = flags,
				    .window = window ? window_40_60 : NULL};
	const char *err = NULL, *paths[] = {path};
	struct spans *sp;

	cr_assert_eq(trace__read_paths(paths, 1, &o, t, &err), 0, "%s", err);
	cr_assert_eq(join__new(*t, JOIN_POLL_LIST, j), 0);
	cr_assert_eq(spans__new(*j, NULL, &sp), 0);
	return sp;
}

/* 3000 spans over 3 s on four threads, each entered and exited twice, a
 * chunk each 100 ms, thread 103's records a chunk late (in the walk's
 * window: it builds a window at a time); with @late, an EXIT 3 s late too
 * (past it: the walk starts over keeping all) */
static void write_spans_file(const char *path, int late)
{
	static struct trace_span held[3000 * 8];
	size_t nheld = 0;
	struct trace_writer *w;
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert(fd >= 0);
	w = new_writer(fd);
	for (uint64_t k = 0; k < 3000; k++) {
		uint64_t t0 = k * MS, id = 1000 + k % 500;
		uint32_t tid = 100 + (uint32_t)(k % 4);
		struct trace_span r[] = {
			{t0, id, 0, "req", NULL, tid, TRACE_SPAN_NEW},
			{t0, id, (int64_t)k, "n", NULL, tid, TRACE_SPAN_FIELD},
			{t0 + 1 * US, id, 0, NULL, NULL, tid, TRACE_SPAN_ENTER},
			{t0 + 5 * US, id, 0, NULL, NULL, tid, TRACE_SPAN_EXIT},
			{t0 + 9 * US, id, 0, NULL, NULL, tid, TRACE_SPAN_ENTER},
			{t0 + 20 * US, id, 0, NULL, NULL, tid, TRACE_SPAN_EXIT},
			{t0 + 25 * US, 0, 7, "ev", "x", tid, TRACE_SPAN_EVENT},
			{t0 + 30 * US, id, 0, NULL, NULL, tid, TRACE_SPAN_CLOSE},
		};

		for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
			if (tid == 103)
				held[nheld++] = r[i];
			else
				cr_assert_eq(trace_writer__span(w, &r[i]), 0);
		if (k % 100 == 99) {
			cr_assert_eq(trace_writer__flush(w), 0);
			/* the chunk before's, drained late */
			for (size_t i = 0; i < nheld; i++)
				cr_assert_eq(trace_writer__span(w, &held[i]), 0);
			nheld = 0;
		}
	}
	cr_assert_eq(
		trace_writer__span(w, &(struct trace_span){3500 * MS, 77, 0, "late", NULL,
							   104, TRACE_SPAN_NEW}),
		0);
	cr_assert_eq(trace_writer__flush(w), 0);
	if (late)
		cr_assert_eq(trace_writer__span(w, &(struct trace_span){1 * MS, 1000, 0,
									NULL, NULL, 104,
									TRACE_SPAN_EXIT}),
			     0);
	cr_assert_eq(trace_writer__finish(w, NULL, NULL, NULL), 0);
	trace_writer__free(w);
	close(fd);
}

Test(spans, spans_walked_from_the_file_are_those_of_the_loaded_records)
{
	char path[] = "/tmp/d9spans-walk-XXXXXX";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	for (int late = 0; late <= 1; late++) {
		write_spans_file(path, late);
		for (int window = 0; window <= 1; window++) {
			struct trace *tl, *tw;
			struct join *jl, *jw;
			struct spans *a = spans_of(path, 0, &tl, &jl, window);
			struct spans *b = spans_of(
				path, TRACE_READ_NO_EVENTS | TRACE_READ_SPANS_LATER, &tw,
				&jw, window);
			struct walked got = {0};

			cr_assert_null(tw->spans);
			cr_assert_eq(trace__for_each_span(tw, walk_spans, &got), 0);
			cr_assert_eq(got.n, tl->nspans, "window %d", window);
			for (size_t i = 0; i < got.n; i++) {
				cr_assert_eq(got.v[i].time, tl->spans[i].time,
					     "record %zu", i);
				cr_assert_eq(got.v[i].type, tl->spans[i].type,
					     "record %zu", i);
				cr_assert_eq(got.v[i].id, tl->spans[i].id, "record %zu",
					     i);
			}
			cr_assert_gt(a->n, window ? 15 : 2900);
			cr_assert_eq(b->n, a->n, "window %d", window);
			cr_assert_eq(b->nenters, a->nenters);
			cr_assert_eq(b->nevents, a->nevents);
			cr_expect_eq(b->unmatched_exits, a->unmatched_exits);
			for (size_t i = 0; i < a->n; i++) {
				cr_expect_eq(b->v[i].id, a->v[i].id, "span %zu", i);
				cr_expect_eq(b->v[i].created, a->v[i].created, "span %zu",
					     i);
				cr_expect_eq(b->v[i].closed, a->v[i].closed, "span %zu",
					     i);
				cr_expect_eq(b->v[i].entered_ns, a->v[i].entered_ns,
					     "span %zu", i);
				cr_expect_str_eq(spans_name(&b->v[i]),
						 spans_name(&a->v[i]));
				cr_expect_str_eq(b->v[i].fields ? b->v[i].fields : "-",
						 a->v[i].fields ? a->v[i].fields : "-");
			}
			for (size_t i = 0; i < a->nenters; i++) {
				const struct span_enter *x = &a->enters[i],
							*y = &b->enters[i];

				cr_expect(x->start == y->start && x->end == y->end &&
						  x->tid == y->tid &&
						  x->span == y->span && x->up == y->up &&
						  x->open_start == y->open_start &&
						  x->open_end == y->open_end,
					  "enter %zu", i);
			}
			free(got.v);
			spans__free(a);
			spans__free(b);
			join__free(jl);
			join__free(jw);
			trace__free(tl);
			trace__free(tw);
		}
	}
	unlink(path);
}

/* Segment @index of recording "r" into @fd: its meta, then @n records. */
static void segment(int fd, int index, const struct trace_span *state, size_t nstate,
		    const struct trace_span *rec, size_t n)
{
	struct trace_writer *w = new_writer(fd);
	char v[8];

	snprintf(v, sizeof(v), "%d", index);
	trace_writer__meta(w, TRACE_META_RECORDING, "r");
	trace_writer__meta(w, TRACE_META_SEGMENT, v);
	snprintf(v, sizeof(v), "%d", index * 100);
	trace_writer__meta(w, TRACE_META_SEGMENT_START, v);
	cr_assert_eq(trace_writer__span_state(w, state, nstate), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(trace_writer__span(w, &rec[i]), 0);
	cr_assert_eq(trace_writer__finish(
			     w, NULL, NULL,
			     &(struct trace_counters){.start_time = index * 100,
						      .end_time = index * 100 + 100}),
		     0);
	trace_writer__free(w);
}

Test(spans, a_segment_read_alone_knows_the_spans_open_at_its_start)
{
	/* a span created and entered in segment 0, exited and closed in 1 */
	static const struct trace_span s0[] = {
		{10, 5, 0, "request", NULL, 100, TRACE_SPAN_NEW},
		{20, 5, 0, NULL, NULL, 101, TRACE_SPAN_ENTER},
	};
	static const struct trace_span s1[] = {
		{130, 5, 0, NULL, NULL, 101, TRACE_SPAN_EXIT},
		{140, 5, 0, NULL, NULL, 100, TRACE_SPAN_CLOSE},
	};
	char a[] = "/tmp/d9spans-aXXXXXX", b[] = "/tmp/d9spans-bXXXXXX";
	const char *err = NULL, *both[] = {a, b}, *alone[] = {b};
	struct trace *t;
	int fa = mkstemp(a), fb = mkstemp(b);

	cr_assert(fa >= 0 && fb >= 0);
	segment(fa, 0, NULL, 0, s0, 2);
	segment(fb, 1, s0, 2, s1, 2); /* its state: what was open */
	close(fa);
	close(fb);
	/* alone: the state names the span and its enter */
	cr_assert_eq(trace__read_paths(alone, 1, NULL, &t, &err), 0, "%s", err);
	cr_expect_eq(t->nspans, 4);
	cr_assert_eq(join__new(t, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(spans__new(J, NULL, &SP), 0);
	cr_assert_eq(SP->n, 1);
	cr_expect_str_eq(spans_name(&SP->v[0]), "request");
	cr_expect_eq(SP->v[0].entered_ns, 110);
	cr_expect_eq(SP->v[0].closed - SP->v[0].created, 130);
	spans__free(SP);
	SP = NULL;
	join__free(J);
	J = NULL;
	trace__free(t);
	/* both: the state is not read again (one span, one enter) */
	cr_assert_eq(trace__read_paths(both, 2, NULL, &t, &err), 0, "%s", err);
	cr_expect_eq(t->nspans, 4);
	trace__free(t);
	unlink(a);
	unlink(b);
}

/* ---- accounting ------------------------------------------------------------ */

/* A request created on the client thread 30, served by task 1 on thread 10
 * (CPU, 2 samples) and task 2 on thread 11 (blocked 3 ms, then 1 ms on the
 * run queue), closed on thread 10. */
static void request(void)
{
	sy_task(&T, 1, "handler");
	sy_task(&T, 2, "db");
	sy_span(&T, 1 * MS, 30, TRACE_SPAN_NEW, 9, 0, "request", NULL);
	sy_event(&T, 1 * MS, 30, TRACE_EV_WAKE, 1);
	sy_poll(&T, 10, 1, 2 * MS, 5 * MS);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_ENTER, 9, 0, NULL, NULL);
	sy_sample(&T, 3 * MS, 10, 0, 1);
	sy_sample(&T, 4 * MS, 10, 0, 1);
	sy_sample(&T, 6 * MS, 10, 0, 1); /* after the exit */
	sy_span(&T, 5 * MS, 10, TRACE_SPAN_EXIT, 9, 0, NULL, NULL);
	sy_event(&T, 5 * MS, 10, TRACE_EV_WAKE, 2);
	sy_poll(&T, 11, 2, 7 * MS, 12 * MS);
	sy_span(&T, 7 * MS, 11, TRACE_SPAN_ENTER, 9, 0, NULL, NULL);
	sy_switch(&T, 8 * MS, 12 * MS, 11, 0, 0);
	T.switches[T.nswitches - 1].runnable = 11 * MS;
	sy_span(&T, 12 * MS, 11, TRACE_SPAN_EXIT, 9, 0, NULL, NULL);
	sy_span(&T, 14 * MS, 10, TRACE_SPAN_CLOSE, 9, 0, NULL, NULL);
	T.counters.start_time = 0;
	T.counters.end_time = 20 * MS;
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
}

Test(spans, a_span_served_by_two_tasks_on_two_threads)
{
	const struct span *s;

	request();
	build();
	cr_assert_eq(SP->n, 1);
	s = inst(9, 0);
	cr_expect_str_eq(s->name, "request");
	cr_expect_eq(s->created, 1 * MS);
	cr_expect_eq(s->closed, 14 * MS);
	cr_expect_eq(s->nenters, 2);
	cr_expect_eq(s->entered_ns, 3 * MS + 5 * MS);
	cr_expect_eq(s->samples, 2);
	cr_expect_eq(s->blocked_ns, 3 * MS);
	cr_expect_eq(s->runq_ns, 1 * MS);
	cr_expect_eq(s->open_start + s->open_end, 0);
}

Test(spans, the_slowest_instance_names_its_tasks_and_its_wait)
{
	const char *text;

	request();
	build();
	cr_assert_eq(analysis__spans(SP, OC, D,
				     &(struct spans_opts){.instances = 1, .limit = 1},
				     out),
		     0);
	text = output();
	cr_expect(strstr(text, "request  id 9  13.0ms"), "%s", text);
	cr_expect(
		strstr(text, "task 1 handler (1 poll), task 2 db (1 poll) on 2 threads"),
		"%s", text);
	cr_expect(strstr(text, "entered 8.00ms (62%)"), "%s", text);
	cr_expect(strstr(text, "blocked 3.00ms"), "%s", text);
	/* not entered 5 ms: woken 1 ms before its first poll, 2 ms before the
	 * db's */
	cr_expect(strstr(text,
			 "not entered 5.00ms (38%): woken, waiting to be polled 3.00ms"),
		  "%s", text);
}

Test(spans, nested_spans_both_count_a_sample_inside_the_inner)
{
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 1, 0, "outer", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 2, 1, "inner", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
	sy_span(&T, 3 * MS, 10, TRACE_SPAN_ENTER, 2, 0, NULL, NULL);
	sy_sample(&T, 4 * MS, 10, 0, 1);
	sy_span(&T, 5 * MS, 10, TRACE_SPAN_EXIT, 2, 0, NULL, NULL);
	sy_sample(&T, 6 * MS, 10, 0, 1);
	sy_span(&T, 7 * MS, 10, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
	sy_sample(&T, 8 * MS, 10, 0, 1);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 2, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
	build();
	cr_expect_eq(inst(1, 0)->samples, 2);
	cr_expect_eq(inst(2, 0)->samples, 1);
	cr_expect_eq(inst(2, 0)->parent, 1);
	cr_expect_str_eq(inst(2, 0)->parent_name, "outer");
	cr_expect_eq(inst(1, 0)->entered_ns, 5 * MS);
	cr_expect_eq(inst(2, 0)->entered_ns, 2 * MS);
	/* the filter: inside inner only at 4 ms, outer from 2 to 7 ms */
	cr_assert_eq(spans__select(SP, "inner", 0), 0);
	cr_expect(spans__kept_at(SP, 10, 4 * MS));
	cr_expect(!spans__kept_at(SP, 10, 6 * MS));
	cr_assert_eq(spans__select(SP, "outer", 0), 0);
	cr_expect(spans__kept_at(SP, 10, 6 * MS));
	cr_expect(!spans__kept_at(SP, 10, 8 * MS));
	cr_expect(!spans__kept_at(SP, 11, 6 * MS));
	cr_expect_eq(spans__select(SP, "outer", 9 * MS), -ENOENT);
}

/* Enters of a span re-entered on its thread pair each EXIT with the latest
 * ENTER of it there, whatever was exited in between on other threads. */
Test(spans, overlapping_enters_each_count_the_samples_they_hold)
{
	/* a's enter ends inside b's (as when an ENTER was lost and an EXIT
	 * is entered from the span's creation): not nested */
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 1, 0, "a", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 2, 0, "b", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
	sy_sample(&T, 3 * MS, 10, 0, 1);
	sy_span(&T, 4 * MS, 10, TRACE_SPAN_ENTER, 2, 0, NULL, NULL);
	sy_sample(&T, 5 * MS, 10, 0, 1);
	sy_span(&T, 6 * MS, 10, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
	sy_sample(&T, 7 * MS, 10, 0, 1);
	sy_span(&T, 8 * MS, 10, TRACE_SPAN_EXIT, 2, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 2, 0, NULL, NULL);
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
	build();
	cr_expect_eq(inst(1, 0)->samples, 2, "3 and 5 ms");
	cr_expect_eq(inst(2, 0)->samples, 2, "5 and 7 ms");
}

/* Three names, @n spans each entered once on one of two threads, of
 * durations that repeat (ties), samples every 2.3 ms. */
static void many_spans(size_t n)
{
	static const char *const names[] = {"get", "put", "del"};

	T.counters.start_time = 0;
	T.counters.end_time = (n + 100) * MS;
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t at = i * MS, dur = ((i * 7919) % 97 + 1) * 100 * US;
		uint32_t tid = 10 + (uint32_t)(i % 2);

		sy_span(&T, at, tid, TRACE_SPAN_NEW, i, 0, names[i % 3], NULL);
		sy_span(&T, at + 10 * US, tid, TRACE_SPAN_ENTER, i, 0, NULL, NULL);
		sy_span(&T, at + dur / 2, tid, TRACE_SPAN_EXIT, i, 0, NULL, NULL);
		sy_span(&T, at + dur, tid, TRACE_SPAN_CLOSE, i, 0, NULL, NULL);
	}
	for (uint64_t t = 0; t < (n + 100) * MS; t += 2300 * US)
		sy_sample(&T, t, 10 + (uint32_t)(t / (2300 * US) % 2), 0, 1);
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
}

Test(spans, what_is_kept_whole_is_the_slowest_and_rows_and_counts_are_of_all)
{
	static const struct spans_keep keeps[] = {
		{.top = 5, .name = "get"},
		{.top = 1, .over_ns = 5 * MS},
		{.top = SIZE_MAX, .min_ns = 9 * MS},
		{.name = "put"},
	};

	many_spans(3000);
	build();
	for (size_t k = 0; k < sizeof(keeps) / sizeof(keeps[0]); k++) {
		const struct spans_keep *kp = &keeps[k];
		struct spans *sp;
		uint64_t matched = 0, over = 0;
		size_t kept = 0;

		cr_assert_eq(spans__new_keep(J, OC, kp, &sp), 0);
		/* the rows: the same, whatever is kept */
		cr_assert_eq(sp->nrows, SP->nrows);
		for (size_t i = 0; i < sp->nrows; i++)
			cr_expect(
				!memcmp(&sp->rows[i], &SP->rows[i], sizeof(sp->rows[i])),
				"keep %zu row %s", k, sp->rows[i].name);
		cr_expect_eq(sp->ninstances, SP->n);
		/* counted and kept: the slowest that match, first created first
		 * among equals, each as whole as with keep.all */
		for (size_t i = 0; i < SP->n; i++) {
			const struct span *s = &SP->v[i];
			uint64_t d = s->closed - s->created;
			size_t slower = 0;

			if (kp->name && strcmp(spans_name(s), kp->name))
				continue;
			if (d < kp->min_ns)
				continue;
			matched++;
			over += kp->over_ns && d >= kp->over_ns;
			for (size_t m = 0; m < SP->n; m++) {
				const struct span *o = &SP->v[m];
				uint64_t od = o->closed - o->created;

				if ((!kp->name || !strcmp(spans_name(o), kp->name)) &&
				    od >= kp->min_ns && (od > d || (od == d && m < i)))
					slower++;
			}
			if (slower >= kp->top)
				continue;
			cr_assert_lt(kept, sp->n, "keep %zu: span %" PRIu64 " not kept",
				     k, s->id);
			cr_expect_eq(sp->v[kept].id, s->id, "keep %zu", k);
			cr_expect_eq(sp->v[kept].samples, s->samples);
			cr_expect_eq(sp->v[kept].entered_ns, s->entered_ns);
			cr_expect_eq(sp->v[kept].blocked_ns + sp->v[kept].runq_ns,
				     s->blocked_ns + s->runq_ns);
			for (size_t e = 0, ne = 0; e < SP->nenters; e++)
				if (SP->enters[e].span == i) {
					cr_assert_lt(ne, sp->nenters);
					while (sp->enters[ne].span != kept)
						cr_assert_lt(++ne, sp->nenters);
					cr_expect_eq(sp->enters[ne].start,
						     SP->enters[e].start);
					cr_expect_eq(sp->enters[ne].end,
						     SP->enters[e].end);
					ne++;
				}
			kept++;
		}
		cr_expect_gt(matched, 0, "keep %zu", k);
		cr_expect_eq(sp->n, kept, "keep %zu", k);
		cr_expect_eq(sp->nmatched, matched, "keep %zu", k);
		cr_expect_eq(sp->nover, over, "keep %zu", k);
		cr_expect_eq(spans__select(sp, kp->name, kp->min_ns), 0);
		cr_expect_eq(sp->nkept, matched);
		cr_expect_eq(spans__select(sp, "nope", 0), -EINVAL);
		spans__free(sp);
	}
}

Test(spans, kept_at_samples_the_spans_answer_there_as_with_all_kept)
{
	struct spans *sp;
	size_t inside = 0;

	many_spans(3000);
	/* nested in a long one on thread 10 */
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 9999, 0, "conn", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_ENTER, 9999, 0, NULL, NULL);
	sy_span(&T, 2000 * MS, 10, TRACE_SPAN_EXIT, 9999, 0, NULL, NULL);
	sy_span(&T, 2000 * MS, 10, TRACE_SPAN_CLOSE, 9999, 0, NULL, NULL);
	build();
	cr_assert_eq(spans__new_keep(J, OC,
				     &(struct spans_keep){
					     .at = 1, .name = "get", .min_ns = 5 * MS},
				     &sp),
		     0);
	cr_expect_lt(sp->n, SP->n * 3 / 4, "only those entered at a sample: %zu of %zu",
		     sp->n, SP->n);
	cr_assert_eq(spans__select(SP, "get", 5 * MS), 0);
	cr_assert_eq(spans__select(sp, "get", 5 * MS), 0);
	cr_expect_eq(sp->nkept, SP->nkept, "counted, kept or not");
	for (size_t i = 0; i < T.nsamples; i++) {
		const struct trace_sample *x = &T.samples[i];
		int32_t a = spans__at(SP, x->tid, x->time),
			b = spans__at(sp, x->tid, x->time);

		cr_assert_eq(a < 0, b < 0, "sample %zu", i);
		if (a >= 0)
			cr_assert_eq(SP->v[a].id, sp->v[b].id, "sample %zu", i);
		cr_assert_eq(spans__kept_at(SP, x->tid, x->time),
			     spans__kept_at(sp, x->tid, x->time), "sample %zu", i);
		inside += spans__kept_at(sp, x->tid, x->time);
	}
	cr_expect_gt(inside, 50, "%zu", inside);
	spans__free(sp);
}

/* 200k spans entered on one thread and exited oldest first: each EXIT
 * found at once (it was a scan and a move of all those open: minutes),
 * past SPANS_OPEN_MAX open the rest counted and left out. */
Test(spans, many_open_enters_on_a_thread_cost_no_square_and_are_capped, .timeout = 20)
{
	const uint64_t n = 200000;

	T.counters.start_time = 0;
	T.counters.end_time = 10 * n * US;
	for (uint64_t i = 1; i <= n; i++) {
		sy_span(&T, i * US, 10, TRACE_SPAN_NEW, i, 0, "ws", NULL);
		sy_span(&T, i * US, 10, TRACE_SPAN_ENTER, i, 0, NULL, NULL);
	}
	for (uint64_t i = 1; i <= n; i++)
		sy_span(&T, (n + i) * US, 10, TRACE_SPAN_EXIT, i, 0, NULL, NULL);
	for (uint64_t i = 1; i <= n; i++)
		sy_span(&T, (2 * n + i) * US, 10, TRACE_SPAN_CLOSE, i, 0, NULL, NULL);
	build();
	cr_assert_eq(SP->n, n);
	cr_expect_eq(SP->enters_refused, n - SPANS_OPEN_MAX);
	cr_expect_eq(SP->unmatched_exits, 0, "the EXITs of those left out too");
	cr_expect_eq(SP->nenters, SPANS_OPEN_MAX);
	cr_expect_eq(inst(1, 0)->entered_ns, n * US);
	cr_expect_eq(inst(SPANS_OPEN_MAX + 1, 0)->nenters, 0);
	cr_assert_eq(analysis__spans(SP, OC, D, &(struct spans_opts){0}, out), 0);
	cr_expect(strstr(output(),
			 "# 195904 enters left out: more than 4096 open at once "
			 "on one thread"),
		  "%s", output());
}

/* The chrome export's cut: counted first (hists), then built again
 * keeping the enters and lives longer than its thresholds, and those at
 * samples: every one of them, as with all kept. */
Test(spans, the_longer_enters_and_lives_are_kept_and_counted)
{
	const struct spans_keep k = {
		.at = 1, .longer = 1, .enter_longer_ns = 2 * MS, .longer_ns = 5 * MS};
	struct spans *sp, *counted;
	size_t longer = 0, lives = 0;

	many_spans(3000);
	build();
	cr_assert_eq(spans__new_keep(J, OC, &(struct spans_keep){.at = 1, .hists = 1},
				     &counted),
		     0);
	cr_expect_eq(counted->nenters_all, SP->nenters);
	cr_expect_eq(counted->enter_hist.n, SP->nenters);
	cr_expect_eq(counted->life_hist.n, SP->n);
	spans__free(counted);
	cr_assert_eq(spans__new_keep(J, OC, &k, &sp), 0);
	for (size_t i = 0; i < SP->nenters; i++) {
		const struct span_enter *e = &SP->enters[i];
		int found = 0;

		if (e->end - e->start <= k.enter_longer_ns)
			continue;
		longer++;
		for (size_t m = 0; m < sp->nenters && !found; m++)
			found = sp->enters[m].start == e->start &&
				sp->enters[m].tid == e->tid &&
				sp->v[sp->enters[m].span].id == SP->v[e->span].id;
		cr_expect(found, "enter %zu", i);
	}
	for (size_t i = 0; i < SP->n; i++) {
		int found = 0;

		if (SP->v[i].closed - SP->v[i].created <= k.longer_ns)
			continue;
		lives++;
		for (size_t m = 0; m < sp->n && !found; m++)
			found = sp->v[m].id == SP->v[i].id;
		cr_expect(found, "span %" PRIu64, SP->v[i].id);
	}
	cr_expect_gt(longer, 100);
	cr_expect_gt(lives, 100);
	cr_expect_lt(sp->n, SP->n);
	spans__free(sp);
}

Test(spans, a_span_entered_again_on_its_thread_pairs_each_exit_with_its_latest_enter)
{
	const struct span_enter *a_out = NULL, *a_in = NULL, *c = NULL;

	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 1, 0, "A", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 2, 0, "B", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 3, 0, "C", NULL);
	sy_span(&T, 1 * MS, 11, TRACE_SPAN_ENTER, 2, 0, NULL, NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
	sy_span(&T, 3 * MS, 10, TRACE_SPAN_ENTER, 3, 0, NULL, NULL); /* between */
	sy_span(&T, 4 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL); /* again */
	sy_span(&T, 5 * MS, 11, TRACE_SPAN_EXIT, 2, 0, NULL, NULL);
	sy_span(&T, 6 * MS, 10, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
	sy_sample(&T, 6500 * US, 10, 0, 1);
	sy_span(&T, 7 * MS, 10, TRACE_SPAN_EXIT, 3, 0, NULL, NULL);
	sy_span(&T, 8 * MS, 10, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 2, 0, NULL, NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 3, 0, NULL, NULL);
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
	build();
	cr_assert_eq(SP->nenters, 4);
	for (size_t i = 0; i < SP->nenters; i++) {
		const struct span_enter *e = &SP->enters[i];

		if (e->tid != 10)
			continue;
		if (SP->v[e->span].id == 3)
			c = e;
		else if (e->start == 2 * MS)
			a_out = e;
		else
			a_in = e;
	}
	cr_assert(a_out && a_in && c);
	cr_expect_eq(a_out->end, 8 * MS, "the first enter of A exits last");
	cr_expect_eq(a_in->start, 4 * MS);
	cr_expect_eq(a_in->end, 6 * MS);
	cr_expect_eq(c->start, 3 * MS);
	cr_expect_eq(c->end, 7 * MS);
	/* A inside C inside A */
	cr_expect_eq(&SP->enters[a_in->up], c);
	cr_expect_eq(&SP->enters[c->up], a_out);
	cr_expect_eq(inst(1, 0)->entered_ns, 8 * MS);
	/* at 6.5 ms thread 10 is in C (3-7 ms) and in A (2-8 ms) */
	cr_expect_eq(inst(3, 0)->samples, 1);
	cr_expect_eq(inst(1, 0)->samples, 1);
	cr_expect_eq(SP->unmatched_exits, 0);
}

/* A window from 40 to 60 ms, as trace__read_paths() leaves it: the
 * records of the spans' lives before it kept, the recording span the
 * window's, the segment read from 1 ms. */
static struct trace_segment seg0;

static void window_40_60_read(void)
{
	seg0 = (struct trace_segment){.start = 1 * MS, .end = 100 * MS, .complete = 1};
	T.segments = &seg0;
	T.nsegments = 1;
	T.from = 40 * MS;
	T.to = 60 * MS;
	T.counters.start_time = 40 * MS;
	T.counters.end_time = 60 * MS;
}

Test(spans, a_window_leaves_out_spans_closed_before_it_and_keeps_whole_the_ones_in_it)
{
	const struct span *s;
	const char *text;

	window_40_60_read();
	/* closed before the window: left out, with its child's link */
	sy_span(&T, 5 * MS, 10, TRACE_SPAN_NEW, 3, 0, "parent", NULL);
	sy_span(&T, 6 * MS, 10, TRACE_SPAN_NEW, 4, 3, "child", NULL);
	sy_span(&T, 8 * MS, 10, TRACE_SPAN_NEW, 5, 0, "outer", NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_NEW, 6, 5, "inner", NULL);
	sy_span(&T, 10 * MS, 10, TRACE_SPAN_NEW, 1, 0, "before", NULL);
	sy_span(&T, 12 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
	sy_span(&T, 15 * MS, 10, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
	sy_span(&T, 20 * MS, 10, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
	sy_span(&T, 20 * MS, 10, TRACE_SPAN_CLOSE, 3, 0, NULL, NULL);
	/* created and entered before it, exited and closed in it */
	sy_span(&T, 30 * MS, 11, TRACE_SPAN_NEW, 2, 0, "across", NULL);
	sy_span(&T, 35 * MS, 11, TRACE_SPAN_ENTER, 2, 0, NULL, NULL);
	sy_sample(&T, 42 * MS, 11, 0, 1);
	sy_span(&T, 45 * MS, 11, TRACE_SPAN_EXIT, 2, 0, NULL, NULL);
	sy_span(&T, 45 * MS, 10, TRACE_SPAN_CLOSE, 4, 0, NULL, NULL);
	sy_span(&T, 50 * MS, 11, TRACE_SPAN_CLOSE, 2, 0, NULL, NULL);
	/* created before the recording, entered since the records began */
	sy_span(&T, 30 * MS, 12, TRACE_SPAN_EXIT, 7, 0, NULL, NULL);
	sy_span(&T, 50 * MS, 12, TRACE_SPAN_CLOSE, 7, 0, NULL, NULL);
	/* never closed */
	sy_span(&T, 38 * MS, 13, TRACE_SPAN_NEW, 8, 0, "open", NULL);
	sy_span(&T, 55 * MS, 10, TRACE_SPAN_CLOSE, 6, 0, NULL, NULL);
	sy_span(&T, 55 * MS, 10, TRACE_SPAN_CLOSE, 5, 0, NULL, NULL);
	sy_stack(&T, 1, sy_frame(&T, 0x401000, "work", "m", 0, 0));
	build();
	cr_assert_eq(SP->n, 6);
	for (size_t i = 0; i < SP->n; i++)
		cr_expect(SP->v[i].id != 1 && SP->v[i].id != 3, "span %" PRIu64 " kept",
			  SP->v[i].id);
	s = inst(2, 0);
	cr_expect_eq(s->created, 30 * MS);
	cr_expect_eq(s->closed, 50 * MS, "its own duration, not the window's");
	cr_expect_eq(s->open_start + s->open_end, 0);
	cr_expect_eq(s->nenters, 1);
	cr_expect_eq(s->entered_ns, 10 * MS);
	cr_expect_eq(s->samples, 1);
	cr_expect_eq(inst(4, 0)->parent, 0, "its parent is not in the window");
	cr_assert_neq(inst(6, 0)->parent, 0);
	cr_expect_eq(inst(6, 0)->parent, 5);
	s = inst(7, 0);
	cr_expect(s->open_start);
	cr_expect_eq(s->created, 1 * MS, "from where the segment read begins");
	cr_expect_eq(s->entered_ns, 29 * MS);
	s = inst(8, 0);
	cr_expect_eq(s->closed, 60 * MS);
	cr_expect(s->open_end);
	/* the filter of flame --span */
	cr_assert_eq(spans__select(SP, "across", 0), 0);
	cr_expect(spans__kept_at(SP, 11, 42 * MS));
	cr_expect_eq(spans__select(SP, "before", 0), -ENOENT);
	/* the rows: nothing left open that was closed */
	cr_assert_eq(analysis__spans(SP, OC, D,
				     &(struct spans_opts){.sort = SPANS_BY_NAME}, out),
		     0);
	text = output();
	cr_expect(!strstr(text, "\nbefore "), "%s", text);
	cr_expect(strstr(text, "# 6 of 6 span names, 6 spans"), "%s", text);
	cr_expect(strstr(text, "# 2 still open"), "%s", text);
}

Test(spans, what_the_trace_does_not_close_ends_at_its_end)
{
	const struct span *s;

	T.counters.start_time = 0;
	T.counters.end_time = 50 * MS;
	/* open at the end, and entered then */
	sy_span(&T, 10 * MS, 10, TRACE_SPAN_NEW, 1, 0, "open", NULL);
	sy_span(&T, 20 * MS, 10, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
	/* entered and closed without an exit */
	sy_span(&T, 10 * MS, 11, TRACE_SPAN_NEW, 2, 0, "noexit", NULL);
	sy_span(&T, 12 * MS, 11, TRACE_SPAN_ENTER, 2, 0, NULL, NULL);
	sy_span(&T, 15 * MS, 11, TRACE_SPAN_CLOSE, 2, 0, NULL, NULL);
	/* created before the recording: an exit without an enter */
	sy_span(&T, 30 * MS, 12, TRACE_SPAN_EXIT, 3, 0, NULL, NULL);
	sy_span(&T, 31 * MS, 12, TRACE_SPAN_CLOSE, 3, 0, NULL, NULL);
	build();
	cr_assert_eq(SP->n, 3);
	s = inst(1, 0);
	cr_expect_eq(s->closed, 50 * MS);
	cr_expect(s->open_end);
	cr_expect_eq(s->entered_ns, 30 * MS);
	s = inst(2, 0);
	cr_expect_eq(s->closed, 15 * MS);
	cr_expect_eq(s->entered_ns, 3 * MS);
	s = inst(3, 0);
	cr_expect_null(s->name);
	cr_expect_str_eq(spans_name(s), SPANS_UNNAMED);
	cr_expect(s->open_start);
	cr_expect_eq(s->created, 0);
	cr_expect_eq(s->entered_ns, 30 * MS);
	cr_expect_eq(SP->unmatched_exits, 1);
}

Test(spans, an_id_created_again_is_another_span)
{
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 7, 0, "a", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_CLOSE, 7, 0, NULL, NULL);
	sy_span(&T, 3 * MS, 10, TRACE_SPAN_NEW, 7, 0, "b", NULL);
	sy_span(&T, 4 * MS, 10, TRACE_SPAN_FIELD, 7, 5, "n", NULL);
	sy_span(&T, 4 * MS, 10, TRACE_SPAN_FIELD, 7, 0, "route", "/x");
	sy_span(&T, 6 * MS, 10, TRACE_SPAN_CLOSE, 7, 0, NULL, NULL);
	/* created again without a close: the first ends there */
	sy_span(&T, 7 * MS, 10, TRACE_SPAN_NEW, 7, 0, "c", NULL);
	sy_span(&T, 8 * MS, 10, TRACE_SPAN_NEW, 7, 0, "d", NULL);
	sy_span(&T, 9 * MS, 10, TRACE_SPAN_CLOSE, 7, 0, NULL, NULL);
	build();
	cr_assert_eq(SP->n, 4);
	cr_expect_str_eq(inst(7, 0)->name, "a");
	cr_expect_eq(inst(7, 0)->closed, 2 * MS);
	cr_expect_str_eq(inst(7, 1)->name, "b");
	cr_expect_str_eq(inst(7, 1)->fields, "n=5 route=/x");
	cr_expect_eq(inst(7, 1)->closed, 6 * MS);
	cr_expect_eq(inst(7, 2)->closed, 8 * MS);
	cr_expect(inst(7, 2)->open_end);
	cr_expect_eq(inst(7, 3)->closed, 9 * MS);
}

Test(spans, rows_give_each_name_its_percentiles)
{
	const char *text;

	T.counters.start_time = 0;
	T.counters.end_time = 2000 * MS;
	/* 100 "get": 1..100 ms; 10 "put": 5 ms */
	for (uint64_t i = 1; i <= 100; i++) {
		sy_span(&T, i * 10 * MS, 10, TRACE_SPAN_NEW, i, 0, "get", NULL);
		sy_span(&T, i * 10 * MS + i * MS, 10, TRACE_SPAN_CLOSE, i, 0, NULL, NULL);
	}
	for (uint64_t i = 1; i <= 10; i++) {
		sy_span(&T, 1500 * MS + i * 10 * MS, 11, TRACE_SPAN_NEW, 1000 + i, 0,
			"put", NULL);
		sy_span(&T, 1505 * MS + i * 10 * MS, 11, TRACE_SPAN_CLOSE, 1000 + i, 0,
			NULL, NULL);
	}
	build();
	cr_assert_eq(analysis__spans(SP, OC, D, &(struct spans_opts){0}, out), 0);
	text = output();
	cr_expect(strstr(text, "get        100  50.000ms  99.000ms  100.000ms"), "%s",
		  text);
	cr_expect(strstr(text, "put         10   5.000ms   5.000ms    5.000ms"), "%s",
		  text);
	/* get first: the larger p99 */
	cr_expect(strstr(text, "get") < strstr(text, "put"), "%s", text);
}

/* The number after "@key": in the JSON object of row @name in @text */
static uint64_t row_field(const char *text, const char *name, const char *key)
{
	char want[64];
	const char *row, *at, *next;
	unsigned long long v;

	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	row = strstr(text, want);
	cr_assert_not_null(row, "no row %s: %s", name, text);
	next = strstr(row + 1, "\"name\":");
	snprintf(want, sizeof(want), "\"%s\":", key);
	at = strstr(row, want);
	cr_assert(at && (!next || at < next), "no %s in row %s: %s", key, name, text);
	cr_assert_eq(sscanf(at + strlen(want), "%llu", &v), 1);
	return v;
}

Test(spans, rows_past_1024_spans_a_name_are_within_1_percent)
{
	const char *text;
	uint64_t p50, p99;

	T.counters.start_time = 0;
	T.counters.end_time = 60000 * MS;
	/* 5000 "get" of 1..5000 us (p50 2500 us, p99 4950 us, max 5000);
	 * "a" and "b", 3 each, two rows however their names hash */
	for (uint64_t i = 1; i <= 5000; i++) {
		sy_span(&T, i * 10 * MS, 10, TRACE_SPAN_NEW, i, 0, "get", NULL);
		sy_span(&T, i * 10 * MS + i * US, 10, TRACE_SPAN_CLOSE, i, 0, NULL, NULL);
	}
	for (uint64_t i = 1; i <= 6; i++) {
		sy_span(&T, 55000 * MS + i * MS, 11, TRACE_SPAN_NEW, 9000 + i, 0,
			i % 2 ? "a" : "b", NULL);
		sy_span(&T, 55000 * MS + i * MS + i, 11, TRACE_SPAN_CLOSE, 9000 + i, 0,
			NULL, NULL);
	}
	build();
	cr_assert_eq(analysis__spans(SP, OC, D, &(struct spans_opts){.json = 1}, out), 0);
	text = output();
	cr_expect_eq(row_field(text, "get", "count"), 5000);
	cr_expect_eq(row_field(text, "get", "max_ns"), 5000 * US);
	p50 = row_field(text, "get", "p50_ns");
	p99 = row_field(text, "get", "p99_ns");
	cr_expect(p50 >= 2475 * US && p50 <= 2525 * US, "p50 %" PRIu64, p50);
	cr_expect(p99 >= 4900 * US && p99 <= 5000 * US, "p99 %" PRIu64, p99);
	/* exact below 1024: "a" lasted 1, 3, 5 ns, "b" 2, 4, 6 */
	cr_expect_eq(row_field(text, "a", "count"), 3);
	cr_expect_eq(row_field(text, "a", "p50_ns"), 3);
	cr_expect_eq(row_field(text, "b", "max_ns"), 6);
}

Test(spans, events_have_counts_and_a_distribution)
{
	const char *text;

	for (int64_t i = 1; i <= 100; i++)
		sy_span(&T, (uint64_t)i * MS, 10, TRACE_SPAN_EVENT, 0, i, "latency",
			i % 3 ? "ok" : "slow");
	build();
	cr_assert_eq(analysis__events(SP, &(struct events_opts){0}, out), 0);
	text = output();
	cr_expect(strstr(text,
			 "latency       100             1            50            99"
			 "           100            5050  ok (67)"),
		  "%s", text);
	cr_expect_eq(analysis__events(SP, &(struct events_opts){.name = "x"}, out),
		     -ENOENT);
}

Test(spans, a_trace_without_spans_says_so)
{
	sy_poll(&T, 10, 1, 1 * MS, 2 * MS);
	build();
	cr_expect_eq(SP->n, 0);
	cr_expect_eq(analysis__spans(SP, OC, D, &(struct spans_opts){0}, out), -ENODATA);
	cr_expect_eq(analysis__events(SP, &(struct events_opts){0}, out), -ENODATA);
}

Test(spans, event_sums_past_64_bits_saturate_and_say_so)
{
	const char *text;

	sy_span(&T, 1 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MAX, "big", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MAX, "big", NULL);
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MIN, "low", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_EVENT, 0, -1, "low", NULL);
	/* in range once added up, though not in the order of the values */
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MIN, "mixed", NULL);
	sy_span(&T, 2 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MIN, "mixed", NULL);
	sy_span(&T, 3 * MS, 10, TRACE_SPAN_EVENT, 0, -5, "mixed", NULL);
	sy_span(&T, 4 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MAX, "mixed", NULL);
	sy_span(&T, 5 * MS, 10, TRACE_SPAN_EVENT, 0, INT64_MAX, "mixed", NULL);
	sy_span(&T, 6 * MS, 10, TRACE_SPAN_EVENT, 0, 10, "mixed", NULL);
	build();
	cr_assert_eq(analysis__events(SP, &(struct events_opts){0}, out), 0);
	text = output();
	cr_expect(strstr(text, "         >9.2e18  -"), "%s", text);
	cr_expect(strstr(text, "        <-9.2e18  -"), "%s", text);
	cr_expect(strstr(text, "               3  -"), "%s", text);
	cr_expect(strstr(text, "# a SUM of >9.2e18 or <-9.2e18 is past"), "%s", text);
	fseek(out, 0, SEEK_SET);
	cr_assert_eq(analysis__events(SP, &(struct events_opts){.json = 1}, out), 0);
	text = output();
	cr_expect(strstr(text, "\"sum\":9223372036854775807,\"sum_saturated\":true"),
		  "%s", text);
	cr_expect(strstr(text, "\"sum\":-9223372036854775808,\"sum_saturated\":true"),
		  "%s", text);
	cr_expect(strstr(text, "\"sum\":3,"), "%s", text);
}

/* The command the report suggests for its slowest span, one named @name
 * that lasted 200 ms: into *@next (its "next:" line). */
static void report_next(const char *name, char *next, size_t len)
{
	const char *text, *p;

	T.counters.start_time = 0;
	T.counters.end_time = 300 * MS;
	sy_span(&T, 1 * MS, 10, TRACE_SPAN_NEW, 1, 0, name, NULL);
	sy_span(&T, 201 * MS, 10, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
	build();
	cr_assert_eq(analysis__report(OC, D, SP, NULL, 0, out), 0);
	text = output();
	p = strstr(text, "slow span");
	cr_assert(p, "%s", text);
	p = strstr(p, "next: ");
	cr_assert(p, "%s", text);
	p += strlen("next: ");
	snprintf(next, len, "%.*s", (int)strcspn(p, "\n"), p);
}

Test(spans, the_report_names_the_slowest_span_in_its_command_as_it_is)
{
	static const char name[] = "GET:/api/v1/users/by-id/lookup.json_"
				   "with_a_name_longer_than_sixty_three_bytes";
	char next[256];

	cr_assert_gt(strlen(name), 63);
	report_next(name, next, sizeof(next));
	cr_expect_str_eq(next, "d9prof spans --name GET:/api/v1/users/by-id/lookup.json_"
			       "with_a_name_longer_than_sixty_three_bytes --min 100ms");
}

Test(spans, the_report_names_no_span_it_could_not_name_verbatim)
{
	char next[256];

	/* cleaned, ';' would read ':': a name no span has */
	report_next("get;x", next, sizeof(next));
	cr_expect_str_eq(next, "d9prof spans --min 100ms");
}

Test(spans, the_report_names_no_span_too_long_for_its_command)
{
	char name[120], next[256];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	report_next(name, next, sizeof(next));
	cr_expect_str_eq(next, "d9prof spans --min 100ms");
}
