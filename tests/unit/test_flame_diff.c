/* SPDX-License-Identifier: MIT */
/* Differential flamegraphs (analysis/flame_diff.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/views.h"
#include "tests/unit/memout.h"
#include "tests/unit/synth_trace.h"

static struct trace A, B; /* base, new */
static struct join *JA, *JB;

static void setup(void)
{
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	JA = JB = NULL;
	memout_open();
}

static void teardown(void)
{
	memout_close();
	join__free(JA);
	join__free(JB);
	sy_free(&A);
	sy_free(&B);
}

TestSuite(flame_diff, .init = setup, .fini = teardown);

/* Task @id "srv" polled on thread 1 from 0 to 1e6: @hot samples in
 * main -> hot, @cold in main -> cold, and, if @gone, 5 in main -> gone. */
static void profile(struct trace *t, struct join **j, uint64_t id, int hot, int cold,
		    int gone)
{
	static const char *const h[] = {"hot", "main"}, *const c[] = {"cold", "main"},
				 *const g[] = {"gone", "main"};
	uint32_t sh = sy_stack_syms(t, 2, h), sc = sy_stack_syms(t, 2, c);
	uint32_t sg = sy_stack_syms(t, 2, g);
	uint64_t time = 10;

	sy_task(t, id, "srv");
	sy_poll(t, 1, id, 0, 1000000);
	for (int i = 0; i < hot; i++)
		sy_sample(t, time++, 1, sh, 1);
	for (int i = 0; i < cold; i++)
		sy_sample(t, time++, 1, sc, 1);
	for (int i = 0; gone && i < 5; i++)
		sy_sample(t, time++, 1, sg, 1);
	cr_assert_eq(join__new(t, 0, j), 0);
}

Test(flame_diff, folded_has_base_and_new_counts_of_each_stack)
{
	struct flame_diff_result r;
	struct flame_diff_opts o = {.cur = {.format = FLAME_FOLDED}, .result = &r};

	profile(&A, &JA, 7, 10, 10, 0);
	profile(&B, &JB, 7, 20, 10, 0);
	cr_assert_eq(analysis__flame_diff(JB, JA, &o, out), 0);
	/* roots by name: ids need not agree between recordings */
	cr_assert_str_eq(output(), "srv;main;cold 10 10\nsrv;main;hot 10 20\n");
	cr_assert_eq(r.base.weight, 20);
	cr_assert_eq(r.cur.weight, 30);
	cr_assert_float_eq(r.scale, 1.5, 1e-9);
	cr_assert_eq(r.vanished, 0);
}

Test(flame_diff, frame_only_in_base_is_zero_in_new_and_counted)
{
	struct flame_diff_result r;
	struct flame_diff_opts o = {.cur = {.format = FLAME_FOLDED}, .result = &r};

	profile(&A, &JA, 7, 10, 10, 1);
	profile(&B, &JB, 9, 10, 10, 0);
	cr_assert_eq(analysis__flame_diff(JB, JA, &o, out), 0);
	cr_assert_str_eq(output(), "srv;main;cold 10 10\nsrv;main;gone 5 0\n"
				   "srv;main;hot 10 10\n");
	cr_assert_eq(r.vanished, 5);
}

Test(flame_diff, svg_normalizes_the_base_and_colours_the_change)
{
	struct flame_diff_opts o = {.cur = {.format = FLAME_SVG}};
	const char *s, *hot, *cold;

	/* the base is twice as long: hot 20 of 40, cold 20 of 40; new: hot
	 * 20 of 30, cold 10 of 30. Normalized (x0.75), hot grew 15 -> 20
	 * (+33.3%), cold shrank 15 -> 10 (-33.3%) */
	profile(&A, &JA, 7, 20, 20, 0);
	profile(&B, &JB, 7, 20, 10, 0);
	cr_assert_eq(analysis__flame_diff(JB, JA, &o, out), 0);
	s = output();
	hot = strstr(s, "<title>hot (");
	cold = strstr(s, "<title>cold (");
	cr_assert(hot && cold, "%s", s);
	cr_assert(
		!strncmp(
			hot,
			"<title>hot (20 samples, 66.67%; +33.3%: base 15 -&gt; new 20 "
			"samples, normalized; raw base 20)</title>",
			strlen("<title>hot (20 samples, 66.67%; +33.3%: base 15 -&gt; new 20 "
			       "samples, normalized; raw base 20)</title>")),
		"%.200s", hot);
	cr_assert(strstr(hot, "fill=\"rgb(255,45,45)\""), "%.300s", hot);
	cr_assert(strstr(cold, "-33.3%: base 15 -&gt; new 10"), "%.200s", cold);
	cr_assert(strstr(cold, "fill=\"rgb(45,45,255)\""), "%.300s", cold);
	/* all and main did not change once normalized: white */
	cr_assert(strstr(strstr(s, "<title>main ("), "fill=\"rgb(250,250,250)\""));
	cr_assert(strstr(s, "base: b"), "no subtitle");
}

Test(flame_diff, same_profile_is_all_zero_change)
{
	struct flame_diff_opts o = {.cur = {.format = FLAME_SVG}};
	const char *s, *p;
	int frames = 0;

	profile(&A, &JA, 7, 20, 10, 1);
	profile(&B, &JB, 7, 20, 10, 1);
	cr_assert_eq(analysis__flame_diff(JB, JA, &o, out), 0);
	s = output();
	for (p = s; (p = strstr(p, "fill=\"rgb(")); p++, frames++)
		cr_assert(!strncmp(p, "fill=\"rgb(250,250,250)", 22), "%.60s", p);
	cr_assert_eq(frames, 6); /* all, srv, main, hot, cold, gone */
	cr_assert(strstr(s, "; +0.0%: base 5 -&gt; new 5 samples)"));
}

Test(flame_diff, task_id_matches_by_name_when_ids_differ)
{
	profile(&A, &JA, 7, 1, 1, 0);
	profile(&B, &JB, 9, 1, 1, 0);
	cr_assert_eq(join__select(JB, &(struct task_sel){.on = 1, .id = 9}), 0);
	cr_assert_eq(task_sel_match(JB, JA), TASK_MATCH_NAME);
	cr_assert_str_eq(JA->sel.name, "srv");
	cr_assert_eq(JA->nkept, 1);
	/* not in the new one: nothing to match by */
	cr_assert_eq(join__select(JB, &(struct task_sel){.on = 1, .id = 7}), -ENOENT);
	cr_assert_eq(task_sel_match(JB, JA), -ENOENT);
}

Test(flame_diff, task_id_in_both_under_one_name_is_the_same)
{
	profile(&A, &JA, 7, 1, 1, 0);
	profile(&B, &JB, 7, 1, 1, 0);
	cr_assert_eq(join__select(JB, &(struct task_sel){.on = 1, .id = 7}), 0);
	cr_assert_eq(task_sel_match(JB, JA), TASK_MATCH_SAME);
	cr_assert_eq(JA->sel.id, 7);
	cr_assert_null(JA->sel.name);
}
