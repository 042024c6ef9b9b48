/* SPDX-License-Identifier: MIT */
/*
 * test_join.c - polls from shim events, samples to polls.
 */
#include <inttypes.h>
#include <time.h>

#include <criterion/criterion.h>

#include "analysis/analysis.h"
#include "tests/unit/synth_trace.h"

static struct trace T;
static struct join *J;

static void setup(void)
{
	memset(&T, 0, sizeof(T));
	J = NULL;
}

static void teardown(void)
{
	join__free(J);
	sy_free(&T);
}

TestSuite(join, .init = setup, .fini = teardown);

static void do_join(void)
{
	cr_assert_eq(join__new(&T, &J), 0);
}

static uint64_t poll_task(int32_t p)
{
	cr_assert_geq(p, 0);
	return J->polls[p].task;
}

Test(join, sample_inside_poll_gets_its_task)
{
	sy_poll(&T, 10, 7, 100, 200);
	sy_poll(&T, 10, 8, 300, 400);
	sy_sample(&T, 150, 10, 0, 1);
	sy_sample(&T, 350, 10, 0, 3);
	sy_sample(&T, 250, 10, 0, 1); /* between polls */
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(poll_task(J->sample_poll[0]), 7);
	cr_assert_eq(poll_task(J->sample_poll[1]), 8);
	cr_assert_eq(J->sample_poll[2], -1);
	cr_assert_eq(J->polls[0].samples, 1);
	cr_assert_eq(J->polls[1].samples, 3);
	cr_assert_eq(join__task(J, 8)->samples, 3);
	cr_assert_eq(J->unmatched_ends, 0);
}

Test(join, boundary_samples_inclusive)
{
	sy_poll(&T, 1, 5, 100, 200);
	sy_sample(&T, 99, 1, 0, 1);
	sy_sample(&T, 100, 1, 0, 1);
	sy_sample(&T, 200, 1, 0, 1);
	sy_sample(&T, 201, 1, 0, 1);
	do_join();
	cr_assert_eq(J->sample_poll[0], -1);
	cr_assert_eq(J->sample_poll[1], 0);
	cr_assert_eq(J->sample_poll[2], 0);
	cr_assert_eq(J->sample_poll[3], -1);
	cr_assert_eq(J->polls[0].samples, 2);
}

Test(join, back_to_back_polls_give_the_shared_ns_to_the_later)
{
	sy_poll(&T, 1, 5, 100, 200);
	sy_poll(&T, 1, 6, 200, 300);
	sy_sample(&T, 200, 1, 0, 1);
	do_join();
	cr_assert_eq(poll_task(J->sample_poll[0]), 6);
}

Test(join, samples_on_other_threads_do_not_match)
{
	sy_poll(&T, 1, 5, 100, 200);
	sy_poll(&T, 2, 6, 100, 200);
	sy_sample(&T, 150, 3, 0, 1); /* no events at all on tid 3 */
	sy_sample(&T, 150, 2, 0, 1);
	sy_sample(&T, 150, 1, 0, 1);
	do_join();
	cr_assert_eq(J->sample_poll[0], -1);
	cr_assert_eq(poll_task(J->sample_poll[1]), 6);
	cr_assert_eq(poll_task(J->sample_poll[2]), 5);
	cr_assert_null(join__poll_at(J, 3, 150));
	cr_assert_eq(join__poll_at(J, 2, 150)->task, 6);
}

Test(join, poll_begun_before_recording_starts_at_record_start)
{
	T.counters.start_time = 50;
	T.counters.end_time = 1000;
	sy_event(&T, 120, 1, D9_EV_POLL_END, 9);
	sy_poll(&T, 1, 5, 200, 300);
	sy_sample(&T, 60, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].task, 9);
	cr_assert_eq(J->polls[0].start, 50);
	cr_assert_eq(J->polls[0].end, 120);
	cr_assert_eq(J->polls[0].open_start, 1);
	cr_assert_eq(J->polls[0].open_end, 0);
	cr_assert_eq(poll_task(J->sample_poll[0]), 9);
	cr_assert_eq(J->unmatched_ends, 0);
}

Test(join, cut_trace_uses_earliest_and_latest_times)
{
	/* no END chunk: counters are zero */
	sy_sample(&T, 30, 2, 0, 1);
	sy_event(&T, 120, 1, D9_EV_POLL_END, 9);
	sy_event(&T, 200, 1, D9_EV_POLL_BEGIN, 5);
	sy_sample(&T, 900, 2, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].start, 30);
	cr_assert_eq(J->polls[1].end, 900);
	cr_assert_eq(J->polls[1].open_end, 1);
}

Test(join, poll_still_open_ends_at_record_end)
{
	T.counters.start_time = 1;
	T.counters.end_time = 5000;
	sy_event(&T, 100, 1, D9_EV_POLL_BEGIN, 3);
	sy_sample(&T, 4999, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 5000);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(J->polls[0].open_start, 0);
	cr_assert_eq(J->sample_poll[0], 0);
}

Test(join, begin_while_open_closes_the_open_poll)
{
	sy_event(&T, 100, 1, D9_EV_POLL_BEGIN, 3);
	sy_event(&T, 150, 1, D9_EV_POLL_BEGIN, 4); /* END of 3 lost */
	sy_event(&T, 180, 1, D9_EV_POLL_END, 4);
	sy_sample(&T, 160, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].task, 3);
	cr_assert_eq(J->polls[0].end, 150);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(J->polls[1].task, 4);
	cr_assert_eq(J->polls[1].open_end, 0);
	cr_assert_eq(poll_task(J->sample_poll[0]), 4);
}

Test(join, stray_ends_are_counted_and_ignored)
{
	sy_poll(&T, 1, 3, 100, 200);
	sy_event(&T, 250, 1, D9_EV_POLL_END, 3); /* nothing open */
	sy_event(&T, 300, 1, D9_EV_POLL_BEGIN, 4);
	sy_event(&T, 320, 1, D9_EV_POLL_END, 5); /* other task */
	sy_event(&T, 340, 1, D9_EV_POLL_END, 4);
	do_join();
	cr_assert_eq(J->unmatched_ends, 2);
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[1].task, 4);
	cr_assert_eq(J->polls[1].start, 300);
	cr_assert_eq(J->polls[1].end, 340);
}

Test(join, thread_stop_closes_open_poll)
{
	T.counters.end_time = 10000;
	sy_event(&T, 100, 1, D9_EV_POLL_BEGIN, 3);
	sy_event(&T, 200, 1, D9_EV_THREAD_STOP, 0);
	sy_sample(&T, 250, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 200);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(J->sample_poll[0], -1);
}

Test(join, end_first_after_thread_start_starts_at_thread_start)
{
	T.counters.start_time = 10;
	sy_event(&T, 100, 1, D9_EV_THREAD_START, 0);
	sy_event(&T, 150, 1, D9_EV_POLL_END, 3); /* BEGIN dropped */
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].start, 100);
	cr_assert_eq(J->polls[0].open_start, 1);
}

Test(join, events_are_taken_in_time_order_per_thread_stably)
{
	/* file order interleaves threads and is out of order on tid 2; equal
	 * times keep file order (BEGIN then END: a zero-length poll) */
	sy_event(&T, 300, 2, D9_EV_POLL_END, 6);
	sy_event(&T, 100, 1, D9_EV_POLL_BEGIN, 5);
	sy_event(&T, 200, 2, D9_EV_POLL_BEGIN, 6);
	sy_event(&T, 150, 1, D9_EV_POLL_END, 5);
	sy_event(&T, 400, 1, D9_EV_POLL_BEGIN, 7);
	sy_event(&T, 400, 1, D9_EV_POLL_END, 7);
	sy_sample(&T, 250, 2, 0, 1);
	sy_sample(&T, 400, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 3);
	cr_assert_eq(J->unmatched_ends, 0);
	cr_assert_eq(J->polls[1].task, 6);
	cr_assert_eq(J->polls[1].start, 200);
	cr_assert_eq(J->polls[1].end, 300);
	cr_assert_eq(J->polls[2].start, 400);
	cr_assert_eq(J->polls[2].end, 400);
	cr_assert_eq(poll_task(J->sample_poll[0]), 6);
	cr_assert_eq(poll_task(J->sample_poll[1]), 7);
}

Test(join, polls_sorted_by_start_then_tid)
{
	sy_poll(&T, 9, 1, 100, 110);
	sy_poll(&T, 9, 1, 300, 310);
	sy_poll(&T, 4, 2, 100, 120);
	sy_poll(&T, 4, 2, 200, 220);
	sy_poll(&T, 7, 3, 50, 60);
	do_join();
	cr_assert_eq(J->npolls, 5);
	for (size_t i = 0; i < J->npolls; i++)
		cr_assert_eq(J->polls[i].id, i);
	cr_assert_eq(J->polls[0].tid, 7);
	cr_assert_eq(J->polls[1].tid, 4);
	cr_assert_eq(J->polls[2].tid, 9);
	cr_assert_eq(J->polls[3].start, 200);
	cr_assert_eq(J->polls[4].start, 300);
}

Test(join, tasks_sorted_with_stats_and_unpolled_ones)
{
	sy_task(&T, 30, "idle");
	sy_task(&T, 10, "old");
	sy_task(&T, 10, "worker");	     /* renamed: the last name wins */
	sy_event(&T, 5, 1, D9_EV_SPAWN, 40); /* unnamed, never polled */
	sy_poll(&T, 1, 10, 100, 200);
	sy_poll(&T, 2, 10, 150, 450);
	sy_poll(&T, 1, 20, 300, 310);
	sy_sample(&T, 160, 2, 0, 2);
	sy_sample(&T, 170, 1, 0, 1);
	do_join();
	cr_assert_eq(J->ntasks, 4);
	cr_assert_eq(J->tasks[0].task, 10);
	cr_assert_eq(J->tasks[1].task, 20);
	cr_assert_eq(J->tasks[2].task, 30);
	cr_assert_eq(J->tasks[3].task, 40);
	cr_assert_str_eq(J->tasks[0].name, "worker");
	cr_assert_null(J->tasks[1].name);
	cr_assert_eq(J->tasks[0].polls, 2);
	cr_assert_eq(J->tasks[0].total_ns, 400);
	cr_assert_eq(J->tasks[0].longest_ns, 300);
	cr_assert_eq(J->tasks[0].samples, 3);
	cr_assert_eq(J->tasks[2].polls, 0);
	cr_assert_eq(join__task(J, 30), &J->tasks[2]);
	cr_assert_null(join__task(J, 11));
}

Test(join, empty_trace)
{
	do_join();
	cr_assert_eq(J->npolls, 0);
	cr_assert_eq(J->ntasks, 0);
	cr_assert_null(join__poll_at(J, 1, 1));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1M samples, 200k polls over 16 threads, events interleaved as a
 * recorder draining rings would write them. */
Test(join, scale_1m_samples_200k_polls, .timeout = 60)
{
	const uint32_t nthr = 16, polls_per = 200000 / 16;
	double t0, t1;
	uint64_t matched = 0;

	for (uint32_t k = 0; k < polls_per; k++)
		for (uint32_t th = 0; th < nthr; th++) {
			uint64_t base = (uint64_t)k * 10000 + th;

			sy_poll(&T, 100 + th, 1 + (k * 7 + th) % 5000, base, base + 6000);
		}
	for (uint32_t i = 0; i < 1000000; i++)
		sy_sample(&T, (uint64_t)(i / nthr) * 2003 % ((uint64_t)polls_per * 10000),
			  100 + i % nthr, 0, 1);
	t0 = now_s();
	do_join();
	t1 = now_s();
	for (size_t i = 0; i < T.nsamples; i++)
		matched += J->sample_poll[i] >= 0;
	cr_log_info("join: %zu samples, %zu polls, %zu tasks: %.3f s (%" PRIu64
		    " samples in polls)",
		    T.nsamples, J->npolls, J->ntasks, t1 - t0, matched);
	cr_assert_eq(J->npolls, 200000);
	/* 6000 of every 10000 ns are inside a poll */
	cr_assert_gt(matched, 500000);
	cr_assert_lt(matched, 700000);
}
