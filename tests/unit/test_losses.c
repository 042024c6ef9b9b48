/* SPDX-License-Identifier: MIT */
/*
 * test_losses.c - what a trace says was lost, per kind and per data
 * (analysis/losses.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/losses.h"
#include "lib/json.h"
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
	struct lib_json w;
	FILE *f;

	sy_meta(&t, "offcpu stacks complete", "12/12");
	sy_meta(&t, "offcpu switches", "12");
	cr_assert_eq(analysis_losses(&t, LOSS_ALL, l), 0);
	cr_assert_str_empty(analysis_losses_text(&t, LOSS_ALL, buf, sizeof(buf)));
	f = open_memstream(&s, &n);
	cr_assert_eq(analysis_losses_footer(&t, LOSS_ALL, f), 0);
	lib_json_init(&w, f);
	lib_json_object_begin(&w);
	cr_assert_eq(analysis_losses_json(&t, LOSS_ALL, &w), 0);
	lib_json_object_end(&w);
	cr_assert_eq(lib_json_finish(&w), 0);
	fclose(f);
	cr_assert_str_eq(s, "{}\n");
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
	sy_meta(&t, "shim_reattached", "1000"); /* a time each, not a count */
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
	cr_assert_str_eq(
		analysis_losses_text(&t, LOSS_OFFCPU | LOSS_WAKEUPS, buf, sizeof(buf)),
		"lost: 6 switch records (ring full), 8 wakeups (ring full)");
	trace_free(&t);
}

Test(losses, json_and_footer_say_it_once)
{
	struct trace t = {0};
	char *s = NULL;
	size_t n = 0;
	struct lib_json w;
	FILE *f;

	t.counters.lost_samples = 3;
	t.counters.shim_drops = 1;
	f = open_memstream(&s, &n);
	cr_assert_eq(analysis_losses_footer(&t, LOSS_ALL, f), 0);
	lib_json_init(&w, f);
	lib_json_object_begin(&w);
	lib_json_uint_field(&w, "x", 1);
	cr_assert_eq(analysis_losses_json(&t, LOSS_ALL, &w), 0);
	lib_json_object_end(&w);
	cr_assert_eq(lib_json_finish(&w), 0);
	fclose(f);
	cr_assert_str_eq(
		s, "# lost: 3 samples (perf ring full), 1 shim records (shim ring full)\n"
		   "{\"x\":1,\"losses\":{\"samples\":3,\"shim_records\":1}}\n");
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

/* Stacks leaf first: their outermost user frame is or is not a root. */
Test(losses, cpu_stacks_without_a_thread_root_are_cut_short)
{
	static const char *const whole_c[] = {"spin", "rec", "main"};
	static const char *const whole_thr[] = {"work", "start_thread", "clone3"};
	static const char *const whole_rust[] = {
		"app::work",
		"std::sys::pal::unix::thread::Thread::new::thread_start::h0123456789abcdef"};
	static const char *const whole_libc[] = {"f", "__libc_start_call_main"};
	static const char *const cut[] = {"spin", "rec", "rec"};
	static const char *const unnamed[] = {"spin", NULL};
	struct trace t = {0};
	struct loss l[LOSS_KINDS];
	char buf[LOSS_TEXT_MAX];
	uint32_t s_c, s_thr, s_rust, s_libc, s_cut, s_unnamed, s_kernel, k, u;

	s_c = sy_stack_syms(&t, 3, whole_c);
	s_thr = sy_stack_syms(&t, 3, whole_thr);
	s_rust = sy_stack_syms(&t, 2, whole_rust);
	s_libc = sy_stack_syms(&t, 2, whole_libc);
	s_cut = sy_stack_syms(&t, 3, cut);
	s_unnamed = sy_stack_syms(&t, 2, unnamed);
	k = sy_frame(&t, 0xffffffff81000000ULL, "schedule", "[kernel]", 0, 1);
	s_kernel = sy_stack(&t, 1, k);
	/* kernel frames after the user ones do not hide a cut user stack */
	u = sy_frame(&t, 0x5000, "rec", "/usr/bin/app", 0, 0);
	sy_stack(&t, 2, u, k);
	cr_expect_eq(analysis_stack_cut(&t, s_c), 0);
	cr_expect_eq(analysis_stack_cut(&t, s_thr), 0);
	cr_expect_eq(analysis_stack_cut(&t, s_rust), 0);
	cr_expect_eq(analysis_stack_cut(&t, s_libc), 0);
	cr_expect_eq(analysis_stack_cut(&t, s_cut), 1);
	cr_expect_eq(analysis_stack_cut(&t, s_unnamed), 1);
	cr_expect_eq(analysis_stack_cut(&t, s_kernel), -1, "no user frame: not counted");
	cr_expect_eq(analysis_stack_cut(&t, s_kernel + 1), 1);
	cr_expect_eq(analysis_stack_cut(&t, 999), -1);

	/* counted per sample, whatever its weight */
	sy_sample(&t, 1, 10, s_c, 1);
	sy_sample(&t, 2, 10, s_cut, 5);
	sy_sample(&t, 3, 10, s_cut, 1);
	sy_sample(&t, 4, 10, s_kernel, 1);
	sy_sample(&t, 5, 11, s_unnamed, 1);
	sy_sample(&t, 6, 11, s_thr, 1);
	cr_assert_eq(analysis_losses(&t, LOSS_OFFCPU | LOSS_POLLS, l), 0,
		     "CPU data only");
	cr_assert_eq(analysis_losses(&t, LOSS_CPU, l), 1);
	cr_expect_str_eq(l[0].key, "cpu_stacks_cut");
	cr_expect_eq(l[0].count, 3);
	cr_expect_str_eq(
		analysis_losses_text(&t, LOSS_ALL, buf, sizeof(buf)),
		"lost: 3 CPU stacks cut short (no thread root: record --call-graph dwarf)");
	/* a sample more: counted again, not the count kept from before */
	sy_sample(&t, 7, 11, s_cut, 1);
	cr_assert_eq(analysis_losses(&t, LOSS_CPU, l), 1);
	cr_expect_eq(l[0].count, 4);
	/* recorded with dwarf already: the text points to no option */
	sy_meta(&t, "call-graph", "dwarf,8192");
	cr_expect_str_eq(
		analysis_losses_text(&t, LOSS_ALL, buf, sizeof(buf)),
		"lost: 4 CPU stacks cut short (no thread root, though unwound by CFI)");
	sy_free(&t);
}

Test(losses, whole_stacks_are_no_loss)
{
	static const char *const whole[] = {"spin", "main"};
	struct trace t = {0};
	struct loss l[LOSS_KINDS];
	uint32_t s = sy_stack_syms(&t, 2, whole);

	sy_sample(&t, 1, 10, s, 1);
	sy_sample(&t, 2, 10, s, 1);
	cr_assert_eq(analysis_losses(&t, LOSS_ALL, l), 0);
	sy_free(&t);
}
