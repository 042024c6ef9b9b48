/* SPDX-License-Identifier: MIT */
/*
 * analysis.h - join samples to polls, and render flamegraphs and tables.
 *
 * Works on a struct trace (trace/trace.h) read whole or, to keep memory
 * independent of the recording's length, with TRACE_READ_NO_SAMPLES |
 * TRACE_READ_NO_EVENTS: events and samples are then walked from the file
 * (trace__for_each_event/_sample), never held. No option parsing, no
 * exit(): every function returns 0 or -errno and writes only to the FILE
 * it is given. A walk that finds a corrupt chunk returns -EBADMSG, and
 * trace__error() says what is wrong.
 */
#ifndef D9_ANALYSIS_H
#define D9_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "lib/hist.h"
#include "trace/trace.h"

/* ---- the join ------------------------------------------------------- */

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
	int kept; /* chosen by join__select() (join__kept()) */
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

/* What a join lists in join.polls instead of every poll: the polls a
 * view shows. The join then streams, keeping in memory the polls it
 * lists and those of the last second or so, not every poll. */
struct join_window {
	uint32_t tid;
	uint64_t from, to; /* [from, to]: the polls of @tid overlapping */
};

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
	int (*events)(void *ctx, const struct join *j, const struct trace_event *e,
		      size_t n);
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
/* Zero-code id @task (a sample's or a switch's, read in its thread) as a
 * task of the program; NULL where it is none (no TRACE_TASK_TOKIO, or the
 * runtime: join__task() has no such id) */
const struct task_stat *join__tokio_task(const struct join *j, uint64_t task);
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

/* ---- frame labels --------------------------------------------------- */

/* Render frame @id of @t into @buf: the symbol, else "module+0xoff" (the
 * module's base name), else "0xaddr"; kernel frames end in "_[k]" (the
 * flamegraph.pl convention), inlined ones in " [inlined]". The name is
 * the target's: it is cleaned (analysis_clean_name(): controls and invalid
 * UTF-8 as '?', ';' as ':') so that no view shows a control and folded
 * output stays parseable; a label cut to fit @len keeps its suffix and
 * whole UTF-8 characters. A bad id gives "[bad frame ID]".
 * Returns @buf. */
char *analysis_frame_label(const struct trace *t, uint32_t id, char *buf, size_t len);

/* ---- flamegraphs ---------------------------------------------------- */

/* A flamegraph under construction: a tree of frames with weights. Memory
 * grows with distinct stacks, not with samples. */
struct flame;

struct flame *flame__new(void);
/* Add @weight to the path @frames[0] (root) .. @frames[n-1] (leaf); n == 0
 * counts in the total only. Labels are copied. 0, -EINVAL or -ENOMEM. */
int flame__add(struct flame *f, const char *const *frames, size_t n, uint64_t weight);
uint64_t flame__total(const struct flame *f);
/* "root;...;leaf weight\n" lines, one per distinct path with weight
 * ending there, in byte order (as `LC_ALL=C sort`), as flamegraph.pl/
 * inferno/speedscope read them; a differential graph (analysis__flame_diff)
 * has two, "root;...;leaf base new\n", for each path with weight in
 * either. 0, -ENOMEM or -EIO. */
int flame__write_folded(const struct flame *f, FILE *out);
/* A self-contained interactive SVG (hover details, click to zoom, search
 * with a case toggle, reset) as wide as the window, with @title and
 * @subtitle (may be NULL); @unit names the weight ("samples", "us"; NULL =
 * "samples"). Long names lose their middle, keeping the function's own
 * name. A parent's children narrower than a pixel are drawn as one frame,
 * "N small frames"; merged frames narrower than 0.1 px are left out, so
 * the size is bounded whatever the number of stacks. All text is
 * XML-escaped (invalid UTF-8 and controls become '?'). 0, -ENOMEM or
 * -EIO. */
int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit);
/* How flame__write_svg() draws @f. All zero, as flame__new() leaves it:
 * a flame graph (root at the bottom) in the warm CPU palette. */
struct flame_style {
	int offcpu;  /* blue palette, the off-CPU convention */
	int reverse; /* icicle: root at the top, callees below */
};
/* Copy @s into @f (NULL: back to the default). Only the SVG reads it. */
void flame__set_style(struct flame *f, const struct flame_style *s);
void flame__free(struct flame *f);

/* ---- the commands' work --------------------------------------------- */

enum flame_format {
	FLAME_SVG = 0,
	FLAME_FOLDED = 1,
};

/* What analysis__flame() drew, for the CLI to report. */
struct flame_result {
	uint64_t samples; /* samples kept */
	uint64_t weight;  /* their weight (the graph's total) */
	uint64_t stacks;  /* distinct (root, stack) pairs */
};

/* A view's --span NAME [--min DUR]: only what happened on a thread while
 * it had a span @spans keeps entered (spans__select(@name, @min_ns),
 * which a subtitle says); @spans NULL: everything. */
struct spans;
struct span_filter {
	const struct spans *spans;
	const char *name;
	uint64_t min_ns;
};

struct flame_opts {
	enum group_by by;     /* root frames (GROUP_THREAD: samples outside
			       * polls too, under their thread) */
	uint64_t min_poll_ns; /* > 0: keep only samples inside polls that
			       * lasted at least this long */
	enum flame_format format;
	const char *title;	     /* NULL: a default naming the trace */
	int reverse;		     /* SVG: icicle, root on top */
	struct flame_result *result; /* out, filled if non-NULL */
	struct span_filter span;     /* only samples taken inside it; its
				      * spans are also GROUP_SPAN's */
};

/* CPU flamegraph of @j's trace (min_poll_ns needs a join made with
 * JOIN_KEEP_POLLS, else -EINVAL), stacks root to leaf under a first frame
 * naming the group (enum group_by) for samples inside a poll, or "[no
 * poll]". With a selection (join__select()), only samples inside polls
 * of those tasks (the
 * graph keeps its roots, so it says what it shows). Weight = sample
 * weight. Returns 0, -ENOENT if the selection keeps no task of the trace (nothing is
 * written), -ENODATA if nothing matched (a valid empty graph is still
 * written), -ENOMEM, or -EIO if writing failed. */
int analysis__flame(const struct join *j, const struct flame_opts *o, FILE *out);

/* ---- differential flamegraphs (flame_diff.c) ------------------------ */

/* How the base profile's tasks were chosen for a --task of the new one. */
enum task_match {
	TASK_MATCH_SAME = 0, /* the same selection: a task name, or an id
			      * the base has, for a task of the same name */
	TASK_MATCH_NAME = 1, /* by the new task's name: the base has no
			      * task of that id and name */
};

/* Select in @base (join__select()) the tasks that match @j's selection:
 * the same one if it is a name or @base has task j->sel.id under the
 * same name (or both unnamed); else every task of @base with that task's
 * name. Returns enum task_match, or -ENOENT if @base has no such task
 * (base->sel is then what was looked for). */
int task_sel_match(const struct join *j, struct join *base);

struct flame_diff_result {
	struct flame_result cur;  /* the new profile's */
	struct flame_result base; /* the base profile's */
	double scale;		  /* base weights were multiplied by this:
				   * new total / base total (0: empty
				   * base) */
	uint64_t vanished;	  /* base weight (raw) in paths that have
				   * no frame in the new profile */
};

struct flame_diff_opts {
	struct flame_opts cur; /* as for analysis__flame(), for the new
				* profile; GROUP_AUTO roots by task
				* name, so two recordings line up */
	const char *cur_name;  /* the traces, for the SVG's subtitle */
	const char *base_name;
	struct flame_diff_result *result; /* out, filled if non-NULL */
};

/* A differential CPU flamegraph, in the manner of difffolded.pl and
 * flamegraph.pl: both profiles built as analysis__flame() builds one,
 * then matched path for path by their labels. Folded: "stack base new"
 * lines with the raw counts (difffolded.pl without -n). SVG: frame widths
 * from @j (the new profile); the base's weights scaled to the new total
 * (a longer recording is not growth), each frame coloured by its change
 * (new - scaled base, of the frame and everything above it): red grew,
 * blue shrank, white the same, saturation by the change over the largest
 * change of any frame; its tooltip says the change in % and both counts.
 * Paths only in the base have no width in the new profile: the subtitle
 * says how much of the base they held. Returns 0, -ENOENT if a selection
 * keeps no task of its trace (nothing written), -ENODATA if the new
 * profile is empty (a valid graph is still written), -ENOMEM, -EIO, or a
 * walk's error. */
int analysis__flame_diff(const struct join *j, const struct join *base,
			 const struct flame_diff_opts *o, FILE *out);

/* The task table (@o NULL: per task, by CPU, all rows): TASK (or NAME and
 * TASKS by name), POLLS, CPU (sampled CPU time in its polls: sample
 * weight x 1/frequency), CPU% (that time as a share of one CPU over the
 * recording), total, mean and longest poll time, and with @d (may be NULL:
 * "-") the wake-to-poll columns WAKES (delays measured), DELAY-P50,
 * DELAY-P99 and DELAY-MAX; sorted by @o->sort, descending, ties in id
 * (name) order. Footer lines starting "#": rows shown of how many, what
 * CPU and CPU% mean, samples inside and outside polls, and unmatched poll
 * ends / lost samples when there are any. 0, -ENOMEM or -EIO. */
enum tasks_sort {
	TASKS_BY_CPU = 0, /* sample weight, then total poll time */
	TASKS_BY_POLLS = 1,
	TASKS_BY_LONGEST = 2, /* longest poll */
	TASKS_BY_DELAY = 3,   /* longest wake-to-poll delay */
	TASKS_BY_NAME = 4,    /* id order (by name: name order) */
};

struct tasks_opts {
	enum group_by by; /* GROUP_NAME: one row per task name (AUTO and
			   * THREAD: per task) */
	enum tasks_sort sort;
	size_t limit; /* rows; 0 = all */
	int wide;     /* never cut names (else to 32 characters) */
};

struct delays;
int analysis__tasks(const struct join *j, const struct delays *d,
		    const struct tasks_opts *o, FILE *out);
/* One sample's worth of CPU, ns: 1e9 / meta "frequency"; 0 if unknown. */
double analysis_period_ns(const struct trace *t);

/* ---- durations ------------------------------------------------------ */

/* Parse a duration as users type it: a decimal number and a unit, "ns",
 * "us" (or "µs"), "ms" or "s": "100ns", "500us", "1ms", "2.5s". No sign,
 * no exponent, no spaces; a bare number is rejected (the unit is not
 * guessed). Fractions round to the nearest ns. 0 and *@ns, or -EINVAL
 * (malformed) or -ERANGE (over 2^64 ns). Defined in duration.c. */
int duration_parse(const char *s, uint64_t *ns);

/* ---- time windows: --from/--to (window.c) --------------------------- */

/* A time as --from and --to take it. */
enum time_kind {
	TIME_NONE = 0,
	TIME_SINCE_START = 1, /* ns from the start of the trace read */
	TIME_OF_DAY = 2,      /* ns past local midnight, on the day the
			       * recording started (the next day if that
			       * is before the start and it ran past
			       * midnight) */
	TIME_WALL = 3,	      /* unix ns (CLOCK_REALTIME): a UTC date and
			       * time, or a duration before now */
};

struct time_spec {
	enum time_kind kind;
	uint64_t ns;
	const char *text; /* as typed, for messages */
};

/* Parse seconds from the start ("12.5", or with a unit as
 * duration_parse() reads it: "12.5s", "500ms"), a time of day
 * "HH:MM:SS[.frac]" (H 0-23), a UTC date and time "YYYY-MM-DD",
 * "YYYY-MM-DDTHH:MM[:SS][Z]" (or a space for the T), or a duration before
 * @now (unix seconds) "-DUR" ("-15m", "-2h", "-1d"; h and d are hours and
 * days here). 0, or -EINVAL (@out->text still set). */
int time_spec_parse_at(const char *s, time_t now, struct time_spec *out);
/* time_spec_parse_at() now. */
int time_spec_parse(const char *s, struct time_spec *out);
/* -1, 0 or 1 as @a is before, at or after @b; -2 when they cannot be
 * compared without the trace (a time of day may fall on the next day;
 * seconds from the start and wall-clock times are on different axes). */
int time_spec_cmp(const struct time_spec *a, const struct time_spec *b);
/* @ts for a message: "12.5 s", or a time of day as typed. Returns @buf or
 * @ts->text. */
const char *time_spec_text(const struct time_spec *ts, char *buf, size_t len);
/* @ts as a command line gives it again later: as typed, but a time
 * before now ("-5m") as the UTC time it named ("2026-11-29T04:35:12Z").
 * Returns @buf or @ts->text. */
const char *time_spec_arg(const struct time_spec *ts, char *buf, size_t len);

/* A window to read: the ctx of trace_window_resolve(). */
struct trace_window {
	struct time_spec from, to; /* TIME_NONE: unbounded */
	uint64_t origin;	   /* out: the start of the segments
				    * given (where TIME_SINCE_START
				    * counts from); 0 without a window */
	char why[256];		   /* out: why the window was refused */
};

/* The window callback of struct trace_read_opts, @ctx a struct
 * trace_window: the bounds in CLOCK_MONOTONIC ns of the segments @seg
 * (@n, in start order). Seconds count from the earliest segment start; a
 * time of day goes through the segments' wall_offset. A bound at or past
 * the trace's own becomes 0 (none). 0, or -EINVAL/-ERANGE with @ctx's why
 * set: a time of day without the wall clock in the trace, no start known
 * (a trace cut short before segments had one), --from at or past the end,
 * --to at or before the start, --from not before --to. */
int trace_window_resolve(void *ctx, const struct trace_segment *seg, size_t n,
			 uint64_t *from, uint64_t *to);
/* @ns as seconds with at most 3 decimals, no trailing zeros ("12.3",
 * "0"). Returns @buf. */
char *window_secs(uint64_t ns, char *buf, size_t len);

/* ---- off-CPU intervals joined to polls (offcpu_join.c) -------------- */

/*
 * Every off-CPU interval (struct trace_switch) is put in one of three
 * places by where its thread was at switch-out:
 *  - in a poll: the poll on the same tid whose [start, end] contains the
 *    switch-out time (join__poll_at). The task blocked, or was preempted,
 *    inside that poll. Its weight is the time off-CPU inside the poll:
 *    min(switch-in, poll end) - switch-out. A thread cannot end a poll
 *    while off-CPU, so the clip only bites where the poll's end was lost
 *    (open_end) or the recording stopped first.
 *  - idle: not in a poll, and the worker was parked (between TRACE_EV_PARK
 *    and TRACE_EV_UNPARK on that tid; an UNPARK with no PARK before it on
 *    that thread was parked since the shim's records start
 *    (join.events_from), the thread start or the end of a gap; a park
 *    still open at the end lasts to the recording end, one open at a
 *    gap's start ends there). A parked worker
 *    waits for work: that is not blocking. A poll wins over a park: a
 *    worker that parks inside a poll blocks its task.
 *  - in a task, not in a known poll (zero-code Tokio: the trace has no
 *    polls, the switch-out carries the task it left, read in its
 *    thread): the task's. Weight: the whole interval. A zero-code
 *    switch-out of no task of the program whose stack parks the worker
 *    (Tokio's park, or its blocking pool's wait) is idle.
 *  - no poll: none of those. Weight: the whole interval.
 * A switch-in time of 0 (still off-CPU at the end) means the recording
 * end. The recording span is counters.start_time/end_time, else the
 * earliest and latest time of any event, sample or switch.
 */
enum offcpu_where {
	OFFCPU_IN_POLL = 0,
	OFFCPU_NO_POLL = 1,
	OFFCPU_IDLE = 2,
	OFFCPU_IN_TASK = 3,
};
#define OFFCPU_WHERE 4

/* One trace switch as joined. */
struct offcpu_switch {
	uint64_t len;  /* switch-out to switch-in (or recording
			* end), ns: what --min-block compares */
	uint64_t ns;   /* weight, ns: len clipped to the poll */
	uint64_t runq; /* of ns, the part runnable, waiting for a
			* CPU: from the preemption or the wakeup
			* (trace_switch.runnable) to the end of ns;
			* 0 where the wakeup is not known */
	int32_t poll;  /* index in join.polls, -1 if none */
	int32_t task;  /* OFFCPU_IN_TASK: index in join.tasks, else -1 */
	uint8_t where; /* enum offcpu_where */
};

/* Off-CPU time of one poll. */
struct poll_offcpu {
	uint64_t ns;	       /* off-CPU ns inside the poll (weights) */
	uint64_t runq_ns;      /* the part waiting for a CPU (run queue) */
	uint64_t preempted_ns; /* the part preempted (all run queue) */
	uint32_t switches;     /* intervals that began inside it */
};

struct offcpu {
	const struct join *join;
	const struct trace *trace;
	struct offcpu_switch *sw; /* per trace switch, in file order */
	uint64_t start_time;	  /* the recording span used */
	uint64_t end_time;
	uint64_t parks;			/* parked intervals found */
	uint64_t ns[OFFCPU_WHERE];	/* total weight per enum offcpu_where */
	uint64_t runq_ns[OFFCPU_WHERE]; /* ... of which waiting for a CPU */
	int runq_split;			/* 1: wakeups were recorded, blocked and
					 * run-queue time are split; 0: only
					 * preempted time is known to be
					 * run-queue time (analysis_runq_missing()) */
	int raw_leaf;			/* OFFCPU_RAW_LEAF: views name raw
					 * leaves, not analysis_site()'s */
};

/* offcpu__new() flags */
/* name a stack by its raw leaf (the call
 * into the kernel when blocked), not by the
 * application's frame over it (--frame leaf) */
#define OFFCPU_RAW_LEAF 0x1u

/* Join @j's trace's switches to @j's polls (@j has JOIN_POLL_LIST or a
 * keep that lists switches' polls) and parked intervals. Works on
 * a trace without switches too (all zero). @j and its trace must outlive
 * the result. O((W + E) log) for W switches, E events. 0 or -ENOMEM. */
int offcpu__new(const struct join *j, unsigned int flags, struct offcpu **out);
void offcpu__free(struct offcpu *oc);

/* The off-CPU intervals of thread @tid in time order: their indices in
 * trace.switches (and offcpu.sw) in *@ix, their number returned. */
size_t offcpu__thread_switches(const struct offcpu *oc, uint32_t tid,
			       const uint32_t **ix);
/* A parked interval (the rules above): [start, end] on @tid. */
struct offcpu_park {
	uint32_t tid;
	uint64_t start, end;
};
/* Every parked interval, sorted by (tid, start), in *@parks (owned by
 * @oc); their number returned. */
size_t offcpu__parks(const struct offcpu *oc, const struct offcpu_park **parks);
/* Poll @poll's off-CPU time (all zero where it had none). O(log polls
 * with a switch); kept for those only. */
const struct poll_offcpu *offcpu__poll(const struct offcpu *oc, uint32_t poll);
/* The polls with off-CPU time in id order: from *@it = 0, 1 with the
 * next one's id and totals, then 0. */
int offcpu__next_poll(const struct offcpu *oc, size_t *it, uint32_t *poll,
		      const struct poll_offcpu **po);
/* Time thread @tid was parked within [@from, @to], ns. */
uint64_t offcpu__parked_ns(const struct offcpu *oc, uint32_t tid, uint64_t from,
			   uint64_t to);

/* NULL if @t has off-CPU intervals, else why not, from meta "offcpu" (as
 * the recorder sets it: "on", "off" for --no-offcpu, "refused..." when
 * the kernel said no), e.g. "it was recorded with --no-offcpu". A static
 * string. */
const char *offcpu_missing(const struct trace *t);

/* NULL if @t's off-CPU time splits into blocked and run-queue time (its
 * wakeups were recorded), else why not, from meta "wakeups" (a static
 * string, or the meta value itself). */
const char *analysis_runq_missing(const struct trace *t);
/* NULL if @t says who ran on the CPUs while its threads waited
 * (trace.holds: waits are charged to those threads by time); else why
 * not, and that the holder is then approximated. */
const char *analysis_runq_holders_missing(const struct trace *t);

/* Who had the CPU while a thread waited for one: "comm[tid]" (the name
 * from trace__comm(), cleaned; "?[tid]" if unnamed), "[earlier than the
 * CPU's history]" for @holder 0 (TRACE_HOLD_UNKNOWN), "[idle CPU]" and
 * "[others]" for TRACE_HOLD_IDLE and _OTHERS. Returns @buf. */
char *analysis_holder_label(const struct trace *t, uint32_t holder, char *buf,
			    size_t len);
/* Who held the CPU while switch @s waited on its run queue, as shares of
 * @runq ns (its run-queue part as a view counts it, perhaps clipped to a
 * poll), largest first, into @out (room for TRACE_MAX_HOLDS): the threads
 * that ran on its CPU meanwhile, as recorded (trace.holds), or, in a trace
 * without them, one entry: @s->holder (the thread that took the CPU at a
 * preemption, else the one that ran last before it) for all of it. The
 * count; 0 for @runq 0. */
size_t analysis_switch_holds(const struct trace *t, const struct trace_switch *s,
			     uint64_t runq, struct trace_hold *out);

enum poll_top {
	POLL_TOP_NONE = 0,	/* no samples, no off-CPU stacks */
	POLL_TOP_CPU = 1,	/* the hottest leaf of its CPU samples */
	POLL_TOP_OFFCPU = 2,	/* where it blocked longest */
	POLL_TOP_PREEMPTED = 3, /* POLL_TOP_OFFCPU, but most of that frame's
				 * off-CPU time was on the run queue
				 * (preempted, or woken and waiting for a
				 * CPU), not blocked */
};

/* The frame that says most about poll @poll, in *@frame (a frame id),
 * and the call under it in *@under (UINT32_MAX: none; site_label() names
 * the pair): if the poll was mostly blocked (blocked, i.e. not run-queue,
 * off-CPU ns over half its duration), or has off-CPU time and no samples,
 * the site (analysis_site(): the application's frame over the call into
 * the kernel) that accounts for most of its off-CPU ns; else the
 * application's frame with the most sample weight (no call under it).
 * With oc->raw_leaf, raw leaves: the leaf-most user frame of the blocked
 * stacks, the leaf of the samples. Ties go to the lower frame id. Returns
 * enum poll_top (with POLL_TOP_NONE, *@frame is untouched), or -EINVAL
 * for a bad poll. */
int offcpu__poll_top(const struct offcpu *oc, uint32_t poll, uint32_t *frame,
		     uint32_t *under);

/* ---- the off-CPU commands' work (offcpu_flame.c, poll_table.c) ------ */

struct offcpu_result {
	uint64_t intervals;    /* intervals kept */
	uint64_t ns;	       /* their weight, ns */
	uint64_t preempted_ns; /* of which preempted */
	uint64_t runq_ns;      /* of which on the run queue (preempted,
				* or woken and waiting for a CPU) */
	uint64_t weight;       /* the graph's total, us */
	uint64_t stacks;       /* distinct (root, part) pairs */
};

struct offcpu_opts {
	enum group_by by;      /* root frames, as for analysis__flame() */
	uint64_t min_poll_ns;  /* > 0: only intervals inside polls that
				* lasted at least this long */
	uint64_t min_block_ns; /* only intervals at least this long (len) */
	int idle;	       /* also parked time, under "[idle]" */
	enum flame_format format;
	const char *title;	      /* NULL: a default naming the trace */
	int reverse;		      /* SVG: icicle, root on top */
	struct offcpu_result *result; /* out, filled if non-NULL */
	struct span_filter span;      /* only intervals that began inside it
				       * (parked time never does) */
};

/* Off-CPU flamegraph: switch-out stacks root to leaf, weighted by
 * microseconds off-CPU (each distinct path's ns rounded to the nearest
 * us; paths under 0.5 us are left out of the picture but counted in the
 * result). Root frame naming the group (enum group_by; "task ID name" by
 * default) for intervals in polls, "[no poll]" outside (left out with
 * a selection or min_poll_ns), "[idle]" for parked time (only with idle, and
 * never with a selection or min_poll_ns); by thread, every interval under its
 * thread.
 * The run-queue part of an interval (struct offcpu_switch.runq) ends in a
 * pseudo frame "[runqueue: comm[tid]]" above its leaf, naming the holder
 * ("[runqueue]" if not known), preceded by "[preempted]" for a preempted
 * one: `grep -v '\[runqueue'` on folded output keeps blocked time only.
 * Returns 0, -ENOENT if the selection keeps no task (nothing written),
 * -ENODATA if nothing matched (a valid empty graph is still
 * written), -ENOMEM or -EIO. */
int analysis__offcpu(const struct offcpu *oc, const struct offcpu_opts *o, FILE *out);

struct poll_flame_result {
	uint64_t samples;   /* sample weight inside the poll */
	uint64_t cpu_us;    /* samples as us (weight of "[cpu]") */
	uint64_t offcpu_us; /* weight of "[off-cpu]" */
	double period_us;   /* one sample's worth, us */
	int period_guessed; /* 1: no usable meta "frequency", 999 Hz */
};

struct poll_flame_opts {
	uint32_t poll; /* poll id (index in join.polls) */
	enum flame_format format;
	const char *title;		  /* NULL: a default naming the poll */
	struct poll_flame_result *result; /* out, filled if non-NULL */
};

/* One poll's picture: its CPU samples under a root "[cpu]" and its
 * off-CPU intervals under "[off-cpu]" (run-queue parts ending in
 * "[runqueue: comm[tid]]" as in analysis__offcpu()), both in microseconds: a sample
 * stands for 1e6 / F us, F the meta "frequency" (samples per CPU-second; 999 if absent,
 * said in the subtitle), times its weight. Returns 0, -ENOENT for a poll id not in the
 * join (nothing written), -ENODATA if the poll has neither samples nor off-CPU time (an
 * empty graph is written), -ENOMEM, -EIO. */
int analysis__poll_flame(const struct offcpu *oc, const struct poll_flame_opts *o,
			 FILE *out);

enum polls_sort {
	POLLS_BY_DURATION = 0, /* longest first, then start */
	POLLS_BY_START = 1,    /* earliest first */
};

struct polls_by;
struct polls_opts {
	uint64_t min_ns;  /* only polls at least this long */
	enum group_by by; /* GROUP_AUTO: one poll a row; else one row
			   * per task, name or thread: polls, total,
			   * p50, p99 (nearest rank, exact up to
			   * LIB_HIST_EXACT polls, then within
			   * lib/hist.h's 1%) and longest duration */
	enum polls_sort sort;
	size_t limit;		   /* at most this many rows; 0 = all */
	int wide;		   /* never cut names (else TASK and THREAD
				    * names to 24 characters, TOP-FRAME to 64,
				    * keeping a function's own name) */
	size_t *shown;		   /* out: rows printed, if non-NULL */
	struct polls_by *polls_by; /* --by: what the join gave, or NULL:
				    * the polls walked again */
};

/* polls --by in the join's own walk: polls_by__poll() as its keep's
 * each (of the tasks shown), with the @ctx polls_by__new() made for @o;
 * then analysis__polls() reads it (polls_opts.polls_by). */
struct polls_by;
int polls_by__new(const struct polls_opts *o, struct polls_by **out);
int polls_by__poll(void *ctx, const struct poll *p);
void polls_by__free(struct polls_by *pb);

/* The poll table: POLL (id), TASK (id name), THREAD (tid name), START
 * (seconds since the recording start), DURATION (ending in "+" when it is
 * a lower bound: the poll began before the recording or its end was
 * lost), SAMPLES (CPU sample weight), OFF-CPU (blocked time inside it),
 * RUNQ (run-queue time inside it: runnable, waiting for a CPU; both "-"
 * if the trace has no off-CPU data), TOP-FRAME (offcpu__poll_top;
 * " (off-CPU)" appended for an off-CPU one, " (run queue)" for one mostly
 * waiting for a CPU). Footer lines starting "#" say how many polls
 * matched, and when blocked and run-queue time could not be split (RUNQ
 * then holds preempted time only). 0, -ENOENT (have_task names no task; nothing written),
 * -ENOMEM or -EIO. */
int analysis__polls(const struct offcpu *oc, const struct polls_opts *o, FILE *out);

/* ---- wake-to-poll delays (delays.c) --------------------------------- */

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
	uint64_t wake;	    /* the first pending wake (or spawn), ns */
	uint64_t begin;	    /* the poll that ended the wait began */
	uint32_t waker;	    /* tid that woke (spawned) it */
	uint32_t poller;    /* tid that polled it */
	int32_t waker_poll; /* poll running on the waker then, -1: none
			     * (always -1 without JOIN_POLL_LIST or a keep;
			     * see delays__list_polls()) */
	int32_t poll;	    /* the poll that ended it, -1 if unknown */
	uint32_t merged;    /* further wakes merged into it */
	uint8_t spawn;	    /* 1: made ready by its spawn */
};

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
void delays_feed__free(struct delays_feed *f);
/* With a join that lists only some polls (a keep): list those the first
 * @keep->top delays of the kept tasks (0: all) show, the poller's and
 * the waker's from the wake to the poll, and those of @keep->also, in one
 * join of the trace; then find those delays' polls again (waker_poll and
 * poll: -1 before, for a poll not listed). 0, -ENOMEM or a walk's
 * error. */
int delays__list_polls(struct delays *d, struct join *j, const struct delays_keep *keep);
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

struct delays_opts {
	uint64_t min_ns; /* only delays at least this long */
	size_t limit;	 /* rows; 0 = all */
	int json;	 /* JSON (schema in d9prof(1)) instead of text */
	int no_lost;	 /* text: leave out the never-polled footer */
	int no_losses;	 /* leave out what was lost (the "# lost:"
			  * footer, JSON "losses"): the report says
			  * it once */
	size_t *shown;	 /* out: rows printed */
	size_t width;	 /* text: cut each row to this many characters,
			  * ".." marking the cut (0: whole rows) */
};

/* The delay table, worst first: DELAY, TASK, WOKEN (seconds since the
 * start), BY (the task polled on the waking thread, else that thread),
 * POLLED-ON (thread and poll id), CAUSE (delays__causes() on the polling
 * thread over the delay, largest first, a poll's with the three innermost
 * distinct frames of its hottest stack; when the polling thread was
 * mostly parked or idle and the waker is another thread that polls, that
 * thread's causes too: the task waited in its queue). Footers "#" say how
 * many, and list tasks woken and never polled again. 0, -ENOENT (task not
 * in the trace), -ENOMEM, -EIO. */
int analysis__delays(const struct offcpu *oc, const struct delays *d,
		     const struct delays_opts *o, FILE *out);

/* ---- the application's spans and events (spans.c, span_table.c) ------ */

/*
 * A span instance lives from its NEW to its CLOSE (trace_span). An id
 * created again before its CLOSE ends the instance before it there
 * (open_end). A record of an id never created in the trace (created before
 * the recording, or its NEW lost) makes an instance named by nothing
 * (SPANS_UNNAMED) from where the shim's records begin (open_start). It is
 * entered on a thread from an ENTER to the EXIT of the same span on the
 * same thread (the latest enter of it there); an EXIT with no ENTER was
 * entered from the instance's creation or the records' start
 * (open_start), an enter still open at its span's CLOSE or at the end
 * ends there (open_end), and an instance never closed ends at the
 * recording end (open_end: its duration is a lower bound). Enters of one
 * thread nest (enter A, enter B, exit B, exit A): a time inside B is
 * inside A too, and a sample there counts for both.
 */
struct span_enter {
	uint64_t start, end;
	uint32_t tid;
	uint32_t span; /* index in spans.v */
	uint32_t up;   /* the enter of the same thread it is nested in
			* (index in spans.enters), UINT32_MAX none */
	uint8_t open_start, open_end;
};

#define SPANS_UNNAMED	"[span created before the recording]"
#define SPANS_NO_NAME	"[unnamed span]" /* created with no name */
#define SPAN_FIELDS_MAX 200		 /* bytes of "key=value ..." kept per span */
#define SPANS_OPEN_MAX	4096		 /* enters open at once on a thread */

struct span {
	uint64_t id;		 /* the application's */
	const char *name;	 /* NULL: not created in the trace */
	char *fields;		 /* "key=value key=text", NULL if none */
	uint64_t parent;	 /* the parent's id; 0: none, or not alive
				  * in the trace when this one was created */
	const char *parent_name; /* its spans_name() */
	uint64_t seq;		 /* creation order */
	uint64_t created;	 /* ns */
	uint64_t closed;	 /* ns (the end, open_end) */
	uint8_t open_start;	 /* created before the trace: a lower bound */
	uint8_t open_end;	 /* never closed in it: a lower bound */
	int kept;		 /* spans__select() */
	uint32_t nenters;	 /* enters */
	uint64_t entered_ns;	 /* sum of its enters' lengths */
	uint64_t samples;	 /* CPU sample weight inside its enters */
	uint64_t blocked_ns;	 /* off-CPU inside its enters: blocked */
	uint64_t runq_ns;	 /* ... runnable, waiting for a CPU */
};

/* The instances of one name, summed: COUNT, duration P50, P99 (nearest
 * rank, exact to LIB_HIST_EXACT instances, then within 1%), MAX and
 * TOTAL, and the sums of their struct span figures. */
struct span_row {
	const char *name; /* spans_name() */
	uint64_t n, p50, p99, max, total;
	uint64_t entered, samples, blocked, runq, waiting;
	uint64_t open; /* never closed, or created before the trace */
};

/* What spans__new_keep() keeps whole of the instances (the rows, the
 * counts and the events it always keeps): every instance and enter
 * (@all); or those entered where a sample or, with off-CPU data, a
 * switch out fell, with those enters only (@at: what spans__at() and
 * the span filter answer there, for the samples and off-CPU intervals,
 * bounded by their number); or the slowest @top instances (SIZE_MAX:
 * every one) named @name (NULL: any) that lasted at least @min_ns, with
 * their enters. The rest of each instance is summed into its row as it
 * closes, so that memory is bounded by the instances alive at once, not
 * by those in the trace. Instances named @name of at least @min_ns are
 * counted (spans.nmatched). */
struct spans_keep {
	int all;
	int at;
	/* with @at and @longer, also the enters longer than @enter_longer_ns
	 * and the instances that lasted longer than @longer_ns: the chrome
	 * export's cut */
	int longer;
	uint64_t enter_longer_ns, longer_ns;
	int hists; /* fill spans.enter_hist, life_hist, nenters_all */
	const char *name;
	uint64_t min_ns;
	size_t top;
	uint64_t over_ns; /* count the instances at least this long
			   * (spans.nover); 0: none */
};

struct spans {
	const struct join *join;
	struct span *v; /* those kept (all, or spans_keep's), in creation
			 * order */
	size_t n;
	struct span_enter *enters; /* theirs, sorted by (tid, start), outer
				    * first */
	size_t nenters;
	struct span_row *rows; /* one per name, of every instance */
	size_t nrows;
	uint64_t ninstances;  /* in the trace (with a window: not closed
			       * before it) */
	uint64_t nmatched;    /* of them, spans_keep.name and min_ns's */
	uint64_t nover;	      /* at least spans_keep.over_ns long */
	uint64_t nenters_all; /* with spans_keep.hists: every enter, and
			       * the distributions of their lengths and of
			       * the instances' lives */
	struct lib_hist enter_hist, life_hist;
	struct spans_keep keep;	   /* what v holds */
	struct trace_span *events; /* the application's events, by time */
	size_t nevents;
	uint64_t unmatched_exits; /* EXITs with no ENTER on their thread */
	uint64_t enters_refused;  /* ENTERs left out: a thread had
				   * SPANS_OPEN_MAX open */
	uint64_t late_records;	  /* records that came more than 2 s after
				   * later ones: built out of order */
	double period_ns;	  /* one sample's worth (0: unknown) */
	int selected;		  /* spans__select() was called */
	size_t nkept;
};

/* Instances, enters and events of @j's trace (trace.spans), with their
 * CPU samples and, if @oc is not NULL, their off-CPU time, all of them
 * kept (spans_keep.all). With a window: spans closed before it are left
 * out; those overlapping it keep their whole life (created to closed)
 * and enters, their CPU and off-CPU counted inside it. One walk of the
 * span records, one of the samples. 0, -ENOMEM or a walk's error. */
int spans__new(const struct join *j, const struct offcpu *oc, struct spans **out);
/* spans__new() keeping whole only what @keep says. */
int spans__new_keep(const struct join *j, const struct offcpu *oc,
		    const struct spans_keep *keep, struct spans **out);
void spans__free(struct spans *sp);
/* Were @sp's kept instances and counts built for the instances named
 * @name (NULL: all) that lasted at least @min_ns (spans_keep.all: for
 * any)? */
int spans__built_for(const struct spans *sp, const char *name, uint64_t min_ns);
/* Keep the instances named @name (NULL: all) that lasted at least
 * @min_ns. 0, or -ENOENT if none is kept. Without spans_keep.all, only
 * the @name and @min_ns it was built with: -EINVAL for others. */
int spans__select(struct spans *sp, const char *name, uint64_t min_ns);
/* Was thread @tid inside a kept span (all before spans__select()) at
 * @time? These three need spans_keep.all, or with spans_keep.at, a
 * @time of a sample or switch out of @tid. */
int spans__kept_at(const struct spans *sp, uint32_t tid, uint64_t time);
/* The innermost span entered on @tid at @time (index in spans.v), or -1
 * (also for a NULL @sp). */
int32_t spans__at(const struct spans *sp, uint32_t tid, uint64_t time);
/* The end of that innermost entry, or UINT64_MAX (none, or a NULL @sp). */
uint64_t spans__enter_end(const struct spans *sp, uint32_t tid, uint64_t time);
/* @s's name: SPANS_UNNAMED for one not created in the trace,
 * SPANS_NO_NAME for one created without a name. */
const char *spans_name(const struct span *s);

enum spans_sort {
	SPANS_BY_P99 = 0, /* default */
	SPANS_BY_COUNT,
	SPANS_BY_MAX,
	SPANS_BY_TOTAL,
	SPANS_BY_CPU,
	SPANS_BY_BLOCKED,
	SPANS_BY_NAME,
};

struct spans_opts {
	const char *name;     /* only spans of this name (NULL: all) */
	uint64_t min_ns;      /* instances: only those at least this long */
	int instances;	      /* the slowest instances, each explained,
			       * instead of one row per name */
	enum spans_sort sort; /* rows */
	size_t limit;	      /* rows or instances (0: all) */
	int json;
};

/* One row per span name: COUNT, duration P50, P99, MAX (created to
 * closed, nearest rank), then per span on average ENTERED, CPU (samples
 * while entered, as time), BLOCKED and RUNQ (off-CPU while entered:
 * "-" without off-CPU data) and WAITING (alive, not entered: to be
 * polled, or for I/O); or, with @o->instances, the slowest instances
 * (@o->min_ns and @o->name kept), each with where its time went: entered
 * on which threads, in polls of which tasks, what those threads did
 * meanwhile (delays__causes(): CPU in which code, blocked in which call,
 * run queue behind whom), and of the time not entered, how long a task
 * that served it was woken and not yet polled (@d's delays). 0, -ENOENT
 * (no span matches: nothing written), -ENODATA (the trace has no spans),
 * -ENOMEM, -EIO. */
/* With a join that lists only some polls (a keep): list also those the
 * instances analysis__spans() explains for @o were entered in (none for
 * rows). Their wakes then need only delays_keep.listed. 0, -ENOMEM or a
 * walk's error. */
int spans__list_polls(const struct spans *sp, struct join *j, const struct spans_opts *o);
int analysis__spans(const struct spans *sp, const struct offcpu *oc,
		    const struct delays *d, const struct spans_opts *o, FILE *out);

struct events_opts {
	const char *name; /* only events of this name (NULL: all) */
	int json;
};

/* One row per application event name: COUNT, then its values' MIN, P50,
 * P99, MAX and SUM, and the most frequent TEXT. 0, -ENOENT (no such
 * event), -ENODATA (none in the trace), -ENOMEM, -EIO. */
int analysis__events(const struct spans *sp, const struct events_opts *o, FILE *out);

/* ---- live: the running process's tasks as they are now (live.c) ------ */

/*
 * `d9prof top`'s numbers: a trace writer's tap (trace_writer__set_tap(),
 * record_opts.tap) feeds what the recorder writes, as it writes it; a
 * snapshot each interval says what each task, task name or thread did in
 * it. Thread-safe: one thread feeds (the recorder's), another snapshots.
 * Memory: at most 65536 threads and as many live tasks (more are refused
 * and counted), a task forgotten once it ended and was shown.
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
	uint64_t state_ns;
	uint64_t nzc; /* of its tasks, zero-code ones (no polls known) */
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

/* What the recording lost so far (record_stats' counts) */
struct live_lost {
	uint64_t samples, shim, offcpu, wakeups, ctimer;
};

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
	size_t nstacks; /* hottest first */
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
/* 1 once after @ctx (a struct live) was enabled again: the recorder
 * should name every task and thread again (record_opts.names_wanted). */
int live__names_wanted(void *ctx);
/* Snapshots from now on carry the hottest stacks of task @task (0: none),
 * counted from now on. */
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

/* Report's red-flag thresholds, which top's warnings share. */
#define ANALYSIS_FLAG_LONG_POLL_NS (10 * 1000000ULL)
#define ANALYSIS_FLAG_DELAY_NS	   (5 * 1000000ULL)

enum top_sort {
	TOP_BY_CPU = 0, /* default */
	TOP_BY_POLLS,
	TOP_BY_MAX,
	TOP_BY_DELAY,
	TOP_BY_BLOCKED,
	TOP_BY_RUNQ,
	TOP_BY_NAME,
};

struct top_opts {
	enum top_sort sort;
	size_t limit;	    /* rows at most; 0: all */
	size_t width;	    /* characters a text line may take (columns go
			     * last priority first, names shorten); 0: any */
	const char *filter; /* only rows whose name holds it */
	int json;	    /* one JSON object (schema in d9prof(1)) */
	int selected;	    /* text: the row marked '>' (-1: none) */
	const char *title;  /* "pid 4242 (demo) - 14:02:03" */
};

/* One frame of `d9prof top` from @s: a header (the threads' time in the
 * interval: in polls, outside, parked, and blocked and on the run queue;
 * CPU sampled, outside polls, what was lost), warnings ("! long poll (>=
 * 10ms): ...", "! worker stuck in one poll (>= 1s)", "! wake-to-poll
 * delay (>= 5ms): ... woken 7ms ago, not polled yet": report's flags as
 * they hold now), and a row per task (or name, or thread) that did
 * something: CPU%, POLLS/S, MEAN and MAX poll, DELAY-P99, BLOCKED, RUNQ,
 * STATE. 0, -ENOMEM or -EIO. */
int analysis__top(const struct live_snap *s, const struct top_opts *o, FILE *out);
/* The task of row @row (0: the first) of the table analysis__top() shows,
 * by task; 0 for none, or rows by name or thread. */
uint64_t analysis__top_row_id(const struct live_snap *s, const struct top_opts *o,
			      int row);

/* ---- the one-page report (report.c) ---------------------------------- */

/* `d9prof report`: what was recorded and lost; per worker, time in polls
 * (CPU, blocked, run queue), outside polls and parked; the longest polls
 * and what filled them; the worst delays (analysis__delays()); run-queue
 * time per worker and who had the CPU; the application's spans (@sp,
 * NULL or empty: none), slowest first, and the slowest explained
 * (analysis__spans()); each busy task's hottest stack; tasks woken and
 * never polled again, and spawned and never ended; red flags with their
 * thresholds and the next command to run, given the inputs' options @args
 * ("-i FILE --from 2.5", NULL: none) so that it can be pasted. @json: the
 * same as one JSON object (schema in d9prof(1)). 0, -ENOMEM, -EIO. */
int analysis__report(const struct offcpu *oc, const struct delays *d,
		     const struct spans *sp, const char *args, int json, FILE *out);

/* The report in one row, for a fleet's table (`d9prof fleet`). */
struct report_row {
	uint64_t span_ns; /* recorded */
	uint64_t polls, samples;
	double cpu_pct;		 /* sampled CPU, % of one CPU over the span */
	uint64_t worst_poll_ns;	 /* the longest poll */
	uint64_t worst_delay_ns; /* the worst wake-to-poll delay */
	double runq_pct;	 /* the workers' time waiting for a CPU, % */
	size_t nflags;		 /* red flags */
	char flags[256];	 /* their names, worst first, ", " between */
};
/* The polls report lists (join__new_keep()): the longest, and a count
 * of the long ones its flag says. */
struct join_keep analysis_report_join_keep(void);
/* The windows of the polls report explains beyond its delays' (the
 * longest: their threads from their start to their end), from @j's
 * listed polls, in @w (room for 8); their number returned. */
size_t analysis_report_windows(const struct join *j, struct join_window *w);
/* What the report needs listed of the delays (delays__new()): the worst
 * it shows, and where @sp has spans those the polls of the span it
 * explains ended (listed first: spans__list_polls()); those over its red
 * flag's threshold counted. */
struct delays_keep analysis_report_keep(const struct spans *sp);
/* What the report needs kept of the spans (spans__new_keep()): the
 * slowest, explained, and a count of the slow ones its flag says. */
struct spans_keep analysis_report_spans_keep(void);
/* What analysis__report() says, as one row. 0 or -ENOMEM. */
int analysis__report_row(const struct offcpu *oc, const struct delays *d,
			 const struct spans *sp, struct report_row *out);

/* ---- what a trace holds (info.c) ------------------------------------- */

struct info_opts {
	int json;	   /* one JSON object (schema in d9prof(1)) */
	const char *input; /* the file to name for segments the reader
			    * did not name (one file read) */
};

/* `d9prof info`: target (pid, comm, cmdline), host and kernel, recorder,
 * sampler, event and frequency, off-CPU and wakeup sources; the span
 * covered (CLOCK_MONOTONIC and, with meta "clock_realtime", wall clock;
 * for a trace cut short, up to its last record, which takes a walk of its
 * samples and events); the segments (with more than one, or gaps, a list
 * of each and of the gaps between them), copies skipped, those cut short;
 * record and name counts; every loss (analysis_losses()); the dump's
 * reasons (meta "dump_reason", each distinct one) and the target's end
 * (meta "target_exit", "target_exit_time"). Every key is optional. Needs
 * no join: read @t with TRACE_READ_NO_INLINE for the recorded frames.
 * 0, -ENOMEM, -EIO, or a walk's error (-EBADMSG: trace__error()). */
int analysis__info(const struct trace *t, const struct info_opts *o, FILE *out);
/* "12 segments from 3 files, 1 copy skipped, 1 gap (2.00s not recorded)"
 * into @buf when @t skipped copies of segments or has gaps between them;
 * "" otherwise. Returns @buf. */
char *analysis_segments_text(const struct trace *t, char *buf, size_t len);

/* ---- what was lost (losses.c) --------------------------------------- */

/* The data a loss leaves short; a view passes the ones it shows. */
enum loss_data {
	LOSS_CPU = 1 << 0,     /* CPU samples */
	LOSS_OFFCPU = 1 << 1,  /* switches: off-CPU intervals */
	LOSS_POLLS = 1 << 2,   /* shim events: polls, tasks, wakes, spawns */
	LOSS_WAKEUPS = 1 << 3, /* kernel wakeups: blocked vs run-queue time */
	LOSS_ALL = 0xf,
};

#define LOSS_KINDS    20  /* kinds of loss a trace can record */
#define LOSS_TEXT_MAX 768 /* room for analysis_losses_text() */

struct loss {
	const char *key;      /* JSON key: "samples", "switch_records", ... */
	const char *what;     /* text after the count: "samples (perf ring
			       * full)" (static) */
	uint64_t count;	      /* > 0 */
	unsigned int affects; /* enum loss_data bits */
	const char *advice;   /* the recording that would lose less of it
			       * ("d9prof record -F 499  # fewer samples": a
			       * command, then why as a shell comment),
			       * NULL where none would */
};

/* The losses recorded in @t that leave short any of the data in @affects
 * (enum loss_data bits), in a fixed order, into @out (room for LOSS_KINDS
 * entries): perf ring overflows (PERF_RECORD_LOST), ctimer samples the
 * shim dropped, ctimer samples the recorder refused (not real, or faster
 * than the sampler can take them), forked children's samples left out, CPU samples whose
 * user stack is cut short (analysis_stack_cut(); counted by one walk of
 * the samples, kept for the next call on the same @t), switch records lost,
 * switch-outs whose switch-in was lost, off-CPU stacks whose unwind
 * stopped short, wakeups lost, shim records dropped, threads without a
 * shim ring, lease lapses, shim records dropped as garbage, open state
 * a segment's STATE could not carry (record/livestate.h), and gaps
 * between segments (trace.h). Values summed over segments. Returns
 * how many (0: nothing lost). */
size_t analysis_losses(const struct trace *t, unsigned int affects, struct loss *out);
/* Is stack @stack of @t cut short: does its outermost user frame fail to
 * be a thread's root (_start, __libc_start_main, __libc_start_call_main,
 * main, start_thread, clone, clone3, Rust's thread_start, Go's
 * runtime.goexit and the like)? A frame-pointer walk through code built
 * without them stops at the first such frame. 1 cut, 0 whole, -1 no user
 * frame (kernel only, or no such stack): not counted either way. */
int analysis_stack_cut(const struct trace *t, uint32_t stack);
/* The same as one line, "lost: 3 samples (perf ring full), 1 ...", in
 * @buf (cut to @len); "" when nothing was lost. Returns @buf. */
char *analysis_losses_text(const struct trace *t, unsigned int affects, char *buf,
			   size_t len);
/* "# lost: ...\n" on @out, nothing when nothing was lost. 0 or -EIO. */
int analysis_losses_footer(const struct trace *t, unsigned int affects, FILE *out);
/* A member "losses":{"samples":3,...} (keys of struct loss) of the
 * object open in @w (lib/json.h); nothing when nothing was lost. Returns
 * lib_json_error(@w). */
struct lib_json;
int analysis_losses_json(const struct trace *t, unsigned int affects, struct lib_json *w);

/* ---- exports to other tools' formats (export_pprof.c) ---------------- */

enum export_format {
	EXPORT_PPROF = 1,      /* gzipped profile.proto (google/pprof) */
	EXPORT_SPEEDSCOPE = 2, /* speedscope's JSON file format */
	EXPORT_CHROME = 3,     /* Trace Event Format JSON (Perfetto UI,
				* Chrome DevTools) */
};

struct export_result {
	uint64_t samples;	/* CPU samples kept */
	uint64_t weight;	/* their weight */
	uint64_t switches;	/* off-CPU intervals kept (offcpu) */
	uint64_t pprof_samples; /* distinct (stack, labels) written */
	uint64_t locations, functions, mappings;
	uint64_t bytes;	    /* the profile before gzip */
	int period_guessed; /* no usable meta "frequency": 999 Hz */
	/* chrome: its size in full, estimated before writing, and past
	 * export_opts.max_bytes how it was cut down to fit */
	uint64_t full_bytes;
	int cut;	      /* 1: polls cut down (what follows) */
	uint64_t whole_polls; /* polls longer than whole_ns, whole */
	uint64_t whole_ns;
	uint64_t merged_polls;	    /* the others, merged per run_by (a task,
				     * else a task name, else a thread) ... */
	int run_by;		    /* ... (enum group_by) ... */
	uint64_t runs;		    /* ... into this many runs, */
	uint64_t run_ns;	    /* ... each within this long */
	uint64_t span_enters;	    /* span enters written, */
	uint64_t spans;		    /* ... span lives written: */
	int span_cut;		    /* 1: only those longer than these, */
	uint64_t enter_ns, life_ns; /* ... the others left out */
};

struct export_opts {
	enum export_format format;
	int offcpu;		      /* also off-CPU time (needs an offcpu join;
				       * pprof only) */
	enum group_by by;	      /* speedscope: a profile per group (0: by task) */
	const struct spans *spans;    /* the application's spans, NULL: none
				       * (chrome: their slices and events;
				       * pprof: the span label; speedscope:
				       * by GROUP_SPAN) */
	struct export_result *result; /* out, filled if non-NULL */
	uint64_t max_bytes;	      /* chrome: what a viewer opens (0: no
				       * bound; see analysis__export_chrome) */
};

/* pprof: @j's CPU samples (and with @o->offcpu, @oc's off-CPU intervals
 * in polls or in no poll; parked time is left out) as one gzipped
 * profile.proto on @out. Sample types samples/count (sample weight),
 * cpu/nanoseconds (weight x 1e9 / meta "frequency", 999 Hz if absent) and
 * with offcpu off-cpu/nanoseconds (struct offcpu_switch.ns); period_type
 * cpu/nanoseconds. Each pprof sample is one (stack, poll) or, outside
 * polls, (stack, thread), values summed, labelled task_id (num; 0 outside
 * polls), task_name ("[no poll]" outside polls, "" for an unnamed task),
 * thread (its name), tid (num), inside a poll, poll (num: the poll id
 * of `d9prof polls`) and, inside a span of @o->spans, span (the innermost
 * one's name) and span_id (num: the application's id). One Location per recorded frame
 * address, the functions inlined there as its first Lines (innermost first); Functions
 * named by their symbol (an unresolved frame as analysis_frame_label() names it),
 * filename the module; one Mapping per module with its build id (meta
 * "buildid PATH"), address range of its frames and, where a frame at its
 * lowest address was left unresolved, its file offset. time_nanos from
 * the first segment's clock_realtime, duration_nanos the span joined.
 * @j lists the polls samples fell in (join_keep.sampled) or every poll
 * (JOIN_POLL_LIST), and with offcpu those off-CPU time began in.
 * Returns 0, -EINVAL (bad arguments, or offcpu
 * without @oc), -ENOENT if the selection keeps no task (nothing written), -ENODATA
 * if nothing matched (a valid empty profile is still written), -ENOMEM,
 * -EIO, or a walk's error (-EBADMSG: trace__error()). */
int analysis__export_pprof(const struct join *j, const struct offcpu *oc,
			   const struct export_opts *o, FILE *out);

/* speedscope (export_speedscope.c): @j's CPU samples as the tree
 * analysis__flame() builds for @j's selection and @o->by (0: GROUP_TASK), in
 * speedscope's file format: one "sampled" profile per root of that tree
 * ("task ID name", "[no poll]", a thread's "name[tid]"...), busiest
 * first; a sample per distinct stack, root first, as indices into
 * shared.frames (one per frame label as analysis_frame_label() writes it, "file"
 * its module); weights in nanoseconds (sample weight x 1e9 / frequency,
 * 999 Hz if absent), endValue the profile's total. Time order within a
 * profile is not kept. result: samples, weight, pprof_samples (speedscope
 * samples written), functions (shared frames). 0, -EINVAL (bad arguments,
 * offcpu), -ENOENT if the selection keeps no task, -ENODATA if nothing matched (a
 * valid file with no profiles is still written), -ENOMEM, -EIO, or a
 * walk's error. */
int analysis__export_speedscope(const struct join *j, const struct export_opts *o,
				FILE *out);

/* chrome (export_chrome.c): @oc's join as a timeline in the Trace Event
 * Format's object form for Perfetto UI and Chrome DevTools, streamed
 * (but for the samples, kept until the end: 16 bytes each), times in us
 * from the trace's start (join.origin): per thread of the target a
 * thread_name ("M") event; per poll a complete ("X", cat "task") slice
 * "task ID name" (args poll, task, samples, offcpu_ns, runq_ns, top);
 * per parked interval (offcpu__parks) a slice "parked"; per off-CPU
 * interval a slice "off-CPU (blocked)" or "off-CPU (preempted)" lasting
 * its weight (struct offcpu_switch.ns: clipped to its poll), args runq_ns
 * (and holder, top), "sf" its stack; per thread with CPU samples a Chrome
 * CPU profile: a "Profile" ("P") event and "ProfileChunk" events with the
 * thread's call-tree nodes once and each sample as a node id and a time
 * delta in us (a sample of weight w is w samples); with @d, per delay
 * ended by a poll an instant "wake task N" on the waker and a flow ("s"
 * there, "f" with bp "e" on the poller at the poll's begin, one id, cat
 * "task"); with @o->spans, per span enter a slice (cat "span") named
 * after the span on its thread (args span, fields), per span its life as
 * an async slice ("b"/"e", cat "span", id its index + 1; args span,
 * parent, fields, entered_ns) and per application event an instant
 * (cat "event", args value, text). Stacks are nodes of one tree of
 * function paths, written as the top-level "stackFrames" dictionary (id
 * -> name, parent) too. With a selection (join__select()): only its
 * tasks' polls, the samples and off-CPU intervals in them and the wakes
 * that ended in them (no parks, no spans).
 * What a viewer opens: the size in full is estimated before writing
 * (result.full_bytes); past @o->max_bytes the polls are cut down to fit:
 * the longest whole, as many as half the bound holds (result.whole_polls,
 * those longer than whole_ns), with their wakes' flows; the others merged
 * into runs on tracks of their own, per task, else per task name, else
 * per thread (run_by: the first whose tracks fit), "N polls" slices
 * within run_ns, args polls and busy_ns, as many as a quarter holds;
 * spans that take more than an eighth of it are cut to that: the enters
 * longer than enter_ns and the lives longer than life_ns (the longest
 * that a sixteenth, a thirty-second hold), the first events that a
 * thirty-second holds (span_cut).
 * @oc's join lists what analysis_chrome_keep() says (or every poll);
 * the runs come from a second streamed join (join_for_each_poll()). @d
 * lists the delays those listed polls ended (delays_keep.listed), or all.
 * result: samples (trace samples), switches, pprof_samples (poll
 * slices), functions (stack frame nodes). 0, -EINVAL, -ENOENT if no task
 * matches the selection, -ENODATA if no poll and no sample is written (a valid
 * file still is), -ENOMEM, -EIO, or a walk's error. */
struct delays;
int analysis__export_chrome(const struct offcpu *oc, const struct delays *d,
			    const struct export_opts *o, FILE *out);
/* What the chrome export of @o and the tasks @sel keeps needs its join to
 * list: the longest polls, as many as could be written uncut (a bound
 * of @o->max_bytes; all of them with none), and the polls samples fell
 * in, for a selection. */
struct join_keep analysis_chrome_keep(const struct export_opts *o,
				      const struct task_sel *sel);

#endif /* D9_ANALYSIS_H */
