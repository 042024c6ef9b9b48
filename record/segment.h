/* SPDX-License-Identifier: MIT */
/*
 * segment.h - the shim segment of a process, as the recorder sees it
 * (record/segment.c): found in /proc/PID/maps, verified, mapped; its lease
 * renewed, its clock converted, its recorder found.
 */
#ifndef D9_RECORD_SEGMENT_H
#define D9_RECORD_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct shim_seg;

/* Find and map the d9prof segment of @pid. Returns 0, -ENOENT when the
 * process has no segment (no shim), -EPERM when one exists but is not
 * trusted (reason in @why), or another -errno. */
int shim_seg__open(pid_t pid, struct shim_seg **out, char *why, size_t len);
/* Attach: arm the lease and set attached. */
/* Lean mode (d9_segment.h): polls written past @poll_ns, or whose wake
 * waited past @delay_ns; the rest summed. poll_ns 0: every poll written */
struct shim_lean {
	uint64_t poll_ns, delay_ns;
};
void shim_seg__attach(struct shim_seg *s, const struct shim_lean *lean);
/* Renew the lease (call at least every D9_LEASE_NS / 4). 0, or
 * -ETIMEDOUT if the shim found the lease run out and detached (the
 * recorder stalled): attach again, after draining what the rings hold. */
int shim_seg__renew(struct shim_seg *s);
/* After shim_seg__renew() returned -ETIMEDOUT: when the lease it found run
 * out ended, CLOCK_MONOTONIC ns. Markers compare their time with that
 * deadline and stop recording past it, so the shim recorded nothing from
 * then until the next attach. */
uint64_t shim_seg__lapsed_ns(const struct shim_seg *s);
/* A time read from the segment (records, samples: the shim's clock unit)
 * as CLOCK_MONOTONIC ns. Renew before draining, so that what is drained
 * lies between the last two calibration points. */
uint64_t shim_seg__ns(const struct shim_seg *s, uint64_t t);
/* The same conversion inline, for a drain's millions of records: a copy
 * of the segment's line (shim_seg__clock(), after the renew), then
 * shim_clock__ns() per time. */
struct shim_clock {
	uint64_t tsc, ns;   /* a calibration pair */
	double ns_per_tick; /* 0: the times are CLOCK_MONOTONIC ns already */
};
void shim_seg__clock(const struct shim_seg *s, struct shim_clock *c);
static inline uint64_t shim_clock__ns(const struct shim_clock *c, uint64_t t)
{
	if (c->ns_per_tick == 0)
		return t;
	return c->ns +
	       (uint64_t)(int64_t)((double)(int64_t)(t - c->tsc) * c->ns_per_tick);
}
/* @t as CLOCK_MONOTONIC ns in *@ns and 1 if that lies in [@lo, @hi], else
 * 0: the target writes the times, and one 2^52 ticks or more off the
 * line (which would overflow the conversion) is not real either. */
static inline int shim_clock__within(const struct shim_clock *c, uint64_t t, uint64_t lo,
				     uint64_t hi, uint64_t *ns)
{
	if (c->ns_per_tick != 0 && t - c->tsc + (1ULL << 52) > 1ULL << 53)
		return 0;
	*ns = shim_clock__ns(c, t);
	return *ns >= lo && *ns <= hi;
}
void shim_seg__detach(struct shim_seg *s);
void *shim_seg__base(struct shim_seg *s);
/* The layout verified at open: address rings and names only through it. */
struct d9_seg_layout;
const struct d9_seg_layout *shim_seg__layout(const struct shim_seg *s);
/* The recorder attached to the segment: a process other than the target
 * and us that maps this same segment: the one its header names if it
 * does (the target writes the header and could name any process), else
 * the first found in /proc; 0 if none. */
pid_t shim_seg__recorder(const struct shim_seg *s);
void shim_seg__close(struct shim_seg *s);

#endif /* D9_RECORD_SEGMENT_H */
