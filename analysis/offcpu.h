/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - off-CPU intervals joined to polls and parked time, and each
 * poll's top frame (offcpu_join.c).
 */
#ifndef D9_ANALYSIS_OFFCPU_H
#define D9_ANALYSIS_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join.h"

struct lib_json;

/*
 * Every off-CPU interval (struct trace_switch) is put in one of three
 * places by where its thread was at switch-out:
 *  - in a poll: the poll on the same tid whose [start, end] contains the
 *    switch-out time (join__poll_at). The task blocked, or was preempted,
 *    inside that poll. Its weight is the time off-CPU inside the poll:
 *    min(switch-in, poll end) - switch-out. A thread cannot end a poll
 *    while off-CPU, so the clip only bites where the poll's end was lost
 *    (open_end) or the recording stopped first.
 *  - idle: not in a poll, and the worker was parked (between TRACE_EV_PARK
 *    and TRACE_EV_UNPARK on that tid; an UNPARK with no PARK before it on
 *    that thread was parked since the shim's records start
 *    (join.events_from), the thread start or the end of a gap; a park
 *    still open at the end lasts to the recording end, one open at a
 *    gap's start ends there). A parked worker
 *    waits for work: that is not blocking. A poll wins over a park: a
 *    worker that parks inside a poll blocks its task.
 *  - in a task, not in a known poll (zero-code Tokio: the trace has no
 *    polls, the switch-out carries the task it left, read in its
 *    thread): the task's. Weight: the whole interval. A zero-code
 *    switch-out of no task of the program whose stack parks the worker
 *    (Tokio's park, or its blocking pool's wait) is idle.
 *  - no poll: none of those. Weight: the whole interval.
 * A switch-in time of 0 (still off-CPU at the end) means the recording
 * end. The recording span is counters.start_time/end_time, else the
 * earliest and latest time of any event, sample or switch.
 */
enum offcpu_where {
	OFFCPU_IN_POLL = 0,
	OFFCPU_NO_POLL = 1,
	OFFCPU_IDLE = 2,
	OFFCPU_IN_TASK = 3,
};
#define OFFCPU_WHERE 4

/* One trace switch as joined. */
struct offcpu_switch {
	uint64_t len;  /* switch-out to switch-in (or recording
			* end), ns: what --min-block compares */
	uint64_t ns;   /* weight, ns: len clipped to the poll */
	uint64_t runq; /* of ns, the part runnable, waiting for a
			* CPU: from the preemption or the wakeup
			* (trace_switch.runnable) to the end of ns;
			* 0 where the wakeup is not known */
	int32_t poll;  /* index in join.polls, -1 if none */
	int32_t task;  /* OFFCPU_IN_TASK: index in join.tasks, else -1 */
	uint8_t where; /* enum offcpu_where */
};

/* Off-CPU time of one poll. */
struct poll_offcpu {
	uint64_t ns;	       /* off-CPU ns inside the poll (weights) */
	uint64_t runq_ns;      /* the part waiting for a CPU (run queue) */
	uint64_t preempted_ns; /* the part preempted (all run queue) */
	uint32_t switches;     /* intervals that began inside it */
};

struct offcpu {
	const struct join *join;
	const struct trace *trace;
	struct offcpu_switch *sw; /* per trace switch, in file order */
	uint64_t start_time;	  /* the recording span used */
	uint64_t end_time;
	uint64_t parks;			/* parked intervals found */
	uint64_t ns[OFFCPU_WHERE];	/* total weight per enum offcpu_where */
	uint64_t runq_ns[OFFCPU_WHERE]; /* ... of which waiting for a CPU */
	int runq_split;			/* 1: wakeups were recorded, blocked and
					 * run-queue time are split; 0: only
					 * preempted time is known to be
					 * run-queue time (analysis_runq_missing()) */
	int raw_leaf;			/* OFFCPU_RAW_LEAF: views name raw
					 * leaves, not analysis_site()'s */
};

/* offcpu__new() flags */
/* name a stack by its raw leaf (the call
 * into the kernel when blocked), not by the
 * application's frame over it (--frame leaf) */
#define OFFCPU_RAW_LEAF 0x1u

/* Join @j's trace's switches to @j's polls (@j has JOIN_POLL_LIST or a
 * keep that lists switches' polls) and parked intervals. Works on
 * a trace without switches too (all zero). @j and its trace must outlive
 * the result. O((W + E) log) for W switches, E events. 0 or -ENOMEM. */
int offcpu__new(const struct join *j, unsigned int flags, struct offcpu **out);
void offcpu__free(struct offcpu *oc);

/* The off-CPU intervals of thread @tid in time order: their indices in
 * trace.switches (and offcpu.sw) in *@ix, their number returned. */
size_t offcpu__thread_switches(const struct offcpu *oc, uint32_t tid,
			       const uint32_t **ix);
/* A parked interval (the rules above): [start, end] on @tid. */
struct offcpu_park {
	uint32_t tid;
	uint64_t start, end;
};
/* Every parked interval, sorted by (tid, start), in *@parks (owned by
 * @oc); their number returned. */
size_t offcpu__parks(const struct offcpu *oc, const struct offcpu_park **parks);
/* Poll @poll's off-CPU time (all zero where it had none). O(log polls
 * with a switch); kept for those only. */
const struct poll_offcpu *offcpu__poll(const struct offcpu *oc, uint32_t poll);
/* The polls with off-CPU time in id order: from *@it = 0, 1 with the
 * next one's id and totals, then 0. */
int offcpu__next_poll(const struct offcpu *oc, size_t *it, uint32_t *poll,
		      const struct poll_offcpu **po);
/* Time thread @tid was parked within [@from, @to], ns. */
uint64_t offcpu__parked_ns(const struct offcpu *oc, uint32_t tid, uint64_t from,
			   uint64_t to);

/* NULL if @t has off-CPU intervals, else why not, from meta "offcpu" (as
 * the recorder sets it: "on", "off" for --no-offcpu, "refused..." when
 * the kernel said no), e.g. "it was recorded with --no-offcpu". A static
 * string. */
const char *offcpu_missing(const struct trace *t);

/* NULL if @t's off-CPU time splits into blocked and run-queue time (its
 * wakeups were recorded), else why not, from meta "wakeups" (a static
 * string, or the meta value itself). */
const char *analysis_runq_missing(const struct trace *t);
/* NULL if @t says who ran on the CPUs while its threads waited
 * (trace.holds: waits are charged to those threads by time); else why
 * not, and that the holder is then approximated. */
const char *analysis_runq_holders_missing(const struct trace *t);

/* Who had the CPU while a thread waited for one: "comm[tid]" (the name
 * from trace__comm(), cleaned; "?[tid]" if unnamed), "[earlier than the
 * CPU's history]" for @holder 0 (TRACE_HOLD_UNKNOWN), "[idle CPU]" and
 * "[others]" for TRACE_HOLD_IDLE and _OTHERS. Returns @buf. */
char *analysis_holder_label(const struct trace *t, uint32_t holder, char *buf,
			    size_t len);
/* Who held the CPU while switch @s waited on its run queue, as shares of
 * @runq ns (its run-queue part as a view counts it, perhaps clipped to a
 * poll), largest first, into @out (room for TRACE_MAX_HOLDS): the threads
 * that ran on its CPU meanwhile, as recorded (trace.holds), or, in a trace
 * without them, one entry: @s->holder (the thread that took the CPU at a
 * preemption, else the one that ran last before it) for all of it. The
 * count; 0 for @runq 0. */
size_t analysis_switch_holds(const struct trace *t, const struct trace_switch *s,
			     uint64_t runq, struct trace_hold *out);

enum poll_top {
	POLL_TOP_NONE = 0,	/* no samples, no off-CPU stacks */
	POLL_TOP_CPU = 1,	/* the hottest leaf of its CPU samples */
	POLL_TOP_OFFCPU = 2,	/* where it blocked longest */
	POLL_TOP_PREEMPTED = 3, /* POLL_TOP_OFFCPU, but most of that frame's
				 * off-CPU time was on the run queue
				 * (preempted, or woken and waiting for a
				 * CPU), not blocked */
};

/* The frame that says most about poll @poll, in *@frame (a frame id),
 * and the call under it in *@under (UINT32_MAX: none; site_label() names
 * the pair): if the poll was mostly blocked (blocked, i.e. not run-queue,
 * off-CPU ns over half its duration), or has off-CPU time and no samples,
 * the site (analysis_site(): the application's frame over the call into
 * the kernel) that accounts for most of its off-CPU ns; else the
 * application's frame with the most sample weight (no call under it).
 * With oc->raw_leaf, raw leaves: the leaf-most user frame of the blocked
 * stacks, the leaf of the samples. Ties go to the lower frame id. Returns
 * enum poll_top (with POLL_TOP_NONE, *@frame is untouched), or -EINVAL
 * for a bad poll. */
int offcpu__poll_top(const struct offcpu *oc, uint32_t poll, uint32_t *frame,
		     uint32_t *under);

/* ns from the recording's start (join.origin) to @t (0 before it). */
static inline uint64_t since_start(const struct offcpu *oc, uint64_t t)
{
	uint64_t o = oc->join->origin ? oc->join->origin : oc->start_time;

	return t > o ? t - o : 0;
}

/* A run-queue holder as JSON: {"pid": N, "comm": name|null}, or for the
 * idle CPU and "others" {"pid": null, "comm": "[idle CPU]"|"[others]"},
 * with "ns": *@ns added if @ns is non-NULL; null for unknown (0).
 * (offcpu_join.c) */
void analysis_holder_json(const struct trace *t, uint32_t holder, const uint64_t *ns,
			  struct lib_json *w);

#endif /* D9_ANALYSIS_OFFCPU_H */
