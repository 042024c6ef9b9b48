/* SPDX-License-Identifier: MIT */
/*
 * ctimer_rec.h - the recorder side of the ctimer sampler (internal to
 * record/): asks the target's shim for per-thread CPU-time sampling
 * through the segment, and moves the shim's samples into the trace.
 *
 * Without perf_event there are no MMAP2 or COMM records: symbolization
 * relies on the recorder's periodic re-read of /proc/PID/maps, and thread
 * names on the shim's rings and /proc/PID/task/TID/comm.
 */
#ifndef D9_CTIMER_REC_H
#define D9_CTIMER_REC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ctimer_rec;
struct shim_seg;
struct symbolizer;
struct tids;
struct ustack_stats;
struct trace_writer;

/* Ask the shim of @seg (attached) for @hz samples per CPU second per
 * thread; with @sym, also for the top of the stack with each sample, which
 * the drain unwinds one step with CFI through @sym (the caller of a
 * function without its frame set up), counting in @st. A sample's thread
 * must be its area's owner and one of the target's (@tids, may be NULL:
 * any). 0 or -ENOMEM. */
int ctimer_rec__new(struct shim_seg *seg, pid_t pid, unsigned int hz,
		    struct symbolizer *sym, struct ustack_stats *st, struct tids *tids,
		    struct ctimer_rec **out);
/* Ask the shim for the timers again (an attach clears the request). */
void ctimer_rec__request(struct ctimer_rec *c);

/*
 * What the drains did; ctimer_rec__drain() adds to it.
 *
 * The target writes the sample areas, so what it may have in the trace
 * is bounded by what its sampler could have taken: a thread's timer fires
 * hz times per second of its CPU time, so an area gives at most about hz
 * samples (weights: 1 + overruns) per second of wall time, and all of
 * them together at most hz per second of the process's CPU time (the
 * kernel's count, /proc/PID/stat), each with a quarter more and a half
 * second's worth of slack (CTIMER_SLACK). What comes faster is refused,
 * taken off the area and counted, never written: a target that floods
 * its areas grows the trace and the recorder's memory no faster than a
 * busy target sampled at hz would.
 */
struct ctimer_counts {
	uint64_t samples; /* written */
	uint64_t drops;	  /* the shim dropped (area full) */
	uint64_t garbage; /* could not be real: of another thread than the
			   * area's owner, of no thread of the target,
			   * or at a time outside [lo, hi] */
	uint64_t refused; /* over the sampler's rate */
};
/* Move the pending samples into @w: at most an area's worth from each
 * per call, times converted and kept only within [@lo, @hi] (ns). 0 or
 * the writer's -errno. */
int ctimer_rec__drain(struct ctimer_rec *c, struct trace_writer *w, uint64_t lo,
		      uint64_t hi, struct ctimer_counts *n);
/* What the shim made of the request: 0 while fine (or not answered yet),
 * -EBUSY (no free signal), or the shim's -errno; a reason in @why. Sets
 * *@threads to the threads sampling now. */
int ctimer_rec__status(struct ctimer_rec *c, unsigned int *threads, char *why,
		       size_t len);
/* The signal the shim samples with, 0 if none yet. */
int ctimer_rec__signal(const struct ctimer_rec *c);
void ctimer_rec__free(struct ctimer_rec *c);

/* Name threads again as their samples come (a new trace segment). */
void ctimer_rec__forget_names(struct ctimer_rec *c);

#endif /* D9_CTIMER_REC_H */
