/* SPDX-License-Identifier: MIT */
/*
 * test_catalog.c - a store's keys read back as the object-store layout
 * (store/catalog.c): what is in it, what is not, the window that cuts
 * through a segment, the times --from/--to take, and `d9prof ls`'s view.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "store/catalog.h"
#include "tests/unit/memout.h"

static struct catalog C;

static void setup(void)
{
	memset(&C, 0, sizeof(C));
	memout_open();
}

static void teardown(void)
{
	memout_close();
	catalog__release(&C);
}

TestSuite(catalog, .init = setup, .fini = teardown);

/* 2026-11-26 21:40:00 UTC */
#define T0 1795729200

Test(catalog, keys_in_the_layout_and_the_others)
{
	cr_assert_eq(catalog__add(&C,
				  "2026-11-26/2140/api/host-a/1a2b3c4d/1795729205-3.d9",
				  100),
		     0);
	cr_assert_eq(catalog__add(&C,
				  "fleet/2026-11-26/2141/api/host-a/1a2b3c4d/"
				  "d9prof-42-20261126-224130.data",
				  50),
		     0);
	/* not the layout: a flat file, a bad date, an epoch outside its
	 * minute, a name that is neither */
	cr_assert_eq(catalog__add(&C, "1795729205-3.d9", 1), 0);
	cr_assert_eq(catalog__add(&C, "2026-13-26/2140/api/h/b/1795729205-3.d9", 1), 0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/h/b/1795729305-3.d9", 1), 0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/h/b/notes.txt", 1), 0);
	/* a recording's tag after the index: hex, 1 to 16 digits */
	cr_assert_eq(
		catalog__add(&C, "2026-11-26/2140/api/h/b/1795729205-3-9f3a0c.d9", 1), 0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/h/b/1795729205-3-xyz.d9", 1),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/h/b/1795729205-3-.d9", 1), 0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/h/b/1795729205-3-1-2.d9", 1),
		     0);
	/* the segments' tables, beside them: counted apart */
	cr_assert_eq(
		catalog__add(
			&C,
			"polls/service=api/host=h/date=2026-11-26/42-1795729205-3.parquet",
			9),
		0);
	cr_assert_eq(
		catalog__add(&C,
			     "fleet/stacks/service=api/host=h/date=2026-11-26/x.parquet",
			     9),
		0);
	cr_assert_eq(catalog__add(&C, "polls/service=api/x.parquet", 9), 0);
	cr_assert_eq(C.n, 3);
	cr_expect_eq(C.tables, 2);
	cr_expect_eq(C.others, 8);
	cr_expect_eq(C.v[2].wall, T0 + 5);
	cr_expect_str_eq(C.v[0].service, "api");
	cr_expect_str_eq(C.v[0].host, "host-a");
	cr_expect_str_eq(C.v[0].boot, "1a2b3c4d");
	cr_expect_eq(C.v[0].wall, T0 + 5);
	cr_expect_eq(C.v[0].dump, 0);
	cr_expect_eq(C.v[1].dump, 1);
	cr_expect_eq(C.v[1].wall, T0 + 60);
}

/* Segments every 60 s on two hosts; a window from 21:42:30 keeps each
 * host's segment begun at 21:42 (it runs into the window), not the
 * earlier ones. */
Test(catalog, a_window_keeps_the_segment_that_runs_into_it)
{
	char key[128];
	unsigned char keep[16];
	struct catalog_filter f = {.from = T0 + 150, .to = T0 + 240};

	for (int h = 0; h < 2; h++)
		for (int i = 0; i < 5; i++) {
			snprintf(key, sizeof(key), "2026-11-26/214%d/api/h%d/b/%d-%d.d9",
				 i, h, T0 + 60 * i, i);
			cr_assert_eq(catalog__add(&C, key, 10), 0);
		}
	catalog__sort(&C);
	cr_assert_eq(catalog__select(&C, &f, keep), 4);
	for (size_t i = 0; i < C.n; i++)
		cr_expect_eq(keep[i], C.v[i].wall >= T0 + 120 && C.v[i].wall < T0 + 240,
			     "%s", C.v[i].key);
	f.host = "h1";
	cr_expect_eq(catalog__select(&C, &f, keep), 2);
	f.service = "web";
	cr_expect_eq(catalog__select(&C, &f, keep), 0);
}

Test(catalog, the_days_a_window_lists)
{
	char days[4][16];
	size_t n;

	cr_assert_eq(catalog_days(T0, T0 + 2 * 86400, days, 4, &n), 0);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(days[0], "2026-11-26/");
	cr_expect_str_eq(days[2], "2026-11-28/");
	cr_expect_eq(catalog_days(T0, T0 + 9 * 86400, days, 4, &n), -E2BIG);
}

/* The view: one row per service/host/boot, the density, the dumps with
 * their reasons; a key whose service or host the recorder would not have
 * written (a terminal escape, shell syntax: anyone with PutObject can
 * write one) counted, not read. */
Test(catalog, what_ls_shows)
{
	unsigned char keep[8];
	struct catalog_filter f = {0};
	const char *text;

	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/a/b1/1795729200-0.d9", 1000),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2141/api/a/b1/1795729260-1.d9", 3000),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2141/api/a/b1/d9prof-7-x.data", 500),
		     0);
	cr_assert_eq(
		catalog__add(&C, "2026-11-26/2150/w\x1b[2Jeb/z/b2/1795729800-0.d9", 10),
		0);
	cr_assert_eq(
		catalog__add(&C,
			     "2026-11-26/2150/api$(id>PWNED)/web-1;touch${IFS}PWNED2;#/"
			     "b2/1795729800-0.d9",
			     10),
		0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2150/api/web 1/b2/1795729800-0.d9", 10),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2150/api/../b2/1795729800-0.d9", 10),
		     0);
	cr_expect_eq(C.others, 4);
	catalog__sort(&C);
	cr_assert_eq(catalog__select(&C, &f, keep), 3);
	for (size_t i = 0; i < C.n; i++)
		if (C.v[i].dump)
			C.v[i].reason = strdup("trigger poll>50ms: task 3 polled 80 ms");
	cr_assert_eq(catalog__print(&C, keep, "s3://b/p", 0, out), 0);
	text = output();
	cr_expect(strstr(text, "s3://b/p: 2 segments and 1 dump"), "%s", text);
	cr_expect(strstr(text, "2026-11-26 21:40 to 2026-11-26 21:41 UTC"), "%s", text);
	cr_expect(strstr(text, "(and 4 keys not in the layout)"), "%s", text);
	cr_expect(!strstr(text, "PWNED"), "%s", text);
	cr_expect(strstr(text, "api                  a                    b1"), "%s",
		  text);
	cr_expect(!strchr(text, '\x1b'), "%s", text);
	cr_expect(strstr(text, "(per 1 min)"), "%s", text);
	cr_expect(strstr(text, "d9prof-7-x.data (500 B): trigger poll>50ms"), "%s", text);
	memout_close();
	memout_open();
	cr_assert_eq(catalog__print(&C, keep, "s3://b/p", 1, out), 0);
	text = output();
	cr_expect(strstr(text, "\"service\":\"api\",\"host\":\"a\",\"boot\":\"b1\","
			       "\"segments\":2,\"dumps\":1,\"bytes\":4500"),
		  "%s", text);
	cr_expect(strstr(text, "\"bucket_seconds\":60"), "%s", text);
}

Test(catalog, a_segments_index_round_trips_and_reads_forward)
{
	struct catalog_index ix = {.polls = 123456,
				   .samples = 789,
				   .lost = 2,
				   .max_poll_ns = 12000000,
				   .max_delay_ns = 450000},
			     got;
	char ixs[CATALOG_INDEX_LEN];

	catalog_index_format(&ix, ixs, sizeof(ixs));
	cr_assert_eq(catalog_index_parse(ixs, &got), 0, "%s", ixs);
	cr_expect_eq(memcmp(&ix, &got, sizeof(ix)), 0, "%s", ixs);
	/* the largest values fit */
	memset(&ix, 0xff, sizeof(ix));
	catalog_index_format(&ix, ixs, sizeof(ixs));
	cr_assert_eq(catalog_index_parse(ixs, &got), 0, "%s", ixs);
	cr_expect_eq(got.max_delay_ns, UINT64_MAX, "%s", ixs);
	/* a later writer's keys are skipped; order does not matter */
	cr_assert_eq(catalog_index_parse("spans=9 max-poll=5 polls=7", &got), 0);
	cr_expect(got.polls == 7 && got.max_poll_ns == 5 && !got.samples);
	/* nothing known, or a number that is not one */
	cr_expect_eq(catalog_index_parse("", &got), -EINVAL);
	cr_expect_eq(catalog_index_parse("spans=9", &got), -EINVAL);
	cr_expect_eq(catalog_index_parse("polls=-1", &got), -EINVAL);
	cr_expect_eq(catalog_index_parse("polls=12x", &got), -EINVAL);
	cr_expect_eq(catalog_index_parse("polls=", &got), -EINVAL);
	cr_expect_eq(catalog_index_parse("polls=99999999999999999999", &got), -EINVAL);
}

Test(catalog, ls_adds_up_the_indexes_and_flags_as_report_does)
{
	struct catalog_filter f = {0};
	unsigned char keep[8];
	const char *text;

	cr_assert_eq(catalog__add(&C, "2026-11-26/2140/api/a/b1/1795729200-0.d9", 1000),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2141/api/a/b1/1795729260-1.d9", 3000),
		     0);
	cr_assert_eq(catalog__add(&C, "2026-11-26/2141/api/a/b1/1795729270-2.d9", 3000),
		     0);
	catalog__sort(&C);
	cr_assert_eq(catalog__select(&C, &f, keep), 3);
	C.flag_poll_ns = 10000000;
	C.flag_delay_ns = 5000000;
	/* one quiet, one with a poll of exactly the threshold, one unknown */
	C.v[0].indexed = 1;
	C.v[0].ix = (struct catalog_index){.polls = 100, .max_poll_ns = 2000};
	C.v[1].indexed = 1;
	C.v[1].ix = (struct catalog_index){
		.polls = 50, .max_poll_ns = 10000000, .max_delay_ns = 30000};
	C.unindexed = 1;
	cr_assert_eq(catalog__print(&C, keep, "s3://b", 1, out), 0);
	text = output();
	cr_expect(strstr(text, "\"indexed\":2,\"polls\":150,\"samples\":0,\"lost\":0,"
			       "\"max_poll_ns\":10000000,\"max_delay_ns\":30000,"
			       "\"flagged\":1"),
		  "%s", text);
	/* the second minute: one indexed, flagged */
	cr_expect(strstr(text, "\"hosts\":1,\"indexed\":1,\"polls\":50"), "%s", text);
	memout_close();
	memout_open();
	cr_assert_eq(catalog__print(&C, keep, "s3://b", 0, out), 0);
	text = output();
	cr_expect(strstr(text, "      150   10.0ms       1"), "%s", text);
	cr_expect(strstr(text, "(1 segment without an index"), "%s", text);
	cr_expect(strstr(text, "a poll of 10.0ms or more"), "%s", text);
}

/* Keys dated 0000-01-01 and 9999-12-31 made ls print 521,786 bucket
 * lines, and index sums wrapped at 2^64: dates are plausible ones, the
 * buckets at most 24 (and one), the sums saturate. */
Test(catalog, ls_stays_bounded_whatever_the_keys_say)
{
	struct catalog_filter f = {0};
	unsigned char keep[8];
	const char *text, *p;
	size_t lines = 0;

	cr_assert_eq(catalog__add(&C, "0000-01-01/0000/api/a/b1/1-0.d9", 10), 0);
	cr_assert_eq(catalog__add(&C, "9999-12-31/2359/api/a/b1/253402300740-0.d9", 10),
		     0);
	cr_expect_eq(C.others, 2);
	cr_assert_eq(catalog__add(&C, "2001-01-01/0000/api/a/b1/978307200-0.d9", 10), 0);
	cr_assert_eq(catalog__add(&C, "2190-12-31/2359/api/a/b1/6974121540-0.d9", 10), 0);
	catalog__sort(&C);
	cr_assert_eq(catalog__select(&C, &f, keep), 2);
	C.v[0].indexed = C.v[1].indexed = 1;
	C.v[0].ix = (struct catalog_index){.polls = UINT64_MAX - 1};
	C.v[1].ix = (struct catalog_index){.polls = 5};
	cr_assert_eq(catalog__print(&C, keep, "s3://b", 0, out), 0);
	text = output();
	for (p = text; (p = strchr(p, '\n')); p++)
		lines++;
	cr_expect_lt(lines, 40, "%zu lines", lines);
	memout_close();
	memout_open();
	cr_assert_eq(catalog__print(&C, keep, "s3://b", 1, out), 0);
	text = output();
	cr_expect(strstr(text, "\"polls\":18446744073709551615"), "%s", text);
}
