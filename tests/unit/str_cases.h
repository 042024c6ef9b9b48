/* SPDX-License-Identifier: MIT */
/*
 * str_cases.h - a table of strings and what a function of one string must
 * make of each: EXPECT_EACH(FN, CASES) checks every row of the array CASES
 * and names the row that fails.
 */
#ifndef D9_TEST_STR_CASES_H
#define D9_TEST_STR_CASES_H

#include <stddef.h>

#include <criterion/criterion.h>

struct str_case {
	const char *s;	  /* the input */
	const char *want; /* what FN(s) returns */
};

#define EXPECT_EACH(fn, cases)                                                           \
	do {                                                                             \
		for (size_t i_ = 0; i_ < sizeof(cases) / sizeof((cases)[0]); i_++)       \
			cr_assert_str_eq(fn((cases)[i_].s), (cases)[i_].want,            \
					 "%s, case %zu", #fn, i_);                       \
	} while (0)

#endif
