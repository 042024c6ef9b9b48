// SPDX-License-Identifier: MIT
/* libFuzzer target: the /proc/kallsyms parser and its lookups. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *k = NULL;

	if (!kallsyms__parse((const char *)data, size, &k)) {
		uint64_t off;

		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t a;

			memcpy(&a, data + i, 8);
			kallsyms__lookup(k, a, &off, NULL);
			kallsyms__lookup(k, 0xffffffff81000000ULL + a % 0x1000000, &off,
					 NULL);
		}
	}
	kallsyms__free(k);
	return 0;
}
