// SPDX-License-Identifier: MIT
/* lib/grow.h: the one way arrays grow. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/grow.h"

Test(grow, an_empty_array_is_allocated_and_doubles)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	cr_assert_eq(LIB_GROW(v, cap, 0), 0);
	cr_assert_not_null(v, "grown, even for nothing: indexable when empty");
	cr_assert_eq(cap, 16);
	v[15] = 7;
	cr_assert_eq(LIB_GROW(v, cap, 16), 0);
	cr_assert_eq(cap, 16, "enough: no change");
	cr_assert_eq(LIB_GROW(v, cap, 17), 0);
	cr_assert_eq(cap, 32);
	cr_assert_eq(v[15], 7, "the elements stay");
	cr_assert_eq(LIB_GROW(v, cap, 1000), 0);
	cr_assert_eq(cap, 1024);
	free(v);
}

Test(grow, overflow_fails_and_leaves_the_array)
{
	uint64_t *v = NULL, *was;
	size_t cap = 0;

	cr_assert_eq(LIB_GROW(v, cap, 4), 0);
	was = v;
	cr_assert_eq(LIB_GROW(v, cap, SIZE_MAX / 4), -ENOMEM,
		     "elements * size overflows");
	cr_assert_eq(LIB_GROW(v, cap, SIZE_MAX), -ENOMEM, "the count overflows doubling");
	cr_assert_eq(v, was);
	cr_assert_eq(cap, 16);
	free(v);
}
