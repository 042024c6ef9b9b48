// SPDX-License-Identifier: MIT
/* analysis/views/export_chrome.c past export_opts.max_bytes: what is written
 * fits the bound, and every poll is in it once, whole or in a run. */
#include <errno.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"
#include "tests/unit/view_fixture.h"

#define US 1000ULL

TestSuite(export_chrome, .init = setup, .fini = teardown);

/* @ntasks tasks of @per polls each, on two threads, of 1..40 us */
static void many(size_t ntasks, size_t per)
{
	uint64_t t0 = 1000 * US;

	for (size_t k = 0; k < ntasks; k++)
		sy_task(&T, k + 1, k % 3 ? "conn" : "tick");
	for (size_t i = 0; i < ntasks * per; i++) {
		uint64_t s = t0 + i * 50 * US;

		sy_poll(&T, 10 + (uint32_t)(i % 2), i % ntasks + 1, s,
			s + (i * 7 % 40 + 1) * US);
	}
	T.counters.start_time = t0;
	T.counters.end_time = t0 + ntasks * per * 50 * US + 1;
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(offcpu__new(J, 0, &OC), 0);
	cr_assert_eq(delays__new(J, NULL, &D), 0);
}

static void cut(uint64_t max, struct export_result *res)
{
	struct export_opts o = {.format = EXPORT_CHROME, .max_bytes = max, .result = res};
	int err = analysis__export_chrome(OC, D, &o, out);

	cr_assert(err == 0 || err == -ENODATA, "err %d", err);
	fflush(out);
}

Test(export_chrome, under_the_bound_everything_is_whole)
{
	struct export_result res;

	many(10, 20);
	cut(1u << 30, &res);
	cr_expect_not(res.cut);
	cr_expect_eq(res.whole_polls, 200);
	cr_expect_eq(res.merged_polls, 0);
}

Test(export_chrome, past_the_bound_it_fits_and_counts_every_poll)
{
	struct export_result res;

	many(10, 200);
	cut(64 << 10, &res);
	cr_assert(res.cut);
	cr_expect_leq(buflen, 64 << 10, "%zu bytes", buflen);
	cr_expect_eq(res.whole_polls + res.merged_polls, 2000);
	cr_expect_gt(res.whole_polls, 0);
	cr_expect_eq(res.run_by, GROUP_TASK);
}

/* a task a request: too many tasks for a track each */
Test(export_chrome, many_tasks_merge_by_name_or_thread_and_still_fit)
{
	struct export_result res;

	many(6000, 1);
	cut(96 << 10, &res);
	cr_assert(res.cut);
	cr_expect_leq(buflen, 96 << 10, "%zu bytes", buflen);
	cr_expect_eq(res.whole_polls + res.merged_polls, 6000);
	cr_expect_neq(res.run_by, GROUP_TASK);
	cr_expect_lt(res.runs, 1000);
}
