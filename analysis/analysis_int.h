/* SPDX-License-Identifier: MIT */
/*
 * analysis_int.h - private to analysis/: the flame tree's layout, and
 * small helpers shared by the views (labels.c for names and formats,
 * stacks.c for stacks). Nothing outside analysis/ may include it.
 */
#ifndef D9_ANALYSIS_INT_H
#define D9_ANALYSIS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/map.h"

/* ---- the join's sample walk (join.c) -------------------------------- */

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

/* ---- the flame tree (flame.c), walked by flame_svg.c ---------------- */

#define FNODE_NONE UINT32_MAX

struct fnode {
	uint32_t label;	 /* interned label id */
	uint32_t parent; /* FNODE_NONE for the root */
	uint32_t child;	 /* first child, FNODE_NONE if a leaf */
	uint32_t next;	 /* next sibling, unordered */
	uint64_t total;	 /* weight of this frame and everything above */
	uint64_t self;	 /* weight of paths that end here */
};

struct flame {
	struct fnode *nodes; /* nodes[0] is the root ("all") */
	size_t nnodes, nodes_cap;

	/* interned labels: NUL-terminated strings packed in text */
	char *text;
	size_t text_len, text_cap;
	size_t *lab_off;
	uint32_t *lab_len;
	uint32_t *lab_hash; /* full hash per label, for rehashing */
	size_t nlabels, labels_cap;
	uint32_t *lab_tab; /* open addressing: label id + 1, 0 = free */
	size_t lab_tab_cap;

	struct lib_map edges; /* (parent << 32 | label) -> child node */

	/* depth-1 frames are task roots ("task N name", "[no poll]"): the
	 * SVG gives them their own palette */
	int task_roots;
	/* nodes were added by flame_run_add(), which skips the edge map:
	 * rebuild it before the next flame_add_ids() */
	int edges_stale;
	/* palette and orientation of the SVG (flame__set_style()) */
	struct flame_style style;
	/* a differential graph: the base profile's weights per node
	 * (flame_merge_base()), NULL otherwise; folded output then has two
	 * counts a line */
	struct fcount *base;
	/* the SVG asks this for each frame's colour and the end of its
	 * tooltip instead of the palette, if set (flame_diff.c) */
	void (*paint)(const struct flame *f, uint32_t node, int rgb[3], char *tip,
		      size_t len);
	const void *paint_ctx;
};

struct fcount {
	uint64_t total; /* weight of this frame and everything above */
	uint64_t self;	/* weight of paths that end here */
};

/* Bulk loading without hashing: the previous path and its nodes. */
struct flame_run {
	uint32_t *ids;
	uint32_t *nodes;
	size_t n, cap;
};

static inline const char *flame_label_str(const struct flame *f, uint32_t id)
{
	return f->text + f->lab_off[id];
}

/* Intern @s (of @len bytes): its label id in *@id. 0 or -ENOMEM. */
int flame_intern(struct flame *f, const char *s, size_t len, uint32_t *id);
/* flame__add() with interned label ids; the path's last node in *@leaf
 * (0 = the root, for n == 0) if @leaf is non-NULL. */
int flame_add_ids(struct flame *f, const uint32_t *ids, size_t n, uint64_t weight,
		  uint32_t *leaf);
/* Add a path to a flame that @r has filled alone so far, paths coming so
 * that those with a common prefix are contiguous (any trie pre-order):
 * then a path shares nodes only with the previous one, and everything
 * below the point where they part is new, so no lookups are needed. */
int flame_run_add(struct flame *f, struct flame_run *r, const uint32_t *ids, size_t n,
		  uint64_t weight);
void flame_run_release(struct flame_run *r);
/* Give @f the weights of @base, frame for frame (a path matches by its
 * labels), in f->base: paths only in @base get nodes of weight 0 in @f,
 * which the SVG leaves out. 0, -ENOMEM or -EOVERFLOW. */
int flame_merge_base(struct flame *f, const struct flame *base);

/* ---- groups (group.c) ------------------------------------------------ */

#define GROUP_NONE (UINT32_MAX - 2) /* outside polls: "[no poll]" */

/* The groups of a split view, resolved for one join. */
struct groups {
	const struct join *j;
	enum group_by by;   /* never GROUP_AUTO */
	uint32_t *of_task;  /* group of each task index, UINT32_MAX if the
			     * task is not selected */
	const char **names; /* GROUP_NAME: each group's name (NULL:
			     * unnamed) */
	uint32_t *tids;	    /* GROUP_THREAD: sorted tids, one a group */
	size_t ntids, ngroups;
	const struct spans *sp; /* GROUP_SPAN: the spans, names[] theirs */
	uint32_t *of_span;	/* ... the group of each span (spans.v) */
};

/* GROUP_SPAN needs @sp (else -EINVAL); the others ignore it. */
int groups__new(const struct join *j, enum group_by by, const struct spans *sp,
		struct groups **out);
/* The group of something inside a poll of task index @task_ix (-1: in
 * no poll) on thread @tid: UINT32_MAX if not kept, GROUP_NONE for "[no
 * poll]". */
uint32_t groups__of(const struct groups *g, int32_t task_ix, uint32_t tid);
/* GROUP_THREAD: the group of thread @tid, whatever the task (UINT32_MAX -
 * 1: a thread with no group). */
uint32_t groups__of_thread(const struct groups *g, uint32_t tid);
/* The same for something at @time (GROUP_SPAN: by the span entered on
 * @tid then, GROUP_NONE for none). */
uint32_t groups__of_at(const struct groups *g, int32_t task_ix, uint32_t tid,
		       uint64_t time);
char *groups__label(const struct groups *g, uint32_t grp, char *buf, size_t len);
void groups__free(struct groups *g);

/* The tree analysis__flame() draws, built for @o (its format, title and
 * result left aside): the groups in *@gp and the tree in *@fp, both the
 * caller's to free; what it holds in *@rp (also on failure). 0, -ENOENT
 * (@o->sel keeps no task), -ENOMEM or a walk's error. (flame_build.c) */
int analysis_flame_build(const struct join *j, const struct flame_opts *o,
			 struct groups **gp, struct flame **fp, struct flame_result *rp);

/* ---- off-CPU (offcpu_join.c) ---------------------------------------- */

/* ---- the application's frame (site.c) ------------------------------ */

/* 1 if frame @id is the system's, not the application's: the kernel, the
 * C library and its loader, the vDSO, the C++/gcc runtimes, the shim (by
 * module); Rust's std/core/alloc, tokio, mio, futures' executors, the
 * d9prof crate, glibc's internal names (by symbol). A bad id is. */
int analysis_frame_is_system(const struct trace *t, uint32_t id);
/* Is frame @id the d9prof shim's own code (libd9prof, its d9_ functions,
 * or code from its sources linked into the program)? Views draw it and
 * what it called (a page fault in its shared segment) as one frame,
 * ANALYSIS_SHIM_LABEL, so that no one reads it as the program's. */
int analysis_frame_is_shim(const struct trace *t, uint32_t id);
#define ANALYSIS_SHIM_LABEL "[d9prof shim]"
/* How many frames of @fr (@m, leaf first) from the leaf are the shim's:
 * up to its first frame from the root, with what it called */
size_t analysis_shim_frames(const struct trace *t, const uint32_t *fr, size_t m);
/* What a view names for stack @s: the innermost application frame in
 * *@frame and the call it made under it (the function of the leaf-most
 * user frame: the system call's wrapper) in *@under, or, where the call is
 * the application's own or no frame is, that call alone (*@under =
 * UINT32_MAX). With @raw_leaf (--frame leaf): the leaf-most user frame
 * alone, or with @cpu (a CPU sample's stack) the leaf. 0 if the stack is empty, else 1.
 */
int analysis_site(const struct trace *t, uint32_t s, int raw_leaf, int cpu,
		  uint32_t *frame, uint32_t *under);
/* "under <- frame" (e.g. "read <- slow_read"), or @frame's label alone. */
char *site_label(const struct trace *t, uint32_t frame, uint32_t under, char *buf,
		 size_t len);

/* ---- the hottest stack of chosen polls (causes.c) -------------------- */

#define HOT_FRAMES 3 /* innermost distinct frames shown of a hot stack */

struct hot {
	uint32_t *canon; /* analysis_stack_canon(), made by hot_walk */
	size_t ncanon;
	struct lib_map want; /* poll id -> 1 + index in best */
	struct lib_map w;    /* poll << 32 | canon[stack] -> weight */
	uint32_t *best;	     /* per wanted poll: stack id, UINT32_MAX none */
	uint64_t *best_w;
	size_t n, cap;
};

/* Start, want poll @poll (< 0: ignored) looked at, walk the samples once,
 * then read a poll's HOT_FRAMES innermost distinct frame labels of its
 * hottest stack into @lab (their number; 0 if none). 0 or -errno. */
int hot_init(struct hot *h);
int hot_want(struct hot *h, int32_t poll);
int hot_walk(struct hot *h, const struct join *j);
size_t hot_frames(const struct hot *h, const struct trace *t, int32_t poll,
		  char lab[HOT_FRAMES][256]);
void hot_release(struct hot *h);

/* ---- causes as text and JSON (causes.c) ------------------------------- */

/* Causes @c (@n of them; the text shows the first 4) of an interval of
 * @all ns, as "polling task N name 1.2ms (40%) in a <- b <- c; blocked
 * ..." (delays) or, with @own set, as the causes of a poll of task @own:
 * its own CPU time "CPU 1.2ms (40%) in ...", and no "inside task N's
 * poll". The JSON form is an array of objects (schema in d9prof(1)). */
void analysis_causes_text(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, uint64_t all,
			  const uint64_t *own, FILE *out);
void analysis_causes_json(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, struct lib_json *w);
/* analysis__delays()'s JSON object as a value in @w (the report's
 * "delays"), @o->json aside. 0, -ENOENT (no such task), -ENOMEM, or
 * lib_json_error(@w). */
int analysis__delays_json(const struct offcpu *oc, const struct delays *dl,
			  const struct delays_opts *o, struct lib_json *w);

/* ns from the recording's start (join.origin) to @t (0 before it). */
static inline uint64_t since_start(const struct offcpu *oc, uint64_t t)
{
	uint64_t o = oc->join->origin ? oc->join->origin : oc->start_time;

	return t > o ? t - o : 0;
}

/* ---- JSON (lib/json.h) ------------------------------------------------ */

/* A run-queue holder as JSON: {"pid": N, "comm": name|null}, or for the
 * idle CPU and "others" {"pid": null, "comm": "[idle CPU]"|"[others]"},
 * with "ns": *@ns added if @ns is non-NULL; null for unknown (0).
 * (offcpu_join.c) */
void analysis_holder_json(const struct trace *t, uint32_t holder, const uint64_t *ns,
			  struct lib_json *w);

/* @s shown in at most @n characters into @out (room for strlen(s) * 3 / 2
 * + 16): templates, then parameters, then middle scopes become "..", so a
 * qualified name keeps its own name; others are cut on the right. Under 3
 * characters, nothing. 0 or -ENOMEM. (flame_svg.c, where the SVG's script
 * mirrors it.) */
int analysis_shorten(const char *s, size_t n, char *out);

/* ---- small helpers -------------------------------------------------- */

/* qsort()/bsearch() order of uint32_t. */
static inline int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sample weight: 0 (a writer that did not fill it in) counts as 1. */
static inline uint64_t sample_weight(const struct trace_sample *s)
{
	return s->weight ? s->weight : 1;
}

/* A table's column of durations is shown in one unit, chosen by its
 * largest value @max: us (one decimal) below 1 ms, ms (three) below 100 s,
 * else s (three); analysis_fmt_in() writes @ns in @unit, so that a
 * column's decimal points line up ("0.130ms", "48.900ms"). */
int analysis_col_unit(uint64_t max);
char *analysis_fmt_in(uint64_t ns, int unit, char *buf, size_t len);
/* A column of durations: shown in one unit (analysis_col_unit() of its
 * largest value), as wide as its widest value or its title. tcol_see()
 * each value, then tcol_fix(): the unit and the width, @extra characters
 * more for a mark after the value. */
struct tcol {
	uint64_t max;
	int unit, w;
};
void tcol_see(struct tcol *c, uint64_t ns);
void tcol_fix(struct tcol *c, const char *title, int extra);

/* A gap's meta value "START-END" (ns, START <= END) into @start, @end. 0,
 * or -EINVAL when malformed. (join.c) */
int analysis_meta_gap(const char *v, uint64_t *start, uint64_t *end);

/* Last value of meta @key, or NULL (trace__meta()'s lookup, without depending on
 * it: analysis links against the struct only). */
const char *analysis_meta(const struct trace *t, const char *key);

/* analysis__spans()'s JSON, its members ("spans", or "instances" and
 * "matched") into the open object of @w (the report's); @o->json aside.
 * The spans that lasted at least @min_ns: how many, the slowest in
 * *@worst (NULL: none); without spans_keep.all, @min_ns is its over_ns
 * and the slowest is of those it kept. (spans.c) */
int analysis__spans_json(const struct spans *sp, const struct offcpu *oc,
			 const struct delays *d, const struct spans_opts *o,
			 struct lib_json *w);
/* The instances @o keeps (its name; with --instances, its minimum), in
 * *@ix (room for sp->n); their number. */
size_t spans__chosen(const struct spans *sp, const struct spans_opts *o, uint32_t *ix);
/* Of the @n in @ix (spans__chosen()), the slowest first, @o->limit of them
 * (0: all); their number. */
size_t spans__slowest(const struct spans *sp, const struct spans_opts *o, uint32_t *ix,
		      size_t n);
size_t analysis_spans_over(const struct spans *sp, uint64_t min_ns,
			   const struct span **worst);

/* "; only while N spans named NAME of at least DUR were entered: W UNIT"
 * for a flamegraph's subtitle at @buf, nothing without a span filter; the
 * characters written (snprintf()'s). (spans.c) */
int span_filter_note(const struct span_filter *f, uint64_t weight, const char *unit,
		     char *buf, size_t len);
/* Does @f keep only some spans' time (spans__select() was called)? Its
 * spans without a selection only name GROUP_SPAN's roots. */
static inline int span_filter_on(const struct span_filter *f)
{
	return f->spans && f->spans->selected;
}

/* Append "; lost: ..." (analysis_losses_text()) to a flamegraph's
 * subtitle at @buf; nothing when nothing was lost. */
void losses_note(const struct trace *t, unsigned int affects, char *buf, size_t len);

/* ---- shared by the renderers (labels.c, stacks.c) -------------------- */

/* Copy @s into @buf as a single-line, ';'-free name: text_clean() (no
 * control, no invalid UTF-8, whole characters; @buf may be @s), then ';'
 * as ':'. Every name a text view shows goes through it. */
void analysis_clean_name(const char *s, char *buf, size_t len);
/* Characters (not bytes) of a UTF-8 string, for column padding. */
size_t analysis_u8_width(const char *s);
/* Cut UTF-8 @s in place after its first @w characters. */
void analysis_u8_cut(char *s, size_t w);
/* @name (NULL: "-") cleaned and cut to @w characters (0: never) the way
 * the flamegraph cuts its labels (analysis_shorten()): a qualified name
 * keeps its own name ("ns::Type<..>::method(..)"), others lose their end
 * ("a_very_lo.."). */
void analysis_fit_name(const char *name, size_t w, char *buf, size_t len);
/* "name[tid]" of a thread of the target ("?[tid]" if unnamed), and "task
 * ID name" ("task ID" if unnamed); names cleaned. Return @buf. */
char *analysis_thread_label(const struct trace *t, uint32_t tid, char *buf, size_t len);
char *analysis_task_label(const struct join *j, uint64_t task, char *buf, size_t len);
/* The target's command line as the trace's meta says it (cmdline,
 * command, comm or exe), or NULL. */
const char *analysis_trace_command(const struct trace *t);
/* A flamegraph's title into @buf: @title (--title) if given, else @what
 * and the target's command ("CPU flame graph: ./server"), or @what alone. */
char *analysis_svg_title(const struct trace *t, const char *title, const char *what,
			 char *buf, size_t len);
/* Intern the root label "task ID name" ("task ID" if unnamed). */
int analysis_task_root(struct flame *f, const struct task_stat *ts, uint32_t *id);
/* Frames of stack @s, leaf first, in *@fr; 0 if the id or its bounds are
 * bad. */
size_t analysis_stack_frames(const struct trace *t, uint32_t s, const uint32_t **fr);
/* One id per stack as flame draws it: (*@canon)[s] is the first stack id
 * whose frames have stack s's labels, in order (addresses in the same
 * functions, as analysis_frame_label() names them, are one path). Views that pick
 * or share out "the hottest stack" count by it, so that they agree with
 * flame. Caller frees. 0 or -ENOMEM. */
int analysis_stack_canon(const struct trace *t, uint32_t **canon);
/* Stack @s as counted: @canon[s], or @s itself past its end (bad id). */
static inline uint32_t stack_canon(const uint32_t *canon, size_t n, uint32_t s)
{
	return canon && s < n ? canon[s] : s;
}
#define ANALYSIS_RUNTIME_LABEL "[runtime]"
/* Run-queue time no switch the recorder kept can name (TRACE_HOLD_UNKNOWN):
 * older than the CPU's history (record/bpf/sched.h, record/cputl.h) */
#define ANALYSIS_HOLD_UNKNOWN_LABEL "[earlier than the CPU's history]"

/* ---- zero-code Tokio (tokio_tasks.c) ---------------------------------------- */

/* Was @t recorded with zero-code Tokio (TRACE_META_TOKIO)? */
int analysis_is_tokio(const struct trace *t);
/* ... and without its poll probes (TRACE_META_TOKIO_PROBES): its tasks
 * have no polls, wakes or delays */
int analysis_tokio_unpolled(const struct trace *t);
/* A view's line saying so, and that it has no @what ("polls, wakes or
 * delays"), where @t's zero-code tasks have no polls; nothing elsewhere */
void analysis_tokio_note(const struct trace *t, const char *what, FILE *out);
/* Does stack @s park a Tokio thread with nothing to run (a worker's park,
 * block_on's, the blocking pool's wait)? */
int analysis_tokio_parked(const struct trace *t, uint32_t s);
/* Stack @s at Tokio's task machinery: the number of frames from the leaf
 * that are the task's own future (the rest, Tokio's poll of it and the
 * worker below, a per-task view draws as "[runtime]"), or UINT32_MAX
 * where the stack is in no task's poll; the future's type as the task's
 * name in @name (may be NULL), and in *@runtime whether the task polled
 * is a worker's launch task (the runtime itself, not a task of the
 * program). */
uint32_t analysis_tokio_split(const struct trace *t, uint32_t s, char *name, size_t len,
			      int *runtime);
/* The tasks of a zero-code trace (samples' and switches' TRACE_TASK_TOKIO
 * ids): each named from its stacks, the name weighing most over its
 * samples and switches; one whose stacks are mostly a worker's own launch
 * task is the runtime. One walk of the samples. */
struct tokio_tasks;
int tokio_tasks__new(const struct trace *t, struct tokio_tasks **out);
/* Task @task's name (owned by @z; NULL: none known), and whether it is a
 * worker's launch task (*@runtime 1: then no task of the program) */
const char *tokio_tasks__name(const struct tokio_tasks *z, uint64_t task, int *runtime);
/* analysis_tokio_split() of stack @stack, UINT32_MAX where it has no
 * task of the program */
uint32_t tokio_tasks__keep(const struct tokio_tasks *z, uint32_t stack);
void tokio_tasks__free(struct tokio_tasks *z);
/* The distinct poll sites @t names (TRACE_META_POLL_SITE values
 * "MODULE\tNAME..."), at most @max (a bound on the work per frame: the
 * recorder writes at most 32 per segment), into @site; their number. */
#define ANALYSIS_POLL_SITES_MAX 64
size_t analysis_poll_sites(const struct trace *t, const char **site, size_t max);
/* The labels of stack @s (UINT32_MAX: none) leaf first into @lab, at
 * most @max: the shim's frames as one ANALYSIS_SHIM_LABEL, a label equal
 * to the one before it left out (inlined frames of one function); how
 * many. */
size_t analysis_stack_labels(const struct trace *t, uint32_t s, char (*lab)[256],
			     size_t max);
/* Label ids of stack @s root to leaf at (*ids)[at..], growing *ids (*cap
 * entries); the number of labels in *@n. @flab caches a label id per frame
 * id (t->nframes entries, UINT32_MAX = not yet). With @keep less than the
 * stack's depth (join__keep()), the frames below the @keep nearest the
 * leaf are one, ANALYSIS_RUNTIME_LABEL; from the first of the shim's
 * (analysis_frame_is_shim()) to the leaf, one ANALYSIS_SHIM_LABEL. 0 or
 * -ENOMEM. */
int analysis_stack_path(struct flame *f, const struct trace *t, uint32_t *flab,
			uint32_t s, uint32_t keep, uint32_t **ids, size_t *cap, size_t at,
			size_t *n);

/* ---- protobuf and gzip writers (pbuf.c), for export_pprof.c ---------- */

/* A growable buffer of protobuf bytes; all zero is empty. After a failed
 * growth (err = -ENOMEM) every call leaves it as it is. */
struct pbuf {
	uint8_t *data;
	size_t len, cap;
	int err;
};

/* A base-128 varint (protobuf's), least significant group first. */
void pbuf_varint(struct pbuf *b, uint64_t v);
/* Field @field as a varint (wire type 0); nothing for 0, proto3's
 * default. int64 fields of values >= 0 encode the same. */
void pbuf_uint(struct pbuf *b, uint32_t field, uint64_t v);
/* Field @field length-delimited (wire type 2): a string or bytes. */
void pbuf_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n);
/* Field @field holding the message @m, which is emptied for reuse. */
void pbuf_msg(struct pbuf *b, uint32_t field, struct pbuf *m);
/* Field @field as packed varints (repeated scalars), built in @tmp. */
void pbuf_packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n,
		 struct pbuf *tmp);
/* The bytes of @m (whole fields) after those of @b. */
void pbuf_append(struct pbuf *b, const struct pbuf *m);
/* 0, or -ENOMEM if a growth failed. */
int pbuf_error(const struct pbuf *b);
void pbuf_release(struct pbuf *b);
/* @n bytes at @p gzipped (RFC 1952, zlib's deflate) onto @out. 0, -ENOMEM
 * or -EIO. */
int analysis_gzip_write(const void *p, size_t n, FILE *out);

#endif /* D9_ANALYSIS_INT_H */
