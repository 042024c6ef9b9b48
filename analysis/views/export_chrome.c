/* SPDX-License-Identifier: MIT */
/*
 * export_chrome.c - `d9prof export --format chrome`: the joined trace as a
 * timeline in the Trace Event Format (object form) that Perfetto UI and
 * chrome://tracing read. What goes in is in analysis.h.
 *
 * Written as it goes (no DOM): the thread names, then the polls, parks,
 * off-CPU intervals, CPU samples (one walk of the file through the join)
 * and wake-to-poll flows, each in its own pass; then the stack frames.
 * Stacks are not written per event: every stack an event refers to is
 * interned into one tree of (parent node, frame) pairs, root first.
 *
 * CPU samples are what Chrome itself writes for its JavaScript samples
 * and what both Perfetto (its legacy V8 profile importer) and Chrome
 * DevTools' Performance panel turn into call stacks on the thread: per
 * thread one "Profile" event (ph "P", the start time) and "ProfileChunk"
 * events holding the thread's part of the tree as "nodes" (once) and the
 * samples as node ids with their time deltas in us. So a sample costs a
 * few bytes (a 1M-sample trace was 72 MB of one event per sample before).
 * Off-CPU intervals name their leaf node as "sf", the tree going out once
 * at the end as the "stackFrames" dictionary (chrome://tracing's form;
 * Perfetto and DevTools ignore it, so the off-CPU slice says its top
 * frame in args as well).
 *
 * The application's spans: each enter a slice "span" on its thread (inside
 * the poll it was entered in, or around the polls it spans, as the times
 * say), each span's life (creation to close) an async slice of the
 * process, and its events instants on their threads.
 *
 * Wakes: an instant "wake" on the waker's thread at the wake, and a flow
 * from it to the poll that the wake led to. Flow ends share the category
 * ("task") and time of the events they bind to, as DevTools binds flows
 * by (ts, pid, tid, cat), and Perfetto binds "s" to the slice open on
 * the waker and "f" (bp "e") to the poll slice that begins there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/map.h"

/* About what an event takes in the file, to say its size before writing */
#define POLL_BYTES  230 /* a poll's slice */
#define FLOW_BYTES  340 /* a wake: its instant and flow */
#define RUN_BYTES   200 /* a run of merged polls */
#define TRACK_BYTES 150 /* a run track's name */
#define OTHER_BYTES 220 /* an off-CPU interval, a park, a span's slice */
#define RUN_MIN_NS  1000000ULL
/* merged runs' tracks: tids of their own, one per task */
#define RUN_TID 0x7f000000u

/* A task's run of merged polls */
struct run {
	uint64_t start, end, busy, n, bucket;
	uint32_t task; /* GROUP_TASK: its task's index */
	uint32_t tid;  /* GROUP_THREAD: its thread */
	uint32_t k;    /* its group */
	int named;     /* its track's name written */
};

struct ch {
	const struct offcpu *oc;
	const struct join *j;
	const struct trace *t;
	struct lib_json w;
	uint64_t origin;
	const char *pid; /* the target's, as the trace says it: digits */
	/* the stack tree: node n (from 1) is label[n] under parent[n] */
	struct lib_map edges; /* parent << 32 | label -> node */
	uint32_t *label, *parent;
	struct flame *lab; /* the labels, interned */
	uint32_t *lab_of;  /* per trace frame: its label id + 1, 0 = not yet */
	size_t nnodes, cap;
	uint32_t *leaf;	     /* per trace stack: its node, 0 = not yet */
	struct csample *smp; /* the CPU samples, written per thread at the end */
	size_t nsmp, smpcap;
	struct export_result *res;
	int cut;		    /* polls cut down to fit (res->cut) */
	uint64_t whole_ns;	    /* ... whole when longer */
	int span_cut;		    /* spans cut down to fit (res->span_cut) */
	uint64_t enter_ns, life_ns; /* ... enters, lives written when longer */
	size_t max_events;	    /* ... and the first this many events */
	uint64_t run_ns;
	const struct spans *sp; /* the spans written: export_opts.spans, or */
	struct spans *own_sp;	/* ... those built again for what is written */
	struct groups *rg;	/* ... the others', merged per group: task, else
				 * task name, else thread, as many as fit */
	struct run *runs;	/* ... per group: the one being built */
	struct run *done;	/* ... and those built, to be written */
	size_t ndone, done_cap;
};

/* One CPU sample, kept until the profiles are written. */
struct csample {
	int64_t us; /* from the origin, rounded to the us */
	uint32_t tid;
	uint32_t node; /* stack tree node, 0 = empty stack */
};

/* Samples per ProfileChunk: Perfetto and DevTools parse an event's args
 * whole, so keep each one small. */
#define CHROME_CHUNK 4096

/* "ts":us from the origin, with ns kept (three decimals). */
static void ts(struct ch *x, const char *key, uint64_t t)
{
	/* before the origin (a sample ahead of counters.start_time): negative */
	uint64_t d = t >= x->origin ? t - x->origin : x->origin - t;

	lib_json_name(&x->w, key);
	lib_json_printf(&x->w, "%s%" PRIu64 ".%03" PRIu64, t >= x->origin ? "" : "-",
			d / 1000, d % 1000);
}

/* A duration in us. */
static void dur(struct ch *x, uint64_t ns)
{
	lib_json_name(&x->w, "dur");
	lib_json_printf(&x->w, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* Start an event, on a line of its own: `{"ph":PH,"pid":P,"tid":T`. */
static void ev(struct ch *x, const char *ph, uint32_t tid)
{
	lib_json_break(&x->w);
	lib_json_object_begin(&x->w);
	lib_json_str_field(&x->w, "ph", ph);
	lib_json_name(&x->w, "pid");
	lib_json_printf(&x->w, "%s", x->pid);
	lib_json_uint_field(&x->w, "tid", tid);
}

/* Start a complete slice ("X") on @tid: `{"ph":"X",...,"cat":CAT,
 * "name":NAME,"ts":..,"dur":..`; its args, if any, and its end follow. */
static void slice(struct ch *x, uint32_t tid, const char *cat, const char *name,
		  uint64_t start, uint64_t ns)
{
	ev(x, "X", tid);
	lib_json_str_field(&x->w, "cat", cat);
	lib_json_str_field(&x->w, "name", name);
	ts(x, "ts", start);
	dur(x, ns);
}

/* Frame @fr's label id (frames of one function at different addresses
 * are one node, as in the flamegraph); UINT32_MAX on -ENOMEM. */
static uint32_t frame_lab(struct ch *x, uint32_t fr)
{
	char buf[512];
	uint32_t id;

	if (fr < x->t->nframes && x->lab_of[fr])
		return x->lab_of[fr] - 1;
	analysis_frame_label(x->t, fr, buf, sizeof(buf));
	if (flame_intern(x->lab, buf, strlen(buf), &id))
		return UINT32_MAX;
	if (fr < x->t->nframes)
		x->lab_of[fr] = id + 1;
	return id;
}

/* The stack tree's node for trace stack @s, interning its paths; 0 for an
 * empty or bad stack, UINT32_MAX on -ENOMEM. */
static uint32_t stack_node(struct ch *x, uint32_t s)
{
	const struct trace *t = x->t;
	uint32_t node = 0;

	if (s >= t->nstacks)
		return 0;
	if (x->leaf[s])
		return x->leaf[s];
	/* leaf first in the trace: walk it from its end, the root */
	for (uint32_t k = t->stack_off[s + 1]; k-- > t->stack_off[s];) {
		uint32_t lab = frame_lab(x, t->stack_frames[k]);
		int created = 0;
		uint64_t *v;

		if (lab == UINT32_MAX)
			return UINT32_MAX;
		v = lib_map_get(&x->edges, (uint64_t)node << 32 | lab, &created);
		if (!v)
			return UINT32_MAX;
		if (created) {
			/* parent has the same capacity: grown alongside */
			size_t pcap = x->cap;

			if (LIB_GROW(x->label, x->cap, x->nnodes + 2) ||
			    LIB_GROW(x->parent, pcap, x->nnodes + 2))
				return UINT32_MAX;
			*v = ++x->nnodes;
			x->label[*v] = lab;
			x->parent[*v] = node;
		}
		node = (uint32_t)*v;
	}
	x->leaf[s] = node;
	return node;
}

/* ,"sf":N for stack @s (nothing for an empty one). 0 or -ENOMEM. */
static int sf(struct ch *x, uint32_t s)
{
	uint32_t n = stack_node(x, s);

	if (n == UINT32_MAX)
		return -ENOMEM;
	if (n)
		lib_json_uint_field(&x->w, "sf", n);
	return 0;
}

/* Is what fell in poll @p (NULL: in none) kept: no --task, or a poll
 * of a chosen task? */
static int keep_poll(const struct ch *x, const struct poll *p)
{
	return !x->j->sel.on || (p && join__kept(x->j, join__task(x->j, p->task)));
}

/* Is poll @p written whole (not merged into a run)? */
static int whole_poll(const struct ch *x, const struct poll *p)
{
	return !x->cut || p->end - p->start > x->whole_ns;
}

/* A metadata event's "name" and {"name": @name} as its args. */
static void meta_name(struct ch *x, const char *what, const char *name)
{
	lib_json_str_field(&x->w, "name", what);
	lib_json_name(&x->w, "args");
	lib_json_object_begin(&x->w);
	lib_json_str_field(&x->w, "name", name);
	lib_json_object_end(&x->w);
	lib_json_object_end(&x->w);
}

static void write_threads(struct ch *x)
{
	const char *cmd = analysis_trace_command(x->t);

	ev(x, "M", 0);
	meta_name(x, "process_name", cmd ? cmd : "target");
	for (size_t i = 0; i < x->t->nthreads; i++) {
		const struct trace_thread *th = &x->t->threads[i];
		char name[64];

		if (!th->name)
			snprintf(name, sizeof(name), "[%" PRIu32 "]", th->tid);
		ev(x, "M", th->tid);
		meta_name(x, "thread_name", th->name ? th->name : name);
	}
}

/* Run @r of merged polls as a slice on its group's track */
static void write_run(struct ch *x, const struct run *r)
{
	uint32_t k = r->k;
	char buf[64];

	snprintf(buf, sizeof(buf), "%" PRIu64 " polls", r->n);
	slice(x, RUN_TID + k, "task", buf, r->start, r->end - r->start);
	lib_json_name(&x->w, "args");
	lib_json_object_begin(&x->w);
	if (x->rg->by == GROUP_TASK)
		lib_json_uint_field(&x->w, "task",
				    trace_task_number(x->j->tasks[r->task].task));
	lib_json_uint_field(&x->w, "polls", r->n);
	lib_json_uint_field(&x->w, "busy_ns", r->busy);
	lib_json_object_end(&x->w);
	lib_json_object_end(&x->w);
}

/* Slot @k's track's name: what its runs merge */
static void name_track(struct ch *x, uint32_t k, size_t ti, uint32_t tid)
{
	const struct groups *g = x->rg;
	const struct task_stat *ts_ = &x->j->tasks[ti];
	char name[320], what[256];

	if (g->by == GROUP_TASK)
		snprintf(what, sizeof(what), "task %" PRIu64 "%s%s",
			 trace_task_number(ts_->task), ts_->name ? " " : "",
			 ts_->name ? ts_->name : "");
	else if (g->by == GROUP_NAME)
		snprintf(what, sizeof(what), "tasks %s",
			 g->names[k] ? g->names[k] : "[unnamed]");
	else
		snprintf(what, sizeof(what), "thread %" PRIu32, tid);
	snprintf(name, sizeof(name), "%s: polls of %" PRIu64 " ns or less", what,
		 x->whole_ns);
	ev(x, "M", RUN_TID + k);
	meta_name(x, "thread_name", name);
}

/* Group @k's run built so far, to be written. 0 or -ENOMEM. */
static int end_run(struct ch *x, uint32_t k)
{
	struct run *r = &x->runs[k];

	if (!r->n)
		return 0;
	if (LIB_GROW(x->done, x->done_cap, x->ndone + 1))
		return -ENOMEM;
	x->done[x->ndone++] = *r;
	r->n = 0;
	return 0;
}

/* Every poll in id order (join_for_each_poll()): those not written
 * whole, merged into their group's runs. 0 or -ENOMEM. */
static int merge_poll(void *ctx, const struct poll *p)
{
	struct ch *x = ctx;
	const struct task_stat *ts_;
	struct run *r;
	uint64_t b;
	uint32_t k;

	if (!p) { /* from the first poll again */
		memset(x->runs, 0, (x->rg->ngroups + 1) * sizeof(*x->runs));
		x->ndone = 0;
		x->res->merged_polls = 0;
		return 0;
	}
	ts_ = join__task(x->j, p->task);
	if (!ts_ || !keep_poll(x, p) || whole_poll(x, p))
		return 0;
	k = groups__of(x->rg, (int32_t)(ts_ - x->j->tasks), p->tid);
	if (k >= x->rg->ngroups)
		return 0;
	r = &x->runs[k];
	b = (p->start >= x->origin ? p->start - x->origin : 0) / x->run_ns;
	if (r->n && b != r->bucket && end_run(x, k))
		return -ENOMEM;
	if (!r->n)
		*r = (struct run){.start = p->start,
				  .end = p->end,
				  .bucket = b,
				  .task = (uint32_t)(ts_ - x->j->tasks),
				  .tid = p->tid,
				  .k = k};
	r->end = p->end > r->end ? p->end : r->end;
	r->busy += p->end - p->start;
	r->n++;
	x->res->merged_polls++;
	return 0;
}

/* The runs of every poll not written whole. 0, -ENOMEM or a walk's
 * error. */
static int build_runs(struct ch *x)
{
	int err = join_for_each_poll(x->j, merge_poll, x);

	for (uint32_t k = 0; !err && k < x->rg->ngroups; k++)
		err = end_run(x, k);
	return err;
}

static void write_polls(struct ch *x)
{
	const struct join *j = x->j;
	char buf[512];

	for (size_t i = 0; i < j->nlisted; i++) {
		const struct poll *p = &j->polls[i];
		const struct task_stat *ts_ = join__task(j, p->task);
		const struct poll_offcpu *po = offcpu__poll(x->oc, p->id);
		uint32_t top, under;

		if (!keep_poll(x, p) || !whole_poll(x, p))
			continue;
		x->res->whole_polls++;
		snprintf(buf, sizeof(buf), "task %" PRIu64 "%s%s",
			 trace_task_number(p->task), ts_ && ts_->name ? " " : "",
			 ts_ && ts_->name ? ts_->name : "");
		slice(x, p->tid, "task", buf, p->start, p->end - p->start);
		lib_json_name(&x->w, "args");
		lib_json_object_begin(&x->w);
		lib_json_uint_field(&x->w, "poll", p->id);
		lib_json_uint_field(&x->w, "task", trace_task_number(p->task));
		lib_json_uint_field(&x->w, "samples", p->samples);
		if (ts_ && ts_->name)
			lib_json_str_field(&x->w, "task_name", ts_->name);
		if (po) {
			lib_json_uint_field(&x->w, "offcpu_ns", po->ns);
			lib_json_uint_field(&x->w, "runq_ns", po->runq_ns);
		}
		if (offcpu__poll_top(x->oc, p->id, &top, &under) > 0)
			lib_json_str_field(
				&x->w, "top",
				site_label(x->t, top, under, buf, sizeof(buf)));
		lib_json_object_end(&x->w);
		lib_json_object_end(&x->w);
		x->res->pprof_samples++;
	}
	for (size_t i = 0; i < x->ndone; i++) {
		struct run *g = &x->runs[x->done[i].k];

		if (!g->named) {
			g->named = 1;
			name_track(x, x->done[i].k, x->done[i].task, x->done[i].tid);
		}
		write_run(x, &x->done[i]);
	}
	x->res->runs = x->ndone;
}

static void write_parks(struct ch *x)
{
	const struct offcpu_park *pk;
	size_t n = x->j->sel.on ? 0 : offcpu__parks(x->oc, &pk);

	for (size_t i = 0; i < n; i++) {
		slice(x, pk[i].tid, "park", "parked", pk[i].start,
		      pk[i].end - pk[i].start);
		lib_json_object_end(&x->w);
	}
}

/* The application's spans and events (not with a task selection: they
 * are the application's, not a task's). */
static void write_spans(struct ch *x, const struct spans *sp)
{
	struct lib_json *w = &x->w;

	if (!sp || x->j->sel.on)
		return;
	for (size_t i = 0; i < sp->nenters; i++) {
		const struct span_enter *e = &sp->enters[i];
		const struct span *s = &sp->v[e->span];

		if (x->span_cut && e->end - e->start <= x->enter_ns)
			continue;
		x->res->span_enters++;
		slice(x, e->tid, "span", spans_name(s), e->start, e->end - e->start);
		lib_json_name(w, "args");
		lib_json_object_begin(w);
		lib_json_uint_field(w, "span", s->id);
		if (s->fields)
			lib_json_str_field(w, "fields", s->fields);
		lib_json_object_end(w);
		lib_json_object_end(w);
	}
	for (size_t i = 0; i < sp->n; i++) {
		const struct span *s = &sp->v[i];

		if (x->span_cut && s->closed - s->created <= x->life_ns)
			continue;
		x->res->spans++;
		for (int end = 0; end < 2; end++) {
			ev(x, end ? "e" : "b", 0);
			lib_json_str_field(w, "cat", "span");
			lib_json_str_field(w, "name", spans_name(s));
			lib_json_uint_field(w, "id", s->seq + 1);
			ts(x, "ts", end ? s->closed : s->created);
			if (!end) {
				lib_json_name(w, "args");
				lib_json_object_begin(w);
				lib_json_uint_field(w, "span", s->id);
				if (s->parent)
					lib_json_uint_field(w, "parent", s->parent);
				if (s->fields)
					lib_json_str_field(w, "fields", s->fields);
				lib_json_uint_field(w, "entered_ns", s->entered_ns);
				lib_json_object_end(w);
			}
			lib_json_object_end(w);
		}
	}
	for (size_t i = 0; i < sp->nevents && (!x->span_cut || i < x->max_events); i++) {
		const struct trace_span *e = &sp->events[i];

		ev(x, "i", e->tid);
		lib_json_str_field(w, "s", "t");
		lib_json_str_field(w, "cat", "event");
		lib_json_str_field(w, "name", e->name ? e->name : "[unnamed]");
		ts(x, "ts", e->time);
		lib_json_name(w, "args");
		lib_json_object_begin(w);
		lib_json_int_field(w, "value", e->value);
		if (e->text)
			lib_json_str_field(w, "text", e->text);
		lib_json_object_end(w);
		lib_json_object_end(w);
	}
}

/* The end of the park of thread @tid holding @t, or UINT64_MAX. */
static uint64_t park_end(const struct offcpu_park *pk, size_t n, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = n;

	/* the last park of @tid starting at or before @t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pk[mid].tid < tid || (pk[mid].tid == tid && pk[mid].start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pk[lo - 1].tid == tid && t < pk[lo - 1].end ? pk[lo - 1].end
								 : UINT64_MAX;
}

static int write_switches(struct ch *x, const struct spans *sp)
{
	const struct trace *t = x->t;
	const struct offcpu_park *pk;
	size_t npk = offcpu__parks(x->oc, &pk);
	char buf[256];
	uint32_t top, under;
	int err;

	for (size_t i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		const struct offcpu_switch *o = &x->oc->sw[i];
		uint64_t len = o->ns, pe = park_end(pk, npk, s->tid, s->time);
		uint64_t se =
			x->j->sel.on ? UINT64_MAX : spans__enter_end(sp, s->tid, s->time);

		if (!keep_poll(x,
			       o->poll >= 0 ? join__poll(x->j, (uint32_t)o->poll) : NULL))
			continue;
		/* the weight: clipped to its poll, and to the park or the
		 * span's entry it began in (the unpark or span exit marker's
		 * clock and the switch-in's can differ by a few us), so that it
		 * nests in them */
		pe = se < pe ? se : pe;
		if (pe != UINT64_MAX && s->time + len > pe)
			len = pe > s->time ? pe - s->time : 0;
		slice(x, s->tid, "offcpu",
		      s->preempted ? "off-CPU (preempted)" : "off-CPU (blocked)", s->time,
		      len);
		err = sf(x, s->stack);
		if (err)
			return err;
		lib_json_name(&x->w, "args");
		lib_json_object_begin(&x->w);
		lib_json_uint_field(&x->w, "runq_ns", o->runq);
		if (o->poll >= 0)
			lib_json_int_field(&x->w, "poll", o->poll);
		if (analysis_site(t, s->stack, x->oc->raw_leaf, 0, &top, &under) > 0)
			lib_json_str_field(&x->w, "top",
					   site_label(t, top, under, buf, sizeof(buf)));
		{
			struct trace_hold h[TRACE_MAX_HOLDS];
			size_t nh = analysis_switch_holds(t, s, o->runq, h);

			if (nh && h[0].tid)
				lib_json_str_field(&x->w, "holder",
						   analysis_holder_label(t, h[0].tid, buf,
									 sizeof(buf)));
		}
		lib_json_object_end(&x->w);
		lib_json_object_end(&x->w);
		x->res->switches++;
	}
	return 0;
}

/* us from the origin, rounded to the nearest (samples' time base). */
static int64_t us_from_origin(const struct ch *x, uint64_t t)
{
	return t >= x->origin ? (int64_t)((t - x->origin + 500) / 1000)
			      : -(int64_t)((x->origin - t + 500) / 1000);
}

static int on_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct ch *x = ctx;
	uint32_t w = (uint32_t)sample_weight(s), node;

	if (!join__kept(x->j, p ? &x->j->tasks[p->task] : NULL))
		return 0;
	node = stack_node(x, s->stack);
	if (node == UINT32_MAX)
		return -ENOMEM;
	/* a sample of weight w (ctimer overruns) is w samples at its time */
	if (LIB_GROW(x->smp, x->smpcap, x->nsmp + w))
		return -ENOMEM;
	for (uint32_t k = 0; k < w; k++)
		x->smp[x->nsmp++] = (struct csample){
			.us = us_from_origin(x, s->time), .tid = s->tid, .node = node};
	x->res->samples++;
	x->res->weight += w;
	return 0;
}

static int csample_cmp(const void *a, const void *b)
{
	const struct csample *l = a, *r = b;

	if (l->tid != r->tid)
		return l->tid < r->tid ? -1 : 1;
	return (l->us > r->us) - (l->us < r->us);
}

/* The "nodes" of one thread's profile: a "(root)" node 1, then the tree's
 * nodes @list[0..n) (ascending, so parents first) as node + 1. */
static void write_nodes(struct ch *x, const uint32_t *list, size_t n)
{
	struct lib_json *w = &x->w;

	lib_json_name(w, "nodes");
	lib_json_array_begin(w);
	for (size_t k = 0; k <= n; k++) {
		uint32_t v = k ? list[k - 1] : 0;

		lib_json_object_begin(w);
		lib_json_uint_field(w, "id", v + 1);
		if (k)
			lib_json_uint_field(w, "parent", x->parent[v] + 1);
		lib_json_name(w, "callFrame");
		lib_json_object_begin(w);
		lib_json_str_field(w, "functionName",
				   k ? flame_label_str(x->lab, x->label[v]) : "(root)");
		lib_json_object_end(w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}

/* A profile event's "name" and "id" (a string: "0x1"). */
static void profile_id(struct ch *x, const char *name, uint32_t id)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%" PRIx32, id);
	lib_json_str_field(&x->w, "name", name);
	lib_json_str_field(&x->w, "id", buf);
}

/* One thread's samples @v[0..n) as profile @id: its Profile event and
 * ProfileChunks. @mark/@list: scratch of nnodes + 1 entries. */
static void write_profile(struct ch *x, const struct csample *v, size_t n, uint32_t id,
			  uint32_t *mark, uint32_t *list)
{
	struct lib_json *w = &x->w;
	size_t nl = 0;
	int64_t prev = v[0].us;

	/* the nodes it uses and their ancestors, each once */
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = v[i].node; k && mark[k] != id; k = x->parent[k]) {
			mark[k] = id;
			list[nl++] = k;
		}
	qsort(list, nl, sizeof(*list), u32_cmp);
	ev(x, "P", v[0].tid);
	profile_id(x, "Profile", id);
	lib_json_int_field(w, "ts", prev);
	lib_json_name(w, "args");
	lib_json_object_begin(w);
	lib_json_name(w, "data");
	lib_json_object_begin(w);
	lib_json_int_field(w, "startTime", prev);
	lib_json_object_end(w);
	lib_json_object_end(w);
	lib_json_object_end(w);
	for (size_t c = 0; c < n; c += CHROME_CHUNK) {
		size_t e = c + CHROME_CHUNK < n ? c + CHROME_CHUNK : n;

		ev(x, "P", v[0].tid);
		profile_id(x, "ProfileChunk", id);
		lib_json_int_field(w, "ts", v[e - 1].us);
		lib_json_name(w, "args");
		lib_json_object_begin(w);
		lib_json_name(w, "data");
		lib_json_object_begin(w);
		lib_json_name(w, "cpuProfile");
		lib_json_object_begin(w);
		if (!c)
			write_nodes(x, list, nl);
		lib_json_name(w, "samples");
		lib_json_array_begin(w);
		for (size_t i = c; i < e; i++)
			lib_json_uint(w, v[i].node + 1);
		lib_json_array_end(w);
		lib_json_object_end(w);
		lib_json_name(w, "timeDeltas");
		lib_json_array_begin(w);
		for (size_t i = c; i < e; i++) {
			lib_json_int(w, v[i].us - prev);
			prev = v[i].us;
		}
		lib_json_array_end(w);
		lib_json_object_end(w);
		lib_json_object_end(w);
		lib_json_object_end(w);
	}
}

/* Every thread's samples as one profile (ids from 1). 0 or -ENOMEM. */
static int write_profiles(struct ch *x)
{
	uint32_t *mark, *list, id = 0;

	if (!x->nsmp)
		return 0;
	mark = calloc(x->nnodes + 1, sizeof(*mark));
	list = malloc((x->nnodes + 1) * sizeof(*list));
	if (!mark || !list) {
		free(mark);
		free(list);
		return -ENOMEM;
	}
	qsort(x->smp, x->nsmp, sizeof(*x->smp), csample_cmp);
	for (size_t i = 0, e; i < x->nsmp; i = e) {
		for (e = i; e < x->nsmp && x->smp[e].tid == x->smp[i].tid; e++)
			;
		write_profile(x, x->smp + i, e - i, ++id, mark, list);
	}
	free(mark);
	free(list);
	return 0;
}

/* Per delay that a poll ended: an instant on the waker at the wake and a
 * flow arrow from it to the poll's slice, which begins at the flow's end
 * (see the top of the file for how viewers bind them). */
static void write_flows(struct ch *x, const struct delays *d)
{
	struct lib_json *w = &x->w;
	char buf[64];

	for (size_t i = 0; i < d->n; i++) {
		const struct delay *wk = &d->v[i];
		const char *name = wk->spawn ? "spawn" : "wake";
		const struct poll *p =
			wk->poll >= 0 ? join__poll(x->j, (uint32_t)wk->poll) : NULL;

		if (!p || !keep_poll(x, p) || !whole_poll(x, p))
			continue;
		ev(x, "i", wk->waker);
		snprintf(buf, sizeof(buf), "%s task %" PRIu64, name,
			 trace_task_number(wk->task));
		lib_json_str_field(w, "s", "t");
		lib_json_str_field(w, "cat", "task");
		lib_json_str_field(w, "name", buf);
		ts(x, "ts", wk->wake);
		lib_json_object_end(w);
		ev(x, "s", wk->waker);
		lib_json_str_field(w, "cat", "task");
		lib_json_str_field(w, "name", name);
		lib_json_uint_field(w, "id", i + 1);
		ts(x, "ts", wk->wake);
		lib_json_object_end(w);
		ev(x, "f", wk->poller);
		lib_json_str_field(w, "bp", "e");
		lib_json_str_field(w, "cat", "task");
		lib_json_str_field(w, "name", name);
		lib_json_uint_field(w, "id", i + 1);
		ts(x, "ts", wk->begin);
		lib_json_object_end(w);
	}
}

/* The stack tree as "stackFrames", a member of its own line, one frame a
 * line: {"name":label,"parent":"id"} by id ("1", "2", ...). */
static void write_frames(struct ch *x)
{
	struct lib_json *w = &x->w;
	char id[24];

	lib_json_break(w);
	lib_json_name(w, "stackFrames");
	lib_json_object_begin(w);
	for (size_t n = 1; n <= x->nnodes; n++) {
		snprintf(id, sizeof(id), "%zu", n);
		lib_json_break(w);
		lib_json_name(w, id);
		lib_json_object_begin(w);
		lib_json_str_field(w, "name", flame_label_str(x->lab, x->label[n]));
		if (x->parent[n]) {
			snprintf(id, sizeof(id), "%" PRIu32, x->parent[n]);
			lib_json_str_field(w, "parent", id);
		}
		lib_json_object_end(w);
	}
	lib_json_object_end(w);
	x->res->functions = x->nnodes;
}

/* The least of the values added to @h that at most @k exceed (@h
 * released after); UINT64_MAX if one could not be added (@err). */
static uint64_t above(struct lib_hist *h, uint64_t k, int err)
{
	uint64_t b = err ? UINT64_MAX : lib_hist_above(h, k);

	lib_hist_release(h);
	return b;
}

/* The length the longest @budget kept polls are longer than, at most
 * @budget of them (analysis_chrome_keep() lists the longest, more than
 * @budget of them: those are all listed). 0 or -ENOMEM. */
static int whole_bound(struct ch *x, uint64_t budget, uint64_t *ns)
{
	const struct join *j = x->j;
	struct lib_hist h;
	int err = 0;

	lib_hist_init(&h);
	for (size_t i = 0; i < j->nlisted && !err; i++)
		if (keep_poll(x, &j->polls[i]))
			err = lib_hist_add(&h, j->polls[i].end - j->polls[i].start);
	*ns = above(&h, budget, err);
	return *ns == UINT64_MAX ? -ENOMEM : 0;
}

struct join_keep analysis_chrome_keep(const struct export_opts *o,
				      const struct task_sel *sel)
{
	/* the longest as many as could go uncut: past that many the file
	 * is cut, and the whole ones are the longest of them */
	return (struct join_keep){
		.sel = *sel,
		.n = o->max_bytes ? o->max_bytes / POLL_BYTES + 1 : 0,
		.longest = 1,
		.sampled = sel->on, /* their tasks */
	};
}

/* @sp's enters and instances: all of them (spans_keep.all), or counted
 * as it was built (spans_keep.hists). */
static uint64_t span_records(const struct spans *sp)
{
	return sp->keep.all ? sp->nenters + 2 * sp->n + sp->nevents
			    : sp->nenters_all + 2 * sp->ninstances + sp->nevents;
}

/* Past the bound, the application's spans cut down to an eighth of it:
 * the longest enters (a sixteenth), the longest lives (a thirty-second)
 * and the first events (a thirty-second); the others left out. 0 or
 * -ENOMEM. */
static int cut_spans(struct ch *x, const struct spans *sp, uint64_t max)
{
	struct lib_hist h;
	int err = 0;

	lib_hist_init(&h);
	if (!sp->keep.all)
		err = lib_hist_merge(&h, &sp->enter_hist);
	for (size_t i = 0; sp->keep.all && i < sp->nenters && !err; i++)
		err = lib_hist_add(&h, sp->enters[i].end - sp->enters[i].start);
	x->enter_ns = above(&h, max / 16 / OTHER_BYTES, err);
	lib_hist_init(&h);
	if (!sp->keep.all)
		err = lib_hist_merge(&h, &sp->life_hist);
	for (size_t i = 0; sp->keep.all && i < sp->n && !err; i++)
		err = lib_hist_add(&h, sp->v[i].closed - sp->v[i].created);
	x->life_ns = above(&h, max / 32 / (2 * OTHER_BYTES), err);
	if (x->enter_ns == UINT64_MAX || x->life_ns == UINT64_MAX)
		return -ENOMEM;
	x->max_events = max / 32 / OTHER_BYTES;
	x->span_cut = x->res->span_cut = 1;
	x->res->enter_ns = x->enter_ns;
	x->res->life_ns = x->life_ns;
	return 0;
}

/* The file's size in full, and past @o->max_bytes which polls go whole
 * and how the others are merged (analysis.h) */
static int plan(struct ch *x, const struct delays *d, const struct export_opts *o)
{
	static const enum group_by by[] = {GROUP_TASK, GROUP_NAME, GROUP_THREAD};
	const struct join *j = x->j;
	const struct offcpu_park *pk;
	uint64_t polls = 0, flows = 0, other, budget, quarter = o->max_bytes / 4, span;
	size_t i, k;
	int err;

	/* every poll of the tasks kept, every delay they ended */
	for (i = 0; i < j->ntasks; i++)
		if (join__kept(j, &j->tasks[i])) {
			polls += j->tasks[i].polls;
			flows += d ? d->hist[i].n : 0;
		}
	other = x->t->nswitches + offcpu__parks(x->oc, &pk);
	if (o->spans)
		other += span_records(o->spans);
	x->res->full_bytes = polls * POLL_BYTES + flows * FLOW_BYTES +
			     other * OTHER_BYTES + x->t->nsamples * 10;
	budget = o->max_bytes / 2 / (POLL_BYTES + FLOW_BYTES);
	/* a selection writes no span */
	if (o->spans && !j->sel.on && o->max_bytes && x->res->full_bytes > o->max_bytes &&
	    span_records(o->spans) * OTHER_BYTES > o->max_bytes / 8 &&
	    (err = cut_spans(x, o->spans, o->max_bytes)))
		return err;
	/* spans built counted, not kept: again, keeping what is written */
	if (o->spans && !j->sel.on && !o->spans->keep.all) {
		struct spans_keep sk = {.all = !x->span_cut,
					.at = 1,
					.longer = 1,
					.enter_longer_ns = x->enter_ns,
					.longer_ns = x->life_ns};

		err = spans__new_keep(j, x->oc, &sk, &x->own_sp);
		if (err)
			return err;
		x->sp = x->own_sp;
	}
	if (!o->max_bytes || x->res->full_bytes <= o->max_bytes)
		return 0;
	if (polls <= budget)
		return 0;
	/* whole: the longest, at most budget of them */
	err = whole_bound(x, budget, &x->whole_ns);
	if (err)
		return err;
	/* the others merged per task, else per task name, else per thread:
	 * the first whose tracks leave room for runs in a quarter */
	for (k = 0; k < sizeof(by) / sizeof(*by); k++) {
		uint64_t used = 0;

		groups__free(x->rg);
		x->rg = NULL;
		err = groups__new(j, by[k], NULL, &x->rg);
		if (err)
			return err;
		for (i = 0; i < j->ntasks && by[k] == GROUP_TASK; i++)
			used += j->tasks[i].polls && join__kept(j, &j->tasks[i]);
		if (by[k] != GROUP_TASK)
			used = x->rg->ngroups;
		if (used * (TRACK_BYTES + 4 * RUN_BYTES) <= quarter)
			break;
	}
	if (k == sizeof(by) / sizeof(*by))
		k--;
	span = j->end_time > j->start_time ? j->end_time - j->start_time : 0;
	x->run_ns =
		span / (quarter / RUN_BYTES / (x->rg->ngroups ? x->rg->ngroups : 1) + 1) +
		1;
	if (x->run_ns < RUN_MIN_NS)
		x->run_ns = RUN_MIN_NS;
	x->runs = calloc(x->rg->ngroups + 1, sizeof(*x->runs));
	if (!x->runs)
		return -ENOMEM;
	x->cut = x->res->cut = 1;
	x->res->whole_ns = x->whole_ns;
	x->res->run_ns = x->run_ns;
	x->res->run_by = by[k];
	return build_runs(x);
}

int analysis__export_chrome(const struct offcpu *oc, const struct delays *d,
			    const struct export_opts *o, FILE *out)
{
	struct export_result res = {0};
	struct ch x = {.oc = oc, .res = &res};
	int err;

	if (!oc || !o || !out || o->format != EXPORT_CHROME || o->offcpu)
		return -EINVAL;
	x.j = oc->join;
	x.t = oc->trace;
	x.sp = o->spans;
	if (join__keeps_none(x.j))
		return -ENOENT;
	x.origin = x.j->origin ? x.j->origin : x.j->start_time;
	x.pid = analysis_meta(x.t, TRACE_META_PID);
	if (!x.pid || !*x.pid || strspn(x.pid, "0123456789") != strlen(x.pid))
		x.pid = "0";
	err = lib_map_init(&x.edges, 1024);
	if (err)
		goto out;
	x.leaf = calloc(x.t->nstacks + 1, sizeof(*x.leaf));
	x.lab_of = calloc(x.t->nframes + 1, sizeof(*x.lab_of));
	x.lab = flame__new();
	if (!x.leaf || !x.lab_of || !x.lab) {
		err = -ENOMEM;
		goto out;
	}
	err = plan(&x, d, o);
	if (err)
		goto out;
	lib_json_init(&x.w, out);
	lib_json_object_begin(&x.w);
	lib_json_str_field(&x.w, "displayTimeUnit", "ns");
	lib_json_name(&x.w, "otherData");
	lib_json_object_begin(&x.w);
	lib_json_str_field(&x.w, "exporter", "d9prof");
	lib_json_str_field(&x.w, "command", analysis_trace_command(x.t));
	lib_json_object_end(&x.w);
	lib_json_break(&x.w);
	lib_json_name(&x.w, "traceEvents");
	lib_json_array_begin(&x.w);
	write_threads(&x);
	write_polls(&x);
	write_parks(&x);
	write_spans(&x, x.sp);
	err = write_switches(&x, x.sp);
	if (!err)
		err = join_for_each_sample(x.j, on_sample, &x);
	if (!err)
		err = write_profiles(&x);
	if (err)
		goto out;
	if (d)
		write_flows(&x, d);
	lib_json_array_end(&x.w);
	write_frames(&x);
	lib_json_object_end(&x.w);
	err = lib_json_finish(&x.w);
	if (!err && !res.samples && !res.pprof_samples && !res.runs)
		err = -ENODATA;
out:
	if (o && o->result)
		*o->result = res;
	lib_map_release(&x.edges);
	free(x.label);
	free(x.parent);
	free(x.lab_of);
	flame__free(x.lab);
	free(x.leaf);
	free(x.smp);
	free(x.runs);
	free(x.done);
	groups__free(x.rg);
	spans__free(x.own_sp);
	return err;
}
