/* SPDX-License-Identifier: MIT */
/*
 * test_delays.c - wake-to-poll delays and run-queue accounting on
 * synthetic traces.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"
#include "tests/unit/view_fixture.h"

#define MS 1000000ULL
#define US 1000ULL

TestSuite(delays, .init = setup, .fini = teardown);

static void do_join(void)
{
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(offcpu__new(J, 0, &OC), 0);
	cr_assert_eq(delays__new(J, NULL, &D), 0);
}

static uint64_t delay_ns(size_t i)
{
	return D->v[i].begin - D->v[i].wake;
}

static void run_switch(uint64_t time, uint64_t in, uint32_t tid, uint32_t stack,
		       int preempted, uint64_t runnable, uint32_t holder)
{
	sy_switch(&T, time, in, tid, stack, preempted);
	T.switches[T.nswitches - 1].runnable = runnable;
	T.switches[T.nswitches - 1].holder = holder;
}

/* ---- the delays ---------------------------------------------------------- */

Test(delays, wakes_before_the_poll_merge_into_the_first)
{
	sy_task(&T, 1, "t");
	sy_event(&T, 1 * MS, 10, TRACE_EV_WAKE, 1);
	sy_event(&T, 2 * MS, 11, TRACE_EV_WAKE, 1);
	sy_event(&T, 3 * MS, 10, TRACE_EV_WAKE, 1);
	sy_poll(&T, 20, 1, 5 * MS, 6 * MS);
	T.counters.end_time = 10 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(D->v[0].wake, 1 * MS, "the first pending wake counts");
	cr_expect_eq(delay_ns(0), 4 * MS);
	cr_expect_eq(D->v[0].merged, 2);
	cr_expect_eq(D->v[0].waker, 10);
	cr_expect_eq(D->v[0].poller, 20);
	cr_expect_eq(D->v[0].poll, 0);
	cr_expect_eq(D->nlost, 0);
}

Test(delays, a_wake_during_its_own_poll_waits_for_the_next_poll)
{
	sy_task(&T, 1, "t");
	sy_poll(&T, 20, 1, 1 * MS, 4 * MS);
	/* woken (by itself, say) inside its poll: ready again from then */
	sy_event(&T, 3 * MS, 20, TRACE_EV_WAKE, 1);
	sy_poll(&T, 21, 1, 7 * MS, 8 * MS);
	T.counters.end_time = 10 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(delay_ns(0), 4 * MS);
	cr_expect_eq(D->v[0].waker_poll, 0, "the waker was polling task 1 itself");
	cr_expect_eq(D->v[0].poller, 21);
}

Test(delays, spawn_readies_the_first_poll_and_an_end_forgets_a_wake)
{
	sy_task(&T, 1, "first");
	sy_task(&T, 2, "cancelled");
	sy_task(&T, 3, "forgotten");
	sy_event(&T, 1 * MS, 10, TRACE_EV_SPAWN, 1);
	sy_poll(&T, 20, 1, 2 * MS, 3 * MS);
	sy_event(&T, 1 * MS, 10, TRACE_EV_WAKE, 2);
	sy_event(&T, 2 * MS, 10, TRACE_EV_TASK_END, 2);
	sy_event(&T, 4 * MS, 10, TRACE_EV_WAKE, 3);
	/* woken 50 ms before the end: the recording ended first */
	sy_task(&T, 4, "recent");
	sy_event(&T, 450 * MS, 10, TRACE_EV_WAKE, 4);
	T.counters.end_time = 500 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(D->v[0].task, 1);
	cr_expect(D->v[0].spawn);
	cr_expect_eq(delay_ns(0), 1 * MS);
	cr_assert_eq(D->nlost, 1, "task 2 ended: cancelled, not lost");
	cr_expect_eq(D->lost[0].task, 3);
	cr_expect_eq(D->lost[0].wake, 4 * MS);
	cr_expect_eq(D->waiting_at_end, 1, "task 4");
}

Test(delays, no_delay_and_no_lost_or_unended_task_spans_a_gap)
{
	/* the shim recorded nothing from 5 to 7 ms */
	sy_meta(&T, "shim_gap", "5000000-7000000");
	sy_task(&T, 1, "across");
	sy_task(&T, 2, "before");
	sy_task(&T, 3, "spawned before");
	sy_task(&T, 4, "spawned after");
	sy_task(&T, 5, "woken again");
	sy_task(&T, 6, "alive after");
	/* task 1: woken before the gap, a poll after it (an earlier one, or
	 * its end, may be in the gap) */
	sy_event(&T, 4 * MS, 10, TRACE_EV_WAKE, 1);
	sy_poll(&T, 20, 1, 8 * MS, 8 * MS + 100 * US);
	/* task 2: all before the gap */
	sy_event(&T, 1 * MS, 10, TRACE_EV_WAKE, 2);
	sy_poll(&T, 20, 2, 2 * MS, 3 * MS);
	/* task 3: spawned before the gap, nothing after: not lost, not
	 * known unended; task 4: the same after it */
	sy_event(&T, 3 * MS, 10, TRACE_EV_SPAWN, 3);
	sy_event(&T, 8 * MS, 10, TRACE_EV_SPAWN, 4);
	/* task 5: the wake before the gap is forgotten, not merged */
	sy_event(&T, 4 * MS, 10, TRACE_EV_WAKE, 5);
	sy_event(&T, 7 * MS + 500 * US, 10, TRACE_EV_WAKE, 5);
	sy_poll(&T, 20, 5, 9 * MS, 9 * MS + 100 * US);
	/* task 6: spawned before the gap, polled after it: did not end in
	 * it, and never did */
	sy_event(&T, 3 * MS, 10, TRACE_EV_SPAWN, 6);
	sy_poll(&T, 20, 6, 9 * MS + 200 * US, 9 * MS + 300 * US);
	T.counters.end_time = 500 * MS;
	do_join();
	cr_assert_eq(D->n, 2);
	for (size_t i = 0; i < D->n; i++) {
		cr_expect_neq(D->v[i].task, 1);
		if (D->v[i].task == 5) {
			cr_expect_eq(D->v[i].wake, 7 * MS + 500 * US);
			cr_expect_eq(D->v[i].merged, 0);
		}
	}
	cr_assert_eq(D->nlost, 1);
	cr_expect_eq(D->lost[0].task, 4);
	cr_assert_eq(D->nunended, 2);
	cr_expect_eq(D->unended[0].task, 6);
	cr_expect_eq(D->unended[1].task, 4);
}

Test(delays, events_out_of_file_order_are_replayed_in_time_order)
{
	sy_task(&T, 1, "t");
	/* the poller's ring was drained before the waker's */
	sy_poll(&T, 20, 1, 5 * MS, 6 * MS);
	sy_event(&T, 2 * MS, 10, TRACE_EV_WAKE, 1);
	T.counters.end_time = 10 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(delay_ns(0), 3 * MS);
}

Test(delays, an_event_later_than_the_replay_window_is_still_in_order)
{
	sy_task(&T, 1, "t");
	sy_task(&T, 2, "u");
	/* task 1 polled at 5 s; task 2's polls run on to 7 s; only then
	 * comes task 1's wake at 4.9 s (a ring drained two seconds late) */
	sy_poll(&T, 20, 1, 5000 * MS, 5001 * MS);
	for (int i = 0; i < 200; i++) {
		uint64_t w = 5000 * MS + (uint64_t)i * 10 * MS;

		sy_event(&T, w, 11, TRACE_EV_WAKE, 2);
		sy_poll(&T, 21, 2, w + 1 * MS, w + 2 * MS);
	}
	sy_event(&T, 4900 * MS, 10, TRACE_EV_WAKE, 1);
	T.counters.end_time = 8000 * MS;
	do_join();
	cr_assert_eq(D->n, 201);
	cr_expect_eq(delay_ns(0), 100 * MS, "the late wake's delay, longest");
	cr_expect_eq(D->v[0].task, 1);
	cr_expect_eq(D->nlost, 0);
}

/* what a view keeps: the head of the whole list, exact counts */
Test(delays, a_kept_list_is_the_whole_lists_head_with_exact_counts)
{
	struct delays *all;
	size_t i, k, want_match = 0, want_count = 0;

	for (uint64_t t = 1; t <= 3; t++) {
		sy_task(&T, t, "t");
		for (int n = 0; n < 40; n++) {
			uint64_t w = (uint64_t)n * 10 * MS + t * 100 * US;

			sy_event(&T, w, 10, TRACE_EV_WAKE, t);
			/* lengths with ties across tasks */
			sy_poll(&T, 20 + (uint32_t)t, t,
				w + (uint64_t)(n % 7 + 1) * 10 * US, w + 5 * MS);
		}
	}
	T.counters.end_time = 500 * MS;
	do_join();
	all = D;
	D = NULL;
	cr_assert_eq(delays__new(J,
				 &(struct delays_keep){.min_ns = 30 * US,
						       .top = 5,
						       .count_ns = 60 * US},
				 &D),
		     0);
	for (i = 0; i < all->n; i++) {
		uint64_t ns = all->v[i].begin - all->v[i].wake;

		want_match += ns >= 30 * US;
		want_count += ns >= 60 * US;
	}
	cr_expect_eq(D->matched, want_match);
	cr_expect_eq(D->counted, want_count);
	cr_assert_eq(D->n, 5);
	for (i = 0; i < D->n; i++) {
		cr_expect_eq(D->v[i].task, all->v[i].task, "row %zu", i);
		cr_expect_eq(D->v[i].wake, all->v[i].wake, "row %zu", i);
		cr_expect_eq(D->v[i].begin, all->v[i].begin, "row %zu", i);
	}
	/* one task chosen: its own head */
	delays__free(D);
	D = NULL;
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 2}), 0);
	cr_assert_eq(delays__new(J, &(struct delays_keep){.top = 3}, &D), 0);
	cr_expect_eq(D->matched, 40);
	cr_assert_eq(D->n, 3);
	for (i = 0, k = 0; i < all->n && k < D->n; i++) {
		if (all->v[i].task != 2)
			continue;
		cr_expect_eq(D->v[k].wake, all->v[i].wake, "row %zu", k);
		k++;
	}
	delays__free(all);
}

/* The delays of a join's walk (a feed) against @want's of a walk of their
 * own, on the same join */
static void same_delays(const struct delays *d, const struct delays *want)
{
	cr_assert_eq(d->n, want->n);
	cr_expect_eq(d->matched, want->matched);
	cr_expect_eq(d->counted, want->counted);
	cr_expect_eq(d->waiting_at_end, want->waiting_at_end);
	for (size_t i = 0; i < d->n; i++)
		cr_expect_eq(memcmp(&d->v[i], &want->v[i], sizeof(d->v[i])), 0, "row %zu",
			     i);
	cr_assert_eq(d->nlost, want->nlost);
	for (size_t i = 0; i < d->nlost; i++)
		cr_expect_eq(memcmp(&d->lost[i], &want->lost[i], sizeof(d->lost[i])), 0);
	cr_assert_eq(d->nunended, want->nunended);
	for (size_t i = 0; i < d->nunended; i++)
		cr_expect_eq(
			memcmp(&d->unended[i], &want->unended[i], sizeof(d->unended[i])),
			0);
	for (size_t i = 0; i < J->ntasks; i++) {
		cr_expect_eq(d->hist[i].n, want->hist[i].n, "task %zu", i);
		cr_expect_eq(d->hist[i].sum, want->hist[i].sum, "task %zu", i);
		cr_expect_eq(d->hist[i].max, want->hist[i].max, "task %zu", i);
	}
}

/* chrome's flows: a join listing the longest polls, and the delays each
 * a listed poll ended. A listed poll that ends at the very ns an unlisted
 * one begins is not the unlisted one's: its delay is not listed. */
Test(delays, a_listed_poll_ending_where_an_unlisted_begins_is_not_its_poll)
{
	sy_task(&T, 1, "long");
	sy_task(&T, 2, "short");
	sy_event(&T, 1 * MS, 10, TRACE_EV_WAKE, 1);
	sy_poll(&T, 20, 1, 2 * MS, 12 * MS);
	sy_event(&T, 5 * MS, 10, TRACE_EV_WAKE, 2);
	sy_poll(&T, 20, 2, 12 * MS, 12 * MS + 10 * US);
	T.counters.end_time = 20 * MS;
	cr_assert_eq(join__new_keep(&T, 0, &(struct join_keep){.n = 1, .longest = 1}, &J),
		     0);
	cr_assert_eq(J->nlisted, 1);
	cr_assert_eq(delays__new(J,
				 &(struct delays_keep){.min_ns = UINT64_MAX, .listed = 1},
				 &D),
		     0);
	cr_assert_eq(D->n, 1);
	cr_expect_eq(D->v[0].task, 1);
	cr_expect_eq(D->v[0].poll, (int32_t)J->polls[0].id);
	cr_expect_eq(J->polls[0].task, 1);
}

/* A join fed @keep's replay: 0 and its delays in D, or from_feed's no */
static int fed_join(const struct delays_keep *keep)
{
	struct delays_feed *f;
	int err;

	cr_assert_eq(delays_feed__new(keep, &f), 0);
	cr_assert_eq(join__new_keep(&T, 0,
				    &(struct join_keep){.min_ns = UINT64_MAX,
							.events = delays_feed__events,
							.events_ctx = f},
				    &J),
		     0);
	err = delays__from_feed(f, J, keep, &D);
	delays_feed__free(f);
	return err;
}

Test(delays, a_join_fed_replay_answers_as_a_walk_of_its_own)
{
	static const struct delays_keep keeps[] = {
		{.min_ns = 30 * US, .top = 5, .count_ns = 60 * US},
		{.stats_only = 1},
		{.min_ns = 0},
	};
	struct delays *want;

	for (uint64_t t = 1; t <= 3; t++) {
		sy_task(&T, t, "t");
		sy_event(&T, t * US, 10, TRACE_EV_SPAWN, t);
		for (int n = 0; n < 40; n++) {
			uint64_t w = (uint64_t)n * 10 * MS + t * 100 * US;

			sy_event(&T, w, 10 + (uint32_t)n % 2, TRACE_EV_WAKE, t);
			sy_poll(&T, 20 + (uint32_t)t, t,
				w + (uint64_t)(n % 7 + 1) * 10 * US, w + 5 * MS);
		}
	}
	/* task 3 ends; task 4 is woken and never polled (lost) */
	sy_event(&T, 450 * MS, 10, TRACE_EV_TASK_END, 3);
	sy_task(&T, 4, "lost");
	sy_poll(&T, 24, 4, 1 * MS, 2 * MS);
	sy_event(&T, 100 * MS, 10, TRACE_EV_WAKE, 4);
	T.counters.end_time = 900 * MS;
	for (size_t k = 0; k < sizeof(keeps) / sizeof(keeps[0]); k++) {
		cr_assert_eq(fed_join(&keeps[k]), 0, "keep %zu", k);
		cr_assert_eq(delays__new(J, &keeps[k], &want), 0);
		same_delays(D, want);
		cr_expect_eq(D->nlost, 1);
		cr_expect_eq(D->nunended, 2, "tasks 1 and 2");
		delays__free(want);
		delays__free(D);
		join__free(J);
		D = NULL;
		J = NULL;
	}
}

Test(delays, a_feed_says_where_it_cannot_know_and_a_walk_answers)
{
	struct delays_feed *f;
	const struct delays_keep keep = {.top = 3};

	/* a wake two seconds late in the file: past the feed's window */
	sy_task(&T, 1, "t");
	sy_task(&T, 2, "u");
	sy_poll(&T, 20, 1, 5000 * MS, 5001 * MS);
	for (int i = 0; i < 200; i++) {
		uint64_t w = 5000 * MS + (uint64_t)i * 10 * MS;

		sy_event(&T, w, 11, TRACE_EV_WAKE, 2);
		sy_poll(&T, 21, 2, w + 1 * MS, w + 2 * MS);
	}
	sy_event(&T, 4900 * MS, 10, TRACE_EV_WAKE, 1);
	T.counters.end_time = 8000 * MS;
	cr_assert_eq(fed_join(&keep), -EAGAIN);
	cr_assert_null(D);
	cr_assert_eq(delays__new(J, &keep, &D), 0);
	cr_expect_eq(D->v[0].begin - D->v[0].wake, 100 * MS);
	/* another keep than the feed's, a task chosen: no either */
	cr_assert_eq(delays_feed__new(&keep, &f), 0);
	delays__free(D);
	D = NULL;
	join__free(J);
	cr_assert_eq(join__new_keep(&T, 0,
				    &(struct join_keep){.min_ns = UINT64_MAX,
							.events = delays_feed__events,
							.events_ctx = f},
				    &J),
		     0);
	cr_expect_eq(delays__from_feed(f, J, &(struct delays_keep){.top = 4}, &D),
		     -EAGAIN);
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 2}), 0);
	cr_expect_eq(delays__from_feed(f, J, &keep, &D), -EAGAIN);
	cr_assert_null(D);
	delays_feed__free(f);
}

Test(delays, stats_are_nearest_rank_per_task)
{
	struct delay_stats st;

	sy_task(&T, 1, "t");
	for (int i = 0; i < 100; i++) {
		uint64_t w = (uint64_t)i * 10 * MS;

		sy_event(&T, w, 10, TRACE_EV_WAKE, 1);
		/* delays 1..100 us */
		sy_poll(&T, 20, 1, w + (uint64_t)(i + 1) * US, w + 5 * MS);
	}
	do_join();
	/* one task, its own group (task index 0) */
	cr_assert_eq(delays__task_stats(D, NULL, 1, &st), 0);
	cr_expect_eq(st.n, 100);
	cr_expect_eq(st.max, 100 * US);
	cr_expect_eq(st.p99, 99 * US);
	cr_expect_eq(st.p50, 50 * US);
	cr_expect_eq(delay_ns(0), 100 * US, "longest first");
}

/* ---- the causes ---------------------------------------------------------- */

static uint32_t S_SPIN, S_SLEEP;

static void frames(void)
{
	uint32_t sched = sy_frame(&T, 0xffffffff81000100, "schedule", "[kernel]", 0, 1);
	uint32_t cns = sy_frame(&T, 0x7f0000001000, "clock_nanosleep", "libc.so.6", 0, 0);
	uint32_t spin = sy_frame(&T, 0x401000, "hog_spin", "rt", 0, 0);
	uint32_t inner = sy_frame(&T, 0x402000, "hog_inner", "rt", 0, 0);
	uint32_t poll = sy_frame(&T, 0x403000, "hog_poll", "rt", 0, 0);
	uint32_t run = sy_frame(&T, 0x404000, "run", "rt", 0, 0);

	S_SPIN = sy_stack(&T, 4, spin, inner, poll, run);
	S_SLEEP = sy_stack(&T, 3, sched, cns, run);
}

/*
 * Worker 20: task 1 "hog" polls 0-20 ms; inside it, preempted 12-15 ms by
 * tid 4567 ("stress"), and blocked in clock_nanosleep 16-17 ms then
 * waiting for a CPU until 18 ms behind tid 4567. Task 2 "victim" is woken
 * at 2 ms by the timer thread 30 and polled at 20 ms.
 */
/* The names of the starve scenarios: task 1 hog and 2 victim on thread 20
 * worker-0, woken by thread 30 timer, stress (4567) beside */
static void hog_and_victim(void)
{
	frames();
	sy_task(&T, 1, "hog");
	sy_task(&T, 2, "victim");
	sy_thread(&T, 20, "worker-0");
	sy_thread(&T, 30, "timer");
	sy_comm(&T, 4567, "stress");
	sy_meta(&T, "wakeups", "sched:sched_waking");
}

static void starve(void)
{
	hog_and_victim();
	sy_meta(&T, "frequency", "1000");
	sy_poll(&T, 20, 1, 0, 20 * MS);
	sy_event(&T, 2 * MS, 30, TRACE_EV_WAKE, 2);
	sy_poll(&T, 20, 2, 20 * MS, 20 * MS + 10 * US);
	for (int i = 0; i < 18; i++)
		sy_sample(&T, (uint64_t)i * MS + 500 * US, 20, S_SPIN, 1);
	run_switch(12 * MS, 15 * MS, 20, S_SPIN, 1, 12 * MS, 4567);
	run_switch(16 * MS, 18 * MS, 20, S_SLEEP, 0, 17 * MS, 4567);
	T.counters.end_time = 30 * MS;
	do_join();
}

Test(delays, a_poll_spanning_a_preemption_and_a_wakeup_splits_blocked_and_runq)
{
	starve();
	cr_expect_eq(offcpu__poll(OC, 0)->ns, 5 * MS);
	cr_expect_eq(offcpu__poll(OC, 0)->runq_ns, 4 * MS,
		     "3 ms preempted + 1 ms after the wakeup");
	cr_expect_eq(offcpu__poll(OC, 0)->preempted_ns, 3 * MS);
	cr_expect_eq(OC->sw[1].runq, 1 * MS);
	cr_expect(OC->runq_split);
}

Test(delays, the_victim_waited_behind_the_hogs_poll)
{
	struct delay_cause c[8];
	size_t n;

	starve();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(delay_ns(0), 18 * MS);
	n = delays__causes(OC, 20, D->v[0].wake, D->v[0].begin, c, 8);
	cr_assert_eq(n, 3, "poll, run queue, blocked");
	cr_expect_eq(c[0].kind, CAUSE_POLL);
	cr_expect_eq(c[0].task, 1);
	cr_expect_eq(c[0].ns, 13 * MS, "18 ms less 5 off-CPU");
	cr_expect_eq(c[0].poll, 0);
	cr_expect_eq(c[1].kind, CAUSE_RUNQ);
	cr_expect_eq(c[1].holder, 4567);
	cr_expect_eq(c[1].ns, 4 * MS);
	cr_expect(c[1].in_poll);
	cr_expect_eq(c[2].kind, CAUSE_BLOCKED);
	cr_expect_eq(c[2].ns, 1 * MS);
	/* the application's frame, the call into libc under it */
	cr_expect_eq(T.frames[c[2].frame].addr, 0x404000, "run");
	cr_expect_eq(T.frames[c[2].under].addr, 0x7f0000001000, "clock_nanosleep");
}

/* The causes of the one delay on worker-0: they sum to it, @ns, once,
 * all of it the hog's poll on the CPU */
static void expect_the_hogs_poll_once(uint64_t ns)
{
	struct delay_cause c[8];
	uint64_t sum = 0;
	size_t n = delays__causes(OC, 20, D->v[0].wake, D->v[0].begin, c, 8);

	for (size_t k = 0; k < n && k < 8; k++)
		sum += c[k].ns;
	cr_expect_eq(sum, ns, "the causes are the delay, once");
	cr_expect_eq(c[0].kind, CAUSE_POLL);
	cr_expect_eq(c[0].ns, ns);
}

/* A switch-out paired with a switch-in past its poll's end (the records
 * between lost): the thread ran the next poll meanwhile. The causes of a
 * delay in that next poll count its time once, as the off-CPU view does
 * (the interval clipped to its poll), never twice. */
Test(delays, a_switch_past_its_polls_end_is_not_counted_again)
{
	hog_and_victim();
	sy_poll(&T, 20, 1, 0, 2 * MS);
	run_switch(1 * MS, 30 * MS, 20, S_SPIN, 1, 1 * MS, 4567);
	sy_poll(&T, 20, 1, 3 * MS, 25 * MS);
	sy_event(&T, 5 * MS, 30, TRACE_EV_WAKE, 2);
	sy_poll(&T, 20, 2, 25 * MS, 25 * MS + 10 * US);
	T.counters.end_time = 40 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	cr_expect_eq(delay_ns(0), 20 * MS);
	cr_expect_eq(OC->sw[0].ns, 1 * MS, "clipped to its poll");
	expect_the_hogs_poll_once(20 * MS);
}

/* A park whose unpark was lost runs on to the next one, over polls the
 * thread ran meanwhile: a thread in a poll is not parked, and the causes
 * count that time once. */
Test(delays, a_park_over_a_poll_is_not_counted_again)
{
	hog_and_victim();
	sy_event(&T, 1 * MS, 20, TRACE_EV_PARK, 0);
	sy_poll(&T, 20, 1, 3 * MS, 25 * MS);
	sy_event(&T, 5 * MS, 30, TRACE_EV_WAKE, 2);
	sy_poll(&T, 20, 2, 25 * MS, 25 * MS + 10 * US);
	sy_event(&T, 30 * MS, 20, TRACE_EV_UNPARK, 0);
	T.counters.end_time = 40 * MS;
	do_join();
	cr_assert_eq(D->n, 1);
	expect_the_hogs_poll_once(20 * MS);
}

/* The same with what ran on the CPU recorded: the 3 ms preemption was
 * 2.4 ms of stress and 0.6 ms of a kworker (tid 12), the 1 ms wait after
 * the wakeup 0.5 ms of the kworker, 0.25 ms idle, 0.25 ms unseen. */
Test(delays, run_queue_time_is_charged_to_what_ran_by_time)
{
	static const struct trace_hold h[] = {{4567, 2400 * US},
					      {12, 600 * US},
					      {12, 500 * US},
					      {TRACE_HOLD_IDLE, 250 * US},
					      {TRACE_HOLD_UNKNOWN, 250 * US}};
	struct trace_hold got[TRACE_MAX_HOLDS];
	struct delay_cause c[8];
	size_t n, k;
	uint64_t kw = 0, st = 0;
	char lab[64];

	starve();
	T.holds = (struct trace_hold *)h;
	T.nholds = 5;
	T.switches[0].hold = 0;
	T.switches[0].nhold = 2;
	T.switches[1].hold = 2;
	T.switches[1].nhold = 3;
	/* a part of a wait (clipped to a poll) is shared out alike */
	cr_assert_eq(analysis_switch_holds(&T, &T.switches[0], 1500 * US, got), 2);
	cr_expect_eq(got[0].tid, 4567);
	cr_expect_eq(got[0].ns, 1200 * US);
	cr_expect_eq(got[1].ns, 300 * US);
	cr_expect_eq(analysis_switch_holds(&T, &T.switches[0], 0, got), 0);
	n = delays__causes(OC, 20, D->v[0].wake, D->v[0].begin, c, 8);
	for (k = 0; k < n; k++) {
		if (c[k].kind != CAUSE_RUNQ)
			continue;
		if (c[k].holder == 12)
			kw += c[k].ns;
		if (c[k].holder == 4567)
			st += c[k].ns;
	}
	cr_expect_eq(st, 2400 * US, "stress: only the time it ran");
	cr_expect_eq(kw, 1100 * US, "the kworker: 0.6 + 0.5 ms");
	cr_expect_str_eq(analysis_holder_label(&T, TRACE_HOLD_IDLE, lab, sizeof(lab)),
			 "[idle CPU]");
	cr_expect_str_eq(analysis_holder_label(&T, TRACE_HOLD_OTHERS, lab, sizeof(lab)),
			 "[others]");
	cr_expect_str_eq(analysis_holder_label(&T, 4567, lab, sizeof(lab)),
			 "stress[4567]");
	T.holds = NULL; /* static: not the trace's to free */
	T.nholds = 0;
}

Test(delays, the_table_names_task_stack_and_thief)
{
	struct delays_opts o = {.limit = 10};

	starve();
	cr_assert_eq(analysis__delays(OC, D, &o, out), 0);
	cr_log_info("\n%s", output());
	cr_expect(strstr(output(), "2 victim"), "%s", output());
	cr_expect(strstr(output(), "timer[30]"), "%s", output());
	cr_expect(strstr(output(), "worker-0[20]"), "%s", output());
	cr_expect(strstr(output(),
			 "polling task 1 hog 13.0ms (72%) in hog_spin <- hog_inner "
			 "<- hog_poll"),
		  "%s", output());
	cr_expect(strstr(output(),
			 "runqueue 4.00ms (22%) behind stress[4567] inside task 1 "
			 "hog's poll"),
		  "%s", output());
	cr_expect(strstr(output(), "blocked 1.00ms (6%) in clock_nanosleep"), "%s",
		  output());
}

Test(delays, json_carries_the_same_causes)
{
	struct delays_opts o = {.limit = 10, .json = 1};

	starve();
	cr_assert_eq(analysis__delays(OC, D, &o, out), 0);
	cr_expect(strstr(output(), "\"delays\":[{\"task\":2,\"task_name\":\"victim\","
				   "\"delay_ns\":18000000,\"woken_ns\":2000000"),
		  "%s", output());
	cr_expect(strstr(output(),
			 "{\"what\":\"poll\",\"ns\":13000000,\"task\":1,\"task_name\":"
			 "\"hog\",\"poll\":0,\"stack\":[\"hog_spin\",\"hog_inner\","
			 "\"hog_poll\"]}"),
		  "%s", output());
	cr_expect(strstr(output(), "\"holder\":{\"pid\":4567,\"comm\":\"stress\"}"), "%s",
		  output());
	cr_expect(strstr(output(), "\"runq_split\":true"), "%s", output());
}

Test(delays, a_parked_poller_points_at_the_busy_waker)
{
	struct delays_opts o = {.limit = 10};

	frames();
	sy_task(&T, 1, "hog");
	sy_task(&T, 2, "victim");
	sy_thread(&T, 20, "worker-0");
	sy_thread(&T, 21, "worker-1");
	/* worker-0 polls the hog 0-10 ms and wakes the victim into its own
	 * queue at 1 ms; worker-1 is parked 0-9 ms, then steals it at 9.5 */
	sy_poll(&T, 20, 1, 0, 10 * MS);
	sy_event(&T, 1 * MS, 20, TRACE_EV_WAKE, 2);
	sy_event(&T, 0, 21, TRACE_EV_PARK, 0);
	sy_event(&T, 9 * MS, 21, TRACE_EV_UNPARK, 0);
	sy_poll(&T, 21, 2, 9500 * US, 9600 * US);
	T.counters.end_time = 20 * MS;
	do_join();
	cr_assert_eq(analysis__delays(OC, D, &o, out), 0);
	cr_log_info("\n%s", output());
	cr_expect(strstr(output(), "  task 1 hog  "),
		  "woken by the task polled on worker-0: %s", output());
	cr_expect(strstr(output(), "parked 8.00ms (94%)"), "%s", output());
	cr_expect(strstr(output(),
			 "meanwhile on worker-0[20], which woke it: polling task 1 "
			 "hog 8.50ms (100%)"),
		  "%s", output());
}

Test(delays, a_wakeup_with_no_switch_in_before_the_end_counts_to_the_end)
{
	frames();
	sy_task(&T, 1, "t");
	sy_meta(&T, "wakeups", "sched:sched_waking");
	sy_poll(&T, 20, 1, 0, 10 * MS);
	/* blocked at 8 ms, woken at 9 ms, still waiting for a CPU when the
	 * recording ended at 10 ms */
	run_switch(8 * MS, 0, 20, S_SLEEP, 0, 9 * MS, 0);
	T.counters.end_time = 10 * MS;
	do_join();
	cr_expect_eq(OC->sw[0].ns, 2 * MS);
	cr_expect_eq(OC->sw[0].runq, 1 * MS);
	cr_expect_eq(offcpu__poll(OC, 0)->runq_ns, 1 * MS);
}

Test(delays, without_wakeups_only_preemption_is_run_queue_and_the_table_says_so)
{
	struct polls_opts po = {0};

	frames();
	sy_task(&T, 1, "t");
	sy_meta(&T, "wakeups", "refused: cannot open sched:sched_waking on every CPU");
	sy_poll(&T, 20, 1, 0, 10 * MS);
	run_switch(1 * MS, 2 * MS, 20, S_SLEEP, 0, 0, 0);
	run_switch(3 * MS, 4 * MS, 20, S_SPIN, 1, 3 * MS, 4567);
	T.counters.end_time = 10 * MS;
	do_join();
	cr_expect(!OC->runq_split);
	cr_expect_eq(offcpu__poll(OC, 0)->runq_ns, 1 * MS);
	cr_assert_eq(analysis__polls(OC, &po, out), 0);
	cr_expect(strstr(output(), "blocked and run-queue time cannot be split, refused: "
				   "cannot open sched:sched_waking"),
		  "%s", output());
}

/* ---- the report --------------------------------------------------------- */

Test(delays, the_report_states_the_runtime_time_lost_in_gaps)
{
	sy_meta(&T, "shim_gap", "5000000-7000000");
	sy_meta(&T, "shim_gap", "8000000-8500000");
	sy_meta(&T, "shim_reattached", "8500000");
	sy_task(&T, 1, "t");
	sy_poll(&T, 20, 1, 1 * MS, 2 * MS);
	T.counters.start_time = 1;
	T.counters.end_time = 10 * MS;
	do_join();
	cr_assert_eq(analysis__report(OC, D, NULL, NULL, 0, out), 0);
	cr_assert(strstr(output(), "lost: 2.50ms of runtime events in 2 gaps"), "%s",
		  output());
	cr_assert(strstr(output(), ", 2.50ms without runtime events"), "%s", output());
	fflush(out);
	rewind(out);
	cr_assert_eq(analysis__report(OC, D, NULL, NULL, 1, out), 0);
	cr_assert(strstr(output(), "\"shim_gap_ns\":2500000,"), "%s", output());
	cr_assert(strstr(output(), "\"reattached\":"), "%s", output());
}
