// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what the recorder does with a shim segment the target
 * controls: the header check, then, on an accepted layout, every ring's
 * owner, records, text continuations, span payloads and drop counters,
 * and every ctimer
 * sample area, as record.c and ctimer_rec.c drain them. The input is the
 * segment's first bytes; the rest of the segment repeats it. The segment
 * is as long as its header claims (the recorder maps the file's size and
 * accepts only a header that claims it), at least the header; the buffer
 * past it is poisoned, so a read beyond the mapping is a finding, and
 * only what is read is written (a rejected header costs 4 KiB, not the
 * 8 MiB buffer).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include "libprof/d9_segment.h"

#define MAX_SEG (8u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *seg;
	static uint64_t shown; /* bytes of seg not poisoned */
	static struct d9_event evbuf[4096];
	static struct d9_sample sample;
	struct d9_seg_layout l;
	uint64_t map, fill;

	if (size < sizeof(struct d9_seg_hdr))
		return 0;
	if (!seg) {
		seg = aligned_alloc(4096, MAX_SEG);
		if (!seg)
			return 0;
		ASAN_POISON_MEMORY_REGION(seg, MAX_SEG);
	}
	/* the claimed size, as the recorder's fstat would give it */
	memcpy(&map, data + offsetof(struct d9_seg_hdr, seg_size), sizeof(map));
	map = map <= MAX_SEG ? map : MAX_SEG;
	fill = map > D9_SEG_HDR_SIZE ? map : D9_SEG_HDR_SIZE;
	ASAN_UNPOISON_MEMORY_REGION(seg, fill);
	if (fill < shown)
		ASAN_POISON_MEMORY_REGION(seg + fill, shown - fill);
	shown = fill;
	for (size_t at = 0; at < fill; at += size)
		memcpy(seg + at, data, fill - at < size ? fill - at : size);
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
			char payload[D9_PAYLOAD_BYTES];
			const char *a, *b;
			uint64_t num;

			if (m > n - k - 1)
				m = (uint32_t)(n - k - 1);
			d9_event_text(&evbuf[k] + 1, m, text, sizeof(text));
			if (evbuf[k].type >= D9_EV_SPAN_NEW &&
			    evbuf[k].type <= D9_EV_EVENT &&
			    !d9_payload(&evbuf[k], m, payload, &num, &a, &b))
				(void)(strlen(a ? a : "") + strlen(b ? b : "") + num);
		}
		(void)d9_ring_drops(r);
		while (budget-- && d9_sample_take(r, words, l.sample_words, &sample))
			;
		(void)d9_sample_drops(r);
	}
	return 0;
}
