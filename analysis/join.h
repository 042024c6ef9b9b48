/* SPDX-License-Identifier: MIT */
/*
 * join.h - polls from the runtime's events, CPU samples to polls, and the
 * tasks a view keeps (join.c; stacks cut to the kept: stacks.c).
 */
#ifndef D9_ANALYSIS_JOIN_H
#define D9_ANALYSIS_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hist.h"
#include "lib/map.h"
#include "trace/trace.h"

struct spans;

/* One poll: the interval between TRACE_EV_POLL_BEGIN and TRACE_EV_POLL_END of
 * the same task on the same thread, events taken per thread in time order
 * (file order for equal times).
 *  - An END that is the thread's first poll event began before the
 *    recording: the poll starts where the shim's records start (meta
 *    "shim_attached", read after the attach, else counters.start_time,
 *    else the earliest time in the trace), or at the thread's THREAD_START
 *    if one came first, and has open_start set; at its END if that came
 *    earlier still.
 *  - A BEGIN while a poll is open, THREAD_STOP, or THREAD_START (tid reuse)
 *    ends the open poll there, with open_end set (its END was lost).
 *  - A gap (struct join_gap: the shim recorded nothing) acts on every
 *    thread: a poll open at its start ends there, with open_end set; an
 *    END that is the thread's first poll event after it starts at the
 *    gap's end, with open_start set. Nothing in a gap is in a poll but
 *    one whose BEGIN was recorded in it.
 *  - A poll still open at the end, complete trace or cut, ends at the
 *    last record of its own thread (event, CPU sample, switch-out or
 *    switch-in), with open_end set: never stretched to the recording end
 *    or another thread's last time, which a thread (or a target) that
 *    exited would not have reached.
 *  - Any other END (nothing open, or another task's) is counted in
 *    join.unmatched_ends and ignored.
 * Polls of one thread never overlap. */
struct poll {
	uint64_t start;
	uint64_t end;
	uint64_t task;
	uint32_t tid;
	uint32_t id;	  /* index in join.polls, in start order */
	uint32_t samples; /* CPU samples (weight) that fell inside */
	uint8_t open_start;
	uint8_t open_end;
};

/* A stretch of time the shim recorded nothing: its recorder stalled past
 * the lease and the markers stopped at the lease's deadline, until the
 * recorder attached again (meta "shim_gap" = "START-END", one per gap). */
struct join_gap {
	uint64_t start; /* the lease's deadline */
	uint64_t end;	/* the attach again */
};

struct task_stat {
	uint64_t task;
	const char *name; /* from the trace, NULL if unnamed */
	uint64_t polls;
	uint64_t samples;  /* sample weight inside its polls */
	uint64_t total_ns; /* sum of poll durations */
	uint64_t longest_ns;
	struct lib_hist lens; /* their lengths, with JOIN_POLL_LENGTHS */
	int kept;	      /* chosen by join__select() (join__kept()) */
};

/* Which tasks a view keeps: all, or --task ID, or --task NAME (every task
 * of that name). */
struct task_sel {
	int on;		  /* 0: all tasks */
	uint64_t id;	  /* the task, when name is NULL: the number views
			   * show (trace_task_number()), or with
			   * TRACE_TASK_TOKIO the one read from outside
			   * (--task tokio:N) */
	const char *name; /* every task named so */
};

/* How a split view roots its frames (--by). */
enum group_by {
	GROUP_AUTO = 0,	  /* by task, by name past GROUP_AUTO_TASKS tasks */
	GROUP_TASK = 1,	  /* "task ID name" */
	GROUP_NAME = 2,	  /* the task's name: all tasks of one name
			   * together (unnamed ones: "[unnamed tasks]") */
	GROUP_THREAD = 3, /* "name[tid]" of the thread */
	GROUP_SPAN = 4,	  /* the name of the innermost span of the
			   * application entered on the thread ("[no
			   * span]" outside spans): flame and the
			   * speedscope export, given spans */
};
#define GROUP_AUTO_TASKS 100

struct join {
	const struct trace *trace;
	struct poll *polls;	 /* with JOIN_POLL_LIST: sorted by
				  * (start, tid); with a keep, those it
				  * lists, by id; else NULL */
	size_t npolls;		 /* polls, listed or not */
	size_t nlisted;		 /* in polls (npolls with JOIN_POLL_LIST) */
	size_t nmatched;	 /* with a keep: the polls it matched, the
				  * longest listed of them or not */
	size_t ncounted;	 /* ... and those of keep.count_ns */
	struct task_stat *tasks; /* sorted by task id */
	size_t ntasks;
	uint64_t unmatched_ends;   /* POLL_END with no matching begin */
	uint64_t samples;	   /* sample weight of the whole trace */
	uint64_t samples_in_polls; /* of which inside a poll */
	uint64_t start_time;	   /* the recording span used: counters, */
	uint64_t end_time;	   /* else the times seen */
	uint64_t events_from;	   /* the shim's records start here */
	uint64_t origin;	   /* times shown count from here; 0:
				    * start_time. A caller that read a
				    * window (trace.from) sets the start
				    * of the whole trace, so that a time
				    * reads the same with or without it */
	struct join_gap *gaps;	   /* sorted, disjoint; NULL if none */
	size_t ngaps;
	uint64_t gap_ns;     /* their total: runtime events lost */
	struct task_sel sel; /* the tasks every view of it shows
			      * (join__select(); sel.on 0: all) */
	size_t nkept;	     /* ... how many of them are kept */
	uint32_t *cut;	     /* per stack, where the runtime called the
			      * task (join__cut_stacks()); NULL: whole
			      * stacks */
};

/* join__new() flags */
/* fill join.polls (with per-poll samples)
 * and number the polls: what offcpu__new()
 * needs; 44 more bytes per poll. Implies
 * JOIN_KEEP_POLLS. */
#define JOIN_POLL_LIST 0x1u
/* keep the polls' lookup after join__new():
 * analysis__flame() with min_poll_ns walks
 * the samples again and needs it. Without,
 * the join's memory is its tasks and sample
 * counts only once join__new() returns. */
#define JOIN_KEEP_POLLS 0x2u
/* per-task views show polls' stacks whole,
 * the runtime's frames below the task too
 * (--full-stacks): join__cut_stacks() is
 * not called */
#define JOIN_WHOLE_STACKS 0x4u
/* keep every poll to the end of the join, as a join that keeps them does,
 * instead of streaming (what tests compare a streamed join with) */
#define JOIN_NO_STREAM 0x10u
/* each task's poll lengths as a distribution (task_stat.lens: tasks'
 * quantiles) */
#define JOIN_POLL_LENGTHS 0x20u

/* What a join lists in join.polls instead of every poll: the polls a
 * view shows. The join then streams, keeping in memory the polls it
 * lists and those of the last second or so, not every poll. */
struct join_window {
	uint32_t tid;
	uint64_t from, to; /* [from, to]: the polls of @tid overlapping */
};

/* join_keep.events: a batch of the events the join's walk takes */
typedef int (*join_events_fn)(void *ctx, const struct join *j,
			      const struct trace_event *e, size_t n);

struct join_keep {
	struct task_sel sel; /* of these tasks only (join__select() is
			      * still the views' filter) */
	uint64_t count_ns;   /* count those at least this long
			      * (join.ncounted), listed or not */
	uint64_t min_ns;     /* at least this long ("matched") */
	size_t n;	     /* and of those the first @n (start order)
			      * or the @n longest; 0: all */
	int longest;	     /* 1: the longest (ties: the first) */
	int switches;	     /* and every poll an off-CPU interval began
			      * in (what offcpu__new() needs) */
	int one;	     /* and poll @id */
	uint32_t id;
	int sampled;		       /* and every poll a CPU sample fell in
					* (a walk of the samples with their
					* polls' ids: pprof) */
	const struct join_window *win; /* and every poll (of any task) */
	size_t nwin;		       /* overlapping one of these */
	/* and give every poll of the tasks of @sel to @each in id order, as
	 * the join delivers it; with NULL first where the join starts
	 * over. A negative return stops the join with it. */
	int (*each)(void *ctx, const struct poll *p);
	void *ctx;
	/* and hand @events each batch of events the join's walk takes, as
	 * it takes it, with the join being made (its gaps known); (NULL,
	 * NULL, 0) where it starts over. A nonzero return stops the join
	 * with it. (A delays_feed: the delays without a walk of their own.) */
	join_events_fn events;
	void *events_ctx;
};

/* join__new() listing what @keep says (NULL: as join__new()); @flags must
 * not ask for JOIN_POLL_LIST or JOIN_KEEP_POLLS. Polls keep
 * their ids (their place in (start, tid) order among all). */
int join__new_keep(const struct trace *t, unsigned int flags,
		   const struct join_keep *keep, struct join **out);
/* List also the polls of @j overlapping the @n windows @win (a keep's
 * win), found by joining @j's trace again: what a view asks of polls once
 * it knows which, e.g. those around its worst delays. A join that lists
 * every poll has them already. 0, -ENOMEM or a walk's error. */
int join__list_more(struct join *j, const struct join_window *win, size_t n);
/* Thread @tid's polls: their number returned, their total time in *@ns. */
uint64_t join__thread_totals(const struct join *j, uint32_t tid, uint64_t *ns);
/* Poll @id if listed, else NULL. */
const struct poll *join__poll(const struct join *j, uint32_t id);
/* The poll of the off-CPU interval trace.switches[@i] (the one running on
 * its thread when it began), -1 if none; with JOIN_POLL_LIST or a keep
 * that lists switches' polls, else -1. */
int32_t join__switch_poll(const struct join *j, size_t i);

/* Build polls from the trace's events (one walk) and assign every sample
 * (one walk) to the poll whose [start, end] on the sample's thread contains
 * the sample time (both ends inclusive; where a poll ends at the very ns
 * the next one starts, the later poll wins), counting per task, per poll
 * and per (task, stack). A sample weight of 0 counts as 1. j->tasks lists
 * every task the trace names or any event mentions, polled or not; names
 * point into @t, which must outlive the join. Memory: polls (12 bytes
 * each, freed on return without JOIN_KEEP_POLLS), tasks, distinct (task,
 * stack) pairs; nothing per sample or event.
 * O((S + E) log P). Returns 0, -ENOMEM, -EOVERFLOW (more than 2^31 polls
 * or 2^30 tasks), or a walk's error (-EBADMSG: see trace__error()). */
int join__new(const struct trace *t, unsigned int flags, struct join **out);
/* The poll running on @tid at @time, or NULL (always NULL without
 * JOIN_POLL_LIST). */
const struct poll *join__poll_at(const struct join *j, uint32_t tid, uint64_t time);
/* The threads that ran polls (with JOIN_POLL_LIST), in no order: an
 * array of their *@n tids the caller frees; NULL without memory. */
uint32_t *join__poll_threads(const struct join *j, size_t *n);
/* A cursor over @j's polls (with JOIN_POLL_LIST) for lookups in time
 * order per thread: join__cursor_poll_at() answers as join__poll_at(),
 * found where the last lookup on that thread ended, most often without a
 * search. NULL without memory. */
struct join_cursor *join__cursor_new(const struct join *j);
const struct poll *join__cursor_poll_at(struct join_cursor *c, uint32_t tid,
					uint64_t time);
void join__cursor_free(struct join_cursor *c);
/* The polls of thread @tid in start order, listed ones only (with a
 * keep): their places in join.polls in *@ids, their number returned (0
 * without JOIN_POLL_LIST or a keep). */
size_t join__thread_polls(const struct join *j, uint32_t tid, const uint32_t **ids);
const struct task_stat *join__task(const struct join *j, uint64_t task);
/* The task a sample or a switch carries (read in its thread: zero-code
 * Tokio's TRACE_TASK_TOKIO id, or the shim's in a lean trace) as a task of
 * the program; NULL where it is none (none read, or the runtime:
 * join__task() has no such id) */
const struct task_stat *join__sample_task(const struct join *j, uint64_t task);
/* The first gap of @j that starts at or after @time, or NULL: what a
 * thread or a task did between @time and a later time t is known only if
 * there is none, or it starts at or after t. */
const struct join_gap *join__gap_from(const struct join *j, uint64_t time);
/* The task filter (--task), applied once: every view of @j shows only
 * what fell inside polls of the tasks @sel names (all with !sel->on;
 * join.sel is a copy, its name pointing into @sel's). 0, or -ENOENT if
 * @sel names no task of @j (then none is kept); 1 where its ID is two
 * tasks' (one the shim marked, one read from outside, zero-code Tokio's:
 * the marked one is kept, and the caller says so). */
int join__select(struct join *j, const struct task_sel *sel);
/* The first task @j's selection keeps (the one task of a --task ID), NULL
 * with none. A task's ID is the number views show (trace_task_number()):
 * in a trace of the shim's tasks and zero-code ones, one ID may name one
 * of each. */
const struct task_stat *join__selected(const struct join *j);
/* Does a view of @j show task @ts (NULL: of no task, kept only when all
 * are)? */
static inline int join__kept(const struct join *j, const struct task_stat *ts)
{
	return !j->sel.on || (ts && ts->kept);
}
/* Does a selection keep nothing of @j (a view then writes nothing and
 * returns -ENOENT)? */
static inline int join__keeps_none(const struct join *j)
{
	return j->sel.on && !j->nkept;
}
/* Cut the stacks of polls where the runtime called into the task (what
 * join__new() does without JOIN_WHOLE_STACKS): the
 * frame nearest the leaf running a function the trace names as a poll
 * site (TRACE_META_POLL_SITE: where the runtime called d9_poll_begin, or
 * a function inlined there). Per-task views then show what is below it as
 * one frame, "[runtime]" (join__keep()); outside polls and by thread,
 * stacks stay whole. Nothing changes for a trace without poll sites (or
 * without the call into the task in a stack). 0 or -ENOMEM. */
int join__cut_stacks(struct join *j);
/* The frames of stack @s a per-task view keeps from the leaf
 * (join__cut_stacks()), or UINT32_MAX: all. */
static inline uint32_t join__keep(const struct join *j, uint32_t s)
{
	return j->cut && s < j->trace->nstacks ? j->cut[s] : UINT32_MAX;
}
/* Does @s keep task @ts? */
int task_sel_has(const struct task_sel *s, const struct task_stat *ts);
/* "task 42", "tasks named short" or "all tasks" into @buf. */
char *task_sel_text(const struct task_sel *s, char *buf, size_t len);
/* @by with GROUP_AUTO decided for @j. */
enum group_by groups_resolve(const struct join *j, enum group_by by);
void join__free(struct join *j);

/* ---- the join's walks, for the views ------------------------------- */

/* The poll a sample fell in. */
struct join_hit {
	uint64_t start, end;
	uint32_t task; /* index in join.tasks */
	int32_t id;    /* poll id (JOIN_POLL_LIST), else -1 */
	int nopoll;    /* 1: the task is known (zero-code Tokio: the
			* sample's own), not its poll: start = end = the
			* sample's time, id -1 */
};

/* Called per sample, with its poll or NULL; nonzero stops the walk. */
typedef int (*join_sample_fn)(void *ctx, const struct trace_sample *s,
			      const struct join_hit *p);

/* Walk @j's trace's samples in file order (decoding them from the file if
 * they were not loaded), each with its poll. 0, @fn's nonzero return, or
 * trace__for_each_sample()'s error. */
int join_for_each_sample(const struct join *j, join_sample_fn fn, void *ctx);

/* A streamed join that lists polls marks one every this much of the
 * trace, at most (24 bytes: 1.2 kB a second), where join__list_more()
 * can start a walk: at the first poll (in id order) to begin this long
 * after the mark before, and later than the poll before it. */
#define JOIN_MARK_NS 20000000ull

/* join_keep.each: called per poll in id order; with NULL: start again,
 * forget the polls given so far. A negative return stops the walk. */
typedef int (*join_poll_fn)(void *ctx, const struct poll *p);

/* Give @fn every poll of the tasks @j shows (join__select()) in id
 * order: @j's own list if it lists them all, else from a join of the
 * trace again that streams, keeping none of them (what a view that sums
 * up every poll and writes only some walks). 0, @fn's nonzero return or
 * a walk's error. */
int join_for_each_poll(const struct join *j, join_poll_fn fn, void *ctx);
/* ... and, in the same walk, @events (join_keep.events) every batch of
 * events it takes: always a walk, even of a join listing every poll. */
int join_for_each_poll_fed(const struct join *j, join_poll_fn fn, void *ctx,
			   join_events_fn events, void *events_ctx);

/* Samples per (root, stack), as join__new() counted them: root = task
 * index + 1 for samples inside a poll, 0 outside. */
struct join_agg {
	struct lib_map map; /* root << 32 | stack -> index below */
	uint64_t *weight;   /* sample weight */
	uint64_t *count;    /* samples */
	size_t n, cap;
};

const struct join_agg *join_agg(const struct join *j);
/* An event parks are made of (park, unpark, a thread's start and stop),
 * as the join's walk of the events met it: the off-CPU join's parks come
 * from these, with no walk of their own */
struct join_pev {
	uint64_t time;
	uint32_t tid;
	uint32_t type;
	size_t idx; /* its place among all the events: the tie-break */
};

/* The join's park events in file order: their number, *@v the array. */
size_t join_park_events(const struct join *j, const struct join_pev **v);
/* 1 if @j was joined streaming (join_priv.stream): its polls were freed
 * as the walk passed them, none came too late for that. */
int join_streamed(const struct join *j);
/* Earliest and latest event or sample time (UINT64_MAX, 0 if none); only
 * looked for when the trace lacks counters.start_time or end_time. */
void join_seen(const struct join *j, uint64_t *lo, uint64_t *hi);

/* A gap's meta value "START-END" (ns, START <= END) into @start, @end. 0,
 * or -EINVAL when malformed. (join.c) */
int analysis_meta_gap(const char *v, uint64_t *start, uint64_t *end);

/* "task ID name" ("task ID" if unnamed), the name cleaned. Returns @buf. */
char *analysis_task_label(const struct join *j, uint64_t task, char *buf, size_t len);

#endif /* D9_ANALYSIS_JOIN_H */
