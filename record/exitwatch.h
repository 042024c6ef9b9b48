/* SPDX-License-Identifier: MIT */
/*
 * exitwatch.h - how a recorded process died, and when (internal to
 * record/).
 *
 * The recorder is not its target's parent, so it cannot wait for it. It
 * watches instead, without ptrace and without touching the target:
 *
 *   tracepoints  system-wide on every CPU, sharing one small ring per CPU,
 *                on CLOCK_MONOTONIC, filtered in the kernel to the rare
 *                records that can matter and in user space to the target:
 *                  signal:signal_generate  a signal that terminates by
 *                      default sent to one of its threads (who sent it, and
 *                      which: a default-fatal SIGTERM reaches the dying
 *                      threads as SIGKILL);
 *                  signal:signal_deliver   a thread taking a signal with
 *                      the default action that kills (SIGSEGV from a fault;
 *                      SIGKILL for every thread of a group exit);
 *                  syscalls:sys_enter_exit_group  the status of an exit;
 *                  sched:sched_process_exit  with group_dead: the time;
 *                  sched:sched_process_exec  (optional) an exec kills the
 *                      other threads: what came before it was no death;
 *                  oom:mark_victim  (optional) the OOM killer chose it.
 *                They need tracefs and root (or CAP_PERFMON).
 *   fallbacks    when the tracepoints cannot be opened, or saw nothing:
 *                "/proc stat"  the exit_code of /proc/PID/stat (field 52)
 *                    while the process is a zombie not yet reaped;
 *                "pidfd"  PIDFD_INFO_EXIT of its pidfd once it is reaped
 *                    (Linux >= 6.15).
 *                Neither knows the time of death or the sender.
 *
 * Functions return 0 or -errno and never print. A watch is used by one
 * thread at a time; nothing here is async-signal-safe.
 */
#ifndef D9_EXITWATCH_H
#define D9_EXITWATCH_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct exitwatch;

enum exitwatch_how {
	EXITWATCH_UNKNOWN = 0,
	EXITWATCH_EXITED,   /* exit_group(2): return from main, exit(3) */
	EXITWATCH_SIGNALED, /* killed by a signal */
};

struct exitwatch_result {
	enum exitwatch_how how;
	int status;	 /* the exit status (EXITED: 0-255) or signal (SIGNALED) */
	int core;	 /* SIGNALED: 1 if the signal's default action dumps core
			  * (the kernel tried; RLIMIT_CORE may have stopped it) */
	int oom;	 /* 1 if the OOM killer chose it (tracepoints only) */
	int code;	 /* SIGNALED by the tracepoints: the fatal signal's
			  * si_code (SI_USER kill(2), SI_TKILL, SI_KERNEL,
			  * SEGV_MAPERR...) when they saw it sent or taken, else 0 */
	pid_t sender;	 /* ... and for SI_USER/SI_TKILL/SI_QUEUE, the process
			  * that sent it; 0 otherwise */
	uint64_t time;	 /* CLOCK_MONOTONIC ns of the death: its last thread's
			  * exit (sched_process_exit, group_dead), else the
			  * fatal record; 0 if unknown (the fallbacks) */
	uint64_t lost;	 /* records lost (full rings, or past 65536 kept): with
			  * any, the tracepoints' verdict may be wrong */
	char source[32]; /* "tracepoint", "/proc stat", "pidfd"; "" if
			  * UNKNOWN */
};

/* exitwatch__open flags */
#define EXITWATCH_NO_TRACEPOINTS 0x1 /* the fallbacks only */
#define EXITWATCH_MAY_MOUNT	 0x2 /* mount tracefs if it is not (root) */

/*
 * Watch process @pid (a thread-group leader) from now on. Returns 0 with
 * *@out set, or -errno with *@out NULL: -ESRCH no such process, -EINVAL
 * @pid is not a process, -ENOMEM, -EMFILE. That the tracepoints could not
 * be opened is not an error: the watch then answers from the fallbacks,
 * exitwatch__traced() says 0 and @why says why. The events are opened
 * disabled: exitwatch__enable() starts them.
 */
int exitwatch__open(pid_t pid, unsigned int flags, struct exitwatch **out, char *why,
		    size_t whylen);
/* 1 if the tracepoints are open, 0 if only the fallbacks will answer. */
int exitwatch__traced(const struct exitwatch *ew);
/* Start the tracepoints (a no-op without them). NULL: no-op. */
void exitwatch__enable(struct exitwatch *ew);
/* The fds to poll for POLLIN, at most @max: each CPU's ring (it wakes once
 * a quarter full: call exitwatch__drain), then, last, the process's pidfd
 * (readable once it is gone: call exitwatch__result). Returns how many
 * were put in @pfd. */
unsigned int exitwatch__pollfds(const struct exitwatch *ew, struct pollfd *pfd,
				unsigned int max);
/* Read the rings and keep the target's records. Bounded by what the rings
 * hold. Call it whenever a ring wakes the caller: they also carry the
 * exits of every other process (about 120 bytes each, 16 KiB per CPU),
 * and full rings lose the target's records (counted in
 * exitwatch_result.lost). NULL: no-op. */
void exitwatch__drain(struct exitwatch *ew);
/*
 * The verdict, once the process is gone: drains, then reads the target's
 * records, else the fallbacks (which need it unreaped for /proc, or a
 * kernel with PIDFD_INFO_EXIT once reaped). 0 with @out filled (how may be
 * EXITWATCH_UNKNOWN), or -EAGAIN while the process still runs. A caller
 * that is the target's parent must not reap it before this returns, or
 * the /proc fallback has nothing to read.
 */
int exitwatch__result(struct exitwatch *ew, struct exitwatch_result *out);
/* Close everything. The last close of a tracepoint waits for RCU grace
 * periods, which a saturated machine can stretch to seconds: see
 * perf_close_later() in perf.h. NULL: no-op. */
void exitwatch__free(struct exitwatch *ew);

/* @r in words into @buf (@len bytes): "exit 3", "signal 9 (SIGKILL) by the
 * OOM killer", "signal 15 (SIGTERM) from pid 1234", "signal 11 (SIGSEGV,
 * dumps core)", "unknown". Returns @buf. */
const char *exitwatch_describe(const struct exitwatch_result *r, char *buf, size_t len);

#endif /* D9_EXITWATCH_H */
