/* SPDX-License-Identifier: MIT */
/*
 * shim_clock.h - the one clock of the shim. Markers and the ctimer signal
 * handler take their timestamps here and nowhere else, so that both are in
 * the unit the segment header announces (hdr->clock, see D9_CLOCK_TSC in
 * d9_segment.h). Must stay async-signal-safe: rdtsc and clock_gettime(2)
 * are.
 */
#ifndef D9_SHIM_CLOCK_H
#define D9_SHIM_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define D9_HAVE_TSC 1
#else
#define D9_HAVE_TSC 0
#endif

/* Set once, before the segment is published, by d9__clock_setup(): 1 when
 * times are raw TSC ticks. */
extern int d9__clock_tsc __attribute__((visibility("hidden")));

/* Decide the clock (the TSC if it is invariant and the kernel's
 * clocksource, unless D9PROF_CLOCK=monotonic) and return the clock id to
 * put in the segment header. Not on the poll path: reads sysfs. */
uint32_t d9__clock_setup(void) __attribute__((visibility("hidden")));

/* Now, in the segment's unit. */
static inline uint64_t d9__clock_now(void)
{
	struct timespec ts;

#if D9_HAVE_TSC
	if (__builtin_expect(d9__clock_tsc, 1))
		return __rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* D9_SHIM_CLOCK_H */
