/* SPDX-License-Identifier: MIT */
/*
 * sched_bpf.h - the BPF source of the off-CPU collector (internal to
 * record/): loads record/bpf/sched.bpf.c (CO-RE, libbpf, a skeleton made
 * at build time), keeps it to one process, and hands each record of its
 * ring buffer (record/bpf/sched.h) to the caller. The pairing of switches,
 * the wakeups and who held a CPU meanwhile happen in the kernel; see
 * record/offcpu.h for what becomes of the records.
 *
 * Needs CAP_BPF and CAP_PERFMON (or root), a kernel with BTF and
 * sched_switch's prev_state (5.18+); a seccomp filter, lockdown or an
 * older kernel refuses it, and sched_bpf__open() says why.
 */
#ifndef D9_SCHED_BPF_USER_H
#define D9_SCHED_BPF_USER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/bpf/sched.h"

struct sched_bpf;

struct sched_bpf_opts {
	pid_t pid;
	int children;		    /* also the processes it forks */
	unsigned int stack_bytes;   /* user stack per switch-out (<=
				     * SCHED_BPF_STACK_MAX) */
	int kernel;		    /* kernel chains */
	int wakeups;		    /* sched_waking: run-queue time */
	size_t ring_bytes;	    /* the ring buffer, a power of 2 of pages */
	uint64_t min_ns;	    /* 0, or send the stacks only of intervals
				     * this long (SCHED_BPF_IN_SHORT: the rest;
				     * at most SCHED_BPF_PEND_STACK of stack) */
	struct tokio_bpf_slot slot; /* read the task at each switch-out
				     * (record/bpf/tokio_tag.h; kind 0: none) */
	uint64_t tick_fn;	    /* CPU samples at the scheduler's tick
				     * (SCHED_BPF_TICK, to cb.tick): its
				     * hrtimer's function; 0 none */
	unsigned int tick_stack;    /* user stack per tick sample (<=
				     * SCHED_BPF_STACK_MAX) */
};

struct sched_bpf_cb {
	void *ctx;
	/* @o, its kernel chain @kips (@nk), user frame-pointer chain @uips
	 * (@nu) and @o->stack_len bytes of @stack: valid in the call */
	void (*out)(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		    unsigned int nk, const uint64_t *uips, unsigned int nu,
		    const void *stack);
	void (*in)(void *ctx, const struct sched_bpf_in *in);
	/* a tick's CPU sample (opts.tick), as out's */
	void (*tick)(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		     unsigned int nk, const uint64_t *uips, unsigned int nu,
		     const void *stack);
};

/* Load and attach the programs (disabled: nothing recorded before
 * sched_bpf__enable). 0, or -errno with a one-line reason in @why:
 * -EPERM/-EACCES refused (privilege, seccomp, lockdown), -ENOENT or
 * -EINVAL the kernel lacks what they need (BTF, tp_btf, prev_state). */
int sched_bpf__open(const struct sched_bpf_opts *o, const struct sched_bpf_cb *cb,
		    struct sched_bpf **out, char *why, size_t whylen);
/* The fd to poll for POLLIN: readable when the programs wake the
 * recorder (the ring a quarter full), until the next sched_bpf__drain();
 * the rest of the time the caller's own period drains the ring. */
int sched_bpf__fd(const struct sched_bpf *sb);
void sched_bpf__enable(struct sched_bpf *sb, int on);
/* Hand the records in the ring to the callbacks, at most a budget of
 * them (the recorder has other work): 0 when the ring was read empty, 1
 * when the budget ran out first (call again), or -errno. */
int sched_bpf__drain(struct sched_bpf *sb);
/* With min_ns: send the switch-outs still waiting for their switch-in
 * (threads off-CPU now) to the ring, as OUT records, once the recording
 * is disabled and the ring drained, and hand them to the callbacks (the
 * ring drained as they come). 0 (also without min_ns), or -errno. */
int sched_bpf__send_open(struct sched_bpf *sb);
/* Copy @bytes of user stack per switch-out from now on (at most the
 * stack_bytes opened with). */
void sched_bpf__set_copy(struct sched_bpf *sb, unsigned int bytes);
/* Lean mode: switch-outs carry the shim's task, read at @off from the
 * thread pointer (record/bpf/tokio_tag.h) */
void sched_bpf__set_shim(struct sched_bpf *sb, int64_t off);
/* The programs' counts so far. */
struct sched_bpf_counts {
	uint64_t lost;	    /* records the ring had no room for */
	uint64_t cut_short; /* switch-outs whose stack copy was cut to
			     * SCHED_BPF_STACK_SHORT bytes: the ring was half
			     * full */
};
void sched_bpf__counts(const struct sched_bpf *sb, struct sched_bpf_counts *c);
void sched_bpf__free(struct sched_bpf *sb);

#endif /* D9_SCHED_BPF_USER_H */
