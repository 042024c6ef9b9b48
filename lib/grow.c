// SPDX-License-Identifier: MIT
/* grow.c - arrays that grow by doubling (grow.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/grow.h"

int lib_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *np;

	if (!need)
		need = 1;
	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	np = realloc(*p, ncap * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}
