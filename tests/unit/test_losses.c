/* SPDX-License-Identifier: MIT */
/*
 * test_losses.c - what a trace says was lost, per kind and per data
 * (analysis/losses.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/analysis.h"
#include "synth_trace.h"

TestSuite(losses);

static void trace_free(struct trace *t)
{
	free(t->meta);
}

Test(losses, nothing_recorded_is_nothing_shown)
{
	struct trace t = {0};
	struct loss l[LOSS_KINDS];
	char buf[LOSS_TEXT_MAX] = "x";
	char *s = NULL;
	size_t n = 0;
	FILE *f;

	sy_meta(&t, "offcpu stacks complete", "12/12");
	sy_meta(&t, "offcpu switches", "12");
	cr_assert_eq(analysis_losses(&t, LOSS_ALL, l), 0);
	cr_assert_str_empty(analysis_losses_text(&t, LOSS_ALL, buf, sizeof(buf)));
	f = open_memstream(&s, &n);
	cr_assert_eq(analysis_losses_footer(&t, LOSS_ALL, f), 0);
	cr_assert_eq(analysis_losses_json(&t, LOSS_ALL, f), 0);
	fclose(f);
	cr_assert_str_empty(s);
	free(s);
	trace_free(&t);
}

Test(losses, counts_every_kind_with_the_data_it_affects)
{
	struct trace t = {0};
	struct loss l[LOSS_KINDS];
	static const struct {
		const char *key;
		uint64_t count;
		unsigned int affects;
	} want[] = {
		{"samples", 3, LOSS_CPU},
		{"ctimer_samples", 4, LOSS_CPU},
		{"child_samples", 5, LOSS_CPU},
		{"switch_records", 6, LOSS_OFFCPU},
		{"unpaired_switches", 7, LOSS_OFFCPU},
		{"offcpu_stacks_cut", 2, LOSS_OFFCPU},
		{"wakeups", 8, LOSS_WAKEUPS},
		{"shim_records", 9, LOSS_POLLS},
		{"threads_without_ring", 10, LOSS_POLLS},
		{"reattached", 2, LOSS_POLLS},
		{"shim_garbage", 11, LOSS_POLLS},
	};
	size_t n;

	t.counters.lost_samples = 3;
	t.counters.shim_drops = 9;
	sy_meta(&t, "ctimer samples dropped", "4");
	sy_meta(&t, "child samples left out", "5");
	sy_meta(&t, "offcpu lost", "6");
	sy_meta(&t, "offcpu unpaired", "7");
	sy_meta(&t, "offcpu stacks complete", "10/12");
	sy_meta(&t, "wakeups lost", "8");
	sy_meta(&t, "threads without a ring", "10");
	sy_meta(&t, "shim_reattached", "1000");	/* a time each, not a count */
	sy_meta(&t, "shim_reattached", "2000");
	sy_meta(&t, "shim garbage", "11");
	n = analysis_losses(&t, LOSS_ALL, l);
	cr_assert_eq(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(l[i].key, want[i].key);
		cr_expect_eq(l[i].count, want[i].count, "%s", want[i].key);
		cr_expect_eq(l[i].affects, want[i].affects, "%s", want[i].key);
	}
	trace_free(&t);
}

Test(losses, a_view_sees_only_what_affects_its_data)
{
	struct trace t = {0};
	struct loss l[LOSS_KINDS];
	char buf[LOSS_TEXT_MAX];

	t.counters.lost_samples = 3;
	sy_meta(&t, "wakeups lost", "8");
	sy_meta(&t, "offcpu lost", "6");
	cr_assert_eq(analysis_losses(&t, LOSS_POLLS, l), 0);
	cr_assert_eq(analysis_losses(&t, LOSS_CPU | LOSS_POLLS, l), 1);
	cr_assert_str_eq(analysis_losses_text(&t, LOSS_OFFCPU | LOSS_WAKEUPS, buf, sizeof(buf)),
			 "lost: 6 switch records (ring full), 8 wakeups (ring full)");
	trace_free(&t);
}

Test(losses, json_and_footer_say_it_once)
{
	struct trace t = {0};
	char *s = NULL;
	size_t n = 0;
	FILE *f;

	t.counters.lost_samples = 3;
	t.counters.shim_drops = 1;
	f = open_memstream(&s, &n);
	cr_assert_eq(analysis_losses_footer(&t, LOSS_ALL, f), 0);
	cr_assert_eq(analysis_losses_json(&t, LOSS_ALL, f), 0);
	fclose(f);
	cr_assert_str_eq(s, "# lost: 3 samples (perf ring full), 1 shim records (shim ring full)\n"
			    ",\"losses\":{\"samples\":3,\"shim_records\":1}");
	free(s);
}

Test(losses, malformed_meta_is_no_loss)
{
	struct trace t = {0};
	struct loss l[LOSS_KINDS];

	sy_meta(&t, "offcpu lost", "lots");
	sy_meta(&t, "offcpu stacks complete", "12");
	sy_meta(&t, "wakeups lost", "");
	cr_assert_eq(analysis_losses(&t, LOSS_ALL, l), 0);
	trace_free(&t);
}
