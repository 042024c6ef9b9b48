// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what the recorder does with a shim segment the target
 * controls: the header check, then, on an accepted layout, every ring's
 * owner, records, text continuations and drop counters, and every ctimer
 * sample area, as record.c and ctimer_rec.c drain them. The input is the
 * segment's first bytes; the rest of a segment-sized buffer repeats it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/d9_segment.h"

#define MAX_SEG (8u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *seg;
	static struct d9_event evbuf[4096];
	static struct d9_sample sample;
	struct d9_seg_layout l;
	struct d9_seg_hdr *h;
	uint64_t map;

	if (size < sizeof(struct d9_seg_hdr))
		return 0;
	if (!seg && !(seg = aligned_alloc(4096, MAX_SEG)))
		return 0;
	for (size_t at = 0; at < MAX_SEG; at += size)
		memcpy(seg + at, data, MAX_SEG - at < size ? MAX_SEG - at : size);
	h = (struct d9_seg_hdr *)seg;
	/* the claimed size, as the recorder's fstat would give it */
	map = h->seg_size <= MAX_SEG ? h->seg_size : MAX_SEG;
	if (d9_seg_check(seg, map, &l))
		return 0;
	for (uint32_t i = 0; i < l.nrings && i < 64; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(seg, &l, i);
		uint64_t *words = d9_layout_samples(seg, &l, i);
		char name[64], text[D9_NAME_MAX + 1];
		uint32_t tid;
		uint64_t gen;
		size_t n;
		int budget = 64;

		d9_ring_owner(r, &tid, &gen, name, sizeof(name));
		n = d9_ring_consume(r, l.ring_events, evbuf, 4096);
		for (size_t k = 0; k < n; k++) {
			uint32_t m = evbuf[k].arg;

			if (m > n - k - 1)
				m = (uint32_t)(n - k - 1);
			d9_event_text(&evbuf[k] + 1, m, text, sizeof(text));
		}
		(void)d9_ring_drops(r);
		while (budget-- && d9_sample_take(r, words, l.sample_words, &sample))
			;
		(void)d9_sample_drops(r);
	}
	return 0;
}
