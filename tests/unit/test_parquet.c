// SPDX-License-Identifier: MIT
/* The Parquet writer (analysis/parquet.c): its contract. What it writes is
 * read back by a real reader, DuckDB, in tests/e2e/tables.sh. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/parquet.h"

TestSuite(parquet);

static const struct pq_column cols[] = {
	{"id", PQ_INT64, 0},
	{"name", PQ_STRING, 1},
	{"ok", PQ_BOOL, 0},
	{"frames", PQ_STRINGS, 0},
};

struct mem {
	char *p;
	size_t n;
	FILE *f;
};

static struct pq_table *open_table(struct mem *m)
{
	struct pq_table *t;

	m->f = open_memstream(&m->p, &m->n);
	cr_assert(m->f);
	cr_assert_eq(pq__new(m->f, cols, 4, "test", &t), 0);
	return t;
}

static void close_mem(struct mem *m)
{
	fclose(m->f);
	free(m->p);
}

static int row(struct pq_table *t, int64_t id, const char *name)
{
	pq_i64(t, 0, id);
	pq_str(t, 1, name, name ? strlen(name) : 0);
	pq_bool(t, 2, id & 1);
	pq_item(t, 3, "main", 4);
	pq_item(t, 3, "run", 3);
	return pq_row_end(t);
}

Test(parquet, a_file_is_magic_groups_footer_length_magic)
{
	struct mem m;
	struct pq_table *t = open_table(&m);
	uint32_t flen;

	for (int i = 0; i < 1000; i++)
		cr_assert_eq(row(t, i, i % 3 ? "a" : NULL), 0);
	cr_assert_eq(pq_rows(t), 1000);
	cr_assert_eq(pq__finish(t), 0);
	pq__free(t);
	fflush(m.f);
	cr_assert_gt(m.n, 12);
	cr_assert_eq(memcmp(m.p, "PAR1", 4), 0);
	cr_assert_eq(memcmp(m.p + m.n - 4, "PAR1", 4), 0);
	memcpy(&flen, m.p + m.n - 8, 4); /* little-endian, as x86 */
	cr_assert_lt(flen, m.n - 12);
	/* the footer names the columns, the list's levels and the writer */
	cr_assert(memmem(m.p + m.n - 8 - flen, flen, "frames", 6));
	cr_assert(memmem(m.p + m.n - 8 - flen, flen, "element", 7));
	cr_assert(memmem(m.p + m.n - 8 - flen, flen, "test", 4));
	close_mem(&m);
}

Test(parquet, a_row_short_of_a_value_or_with_two_is_refused)
{
	struct mem m;
	struct pq_table *t = open_table(&m);

	pq_i64(t, 0, 1);
	pq_str(t, 1, "x", 1);
	cr_assert_eq(pq_row_end(t), -EINVAL); /* no "ok" */
	cr_assert_eq(row(t, 2, "y"), -EINVAL, "errors are sticky");
	pq__free(t);
	close_mem(&m);

	t = open_table(&m);
	pq_i64(t, 0, 1);
	pq_i64(t, 0, 2);
	cr_assert_eq(pq_row_end(t), -EINVAL);
	pq__free(t);
	close_mem(&m);
}

Test(parquet, null_only_where_optional_and_kinds_must_match)
{
	struct mem m;
	struct pq_table *t = open_table(&m);

	pq_null(t, 0);
	cr_assert_eq(pq_row_end(t), -EINVAL);
	pq__free(t);
	close_mem(&m);

	t = open_table(&m);
	pq_str(t, 0, "1", 1);
	cr_assert_eq(pq_row_end(t), -EINVAL);
	pq__free(t);
	close_mem(&m);

	t = open_table(&m);
	pq_i64(t, 7, 1);
	cr_assert_eq(pq_row_end(t), -EINVAL, "no column 7");
	pq__free(t);
	close_mem(&m);
}

Test(parquet, an_empty_list_and_no_rows_are_tables_too)
{
	struct mem m;
	struct pq_table *t = open_table(&m);

	cr_assert_eq(pq__finish(t), 0);
	pq__free(t);
	fflush(m.f);
	cr_assert_eq(memcmp(m.p + m.n - 4, "PAR1", 4), 0);
	close_mem(&m);

	t = open_table(&m);
	pq_i64(t, 0, 1);
	pq_null(t, 1);
	pq_bool(t, 2, 0);
	cr_assert_eq(pq_row_end(t), 0);
	cr_assert_eq(pq__finish(t), 0);
	pq__free(t);
	close_mem(&m);
}

Test(parquet, bad_columns_are_refused)
{
	static const struct pq_column nullable_list[] = {{"f", PQ_STRINGS, 1}};
	static const struct pq_column bad_kind[] = {{"f", (enum pq_kind)9, 0}};
	struct pq_table *t;

	cr_assert_eq(pq__new(stdout, nullable_list, 1, NULL, &t), -EINVAL);
	cr_assert_eq(pq__new(stdout, bad_kind, 1, NULL, &t), -EINVAL);
	cr_assert_eq(pq__new(stdout, cols, 0, NULL, &t), -EINVAL);
	cr_assert_null(t);
}

Test(parquet, a_group_is_flushed_every_PQ_GROUP_ROWS_rows)
{
	struct mem m;
	struct pq_table *t = open_table(&m);
	size_t before;

	for (int i = 0; i < PQ_GROUP_ROWS - 1; i++)
		cr_assert_eq(row(t, i, "n"), 0);
	fflush(m.f);
	before = m.n;
	cr_assert_eq(row(t, 0, "n"), 0);
	fflush(m.f);
	cr_assert_gt(m.n, before + 100, "the group went out with its last row");
	cr_assert_eq(pq__finish(t), 0);
	pq__free(t);
	close_mem(&m);
}
