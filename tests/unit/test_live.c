/* SPDX-License-Identifier: MIT */
/*
 * test_live.c - `d9prof top`'s live state (analysis/live.c) fed through a
 * writer's tap as the recorder feeds it, out of order across threads, and
 * its frames (analysis/top_view.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/join.h"
#include "analysis/live.h"
#include "analysis/views.h"
#include "tests/unit/memout.h"

#define MS 1000000ULL
#define US 1000ULL

static struct live *L;
static struct live_snap S;

static void setup(void)
{
	cr_assert_eq(live__new(1 * MS, &L), 0); /* a sample is 1 ms */
	memset(&S, 0, sizeof(S));
	memout_open();
}

static void teardown(void)
{
	memout_close();
	live_snap_release(&S);
	live__free(L);
}

TestSuite(live, .init = setup, .fini = teardown);

static void rec(uint64_t time, uint32_t tid, uint32_t type, uint64_t task, uint64_t len)
{
	const struct trace_tap *t = live__tap(L);
	struct trace_event e = {.time = time, .task = task, .tid = tid, .type = type};

	t->records(t->ctx, &e, &len, 1);
}

static void sample(uint64_t time, uint32_t tid)
{
	const struct trace_tap *t = live__tap(L);
	struct trace_sample s = {.time = time, .tid = tid, .weight = 1};
	uint64_t ip = 0x1000;

	t->sample(t->ctx, &s, &ip, 1);
}

static void name(uint64_t task, const char *n)
{
	const struct trace_tap *t = live__tap(L);

	t->name(t->ctx, 1, task, n);
}

static const struct live_row *row(uint64_t id)
{
	for (size_t i = 0; i < S.nrows; i++)
		if (S.rows[i].id == id)
			return &S.rows[i];
	cr_assert_fail("no row %llu", (unsigned long long)id);
	return NULL;
}

/* A lean recording: the polls of 1 ms or more written (summed too), every
 * poll in the sums. A task's polls count once, from the sums: those
 * written are in them already; its waits' histogram from the sums'. */
Test(live, a_lean_recordings_polls_count_from_the_sums)
{
	const struct trace_tap *t = live__tap(L);
	/* buckets 0-7 are exact: 5 and 7 units of the shim's clock, here
	 * microseconds (unit=1000 ns); the maximum wait 20 ms */
	const struct trace_sum_ent ent[] = {
		{0, 5, 0, 900}, {0, 7, 0, 100}, {1, 5, 0, 998}, {1, 7, 0, 2}};
	struct trace_sum sum = {.time = 50 * MS,
				.task = 1,
				.tid = 10,
				.polls = 1000,
				.delays = 1000,
				.nent = 4,
				.poll_total = 7 * MS,
				.delay_total = 30 * MS,
				.poll_max = 2 * MS,
				.delay_max = 20 * MS};

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	t->meta(t->ctx, "lean", "poll=1000000 delay=1000000 unit=1000");
	name(1, "conn");
	/* a long poll written, and in the sums below */
	rec(20 * MS, 10, TRACE_REC_POLL, 1, 2 * MS);
	t->sum(t->ctx, &sum, ent);
	cr_assert_eq(live__wants(L), LIVE_WANT_SUMS, "fed a lean recording's sums");
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(1)->polls, 1000, "the sums' count, the written poll in it");
	cr_expect_eq(row(1)->max_poll_ns, 2 * MS);
	cr_expect_eq(row(1)->mean_poll_ns, 7 * US);
	cr_expect_eq(row(1)->ndelays, 1000);
	cr_expect_lt(row(1)->delay_p99_ns, 50 * US, "the waits' 99th: 5 or 7 us");
	cr_expect_gt(row(1)->delay_p99_ns, 1 * US);
}

Test(live, polls_samples_and_delays_of_an_interval)
{
	const struct trace_tap *t = live__tap(L);
	struct trace_switch sw = {
		.time = 32 * MS, .time_in = 36 * MS, .runnable = 35 * MS, .tid = 10};

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "hog");
	name(2, "victim");
	/* a sample drained before the poll that holds it */
	sample(12 * MS, 10);
	rec(1 * MS, 11, TRACE_EV_WAKE, 2, 0);
	rec(20 * MS, 10, TRACE_REC_POLL, 1, 10 * MS);	    /* hog [10, 20] */
	rec(21 * MS, 10, TRACE_REC_POLL, 2, 1 * MS);	    /* victim woken at 1 */
	rec(40 * MS, 10, TRACE_REC_POLL_WOKEN, 1, 10 * MS); /* [30, 40], woken */
	sample(35 * MS, 10);
	sample(45 * MS, 10); /* after its last poll, before it parks: outside */
	rec(50 * MS, 10, TRACE_EV_PARK, 0, 0);
	/* past the thread's records: a poll under way may hold it, written
	 * only at its end (not outside, as it was once taken for) */
	sample(60 * MS, 10);
	t->sw(t->ctx, &sw);
	cr_assert_eq(live__snapshot(L, 1000 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(S.interval_ns, 1000 * MS);
	cr_expect_eq(row(1)->polls, 2);
	cr_expect_eq(row(1)->max_poll_ns, 10 * MS);
	cr_expect_eq(row(1)->samples, 2);
	cr_expect_eq(row(1)->blocked_ns, 3 * MS);
	cr_expect_eq(row(1)->runq_ns, 1 * MS);
	cr_expect_eq(row(1)->state, LIVE_WOKEN); /* runnable since its end */
	cr_expect_eq(row(1)->state_ns, 960 * MS);
	cr_expect_eq(row(2)->ndelays, 1);
	/* 19 ms waited: the bucket holding it, 16.4..24.6 ms, says its top */
	cr_expect(row(2)->delay_p99_ns >= 19 * MS && row(2)->delay_p99_ns <= 25 * MS,
		  "%llu", (unsigned long long)row(2)->delay_p99_ns);
	cr_expect_eq(S.samples, 4);
	cr_expect_eq(S.outside, 1);
	/* the next interval starts from nothing; the poll that held the
	 * sample at 60 ms comes */
	live_snap_release(&S);
	rec(55 * MS, 10, TRACE_EV_UNPARK, 0, 0);
	rec(70 * MS, 10, TRACE_REC_POLL, 2, 15 * MS); /* victim [55, 70] */
	cr_assert_eq(live__snapshot(L, 2000 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(1)->polls, 0);
	cr_expect_eq(row(2)->samples, 1);
	cr_expect_eq(S.samples, 0);
	cr_expect_eq(S.outside, 0);
}

Test(live, a_wake_drained_late_does_not_outlive_the_poll_after_it)
{
	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	rec(10 * MS, 10, TRACE_REC_POLL, 5, 1 * MS); /* begun at 9 ms */
	rec(8 * MS, 11, TRACE_EV_WAKE, 5, 0);	     /* from another ring, later */
	rec(20 * MS, 10, TRACE_EV_TASK_END, 5, 0);
	rec(19 * MS, 11, TRACE_EV_WAKE, 5, 0);
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(5)->state, LIVE_ENDED);
}

Test(live, the_poll_in_progress_and_the_warnings_of_report)
{
	const char *text;

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "hog");
	name(2, "victim");
	rec(1 * MS, 11, TRACE_EV_WAKE, 2, 0);
	live__polling(L, 10, 1, 2 * MS, 60 * MS); /* from the ring header */
	sample(50 * MS, 10);
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(1)->state, LIVE_POLLED);
	/* as long as the header said it ran (at 60 ms), not up to the
	 * snapshot: a recorder late to drain has not seen its end yet */
	cr_expect_eq(row(1)->state_ns, 58 * MS);
	cr_expect_eq(row(1)->samples, 1);
	cr_expect_eq(row(2)->state, LIVE_WOKEN);
	cr_assert_eq(analysis__top(&S,
				   &(struct top_opts){.selected = -1, .title = "pid 1"},
				   out),
		     0);
	text = output();
	cr_expect(
		strstr(text,
		       "! long poll (>= 10ms): task 1 hog polled on ?[10] for 58.0ms now"),
		"%s", text);
	cr_expect(strstr(text,
			 "! wake-to-poll delay (>= 5ms): task 2 victim woken 99.0ms ago, "
			 "not polled yet"),
		  "%s", text);
	cr_expect(strstr(text, "   1  hog"), "%s", text);
}

/* The find of @kind in S, or NULL */
static const struct live_find *found(uint32_t kind)
{
	for (size_t i = 0; i < S.nfinds; i++)
		if (S.finds[i].kind == kind)
			return &S.finds[i];
	return NULL;
}

/* Each detector on the state it reads, at its threshold and not before:
 * a task in one poll for a second, one pending and not woken for two, one
 * that wakes itself; and what each says */
Test(live, the_detectors_find_each_bug_at_its_threshold)
{
	const struct trace_tap *t = live__tap(L);
	const struct live_find *f;
	char text[256];
	uint64_t at;

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "stuck");
	name(2, "dropped");
	name(3, "spinner");
	t->name(t->ctx, 0, 10, "worker-0");
	rec(1 * MS, 11, TRACE_EV_SPAWN, 2, 0);
	rec(10 * MS, 11, TRACE_REC_POLL, 2, 1 * MS); /* pending, never woken */
	live__polling(L, 10, 1, 100 * MS, 1050 * MS);
	/* 40 polls of 3 us that woke their own task (the shim's one record),
	 * 1 wake from elsewhere */
	for (at = 20 * MS; at < 60 * MS; at += MS)
		rec(at + 3 * US, 12, TRACE_REC_POLL_WOKEN, 3, 3 * US);
	rec(70 * MS, 11, TRACE_EV_WAKE, 3, 0);
	rec(70 * MS + 3 * US, 12, TRACE_REC_POLL, 3, 3 * US);
	cr_assert_eq(live__snapshot(L, 1050 * MS, GROUP_TASK, &S), 0);
	cr_expect_null(found(LIVE_NO_YIELD), "950 ms in a poll is not a second");
	cr_expect_null(found(LIVE_LOST_WAKER), "1.04 s since its poll is not two");
	cr_assert_not_null(f = found(LIVE_SELF_WAKES));
	cr_expect_eq(f->task, 3);
	cr_expect_eq(f->a, 40);
	cr_expect_eq(f->b, 41);
	live_find_say(&S, f, text, sizeof(text));
	cr_expect_str_eq(
		text, "task 3 spinner woke itself 40 of its 41 wakes, polls of 3.00us");
	live_snap_release(&S);
	live__polling(L, 10, 1, 100 * MS, 1100 * MS);
	cr_assert_eq(live__snapshot(L, 2011 * MS, GROUP_TASK, &S), 0);
	cr_assert_not_null(f = found(LIVE_NO_YIELD));
	cr_expect_eq(f->task, 1);
	cr_expect_eq(f->a, 10);
	live_find_say(&S, f, text, sizeof(text));
	/* (as long as the header said it ran, not up to the snapshot: a
	 * recorder late to drain has not seen its end) */
	cr_expect_str_eq(text, "task 1 stuck in one poll for 1.00s on worker-0[10]");
	cr_assert_not_null(f = found(LIVE_LOST_WAKER));
	cr_expect_eq(f->task, 2);
	live_find_say(&S, f, text, sizeof(text));
	cr_expect_str_eq(
		text, "task 2 dropped pending, not woken for 2.00s since its last poll");
	cr_expect_null(found(LIVE_SELF_WAKES), "no wakes in this interval");
	/* woken: no longer lost */
	live_snap_release(&S);
	rec(2100 * MS, 11, TRACE_EV_WAKE, 2, 0);
	cr_assert_eq(live__snapshot(L, 2200 * MS, GROUP_TASK, &S), 0);
	cr_expect_null(found(LIVE_LOST_WAKER));
	/* where the runtime counts wakers: lost at once when the last goes,
	 * not once a wake is 2 s late; and not if woken after all */
	live_snap_release(&S);
	name(4, "counted");
	rec(2300 * MS, 12, TRACE_REC_POLL, 4, 1 * MS);
	rec(2300 * MS, 12, TRACE_EV_WAKER_DROP, 4, 0);
	cr_assert_eq(live__snapshot(L, 2400 * MS, GROUP_TASK, &S), 0);
	cr_assert_not_null(f = found(LIVE_LOST_WAKER));
	cr_expect_eq(f->task, 4);
	cr_expect_eq(f->a, 1);
	live_find_say(&S, f, text, sizeof(text));
	cr_expect_str_eq(text,
			 "task 4 counted pending, its last waker dropped 100ms ago");
	live_snap_release(&S);
	rec(2500 * MS, 11, TRACE_EV_WAKE, 4, 0);
	cr_assert_eq(live__snapshot(L, 2600 * MS, GROUP_TASK, &S), 0);
	cr_expect_null(found(LIVE_LOST_WAKER));
}

/* A task's life since its spawn, tokio-console's way (total, busy,
 * scheduled, idle); an ended task stays a row some seconds, by task, so
 * that it can be selected, and counts by name only in the frame it ended */
Test(live, a_tasks_life_and_its_row_kept_after_its_end)
{
	const struct live_row *r;

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(7, "request");
	rec(1 * MS, 11, TRACE_EV_SPAWN, 7, 0);
	rec(5 * MS, 11, TRACE_EV_WAKE, 7, 0);
	rec(20 * MS, 10, TRACE_REC_POLL, 7, 10 * MS); /* [10, 20] */
	rec(30 * MS, 11, TRACE_EV_WAKE, 7, 0);
	rec(36 * MS, 10, TRACE_REC_POLL, 7, 4 * MS); /* [32, 36] */
	rec(40 * MS, 10, TRACE_EV_TASK_END, 7, 0);
	cr_assert_eq(live__snapshot(L, 1000 * MS, GROUP_TASK, &S), 0);
	r = row(7);
	cr_expect_eq(r->state, LIVE_ENDED);
	cr_expect_eq(r->state_ns, 960 * MS);
	cr_expect_eq(r->life_ns, 39 * MS);
	cr_expect_eq(r->busy_ns, 14 * MS);
	cr_expect_eq(r->sched_ns, 11 * MS); /* spawned 1 -> 10, woken 30 -> 32 */
	cr_expect_eq(r->idle_ns, 14 * MS);
	cr_expect_eq(r->polls_life, 2);
	live_snap_release(&S);
	cr_assert_eq(live__snapshot(L, 3000 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(7)->state_ns, 2960 * MS, "kept, its life as it was");
	cr_expect_eq(row(7)->busy_ns, 14 * MS);
	live_snap_release(&S);
	cr_assert_eq(live__snapshot(L, 4000 * MS, GROUP_NAME, &S), 0);
	cr_expect_eq(S.nrows, 0, "by name, not after the frame it ended in");
	live_snap_release(&S);
	cr_assert_eq(live__snapshot(L, 5100 * MS, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	cr_assert_eq(live__snapshot(L, 5200 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(S.nrows, 0, "gone 5 s after its end");
}

Test(live, rows_by_name_and_by_thread)
{
	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "short");
	name(2, "short");
	rec(2 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	rec(4 * MS, 11, TRACE_REC_POLL, 2, 1 * MS);
	rec(5 * MS, 11, TRACE_EV_PARK, 0, 0);
	cr_assert_eq(live__snapshot(L, 10 * MS, GROUP_NAME, &S), 0);
	cr_assert_eq(S.nrows, 1);
	cr_expect_str_eq(S.rows[0].name, "short");
	cr_expect_eq(S.rows[0].ntasks, 2);
	cr_expect_eq(S.rows[0].polls, 2);
	live_snap_release(&S);
	rec(12 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	cr_assert_eq(live__snapshot(L, 20 * MS, GROUP_THREAD, &S), 0);
	cr_expect_eq(row(10)->poll_ns, 1 * MS);
	cr_expect_eq(row(11)->state, LIVE_PARKED);
	/* the parked thread's time: all of the interval */
	for (size_t i = 0; i < S.nworkers; i++)
		if (S.workers[i].tid == 11)
			cr_expect_eq(S.workers[i].parked_ns, 10 * MS);
}

/* The worker's time in polls, parked and off-CPU in an interval is that
 * interval's: a poll or a park over three snapshots is never more than
 * 100% of one, and what an open one showed is not counted again. */
static const struct live_worker *worker(uint32_t tid)
{
	for (size_t i = 0; i < S.nworkers; i++)
		if (S.workers[i].tid == tid)
			return &S.workers[i];
	cr_assert_fail("no worker %u", tid);
	return NULL;
}

Test(live, a_long_poll_is_shared_among_the_intervals_it_spans)
{
	const struct trace_tap *t = live__tap(L);
	struct trace_switch sw = {.time = 120 * MS, .time_in = 260 * MS, .tid = 11};

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	/* thread 10 polls task 1 over [50, 250] ms, thread 11 parks over
	 * [20, 280] and is blocked [120, 260] */
	rec(50 * MS, 10, TRACE_EV_POLL_BEGIN, 1, 0);
	rec(20 * MS, 11, TRACE_EV_PARK, 0, 0);
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(worker(10)->poll_ns, 50 * MS);
	cr_expect_eq(worker(11)->parked_ns, 80 * MS);
	live_snap_release(&S);
	cr_assert_eq(live__snapshot(L, 200 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(worker(10)->poll_ns, 100 * MS);
	cr_expect_eq(worker(11)->parked_ns, 100 * MS);
	live_snap_release(&S);
	rec(250 * MS, 10, TRACE_EV_POLL_END, 1, 0);
	rec(280 * MS, 11, TRACE_EV_UNPARK, 0, 0);
	t->sw(t->ctx, &sw);
	cr_assert_eq(live__snapshot(L, 300 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(worker(10)->poll_ns, 50 * MS);
	cr_expect_eq(worker(11)->parked_ns, 80 * MS);
	/* off-CPU over [120, 260] while parked: parked time, not blocked */
	cr_expect_eq(worker(11)->blocked_ns, 0);
	/* the task's own poll is whole: its mean and max */
	cr_expect_eq(row(1)->polls, 1);
	cr_expect_eq(row(1)->max_poll_ns, 200 * MS);
}

/* By thread: a worker's row counts the polls it ran (their mean and
 * max), and off-CPU time inside a poll is blocked, while parked is not */
Test(live, a_threads_row_counts_its_polls_and_blocked_is_not_parked)
{
	const struct trace_tap *t = live__tap(L);
	struct trace_switch in_poll = {.time = 20 * MS, .time_in = 30 * MS, .tid = 10};
	struct trace_switch parked = {.time = 70 * MS, .time_in = 90 * MS, .tid = 10};

	cr_assert_eq(live__snapshot(L, 0, GROUP_THREAD, &S), 0);
	live_snap_release(&S);
	rec(10 * MS, 10, TRACE_EV_POLL_BEGIN, 1, 0);
	t->sw(t->ctx, &in_poll);
	rec(40 * MS, 10, TRACE_EV_POLL_END, 1, 0);
	rec(50 * MS, 10, TRACE_EV_POLL_BEGIN, 2, 0);
	rec(60 * MS, 10, TRACE_EV_POLL_END, 2, 0);
	rec(65 * MS, 10, TRACE_EV_PARK, 0, 0);
	t->sw(t->ctx, &parked);
	rec(95 * MS, 10, TRACE_EV_UNPARK, 0, 0);
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_THREAD, &S), 0);
	cr_assert_not_null(row(10));
	cr_expect_eq(row(10)->polls, 2);
	cr_expect_eq(row(10)->mean_poll_ns, 20 * MS);
	cr_expect_eq(row(10)->max_poll_ns, 30 * MS);
	cr_expect_eq(worker(10)->blocked_ns, 10 * MS);
	cr_expect_eq(worker(10)->parked_ns, 30 * MS);
}

/* A poll the shim wrote a BEGIN for (something was recorded inside it)
 * holds the samples up to where the recorder drained its ring, before its
 * END comes: they are the task's in the frame they fall in. */
Test(live, samples_in_a_poll_begun_in_a_record_count_before_its_end)
{
	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	rec(10 * MS, 10, TRACE_EV_POLL_BEGIN, 7, 0);
	for (uint64_t ms = 20; ms < 90; ms += 10)
		sample(ms * MS, 10);	     /* 7 samples, drained before the ring */
	live__polling(L, 10, 0, 0, 95 * MS); /* the header: none written */
	sample(96 * MS, 10);		     /* after the drain: waits */
	cr_assert_eq(live__snapshot(L, 100 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(7)->samples, 7);
	cr_expect_eq(row(7)->state, LIVE_POLLED);
	cr_expect_eq(S.outside, 0);
	live_snap_release(&S);
	live__polling(L, 10, 0, 0, 150 * MS);
	cr_assert_eq(live__snapshot(L, 200 * MS, GROUP_TASK, &S), 0);
	cr_expect_eq(row(7)->samples, 1);
}

/* A viewer that comes back finds the state new and asks the recorder for
 * names again; a thread idle for a while goes, its name stays. */
Test(live, names_come_again_and_outlive_idle_threads)
{
	const struct trace_tap *t = live__tap(L);

	cr_expect_eq(live__wants(L), 0);
	t->name(t->ctx, 0, 10, "worker-0");
	rec(2 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	for (uint64_t s = 1; s <= 5; s++) {
		cr_assert_eq(live__snapshot(L, s * 3000 * MS, GROUP_THREAD, &S), 0);
		live_snap_release(&S);
	}
	rec(16000 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	cr_assert_eq(live__snapshot(L, 17000 * MS, GROUP_THREAD, &S), 0);
	cr_expect_str_eq(row(10)->name, "worker-0");
	live__enable(L, 0);
	live__enable(L, 1);
	cr_expect_eq(live__wants(L), LIVE_WANT_NAMES);
	cr_expect_eq(live__wants(L), 0);
}

Test(live, a_narrow_frame_drops_columns_and_keeps_its_width)
{
	const char *text, *line;

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "a_task_with_a_rather_long_name_indeed");
	rec(2 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	cr_assert_eq(live__snapshot(L, 10 * MS, GROUP_TASK, &S), 0);
	cr_assert_eq(
		analysis__top(&S, &(struct top_opts){.selected = -1, .width = 60}, out),
		0);
	text = output();
	for (line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		cr_expect_leq(n, 60, "%.*s", (int)n, line);
		line += n + (nl != NULL);
	}
	cr_expect(strstr(text, "CPU%"), "%s", text);
	cr_expect(!strstr(text, "RUNQ"), "%s", text);
}

Test(live, a_snapshot_travels_as_bytes_and_only_whole)
{
	struct live_snap back;
	void *bytes;
	size_t len;

	cr_assert_eq(live__snapshot(L, 0, GROUP_TASK, &S), 0);
	live_snap_release(&S);
	name(1, "hog");
	rec(2 * MS, 10, TRACE_REC_POLL, 1, 1 * MS);
	cr_assert_eq(live__snapshot(L, 10 * MS, GROUP_TASK, &S), 0);
	cr_assert_eq(live_snap_pack(&S, &bytes, &len), 0);
	cr_assert_eq(live_snap_unpack(bytes, len, &back), 0);
	cr_expect_eq(back.nrows, S.nrows);
	cr_expect_eq(back.nworkers, S.nworkers);
	cr_expect_eq(back.interval_ns, 10 * MS);
	cr_expect_str_eq(back.rows[0].name, "hog");
	cr_expect_eq(back.rows[0].polls, 1);
	live_snap_release(&back);
	/* cut short, one byte too many, another magic: refused */
	cr_expect_eq(live_snap_unpack(bytes, len - 1, &back), -EBADMSG);
	cr_expect_eq(live_snap_unpack(bytes, 8, &back), -EBADMSG);
	((unsigned char *)bytes)[0] ^= 1;
	cr_expect_eq(live_snap_unpack(bytes, len, &back), -EBADMSG);
	free(bytes);
}
