/* SPDX-License-Identifier: MIT */
/*
 * pfm_event.h - event names to perf_event type/config, through libpfm4.
 * Kept apart because libpfm4's perf_event.h and the kernel's clash.
 */
#ifndef D9_PFM_EVENT_H
#define D9_PFM_EVENT_H

#include <stdint.h>

struct event_spec {
	uint32_t type;
	uint64_t config;
	uint64_t config1;
	uint64_t config2;
	char name[64]; /* canonical name as libpfm4 reports it */
};

/* Encode @name ("cycles", "cpu-clock", "task-clock", a PMU event, ...).
 * Returns 0, -ENOENT for an event libpfm4 does not know here, or -EIO if
 * libpfm4 cannot initialise. */
int pfm_event_encode(const char *name, struct event_spec *out);

#endif /* D9_PFM_EVENT_H */
