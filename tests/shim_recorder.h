/* SPDX-License-Identifier: MIT */
/*
 * shim_recorder.h - for programs that act as the recorder on their own
 * segment: the shim's unit tests, its sanitizer stress programs and
 * bench_shim. Not part of any library.
 */
#ifndef D9_SHIM_RECORDER_H
#define D9_SHIM_RECORDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "libprof/shim_clock.h"

/* The verified layout of this process's own segment. */
static inline const struct d9_seg_layout *lay(void *seg)
{
	static struct d9_seg_layout l;

	if (d9_seg_check(seg, d9__segment_size(), &l))
		abort();
	return &l;
}

/* Wall time, CLOCK_MONOTONIC ns: for durations and timeouts. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleep @us microseconds (a signal may cut it short). */
static inline void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

/* For the stress programs: say the first failure of any thread on stderr,
 * "@prog: " and the printf-style rest, and set the int *@failed; later
 * failures only find it set. */
#define RECORDER_FAIL(failed, prog, ...)                                                 \
	do {                                                                             \
		if (!__atomic_exchange_n(failed, 1, __ATOMIC_RELAXED)) {                 \
			fprintf(stderr, prog ": " __VA_ARGS__);                          \
			fputc('\n', stderr);                                             \
		}                                                                        \
	} while (0)

/* Now in the segment's clock unit (the shim's clock: TSC ticks or
 * CLOCK_MONOTONIC ns), what record times and the lease are compared with. */
static inline uint64_t seg_now(void)
{
	return d9__clock_now();
}

/* A lease deadline well ahead, in the segment's unit. */
static inline uint64_t lease(void)
{
	return seg_now() + 4 * D9_LEASE_NS;
}

#endif /* D9_SHIM_RECORDER_H */
