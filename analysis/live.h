/* SPDX-License-Identifier: MIT */
/*
 * live.h - the running process's tasks as they are now, for `d9prof top`
 * (live.c).
 */
#ifndef D9_ANALYSIS_LIVE_H
#define D9_ANALYSIS_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join.h"
#include "trace/trace.h"

/*
 * `d9prof top`'s numbers: a trace writer's tap (trace_writer__set_tap(),
 * record_opts.tap) feeds what the recorder writes, as it writes it; a
 * snapshot each interval says what each task, task name or thread did in
 * it. Thread-safe: one thread feeds (the recorder's), another snapshots.
 * Memory: at most 65536 threads and as many live tasks (more are refused
 * and counted), a task forgotten LIVE_KEEP_ENDED_NS after it ended (the
 * last LIVE_KEEP_ENDED of those kept).
 */
struct live;

/* What a row is doing at the snapshot. */
enum live_state {
	LIVE_IDLE = 0,	 /* nothing pending */
	LIVE_POLLED = 1, /* being polled now (state_ns: for how long) */
	LIVE_WOKEN = 2,	 /* woken, not polled yet (state_ns: since) */
	LIVE_PARKED = 3, /* a thread parked */
	LIVE_ENDED = 4,	 /* the task ended */
};

#define LIVE_DELAY_BUCKETS 64

struct live_row {
	uint64_t id;		 /* task id (by task), tid (by thread); 0 by name */
	char name[64];		 /* the task's, the tasks', or the thread's */
	uint32_t tid;		 /* the thread polling it now, if polled */
	uint64_t task;		 /* by thread: the task it polls now */
	uint64_t ntasks;	 /* tasks in the row (by name) */
	uint64_t polls, poll_ns; /* polls that ended in the interval */
	uint64_t mean_poll_ns, max_poll_ns;
	uint64_t samples; /* CPU sample weight in its polls */
	uint64_t blocked_ns, runq_ns;
	uint64_t delay_p99_ns; /* wake-to-poll, of the polls begun in it */
	uint64_t ndelays;
	uint32_t delays_[LIVE_DELAY_BUCKETS]; /* (their histogram) */
	enum live_state state;
	uint64_t state_ns; /* (LIVE_ENDED: since its end) */
	/* its life, from its spawn (or the first event seen of it) to now
	 * or its end, summed over a name's tasks: in its polls (busy),
	 * woken and waiting for them (sched), the rest (idle); its polls */
	uint64_t life_ns, busy_ns, sched_ns, idle_ns, polls_life;
	char span[64]; /* by task: the span its polls entered last, with its
			* fields ("request req=7 route=/checkout"), "" none */
	uint64_t nzc;  /* of its tasks, zero-code ones (no polls known) */
};

/* A thread of the runtime in the interval. */
struct live_worker {
	uint32_t tid;
	char name[32];
	uint64_t poll_ns, parked_ns, blocked_ns, runq_ns;
	uint64_t samples;
	uint64_t task;	     /* polled now, 0 none */
	uint64_t in_poll_ns; /* ... for this long */
};

/* A hot stack of the task live__want_stacks() names: its addresses (leaf
 * first, at most LIVE_STACK_DEPTH) and its samples, halved at each
 * snapshot (so recent intervals weigh most). */
#define LIVE_STACKS	 5
#define LIVE_STACK_DEPTH 16
struct live_stack {
	uint64_t ips[LIVE_STACK_DEPTH];
	uint32_t n;
	uint32_t samples;
};

#define LIVE_AUTO_ENDED 20
/* Ended tasks are kept as rows this long after their end (by task), the
 * last LIVE_KEEP_ENDED at most: a short task can be selected at all */
#define LIVE_KEEP_ENDED_NS (5 * 1000000000ULL)
#define LIVE_KEEP_ENDED	   1024

/* What the recording lost so far (record_stats' counts) */
struct live_lost {
	uint64_t samples, shim, offcpu, wakeups, ctimer;
};

/* What the detectors find at a snapshot (d9prof(1), report's flags as
 * they hold now): a task pending and not woken since its last poll for
 * DELAYS_IDLE_NS (where the runtime says when tasks end: the task's
 * spawn was seen, or some task's end), or at once with no waker left
 * (where the runtime counts them: TRACE_EV_WAKER_DROP); one whose wakes in the interval
 * were mostly its own, DELAYS_SELF_MIN of them or more, its polls short;
 * a name whose live tasks (spawned while watched, not ended) number
 * DELAYS_LEAK_MIN or more and grew at each of the last LIVE_LEAK_SNAPS
 * snapshots; a task in one poll for DELAYS_NO_YIELD_NS or more (never
 * yielded). */
enum live_find_kind {
	LIVE_LOST_WAKER = 1, /* ns: since its last poll ended; a: 1 if its
			      * last waker was dropped (ns: since then) */
	LIVE_SELF_WAKES = 2, /* a: its own wakes, b: all, ns: mean poll */
	LIVE_LEAK = 3,	     /* a: the name's live tasks (task: one) */
	LIVE_NO_YIELD = 4,   /* ns: in its poll now, a: the thread */
};
#define LIVE_FINDS	8
#define LIVE_LEAK_SNAPS 4
struct live_find {
	uint32_t kind;
	uint64_t task;
	char name[64];
	uint64_t ns, a, b;
};

/* The task live__want_stacks() names, since it was named (a task's
 * detail, top's selected row): its polls' lengths (buckets as delays_),
 * and who woke it, most first: the task polling on the waking thread
 * then (task 0: none, a thread outside tasks: tid), LIVE_WAKERS at most
 * (the rest in others), and itself (a wake from its own poll). */
#define LIVE_WAKERS 5
struct live_waker {
	uint64_t task;
	uint32_t tid;
	uint64_t wakes;
};
struct live_detail {
	uint64_t task; /* 0: none named */
	uint32_t polls[LIVE_DELAY_BUCKETS];
	uint64_t npolls, poll_ns, max_poll_ns;
	struct live_waker wakers[LIVE_WAKERS];
	uint64_t nwakers, self, others;
};

/* The least ns bucket @b of a LIVE_DELAY_BUCKETS histogram holds (two
 * buckets per power of two of microseconds; its upper bound is the next
 * one's) */
uint64_t live_bucket_ns(unsigned int b);
/* The @pct-th percentile of @n values in the LIVE_DELAY_BUCKETS buckets
 * @b (delays_, live_detail.polls): the upper bound of its bucket, ns */
uint64_t live_hist_pct(const uint32_t *b, uint64_t n, unsigned int pct);

struct live_snap;
/* "name[tid]" of thread @tid of @s (its name from s->workers, cut to 24
 * columns), "[tid]" if not one of them */
const char *live_worker_named(const struct live_snap *s, uint32_t tid, char *buf,
			      size_t len);
/* What @f (of @s) says, a line into @buf: "task 7 dropped pending, not
 * woken for 2.10s since its last poll" */
const char *live_find_say(const struct live_snap *s, const struct live_find *f, char *buf,
			  size_t len);

struct live_snap {
	uint64_t time;	      /* CLOCK_MONOTONIC ns */
	uint64_t interval_ns; /* since the last snapshot (0: the first) */
	double period_ns;     /* a sample's worth */
	enum group_by by;     /* the rows' (GROUP_AUTO asked: chosen) */
	int auto_by;	      /* ... chosen so: by task, by name once
			       * LIVE_AUTO_ENDED tasks ended in a frame */
	struct live_row *rows;
	size_t nrows;
	struct live_worker *workers;
	size_t nworkers;
	uint64_t samples;	  /* CPU samples that came in it */
	uint64_t inside, outside; /* ... placed in it: in a poll (a
				   * task), or in none */
	struct live_lost lost;	  /* live__set_lost()'s */
	uint64_t refused;	  /* threads and tasks not kept */
	uint64_t stacks_task;	  /* whose hottest stacks follow (0: none) */
	struct live_stack stacks[LIVE_STACKS];
	size_t nstacks;			    /* hottest first */
	struct live_find finds[LIVE_FINDS]; /* the first found */
	size_t nfinds;
	struct live_detail detail; /* of stacks_task */
};

/* A sample stands for @period_ns of CPU. 0 or -ENOMEM. */
int live__new(double period_ns, struct live **out);
void live__free(struct live *l);
/* The tap that feeds @l (its ctx is @l). */
const struct trace_tap *live__tap(const struct live *l);
/* Thread @tid polls @task since @begin (ns), not written yet (task 0:
 * none): record_opts.polling. */
void live__polling(struct live *l, uint32_t tid, uint64_t task, uint64_t begin,
		   uint64_t now);
/* What happened since the last snapshot (the first: since the start), at
 * @now, one row per task, task name or thread (@by; GROUP_AUTO: by task
 * until a frame shows LIVE_AUTO_ENDED tasks ended, by name from then on),
 * unsorted. 0 or -ENOMEM; live_snap_release() frees it. */
int live__snapshot(struct live *l, uint64_t now, enum group_by by, struct live_snap *out);
void live_snap_release(struct live_snap *s);
/* Feed @l (1, what live__new() does) or not (0: the tap returns at once,
 * for a recorder nobody watches; enabling again starts from nothing,
 * names too). */
void live__enable(struct live *l, int on);
/* What the viewer of @ctx (a struct live) wants of the recorder now
 * (record_opts.wants): LIVE_WANT_NAMES once after it was enabled again
 * (every task's and thread's name again), LIVE_WANT_SUMS while it is fed
 * a lean recording (the shim's sums at a viewer's pace). */
#define LIVE_WANT_NAMES 1u
#define LIVE_WANT_SUMS	2u
unsigned int live__wants(void *ctx);
/* Snapshots from now on carry the hottest stacks and the detail (struct
 * live_detail) of task @task (0: none), counted from now on. */
void live__want_stacks(struct live *l, uint64_t task);
/* The recording's losses so far, for the snapshots (the recorder's
 * progress hook: once a second) */
void live__set_lost(struct live *l, const struct live_lost *lost);
/* A snapshot as bytes for another process of this build (`d9prof top`
 * beside a recorder): *@buf (the caller frees it) of *@len bytes; 0 or
 * -ENOMEM. And back: 0, -ENOMEM, or -EBADMSG if @buf is not one of this
 * build's (its sizes, counts and enums are checked; names end inside). */
int live_snap_pack(const struct live_snap *s, void **buf, size_t *len);
int live_snap_unpack(const void *buf, size_t len, struct live_snap *s);

#endif /* D9_ANALYSIS_LIVE_H */
