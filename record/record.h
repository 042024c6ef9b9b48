/* SPDX-License-Identifier: MIT */
/*
 * record.h - the recording engine behind `d9prof record`.
 *
 * Attaches to every thread of a process (threads created later are caught
 * through perf's inherit), samples callchains with perf_event on
 * CLOCK_MONOTONIC, drains the d9prof shim's rings from the process's shared
 * segment, and writes one trace (trace/trace.h) symbolized at the end.
 *
 * The engine never prints: it reports through opts->log and returns 0 or
 * -errno, with a one-line reason in stats->why for the caller to show.
 */
#ifndef D9_RECORD_H
#define D9_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

enum record_log_level {
	RECORD_INFO = 0,	/* what the engine chose (event, sampler) */
	RECORD_WARN = 1,	/* degraded but going on */
};

struct record_opts {
	pid_t pid;			/* target process */
	double duration;		/* seconds, 0 = until stopped */
	unsigned int freq;		/* samples per second per thread */
	const char *event;		/* libpfm4 event name; NULL = default
					 * ("cycles", falling back to
					 * "cpu-clock" without a PMU) */
	int out_fd;			/* trace output, not closed */
	volatile sig_atomic_t *stop;	/* set non-zero to stop recording */
	/* Called once all perf events are open (e.g. to let a forked child
	 * exec). May be NULL. */
	void (*on_attached)(void *ctx);
	void *ctx;
	void (*log)(void *ctx, enum record_log_level lvl, const char *msg);
	const char *cmdline;		/* recorded in the trace meta; NULL =
					 * read /proc/PID/cmdline */
};

struct record_stats {
	double seconds;			/* wall time recorded */
	uint64_t samples;
	uint64_t lost_samples;		/* perf ring overflows */
	uint64_t events;		/* shim events */
	uint64_t shim_drops;		/* records the shim dropped */
	uint64_t threads;		/* threads seen */
	uint64_t frames;		/* unique addresses symbolized */
	int shim;			/* 1 if the shim segment was attached */
	int target_exited;
	char event_name[64];		/* the event actually used */
	char why[256];			/* reason, on error */
};

/* Record opts->pid until *opts->stop, opts->duration, or the target's exit.
 * Returns 0 (a complete trace was written) or -errno:
 *   -ESRCH   no such process
 *   -EPERM/-EACCES  perf_event_open refused (stats->why says what to change)
 *   -ENOENT  the event does not exist on this machine
 *   -EIO     writing the trace failed
 */
int record__run(const struct record_opts *opts, struct record_stats *stats);

/* ---- the shim segment of a process (record/segment.c) --------------- */

struct shim_seg;

/* Find and map the d9prof segment of @pid. Returns 0, -ENOENT when the
 * process has no segment (no shim), -EPERM when one exists but is not
 * trusted (reason in @why), or another -errno. */
int shim_seg__open(pid_t pid, struct shim_seg **out, char *why, size_t len);
/* Attach: arm the lease and set attached. */
void shim_seg__attach(struct shim_seg *s);
/* Renew the lease (call at least every D9_LEASE_NS / 4). */
void shim_seg__renew(struct shim_seg *s);
void shim_seg__detach(struct shim_seg *s);
void *shim_seg__base(struct shim_seg *s);
/* The layout verified at open: address rings and names only through it. */
struct d9_seg_layout;
const struct d9_seg_layout *shim_seg__layout(const struct shim_seg *s);
void shim_seg__close(struct shim_seg *s);

/* ---- helpers ---------------------------------------------------------- */

/* CLOCK_MONOTONIC now, in ns. */
uint64_t record_now_ns(void);

#endif /* D9_RECORD_H */
