// SPDX-License-Identifier: MIT
/* lib/search.h: the one binary search. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "lib/search.h"

static const uint64_t v[] = {10, 20, 20, 20, 30};
#define N (sizeof(v) / sizeof(v[0]))

Test(search, finds_the_first_element_at_or_above_or_above_a_key)
{
	cr_assert_eq(LIB_PARTITION_POINT(0, N, i, v[i] < 20), 1, "the first 20");
	cr_assert_eq(LIB_PARTITION_POINT(0, N, i, v[i] <= 20), 4,
		     "the 30 after the last 20");
	cr_assert_eq(LIB_PARTITION_POINT(0, N, i, v[i] < 25), 4, "where 25 goes");
	cr_assert_eq(LIB_PARTITION_POINT(0, N, i, v[i] < 5), 0, "below all");
	cr_assert_eq(LIB_PARTITION_POINT(0, N, i, v[i] <= 30), N, "above all: the end");
}

Test(search, a_range_is_searched_within_its_bounds)
{
	cr_assert_eq(LIB_PARTITION_POINT(2, N, i, v[i] <= 5), 2, "its start, not 0");
	cr_assert_eq(LIB_PARTITION_POINT(1, 3, i, v[i] <= 30), 3, "its end, not N");
	cr_assert_eq(LIB_PARTITION_POINT(3, 3, i, v[i] <= 30), 3, "an empty range");
}

Test(search, every_position_of_every_key_in_a_longer_array)
{
	uint64_t w[1000];

	for (size_t k = 0; k < 1000; k++)
		w[k] = 2 * k;
	for (uint64_t key = 0; key <= 2000; key++) {
		size_t want = 0;

		while (want < 1000 && w[want] < key)
			want++;
		cr_assert_eq(LIB_PARTITION_POINT(0, 1000, i, w[i] < key), want, "key %lu",
			     (unsigned long)key);
	}
}
