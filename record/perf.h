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
 *
 * A set opens one attr: the sampler's (perf_sampler_attr(), with
 * ustack_attr() for user stacks) or one its caller built on
 * perf_attr_init() (the off-CPU collector: a tracepoint or the
 * context-switch event, with raw data, user registers and a user stack
 * copy, and PERF_RECORD_SWITCH records; the exit watcher's tracepoints).
 */
#ifndef D9_PERF_H
#define D9_PERF_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "record/pfm_event.h"

struct perf_set;

struct perf_sample {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu; /* PERF_SAMPLE_CPU */
	uint64_t period;
	uint64_t nr; /* callchain length, context markers included */
	const uint64_t *ips;
	/* Only with the matching bit in the attr's sample_type, else 0/NULL;
	 * pointers into the ring, valid during the callback. */
	const void *raw; /* PERF_SAMPLE_RAW: the tracepoint record */
	uint32_t raw_size;
	uint64_t regs_abi;    /* PERF_SAMPLE_REGS_USER: PERF_SAMPLE_REGS_ABI_*
			       * (NONE: no user context, e.g. a kthread) */
	const uint64_t *regs; /* one per bit of sample_regs_user, in bit
			       * order */
	unsigned int nregs;
	const void *stack;   /* PERF_SAMPLE_STACK_USER: copy of the user
			      * stack from the SP in @regs up */
	uint64_t stack_size; /* valid bytes of @stack */
};

struct perf_callbacks {
	void *ctx;
	void (*sample)(void *ctx, const struct perf_sample *s);
	void (*comm)(void *ctx, uint32_t tid, const char *comm);
	void (*fork)(void *ctx, uint32_t pid, uint32_t tid); /* a new thread */
	/* PERF_RECORD_MMAP2: @dev is makedev(maj, min) of the file, @ino its
	 * inode (identify the file mapped even if its path changed) */
	void (*mmap)(void *ctx, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint64_t dev, uint64_t ino, uint32_t prot, const char *path);
	void (*lost)(void *ctx, uint64_t lost);
	/* PERF_RECORD_SWITCH (attr.context_switch): @tid switched in or
	 * @out; @preempted (kernel >= 4.17) if switched out while runnable.
	 * @time needs sample_id_all with PERF_SAMPLE_TIME (else 0). */
	void (*ctxsw)(void *ctx, uint32_t tid, uint64_t time, int out, int preempted);
};

/* Zero @a and fill what every perf_event_attr of the recorder shares: its
 * size, samples placed by thread and time (PERF_SAMPLE_TID | TIME), and
 * the trace's one clock (use_clockid, CLOCK_MONOTONIC). Callers add to
 * sample_type with |=. */
void perf_attr_init(struct perf_event_attr *a);
/* The attr of a sampler of @ev at @freq Hz (inherited, CLOCK_MONOTONIC,
 * with COMM, FORK/EXIT and MMAP2 records) with kernel callchains unless
 * @exclude_kernel, into @a; ustack_attr() adds the user registers and
 * stack. perf_set__new_attr() with 0 pages opens it. */
void perf_sampler_attr(const struct event_spec *ev, unsigned int freq, int exclude_kernel,
		       struct perf_event_attr *a);
/* A set opening @attr (copied) on every thread added, with per-CPU rings of
 * @ring_pages data pages (a power of two, halved when mlock limits
 * refuse; 0: for a sampler at attr.sample_freq, about 250 ms of samples
 * and their user stacks, 256 KiB to 4 MiB, else 256 KiB), in *@out. sample_type may hold
 * IP, TID, TIME, CPU, PERIOD, CALLCHAIN, RAW, REGS_USER and STACK_USER. 0, -EINVAL for
 * other bits or pages, -ENOMEM. */
int perf_set__new_attr(const struct perf_event_attr *attr, unsigned int ring_pages,
		       struct perf_set **out);
/* Open the event on thread @tid. 0 or -errno from perf_event_open/mmap;
 * -EEXIST if @tid already has one. */
int perf_set__add_thread(struct perf_set *ps, pid_t tid);
/* Open the event on every CPU for every task (pid -1: system-wide, which
 * needs CAP_PERFMON or kernel.perf_event_paranoid <= 0; an attr without
 * inherit). 0 or -errno of the first failure (offline CPUs skipped). */
int perf_set__add_cpus(struct perf_set *ps);
/* Open the set's attr with @config instead (another tracepoint's id) on
 * every CPU for every task, into the same per-CPU rings, with its own
 * tracepoint @filter (NULL: none). Its samples come through the same
 * callbacks: a raw record starts with its tracepoint's id (common_type).
 * 0, or -errno (nothing of it left open). */
int perf_set__add_cpus_config(struct perf_set *ps, uint64_t config, const char *filter);
/* Set the tracepoint filter @filter (ftrace syntax) on every event of the
 * set. 0 or -errno of the first refusal. */
int perf_set__set_filter(struct perf_set *ps, const char *filter);
/* Open events on every thread of process @pid, rescanning /proc/PID/task
 * until a scan finds no thread without one: threads created mid-scan are
 * caught by the scan or inherit from a thread that had its event already.
 * @added (may be NULL) is told of each new thread. Returns the number of
 * threads, or -errno of the first failure (-ESRCH: no thread at all). */
int perf_set__add_process(struct perf_set *ps, pid_t pid,
			  void (*added)(void *ctx, pid_t tid), void *ctx);
/* Run the BPF program @prog_fd (BPF_PROG_TYPE_PERF_EVENT) at every
 * sample of every event of the set, those opened later too (and, through
 * inherit, their copies in threads created later): it sees the sample as
 * it is taken, and perf writes it as before where it returns 1. The
 * caller keeps @prog_fd open as long as the set; set it before the first
 * event opens, or a thread the target starts meanwhile inherits an event
 * without it. 0 or -errno of the first refusal (then some events may have
 * it); an event opened later that refuses it opens all the same: */
int perf_set__set_bpf(struct perf_set *ps, int prog_fd);
/* ... the first such refusal, -errno, or 0 */
int perf_set__bpf_err(const struct perf_set *ps);
/* Threads with an event of their own. */
unsigned int perf_set__nthreads(const struct perf_set *ps);
/* Read every ring, calling @cb per record. Returns records read. */
uint64_t perf_set__drain(struct perf_set *ps, const struct perf_callbacks *cb);
/* The fd of each CPU's ring, for poll(POLLIN): it wakes once a quarter of
 * the ring is written (attr.watermark). Returns how many were put in
 * @pfd (at most @max; none for a NULL set). */
unsigned int perf_set__pollfds(const struct perf_set *ps, struct pollfd *pfd,
			       unsigned int max);
/* Events are opened disabled, so that none fires before the recorder is
 * ready to drain; this starts every event of the set (and its inherited
 * copies), and those opened later start enabled. NULL is a no-op. */
void perf_set__enable(struct perf_set *ps);
/* Stop every event of the set (and its inherited copies) from firing: what
 * the rings hold can still be drained. NULL is a no-op. */
void perf_set__disable(struct perf_set *ps);
void perf_set__free(struct perf_set *ps);

/*
 * Closing the last event on a tracepoint waits for RCU grace periods
 * (tracepoint_synchronize_unregister()). On a machine saturated by the
 * target's threads the grace-period kthreads starve: one such close took
 * 1 to 5 s here under 400 busy threads. perf_close_later() forks a process
 * that forks the closer (reparented to init, its own process group) and
 * exits; the closer shares every fd open at the fork (stdio let go at
 * once), waits until the go fd is closed, then closes them all, waiting
 * out the grace periods in the background. The caller does not wait
 * for either: on a busy machine each needs a CPU first. So: disable the
 * events (perf_set__disable), call this, close your own copies (fast: not
 * the last ones), then perf_close_go(), which closes the go fd and reaps
 * the first child (gone by then, as a rule). 0, or -errno (then close
 * synchronously; @c is then a no-op for perf_close_go).
 */
struct perf_closer {
	int go;	   /* the write end the closer waits on; -1: none */
	pid_t pid; /* the first child, to reap; 0: none */
};

int perf_close_later(struct perf_closer *c);
void perf_close_go(struct perf_closer *c);

#endif /* D9_PERF_H */
