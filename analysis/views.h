/* SPDX-License-Identifier: MIT */
/*
 * views.h - the views and exports (analysis/views/): each one's options and
 * its analysis__NAME entry point, the only names of a view another file
 * may call. A view calls the core (the other headers of analysis/) and,
 * where it composes others as report does, their entry points here.
 */
#ifndef D9_ANALYSIS_VIEWS_H
#define D9_ANALYSIS_VIEWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/live.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"

struct lib_json;

/* ---- flame (flame_view.c) ------------------------------------------ */

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

/* ---- delays (delay_table.c) ---------------------------------------- */

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

/* analysis__delays()'s JSON object as a value in @w (the report's
 * "delays"), @o->json aside. 0, -ENOENT (no such task), -ENOMEM, or
 * lib_json_error(@w). */
int analysis__delays_json(const struct offcpu *oc, const struct delays *dl,
			  const struct delays_opts *o, struct lib_json *w);

/* ---- spans and events (span_table.c) ------------------------------- */

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
int analysis__spans(const struct spans *sp, const struct offcpu *oc,
		    const struct delays *d, const struct spans_opts *o, FILE *out);

/* analysis__spans()'s JSON, its members ("spans", or "instances" and
 * "matched") into the open object of @w (the report's); @o->json aside. */
int analysis__spans_json(const struct spans *sp, const struct offcpu *oc,
			 const struct delays *d, const struct spans_opts *o,
			 struct lib_json *w);

struct events_opts {
	const char *name; /* only events of this name (NULL: all) */
	int json;
};

/* One row per application event name: COUNT, then its values' MIN, P50,
 * P99, MAX and SUM, and the most frequent TEXT. 0, -ENOENT (no such
 * event), -ENODATA (none in the trace), -ENOMEM, -EIO. */
int analysis__events(const struct spans *sp, const struct events_opts *o, FILE *out);

/* ---- top (top_view.c) ---------------------------------------------- */

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

/* ---- exports to other tools' formats (export_pprof.c) ---------------- */

enum export_format {
	EXPORT_PPROF = 1,      /* gzipped profile.proto (google/pprof) */
	EXPORT_SPEEDSCOPE = 2, /* speedscope's JSON file format */
	EXPORT_CHROME = 3,     /* Trace Event Format JSON (Perfetto UI,
				* Chrome DevTools) */
	EXPORT_PARQUET = 4,    /* Parquet tables (analysis__export_parquet()) */
};

/* speedscope: a profile per task up to this many tasks, else per task
 * name (export_opts.by GROUP_AUTO) */
#define SPEEDSCOPE_TASKS 16

struct export_result {
	uint64_t samples;	/* CPU samples kept */
	uint64_t weight;	/* their weight */
	uint64_t switches;	/* off-CPU intervals kept (offcpu) */
	uint64_t pprof_samples; /* distinct (stack, labels) written */
	uint64_t locations, functions, mappings;
	uint64_t bytes;	    /* the profile before gzip */
	int period_guessed; /* no usable meta "frequency": 999 Hz */
	int by;		    /* speedscope: a profile per (enum group_by) */
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
	enum group_by by;	      /* speedscope: a profile per group (GROUP_AUTO:
				       * by task up to SPEEDSCOPE_TASKS tasks) */
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

/* ---- Parquet tables for SQL engines (export_parquet.c) ----------------- */

enum parquet_table {
	PARQUET_SAMPLES = 0,
	PARQUET_STACKS,
	PARQUET_POLLS,
	PARQUET_TASKS,
	PARQUET_DELAYS,
	PARQUET_SPANS,
	PARQUET_OFFCPU,
	PARQUET_TABLES
};

struct parquet_result {
	uint64_t rows[PARQUET_TABLES], bytes[PARQUET_TABLES];
	int utc;	    /* times are UTC (the trace has clock_realtime);
			     * 0: CLOCK_MONOTONIC, and date=unknown */
	int period_guessed; /* no usable meta "frequency": 999 Hz */
};

struct parquet_opts {
	const char *service; /* the partition's SERVICE; NULL: meta "service",
			      * else "comm" */
	const char *host;    /* HOST; NULL: meta "store_host", else
			      * "hostname" */
	const char *part;    /* the file name's stem; NULL: PID-UNIX-INDEX
			      * (the target, the trace's start in Unix
			      * seconds, its first segment) */
	/* a new file at @rel ("TABLE/service=S/host=H/date=D/PART.parquet",
	 * every component [A-Za-z0-9._=-], none starting with '.') open for
	 * writing, or NULL with errno set; and its close, told the export's
	 * error (nonzero: remove it), 0 or -errno */
	FILE *(*open)(void *ctx, const char *rel);
	int (*close)(void *ctx, FILE *f, int err);
	void *ctx;
	struct parquet_result *result; /* out, filled if non-NULL */
};

/* The name of table @table ("samples", ...; NULL past the last). */
const char *analysis_parquet_table(int table);

/* @oc's join as Parquet tables, one file each (analysis/parquet.h), in
 * the order of enum parquet_table:
 *   samples  every CPU sample: time_ns, tid, thread, task, task_name, poll,
 *            span and span_id (the innermost span entered: its name and
 *            the application's id), weight_ns (the CPU time it stands for:
 *            weight x 1e9 / frequency), stack_id, pid;
 *   offcpu   every off-CPU interval (offcpu_switch): start_ns, duration_ns
 *            (len), weight_ns (ns: clipped to its poll), runq_ns, where
 *            ("poll", "no poll", "parked", "task"), preempted, tid, thread,
 *            task, task_name, poll, stack_id;
 *   stacks   each stack_id the rows above name, once: frames, root first,
 *            as analysis_stack_labels() names them (the folded output's
 *            labels, whole: not cut at the runtime);
 *   polls    every poll (a walk of the trace again, @oc's join needs
 *            list none but those of its samples and switches): poll,
 *            task, task_name, tid, thread, start_ns,
 *            duration_ns, cpu_ns (duration less off-CPU time), blocked_ns,
 *            runq_ns (NULL without off-CPU data), samples, open_start,
 *            open_end;
 *   tasks    per task: task, task_name, polls, busy_ns, longest_ns,
 *            samples, cpu_ns, delays and their p50, p99, max;
 *   delays   every wake-to-poll delay, replayed in the polls' walk, in
 *            the order their polls began: task, task_name, delay_ns,
 *            woken_ns (its poll began at woken_ns + delay_ns), spawn,
 *            merged, waker_tid, waker_thread, waker_task, tid, thread,
 *            poll;
 *   spans    every instance, as each is done (a walk of the span records:
 *            the trace read with them), in the order they are: name, id,
 *            parent, fields, start_ns, duration_ns, entered_ns,
 *            waiting_ns, samples, cpu_ns, blocked_ns, runq_ns, enters,
 *            open_start, open_end, pid.
 * Every row carries service and host; times of day are UTC ns, lengths
 * ns; task is the number views show, stack_id a 63-bit hash of the
 * stack's labels (equal labels, equal ids, in any file). Names the target
 * gave are cleaned as views show them. With a selection (join__select())
 * only its tasks' rows. Memory: @oc's join, the stacks, the spans alive
 * at once, and the lag of the delays' replay behind the join's walk: not
 * the polls, delays or spans of the trace. 0, -EINVAL (bad arguments),
 * -ENOENT (the selection keeps nothing), -ENOMEM, -EIO, a callback's
 * error or a walk's. */
int analysis__export_parquet(const struct offcpu *oc, const struct parquet_opts *o);

#endif /* D9_ANALYSIS_VIEWS_H */
