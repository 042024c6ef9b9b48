/* SPDX-License-Identifier: MIT */
/*
 * test_flame.c - frame labels, the flamegraph builder, folded and SVG
 * output, and the task table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/views.h"
#include "tests/unit/view_fixture.h"
#include "tests/unit/xmllint.h"

TestSuite(flame, .init = setup, .fini = teardown);
TestSuite(tasks, .init = setup, .fini = teardown);

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Stacks main -> run -> work (s[0]), main -> run -> sys_read (kernel,
 * s[1]) and main alone (s[2]). */
static void app_stacks(uint32_t s[3])
{
	uint32_t main_ = sy_frame(&T, 0x100, "main", "/usr/bin/app", 0, 0);
	uint32_t run = sy_frame(&T, 0x200, "run", "/usr/bin/app", 0, 0);
	uint32_t work = sy_frame(&T, 0x300, "work", "/usr/bin/app", 0, 0);
	uint32_t rd = sy_frame(&T, 0xffff0400, "sys_read", "[kernel]", 0, 1);

	s[0] = sy_stack(&T, 3, work, run, main_);
	s[1] = sy_stack(&T, 3, rd, run, main_);
	s[2] = sy_stack(&T, 1, main_);
}

/* app_stacks(); tasks 7 "net" and 8 unnamed. */
static void small_trace(void)
{
	uint32_t s[3], s0, s1, s2;

	app_stacks(s);
	s0 = s[0], s1 = s[1], s2 = s[2];
	sy_task(&T, 7, "net");
	sy_task(&T, 8, NULL);
	sy_poll(&T, 1, 7, 100, 200);
	sy_poll(&T, 1, 8, 300, 400);
	sy_sample(&T, 150, 1, s0, 1);
	sy_sample(&T, 160, 1, s0, 2);
	sy_sample(&T, 170, 1, s1, 1);
	sy_sample(&T, 350, 1, s0, 1);
	sy_sample(&T, 500, 1, s2, 1);
	sy_sample(&T, 150, 2, s2, 4);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
}

Test(flame, frame_label_names_symbol_module_or_address)
{
	char b[64];
	uint32_t a = sy_frame(&T, 0x1234, "ns::f;g\nh", "/lib/x.so", 4, 0);
	uint32_t m = sy_frame(&T, 0x5678, NULL, "/usr/lib/libfoo.so.1", 0x78, 0);
	uint32_t x = sy_frame(&T, 0xdeadbeef, NULL, NULL, 0, 0);
	uint32_t k =
		sy_frame(&T, 0xffffffff81000000ULL, "do_syscall_64", "[kernel]", 16, 1);
	uint32_t ku = sy_frame(&T, 0xffffffffa0001000ULL, NULL, "[kernel]", 0x1000, 1);

	cr_assert_str_eq(analysis_frame_label(&T, a, b, sizeof(b)), "ns::f:g?h");
	cr_assert_str_eq(analysis_frame_label(&T, m, b, sizeof(b)), "libfoo.so.1+0x78");
	cr_assert_str_eq(analysis_frame_label(&T, x, b, sizeof(b)), "0xdeadbeef");
	cr_assert_str_eq(analysis_frame_label(&T, k, b, sizeof(b)), "do_syscall_64_[k]");
	cr_assert_str_eq(analysis_frame_label(&T, ku, b, sizeof(b)),
			 "[kernel]+0x1000_[k]");
	/* cut to fit, the kernel suffix survives */
	cr_assert_str_eq(analysis_frame_label(&T, k, b, 10), "do_sy_[k]");
	/* an inlined function is marked, also when cut */
	T.frames[a].inlined = 1;
	cr_assert_str_eq(analysis_frame_label(&T, a, b, sizeof(b)),
			 "ns::f:g?h [inlined]");
	cr_assert_str_eq(analysis_frame_label(&T, a, b, 14), "ns: [inlined]");
	cr_assert_str_eq(analysis_frame_label(&T, 99, b, sizeof(b)), "[bad frame 99]");
}

Test(flame, frame_label_cut_keeps_whole_utf8_characters)
{
	char b[6];
	uint32_t a = sy_frame(&T, 1, "ab\xc3\xa9\xc3\xa9", NULL, 0, 0);

	/* room for 5 bytes: "ab" + one "é" (2 bytes); the second would be
	 * cut in half */
	cr_assert_str_eq(analysis_frame_label(&T, a, b, sizeof(b)), "ab\xc3\xa9");
}

Test(flame, names_show_no_controls_nor_invalid_utf8)
{
	char b[64];
	uint32_t a =
		sy_frame(&T, 0x10, "f\x1b[2J\xc2\x9b\x9b\xc0\x80\xed\xa0\x80;g\xc3\xa9",
			 NULL, 0, 0);
	uint32_t m = sy_frame(&T, 0x20, NULL,
			      "/lib/li\xc2\x85"
			      "b\x1b.so",
			      0x10, 0);

	/* ESC, U+009B as UTF-8 (one '?') and raw, an overlong NUL and a
	 * surrogate (a '?' a byte); ';' is the folded separator */
	cr_assert_str_eq(analysis_frame_label(&T, a, b, sizeof(b)),
			 "f?[2J???????:g\xc3\xa9");
	cr_assert_str_eq(analysis_frame_label(&T, m, b, sizeof(b)), "li?b?.so+0x10");
	analysis_clean_name("task\xc2\x9b\n;x\xf4\x90\x80\x80\xe4\xb8\xad", b, sizeof(b));
	cr_assert_str_eq(b, "task??:x????\xe4\xb8\xad");
}

Test(flame, folded_output_is_sorted_and_summed)
{
	struct flame_result r;
	struct flame_opts o = {.format = FLAME_FOLDED, .result = &r};

	small_trace();
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert_str_eq(output(), "[no poll];main 5\n"
				   "task 7 net;main;run;sys_read_[k] 1\n"
				   "task 7 net;main;run;work 3\n"
				   "task 8;main;run;work 1\n");
	cr_assert_eq(r.samples, 6);
	cr_assert_eq(r.weight, 10);
	cr_assert_eq(r.stacks, 4);
}

/* small_trace() with poll sites: "run" calls the tasks; one sample outside
 * any poll has run on its stack too. */
static void site_trace(const char *site, unsigned int jflags)
{
	uint32_t s[3];

	app_stacks(s);
	sy_meta(&T, TRACE_META_POLL_SITE, site);
	sy_task(&T, 7, "net");
	sy_poll(&T, 1, 7, 100, 200);
	sy_sample(&T, 150, 1, s[0], 2);
	sy_sample(&T, 170, 1, s[1], 1);
	sy_sample(&T, 500, 1, s[0], 4);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST | jflags, &J), 0);
}

Test(flame, polls_start_where_the_runtime_called_the_task)
{
	struct flame_opts o = {.format = FLAME_FOLDED};

	site_trace("/usr/bin/app\trun", 0);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	/* outside the poll the same stack stays whole */
	cr_assert_str_eq(output(), "[no poll];main;run;work 4\n"
				   "task 7 net;[runtime];sys_read_[k] 1\n"
				   "task 7 net;[runtime];work 2\n");
}

Test(flame, by_thread_and_full_stacks_keep_the_runtime)
{
	struct flame_opts o = {.format = FLAME_FOLDED, .by = GROUP_THREAD};

	site_trace("/usr/bin/app\trun", 0);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert(strstr(output(), ";main;run;work 6\n"), "%s", output());
	cr_assert(!strstr(output(), "[runtime]"));
	memout_close();
	memout_open();
	join__free(J);
	cr_assert_eq(join__new(&T, JOIN_WHOLE_STACKS, &J), 0);
	o.by = GROUP_TASK;
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert(strstr(output(), "task 7 net;main;run;work 2\n"), "%s", output());
}

Test(flame, a_site_of_another_module_or_name_cuts_nothing)
{
	struct flame_opts o = {.format = FLAME_FOLDED};

	site_trace("/usr/bin/other\trun", 0);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert(!strstr(output(), "[runtime]"), "%s", output());
	cr_assert_eq(join__keep(J, 0), UINT32_MAX);
	join__free(J);
	J = NULL;
	T.meta[0].value = "/usr/bin/app\trunner";
	cr_assert_eq(join__new(&T, 0, &J), 0);
	cr_assert_eq(join__keep(J, 0), UINT32_MAX);
}

Test(flame, an_inlined_site_cuts_at_the_inlined_frame)
{
	struct flame_opts o = {.format = FLAME_FOLDED};
	uint32_t main_ = sy_frame(&T, 0x100, "main", "/usr/bin/app", 0, 0);
	uint32_t loop = sy_frame(&T, 0x200, "loop", "/usr/bin/app", 0, 0);
	uint32_t poll = sy_frame(&T, 0x200, "poll_one", "/usr/bin/app", 0, 0);
	uint32_t fut = sy_frame(&T, 0x200, "fut", "/usr/bin/app", 0, 0);
	uint32_t work = sy_frame(&T, 0x300, "work", "/usr/bin/app", 0, 0);
	uint32_t s;

	T.frames[poll].inlined = 1;
	T.frames[fut].inlined = 1;
	/* fut and poll_one inlined into loop at one address */
	s = sy_stack(&T, 5, work, fut, poll, loop, main_);
	sy_meta(&T, TRACE_META_POLL_SITE, "/usr/bin/app\tpoll_one\tloop");
	sy_task(&T, 7, "net");
	sy_poll(&T, 1, 7, 100, 200);
	sy_sample(&T, 150, 1, s, 1);
	cr_assert_eq(join__new(&T, 0, &J), 0);
	cr_assert_eq(join__keep(J, s), 2);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert_str_eq(output(), "task 7 net;[runtime];fut [inlined];work 1\n");
}

Test(flame, folded_order_is_byte_order_of_whole_lines)
{
	/* labels with spaces and prefixes of each other: a tree walk in
	 * label order would not give `sort` order */
	struct flame *f = flame__new();
	const char *a[] = {"foo"}, *b[] = {"foo", "x"}, *c[] = {"foo bar"};
	const char *d[] = {"foo", "x"};

	cr_assert(f);
	cr_assert_eq(flame__add(f, a, 1, 5), 0);
	cr_assert_eq(flame__add(f, b, 2, 3), 0);
	cr_assert_eq(flame__add(f, c, 1, 2), 0);
	cr_assert_eq(flame__add(f, d, 2, 1), 0);
	cr_assert_eq(flame__add(f, d, 2, 0), 0);
	cr_assert_eq(flame__total(f), 11);
	cr_assert_eq(flame__write_folded(f, out), 0);
	cr_assert_str_eq(output(), "foo 5\nfoo bar 2\nfoo;x 4\n");
	flame__free(f);
}

Test(flame, task_filter_keeps_only_that_task)
{
	struct flame_result r;
	struct flame_opts o = {.format = FLAME_FOLDED, .result = &r};

	small_trace();
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 7}), 0);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	cr_assert_str_eq(output(), "task 7 net;main;run;sys_read_[k] 1\n"
				   "task 7 net;main;run;work 3\n");
	cr_assert_eq(r.samples, 3);
	cr_assert_eq(r.weight, 4);
}

Test(flame, unknown_task_is_enoent)
{
	struct flame_opts o = {.format = FLAME_FOLDED};

	small_trace();
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 999}), -ENOENT);
	cr_assert_eq(analysis__flame(J, &o, out), -ENOENT);
	cr_assert_str_eq(output(), "");
}

Test(flame, known_task_without_samples_is_enodata)
{
	struct flame_opts o = {.format = FLAME_SVG};

	sy_task(&T, 8, "quiet");
	sy_poll(&T, 1, 8, 100, 200);
	sy_sample(&T, 500, 1, 0, 1);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 8}), 0);
	cr_assert_eq(analysis__flame(J, &o, out), -ENODATA);
	/* still a valid (empty) picture */
	cr_assert(strstr(output(), "</svg>"));
	cr_assert(strstr(output(), "no samples"));
}

Test(flame, svg_is_wellformed_and_escapes_labels)
{
	uint32_t evil = sy_frame(&T, 0x10, "operator<<(A&, B>\"c\")'", "/x", 0, 0);
	uint32_t bad = sy_frame(&T, 0x20, "bad\xff\xfeutf8\xc3", "/x", 0, 0);
	uint32_t k = sy_frame(&T, 0x30, "schedule", "[kernel]", 0, 1);
	uint32_t s = sy_stack(&T, 3, k, bad, evil);
	struct flame_opts o = {.format = FLAME_SVG, .title = "a <title> & more"};
	const char *svg;

	sy_task(&T, 3, "conn <&> \"x\"");
	sy_poll(&T, 1, 3, 0, 100);
	sy_sample(&T, 50, 1, s, 1);
	sy_sample(&T, 60, 1, s, 1);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	svg = output();

	cr_assert(!strncmp(svg, "<?xml", 5));
	cr_assert(strstr(svg, "<svg "));
	cr_assert(strstr(svg, "</svg>\n"));
	cr_assert(strstr(svg, "a &lt;title&gt; &amp; more"));
	cr_assert(strstr(svg, "operator&lt;&lt;(A&amp;, B&gt;&quot;c&quot;)&apos;"));
	cr_assert(strstr(svg, "task 3 conn &lt;&amp;&gt; &quot;x&quot;"));
	cr_assert(strstr(svg, "bad??utf8?"));
	cr_assert(strstr(svg, "schedule_[k] (2 samples, 100.00%)"));
	cr_assert(!strstr(svg, "\xff"));
	cr_assert(!strstr(svg, "<<"));
	/* all, task root, 3 frames */
	cr_assert_eq(count(svg, "<g class=\"f\""), 5);
	cr_assert(strstr(svg, "Reset Zoom"));
	cr_assert(strstr(svg, ">Search<"));
	cr_assert(strstr(svg, "<![CDATA["));
	/* self-contained */
	cr_assert(!strstr(svg, "href"));
	if (have_xmllint())
		cr_assert_eq(xmllint(svg), 0, "xmllint rejected the SVG");
	else
		cr_log_info(
			"xmllint not installed: well-formedness checked by hand only");
}

Test(flame, svg_leaves_out_frames_under_a_tenth_of_a_pixel)
{
	struct flame *f = flame__new();
	const char *big[] = {"big", "leaf"}, *tiny[] = {"tiny", "leaf"};

	cr_assert(f);
	cr_assert_eq(flame__add(f, big, 2, 100000000), 0);
	cr_assert_eq(flame__add(f, tiny, 2, 1), 0);
	cr_assert_eq(flame__write_svg(f, out, "t", NULL, "samples"), 0);
	cr_assert(strstr(output(), "<title>big ("));
	cr_assert(!strstr(output(), "<title>tiny ("));
	cr_assert_eq(count(output(), "<g class=\"f\""), 3);
	flame__free(f);
}

Test(flame, svg_text_is_cut_to_fit)
{
	struct flame *f = flame__new();
	const char *a[] = {"a_very_long_function_name_that_cannot_fit_in_a_narrow_frame"};
	const char *b[] = {"wide"};

	cr_assert(f);
	cr_assert_eq(flame__add(f, a, 1, 3), 0);
	cr_assert_eq(flame__add(f, b, 1, 97), 0);
	cr_assert_eq(flame__write_svg(f, out, NULL, NULL, NULL), 0);
	/* 3% of 1180 px = 35.4 px: room for 4 characters, 2 and ".." */
	cr_assert(strstr(output(), ">a_..</text>"), "%s", output());
	cr_assert(strstr(output(), ">wide</text>"));
	flame__free(f);
}

Test(tasks, table_lists_polls_and_longest)
{
	const char *o;

	sy_task(&T, 7, "net");
	sy_task(&T, 9, "idle");
	sy_poll(&T, 1, 7, 0, 1500000);
	sy_poll(&T, 1, 7, 2000000, 14300000);  /* 12.3ms */
	sy_poll(&T, 2, 8, 20000000, 20850000); /* 850us */
	sy_sample(&T, 100, 1, 0, 1);
	sy_sample(&T, 2000100, 1, 0, 2);
	sy_sample(&T, 20000100, 2, 0, 1);
	sy_sample(&T, 30000000, 2, 0, 1); /* outside */
	/* task 7: spawned as its first poll begins (0ns), woken inside its
	 * first poll and polled again 750us after (merged into one wait);
	 * task 8: woken as its poll begins; task 9: woken, never polled */
	sy_event(&T, 0, 3, TRACE_EV_SPAWN, 7);
	sy_event(&T, 1250000, 3, TRACE_EV_WAKE, 7);
	sy_event(&T, 1400000, 3, TRACE_EV_WAKE, 7);
	sy_event(&T, 20000000, 3, TRACE_EV_WAKE, 8);
	sy_event(&T, 25000000, 3, TRACE_EV_WAKE, 9);
	sy_meta(&T, "frequency", "1000");
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST | JOIN_POLL_LENGTHS, &J), 0);
	cr_assert_eq(delays__new(J, NULL, &D), 0);
	cr_assert_eq(analysis__tasks(J, D, NULL, out), 0);
	o = output();
	cr_log_info("\n%s", o);
	/* 3 samples at 1000 Hz are 3ms of CPU, 10% of one CPU over 30ms; the
	 * 99th percentile of two polls is the longer one */
	cr_assert_str_eq(
		o,
		"TASK      NAME  POLLS        CPU    CPU%  TOTAL-POLL  MEAN-POLL  POLL-P99  "
		"LONGEST-POLL  WAKES  DELAY-P50  DELAY-P99  DELAY-MAX\n"
		"7         net       2     3.00ms   10.0%      13.8ms     6.90ms    12.3ms        "
		"12.3ms      2        0ns      750us      750us\n"
		"8         -         1     1.00ms    3.3%       850us      850us     850us         "
		"850us      1        0ns        0ns        0ns\n"
		"9         idle      0        0ns    0.0%           -          -         -             "
		"-      0          -          -          -\n"
		"# 3 of 3 tasks, by CPU\n"
		"# CPU: sampled CPU time inside the polls (sampling periods x 1/frequency); CPU%: "
		"of one CPU over the 30.0ms recorded\n"
		"# sampled CPU: 4.00ms in polls (80.0%), 1.00ms outside polls (20.0%)\n");
}

Test(tasks, grouped_by_name_sorted_and_limited)
{
	struct tasks_opts o = {.by = GROUP_NAME, .sort = TASKS_BY_POLLS, .limit = 1};

	sy_task(&T, 1, "short");
	sy_task(&T, 2, "short");
	sy_task(&T, 3, "long");
	sy_poll(&T, 1, 1, 0, 1000000);
	sy_poll(&T, 1, 2, 1000000, 2000000);
	sy_poll(&T, 2, 3, 0, 10000000);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(analysis__tasks(J, NULL, &o, out), 0);
	cr_log_info("\n%s", output());
	cr_assert(!strncmp(output(), "NAME    TASKS  POLLS        CPU", 31), "%s",
		  output());
	cr_assert(
		strstr(output(), "\nshort       2      2          -       -      2.00ms"),
		"%s", output());
	cr_assert(!strstr(output(), "\nlong"), "limited to one row: %s", output());
	cr_assert(strstr(output(),
			 "# 1 of 2 task names (3 tasks), by polls; --limit 0 for all\n"),
		  "%s", output());
}

Test(tasks, footer_reports_what_is_missing)
{
	T.counters.lost_samples = 12;
	sy_event(&T, 10, 1, TRACE_EV_POLL_BEGIN, 1);
	sy_event(&T, 20, 1, TRACE_EV_POLL_END, 1);
	sy_event(&T, 30, 1, TRACE_EV_POLL_END, 1);
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(analysis__tasks(J, NULL, NULL, out), 0);
	cr_assert(strstr(output(), "# incomplete: 1 poll ends without a begin\n"
				   "# lost: 12 samples (perf ring full)\n"),
		  "%s", output());
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1M samples, 2000 distinct stacks, 200k polls of 5000 tasks on 16
 * threads. @mixed: any sample may have any stack, so nearly every sample
 * is a distinct (task, stack) pair (the worst case); otherwise each task
 * runs 8 code paths, as tasks do. */
static void scale(int mixed)
{
	const uint32_t nthr = 16, polls_per = 200000 / 16, nstacks = 2000;
	struct flame_result r;
	struct flame_opts o = {.format = FLAME_FOLDED, .result = &r};
	double t0, t1, t2, t3;
	size_t folded_len;
	static char names[64][16];

	for (int i = 0; i < 64; i++)
		snprintf(names[i], sizeof(names[i]), "fn_%d", i);
	for (uint32_t s = 0; s < nstacks; s++) {
		uint32_t depth = 5 + s % 20, ids[32];

		for (uint32_t d = 0; d < depth; d++) {
			uint32_t pick = (s * 31 + d * 17 + (d > 3 ? s : 0)) % 64;

			ids[d] = sy_frame(&T, 0x1000 + pick, names[pick], "/bin/x", 0, 0);
		}
		cr_assert_eq(sy_stack_syms(&T, 0, NULL), s);
		/* fill the empty stack with the frames just made */
		T.stack_frames = realloc(T.stack_frames,
					 (T.stack_off[s] + depth + 1) * sizeof(uint32_t));
		cr_assert(T.stack_frames);
		memcpy(T.stack_frames + T.stack_off[s], ids, depth * sizeof(uint32_t));
		T.stack_off[s + 1] = T.stack_off[s] + depth;
	}
	for (uint32_t k = 0; k < polls_per; k++)
		for (uint32_t th = 0; th < nthr; th++) {
			uint64_t base = (uint64_t)k * 10000 + th;

			sy_poll(&T, 100 + th, 1 + (k * 7 + th) % 5000, base, base + 6000);
		}
	for (uint32_t i = 0; i < 1000000; i++) {
		uint64_t time =
			(uint64_t)(i / nthr) * 2003 % ((uint64_t)polls_per * 10000);
		uint32_t th = i % nthr;
		uint64_t task = 1 + (time / 10000 * 7 + th) % 5000;
		uint32_t stack = mixed ? (i * 2654435761u) % nstacks
				       : (task * 37 + i % 8) % nstacks;

		sy_sample(&T, time, 100 + th, stack, 1);
	}
	t0 = now_s();
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	t1 = now_s();
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	fflush(out);
	folded_len = buflen;
	t2 = now_s();
	fclose(out);
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &buflen);
	cr_assert(out);
	o.format = FLAME_SVG;
	cr_assert_eq(analysis__flame(J, &o, out), 0);
	fflush(out);
	t3 = now_s();
	cr_assert_eq(r.samples, 1000000);
	cr_log_info("%s: 1M samples, %" PRIu64 " distinct (task, stack): join %.3f s, "
		    "folded %.3f s (%zu bytes), svg %.3f s (%zu bytes)",
		    mixed ? "worst case" : "typical", r.stacks, t1 - t0, t2 - t1,
		    folded_len, t3 - t2, buflen);
}

Test(flame, scale_1m_samples_fold_and_svg, .timeout = 120)
{
	scale(0);
}

Test(flame, scale_1m_samples_all_distinct_stacks, .timeout = 120)
{
	scale(1);
}

Test(tasks, long_names_keep_their_own_name)
{
	char b[256];

	analysis_fit_name("ns::detail::Type<std::vector<int, std::allocator<int> >, A>::"
			  "method(int, char const*)",
			  40, b, sizeof(b));
	cr_expect_str_eq(b, "ns::detail::Type<..>::method(..)");
	analysis_fit_name("a_very_long_c_function_name_that_goes_on_and_on", 20, b,
			  sizeof(b));
	cr_expect_str_eq(b, "a_very_long_c_func..");
	analysis_fit_name("fits", 20, b, sizeof(b));
	cr_expect_str_eq(b, "fits");
	analysis_fit_name("ns::f(long long long long long args)", 0, b, sizeof(b));
	cr_expect_str_eq(b, "ns::f(long long long long long args)", "0: never cut");
}
