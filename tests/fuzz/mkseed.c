// SPDX-License-Identifier: MIT
/*
 * mkseed DIR - seed inputs for the segment fuzz target: a small, valid
 * segment layout (4 rings of 1,024 records, names, ctimer sample areas)
 * holding a few records and one sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/d9_segment.h"

#define A64(x) (((x) + 63) & ~(uint64_t)63)

int main(int argc, char **argv)
{
	struct d9_seg_hdr h;
	uint64_t rings, samples, size, words = 1024;
	uint8_t *seg;
	char path[512];
	FILE *f;

	if (argc != 2)
		return 2;
	memset(&h, 0, sizeof(h));
	h.magic = D9_SEG_MAGIC;
	h.version = D9_SEG_VERSION;
	h.hdr_size = D9_SEG_HDR_SIZE;
	h.nrings = 4;
	h.ring_events = 1024;
	h.names_count = 64;
	h.names_offset = D9_SEG_HDR_SIZE;
	h.ring_offset = A64(h.names_offset + 64 * sizeof(struct d9_name_slot));
	h.ring_stride = A64(sizeof(struct d9_ring_hdr) + 1024 * sizeof(struct d9_event));
	rings = h.ring_offset + 4 * h.ring_stride;
	h.sample_words = (uint32_t)words;
	h.sample_offset = A64(rings);
	h.sample_stride = words * 8;
	samples = h.sample_offset + 4 * h.sample_stride;
	h.wake_slots = 64;
	h.wake_offset = A64(samples);
	size = h.wake_offset + 64 * 8;
	h.seg_size = size;
	seg = calloc(1, size);
	if (!seg)
		return 1;
	memcpy(seg, &h, sizeof(h));
	{
		struct d9_ring_hdr *r = (struct d9_ring_hdr *)(seg + h.ring_offset);
		struct d9_event *ev = (struct d9_event *)(r + 1);
		uint64_t *w = (uint64_t *)(seg + h.sample_offset);

		r->state = D9_RING_LIVE;
		r->tid = 42;
		r->gen = 1;
		for (int i = 0; i < 8; i++) {
			ev[i].time = 1000 + i;
			ev[i].task = 7;
			ev[i].type = i % 2 ? D9_EV_POLL_END : D9_EV_POLL_BEGIN;
		}
		/* a span: NEW with its payload (parent 0, "req"), ENTER */
		ev[8] = (struct d9_event){
			.time = 1010, .task = 3, .type = D9_EV_SPAN_NEW, .arg = 1};
		memcpy((char *)&ev[9] + 8, "req", 4);
		ev[10] = (struct d9_event){
			.time = 1011, .task = 3, .type = D9_EV_SPAN_ENTER};
		/* lean mode's sums of task 7: 3 polls, 2 delays, two buckets */
		ev[11] = (struct d9_event){
			.time = 1012, .task = 7, .type = D9_EV_SUMMARY, .arg = 3};
		*(struct d9_sum_head *)&ev[12] = (struct d9_sum_head){.polls = 3,
								      .delays = 2,
								      .poll_total = 30,
								      .delay_total = 8,
								      .poll_max = 12,
								      .delay_max = 5};
		((uint64_t *)&ev[14])[0] = d9_sum_entry(0, 9, 3);
		((uint64_t *)&ev[14])[1] = d9_sum_entry(1, 4, 2);
		r->head = 15;
		w[0] = (uint64_t)1 << 32 | 1; /* weight 1, 1 frame */
		w[1] = 5000;
		w[2] = 7;
		w[3] = 42;
		w[4] = 0x401000;
		r->sample_head = 5;
	}
	snprintf(path, sizeof(path), "%s/valid", argv[1]);
	f = fopen(path, "w");
	if (!f || fwrite(seg, 1, size, f) != size)
		return 1;
	fclose(f);
	free(seg);
	return 0;
}
