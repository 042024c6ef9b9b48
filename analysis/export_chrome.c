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
 * interned into one tree of (parent node, frame) pairs, root first, and
 * an event names its leaf node ("sf"); the tree goes out once, at the
 * end, as the "stackFrames" dictionary. So a 1M-sample trace costs one
 * short line per sample plus one entry per distinct path prefix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

struct ch {
	const struct offcpu *oc;
	const struct join *j;
	const struct trace *t;
	FILE *out;
	uint64_t origin;
	const char *pid; /* the target's, as the trace says it */
	int first;	 /* no event written yet */
	/* the stack tree: node n (from 1) is frame[n] under parent[n] */
	struct amap edges; /* parent << 32 | frame -> node */
	uint32_t *frame, *parent;
	size_t nnodes, cap;
	uint32_t *leaf; /* per trace stack: its node, 0 = not yet */
	struct export_result *res;
};

/* "ts":us from the origin, with ns kept (three decimals). */
static void ts(struct ch *x, const char *key, uint64_t t)
{
	/* before the origin (a sample ahead of counters.start_time): negative */
	uint64_t d = t >= x->origin ? t - x->origin : x->origin - t;

	fprintf(x->out, ",\"%s\":%s%" PRIu64 ".%03" PRIu64, key,
		t >= x->origin ? "" : "-", d / 1000, d % 1000);
}

/* A duration in us. */
static void dur(struct ch *x, uint64_t ns)
{
	fprintf(x->out, ",\"dur\":%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* Start an event: `{"ph":PH,"pid":P,"tid":T` with the comma before it. */
static void ev(struct ch *x, const char *ph, uint32_t tid)
{
	fprintf(x->out, "%s{\"ph\":\"%s\",\"pid\":%s,\"tid\":%" PRIu32,
		x->first ? "\n" : ",\n", ph, x->pid, tid);
	x->first = 0;
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
		uint32_t fr = t->stack_frames[k];
		int created = 0;
		uint64_t *v = amap_get(&x->edges, (uint64_t)node << 32 | fr, &created);

		if (!v)
			return UINT32_MAX;
		if (created) {
			size_t old = x->cap;

			if (analysis_grow((void **)&x->frame, &x->cap, x->nnodes + 2,
					  sizeof(*x->frame)))
				return UINT32_MAX;
			/* parent has the same capacity: grow it alongside */
			if (x->cap != old) {
				uint32_t *p = realloc(x->parent, x->cap * sizeof(*p));

				if (!p)
					return UINT32_MAX;
				x->parent = p;
			}
			*v = ++x->nnodes;
			x->frame[*v] = fr;
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
		fprintf(x->out, ",\"sf\":%" PRIu32, n);
	return 0;
}

static void write_threads(struct ch *x)
{
	const char *cmd = analysis_trace_command(x->t);

	ev(x, "M", 0);
	fputs(",\"name\":\"process_name\",\"args\":{\"name\":", x->out);
	json_str(x->out, cmd ? cmd : "target");
	fputs("}}", x->out);
	for (size_t i = 0; i < x->t->nthreads; i++) {
		const struct trace_thread *th = &x->t->threads[i];
		char name[64];

		if (!th->name)
			snprintf(name, sizeof(name), "[%" PRIu32 "]", th->tid);
		ev(x, "M", th->tid);
		fputs(",\"name\":\"thread_name\",\"args\":{\"name\":", x->out);
		json_str(x->out, th->name ? th->name : name);
		fputs("}}", x->out);
	}
}

static void write_polls(struct ch *x)
{
	const struct join *j = x->j;
	char buf[512];

	for (size_t i = 0; i < j->npolls; i++) {
		const struct poll *p = &j->polls[i];
		const struct task_stat *ts_ = join__task(j, p->task);
		const struct poll_offcpu *po = x->oc->polls ? &x->oc->polls[i] : NULL;
		uint32_t top;

		ev(x, "X", p->tid);
		snprintf(buf, sizeof(buf), "task %" PRIu64 "%s%s", p->task,
			 ts_ && ts_->name ? " " : "", ts_ && ts_->name ? ts_->name : "");
		fputs(",\"cat\":\"poll\",\"name\":", x->out);
		json_str(x->out, buf);
		ts(x, "ts", p->start);
		dur(x, p->end - p->start);
		fprintf(x->out,
			",\"args\":{\"poll\":%" PRIu32 ",\"task\":%" PRIu64
			",\"samples\":%" PRIu32,
			p->id, p->task, p->samples);
		if (ts_ && ts_->name) {
			fputs(",\"task_name\":", x->out);
			json_str(x->out, ts_->name);
		}
		if (po)
			fprintf(x->out, ",\"offcpu_ns\":%" PRIu64 ",\"runq_ns\":%" PRIu64,
				po->ns, po->runq_ns);
		if (offcpu__poll_top(x->oc, p->id, &top) > 0) {
			fputs(",\"top\":", x->out);
			json_str(x->out, frame_label(x->t, top, buf, sizeof(buf)));
		}
		fputs("}}", x->out);
		x->res->pprof_samples++;
	}
}

static void write_parks(struct ch *x)
{
	const struct offcpu_park *pk;
	size_t n = offcpu__parks(x->oc, &pk);

	for (size_t i = 0; i < n; i++) {
		ev(x, "X", pk[i].tid);
		fputs(",\"cat\":\"park\",\"name\":\"parked\"", x->out);
		ts(x, "ts", pk[i].start);
		dur(x, pk[i].end - pk[i].start);
		putc('}', x->out);
	}
}

static int write_switches(struct ch *x)
{
	const struct trace *t = x->t;
	char buf[256];
	int err;

	for (size_t i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		const struct offcpu_switch *o = &x->oc->sw[i];

		ev(x, "X", s->tid);
		fprintf(x->out, ",\"cat\":\"offcpu\",\"name\":\"off-CPU (%s)\"",
			s->preempted ? "preempted" : "blocked");
		ts(x, "ts", s->time);
		/* the weight: clipped to its poll, so that it nests in it */
		dur(x, o->ns);
		err = sf(x, s->stack);
		if (err)
			return err;
		fprintf(x->out, ",\"args\":{\"runq_ns\":%" PRIu64, o->runq);
		if (o->poll >= 0)
			fprintf(x->out, ",\"poll\":%" PRId32, o->poll);
		if (o->runq && s->holder) {
			fputs(",\"holder\":", x->out);
			json_str(x->out, holder_label(t, s->holder, buf, sizeof(buf)));
		}
		fputs("}}", x->out);
		x->res->switches++;
	}
	return 0;
}

static int on_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct ch *x = ctx;
	int err;

	(void)p;
	ev(x, "i", s->tid);
	fputs(",\"s\":\"t\",\"cat\":\"cpu\",\"name\":\"cpu sample\"", x->out);
	ts(x, "ts", s->time);
	err = sf(x, s->stack);
	if (err)
		return err;
	if (s->weight > 1)
		fprintf(x->out, ",\"args\":{\"weight\":%" PRIu32 "}", s->weight);
	putc('}', x->out);
	x->res->samples++;
	x->res->weight += s->weight ? s->weight : 1;
	return 0;
}

/* A flow arrow per delay that a poll ended: from the waker at the wake
 * to the poller at the poll's begin ("f" binds to the poll slice that
 * begins there, bp "e"; "s" to whatever encloses the wake on the waker). */
static void write_flows(struct ch *x, const struct delays *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct delay *w = &d->v[i];
		const char *name = w->spawn ? "spawn" : "wake";

		if (w->poll < 0)
			continue;
		ev(x, "s", w->waker);
		fprintf(x->out, ",\"cat\":\"wake\",\"name\":\"%s\",\"id\":%zu", name,
			i + 1);
		ts(x, "ts", w->wake);
		putc('}', x->out);
		ev(x, "f", w->poller);
		fprintf(x->out,
			",\"bp\":\"e\",\"cat\":\"wake\",\"name\":\"%s\",\"id\":%zu", name,
			i + 1);
		ts(x, "ts", w->begin);
		putc('}', x->out);
	}
}

static void write_frames(struct ch *x)
{
	char buf[512];

	fputs("],\n\"stackFrames\":{", x->out);
	for (size_t n = 1; n <= x->nnodes; n++) {
		fprintf(x->out, "%s\"%zu\":{\"name\":", n > 1 ? ",\n" : "\n", n);
		json_str(x->out, frame_label(x->t, x->frame[n], buf, sizeof(buf)));
		if (x->parent[n])
			fprintf(x->out, ",\"parent\":\"%" PRIu32 "\"", x->parent[n]);
		putc('}', x->out);
	}
	x->res->functions = x->nnodes;
}

int analysis__export_chrome(const struct offcpu *oc, const struct delays *d,
			    const struct export_opts *o, FILE *out)
{
	struct export_result res = {0};
	struct ch x = {.oc = oc, .out = out, .first = 1, .res = &res};
	int err;

	if (!oc || !o || !out || o->format != EXPORT_CHROME || o->sel.on || o->offcpu)
		return -EINVAL;
	x.j = oc->join;
	x.t = oc->trace;
	x.origin = x.j->origin ? x.j->origin : x.j->start_time;
	x.pid = analysis_meta(x.t, "pid");
	if (!x.pid || !*x.pid || strspn(x.pid, "0123456789") != strlen(x.pid))
		x.pid = "0";
	err = amap_init(&x.edges, 1024);
	if (err)
		goto out;
	x.leaf = calloc(x.t->nstacks + 1, sizeof(*x.leaf));
	if (!x.leaf) {
		err = -ENOMEM;
		goto out;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"d9prof\","
	      "\"command\":",
	      out);
	json_str(out, analysis_trace_command(x.t));
	fputs("},\n\"traceEvents\":[", out);
	write_threads(&x);
	write_polls(&x);
	write_parks(&x);
	err = write_switches(&x);
	if (!err)
		err = join_for_each_sample(x.j, on_sample, &x);
	if (err)
		goto out;
	if (d)
		write_flows(&x, d);
	write_frames(&x);
	fputs("}}\n", out);
	err = ferror(out) ? -EIO : 0;
	if (!err && !res.samples && !x.j->npolls)
		err = -ENODATA;
out:
	if (o && o->result)
		*o->result = res;
	amap_release(&x.edges);
	free(x.frame);
	free(x.parent);
	free(x.leaf);
	return err;
}
