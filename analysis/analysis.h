/* SPDX-License-Identifier: MIT */
/*
 * analysis.h - join samples to polls, and render flamegraphs and tables.
 *
 * Works on a struct trace held in memory (trace/trace.h); no option
 * parsing, no exit(): every function returns 0 or -errno and writes only
 * to the FILE it is given.
 */
#ifndef D9_ANALYSIS_H
#define D9_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* ---- the join ------------------------------------------------------- */

/* One poll: the interval between D9_EV_POLL_BEGIN and D9_EV_POLL_END of
 * the same task on the same thread, events taken per thread in time order
 * (file order for equal times).
 *  - An END that is the thread's first poll event began before the
 *    recording: the poll starts at the recording start (counters.start_time,
 *    else the earliest time in the trace), or at the thread's THREAD_START
 *    if one came first, and has open_start set.
 *  - A BEGIN while a poll is open, THREAD_STOP, or THREAD_START (tid reuse)
 *    ends the open poll there, with open_end set (its END was lost).
 *  - A poll still open at the end ends at counters.end_time (else the last
 *    time in the trace), with open_end set.
 *  - Any other END (nothing open, or another task's) is counted in
 *    join.unmatched_ends and ignored.
 * Polls of one thread never overlap. */
struct poll {
	uint64_t start;
	uint64_t end;
	uint64_t task;
	uint32_t tid;
	uint32_t id;		/* index in join.polls, in start order */
	uint32_t samples;	/* CPU samples (weight) that fell inside */
	uint8_t open_start;
	uint8_t open_end;
};

struct task_stat {
	uint64_t task;
	const char *name;	/* from the trace, NULL if unnamed */
	uint64_t polls;
	uint64_t samples;	/* sample weight inside its polls */
	uint64_t total_ns;	/* sum of poll durations */
	uint64_t longest_ns;
};

struct join {
	const struct trace *trace;
	struct poll *polls;		/* sorted by (start, tid) */
	size_t npolls;
	int32_t *sample_poll;		/* per trace sample: poll index or -1 */
	struct task_stat *tasks;	/* sorted by task id */
	size_t ntasks;
	uint64_t unmatched_ends;	/* POLL_END with no matching begin */
};

/* Build polls from the trace's events and assign every sample to the poll
 * whose [start, end] on the sample's thread contains the sample time (both
 * ends inclusive; where a poll ends at the very ns the next one starts, the
 * later poll wins). A sample weight of 0 counts as 1. j->tasks lists every
 * task the trace names or any event mentions, polled or not; names point
 * into @t, which must outlive the join. O((S + E) log P).
 * Returns 0, -ENOMEM, or -EOVERFLOW (more than 2^31 polls). */
int join__new(const struct trace *t, struct join **out);
/* The poll running on @tid at @time, or NULL. */
const struct poll *join__poll_at(const struct join *j, uint32_t tid,
				 uint64_t time);
const struct task_stat *join__task(const struct join *j, uint64_t task);
void join__free(struct join *j);

/* ---- frame labels --------------------------------------------------- */

/* Render frame @id of @t into @buf: the symbol, else "module+0xoff" (the
 * module's base name), else "0xaddr"; kernel frames end in "_[k]" (the
 * flamegraph.pl convention). ';' becomes ':' and control characters '?'
 * so that folded output stays parseable; a label cut to fit @len keeps its
 * "_[k]" and whole UTF-8 characters. A bad id gives "[bad frame ID]".
 * Returns @buf. */
char *frame_label(const struct trace *t, uint32_t id, char *buf, size_t len);

/* ---- flamegraphs ---------------------------------------------------- */

/* A flamegraph under construction: a tree of frames with weights. Memory
 * grows with distinct stacks, not with samples. */
struct flame;

struct flame *flame__new(void);
/* Add @weight to the path @frames[0] (root) .. @frames[n-1] (leaf); n == 0
 * counts in the total only. Labels are copied. 0, -EINVAL or -ENOMEM. */
int flame__add(struct flame *f, const char *const *frames, size_t n,
	       uint64_t weight);
uint64_t flame__total(const struct flame *f);
/* "root;...;leaf weight\n" lines, one per distinct path with weight
 * ending there, in byte order (as `LC_ALL=C sort`), as flamegraph.pl/
 * inferno/speedscope read them. 0, -ENOMEM or -EIO. */
int flame__write_folded(const struct flame *f, FILE *out);
/* A self-contained interactive SVG (hover details, click to zoom, search,
 * reset) with @title and @subtitle (may be NULL); @unit names the weight
 * ("samples", "us"; NULL = "samples"). Frames narrower than 0.1 px are
 * left out, so the size is bounded whatever the number of stacks. All
 * text is XML-escaped (invalid UTF-8 becomes '?'). 0, -ENOMEM or -EIO. */
int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit);
void flame__free(struct flame *f);

/* ---- the commands' work --------------------------------------------- */

enum flame_format {
	FLAME_SVG = 0,
	FLAME_FOLDED = 1,
};

/* What analysis__flame() drew, for the CLI to report. */
struct flame_result {
	uint64_t samples;	/* samples kept */
	uint64_t weight;	/* their weight (the graph's total) */
	uint64_t stacks;	/* distinct (root, stack) pairs */
};

struct flame_opts {
	int have_task;		/* keep only samples inside polls of task */
	uint64_t task;
	enum flame_format format;
	const char *title;	/* NULL: a default naming the trace */
	struct flame_result *result;	/* out, filled if non-NULL */
};

/* CPU flamegraph of @j's trace, stacks root to leaf under a first frame
 * "task ID name" ("task ID" if unnamed) for samples inside a poll, or
 * "[no poll]". With have_task, only samples inside polls of that task
 * (the graph keeps its "task ID name" root, so it says what it shows).
 * Weight = sample weight. Returns 0, -ENOENT if have_task names a task
 * neither named in the trace nor mentioned by any event (nothing is
 * written), -ENODATA if nothing matched (a valid empty graph is still
 * written), -ENOMEM, or -EIO if writing failed. */
int analysis__flame(const struct join *j, const struct flame_opts *o,
		    FILE *out);

/* The task table: id, name, polls, samples, share of all samples, total,
 * mean and longest poll time, sorted by samples then total time,
 * descending (then id); a footer line starting "#" gives samples inside
 * and outside polls, and unmatched poll ends / lost samples when there
 * are any. 0, -ENOMEM or -EIO. */
int analysis__tasks(const struct join *j, FILE *out);

#endif /* D9_ANALYSIS_H */
