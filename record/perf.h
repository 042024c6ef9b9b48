/* SPDX-License-Identifier: MIT */
/*
 * perf.h - per-thread sampling perf_events of one process (internal to
 * record/).
 *
 * Events on every thread that exists at attach time (one per CPU, sharing a
 * ring per CPU), opened with inherit so
 * that threads they create later are sampled too (an inherited event writes
 * into its parent's ring buffer). Samples carry IP, TID, TIME
 * (CLOCK_MONOTONIC through use_clockid), PERIOD and the kernel-unwound
 * callchain; COMM, FORK/EXIT and MMAP2 records come along.
 */
#ifndef D9_PERF_H
#define D9_PERF_H

#include <stdint.h>
#include <sys/types.h>

#include "record/pfm_event.h"

struct perf_set;

struct perf_sample {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t period;
	uint64_t nr;		/* callchain length, context markers included */
	const uint64_t *ips;
};

struct perf_callbacks {
	void *ctx;
	void (*sample)(void *ctx, const struct perf_sample *s);
	void (*comm)(void *ctx, uint32_t tid, const char *comm);
	void (*fork)(void *ctx, uint32_t tid);
	void (*mmap)(void *ctx, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t prot, const char *path);
	void (*lost)(void *ctx, uint64_t lost);
};

/* A set sampling @ev at @freq Hz with kernel callchains unless
 * @exclude_kernel. */
struct perf_set *perf_set__new(const struct event_spec *ev, unsigned int freq,
			       int exclude_kernel);
/* Open the event on thread @tid. 0 or -errno from perf_event_open/mmap;
 * -EEXIST if @tid already has one. */
int perf_set__add_thread(struct perf_set *ps, pid_t tid);
/* Threads with an event of their own. */
unsigned int perf_set__nthreads(const struct perf_set *ps);
/* Read every ring, calling @cb per record. Returns records read. */
uint64_t perf_set__drain(struct perf_set *ps, const struct perf_callbacks *cb);
void perf_set__free(struct perf_set *ps);

#endif /* D9_PERF_H */
