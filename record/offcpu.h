/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - the off-CPU collector of `d9prof record` (internal to
 * record/).
 *
 * One event per (thread, CPU) of the target, inherited by threads created
 * later, sharing a ring per CPU (record/perf.h), on CLOCK_MONOTONIC:
 *
 *   tracepoint      sched:sched_switch, PERF_SAMPLE_RAW for prev_state
 *                   (field found in the tracepoint's format file);
 *   context-switch  the PERF_COUNT_SW_CONTEXT_SWITCHES software event,
 *                   for machines without tracefs.
 *
 * Either fires in the task's context as it switches out, with the kernel
 * callchain, the user registers and a copy of the top of the user stack;
 * attr.context_switch adds PERF_RECORD_SWITCH records, which give the
 * switch-in time (and, for the software event, preempted vs blocked). The
 * user part of the stack is unwound with CFI over the copy
 * (symbolizer__unwind) and joined to the kernel's frame-pointer chain, so
 * that the application frame that called into libc survives.
 *
 * When each thread became runnable again comes from the sched_waking
 * tracepoint (sched_wakeup on kernels without it) on every CPU: a wakeup
 * fires in the waker's context, which the target's per-thread events do
 * not see (this kernel does not hand it to the woken thread's events).
 * Who had the CPU while a thread waited for one: for a preemption, the
 * thread that took it (sched_switch's next_pid); after a wakeup, the
 * thread that ran before it on that CPU, from sched_switch on every CPU.
 * Both system-wide events are filtered in the kernel to ranges of the
 * target's tids (the last range open, for threads created later), and
 * need root or CAP_PERFMON: without them off-CPU time is recorded whole,
 * blocked and run-queue time not split (st->wake_why says why).
 *
 * The BPF source (record/sched_bpf.h, chosen by default where the kernel
 * allows it) does the same in the kernel: switches and wakeups kept to
 * the target's threads, intervals paired and holders summed there; only
 * the target's switch-outs (with the same stacks) and switch-ins reach
 * user space, through one ring, with no per-thread events.
 *
 * Each completed interval becomes one struct trace_switch. Records of one
 * thread can sit in different CPU rings (out on one CPU, in on another), so
 * events are kept per thread in time order and paired only once every ring
 * has been read past them.
 */
#ifndef D9_OFFCPU_H
#define D9_OFFCPU_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/bpf/tokio_tag.h"
#include "record/ustack.h"

struct symbolizer;
struct trace_writer;
struct offcpu_rec;
struct sched_bpf_out;

enum offcpu_rec_source {
	OFFCPU_REC_AUTO, /* the tracepoint, else the software event */
	OFFCPU_REC_TRACEPOINT,
	OFFCPU_REC_SWITCH,
};

/* Where the scheduler events come from. */
enum offcpu_rec_sched {
	OFFCPU_SCHED_AUTO, /* BPF where the kernel allows it, else perf */
	OFFCPU_SCHED_BPF,  /* record/sched_bpf.h only */
	OFFCPU_SCHED_PERF, /* perf_event only (the source below) */
};

/* Default bytes of user stack copied per switch: the distance from the SP
 * at a syscall to the first frame-pointer frame is a few hundred bytes in
 * glibc's blocking calls; the rest is headroom for deeper library code. */
#define OFFCPU_STACK_DEFAULT 8192
#define OFFCPU_STACK_MAX     32768

struct offcpu_rec_opts {
	enum offcpu_rec_sched sched;
	enum offcpu_rec_source source; /* the perf_event source */
	unsigned int stack_bytes;      /* user stack copy per switch, a multiple
					* of 8 up to OFFCPU_STACK_MAX; 0: no
					* copy, frame pointers only */
	int exclude_kernel;	       /* no kernel callchains */
	int may_mount;		       /* mount tracefs if it is not mounted */
	int wakeups;		       /* also record wakeups (run-queue time) */
	int children;		       /* also forked children's switches */
	uint64_t min_ns;	       /* 0, or intervals shorter than this are
					* written without their stacks (the
					* frame TRACE_SYM_NOT_KEPT): on the BPF
					* path those never leave the kernel */
	struct tokio_bpf_slot slot;    /* zero-code Tokio: where a thread keeps
					* its task (kind 0: none); the BPF path
					* reads it at each switch-out ... */
	/* ... and this makes of Tokio's id @raw, seen on the interval's stack
	 * @stack, its trace_switch.task (record/tokio_rec.h) */
	uint64_t (*task)(void *ctx, uint64_t raw, uint32_t stack);
	void *task_ctx;
	/* --sampler tick: CPU samples at the scheduler's tick, taken by the
	 * BPF programs (so only with them: no perf_event fallback), each
	 * given to @tick (and @task_ctx) with its kernel chain from the interrupted frame
	 * (the tick's own frames left out) and @tick_stack bytes of user
	 * stack at most */
	void (*tick)(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		     unsigned int nk, const uint64_t *uips, unsigned int nu,
		     const void *stack);
	unsigned int tick_stack;
};

struct offcpu_rec_stats {
	uint64_t switches;	    /* intervals written */
	uint64_t not_kept;	    /* ... of which under min_ns, no stacks */
	uint64_t tasked;	    /* ... with the task they left (zero-code
				     * Tokio, opts.slot) */
	uint64_t blocked;	    /* ... of which the thread had blocked */
	uint64_t preempted;	    /* ... was preempted while runnable */
	uint64_t open_at_end;	    /* ... still off-CPU at the end (time_in 0) */
	uint64_t unpaired;	    /* switch-outs whose switch-in was lost */
	uint64_t unseen_in;	    /* ... whose switch-in the kernel did not
				     * report (BPF; not in unpaired) */
	uint64_t lost;		    /* records lost to full rings */
	uint64_t cut_short;	    /* stack copies cut short, the ring half
				     * full (BPF) */
	unsigned int copy_min;	    /* the smallest stack copy the BPF path
				     * adapted to (0: none) */
	uint64_t runnable;	    /* intervals with a known run-queue part */
	uint64_t runq_ns;	    /* ... its total */
	uint64_t held_ns;	    /* ... of which charged to what ran on its
				     * CPU meanwhile (the switch timeline) */
	char holders[32];	    /* "sched:sched_switch": the CPUs' timelines
				     * were recorded; "" if not */
	char holders_why[256];	    /* why not */
	uint64_t wake_lost;	    /* wakeup/switch-in records lost */
	char wake_source[32];	    /* "sched:sched_waking", "" if not recorded */
	char wake_why[256];	    /* why wakeups are not recorded */
	struct ustack_stats ustack; /* the user stacks of switch-outs */
	const char *source;	    /* "bpf", "tracepoint" or "context-switch" */
	char bpf_why[256];	    /* why auto did not take BPF */
	char tracefs[128];	    /* tracefs used, "" for the software event */
	int mounted_tracefs;	    /* 1 if this collector mounted it */
	char fallback_why[256];	    /* why auto fell back to the software event */
};

/* Open the collector on every thread of @pid (threads created later are
 * inherited). Samples are written through @w; user stacks unwound with
 * @sym's files. Returns 0, or -errno with a one-line reason in @why:
 *   -EACCES/-EPERM  perf_event_open refused (perf_event_paranoid)
 *   -ENOENT         the forced tracepoint is unavailable (no tracefs)
 *   -ESRCH          no such process
 * @st is filled in as recording goes (and must outlive the collector). */
int offcpu_rec__open(pid_t pid, const struct offcpu_rec_opts *o, struct symbolizer *sym,
		     struct trace_writer *w, struct offcpu_rec_stats *st,
		     struct offcpu_rec **out, char *why, size_t whylen);
/* Read every ring and write the intervals that are complete. Returns the
 * first trace write error (-errno) or 0. */
int offcpu_rec__drain(struct offcpu_rec *oc);
/* The rings' fds to poll for POLLIN (perf_set__pollfds), at most @max;
 * 0 for NULL. */
unsigned int offcpu_rec__pollfds(const struct offcpu_rec *oc, struct pollfd *pfd,
				 unsigned int max);
/* Start every event (they are opened disabled), and stop them (before the
 * last drain). NULL: no-op. */
void offcpu_rec__enable(struct offcpu_rec *oc);
void offcpu_rec__disable(struct offcpu_rec *oc);
/* Read the rings a last time and write everything, intervals still open
 * with time_in = 0. 0 or -errno. */
int offcpu_rec__finish(struct offcpu_rec *oc);
void offcpu_rec__free(struct offcpu_rec *oc);

/* ---- exposed for tests ----------------------------------------------- */

/* 1 if sched_switch's prev_state @state means "still runnable" (preempted
 * or yielded): no sleep state bit set, whatever the preempt marker bit. */
int offcpu_state_is_preempted(uint64_t state);

/* Write to @w from now on (a new trace segment): the switch-outs still
 * waiting for their switch-in have their stacks interned in @w (the old
 * writer must still be alive), and holders are named again. 0 or -errno. */
int offcpu_rec__set_writer(struct offcpu_rec *oc, struct trace_writer *w);

/* Note the first interval with a run-queue wait longer than @ns (0: none)
 * since the last look: 1 and its thread, switch-in time and wait, else 0. */
void offcpu_rec__set_runq_limit(struct offcpu_rec *oc, uint64_t ns);
/* Lean mode: switch-outs carry the shim's task (its struct d9_tls at @off
 * from the thread pointer). -EOPNOTSUPP on the perf path. */
int offcpu_rec__set_shim(struct offcpu_rec *oc, int64_t off);
int offcpu_rec__runq_hit(struct offcpu_rec *oc, uint32_t *tid, uint64_t *time,
			 uint64_t *ns);

/* Forget the threads that exited and have nothing left to pair: a
 * recording that runs for days through thread churn keeps only the live
 * ones (and the wakeup filter follows at the next drain). */
void offcpu_rec__prune(struct offcpu_rec *oc);

#endif /* D9_OFFCPU_H */
