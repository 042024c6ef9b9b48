// SPDX-License-Identifier: MIT
/* lib/hist.h: quantiles exact while few, within the stated error after,
 * and the same whichever way a set is split and merged. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hist.h"

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank over sorted @v: ceil(n * num / den), 1-based */
static uint64_t rank_of(const uint64_t *v, size_t n, uint64_t num, uint64_t den)
{
	uint64_t r = (n * num + den - 1) / den;

	return v[r ? r - 1 : 0];
}

/* a duration, log-uniform from 1 ns to ~17 s */
static uint64_t duration(void)
{
	return (uint64_t)(1ull << (rand() % 34)) +
	       (uint64_t)rand() % (1ull << (rand() % 34));
}

static const uint64_t qs[][2] = {{1, 2}, {9, 10}, {99, 100}, {999, 1000}, {1, 1000}};

Test(hist, exact_while_few)
{
	struct lib_hist h;
	uint64_t v[LIB_HIST_EXACT];

	lib_hist_init(&h);
	srand(1);
	for (size_t i = 0; i < LIB_HIST_EXACT; i++) {
		v[i] = duration();
		cr_assert_eq(lib_hist_add(&h, v[i]), 0);
	}
	qsort(v, LIB_HIST_EXACT, sizeof(*v), u64_cmp);
	for (size_t k = 0; k < sizeof(qs) / sizeof(*qs); k++)
		cr_assert_eq(lib_hist_quantile(&h, qs[k][0], qs[k][1]),
			     rank_of(v, LIB_HIST_EXACT, qs[k][0], qs[k][1]), "q %lu/%lu",
			     (unsigned long)qs[k][0], (unsigned long)qs[k][1]);
	cr_assert_eq(h.min, v[0]);
	cr_assert_eq(h.max, v[LIB_HIST_EXACT - 1]);
	cr_assert_eq(lib_hist_quantile(&h, 1, 1), v[LIB_HIST_EXACT - 1]);
	lib_hist_release(&h);
}

Test(hist, within_the_stated_error_when_many)
{
	enum { N = 200000 };
	struct lib_hist h;
	uint64_t *v = malloc(N * sizeof(*v)), sum = 0;

	cr_assert_not_null(v);
	lib_hist_init(&h);
	srand(2);
	for (size_t i = 0; i < N; i++) {
		v[i] = duration();
		sum += v[i];
		cr_assert_eq(lib_hist_add(&h, v[i]), 0);
	}
	cr_assert(h.binned);
	qsort(v, N, sizeof(*v), u64_cmp);
	for (size_t k = 0; k < sizeof(qs) / sizeof(*qs); k++) {
		uint64_t want = rank_of(v, N, qs[k][0], qs[k][1]);
		uint64_t got = lib_hist_quantile(&h, qs[k][0], qs[k][1]);
		double err = want ? (double)(got > want ? got - want : want - got) /
					     (double)want
				  : (double)got;

		/* 1/256 at most: the bucket's middle */
		cr_assert_leq(err, 1.0 / 256, "q %lu/%lu: %lu for %lu",
			      (unsigned long)qs[k][0], (unsigned long)qs[k][1],
			      (unsigned long)got, (unsigned long)want);
	}
	cr_assert_eq(h.n, N);
	cr_assert_eq(h.sum, sum);
	cr_assert_eq(h.min, v[0]);
	cr_assert_eq(h.max, v[N - 1]);
	free(v);
	lib_hist_release(&h);
}

Test(hist, merged_parts_are_the_whole)
{
	enum { N = 30000 };
	struct lib_hist whole, part[3], sum;

	lib_hist_init(&whole);
	lib_hist_init(&sum);
	for (int p = 0; p < 3; p++)
		lib_hist_init(&part[p]);
	srand(3);
	for (size_t i = 0; i < N; i++) {
		uint64_t x = duration();

		/* one part small (exact), two binned */
		cr_assert_eq(lib_hist_add(&part[i % 50 ? (i & 1) + 1 : 0], x), 0);
		cr_assert_eq(lib_hist_add(&whole, x), 0);
	}
	cr_assert_not(part[0].binned);
	for (int p = 0; p < 3; p++)
		cr_assert_eq(lib_hist_merge(&sum, &part[p]), 0);
	cr_assert_eq(sum.n, whole.n);
	cr_assert_eq(sum.sum, whole.sum);
	cr_assert_eq(sum.min, whole.min);
	cr_assert_eq(sum.max, whole.max);
	for (size_t k = 0; k < sizeof(qs) / sizeof(*qs); k++)
		cr_assert_eq(lib_hist_quantile(&sum, qs[k][0], qs[k][1]),
			     lib_hist_quantile(&whole, qs[k][0], qs[k][1]));
	lib_hist_release(&whole);
	lib_hist_release(&sum);
	for (int p = 0; p < 3; p++)
		lib_hist_release(&part[p]);
}

/* a short task's one or two delays: no array, the same answers */
Test(hist, one_or_two_values_and_their_merges)
{
	struct lib_hist a, b, c;

	lib_hist_init(&a);
	lib_hist_init(&b);
	lib_hist_init(&c);
	cr_assert_eq(lib_hist_add(&a, 70), 0);
	cr_assert_null(a.exact);
	cr_assert_eq(lib_hist_quantile(&a, 1, 2), 70);
	cr_assert_eq(lib_hist_add(&a, 30), 0);
	cr_assert_null(a.exact);
	cr_assert_eq(lib_hist_quantile(&a, 1, 2), 30);
	cr_assert_eq(lib_hist_quantile(&a, 99, 100), 70);
	cr_assert_eq(lib_hist_add(&a, 50), 0);
	cr_assert_eq(lib_hist_quantile(&a, 1, 2), 50);
	cr_assert_eq(lib_hist_add(&b, 10), 0);
	cr_assert_eq(lib_hist_add(&b, 90), 0);
	cr_assert_eq(lib_hist_merge(&c, &b), 0);
	cr_assert_eq(lib_hist_merge(&c, &a), 0);
	/* 10 30 50 70 90 */
	cr_assert_eq(c.n, 5);
	cr_assert_eq(lib_hist_quantile(&c, 1, 2), 50);
	cr_assert_eq(lib_hist_quantile(&c, 1, 5), 10);
	cr_assert_eq(lib_hist_quantile(&c, 2, 5), 30);
	cr_assert_eq(c.sum, 250);
	lib_hist_release(&a);
	lib_hist_release(&b);
	lib_hist_release(&c);
}

/* a threshold that lets through at most k values, exact or binned */
Test(hist, above_lets_through_at_most_k)
{
	struct lib_hist h;
	uint64_t *v = malloc(50000 * sizeof(*v));

	cr_assert_not_null(v);
	for (size_t n = 5; n <= 50000; n *= 10) {
		lib_hist_init(&h);
		srand((unsigned int)n);
		for (size_t i = 0; i < n; i++) {
			v[i] = duration() % 1000; /* ties */
			cr_assert_eq(lib_hist_add(&h, v[i]), 0);
		}
		for (uint64_t k = 0; k < n; k += n / 5 + 1) {
			uint64_t t = lib_hist_above(&h, k), over = 0;

			for (size_t i = 0; i < n; i++)
				over += v[i] > t;
			cr_assert_leq(over, k, "n %zu k %lu: %lu over %lu", n,
				      (unsigned long)k, (unsigned long)over,
				      (unsigned long)t);
		}
		cr_assert_eq(lib_hist_above(&h, n), 0);
		lib_hist_release(&h);
	}
	free(v);
}

Test(hist, the_extremes)
{
	struct lib_hist h;

	lib_hist_init(&h);
	cr_assert_eq(lib_hist_quantile(&h, 1, 2), 0);
	for (size_t i = 0; i < 2 * LIB_HIST_EXACT; i++)
		cr_assert_eq(lib_hist_add(&h, i % 2 ? UINT64_MAX : 0), 0);
	cr_assert_eq(lib_hist_quantile(&h, 1, 1000), 0);
	cr_assert_geq(lib_hist_quantile(&h, 999, 1000), UINT64_MAX - UINT64_MAX / 256);
	cr_assert_eq(lib_hist_quantile(&h, 1, 1), UINT64_MAX);
	cr_assert_eq(lib_hist_quantile(&h, 1, 2), 0);
	lib_hist_release(&h);
	/* values under 128 stay exact binned */
	for (size_t i = 0; i < 4 * LIB_HIST_EXACT; i++)
		cr_assert_eq(lib_hist_add(&h, i % 100), 0);
	cr_assert(h.binned);
	cr_assert_eq(lib_hist_quantile(&h, 1, 2), 49);
	lib_hist_release(&h);
}
