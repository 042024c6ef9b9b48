/* SPDX-License-Identifier: MIT */
/*
 * duration.c - durations as users type them ("500us", "2.5s").
 *
 * Integer arithmetic throughout: "0.1s" must be exactly 100000000 ns, which
 * strtod() times 1e9 is not always.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "analysis/labels.h"

static const struct unit {
	const char *name;
	uint64_t ns;
} units[] = {
	{"ns", 1},	 {"us", 1000},	    {"\xc2\xb5s", 1000}, /* "µs" in UTF-8 */
	{"ms", 1000000}, {"s", 1000000000},
};

int duration_parse(const char *s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 1, mult = 0, v;
	int digits = 0, fdigits = 0;
	const char *p = s;
	size_t i;

	if (!s || !ns)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (whole > UINT64_MAX / 10 || whole * 10 > UINT64_MAX - d)
			return -ERANGE;
		whole = whole * 10 + d;
	}
	if (*p == '.') {
		/* nine digits cover a ns of a second; later ones round no
		 * further than that */
		for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
			if (fdigits < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
		if (!fdigits)
			return -EINVAL;
	}
	if (!digits && !fdigits)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(p, units[i].name))
			mult = units[i].ns;
	if (!mult)
		return -EINVAL; /* no unit, or one we do not know */
	if (whole > UINT64_MAX / mult)
		return -ERANGE;
	v = whole * mult;
	/* frac < scale <= 1e9 and mult <= 1e9: the product fits */
	frac = (frac * mult + scale / 2) / scale;
	if (v > UINT64_MAX - frac)
		return -ERANGE;
	*ns = v + frac;
	return 0;
}
