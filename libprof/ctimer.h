/* SPDX-License-Identifier: MIT */
/*
 * ctimer.h - the shim's in-process CPU-time sampler (internal to libprof/;
 * declared here for shim.c and the tests).
 *
 * Two files: ctimer.c holds everything that runs in signal context (the
 * handler, the frame-pointer walker, the sample write) and nothing else;
 * ctimer_arm.c holds the thread side (choosing and installing the signal,
 * creating, arming and deleting each thread's timer), called from the
 * markers' attached path and from thread release, never from the handler.
 *
 * Per-thread state lives in d9__ct. The handler reads it, and deletes its
 * own timer (clearing has_timer); the thread side changes it only with the
 * signal blocked, so the two never interleave.
 */
#ifndef D9_CTIMER_H
#define D9_CTIMER_H

#include <signal.h>
#include <stdint.h>

#include "libprof/d9_segment.h"

#define D9_HIDDEN __attribute__((visibility("hidden")))

/* si_value of our timers' signals, to tell them from anyone else's */
#define D9_CT_COOKIE 0x64397469
/* Off the known stack, frames are read with process_vm_readv within this
 * many bytes above the interrupted stack pointer. */
#define D9_CT_PROBE_WINDOW (8ULL << 20)

struct d9_ct_thread {
	uint64_t gen;		      /* request_gen applied; UINT64_MAX = none */
	uint64_t task;		      /* being polled (attached path), 0 = none */
	struct d9_seg_hdr *seg;	      /* set with words, for the handler */
	struct d9_ring_hdr *ring;     /* sample_head/tail of our slot */
	uint64_t *words;	      /* our sample area, NULL = not bound */
	uintptr_t stack_lo, stack_hi; /* this thread's stack, 0/0 unknown */
	int timer;		      /* kernel timer id, valid if has_timer */
	uint32_t tid;
	uint8_t has_timer;
	uint8_t bounds_done;
};
extern __thread struct d9_ct_thread d9__ct D9_HIDDEN
	__attribute__((tls_model("initial-exec")));

/* The signal and what was installed on it before us (for chaining). Set
 * before our handler is installed, never changed after. */
extern int d9__ct_signo D9_HIDDEN;
extern struct sigaction d9__ct_prev D9_HIDDEN;

/* Learn the calling thread's stack bounds for the handler's walk. It
 * allocates and locks (pthread_getattr_np): call it from d9_thread_start(),
 * never from the poll path. */
void d9__ctimer_thread_start(void) D9_HIDDEN;

/* ---- signal context (ctimer.c) ---- */

void d9__ctimer_handler(int sig, siginfo_t *si, void *uc) D9_HIDDEN;
/* Delete the calling thread's timer; async-signal-safe. */
void d9__ctimer_delete(struct d9_ct_thread *t) D9_HIDDEN;

/* Where a walk starts: the interrupted context. */
struct d9_fp_regs {
	uint64_t ip, fp, sp;
};

/*
 * Walk frame pointers from @regs: @ips[0] = ip, then the return address of
 * each frame, at most @max entries. Frames are read directly when sp lies
 * in the known stack [@lo, @hi), else through process_vm_readv (a bad
 * address fails the read, it never faults) within D9_CT_PROBE_WINDOW of sp.
 * Stops at a frame pointer that is misaligned, outside the readable range,
 * not above the previous one (or below sp), or at a zero return address.
 * Sets D9_SAMPLE_TRUNCATED in *@flags when @max cut the walk. Returns the
 * number of entries (at least 1 if @max > 0). Async-signal-safe.
 */
unsigned int d9__fp_walk(const struct d9_fp_regs *regs, uintptr_t lo, uintptr_t hi,
			 uint64_t *ips, unsigned int max, uint32_t *flags) D9_HIDDEN;

/* ---- thread side (ctimer_arm.c) ---- */

/* Apply the header's request to the calling thread, which owns ring @r. */
void d9__ctimer_update(struct d9_seg_hdr *h, struct d9_ring_hdr *r) D9_HIDDEN;
/* The calling thread gives its ring back: stop sampling into it. */
void d9__ctimer_thread_stop(struct d9_seg_hdr *h) D9_HIDDEN;
/* In a fork child: the parent's timers are not ours. */
void d9__ctimer_atfork_child(void) D9_HIDDEN;
/* Candidate signals for the default choice, most preferred first. */
int d9__ctimer_candidates(int *out, int max) D9_HIDDEN;

/* On the attached path of every marker: one compare of a generation. */
static inline void d9__ctimer_check(struct d9_seg_hdr *h, struct d9_ring_hdr *r)
{
	if (__builtin_expect(
		    d9__ct.gen != __atomic_load_n(&h->request_gen, __ATOMIC_ACQUIRE), 0))
		d9__ctimer_update(h, r);
}

/* The task the thread polls (0: none), for the handler (same thread: a
 * compiler barrier orders it, a relaxed store keeps TSan quiet). */
static inline void d9__ctimer_task(uint64_t task)
{
	__atomic_store_n(&d9__ct.task, task, __ATOMIC_RELAXED);
}

#endif /* D9_CTIMER_H */
