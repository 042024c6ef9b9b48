/* SPDX-License-Identifier: MIT */
/*
 * test_catalog.c - a store's keys read back as the object-store layout
 * (store/catalog.c): what is in it, what is not, the window that cuts
 * through a segment, the times --from/--to take, `d9prof ls`'s view, and
 * the keys folded as they come, in memory that does not grow with them.
 */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include <criterion/criterion.h>

#include "store/catalog.h"
#include "tests/unit/memout.h"

static struct catalog *C;

static void setup(void)
{
	C = NULL;
	memout_open();
}

static void teardown(void)
{
	memout_close();
	catalog__free(C);
}

TestSuite(catalog, .init = setup, .fini = teardown);

/* A catalog of @o (NULL: defaults) in C. */
static void make(const struct catalog_opts *o)
{
	static const struct catalog_opts none;

	cr_assert_eq(catalog__new(o ? o : &none, &C), 0);
}

/* What C prints, as text (0) or JSON (1), from the start of the output. */
static const char *shown(int json)
{
	memout_close();
	memout_open();
	cr_assert_eq(catalog__print(C, "s3://b/p", json, out), 0);
	return output();
}

/* 2026-11-26 21:40:00 UTC */
#define T0 1795729200

Test(catalog, keys_in_the_layout_and_the_others)
{
	const struct catalog_opts o = {.keys_max = 10};
	const struct catalog_obj *v;
	const struct catalog_run *r;
	struct catalog_counts n;
	size_t nv;

	make(&o);
	cr_assert_eq(catalog__add(C,
				  "2026-11-26/2140/api/host-a/1a2b3c4d/1795729205-3.d9",
				  100, "e1", NULL),
		     0);
	cr_assert_eq(catalog__add(C,
				  "fleet/2026-11-26/2141/api/host-a/1a2b3c4d/"
				  "d9prof-42-20261126-224130.data",
				  50, NULL, NULL),
		     0);
	/* not the layout: a flat file, a bad date, an epoch outside its
	 * minute, a name that is neither */
	cr_assert_eq(catalog__add(C, "1795729205-3.d9", 1, NULL, NULL), 0);
	cr_assert_eq(
		catalog__add(C, "2026-13-26/2140/api/h/b/1795729205-3.d9", 1, NULL, NULL),
		0);
	cr_assert_eq(
		catalog__add(C, "2026-11-26/2140/api/h/b/1795729305-3.d9", 1, NULL, NULL),
		0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/h/b/notes.txt", 1, NULL, NULL),
		     0);
	/* a recording's tag after the index: hex, 1 to 16 digits */
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/h/b/1795729205-3-9f3a0c.d9", 1,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/h/b/1795729205-3-xyz.d9", 1,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/h/b/1795729205-3-.d9", 1, NULL,
				  NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/h/b/1795729205-3-1-2.d9", 1,
				  NULL, NULL),
		     0);
	/* the segments' tables, beside them: counted apart */
	cr_assert_eq(catalog__add(C,
				  "polls/service=api/host=h/date=2026-11-26/"
				  "42-1795729205-3.parquet",
				  9, NULL, NULL),
		     0);
	cr_assert_eq(
		catalog__add(C,
			     "fleet/stacks/service=api/host=h/date=2026-11-26/x.parquet",
			     9, NULL, NULL),
		0);
	cr_assert_eq(catalog__add(C, "polls/service=api/x.parquet", 9, NULL, NULL), 0);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__counts(C, &n);
	cr_expect_eq(n.objects, 3);
	cr_expect_eq(n.tables, 2);
	cr_expect_eq(n.others, 8);
	cr_expect_eq(n.segments, 2);
	cr_expect_eq(n.dumps, 1);
	cr_assert_eq(catalog__runs(C, &r), 2);
	cr_expect_str_eq(r[1].service, "api");
	cr_expect_str_eq(r[1].host, "host-a");
	cr_expect_str_eq(r[1].boot, "1a2b3c4d");
	v = catalog__objects(C, &nv);
	cr_assert_eq(nv, 3);
	/* in order: service, host, boot, time */
	cr_expect_eq(v[0].wall, T0 + 5);
	cr_expect_str_eq(r[v[0].run].host, "h");
	cr_expect_eq(v[1].wall, T0 + 5);
	cr_expect_eq(v[1].dump, 0);
	cr_expect_str_eq(v[1].etag, "e1");
	cr_expect_eq(v[2].dump, 1);
	cr_expect_eq(v[2].wall, T0 + 60);
	cr_expect_eq(v[2].size, 50);
}

/* The keys of host @h (0, 1), every 60 s, 5 of them, into C. */
static void five_a_host(int hosts)
{
	char key[128];

	for (int h = 0; h < hosts; h++)
		for (int i = 0; i < 5; i++) {
			snprintf(key, sizeof(key), "2026-11-26/214%d/api/h%d/b/%d-%d.d9",
				 i, h, T0 + 60 * i, i);
			cr_assert_eq(catalog__add(C, key, 10, NULL, NULL), 0);
		}
}

/* Segments every 60 s on two hosts; a window from 21:42:30 keeps each
 * host's segment begun at 21:42 (it runs into the window), not the
 * earlier ones; one from 21:42:00 does not keep the one before. */
Test(catalog, a_window_keeps_the_segment_that_runs_into_it)
{
	struct catalog_opts o = {.f = {.from = T0 + 150, .to = T0 + 240}, .keys_max = 16};
	const struct catalog_obj *v;
	const struct catalog_run *r;
	size_t n;

	make(&o);
	five_a_host(2);
	cr_assert_eq(catalog__finish(C), 0);
	v = catalog__objects(C, &n);
	cr_assert_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		cr_expect(v[i].wall >= T0 + 120 && v[i].wall < T0 + 240, "%s", v[i].key);
	cr_expect_eq(catalog__runs(C, &r), 2);
	cr_expect_eq(r[0].lo, T0 + 120);
	catalog__free(C);
	o.f.from = T0 + 120;
	make(&o);
	five_a_host(2);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__objects(C, &n);
	cr_expect_eq(n, 4, "the one begun at --from, not the one before it");
	catalog__free(C);
	o.f.from = T0 + 150;
	o.f.host = "h1";
	make(&o);
	five_a_host(2);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__objects(C, &n);
	cr_expect_eq(n, 2);
	catalog__free(C);
	o.f.service = "web";
	make(&o);
	five_a_host(2);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__objects(C, &n);
	cr_expect_eq(n, 0);
	cr_expect_eq(catalog__runs(C, &r), 0);
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

/* The view: one row per service/host/boot, the density, the dumps; a
 * key whose service or host the recorder would not have written (a
 * terminal escape, shell syntax: anyone with PutObject can write one)
 * counted, not read. */
Test(catalog, what_ls_shows)
{
	const char *text;

	make(NULL);
	cr_assert_eq(catalog__add(C, "2026-11-26/2140/api/a/b1/1795729200-0.d9", 1000,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2141/api/a/b1/1795729260-1.d9", 3000,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2141/api/a/b1/d9prof-7-x.data", 500,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2150/w\x1b[2Jeb/z/b2/1795729800-0.d9",
				  10, NULL, NULL),
		     0);
	cr_assert_eq(
		catalog__add(C,
			     "2026-11-26/2150/api$(id>PWNED)/web-1;touch${IFS}PWNED2;#/"
			     "b2/1795729800-0.d9",
			     10, NULL, NULL),
		0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2150/api/web 1/b2/1795729800-0.d9", 10,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2150/api/../b2/1795729800-0.d9", 10,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__finish(C), 0);
	text = shown(0);
	cr_expect(strstr(text,
			 "s3://b/p: 2 segments and 1 dump (4.4 KiB) of 1 host and 1 "
			 "service, 2026-11-26 21:40 to 2026-11-26 21:41 UTC"),
		  "%s", text);
	cr_expect(strstr(text, "(and 4 keys not in the layout)"), "%s", text);
	cr_expect(!strstr(text, "PWNED"), "%s", text);
	cr_expect(strstr(text, "api                  a                    b1"), "%s",
		  text);
	cr_expect(!strchr(text, '\x1b'), "%s", text);
	cr_expect(strstr(text, "(per 1 min)"), "%s", text);
	cr_expect(strstr(text, "d9prof-7-x.data (500 B)"), "%s", text);
	text = shown(1);
	cr_expect(strstr(text, "\"service\":\"api\",\"host\":\"a\",\"boot\":\"b1\","
			       "\"segments\":2,\"dumps\":1,\"bytes\":4500"),
		  "%s", text);
	cr_expect(strstr(text, "\"bucket_seconds\":60"), "%s", text);
}

/* A host running two services, and restarted (two boots), is one host:
 * in the summary and in each bucket's HOSTS. */
Test(catalog, ls_counts_hosts_not_service_host_pairs)
{
	static const char *const keys[] = {
		"2026-11-26/2140/api/a/b1/1795729200-0.d9",
		"2026-11-26/2140/web/a/b1/1795729201-0.d9",
		"2026-11-26/2140/api/a/b2/1795729230-0.d9",
		"2026-11-26/2140/api/b/b1/1795729202-0.d9",
		"2026-11-26/2141/web/a/b1/1795729261-1.d9",
	};
	struct catalog_counts n;
	const char *text;

	make(NULL);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_eq(catalog__add(C, keys[i], 10, NULL, NULL), 0);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__counts(C, &n);
	cr_expect_eq(n.runs, 4);
	cr_expect_eq(n.hosts, 2);
	cr_expect_eq(n.services, 2);
	text = shown(0);
	cr_expect(strstr(text, "5 segments and 0 dumps (50 B) of 2 hosts and 2 services"),
		  "%s", text);
	text = shown(1);
	cr_expect(strstr(text, "\"hosts\":2,\"services\":2,"), "%s", text);
	/* 21:40: four runs of two hosts; 21:41: one */
	cr_expect(strstr(text, "\"start\":1795729200,\"segments\":4,\"dumps\":0,"
			       "\"bytes\":40,\"hosts\":2"),
		  "%s", text);
	cr_expect(strstr(text, "\"start\":1795729260,\"segments\":1,\"dumps\":0,"
			       "\"bytes\":10,\"hosts\":1"),
		  "%s", text);
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
	const struct catalog_opts o = {.flag_poll_ns = 10000000,
				       .flag_delay_ns = 5000000};
	const char *text;

	make(&o);
	/* one quiet, one with a poll of exactly the threshold, one unknown */
	cr_assert_eq(
		catalog__add(C, "2026-11-26/2140/api/a/b1/1795729200-0.d9", 1000, NULL,
			     &(struct catalog_index){.polls = 100, .max_poll_ns = 2000}),
		0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2141/api/a/b1/1795729260-1.d9", 3000,
				  NULL,
				  &(struct catalog_index){.polls = 50,
							  .max_poll_ns = 10000000,
							  .max_delay_ns = 30000}),
		     0);
	cr_assert_eq(catalog__add(C, "2026-11-26/2141/api/a/b1/1795729270-2.d9", 3000,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__finish(C), 0);
	text = shown(1);
	cr_expect(strstr(text, "\"indexed\":2,\"polls\":150,\"samples\":0,\"lost\":0,"
			       "\"max_poll_ns\":10000000,\"max_delay_ns\":30000,"
			       "\"flagged\":1"),
		  "%s", text);
	/* the second minute: one indexed, flagged */
	cr_expect(strstr(text, "\"hosts\":1,\"indexed\":1,\"polls\":50"), "%s", text);
	text = shown(0);
	cr_expect(strstr(text, "      150   10.0ms       1"), "%s", text);
	cr_expect(strstr(text, "a poll of 10.0ms or more"), "%s", text);
}

/* Keys dated 0000-01-01 and 9999-12-31 made ls print 521,786 bucket
 * lines, and index sums wrapped at 2^64: dates are plausible ones, the
 * buckets at most 24 (and one), the sums saturate. */
Test(catalog, ls_stays_bounded_whatever_the_keys_say)
{
	struct catalog_counts n;
	const char *text, *p;
	size_t lines = 0;

	make(NULL);
	cr_assert_eq(catalog__add(C, "0000-01-01/0000/api/a/b1/1-0.d9", 10, NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "9999-12-31/2359/api/a/b1/253402300740-0.d9", 10,
				  NULL, NULL),
		     0);
	cr_assert_eq(catalog__add(C, "2001-01-01/0000/api/a/b1/978307200-0.d9", 10, NULL,
				  &(struct catalog_index){.polls = UINT64_MAX - 1}),
		     0);
	cr_assert_eq(catalog__add(C, "2190-12-31/2359/api/a/b1/6974121540-0.d9", 10, NULL,
				  &(struct catalog_index){.polls = 5}),
		     0);
	cr_assert_eq(catalog__finish(C), 0);
	catalog__counts(C, &n);
	cr_expect_eq(n.others, 2);
	cr_expect_eq(n.segments, 2);
	text = shown(0);
	for (p = text; (p = strchr(p, '\n')); p++)
		lines++;
	cr_expect_lt(lines, 40, "%zu lines", lines);
	text = shown(1);
	cr_expect(strstr(text, "\"polls\":18446744073709551615"), "%s", text);
}

/* The bytes malloc holds now. */
static size_t held(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* @hosts hosts with a segment a minute for @minutes, every key once in
 * an order that is not the time's (as a directory gives them), into C. */
static void fleet(int hosts, int minutes)
{
	size_t n = (size_t)hosts * (size_t)minutes;
	char key[160];

	/* 7919 is prime, and no divisor of n: i * 7919 % n visits each once */
	for (size_t i = 0; i < n; i++) {
		size_t k = i * 7919 % n;
		int h = (int)(k % (size_t)hosts), m = (int)(k / (size_t)hosts);
		time_t t = T0 - 40 * 60 + 60 * m + h % 50; /* from 21:00 */
		struct tm tm;
		char day[32];

		gmtime_r(&t, &tm);
		strftime(day, sizeof(day), "%Y-%m-%d/%H%M", &tm);
		snprintf(key, sizeof(key), "%s/svc%d/host-%03d/b/%lld-%d-0123456789ab.d9",
			 day, h % 3, h, (long long)t, m);
		cr_assert_eq(catalog__add(C, key, 1000,
					  "0123456789abcdef0123456789abcdef", NULL),
			     0);
	}
	cr_assert_eq(catalog__finish(C), 0);
}

/* A day of one-minute segments of 100 hosts (144,000 keys, in no time
 * order) folds into what ls shows in the memory a tenth of it takes:
 * the runs, the buckets and each run's latest segments for its index,
 * not the keys; and what it shows adds up. */
Test(catalog, a_day_of_a_fleet_folds_in_bounded_memory)
{
	const struct catalog_opts o = {.index_max = 2000};
	struct catalog_counts n;
	size_t small, large, before;
	const char *text;

	before = held();
	make(&o);
	fleet(100, 144);
	small = held() - before;
	catalog__free(C);
	C = NULL;
	before = held();
	make(&o);
	fleet(100, 1440);
	large = held() - before;
	cr_log_info("catalog of 14,400 keys: %zu bytes; of 144,000: %zu", small, large);
	cr_expect_lt(large, small + small / 4 + 64 * 1024, "%zu bytes, a tenth: %zu",
		     large, small);
	catalog__counts(C, &n);
	cr_expect_eq(n.segments, 144000);
	cr_expect_eq(n.hosts, 100);
	cr_expect_eq(n.services, 3);
	cr_expect_eq(n.runs, 100);
	text = shown(1);
	/* a day in 24 buckets of an hour, each of every host */
	cr_expect(strstr(text, "\"bucket_seconds\":3600"), "%s", text);
	for (int b = 0; b < 24; b++) {
		char want[128];

		snprintf(want, sizeof(want),
			 "{\"start\":%d,\"segments\":6000,\"dumps\":0,\"bytes\":6000000,"
			 "\"hosts\":100,",
			 T0 - 40 * 60 + 3600 * b);
		cr_expect(strstr(text, want), "%s in %.400s", want, text);
	}
}
