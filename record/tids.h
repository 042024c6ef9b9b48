/* SPDX-License-Identifier: MIT */
/*
 * tids.h - which thread ids are the target's (internal to record/).
 *
 * The shim's ring headers and ctimer samples name their thread, and the
 * target writes them: a tid that is none of its threads would show in
 * every view as a worker that never was. A tid is the target's when the
 * kernel said so: /proc/PID/task lists it, or perf reported the target
 * creating it (PERF_RECORD_FORK, so that a thread that came and went
 * between two drains still counts). Ids are in the target's own pid
 * namespace, as its gettid() gives them.
 *
 * Memory follows the threads the kernel reported, at most TIDS_MAX.
 */
#ifndef D9_TIDS_H
#define D9_TIDS_H

#include <stdint.h>
#include <sys/types.h>

#define TIDS_MAX (1u << 20)

struct tids;

/* For process @pid; @inner: its tids are in a pid namespace of its own
 * (symbol_inner_pid(pid) != pid). 0 or -ENOMEM. */
int tids__new(pid_t pid, int inner, struct tids **out);
void tids__free(struct tids *t);
/* The kernel reported @tid as the target's. */
void tids__add(struct tids *t, uint32_t tid);
/* 1 if @tid is a thread of the target (known, or listed in /proc now:
 * then remembered), else 0. */
int tids__is_target(struct tids *t, uint32_t tid);

#endif /* D9_TIDS_H */
