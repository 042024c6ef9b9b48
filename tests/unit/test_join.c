/* SPDX-License-Identifier: MIT */
/*
 * test_join.c - polls from shim events, samples to polls.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"
#include "tests/unit/synth_trace.h"
#include "tests/unit/writer.h"

static struct trace T;
static struct join *J;

#define US 1000ULL
#define MS 1000000ULL

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
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
}

/* A complete trace (one with an END chunk): its counters say it was
 * recorded from @start to @end. */
static void recorded(uint64_t start, uint64_t end)
{
	T.counters.start_time = start;
	T.counters.end_time = end;
}

/* The poll sample @i fell in (join__poll_at() is the join's lookup). */
static int32_t sample_poll(size_t i)
{
	const struct poll *p = join__poll_at(J, T.samples[i].tid, T.samples[i].time);

	return p ? (int32_t)p->id : -1;
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
	cr_assert_eq(poll_task(sample_poll(0)), 7);
	cr_assert_eq(poll_task(sample_poll(1)), 8);
	cr_assert_eq(sample_poll(2), -1);
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
	cr_assert_eq(sample_poll(0), -1);
	cr_assert_eq(sample_poll(1), 0);
	cr_assert_eq(sample_poll(2), 0);
	cr_assert_eq(sample_poll(3), -1);
	cr_assert_eq(J->polls[0].samples, 2);
}

Test(join, back_to_back_polls_give_the_shared_ns_to_the_later)
{
	sy_poll(&T, 1, 5, 100, 200);
	sy_poll(&T, 1, 6, 200, 300);
	sy_sample(&T, 200, 1, 0, 1);
	do_join();
	cr_assert_eq(poll_task(sample_poll(0)), 6);
}

Test(join, samples_on_other_threads_do_not_match)
{
	sy_poll(&T, 1, 5, 100, 200);
	sy_poll(&T, 2, 6, 100, 200);
	sy_sample(&T, 150, 3, 0, 1); /* no events at all on tid 3 */
	sy_sample(&T, 150, 2, 0, 1);
	sy_sample(&T, 150, 1, 0, 1);
	do_join();
	cr_assert_eq(sample_poll(0), -1);
	cr_assert_eq(poll_task(sample_poll(1)), 6);
	cr_assert_eq(poll_task(sample_poll(2)), 5);
	cr_assert_null(join__poll_at(J, 3, 150));
	cr_assert_eq(join__poll_at(J, 2, 150)->task, 6);
}

Test(join, poll_begun_before_recording_starts_at_record_start)
{
	recorded(50, 1000);
	sy_event(&T, 120, 1, TRACE_EV_POLL_END, 9);
	sy_poll(&T, 1, 5, 200, 300);
	sy_sample(&T, 60, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].task, 9);
	cr_assert_eq(J->polls[0].start, 50);
	cr_assert_eq(J->polls[0].end, 120);
	cr_assert_eq(J->polls[0].open_start, 1);
	cr_assert_eq(J->polls[0].open_end, 0);
	cr_assert_eq(poll_task(sample_poll(0)), 9);
	cr_assert_eq(J->unmatched_ends, 0);
}

Test(join, poll_begun_before_the_shim_attached_starts_at_the_attach)
{
	/* command mode: sampling from 50, shim records only from 100 on; what
	 * the thread ran at 60 was not that poll, as far as anyone knows */
	recorded(50, 1000);
	sy_meta(&T, "shim_attached", "100");
	sy_event(&T, 120, 1, TRACE_EV_POLL_END, 9);
	sy_sample(&T, 60, 1, 0, 1);
	sy_sample(&T, 110, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].start, 100);
	cr_assert_eq(J->polls[0].end, 120);
	cr_assert_eq(J->polls[0].open_start, 1);
	cr_assert_eq(sample_poll(0), -1);
	cr_assert_eq(poll_task(sample_poll(1)), 9);
}

Test(join, records_between_the_attach_and_its_time_stand_as_recorded)
{
	/* "shim_attached" is read after the attach's store: markers may have
	 * recorded a little before it. A BEGIN there opens its poll as usual;
	 * an END first there began before the store: known running only at
	 * its end, never from the attach time after it. */
	recorded(50, 1000);
	sy_meta(&T, "shim_attached", "100");
	sy_poll(&T, 1, 5, 95, 98);
	sy_event(&T, 97, 2, TRACE_EV_POLL_END, 6);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].tid, 1);
	cr_assert_eq(J->polls[0].start, 95);
	cr_assert_eq(J->polls[0].end, 98);
	cr_assert_eq(J->polls[0].open_start, 0);
	cr_assert_eq(J->polls[1].tid, 2);
	cr_assert_eq(J->polls[1].start, 97);
	cr_assert_eq(J->polls[1].end, 97);
	cr_assert_eq(J->polls[1].open_start, 1);
}

Test(join, cut_trace_uses_earliest_and_latest_times)
{
	/* no END chunk: counters are zero */
	sy_sample(&T, 30, 2, 0, 1);
	sy_event(&T, 120, 1, TRACE_EV_POLL_END, 9);
	sy_event(&T, 200, 1, TRACE_EV_POLL_BEGIN, 5);
	sy_sample(&T, 900, 2, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].start, 30);
	/* open at the cut: until thread 1's own last record, not thread 2's
	 * sample at 900 */
	cr_assert_eq(J->polls[1].end, 200);
	cr_assert_eq(J->polls[1].open_end, 1);
}

Test(join, a_poll_open_at_the_end_of_a_complete_trace_ends_at_its_threads_last_record)
{
	/* the recording ran to 5000 (thread 2's sample), thread 1's last
	 * record is a sample at 4000: its open poll is not stretched past it,
	 * its task's totals neither */
	recorded(1, 5000);
	sy_event(&T, 100, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_sample(&T, 4000, 1, 0, 1);
	sy_sample(&T, 4999, 2, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 4000);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(J->polls[0].open_start, 0);
	cr_assert_eq(J->polls[0].samples, 1);
	cr_assert_eq(sample_poll(0), 0);
	cr_assert_eq(join__task(J, 3)->total_ns, 3900);
	cr_assert_eq(join__task(J, 3)->longest_ns, 3900);
}

Test(join, a_threads_last_record_may_be_an_event_or_a_switch)
{
	/* thread 1: a WAKE after its BEGIN; thread 2: switched out at 3000,
	 * in again at 3500; thread 3: switched out at 2000 and still out when
	 * the (complete) recording ended: switch-ins are recorded to the end,
	 * so it was off-CPU, in its poll, until 9000 */
	recorded(1, 9000);
	sy_event(&T, 100, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_event(&T, 700, 1, TRACE_EV_WAKE, 4);
	sy_event(&T, 100, 2, TRACE_EV_POLL_BEGIN, 4);
	sy_switch(&T, 3000, 3500, 2, 0, 0);
	sy_event(&T, 100, 3, TRACE_EV_POLL_BEGIN, 5);
	sy_switch(&T, 2000, 0, 3, 0, 0);
	do_join();
	cr_assert_eq(J->npolls, 3);
	for (size_t i = 0; i < J->npolls; i++) {
		static const uint64_t want[] = {0, 700, 3500, 9000};

		cr_expect_eq(J->polls[i].end, want[J->polls[i].tid],
			     "tid %" PRIu32 ": %" PRIu64, J->polls[i].tid,
			     J->polls[i].end);
		cr_expect(J->polls[i].open_end);
	}
}

Test(join, in_a_cut_trace_a_switch_out_for_good_is_its_threads_last_record)
{
	/* no END chunk: when the thread came back, or whether it did, is
	 * not known */
	sy_event(&T, 100, 3, TRACE_EV_POLL_BEGIN, 5);
	sy_event(&T, 5000, 4, TRACE_EV_WAKE, 6);
	sy_switch(&T, 2000, 0, 3, 0, 0);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 2000);
	cr_assert(J->polls[0].open_end);
}

Test(join, a_poll_open_at_the_end_and_longer_than_4s_is_cut_back_too)
{
	/* over 2^32 ns either way: the long-end entry moves */
	recorded(1, 20000000000ULL);
	sy_event(&T, 100, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_sample(&T, 9000000000ULL, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 9000000000ULL);
	cr_assert_eq(join__poll_at(J, 1, 9000000000ULL), &J->polls[0]);
	cr_assert_null(join__poll_at(J, 1, 9000000001ULL));
	cr_assert_eq(join__task(J, 3)->longest_ns, 9000000000ULL - 100);
}

Test(join, a_gap_ends_the_polls_open_at_its_start_and_threads_start_afresh_after_it)
{
	/* the recorder stalled: the shim recorded nothing from 1 to 4 ms */
	recorded(1, 10 * MS);
	sy_meta(&T, "shim_gap", "1000000-4000000");
	/* thread 1: task 3's END was lost in the gap */
	sy_event(&T, 500 * US, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_poll(&T, 1, 4, 5 * MS, 6 * MS);
	/* thread 2 (its events out of file order: the sorted replay): task
	 * 6's BEGIN was lost in the gap, its END is the first after it */
	sy_event(&T, 4500 * US, 2, TRACE_EV_POLL_END, 6);
	sy_poll(&T, 2, 5, 600 * US, 800 * US);
	sy_sample(&T, 900 * US, 1, 0, 1);
	sy_sample(&T, 2 * MS, 1, 0, 1); /* in the gap */
	sy_sample(&T, 3 * MS, 2, 0, 1); /* in the gap */
	sy_sample(&T, 4200 * US, 2, 0, 1);
	do_join();
	cr_assert_eq(J->ngaps, 1);
	cr_assert_eq(J->gap_ns, 3 * MS);
	cr_assert_eq(J->npolls, 4);
	cr_assert_eq(J->unmatched_ends, 0);
	/* by start: task 3, task 5, task 6, task 4 */
	cr_assert_eq(J->polls[0].task, 3);
	cr_assert_eq(J->polls[0].end, 1 * MS, "not stretched over the gap");
	cr_assert(J->polls[0].open_end);
	cr_assert_eq(J->polls[2].task, 6);
	cr_assert_eq(J->polls[2].start, 4 * MS, "from the gap's end");
	cr_assert_eq(J->polls[2].end, 4500 * US);
	cr_assert(J->polls[2].open_start);
	cr_assert_eq(J->polls[3].task, 4);
	cr_assert(!J->polls[3].open_start && !J->polls[3].open_end);
	cr_assert_eq(poll_task(sample_poll(0)), 3);
	cr_assert_eq(sample_poll(1), -1);
	cr_assert_eq(sample_poll(2), -1);
	cr_assert_eq(poll_task(sample_poll(3)), 6);
	cr_assert_eq(J->samples_in_polls, 2);
}

Test(join, a_poll_open_at_the_end_stops_at_a_gap_after_its_begin)
{
	/* thread 1 ran on after the gap (a sample at 9500), thread 2's last
	 * record was before it: each poll ends at what comes first */
	recorded(1, 10000);
	sy_meta(&T, "shim_gap", "8000-9000");
	sy_event(&T, 7000, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_sample(&T, 9500, 1, 0, 1);
	sy_event(&T, 7000, 2, TRACE_EV_POLL_BEGIN, 4);
	sy_sample(&T, 7500, 2, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	for (size_t i = 0; i < J->npolls; i++) {
		cr_expect_eq(J->polls[i].end, J->polls[i].tid == 1 ? 8000 : 7500);
		cr_expect(J->polls[i].open_end);
	}
	cr_assert_eq(sample_poll(0), -1);
}

Test(join, after_several_gaps_a_first_end_starts_at_the_last_ones_end)
{
	recorded(1, 10000);
	sy_meta(&T, "shim_gap", "1000-2000");
	sy_meta(&T, "shim_gap", "3000-4000");
	sy_event(&T, 500, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_event(&T, 4500, 1, TRACE_EV_POLL_END, 5);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].end, 1000);
	cr_assert_eq(J->polls[1].start, 4000);
	cr_assert_eq(J->unmatched_ends, 0);
}

Test(join, gaps_are_read_sorted_and_merged_and_malformed_ones_left_out)
{
	static const char *bad[] = {"x-1",  "7000-", "9-3", "3000-3500junk",
				    "-5-6", "",	     "5"};

	sy_meta(&T, "shim_gap", "5000-6000");
	sy_meta(&T, "shim_gap", "1000-2000");
	sy_meta(&T, "shim_gap", "1500-2500");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		sy_meta(&T, "shim_gap", bad[i]);
	do_join();
	cr_assert_eq(J->ngaps, 2);
	cr_assert_eq(J->gaps[0].start, 1000);
	cr_assert_eq(J->gaps[0].end, 2500);
	cr_assert_eq(J->gaps[1].start, 5000);
	cr_assert_eq(J->gap_ns, 2500);
	cr_assert_eq(join__gap_from(J, 0), &J->gaps[0]);
	cr_assert_eq(join__gap_from(J, 1000), &J->gaps[0]);
	cr_assert_eq(join__gap_from(J, 1001), &J->gaps[1]);
	cr_assert_null(join__gap_from(J, 5001));
}

Test(join, begin_while_open_closes_the_open_poll)
{
	sy_event(&T, 100, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_event(&T, 150, 1, TRACE_EV_POLL_BEGIN, 4); /* END of 3 lost */
	sy_event(&T, 180, 1, TRACE_EV_POLL_END, 4);
	sy_sample(&T, 160, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 2);
	cr_assert_eq(J->polls[0].task, 3);
	cr_assert_eq(J->polls[0].end, 150);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(J->polls[1].task, 4);
	cr_assert_eq(J->polls[1].open_end, 0);
	cr_assert_eq(poll_task(sample_poll(0)), 4);
}

Test(join, stray_ends_are_counted_and_ignored)
{
	sy_poll(&T, 1, 3, 100, 200);
	sy_event(&T, 250, 1, TRACE_EV_POLL_END, 3); /* nothing open */
	sy_event(&T, 300, 1, TRACE_EV_POLL_BEGIN, 4);
	sy_event(&T, 320, 1, TRACE_EV_POLL_END, 5); /* other task */
	sy_event(&T, 340, 1, TRACE_EV_POLL_END, 4);
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
	sy_event(&T, 100, 1, TRACE_EV_POLL_BEGIN, 3);
	sy_event(&T, 200, 1, TRACE_EV_THREAD_STOP, 0);
	sy_sample(&T, 250, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].end, 200);
	cr_assert_eq(J->polls[0].open_end, 1);
	cr_assert_eq(sample_poll(0), -1);
}

Test(join, end_first_after_thread_start_starts_at_thread_start)
{
	T.counters.start_time = 10;
	sy_event(&T, 100, 1, TRACE_EV_THREAD_START, 0);
	sy_event(&T, 150, 1, TRACE_EV_POLL_END, 3); /* BEGIN dropped */
	do_join();
	cr_assert_eq(J->npolls, 1);
	cr_assert_eq(J->polls[0].start, 100);
	cr_assert_eq(J->polls[0].open_start, 1);
}

Test(join, events_are_taken_in_time_order_per_thread_stably)
{
	/* file order interleaves threads and is out of order on tid 2 (by
	 * more than JOIN_SKEW_NS); equal times keep file order (BEGIN then
	 * END: a zero-length poll) */
	sy_event(&T, 300 * US, 2, TRACE_EV_POLL_END, 6);
	sy_event(&T, 100 * US, 1, TRACE_EV_POLL_BEGIN, 5);
	sy_event(&T, 200 * US, 2, TRACE_EV_POLL_BEGIN, 6);
	sy_event(&T, 150 * US, 1, TRACE_EV_POLL_END, 5);
	sy_event(&T, 400 * US, 1, TRACE_EV_POLL_BEGIN, 7);
	sy_event(&T, 400 * US, 1, TRACE_EV_POLL_END, 7);
	sy_sample(&T, 250 * US, 2, 0, 1);
	sy_sample(&T, 400 * US, 1, 0, 1);
	do_join();
	cr_assert_eq(J->npolls, 3);
	cr_assert_eq(J->unmatched_ends, 0);
	cr_assert_eq(J->polls[1].task, 6);
	cr_assert_eq(J->polls[1].start, 200 * US);
	cr_assert_eq(J->polls[1].end, 300 * US);
	cr_assert_eq(J->polls[2].start, 400 * US);
	cr_assert_eq(J->polls[2].end, 400 * US);
	cr_assert_eq(poll_task(sample_poll(0)), 6);
	cr_assert_eq(poll_task(sample_poll(1)), 7);
}

/* A thread's event a few ns before its last (two clocks read a hair
 * apart) is taken in the order the thread wrote it, at its last time,
 * by the streamed join and the other alike: the streamed one does not
 * start over keeping every poll (it did, on a 300 s trace: 13 GiB). */
Test(join, a_thread_event_a_hair_early_is_taken_in_program_order)
{
	struct join *s;

	recorded(1, 10 * MS);
	sy_poll(&T, 1, 5, 100 * US, 200 * US);
	/* the next BEGIN 36 ns before the END before it */
	sy_event(&T, 200 * US - 36, 1, TRACE_EV_POLL_BEGIN, 6);
	sy_event(&T, 300 * US, 1, TRACE_EV_POLL_END, 6);
	for (uint64_t t = 400 * US; t < 9 * MS; t += 100 * US)
		sy_poll(&T, 2, 7, t, t + 50 * US);
	do_join();
	cr_assert_eq(J->unmatched_ends, 0);
	cr_assert_eq(J->polls[0].task, 5);
	cr_assert_eq(J->polls[0].end, 200 * US);
	cr_assert_eq(J->polls[1].task, 6);
	cr_assert_eq(J->polls[1].start, 200 * US, "at the thread's last time");
	cr_assert_eq(join__new(&T, 0, &s), 0);
	cr_expect(join_streamed(s), "streamed, not started over");
	cr_expect_eq(s->npolls, J->npolls);
	join__free(s);
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
	sy_task(&T, 10, "worker");		/* renamed: the last name wins */
	sy_event(&T, 5, 1, TRACE_EV_SPAWN, 40); /* unnamed, never polled */
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
	matched = J->samples_in_polls;
	cr_assert_eq(J->samples, T.nsamples);
	cr_log_info("join: %zu samples, %zu polls, %zu tasks: %.3f s (%" PRIu64
		    " samples in polls)",
		    T.nsamples, J->npolls, J->ntasks, t1 - t0, matched);
	cr_assert_eq(J->npolls, 200000);
	/* 6000 of every 10000 ns are inside a poll */
	cr_assert_gt(matched, 500000);
	cr_assert_lt(matched, 700000);
}

/* ---- a trace walked from its file gives what a loaded one gives --------- */

static int name_frame(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "fn_%" PRIx64, addr);
	out->sym = buf;
	out->module = "/usr/bin/app";
	return 0;
}

/* Every analysis output of @t, concatenated, with the return codes. */
static char *all_outputs(const struct trace *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct join *j = NULL, *jl = NULL, *jk = NULL;
	struct offcpu *oc = NULL;
	struct flame_result r;

	cr_assert_not_null(f);
	cr_assert_eq(join__new(t, 0, &j), 0);
	cr_assert_eq(join__new(t, JOIN_KEEP_POLLS, &jk), 0);
	cr_assert_eq(join__new(t, JOIN_POLL_LIST, &jl), 0);
	cr_assert_eq(offcpu__new(jl, 0, &oc), 0);
	{
		struct flame_opts all = {.format = FLAME_FOLDED, .result = &r};
		struct flame_opts svg = {.format = FLAME_SVG, .title = "x"};
		struct flame_opts task = {.format = FLAME_FOLDED};
		struct flame_opts minp = {.format = FLAME_FOLDED, .min_poll_ns = 5000};

		fprintf(f, "rc %d\n", analysis__flame(j, &all, f));
		fprintf(f, "r %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", r.samples, r.weight,
			r.stacks);
		fprintf(f, "rc %d\n", analysis__flame(j, &svg, f));
		join__select(jl, &(struct task_sel){.on = 1, .id = 3});
		fprintf(f, "rc %d\n", analysis__flame(jl, &task, f));
		join__select(jl, &(struct task_sel){.on = 0});
		fprintf(f, "rc %d\n", analysis__flame(jk, &minp, f));
		cr_assert_eq(analysis__flame(j, &minp, f), -EINVAL,
			     "min_poll_ns wants JOIN_KEEP_POLLS");
	}
	fprintf(f, "rc %d\n", analysis__tasks(j, NULL, NULL, f));
	{
		struct polls_opts po = {.sort = POLLS_BY_START};
		struct offcpu_opts oo = {.format = FLAME_FOLDED, .idle = 1};
		struct poll_flame_opts pf = {.format = FLAME_FOLDED, .poll = 7};

		fprintf(f, "rc %d\n", analysis__polls(oc, &po, f));
		fprintf(f, "rc %d\n", analysis__offcpu(oc, &oo, f));
		fprintf(f, "rc %d\n", analysis__poll_flame(oc, &pf, f));
	}
	fprintf(f,
		"polls %zu tasks %zu unmatched %" PRIu64 " samples %" PRIu64 "/%" PRIu64
		" span %" PRIu64 "..%" PRIu64 "\n",
		j->npolls, j->ntasks, j->unmatched_ends, j->samples_in_polls, j->samples,
		j->start_time, j->end_time);
	cr_assert_eq(j->npolls, jl->npolls);
	cr_assert_eq(j->samples, jl->samples);
	fclose(f);
	offcpu__free(oc);
	join__free(j);
	join__free(jk);
	join__free(jl);
	return buf;
}

/* 3 threads; thread 12's events come out of time order (a second replay),
 * thread 13 has a poll of 5 s (over 2^32 ns) and gaps of 6 s (new poll
 * blocks), thread 11 has thousands of polls (many blocks); samples inside
 * and outside polls, on a thread without events too; switches. @finish 0
 * leaves the END chunk out (a cut trace: no counters). */
static void write_synthetic(const char *path, int finish)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	struct trace_writer *w;
	uint64_t ips[4];
	uint32_t st[16];
	struct trace_counters c = {.start_time = 1000, .end_time = 40000000000ULL};

	cr_assert(fd >= 0);
	w = new_writer(fd);
	cr_assert_not_null(w);
	cr_assert_eq(trace_writer__meta(w, "frequency", "1000"), 0);
	cr_assert_eq(trace_writer__thread(w, 11, "w0"), 0);
	for (uint64_t k = 1; k <= 9; k++)
		cr_assert_eq(trace_writer__task(w, k, k % 2 ? "odd" : NULL), 0);
	for (unsigned s = 0; s < 16; s++) {
		for (unsigned d = 0; d < 4; d++)
			ips[d] = 0x400000 + 0x10 * ((s + d * 3) % 7) + d;
		cr_assert_eq(trace_writer__stack(w, ips, 1 + s % 4, &st[s]), 0);
	}
	/* thread 11: 3000 polls of 6 us every 10 us, tasks 1..9 */
	for (uint64_t k = 0; k < 3000; k++) {
		uint64_t t0 = 100000 + k * 10000;
		struct trace_event b = {.time = t0,
					.task = 1 + k % 9,
					.tid = 11,
					.type = TRACE_EV_POLL_BEGIN};
		struct trace_event e = b;

		e.time = t0 + 6000 + (k % 5) * 1000;
		e.type = TRACE_EV_POLL_END;
		if (k % 500 == 7)
			e.task = 99; /* unmatched: the poll stays open */
		cr_assert_eq(trace_writer__event(w, &b), 0);
		cr_assert_eq(trace_writer__event(w, &e), 0);
		if (k % 1000 == 999)
			cr_assert_eq(trace_writer__flush(w), 0);
	}
	/* thread 12: out of order, with an END first */
	{
		static const struct {
			uint64_t t;
			uint32_t type;
			uint64_t task;
		} ev[] = {
			{500000, TRACE_EV_POLL_END, 4},
			{900000, TRACE_EV_POLL_BEGIN, 5},
			{700000, TRACE_EV_POLL_BEGIN, 3},
			{800000, TRACE_EV_POLL_END, 3},
			{950000, TRACE_EV_POLL_END, 5},
			{990000, TRACE_EV_THREAD_STOP, 0},
			{1200000, TRACE_EV_THREAD_START, 0},
			{1300000, TRACE_EV_POLL_BEGIN, 6},
			{1300000, TRACE_EV_POLL_END, 6},
			{1400000, TRACE_EV_PARK, 0},
			{1500000, TRACE_EV_UNPARK, 0},
		};
		for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
			struct trace_event e = {.time = ev[i].t,
						.task = ev[i].task,
						.tid = 12,
						.type = ev[i].type};

			cr_assert_eq(trace_writer__event(w, &e), 0);
		}
	}
	/* thread 13: long polls and long gaps */
	for (uint64_t k = 0; k < 40; k++) {
		uint64_t t0 = 2000000000ULL + k * 6000000000ULL / 7;
		uint64_t len = k % 10 == 3 ? 5000000000ULL : 2000 + k;
		struct trace_event b = {
			.time = t0, .task = 7, .tid = 13, .type = TRACE_EV_POLL_BEGIN};
		struct trace_event e = b;

		if (k && k % 10 == 4)
			continue; /* the long poll's successor: none */
		e.time = t0 + len;
		e.type = TRACE_EV_POLL_END;
		cr_assert_eq(trace_writer__event(w, &b), 0);
		cr_assert_eq(trace_writer__event(w, &e), 0);
	}
	/* samples: thread 11 every 3 us, 12 and 13 here and there, 14 has no
	 * events */
	for (uint64_t k = 0; k < 12000; k++) {
		struct trace_sample s = {.time = 100000 + k * 2500,
					 .tid = 11,
					 .stack = st[k % 16],
					 .weight = k % 7 == 0 ? 0 : 1 + k % 3,
					 .sampler = TRACE_SAMPLER_PERF};

		cr_assert_eq(trace_writer__sample(w, &s), 0);
		if (k % 100 == 0) {
			s.tid = 12 + k % 3;
			s.time = 400000 + k * 100;
			if (s.tid == 13)
				s.time = 2000000000ULL + k * 2900000ULL;
			cr_assert_eq(trace_writer__sample(w, &s), 0);
		}
		if (k % 3000 == 0)
			cr_assert_eq(trace_writer__flush(w), 0);
	}
	for (uint64_t k = 0; k < 50; k++) {
		struct trace_switch sw = {.time = 100000 + k * 60000 + 1000,
					  .time_in = 100000 + k * 60000 + 3000,
					  .tid = 11,
					  .stack = st[k % 16],
					  .preempted = k % 4 == 0};

		cr_assert_eq(trace_writer__switch(w, &sw), 0);
	}
	if (finish)
		cr_assert_eq(trace_writer__finish(w, name_frame, NULL, &c), 0);
	else
		cr_assert_eq(trace_writer__flush(w), 0);
	trace_writer__free(w);
	close(fd);
}

Test(join, a_trace_walked_from_its_file_analyses_like_a_loaded_one)
{
	char path[] = "/tmp/d9join-test-XXXXXX";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	for (int finish = 1; finish >= 0; finish--) {
		struct trace *full, *streamed;
		const char *msg;
		char *a, *b;

		write_synthetic(path, finish);
		cr_assert_eq(trace__read(path, &full, &msg), 0);
		cr_assert_eq(trace__read_opts(
				     path, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
				     &streamed, &msg),
			     0);
		cr_assert_null(streamed->samples);
		a = all_outputs(full);
		b = all_outputs(streamed);
		cr_assert_str_eq(a, b);
		/* what it should be: spot checks against the loaded trace */
		cr_assert(strstr(a, "task 3 odd;"), "%s", a);
		cr_assert(strstr(a, "[no poll];"));
		cr_assert(strstr(a, "unmatched 10 "), "%s", strstr(a, "polls "));
		free(a);
		free(b);
		trace__free(full);
		trace__free(streamed);
	}
	unlink(path);
}

Test(join, a_poll_open_where_a_trace_was_cut_ends_at_its_threads_last_record)
{
	/* no END chunk: cut. Thread 1's poll is open; its last record is a
	 * sample at 5 ms. Thread 2 goes on to 1 s. */
	sy_event(&T, 1000000, 1, TRACE_EV_POLL_BEGIN, 7);
	sy_sample(&T, 5000000, 1, 0, 1);
	sy_event(&T, 2000000, 2, TRACE_EV_POLL_BEGIN, 8);
	sy_event(&T, 1000000000, 2, TRACE_EV_POLL_END, 8);
	do_join();
	cr_assert_eq(J->npolls, 2);
	for (size_t i = 0; i < J->npolls; i++) {
		const struct poll *p = &J->polls[i];

		if (p->tid == 1) {
			cr_expect_eq(p->end, 5000000, "not stretched to thread 2's 1 s");
			cr_expect(p->open_end);
		} else {
			cr_expect_eq(p->end, 1000000000);
			cr_expect(!p->open_end);
		}
	}
}

/* A recording as the recorder writes one: each second's events, then its
 * samples, then a flush; 6 s of 2 threads polling (0.4 ms every 1 ms, 5
 * tasks), samples every 0.7 ms on them and on a thread without events,
 * a poll open across each flush. @late adds, in the 5th second's
 * chunks: 1 a sample of the 2nd second, 2 a poll of the 2nd second on a
 * new thread, 3 a sample 0.5 s late (within what streaming waits for). */
static void write_seconds(const char *path, int late)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	const uint64_t s0 = 5000000000ULL, sec = 1000000000ULL;
	struct trace_counters c = {.start_time = s0, .end_time = s0 + 6 * sec};
	struct trace_writer *w;
	uint32_t st[3];

	cr_assert(fd >= 0);
	w = new_writer(fd);
	for (unsigned k = 0; k < 3; k++) {
		uint64_t ips[2] = {0x400100 + k, 0x400200};

		cr_assert_eq(trace_writer__stack(w, ips, 1 + k % 2, &st[k]), 0);
	}
	for (uint64_t k = 1; k <= 5; k++)
		cr_assert_eq(trace_writer__task(w, k, k == 2 ? "two" : NULL), 0);
	for (uint64_t s = 0; s < 6; s++) {
		uint64_t a = s0 + s * sec;

		for (uint64_t t = a; t < a + sec; t += 1000000)
			for (uint32_t tid = 21; tid <= 22; tid++) {
				/* thread 22 runs late: its polls cross the
				 * flushes */
				uint64_t b = t + (tid == 22 ? 800000 : 0);
				struct trace_event e = {.time = b,
							.task = 1 +
								(t / 1000000 + tid) % 5,
							.tid = tid,
							.type = TRACE_EV_POLL_BEGIN};

				cr_assert_eq(trace_writer__event(w, &e), 0);
				e.time = b + 400000 + (t / 1000000 % 7) * 50000;
				e.type = TRACE_EV_POLL_END;
				cr_assert_eq(trace_writer__event(w, &e), 0);
			}
		/* back to back on a thread of its own, another thread's poll
		 * beginning between them, a switch at the ns they share: the
		 * later poll's */
		if (s == 3) {
			static const uint64_t at[] = {700000, 900000, 900000, 950000};

			for (unsigned k = 0; k < 4; k++) {
				struct trace_event e = {
					.time = a + at[k],
					.task = 4,
					.tid = 25,
					.type = k % 2 ? TRACE_EV_POLL_END
						      : TRACE_EV_POLL_BEGIN};

				cr_assert_eq(trace_writer__event(w, &e), 0);
			}
			cr_assert_eq(
				trace_writer__switch(
					w, &(struct trace_switch){.time = a + 900000,
								  .time_in = a + 920000,
								  .tid = 25}),
				0);
		}
		/* off-CPU: at a poll's start, its end, inside, outside */
		for (uint64_t k = 0; k < 4; k++) {
			uint64_t t = a + 1000000 * (100 + 200 * k);
			uint64_t at[] = {t, t + 400000 + (t / 1000000 % 7) * 50000,
					 t + 1000, t + 950000};
			struct trace_switch sw = {.time = at[k],
						  .time_in = at[k] + 20000,
						  .tid = 21 + k % 2};

			cr_assert_eq(trace_writer__switch(w, &sw), 0);
		}
		if (s == 4 && late == 2) {
			struct trace_event e = {.time = s0 + sec + 300,
						.task = 3,
						.tid = 24,
						.type = TRACE_EV_POLL_BEGIN};

			cr_assert_eq(trace_writer__event(w, &e), 0);
			e.time += 500000;
			e.type = TRACE_EV_POLL_END;
			cr_assert_eq(trace_writer__event(w, &e), 0);
		}
		for (uint64_t t = a; t < a + sec; t += 700000)
			for (uint32_t tid = 21; tid <= 23; tid++) {
				struct trace_sample x = {
					.time = t + tid,
					.tid = tid,
					.stack = st[(t / 700000 + tid) % 3],
					.weight = 1,
					.sampler = TRACE_SAMPLER_PERF};

				cr_assert_eq(trace_writer__sample(w, &x), 0);
			}
		if (s == 4 && (late == 1 || late == 3)) {
			struct trace_sample x = {.time = late == 1
								 ? s0 + sec + 100100
								 : s0 + 4 * sec + 500100,
						 .tid = 21,
						 .stack = st[2],
						 .weight = 5,
						 .sampler = TRACE_SAMPLER_PERF};

			cr_assert_eq(trace_writer__sample(w, &x), 0);
		}
		cr_assert_eq(trace_writer__flush(w), 0);
	}
	cr_assert_eq(trace_writer__finish(w, name_frame, NULL, &c), 0);
	trace_writer__free(w);
	close(fd);
}

/* The join's answers that do not keep polls: tasks, flame, totals. */
static char *light_outputs(const struct trace *t, unsigned int flags, int *streamed)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct join *j = NULL;
	struct flame_opts fo = {.format = FLAME_FOLDED};

	cr_assert_not_null(f);
	cr_assert_eq(join__new(t, flags, &j), 0);
	*streamed = join_streamed(j);
	fprintf(f, "rc %d\n", analysis__tasks(j, NULL, NULL, f));
	fprintf(f, "rc %d\n", analysis__flame(j, &fo, f));
	fprintf(f, "polls %zu tasks %zu samples %" PRIu64 "/%" PRIu64 "\n", j->npolls,
		j->ntasks, j->samples_in_polls, j->samples);
	for (size_t i = 0; i < j->ntasks; i++)
		fprintf(f,
			"%" PRIu64 ": %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			j->tasks[i].task, j->tasks[i].polls, j->tasks[i].samples,
			j->tasks[i].total_ns, j->tasks[i].longest_ns);
	fclose(f);
	join__free(j);
	return buf;
}

Test(join, a_join_that_keeps_no_poll_streams_and_answers_as_one_that_keeps_them)
{
	char path[] = "/tmp/d9join-stream-XXXXXX";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	for (int late = 0; late <= 3; late++) {
		struct trace *t;
		const char *msg;
		char *a, *b;
		int sa, sb;

		write_seconds(path, late);
		cr_assert_eq(trace__read_opts(
				     path, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
				     &t, &msg),
			     0);
		a = light_outputs(t, 0, &sa);
		b = light_outputs(t, JOIN_NO_STREAM, &sb);
		cr_assert_str_eq(a, b, "late %d", late);
		{
			/* the samples in memory: all come first, held until
			 * the events reach them */
			struct trace *tm;
			char *c;
			int sc;

			cr_assert_eq(
				trace__read_opts(path, TRACE_READ_NO_EVENTS, &tm, &msg),
				0);
			c = light_outputs(tm, 0, &sc);
			cr_assert_str_eq(a, c, "late %d, samples in memory", late);
			/* a late sample is not: they all came first */
			cr_assert_eq(sc, late != 2);
			free(c);
			trace__free(tm);
		}
		cr_assert_eq(sb, 0);
		/* a record older than what was freed: joined again, whole */
		cr_assert_eq(sa, late == 0 || late == 3, "late %d streamed %d", late, sa);
		cr_assert(strstr(a, "polls 12002 ") || late == 2, "%s", a);
		cr_assert(strstr(a, "samples 9856/25722") || late, "%s",
			  strstr(a, "polls"));
		free(a);
		free(b);
		trace__free(t);
	}
	unlink(path);
}

/* Poll @p of a join that lists every poll, as a keep lists it. */
static void same_poll(const struct poll *k, const struct poll *p)
{
	cr_assert_not_null(k, "poll %u not listed", p->id);
	cr_assert(k->id == p->id && k->start == p->start && k->end == p->end &&
			  k->task == p->task && k->tid == p->tid &&
			  k->samples == p->samples && k->open_start == p->open_start &&
			  k->open_end == p->open_end,
		  "poll %u differs", p->id);
}

/* join_for_each_poll()'s polls, checked against a whole list */
struct each_seen {
	const struct join *all;
	size_t n, bad; /* given, of which not as listed in @all */
	int restarts;
};

/* (those given before the join starts over may differ: it does so as a
 * late record changes them) */
static int each_poll(void *ctx, const struct poll *p)
{
	struct each_seen *e = ctx;
	const struct poll *k;

	if (!p) {
		e->n = e->bad = 0;
		e->restarts++;
		return 0;
	}
	k = e->n < e->all->npolls ? &e->all->polls[e->n] : NULL;
	e->bad += !k || p->id != e->n || k->start != p->start || k->end != p->end ||
		  k->task != p->task || k->tid != p->tid || k->samples != p->samples ||
		  k->open_start != p->open_start || k->open_end != p->open_end;
	e->n++;
	return 0;
}

Test(join, a_keep_lists_the_polls_a_view_shows_as_the_whole_list_has_them)
{
	char path[] = "/tmp/d9join-keep-XXXXXX";
	int fd = mkstemp(path);
	static const struct join_keep keeps[] = {
		{.min_ns = 650000},
		{.n = 5, .longest = 1},
		{.min_ns = 500000, .n = 7},
		{.switches = 1},
		{.sel = {.on = 1, .id = 2}, .min_ns = 600000, .n = 3, .longest = 1},
		{.sel = {.on = 1, .name = "two"}, .switches = 1},
	};

	cr_assert(fd >= 0);
	close(fd);
	for (int late = 0; late <= 1; late++) {
		struct trace *t;
		struct join *all;
		const char *msg;

		write_seconds(path, late);
		cr_assert_eq(trace__read_opts(
				     path, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
				     &t, &msg),
			     0);
		cr_assert_eq(join__new(t, JOIN_POLL_LIST, &all), 0);
		cr_assert_eq(all->nlisted, all->npolls);
		for (size_t q = 0; q < sizeof(keeps) / sizeof(keeps[0]); q++) {
			const struct join_keep *k = &keeps[q];
			struct join *j;
			size_t matched = 0, listed = 0;
			const struct poll *worst[8];
			size_t nw = 0;

			cr_assert_eq(join__new_keep(t, 0, k, &j), 0);
			cr_assert_eq(join_streamed(j), !late, "keep %zu late %d", q,
				     late);
			cr_assert_eq(j->npolls, all->npolls);
			cr_assert_eq(j->samples, all->samples);
			for (size_t i = 0; i < all->npolls; i++) {
				const struct poll *p = &all->polls[i];
				const struct task_stat *ts = join__task(all, p->task);
				int m = p->end - p->start >= k->min_ns &&
					(!k->sel.on || task_sel_has(&k->sel, ts));

				matched += m;
				if (m && !k->n)
					same_poll(join__poll(j, p->id), p);
				if (m && k->n && !k->longest && matched <= k->n)
					same_poll(join__poll(j, p->id), p);
				if (m &&
				    k->longest) { /* insertion: longest, then first */
					size_t at = nw < k->n ? nw++ : k->n;

					while (at > 0 &&
					       worst[at - 1]->end - worst[at - 1]->start <
						       p->end - p->start) {
						if (at < k->n)
							worst[at] = worst[at - 1];
						at--;
					}
					if (at < k->n)
						worst[at] = p;
				}
			}
			for (size_t i = 0; i < nw; i++)
				same_poll(join__poll(j, worst[i]->id), worst[i]);
			cr_assert_eq(j->nmatched, matched, "keep %zu", q);
			for (size_t i = 0; i < t->nswitches; i++) {
				int32_t id = join__switch_poll(all, i);

				if (k->switches)
					cr_assert_eq(join__switch_poll(j, i), id,
						     "switch %zu", i);
				if (k->switches && id >= 0)
					same_poll(join__poll(j, (uint32_t)id),
						  &all->polls[id]);
				listed += id >= 0;
			}
			cr_assert_gt(listed, 8, "switches fall in polls");
			join__free(j);
		}
		{
			/* and more, once a view knows which: windows */
			static const struct join_window win[] = {
				{22, 5300000000ULL, 5302000000ULL},
				{21, 7000000000ULL, 7000000001ULL},
				{21, 6999000000ULL, 6999000000ULL},
				{23, 5000000000ULL, 9000000000ULL},
				{22, 5301000000ULL, 5301000000ULL},
			};
			struct join_keep k = {.n = 2, .longest = 1};
			struct join *j;
			size_t want = 0;

			cr_assert_eq(join__new_keep(t, 0, &k, &j), 0);
			cr_assert_eq(join__list_more(j, win, 5), 0);
			for (size_t i = 0; i < all->npolls; i++) {
				const struct poll *p = &all->polls[i];
				int in = 0;

				for (size_t w = 0; w < 5; w++)
					in |= win[w].tid == p->tid &&
					      p->end >= win[w].from &&
					      p->start <= win[w].to;
				want += in;
				if (in)
					same_poll(join__poll(j, p->id), p);
				if (join__poll(j, p->id))
					same_poll(join__poll(j, p->id), p);
			}
			cr_assert_eq(want, 5, "3 polls in the first window, 1, 1");
			if (!late)
				cr_assert_eq(j->nlisted, 7, "%zu", j->nlisted);
			join__free(j);
		}
		{
			/* many windows, a walk from a mark each or for some
			 * together: each starting inside a poll (on its thread
			 * or the other) that began before the mark */
			struct join_window win[128];
			struct join_keep k = {.n = 2, .longest = 1};
			struct join *j;
			size_t nw = 0, want = 0, nmark = 0;
			uint64_t mark = 0;

			for (size_t i = 5; i < all->npolls && nw < 64;
			     i += all->npolls / 61) {
				const struct poll *p = &all->polls[i];
				uint64_t mid = p->start + (p->end - p->start) / 2;

				win[nw++] = (struct join_window){
					nw % 2 ? p->tid : 43 - p->tid, mid,
					mid + (nw % 3) * 1500000};
			}
			/* and at a mark (every 9th: a walk each), on the other
			 * thread, whose poll then began before it */
			for (size_t i = 0; i < all->npolls && nw < 128; i++) {
				const struct poll *p = &all->polls[i];

				if (i && (p->start < mark + JOIN_MARK_NS ||
					  p->start == all->polls[i - 1].start))
					continue;
				mark = p->start;
				if (nmark++ % 9 == 4 && p->tid <= 22)
					win[nw++] = (struct join_window){43 - p->tid,
									 mark, mark};
			}
			cr_assert_eq(join__new_keep(t, 0, &k, &j), 0);
			cr_assert_eq(join__list_more(j, win, nw), 0);
			for (size_t i = 0; i < all->npolls; i++) {
				const struct poll *p = &all->polls[i];
				int in = 0;

				for (size_t w = 0; w < nw; w++)
					in |= win[w].tid == p->tid &&
					      p->end >= win[w].from &&
					      p->start <= win[w].to;
				want += in;
				if (in)
					same_poll(join__poll(j, p->id), p);
				if (join__poll(j, p->id))
					same_poll(join__poll(j, p->id), p);
			}
			cr_assert_gt(want, 100, "%zu polls in %zu windows", want, nw);
			join__free(j);
		}
		{
			/* the delays replayed in the join's walk say no here
			 * (no crash, nothing kept): thread 25's events come a
			 * second late in the file (and with a late record, the
			 * join starts over, the feed too): a walk answers */
			const struct delays_keep dk = {.top = 3, .count_ns = 1000};
			struct delays_feed *f;
			struct delays *fed = NULL, *own;
			struct join *j;

			cr_assert_eq(delays_feed__new(&dk, &f), 0);
			cr_assert_eq(join__new_keep(t, 0,
						    &(struct join_keep){
							    .min_ns = UINT64_MAX,
							    .events = delays_feed__events,
							    .events_ctx = f},
						    &j),
				     0);
			cr_assert_eq(delays__from_feed(f, j, &dk, &fed), -EAGAIN,
				     "late %d", late);
			cr_assert_null(fed);
			cr_assert_eq(delays__new(j, &dk, &own), 0);
			delays__free(fed);
			delays__free(own);
			delays_feed__free(f);
			join__free(j);
		}
		{
			/* every poll again, from a join that lists few */
			struct join_keep k = {.n = 2, .longest = 1};
			struct each_seen e = {.all = all};
			struct join *j;

			cr_assert_eq(join__new_keep(t, 0, &k, &j), 0);
			cr_assert_eq(join_for_each_poll(j, each_poll, &e), 0);
			cr_assert_eq(e.n, all->npolls, "late %d", late);
			cr_assert_eq(e.bad, 0, "late %d", late);
			/* a late record: the join lists them all already */
			cr_assert_eq(join_streamed(j), !late);
			cr_assert_eq(e.restarts, 0, "late %d", late);
			join__free(j);
			/* ... and from the join's own walk: a late record
			 * has it start over, and say so */
			e = (struct each_seen){.all = all};
			k.each = each_poll;
			k.ctx = &e;
			cr_assert_eq(join__new_keep(t, 0, &k, &j), 0);
			cr_assert_eq(e.n, all->npolls, "late %d", late);
			cr_assert_eq(e.bad, 0, "late %d", late);
			cr_assert_eq(e.restarts, late, "late %d", late);
			join__free(j);
			e = (struct each_seen){.all = all};
			cr_assert_eq(join_for_each_poll(all, each_poll, &e), 0);
			cr_assert_eq(e.n, all->npolls);
			cr_assert_eq(e.bad, 0);
			cr_assert_eq(e.restarts, 0);
		}
		join__free(all);
		trace__free(t);
	}
	unlink(path);
}
