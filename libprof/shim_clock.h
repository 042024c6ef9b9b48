/* SPDX-License-Identifier: MIT */
/*
 * shim_clock.h - the one clock of the shim. Markers and the ctimer signal
 * handler take their timestamps here and nowhere else, so a change of clock
 * source changes both (and the header's `clock` field) at once. Must stay
 * async-signal-safe: clock_gettime(2) is.
 */
#ifndef D9_SHIM_CLOCK_H
#define D9_SHIM_CLOCK_H

#include <stdint.h>
#include <time.h>

#define D9_SHIM_CLOCK CLOCK_MONOTONIC

static inline uint64_t d9__clock_ns(void)
{
	struct timespec ts;

	clock_gettime(D9_SHIM_CLOCK, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* D9_SHIM_CLOCK_H */
