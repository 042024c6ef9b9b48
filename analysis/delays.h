/* SPDX-License-Identifier: MIT */
/*
 * delays.h - wake-to-poll delays, and what a thread did in an interval
 * (delays.c).
 */
#ifndef D9_ANALYSIS_DELAYS_H
#define D9_ANALYSIS_DELAYS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join.h"
#include "analysis/offcpu.h"

/*
 * A task is made ready by TRACE_EV_WAKE (or by TRACE_EV_SPAWN, for its first
 * poll) and waits until the TRACE_EV_POLL_BEGIN of it that follows, on any
 * thread, in time order. Wakes while it is ready, including wakes during
 * its own poll, merge into the first, as a runtime merges them: the
 * delay runs from the first pending wake. TRACE_EV_TASK_END forgets a
 * pending wake (the task was cancelled). A wake still pending at the end
 * of the recording that had waited at least 100 ms, and ten times the
 * task's longest delay, is a task woken and never polled again (a lost
 * wake-up); a shorter one is only counted (waiting_at_end): the recording
 * ended first. A gap (struct join_gap) forgets a wake pending before it,
 * and a task with no event after a gap is not said to be unended: its poll
 * or its end may have been in the gap.
 */
struct delay {
	uint64_t task;
	uint64_t wake;	       /* the first pending wake (or spawn), ns */
	uint64_t begin;	       /* the poll that ended the wait began */
	uint32_t waker;	       /* tid that woke (spawned) it */
	uint32_t poller;       /* tid that polled it */
	int32_t waker_poll;    /* poll running on the waker then, -1: none
				* (always -1 without JOIN_POLL_LIST or a keep;
				* see delays__list_polls()) */
	int32_t poll;	       /* the poll that ended it, -1 if unknown */
	uint32_t merged;       /* further wakes merged into it */
	uint8_t spawn;	       /* 1: made ready by its spawn */
	uint8_t dropped;       /* delays.idle: its last waker dropped at wake
				* (the runtime said so): lost for sure */
	uint8_t waker_polling; /* 1: the waker was polling a task then: */
	uint64_t waker_task;   /* ... this one (its id), else 0 */
};

/* A task that woke itself: its wakes, and those by its own polls (a
 * yield, a requeue: the thread polling it woke it) */
struct delays_self {
	uint64_t task;
	uint64_t wakes, self_wakes;
};

/* Report's, top's and the flight triggers' thresholds for what the
 * delays say of a task: no wake for DELAYS_IDLE_NS after its last poll (a
 * lost waker), more than half of its DELAYS_SELF_MIN or more wakes its own,
 * DELAYS_LEAK_MIN tasks of a name alive and more, one poll of
 * DELAYS_NO_YIELD_NS or longer (d9prof(1)) */
#define DELAYS_IDLE_NS	    (2 * 1000000000ULL)
#define DELAYS_SELF_MIN	    20
#define DELAYS_LEAK_MIN	    16
#define DELAYS_NO_YIELD_NS  (1000 * 1000000ULL)
#define DELAYS_SELF_POLL_NS (100 * 1000ULL) /* self-wakes: mean poll under */

struct delays {
	const struct join *join;
	struct delay *v; /* longest first, then by wake time: all, or what
			  * the delays_keep asked */
	size_t n;
	uint64_t matched;      /* delays of the tasks kept (join__kept()) at
				* least delays_keep.min_ns long, listed or not */
	uint64_t counted;      /* ... at least delays_keep.count_ns long */
	uint64_t min_ns;       /* delays_keep.min_ns (0: NULL) */
	uint64_t count_ns;     /* delays_keep.count_ns (0: NULL) */
	struct lib_hist *hist; /* per task (join.tasks order): its delays'
				* lengths, ns */
	struct delay *lost;    /* woken, never polled again, not ended: begin
				* = 0, poll = -1; by wake time */
	size_t nlost;
	uint64_t waiting_at_end; /* pending wakes too recent to call lost */
	struct delay *unended;	 /* spawned while recorded, never ended (wake
				  * = spawn time, waker = spawning thread);
				  * by spawn time */
	size_t nunended;
	struct delay *idle; /* polled, pending and not woken since its last
			     * poll for DELAYS_IDLE_NS or more by the end,
			     * not ended, where the trace says when tasks
			     * end (its spawn recorded, or some task's end)
			     * (wake = that poll's begin, poller its
			     * thread): a lost waker, where the runtime
			     * says nothing of its wakers; or, whatever
			     * the time, with none left (TRACE_EV_WAKER_
			     * DROP: dropped, wake = then); begin: its last
			     * poll's begin in both; by time */
	size_t nidle;
	struct delays_self *selfwoken; /* wakes mostly their own (more
					* than half of DELAYS_SELF_MIN
					* or more): most first */
	size_t nself;
	uint64_t end_time; /* the recording end: how long lost ones
			    * waited at least */
};

/* What delays__new() lists of the delays (each task's statistics, hist,
 * are of all of them): a view's answer, in memory bounded by it */
struct delays_keep {
	int stats_only;	   /* none: `tasks` */
	uint64_t min_ns;   /* those of the kept tasks at least this long */
	size_t top;	   /* ... the longest this many of them (0: all) */
	uint64_t count_ns; /* counted: those at least this long */
	int listed;	   /* and every one a poll the join lists ended
			    * (poll: its id): chrome's flows, the span
			    * table's waits (with min_ns UINT64_MAX:
			    * those only, waker_poll -1) */
	/* delays__list_polls(): the polls of these windows too */
	const struct join_window *also;
	size_t nalso;
	/* or give @each every delay of the kept tasks as the replay makes it
	 * (in begin order, poll -1 where fed), listing none; a nonzero
	 * return stops the replay with it. A feed with @each replays each
	 * batch as it is given, on the join's thread, for any selection of
	 * tasks (@each sees them all); with @at_end, only once every event
	 * is in (no event is ever late, memory is every event's). */
	int (*each)(void *ctx, const struct delay *d);
	void *each_ctx;
	int at_end;
};

/* The delays of @j's trace, replayed in one walk of its events in time
 * order (memory: each task's state, the events of half a second,
 * and what @keep lists; NULL: all of them). @j needs JOIN_POLL_LIST for
 * poll ids. 0, -ENOMEM or a walk's error. */
int delays__new(const struct join *j, const struct delays_keep *keep,
		struct delays **out);
/* The same replay, fed by the join's own walk instead of a walk of its
 * own: give the join delays_feed__events() as its keep's events with
 * the feed as their ctx, then ask delays__from_feed() once it is made.
 * It answers -EAGAIN where the feed cannot know the answer (a late
 * event, tasks a view chose, poll ids, @keep->listed or another keep
 * than the feed's): delays__new() then. The feed is freed by
 * delays_feed__free(), the delays it gave by delays__free(). */
struct delays_feed;
int delays_feed__new(const struct delays_keep *keep, struct delays_feed **out);
int delays_feed__events(void *ctx, const struct join *j, const struct trace_event *e,
			size_t n);
int delays__from_feed(struct delays_feed *f, const struct join *j,
		      const struct delays_keep *keep, struct delays **out);
/* Every event of @f's before this time is replayed (UINT64_MAX: all, at
 * the end): no delay that began before it is still to come. */
uint64_t delays_feed__replayed(const struct delays_feed *f);
/* 1 if an event came too late for @f's window: delays__from_feed() will
 * say -EAGAIN (a feed with keep.each: stop the walk, replay at_end). */
int delays_feed__late(const struct delays_feed *f);
void delays_feed__free(struct delays_feed *f);
/* With a join that lists only some polls (a keep): list those the first
 * @keep->top delays of the kept tasks (0: all) show, the poller's and
 * the waker's from the wake to the poll, and those of @keep->also, in one
 * join of the trace; then find those delays' polls again (waker_poll and
 * poll: -1 before, for a poll not listed). 0, -ENOMEM or a walk's
 * error. */
int delays__list_polls(struct delays *d, struct join *j, const struct delays_keep *keep);
/* Tasks that leak, by name (the spawn site a C runtime gives): of those
 * d->unended holds that the join keeps, DELAYS_LEAK_MIN or more of one
 * name spawned all along the recording (each quarter of it holds an
 * eighth of them), never ended. Into @out (room for @max): the name ("":
 * unnamed), its first task, how many, the first and last spawn. Returns
 * how many names (more than @max: the rest not written); 0 without
 * memory. */
struct delays_leak {
	const char *name;
	uint64_t task;
	size_t n;
	uint64_t first, last;
};
size_t delays__leaks(const struct delays *d, struct delays_leak *out, size_t max);
void delays__free(struct delays *d);

/* Delay statistics of a task, or of a group of tasks. */
struct delay_stats {
	uint64_t n;		/* delays */
	uint64_t p50, p99, max; /* ns (nearest rank: exact up to
				 * LIB_HIST_EXACT delays, then within
				 * lib/hist.h's 1%; max exact) */
};
/* The statistics of every group of tasks at once: @st[k] (@ngroups entries)
 * for the tasks i with @group_of[i] == k (join.tasks order; entries of
 * UINT32_MAX are left out; NULL: each task its own group). 0 or -ENOMEM. */
int delays__task_stats(const struct delays *d, const uint32_t *group_of, size_t ngroups,
		       struct delay_stats *st);

/* What a thread did during a delay, one kind of time per entry. */
enum cause_kind {
	CAUSE_POLL = 0,	   /* on-CPU polling task @task */
	CAUSE_BLOCKED = 1, /* off-CPU blocked in @frame (inside @task's poll
			    * if @in_poll) */
	CAUSE_RUNQ = 2,	   /* runnable, waiting for a CPU @holder had */
	CAUSE_PARKED = 3,  /* parked: waiting for work */
	CAUSE_RUNNING = 4, /* on-CPU outside polls, not parked */
};

struct delay_cause {
	uint8_t kind;	 /* enum cause_kind */
	uint8_t in_poll; /* BLOCKED/RUNQ: inside a poll of @task */
	uint64_t ns;
	uint64_t task;	 /* POLL; BLOCKED/RUNQ with in_poll */
	int32_t poll;	 /* POLL: its poll with the most time in the delay */
	uint32_t frame;	 /* BLOCKED: the blocking frame, UINT32_MAX none:
			  * the application's (analysis_site()) */
	uint32_t under;	 /* ... and the call under it, UINT32_MAX none */
	uint32_t holder; /* RUNQ: the thread that had the CPU, 0 unknown */
};

/* What thread @tid did from @from to @to, largest first, in @out (at
 * most @max; the number found returned, which may be more). Needs an
 * offcpu join (CAUSE_BLOCKED/RUNQ and parked time come from it). */
size_t delays__causes(const struct offcpu *oc, uint32_t tid, uint64_t from, uint64_t to,
		      struct delay_cause *out, size_t max);

#endif /* D9_ANALYSIS_DELAYS_H */
