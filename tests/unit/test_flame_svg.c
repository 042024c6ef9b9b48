/* SPDX-License-Identifier: MIT */
/*
 * test_flame_svg.c - the SVG flamegraph: its size on many tasks, merged
 * small frames, the style (palette, icicle), names cut in the middle, a
 * width that follows the window, and the case-insensitive search toggle.
 * What needs a browser is in tests/e2e/svg.sh.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "analysis/flame.h"
#include "tests/unit/memout.h"
#include "tests/unit/xmllint.h"

static struct flame *F;

static void setup(void)
{
	F = flame__new();
	cr_assert(F);
	memout_open();
}

static void teardown(void)
{
	memout_close();
	flame__free(F);
}

TestSuite(flame_svg, .init = setup, .fini = teardown);

/* F as an SVG, as a string. */
static const char *svg(void)
{
	cr_assert_eq(flame__write_svg(F, out, "t", NULL, "samples"), 0);
	fflush(out);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void add(const char *a, const char *b, const char *c, uint64_t w)
{
	const char *p[] = {a, b, c};

	cr_assert_eq(flame__add(F, p, c ? 3 : b ? 2 : 1, w), 0);
}

/* The fill and y of the frame whose title starts with @label. */
static void frame_of(const char *s, const char *label, int rgb[3], long *y)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", label);
	p = strstr(s, key);
	cr_assert(p, "no frame %s", label);
	p = strstr(p, "<rect ");
	cr_assert(p);
	cr_assert_eq(sscanf(strstr(p, " y=\"") + 4, "%ld", y), 1);
	cr_assert_eq(sscanf(strstr(p, "fill=\"rgb(") + 10, "%d,%d,%d", &rgb[0], &rgb[1],
			    &rgb[2]),
		     3);
}

/* 2,000 root tasks with a few frames each: equal weights (each task under
 * a pixel), or weights falling as 1/rank (a few wide, most not). */
static void many_tasks(int skewed)
{
	char root[64], mid[64], leaf[64];

	for (int i = 1; i <= 2000; i++) {
		uint64_t w = skewed ? 1 + 200000 / i : 100;

		snprintf(root, sizeof(root), "task %d handler", i);
		snprintf(mid, sizeof(mid), "app::handlers::Conn<Tls>::handle_%d(Req&)",
			 i % 40);
		snprintf(leaf, sizeof(leaf), "leaf_%d", i % 7);
		add(root, "runtime::worker::run", mid, w);
		{
			const char *p[] = {root, "runtime::worker::run", mid, leaf,
					   "memcpy"};

			cr_assert_eq(flame__add(F, p, 5, w), 0);
		}
	}
}

Test(flame_svg, two_thousand_tasks_stay_well_under_300_kb)
{
	const char *s;

	many_tasks(0);
	s = svg();
	cr_log_info("2,000 tasks of equal weight: %zu bytes", buflen);
	cr_assert_lt(buflen, 100 * 1024, "%zu bytes", buflen);
	/* every task is under a pixel: one frame says how many */
	cr_assert(strstr(s, "<title>2000 small frames, 400000 samples (100.00%)</title>"),
		  "%.2000s", s);
	cr_assert_eq(count(s, "<g class=\"f\""), 1); /* "all" */
}

Test(flame_svg, two_thousand_skewed_tasks_stay_well_under_300_kb)
{
	many_tasks(1);
	svg();
	cr_log_info("2,000 tasks weighted 1/rank: %zu bytes", buflen);
	cr_assert_lt(buflen, 200 * 1024, "%zu bytes", buflen);
	cr_assert_eq(count(buf, "<g class=\"f m\""), 1);
	cr_assert(strstr(buf, "<title>task 1 handler ("));
}

Test(flame_svg, sub_pixel_children_are_one_frame_with_their_count_and_share)
{
	char name[32];
	const char *s;

	/* 1180 px: "big" is 1168 px, each "tiny_N" 0.12 px, together 11.8 px */
	add("root", "big", NULL, 99000);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "tiny_%d", i);
		add("root", name, "deeper", 10);
	}
	s = svg();
	cr_assert(strstr(s,
			 "<g class=\"f m\" data-s=\"99000\" data-n=\"1000\" data-d=\"2\">"
			 "<title>100 small frames, 1000 samples (1.00%)</title>"),
		  "%s", s);
	cr_assert(!strstr(s, "tiny_"));
	cr_assert(!strstr(s, "deeper"));
	/* all, root, big, the merged frame */
	cr_assert_eq(count(s, "<g class=\"f"), 4);
}

Test(flame_svg, one_sub_pixel_child_is_drawn_as_itself)
{
	const char *s;

	add("big", NULL, NULL, 99950);
	add("small", "leaf", NULL, 50); /* 0.59 px */
	s = svg();
	cr_assert(strstr(s, "<title>small (50 samples, 0.05%)</title>"), "%s", s);
	cr_assert(strstr(s, "<title>leaf (50 samples, 0.05%)</title>"));
	cr_assert(!strstr(s, "class=\"f m\""));
}

Test(flame_svg, merged_frames_under_a_tenth_of_a_pixel_are_left_out)
{
	add("big", NULL, NULL, 100000000);
	add("tiny_a", NULL, NULL, 1);
	add("tiny_b", NULL, NULL, 1);
	svg();
	cr_assert(!strstr(buf, "class=\"f m\""));
	cr_assert_eq(count(buf, "<g class=\"f"), 2);
}

Test(flame_svg, default_style_is_a_warm_flame_graph_with_the_root_at_the_bottom)
{
	int all[3], fn[3];
	long y_all, y_fn;

	add("main", "work", NULL, 10);
	svg();
	cr_assert(strstr(buf, "data-layout=\"flame\""));
	frame_of(buf, "all", all, &y_all);
	frame_of(buf, "work", fn, &y_fn);
	cr_assert_gt(y_all, y_fn);
	cr_assert_gt(fn[0], fn[2], "work is rgb(%d,%d,%d)", fn[0], fn[1], fn[2]);
}

Test(flame_svg, offcpu_style_paints_blue_and_reverse_puts_the_root_on_top)
{
	struct flame_style st = {.offcpu = 1, .reverse = 1};
	const char *names[] = {"main", "work", "read", "schedule_[k]"};
	int all[3], rgb[3];
	long y_all, y, y_prev;

	cr_assert_eq(flame__add(F, names, 4, 10), 0);
	flame__set_style(F, &st);
	svg();
	cr_assert(strstr(buf, "data-layout=\"icicle\""));
	frame_of(buf, "all", all, &y_all);
	y_prev = y_all;
	for (int i = 0; i < 4; i++) {
		frame_of(buf, names[i], rgb, &y);
		cr_assert_gt(y, y_prev, "%s is not below its caller", names[i]);
		cr_assert(rgb[2] > rgb[0] + 40 && rgb[2] > rgb[1] + 20,
			  "%s is rgb(%d,%d,%d), not blue", names[i], rgb[0], rgb[1],
			  rgb[2]);
		y_prev = y;
	}
}

Test(flame_svg, style_is_copied_and_null_restores_the_default)
{
	struct flame_style st = {.reverse = 1};
	int rgb[3];
	long y;

	add("main", NULL, NULL, 1);
	flame__set_style(F, &st);
	st.reverse = 0; /* copied: no effect */
	flame__set_style(NULL, &st);
	svg();
	cr_assert(strstr(buf, "data-layout=\"icicle\""));
	memout_close(); /* a fresh stream for the second SVG */
	memout_open();
	flame__set_style(F, NULL);
	svg();
	cr_assert(strstr(buf, "data-layout=\"flame\""));
	frame_of(buf, "main", rgb, &y);
	cr_assert_gt(rgb[0], rgb[2]);
}

/* The text written for @label as a root frame of @pct% of the width
 * (1180 px at 7.08 px a character) is @want (XML-escaped). */
static void expect_cut(const char *label, int pct, const char *want)
{
	char key[1024], text[256];
	const char *p, *e;

	add(label, NULL, NULL, pct);
	add("other", NULL, NULL, 100 - pct);
	svg();
	snprintf(key, sizeof(key), "(%d samples, %d.00%%)</title>", pct, pct);
	p = strstr(buf, key);
	cr_assert(p, "%s", buf);
	p = strstr(p, "<text ");
	cr_assert(p, "no text for %s at %d%%", label, pct);
	p = strchr(p, '>') + 1;
	e = strstr(p, "</text>");
	cr_assert(e && (size_t)(e - p) < sizeof(text));
	memcpy(text, p, e - p);
	text[e - p] = '\0';
	cr_assert_str_eq(text, want, "%s at %d%%", label, pct);
}

Test(flame_svg, cxx_name_loses_its_parts_in_order_as_it_narrows)
{
	static const struct {
		int pct;
		const char *want;
	} steps[] = {
		/* 354 px, 49 characters: the template arguments go first */
		{30, "ns::detail::Type&lt;..&gt;::method(int, char const*)"},
		/* 236 px, 32: then the parameters */
		{20, "ns::detail::Type&lt;..&gt;::method(..)"},
		/* 141.6 px, 19: then the middle scopes */
		{12, "ns::..::method(..)"},
		/* 94.4 px, 12: then all but its own name */
		{8, "method(..)"},
		/* 70.8 px, 9: then its parameter list */
		{6, "method"},
		/* 47.2 px, 5: last, its own name is cut on the right */
		{4, "met.."},
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (i) { /* a graph of its own */
			teardown();
			setup();
		}
		expect_cut(
			"ns::detail::Type<std::vector<int>, Alloc>::method(int, char const*)",
			steps[i].pct, steps[i].want);
	}
}

Test(flame_svg, rust_path_keeps_first_scope_and_function)
{
	/* 24 characters */
	expect_cut("tokio::runtime::task::harness::Harness<T,S>::poll", 15,
		   "tokio::runtime::..::poll");
}

Test(flame_svg, operator_names_are_not_brackets)
{
	expect_cut(
		"std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char "
		"const*)",
		20, "std::..::operator&lt;&lt; &lt;..&gt;(..)");
}

Test(flame_svg, c_name_is_cut_on_the_right)
{
	expect_cut("a_very_long_c_function_name_that_is_cut_on_the_right_side", 12,
		   "a_very_long_c_fun..");
}

Test(flame_svg, width_follows_the_window)
{
	add("main", NULL, NULL, 1);
	svg();
	cr_assert(strstr(buf, "<svg version=\"1.1\" width=\"100%\" height=\""), "%.400s",
		  buf);
	cr_assert(!strstr(buf, "viewBox"));
	cr_assert(!strstr(buf, "1200"));
	/* frames in % of it, the script refits text on resize */
	cr_assert(strstr(buf, "<rect x=\"0.8333%\" y=\""));
	cr_assert(strstr(buf, "width=\"98.3333%\""));
	cr_assert(strstr(buf, "addEventListener(\"resize\""));
}

Test(flame_svg, search_has_an_ignore_case_toggle)
{
	add("main", NULL, NULL, 1);
	svg();
	cr_assert(strstr(buf, "<text id=\"icase\""));
	cr_assert(strstr(buf, ">[ ] ignore case</text>"));
	cr_assert(strstr(buf, "new RegExp(t, icase ? \"i\" : \"\")"));
}

Test(flame_svg, many_tasks_icicle_is_wellformed)
{
	struct flame_style st = {.offcpu = 1, .reverse = 1};

	if (!have_xmllint()) {
		cr_log_info("xmllint not installed: skipped");
		return;
	}
	many_tasks(1);
	add("ns::a<b>::operator<<(x&)", "\xff<&>", NULL, 90000);
	flame__set_style(F, &st);
	cr_assert_eq(xmllint(svg()), 0, "xmllint rejected the SVG");
}
