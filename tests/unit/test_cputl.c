/* SPDX-License-Identifier: MIT */
/*
 * test_cputl.c - what ran on each CPU, and a run-queue wait charged to it
 * (record/cputl.c).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "record/cputl.h"

TestSuite(cputl);

static struct cputl *C;

static void init(void)
{
	C = cputl__new();
	cr_assert_not_null(C);
}

static void fini(void)
{
	cputl__free(C);
}

static uint64_t held(const struct trace_hold *h, size_t n, uint32_t tid)
{
	uint64_t ns = 0;

	for (size_t k = 0; k < n; k++)
		if (h[k].tid == tid)
			ns += h[k].ns;
	return ns;
}

static uint64_t sum(const struct trace_hold *h, size_t n)
{
	uint64_t ns = 0;

	for (size_t k = 0; k < n; k++)
		ns += h[k].ns;
	return ns;
}

Test(cputl, a_wait_is_charged_to_what_ran_by_time, .init = init, .fini = fini)
{
	struct trace_hold h[TRACE_MAX_HOLDS];
	size_t n;

	/* CPU 1: hog 100-500, waker 500-530, hog 530-1000, idle 1000-1100,
	 * the waiting thread 7 from 1100 */
	cr_assert_eq(cputl__add(C, 1, 100, 10, "hog"), 0);
	cr_assert_eq(cputl__add(C, 1, 500, 20, "kworker"), 0);
	cr_assert_eq(cputl__add(C, 1, 530, 10, "hog"), 0);
	cr_assert_eq(cputl__add(C, 1, 1000, TRACE_HOLD_IDLE, NULL), 0);
	cr_assert_eq(cputl__add(C, 1, 1100, 7, "worker"), 0);
	n = cputl__holds(C, 1, 7, 200, 1100, h);
	cr_assert_eq(n, 3);
	cr_expect_eq(h[0].tid, 10, "the hog held it longest");
	cr_expect_eq(h[0].ns, 300 + 470);
	cr_expect_eq(held(h, n, 20), 30, "the waker only what it ran");
	cr_expect_eq(held(h, n, TRACE_HOLD_IDLE), 100);
	cr_expect_eq(sum(h, n), 900);
	/* before the oldest entry: unknown; after the last one: it runs on */
	n = cputl__holds(C, 1, 99, 50, 1200, h);
	cr_expect_eq(held(h, n, TRACE_HOLD_UNKNOWN), 50);
	cr_expect_eq(held(h, n, 7), 100);
	cr_expect_eq(sum(h, n), 1150);
	/* the waiting thread itself is left out; other CPUs know nothing */
	n = cputl__holds(C, 1, 7, 1050, 1200, h);
	cr_expect_eq(sum(h, n), 50);
	cr_expect_eq(cputl__holds(C, 0, 7, 0, 100, h), 0);
	cr_expect_eq(cputl__holds(C, 9, 7, 0, 100, h), 0);
	cr_expect_eq(cputl__holds(C, 1, 7, 300, 300, h), 0);
	cr_expect_str_eq(cputl__comm(C, 20), "kworker");
	cr_expect_null(cputl__comm(C, 21));
}

Test(cputl, many_holders_end_in_one_others, .init = init, .fini = fini)
{
	struct trace_hold h[TRACE_MAX_HOLDS];
	size_t n, k, nothers = 0;

	/* 100 threads, thread i running i + 1 ns */
	uint64_t t = 1000;
	for (uint32_t i = 0; i < 100; i++) {
		cr_assert_eq(cputl__add(C, 0, t, 100 + i, "t"), 0);
		t += i + 1;
	}
	cr_assert_eq(cputl__add(C, 0, t, 1, "end"), 0);
	n = cputl__holds(C, 0, 1, 1000, t, h);
	cr_assert_eq(n, TRACE_MAX_HOLDS);
	for (k = 0; k < n; k++)
		nothers += h[k].tid == TRACE_HOLD_OTHERS;
	cr_expect_eq(nothers, 1);
	cr_expect_eq(sum(h, n), t - 1000, "nothing lost");
	cr_expect_eq(h[0].tid, TRACE_HOLD_OTHERS, "93 threads' time is the most");
	cr_expect_eq(h[1].tid, 199);
	for (k = 1; k < n; k++)
		cr_expect_geq(h[k - 1].ns, h[k].ns, "largest first");
}

Test(cputl, time_never_goes_back_and_a_cpu_keeps_a_bounded_past, .init = init,
     .fini = fini)
{
	struct trace_hold h[TRACE_MAX_HOLDS];
	size_t n;

	cr_assert_eq(cputl__add(C, 0, 1000, 10, "a"), 0);
	cr_assert_eq(cputl__add(C, 0, 900, 11, "b"), 0); /* taken as 1000 */
	cr_assert_eq(cputl__add(C, 0, 2000, 12, "c"), 0);
	n = cputl__holds(C, 0, 1, 1000, 2000, h);
	cr_expect_eq(held(h, n, 11), 1000);
	cr_expect_eq(held(h, n, 10), 0);
	/* past CPUTL_MAX switches the oldest go */
	for (uint64_t i = 0; i < CPUTL_MAX + 10; i++)
		cr_assert_eq(cputl__add(C, 0, 3000 + i, 20 + (uint32_t)(i % 2), "x"), 0);
	n = cputl__holds(C, 0, 1, 1000, 3000, h);
	cr_expect_eq(held(h, n, TRACE_HOLD_UNKNOWN), 2000, "the first ones are gone");
	/* pruned: what ran before the cut goes, the entry running then stays */
	cputl__prune(C, 3000 + CPUTL_MAX);
	n = cputl__holds(C, 0, 1, 3000 + CPUTL_MAX, 3000 + CPUTL_MAX + 5, h);
	cr_expect_eq(sum(h, n), 5);
	cr_expect_eq(held(h, n, TRACE_HOLD_UNKNOWN), 0);
	n = cputl__holds(C, 0, 1, 3000, 3010, h);
	cr_expect_eq(held(h, n, TRACE_HOLD_UNKNOWN), 10);
	cr_expect_eq(cputl__add(C, CPUTL_CPUS, 1, 1, "x"), -ERANGE);
}

Test(cputl, names_follow_renames_and_old_ones_go, .init = init, .fini = fini)
{
	cr_assert_eq(cputl__add(C, 0, 10, 42, "before-exec"), 0);
	cr_assert_eq(cputl__add(C, 0, 20, 42, "after-exec-and-long-name"), 0);
	cr_expect_str_eq(cputl__comm(C, 42), "after-exec-and-");
	cr_assert_eq(cputl__add(C, 1, 20, 43, "other"), 0);
	/* two name prunes 2 s apart without seeing 43 again: forgotten */
	cputl__prune(C, 3000000000ULL);
	cr_assert_eq(cputl__add(C, 0, 3000000001ULL, 42, "again"), 0);
	cputl__prune(C, 6000000000ULL);
	cr_assert_eq(cputl__add(C, 0, 6000000001ULL, 42, "again"), 0);
	cputl__prune(C, 9000000000ULL);
	cr_expect_str_eq(cputl__comm(C, 42), "again");
	cr_expect_null(cputl__comm(C, 43));
}
