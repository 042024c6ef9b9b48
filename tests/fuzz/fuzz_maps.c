// SPDX-License-Identifier: MIT
/* libFuzzer target: the /proc/PID/maps parser of the symbolizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer *s = NULL;
	char *buf = malloc(size + 1);

	/* a fresh symbolizer each time (a kept one would grow across inputs);
	 * its own maps are read at creation: most of the cost */
	if (buf && !symbolizer__new(getpid(), &s)) {
		memcpy(buf, data, size);
		buf[size] = '\0';
		symbolizer_parse_maps(s, buf, size);
	}
	symbolizer__free(s);
	free(buf);
	return 0;
}
