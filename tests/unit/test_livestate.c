// SPDX-License-Identifier: MIT
/*
 * test_livestate.c - what is open at a segment's start: polls in progress,
 * parks, pending wakes and unpolled spawns; events drained out of order
 * across threads; memory that follows what is open; the triggers' hits.
 */
#include <criterion/criterion.h>

#include "record/livestate.h"

#define MS 1000000ULL

static struct livestate *ls;

static void setup(void)
{
	cr_assert_eq(livestate__new(&ls), 0);
}

static void teardown(void)
{
	livestate__free(ls);
}

static void ev(uint64_t ms, uint32_t type, uint64_t task, uint32_t tid)
{
	struct trace_event e = {.time = ms * MS, .task = task, .tid = tid, .type = type};

	cr_assert_eq(livestate__feed(ls, &e, NULL, 1), 0);
}

TestSuite(livestate, .init = setup, .fini = teardown);

Test(livestate, open_polls_parks_wakes_and_spawns_in_time_order)
{
	const struct trace_event *o;
	size_t n;

	ev(1, TRACE_EV_SPAWN, 10, 1); /* polled later: not open */
	ev(2, TRACE_EV_SPAWN, 11, 1); /* never polled: open */
	ev(3, TRACE_EV_WAKE, 10, 1);
	ev(4, TRACE_EV_POLL_BEGIN, 10, 2); /* in progress */
	ev(5, TRACE_EV_PARK, 0, 3);
	ev(6, TRACE_EV_PARK, 0, 4);
	ev(7, TRACE_EV_UNPARK, 0, 4);
	ev(8, TRACE_EV_WAKE, 12, 1); /* pending */
	ev(9, TRACE_EV_WAKE, 10, 1); /* woken during its poll: pending too */
	n = livestate__open(ls, &o);
	cr_assert_eq(n, 5);
	cr_assert_eq(o[0].type, TRACE_EV_SPAWN);
	cr_assert_eq(o[0].task, 11);
	cr_assert_eq(o[1].type, TRACE_EV_POLL_BEGIN);
	cr_assert_eq(o[1].task, 10);
	cr_assert_eq(o[1].tid, 2);
	cr_assert_eq(o[1].time, 4 * MS);
	cr_assert_eq(o[2].type, TRACE_EV_PARK);
	cr_assert_eq(o[2].tid, 3);
	cr_assert_eq(o[3].type, TRACE_EV_WAKE);
	cr_assert_eq(o[3].task, 12);
	cr_assert_eq(o[4].type, TRACE_EV_WAKE);
	cr_assert_eq(o[4].task, 10);

	ev(10, TRACE_EV_POLL_END, 10, 2);
	ev(11, TRACE_EV_POLL_BEGIN, 10, 2);
	ev(12, TRACE_EV_POLL_END, 10, 2);
	ev(13, TRACE_EV_TASK_END, 10, 2);
	n = livestate__open(ls, &o);
	cr_assert_eq(n, 3, "spawn 11, park 3, wake 12");
}

Test(livestate, a_spawn_or_wake_drained_after_the_poll_or_end_is_not_open)
{
	const struct trace_event *o;

	/* the worker's ring is drained before the spawner's */
	ev(5, TRACE_EV_POLL_BEGIN, 20, 2);
	ev(6, TRACE_EV_POLL_END, 20, 2);
	ev(7, TRACE_EV_TASK_END, 20, 2);
	ev(1, TRACE_EV_SPAWN, 20, 1);
	ev(2, TRACE_EV_WAKE, 20, 1);
	ev(3, TRACE_EV_POLL_BEGIN, 21, 2);
	ev(4, TRACE_EV_POLL_END, 21, 2);
	ev(2, TRACE_EV_SPAWN, 21, 1);
	ev(3, TRACE_EV_WAKE, 21, 1); /* the wake its poll at 3 ms took */
	cr_assert_eq(livestate__open(ls, &o), 0);
}

/* A task left with no waker stays open (its next segment's STATE says
 * so, for report of that segment alone) until a wake, a poll or its end;
 * a wake before the drop leaves the wake open */
Test(livestate, a_dropped_waker_is_open_until_a_wake_a_poll_or_the_end)
{
	const struct trace_event *o;

	ev(1, TRACE_EV_POLL_BEGIN, 30, 2);
	ev(2, TRACE_EV_POLL_END, 30, 2);
	ev(2, TRACE_EV_WAKER_DROP, 30, 2);
	livestate__purge(ls, 100 * MS);
	cr_assert_eq(livestate__open(ls, &o), 1);
	cr_assert_eq(o[0].type, TRACE_EV_WAKER_DROP);
	cr_assert_eq(o[0].task, 30);
	cr_assert_eq(o[0].time, 2 * MS);
	ev(5, TRACE_EV_WAKE, 30, 3); /* woken after all: pending */
	cr_assert_eq(livestate__open(ls, &o), 1);
	cr_assert_eq(o[0].type, TRACE_EV_WAKE);
	cr_assert_eq(o[0].time, 5 * MS);
	ev(6, TRACE_EV_WAKER_DROP, 30, 3); /* (its wake pending: not lost) */
	cr_assert_eq(livestate__open(ls, &o), 1);
	cr_assert_eq(o[0].type, TRACE_EV_WAKE);
	ev(7, TRACE_EV_POLL_BEGIN, 30, 2);
	ev(8, TRACE_EV_POLL_END, 30, 2);
	ev(8, TRACE_EV_WAKER_DROP, 30, 2);
	ev(9, TRACE_EV_TASK_END, 30, 2);
	cr_assert_eq(livestate__open(ls, &o), 0);
}

Test(livestate, memory_follows_what_is_open_not_what_came_and_went)
{
	const struct trace_event *o;

	for (uint64_t t = 1; t <= 200000; t++) {
		ev(t, TRACE_EV_SPAWN, t, 1);
		ev(t, TRACE_EV_POLL_BEGIN, t, 2);
		ev(t, TRACE_EV_POLL_END, t, 2);
		ev(t, TRACE_EV_TASK_END, t, 2);
		if (t % 1000 == 0)
			livestate__purge(ls, (t - 100) * MS);
	}
	ev(200001, TRACE_EV_SPAWN, 999999, 1);
	livestate__purge(ls, 200001 * MS);
	cr_assert_eq(livestate__open(ls, &o), 1);
	cr_assert_eq(o[0].task, 999999);
}

Test(livestate, past_its_max_what_is_over_goes_then_new_ones_are_refused)
{
	const struct trace_event *o;
	struct trace_event e;

	livestate__set_max(ls, 64);
	/* 40 tasks polled and ended (over, not yet purged), 20 woken */
	for (uint64_t t = 1; t <= 40; t++) {
		ev(t, TRACE_EV_POLL_BEGIN, t, 2);
		ev(t, TRACE_EV_POLL_END, t, 2);
		ev(t, TRACE_EV_TASK_END, t, 2);
	}
	for (uint64_t t = 100; t < 120; t++)
		ev(t, TRACE_EV_WAKE, t, 1);
	/* a flood of wakes of new tasks, never polled: the ended ones go
	 * first, then the table stays full */
	for (uint64_t t = 1000; t < 1100; t++) {
		e = (struct trace_event){
			.time = t * MS, .task = t, .tid = 1, .type = TRACE_EV_WAKE};
		livestate__feed(ls, &e, NULL, 1);
	}
	cr_expect_eq(livestate__refused(ls), 100 - (64 - 20));
	cr_expect_eq(livestate__open(ls, &o), 64);
	cr_expect_eq(o[0].task, 100, "the oldest open wake is kept");
	cr_expect_eq(o[63].task, 1043);
	/* polled: no longer open; a purge makes room again */
	ev(2000, TRACE_EV_POLL_BEGIN, 1000, 2);
	ev(2001, TRACE_EV_POLL_END, 1000, 2);
	livestate__purge(ls, 2002 * MS);
	ev(2002, TRACE_EV_WAKE, 3000, 1);
	cr_expect_eq(livestate__refused(ls), 56);
	cr_expect_eq(livestate__open(ls, &o), 64);
	cr_expect_eq(o[63].task, 3000);
}

Test(livestate, long_polls_and_delays_are_hits_once_each)
{
	struct livestate_hit h;

	livestate__set_limits(ls, 50 * MS, 10 * MS);
	ev(0, TRACE_EV_WAKE, 1, 9);
	ev(5, TRACE_EV_POLL_BEGIN, 1, 2); /* delay 5 ms: no */
	ev(60, TRACE_EV_POLL_END, 1, 2);  /* 55 ms: a hit */
	cr_assert_eq(livestate__hit(ls, &h), 1);
	cr_assert_eq(h.kind, LIVESTATE_POLL);
	cr_assert_eq(h.task, 1);
	cr_assert_eq(h.ns, 55 * MS);
	cr_assert_eq(h.time, 60 * MS);
	cr_assert_eq(livestate__hit(ls, &h), 0);
	ev(61, TRACE_EV_WAKE, 1, 9);
	ev(80, TRACE_EV_POLL_BEGIN, 1, 2); /* delay 19 ms */
	cr_assert_eq(livestate__hit(ls, &h), 1);
	cr_assert_eq(h.kind, LIVESTATE_DELAY);
	cr_assert_eq(h.ns, 19 * MS);
}

/* Whole polls fed as records leave the state and the hits exactly as
 * their BEGIN, (WAKE,) END fed one by one: a pseudo-random mix of polls,
 * wakes, spawns, ends, parks and thread stops over 4 threads and 300
 * tasks (the tables grow meanwhile), with zero ids and zero lengths among
 * them. */
Test(livestate, whole_polls_match_their_events)
{
	struct livestate *sp;
	uint64_t x = 0x9e3779b97f4a7c15ULL, now[5] = {0};

	cr_assert_eq(livestate__new(&sp), 0);
	livestate__set_limits(ls, 3 * MS, 2 * MS);
	livestate__set_limits(sp, 3 * MS, 2 * MS);
	for (int i = 0; i < 20000; i++) {
		struct trace_event r, e[3];
		struct livestate_hit h1, h2;
		const struct trace_event *o1, *o2;
		uint64_t len = 0;
		size_t k, n1, n2;
		uint32_t pick;
		int g1, g2;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pick = (uint32_t)(x % 11);
		r.tid = (uint32_t)((x >> 8) % 5); /* 0: no thread */
		r.task = (x >> 16) % 301;	  /* 0: no task */
		now[r.tid] += 1 + (x >> 24) % (2 * MS);
		r.time = now[r.tid];
		if (pick < 5) {
			r.type = pick < 3 ? TRACE_REC_POLL : TRACE_REC_POLL_WOKEN;
			len = pick == 4 ? 0 : (x >> 40) % (4 * MS);
			if (len >= r.time)
				len = r.time - 1;
		} else {
			static const uint32_t t[] = {
				TRACE_EV_WAKE, TRACE_EV_SPAWN,	TRACE_EV_TASK_END,
				TRACE_EV_PARK, TRACE_EV_UNPARK, TRACE_EV_THREAD_STOP};
			r.type = t[pick - 5];
		}
		cr_assert_eq(livestate__feed(ls, &r, &len, 1), 0);
		k = trace_rec_spread(r, len, e);
		cr_assert_eq(livestate__feed(sp, e, NULL, k), 0);
		g1 = livestate__hit(ls, &h1);
		g2 = livestate__hit(sp, &h2);
		cr_assert_eq(g1, g2, "record %d: a hit in one only", i);
		if (g1)
			cr_assert(h1.kind == h2.kind && h1.task == h2.task &&
					  h1.tid == h2.tid && h1.time == h2.time &&
					  h1.ns == h2.ns,
				  "record %d: hits differ", i);
		if (i % 97)
			continue;
		n1 = livestate__open(ls, &o1);
		n2 = livestate__open(sp, &o2);
		cr_assert_eq(n1, n2, "record %d: %zu open vs %zu", i, n1, n2);
		for (size_t j = 0; j < n1; j++)
			cr_assert(o1[j].time == o2[j].time && o1[j].task == o2[j].task &&
					  o1[j].tid == o2[j].tid &&
					  o1[j].type == o2[j].type,
				  "record %d: open entry %zu differs", i, j);
		if (i % 970 == 0) {
			livestate__purge(ls, r.time - 5 * MS);
			livestate__purge(sp, r.time - 5 * MS);
		}
	}
	livestate__free(sp);
}

Test(livestate, a_segments_summary_counts_what_is_still_open_as_long_as_it_lasted)
{
	struct livestate_summary s;
	struct trace_event whole = {
		.time = 30 * MS, .task = 20, .tid = 3, .type = TRACE_REC_POLL};
	uint64_t len = 4 * MS;

	ev(1, TRACE_EV_WAKE, 10, 1);
	ev(3, TRACE_EV_POLL_BEGIN, 10, 2);		       /* woken 2 ms before */
	ev(5, TRACE_EV_POLL_END, 10, 2);		       /* 2 ms */
	ev(6, TRACE_EV_WAKE, 11, 1);			       /* never polled */
	ev(10, TRACE_EV_POLL_BEGIN, 12, 2);		       /* stuck */
	cr_assert_eq(livestate__feed(ls, &whole, &len, 1), 0); /* 4 ms, whole */
	livestate__summary(ls, 100 * MS, &s);
	cr_expect_eq(s.polls, 2);
	cr_expect_eq(s.max_poll_ns, 90 * MS, "the stuck poll so far: %llu",
		     (unsigned long long)s.max_poll_ns);
	cr_expect_eq(s.max_delay_ns, 94 * MS, "the wake never polled so far: %llu",
		     (unsigned long long)s.max_delay_ns);
	/* the next segment starts from nothing but what is still open */
	ev(150, TRACE_EV_POLL_END, 12, 2);
	livestate__summary(ls, 200 * MS, &s);
	cr_expect_eq(s.polls, 1);
	cr_expect_eq(s.max_poll_ns, 140 * MS);
	cr_expect_eq(s.max_delay_ns, 194 * MS);
}
