/* SPDX-License-Identifier: MIT */
/*
 * test_duration.c - durations as users type them (--min-poll 1ms).
 */
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "analysis/labels.h"

TestSuite(duration);

static uint64_t ok(const char *s)
{
	uint64_t ns = 12345;

	cr_assert_eq(duration_parse(s, &ns), 0, "'%s' is a duration", s);
	return ns;
}

Test(duration, reads_each_unit)
{
	cr_assert_eq(ok("100ns"), 100);
	cr_assert_eq(ok("500us"), 500000);
	cr_assert_eq(ok("500\xc2\xb5s"), 500000);
	cr_assert_eq(ok("1ms"), 1000000);
	cr_assert_eq(ok("2s"), 2000000000);
	cr_assert_eq(ok("0ms"), 0);
}

Test(duration, reads_fractions_exactly)
{
	cr_assert_eq(ok("2.5s"), 2500000000);
	cr_assert_eq(ok("0.1s"), 100000000);
	cr_assert_eq(ok("1.25ms"), 1250000);
	cr_assert_eq(ok(".5ms"), 500000);
	cr_assert_eq(ok("1.5ns"), 2, "rounds to the nearest ns");
	cr_assert_eq(ok("0.000000001s"), 1);
	cr_assert_eq(ok("1.0000000004s"), 1000000000, "past 9 digits: no finer than ns");
}

Test(duration, rejects_a_bare_number_and_unknown_units)
{
	static const char *const bad[] = {
		"5",	 "1.5",	 "",   "ms",   "1 ms", " 1ms",	 "1ms ", "-1ms",  "+1ms",
		"1e3us", "1.ms", "1m", "1sec", "1MS",  "0x10ms", "1h",	 "1.2.3s"};
	uint64_t ns = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(duration_parse(bad[i], &ns), -EINVAL, "'%s'", bad[i]);
		cr_assert_eq(ns, 7, "'%s' leaves the output alone", bad[i]);
	}
	cr_assert_eq(duration_parse(NULL, &ns), -EINVAL);
}

Test(duration, rejects_more_than_64_bits_of_ns)
{
	uint64_t ns;

	cr_assert_eq(ok("18446744073709551615ns"), UINT64_MAX);
	cr_assert_eq(duration_parse("18446744073709551616ns", &ns), -ERANGE);
	cr_assert_eq(duration_parse("18446744074s", &ns), -ERANGE);
	cr_assert_eq(duration_parse("18446744073.709551615s", &ns), 0);
	cr_assert_eq(ns, UINT64_MAX);
	cr_assert_eq(duration_parse("18446744073.709551616s", &ns), -ERANGE);
	cr_assert_eq(duration_parse("99999999999999999999999ms", &ns), -ERANGE);
}
