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
 * the same task on the same thread. A poll whose begin happened before the
 * recording started (its end is the first event of that thread) starts at
 * the recording start; one still running at the end ends at the recording
 * end (or the thread's last event) and has open_end set. */
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
 * whose [start, end] on the sample's thread contains the sample time.
 * Returns 0 or -ENOMEM. */
int join__new(const struct trace *t, struct join **out);
/* The poll running on @tid at @time, or NULL. */
const struct poll *join__poll_at(const struct join *j, uint32_t tid,
				 uint64_t time);
const struct task_stat *join__task(const struct join *j, uint64_t task);
void join__free(struct join *j);

/* ---- frame labels --------------------------------------------------- */

/* Render frame @id of @t into @buf: the symbol, else "module+0xoff", else
 * "0xaddr"; kernel frames end in "_[k]" (the flamegraph.pl convention).
 * Characters ';' and newline are replaced so that folded output stays
 * parseable. Returns @buf. */
char *frame_label(const struct trace *t, uint32_t id, char *buf, size_t len);

/* ---- flamegraphs ---------------------------------------------------- */

/* A flamegraph under construction: a tree of frames with weights. Memory
 * grows with distinct stacks, not with samples. */
struct flame;

struct flame *flame__new(void);
/* Add @weight to the path @frames[0] (root) .. @frames[n-1] (leaf). */
int flame__add(struct flame *f, const char *const *frames, size_t n,
	       uint64_t weight);
uint64_t flame__total(const struct flame *f);
/* "root;...;leaf weight\n" lines, sorted, as flamegraph.pl/inferno/
 * speedscope read them. */
int flame__write_folded(const struct flame *f, FILE *out);
/* A self-contained interactive SVG (hover details, click to zoom, search,
 * reset) with @title and @subtitle (may be NULL); @unit names the weight
 * ("samples", "us"). */
int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit);
void flame__free(struct flame *f);

/* ---- the commands' work --------------------------------------------- */

enum flame_format {
	FLAME_SVG = 0,
	FLAME_FOLDED = 1,
};

struct flame_opts {
	int have_task;		/* keep only samples inside polls of task */
	uint64_t task;
	enum flame_format format;
	const char *title;	/* NULL: a default naming the trace */
};

/* CPU flamegraph of @j's trace. Without have_task, every sample is kept
 * under a root frame "task ID name" or "[no poll]"; with it, only samples
 * inside polls of that task, rooted at its first frame. Returns 0,
 * -ENOENT if have_task names a task the trace does not know, -ENODATA if
 * nothing matched (an empty graph is still written). */
int analysis__flame(const struct join *j, const struct flame_opts *o,
		    FILE *out);

/* The task table: id, name, polls, samples, total and longest poll time,
 * sorted by samples then total time, descending. */
int analysis__tasks(const struct join *j, FILE *out);

#endif /* D9_ANALYSIS_H */
