// SPDX-License-Identifier: MIT
/*
 * trace_format.c - pieces of the trace format shared by the writer
 * (trace_writer.c) and the reader (trace_reader.c): the varint decoder's
 * slow path (the chunks' checksum is lib/hash.h's lib_xxh32()).
 */
#include <errno.h>
#include <stdlib.h>

#include "trace/trace_format.h"

/* ---- varints ------------------------------------------------------------ */

uint64_t trace_cursor_varint_slow(struct cursor *c)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 64 && c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		/* the 10th byte may only carry bit 63 */
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			return v;
	}
	c->err = 1;
	c->p = c->end;
	return 0;
}
