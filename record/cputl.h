/* SPDX-License-Identifier: MIT */
/*
 * cputl.h - what ran on each CPU (internal to record/): a timeline per CPU
 * of the threads switched in there, from the system-wide sched_switch
 * event, and the last name seen of each, so that a thread's wait on a run
 * queue is charged to the threads that ran on that CPU meanwhile, by the
 * time each ran.
 *
 * Bounded: a CPU keeps at most CPUTL_MAX switches (3 MiB; 2.6 s of a CPU
 * switching 100,000 times a second), and what cputl__prune() is told is
 * old; names are kept for the threads seen since the last prune but one.
 * Not thread-safe: the recorder's loop alone uses it.
 */
#ifndef D9_CPUTL_H
#define D9_CPUTL_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define CPUTL_MAX  (1u << 18) /* switches kept a CPU */
#define CPUTL_CPUS 4096	      /* CPUs beyond are not kept */

struct cputl;

struct cputl *cputl__new(void);
void cputl__free(struct cputl *c);

/* Thread @tid (TRACE_HOLD_IDLE for the idle task) runs on @cpu from @time
 * on, named @comm (16 bytes, maybe unterminated; NULL: no name). A time
 * before the CPU's last one is taken as that one. 0, or -ENOMEM (the
 * switch is left out: what ran is then less known, nothing else). */
int cputl__add(struct cputl *c, uint32_t cpu, uint64_t time, uint32_t tid,
	       const char *comm);

/* Forget what ran before @cut (the entry running at @cut stays) and the
 * names of threads not switched in since the previous prune. */
void cputl__prune(struct cputl *c, uint64_t cut);

/* Who ran on @cpu from @from to @to, thread @self left out, largest first
 * into @h (room for TRACE_MAX_HOLDS; past the first TRACE_MAX_HOLDS - 1
 * threads the rest is TRACE_HOLD_OTHERS); time before the CPU's oldest
 * entry is TRACE_HOLD_UNKNOWN. The holds never sum to more than @to -
 * @from. Returns their count, 0 if the CPU has no timeline. */
size_t cputl__holds(const struct cputl *c, uint32_t cpu, uint32_t self, uint64_t from,
		    uint64_t to, struct trace_hold *h);

/* The holds of one wait from @n distinct holders @v (any order) and
 * @others ns of threads past them, into @h as cputl__holds() gives them:
 * largest first, past TRACE_MAX_HOLDS - 1 threads the rest as
 * TRACE_HOLD_OTHERS. Returns their count. */
size_t cputl__pick_holds(const struct trace_hold *v, size_t n, uint64_t others,
			 struct trace_hold *h);

/* The last name seen of @tid (NUL-terminated), or NULL. */
const char *cputl__comm(const struct cputl *c, uint32_t tid);

#endif /* D9_CPUTL_H */
