// SPDX-License-Identifier: MIT
/* analysis/views/export_parquet.c: the polls and delays tables are written
 * from one streamed walk, the spans as they are done; where the walk or
 * the replay starts over (a record late in the file) every table is
 * written once all the same, each row once. */
#include <errno.h>

#include "analysis/views.h"
#include "tests/unit/view_fixture.h"

#define MS 1000000ULL
#define US 1000ULL

TestSuite(export_parquet, .init = setup, .fini = teardown);

/* the files in memory, two open at once at most (polls and delays);
 * those closed whole are counted, and those removed */
struct files {
	struct slot {
		FILE *f;
		char *buf;
		size_t len;
	} v[2];
	unsigned int kept, dropped;
};

static FILE *mem_open(void *ctx, const char *rel)
{
	struct files *m = ctx;
	struct slot *s = !m->v[0].f ? &m->v[0] : !m->v[1].f ? &m->v[1] : NULL;

	(void)rel;
	cr_assert(s, "a third file open at once: %s", rel);
	s->f = open_memstream(&s->buf, &s->len);
	return s->f;
}

static int mem_close(void *ctx, FILE *f, int err)
{
	struct files *m = ctx;
	struct slot *s = m->v[0].f == f ? &m->v[0] : &m->v[1];

	cr_assert_eq(s->f, f);
	fclose(f);
	free(s->buf);
	*s = (struct slot){0};
	m->kept += !err;
	m->dropped += !!err;
	return 0;
}

/* @n polls a task of three, each woken 20 us before, on two threads; with
 * @late, the last one's records come at the end of the file, 2 s after
 * later ones: past what a streamed join and the delays' replay hold */
static void polls(size_t n, int late)
{
	uint64_t t0 = 10 * MS, w;

	for (uint64_t k = 1; k <= 3; k++)
		sy_task(&T, k, "t");
	for (size_t i = 0; i < n; i++) {
		uint64_t s = t0 + i * 1 * MS;

		if (late && i == 2)
			continue;
		sy_event(&T, s - 20 * US, 10, TRACE_EV_WAKE, i % 3 + 1);
		sy_poll(&T, 20 + (uint32_t)(i % 2), i % 3 + 1, s, s + 100 * US);
	}
	if (late) {
		w = t0 + 2 * MS;
		sy_event(&T, w - 20 * US, 10, TRACE_EV_WAKE, 3);
		sy_poll(&T, 20, 3, w, w + 100 * US);
	}
	T.counters.start_time = t0 - MS;
	T.counters.end_time = t0 + n * MS;
}

/* the export of task @task's rows (0: all), its tables kept: how many it
 * started over */
static unsigned int export(struct parquet_result *res, uint64_t task)
{
	struct files m = {0};
	struct parquet_opts o = {.open = mem_open,
				 .close = mem_close,
				 .ctx = &m,
				 .result = res,
				 .service = "s",
				 .host = "h"};

	cr_assert_eq(join__new_keep(&T, 0,
				    &(struct join_keep){.min_ns = UINT64_MAX,
							.sampled = 1,
							.switches = 1},
				    &J),
		     0);
	cr_assert_eq(offcpu__new(J, 0, &OC), 0);
	if (task)
		cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = task}), 0);
	cr_assert_eq(analysis__export_parquet(OC, &o), 0);
	cr_expect_eq(m.kept, PARQUET_TABLES, "%u tables kept", m.kept);
	return m.dropped;
}

/* the rows of the polls, delays and tasks tables */
static void expect_rows(const struct parquet_result *res, uint64_t polls, uint64_t delays,
			uint64_t tasks)
{
	cr_expect_eq(res->rows[PARQUET_POLLS], polls);
	cr_expect_eq(res->rows[PARQUET_DELAYS], delays);
	cr_expect_eq(res->rows[PARQUET_TASKS], tasks);
}

Test(export_parquet, every_poll_and_delay_once_in_order)
{
	struct parquet_result res;

	polls(3000, 0);
	cr_expect_eq(export(&res, 0), 0);
	expect_rows(&res, 3000, 3000, 3);
}

Test(export_parquet, a_late_record_starts_the_tables_over_not_twice)
{
	struct parquet_result res;

	polls(3000, 1);
	cr_expect_geq(export(&res, 0), 2, "the polls and delays tables started over");
	expect_rows(&res, 3000, 3000, 3);
}

/* --task: that task's polls and delays, the replay still seeing them all */
Test(export_parquet, a_selection_keeps_its_tasks_rows)
{
	struct parquet_result res;

	polls(3000, 0);
	cr_expect_eq(export(&res, 2), 0);
	expect_rows(&res, 1000, 1000, 1);
}
