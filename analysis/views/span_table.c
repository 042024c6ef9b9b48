// SPDX-License-Identifier: MIT
/*
 * span_table.c - the work behind `d9prof spans` (one row per span name,
 * or the slowest instances explained) and `d9prof events`, as text or
 * JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/causes.h"
#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "lib/json.h"
#include "lib/map.h"
#include "lib/search.h"
#include "lib/text.h"

#define MAX_CAUSES 16 /* per enter, and kept per instance */
#define MAX_TASKS  8  /* tasks named per instance */
#define NAME_W	   40 /* span names in a row, at most */

static uint64_t duration(const struct span *s)
{
	return s->closed - s->created;
}

static uint64_t waiting(const struct span *s)
{
	return duration(s) > s->entered_ns ? duration(s) - s->entered_ns : 0;
}

/* ns from where times are shown from (join.origin, else the start) */
static uint64_t since_origin(const struct join *j, uint64_t t)
{
	uint64_t o = j->origin ? j->origin : j->start_time;

	return t > o ? t - o : 0;
}

static uint64_t cpu_ns(const struct spans *sp, uint64_t samples)
{
	return (uint64_t)((double)samples * sp->period_ns);
}

/* ---- one row per name ------------------------------------------------------ */

static int srow_cmp(const void *a, const void *b, void *ctx)
{
	const struct span_row *x = a, *y = b;
	uint64_t kx, ky;

	switch (*(const enum spans_sort *)ctx) {
	case SPANS_BY_COUNT:
		kx = x->n, ky = y->n;
		break;
	case SPANS_BY_MAX:
		kx = x->max, ky = y->max;
		break;
	case SPANS_BY_TOTAL:
		kx = x->total, ky = y->total;
		break;
	case SPANS_BY_CPU:
		kx = x->samples, ky = y->samples;
		break;
	case SPANS_BY_BLOCKED:
		kx = x->blocked, ky = y->blocked;
		break;
	case SPANS_BY_NAME:
		kx = ky = 0;
		break;
	default:
		kx = x->p99, ky = y->p99;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void rows_json(const struct spans *sp, const struct span_row *r, size_t n, int off,
		      struct lib_json *w)
{
	lib_json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		lib_json_break(w);
		lib_json_object_begin(w);
		lib_json_str_field(w, "name", r[i].name);
		lib_json_uint_field(w, "count", r[i].n);
		lib_json_uint_field(w, "open", r[i].open);
		lib_json_uint_field(w, "p50_ns", r[i].p50);
		lib_json_uint_field(w, "p99_ns", r[i].p99);
		lib_json_uint_field(w, "max_ns", r[i].max);
		lib_json_uint_field(w, "total_ns", r[i].total);
		lib_json_uint_field(w, "entered_ns", r[i].entered);
		lib_json_uint_field(w, "samples", r[i].samples);
		lib_json_uint_field(w, "cpu_ns", cpu_ns(sp, r[i].samples));
		if (off) {
			lib_json_uint_field(w, "blocked_ns", r[i].blocked);
			lib_json_uint_field(w, "runq_ns", r[i].runq);
		}
		lib_json_uint_field(w, "waiting_ns", r[i].waiting);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}

/* What the rows and instances leave out or build out of order, said. */
static void refused_note(const struct spans *sp, FILE *out)
{
	if (sp->enters_refused)
		fprintf(out,
			"# %" PRIu64 " enters left out: more than %d open at once on one "
			"thread\n",
			sp->enters_refused, SPANS_OPEN_MAX);
	if (sp->late_records)
		fprintf(out,
			"# %" PRIu64
			" span records came 2 s or more after later ones (the "
			"recorder drained their thread late): taken as they came, so a "
			"span of theirs may count as two\n",
			sp->late_records);
}

/* The text table's cells of @r: percentiles and maximum, the rest per span. */
static void row_cells(const struct spans *sp, const struct span_row *r, uint64_t m[8])
{
	m[0] = r->p50;
	m[1] = r->p99;
	m[2] = r->max;
	m[3] = r->entered / r->n;
	m[4] = cpu_ns(sp, r->samples) / r->n;
	m[5] = r->blocked / r->n;
	m[6] = r->runq / r->n;
	m[7] = r->waiting / r->n;
}

static void rows_text(const struct spans *sp, const struct span_row *r, size_t shown,
		      size_t nr, size_t ninst, int off, const struct spans_opts *o,
		      FILE *out)
{
	static const char *const titles[] = {"P50", "P99",     "MAX",  "ENTERED",
					     "CPU", "BLOCKED", "RUNQ", "WAITING"};
	struct tcol tc[8] = {{0}};
	char lab[NAME_W * 4 + 8], v[8][32];
	size_t i, k, w = 4, open = 0;

	for (i = 0; i < shown; i++) {
		uint64_t m[8];

		row_cells(sp, &r[i], m);
		analysis_fit_name(r[i].name, NAME_W, lab, sizeof(lab));
		if (analysis_u8_width(lab) > w)
			w = analysis_u8_width(lab);
		for (k = 0; k < 8; k++)
			tcol_see(&tc[k], m[k]);
	}
	for (k = 0; k < 8; k++)
		tcol_fix(&tc[k], titles[k], 0);
	fprintf(out, "%-*s  %8s", (int)w, "SPAN", "COUNT");
	for (k = 0; k < 8; k++)
		fprintf(out, "  %*s", tc[k].w, titles[k]);
	fputc('\n', out);
	for (i = 0; i < shown; i++) {
		uint64_t m[8];

		row_cells(sp, &r[i], m);
		analysis_fit_name(r[i].name, NAME_W, lab, sizeof(lab));
		fprintf(out, "%s%*s  %8" PRIu64, lab, (int)(w - analysis_u8_width(lab)),
			"", r[i].n);
		for (k = 0; k < 8; k++)
			fprintf(out, "  %*s", tc[k].w,
				!off && (k == 5 || k == 6)
					? "-"
					: analysis_fmt_in(m[k], tc[k].unit, v[k],
							  sizeof(v[k])));
		fputc('\n', out);
		open += r[i].open;
	}
	fprintf(out,
		"# %zu of %zu span names, %zu spans; duration from creation to close, the "
		"rest per span on average: entered (on a thread), CPU sampled while "
		"entered",
		shown, nr, ninst);
	if (off)
		fprintf(out, ", off-CPU while entered (blocked, run queue)");
	fprintf(out, ", waiting (alive, not entered: to be polled, or for I/O)\n");
	if (open)
		fprintf(out,
			"# %zu still open at the end of the recording (or created before "
			"it): their durations are lower bounds\n",
			open);
	if (!off)
		fprintf(out, "# no off-CPU data: %s\n", offcpu_missing(sp->join->trace));
	if (shown < nr)
		fprintf(out, "# --limit 0 for all\n");
	refused_note(sp, out);
	(void)o;
}

/* The rows of @o as text on @out, or as the value of "spans" into @w if
 * it is not NULL. */
static int span_rows(const struct spans *sp, const struct offcpu *oc,
		     const struct spans_opts *o, FILE *out, struct lib_json *w)
{
	struct span_row *r = malloc((sp->nrows + 1) * sizeof(*r));
	int off = oc && !offcpu_missing(sp->join->trace);
	size_t nr = 0, shown, ninst = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < sp->nrows; i++)
		if (!o->name || !strcmp(sp->rows[i].name, o->name)) {
			r[nr++] = sp->rows[i];
			ninst += sp->rows[i].n;
		}
	if (!nr) {
		free(r);
		return -ENOENT;
	}
	qsort_r(r, nr, sizeof(*r), srow_cmp, (void *)&o->sort);
	shown = o->limit && o->limit < nr ? o->limit : nr;
	if (w) {
		rows_json(sp, r, shown, off, w);
		free(r);
		return lib_json_error(w);
	}
	rows_text(sp, r, shown, nr, ninst, off, o, out);
	free(r);
	return ferror(out) ? -EIO : 0;
}

/* ---- the slowest instances, explained --------------------------------------- */

struct served {
	uint64_t task;
	uint32_t polls;
};

struct inst {
	uint32_t span;
	uint32_t threads, polls;
	struct served task[MAX_TASKS];
	size_t ntask;
	uint64_t more_tasks; /* tasks past MAX_TASKS */
	uint64_t woken_ns;   /* not entered, a task that served it woken */
	struct delay_cause c[MAX_CAUSES];
	size_t nc;
};

static int cause_desc(const void *a, const void *b)
{
	const struct delay_cause *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static int same_cause(const struct delay_cause *a, const struct delay_cause *b)
{
	return a->kind == b->kind && a->in_poll == b->in_poll && a->task == b->task &&
	       a->frame == b->frame && a->under == b->under && a->holder == b->holder;
}

/* @c into @in's causes: added to the same one, else kept if there is
 * room (the largest are kept by the sort that follows each enter). */
static void merge_cause(struct inst *in, const struct delay_cause *c)
{
	for (size_t k = 0; k < in->nc; k++)
		if (same_cause(&in->c[k], c)) {
			in->c[k].ns += c->ns;
			return;
		}
	if (in->nc < MAX_CAUSES)
		in->c[in->nc++] = *c;
}

static void served_by(struct inst *in, uint64_t task)
{
	for (size_t k = 0; k < in->ntask; k++)
		if (in->task[k].task == task) {
			in->task[k].polls++;
			return;
		}
	if (in->ntask < MAX_TASKS)
		in->task[in->ntask++] = (struct served){.task = task, .polls = 1};
	else
		in->more_tasks++;
}

/* Where instance @in's time went: its enters' threads, polls and causes,
 * and the wake-to-poll delays of those polls while it was alive. */
static void explain(const struct spans *sp, const struct offcpu *oc,
		    const struct lib_map *pdelay, const struct delays *d, struct inst *in)
{
	const struct join *j = sp->join;
	const struct span *s = &sp->v[in->span];
	uint32_t tids[64];
	size_t ntids = 0;
	int32_t last_poll = -1;

	for (size_t e = 0; e < sp->nenters; e++) {
		const struct span_enter *x = &sp->enters[e];
		struct delay_cause c[MAX_CAUSES];
		const uint32_t *ids = NULL;
		size_t k, m, lo;

		if (x->span != in->span)
			continue;
		for (k = 0; k < ntids && tids[k] != x->tid; k++)
			;
		if (k == ntids && ntids < 64)
			tids[ntids++] = x->tid;
		/* the polls it was entered in */
		m = join__thread_polls(j, x->tid, &ids);
		lo = LIB_PARTITION_POINT(0, m, i, j->polls[ids[i]].end < x->start);
		for (k = lo; k < m && j->polls[ids[k]].start <= x->end; k++) {
			const struct poll *p = &j->polls[ids[k]];
			const uint64_t *at;
			const struct delay *dl;
			uint64_t from;

			if ((int32_t)p->id == last_poll)
				continue;
			last_poll = (int32_t)p->id;
			in->polls++;
			served_by(in, p->task);
			if (!(at = lib_map_find(pdelay, p->id)))
				continue;
			dl = &d->v[*at];
			from = dl->wake > s->created ? dl->wake : s->created;
			if (dl->begin > from)
				in->woken_ns += dl->begin - from;
		}
		if (!oc)
			continue;
		m = delays__causes(oc, x->tid, x->start, x->end, c, MAX_CAUSES);
		for (k = 0; k < m && k < MAX_CAUSES; k++)
			merge_cause(in, &c[k]);
		qsort(in->c, in->nc, sizeof(*in->c), cause_desc);
	}
	in->threads = (uint32_t)ntids;
	/* two tasks of it may wait while a third has it entered */
	if (in->woken_ns > waiting(s))
		in->woken_ns = waiting(s);
}

static void inst_text(const struct spans *sp, const struct offcpu *oc,
		      const struct hot *h, const struct inst *in, FILE *out)
{
	const struct span *s = &sp->v[in->span];
	const struct join *j = sp->join;
	char name[NAME_W * 4 + 8], a[32], b[32], lab[200], f[SPAN_FIELDS_MAX * 3 + 8];
	uint64_t dur = duration(s);

	analysis_fit_name(spans_name(s), 0, name, sizeof(name));
	fprintf(out, "%s  id %" PRIu64 "  %s%s  at %.6fs", name, s->id,
		text_duration(dur, a, sizeof(a)), s->open_start || s->open_end ? "+" : "",
		(double)since_origin(j, s->created) / 1e9);
	if (s->parent) {
		analysis_fit_name(s->parent_name, NAME_W, lab, sizeof(lab));
		fprintf(out, "  in %s id %" PRIu64, lab, s->parent);
	}
	if (s->fields) {
		analysis_clean_name(s->fields, f, sizeof(f));
		fprintf(out, "  %s", f);
	}
	fputc('\n', out);
	fprintf(out, "  served by ");
	if (!in->ntask)
		fprintf(out, "no poll");
	for (size_t k = 0; k < in->ntask; k++)
		fprintf(out, "%s%s (%" PRIu32 " poll%s)", k ? ", " : "",
			analysis_task_label(j, in->task[k].task, lab, sizeof(lab)),
			in->task[k].polls, in->task[k].polls == 1 ? "" : "s");
	if (in->more_tasks)
		fprintf(out, " and %" PRIu64 " more", in->more_tasks);
	fprintf(out, " on %" PRIu32 " thread%s\n", in->threads,
		in->threads == 1 ? "" : "s");
	fprintf(out, "  entered %s (%d%%)", text_duration(s->entered_ns, a, sizeof(a)),
		dur ? (int)(100.0 * (double)s->entered_ns / (double)dur + 0.5) : 0);
	if (s->samples)
		fprintf(out, ", %" PRIu64 " CPU samples (%s)", s->samples,
			text_duration(cpu_ns(sp, s->samples), b, sizeof(b)));
	if (in->nc) {
		fputs(": ", out);
		analysis_causes_text(oc, h, in->c, in->nc, s->entered_ns, NULL, out);
	}
	fputc('\n', out);
	fprintf(out, "  not entered %s (%d%%)", text_duration(waiting(s), a, sizeof(a)),
		dur ? (int)(100.0 * (double)waiting(s) / (double)dur + 0.5) : 0);
	if (waiting(s))
		fprintf(out,
			": woken, waiting to be polled %s; waiting for I/O, a timer or "
			"another task %s",
			text_duration(in->woken_ns, a, sizeof(a)),
			text_duration(waiting(s) - in->woken_ns, b, sizeof(b)));
	fputc('\n', out);
}

static void inst_json(const struct spans *sp, const struct offcpu *oc,
		      const struct hot *h, const struct inst *in, struct lib_json *w)
{
	const struct span *s = &sp->v[in->span];
	const struct join *j = sp->join;

	lib_json_break(w);
	lib_json_object_begin(w);
	lib_json_str_field(w, "name", s->name);
	lib_json_uint_field(w, "id", s->id);
	if (s->parent)
		lib_json_uint_field(w, "parent", s->parent);
	lib_json_str_field(w, "fields", s->fields);
	lib_json_uint_field(w, "start_ns", since_origin(j, s->created));
	lib_json_uint_field(w, "duration_ns", duration(s));
	lib_json_bool_field(w, "open_start", s->open_start);
	lib_json_bool_field(w, "open_end", s->open_end);
	lib_json_uint_field(w, "entered_ns", s->entered_ns);
	lib_json_uint_field(w, "samples", s->samples);
	lib_json_uint_field(w, "cpu_ns", cpu_ns(sp, s->samples));
	if (oc && !offcpu_missing(j->trace)) {
		lib_json_uint_field(w, "blocked_ns", s->blocked_ns);
		lib_json_uint_field(w, "runq_ns", s->runq_ns);
	}
	lib_json_uint_field(w, "waiting_ns", waiting(s));
	lib_json_uint_field(w, "woken_ns", in->woken_ns);
	lib_json_uint_field(w, "threads", in->threads);
	lib_json_uint_field(w, "polls", in->polls);
	lib_json_name(w, "tasks");
	lib_json_array_begin(w);
	for (size_t k = 0; k < in->ntask; k++) {
		const struct task_stat *ts = join__task(j, in->task[k].task);

		lib_json_object_begin(w);
		lib_json_uint_field(w, "task", trace_task_number(in->task[k].task));
		lib_json_str_field(w, "name", ts ? ts->name : NULL);
		lib_json_uint_field(w, "polls", in->task[k].polls);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	if (oc) {
		lib_json_name(w, "causes");
		analysis_causes_json(oc, h, in->c, in->nc, w);
	}
	lib_json_object_end(w);
}

/* The delay that ended each poll: poll id -> index in d->v. 0 or
 * -ENOMEM. */
static int poll_delays(const struct delays *d, struct lib_map *m)
{
	int err = lib_map_init(m, d ? d->n + 1 : 1);

	for (size_t i = 0; !err && d && i < d->n && i < UINT32_MAX; i++)
		if (d->v[i].poll >= 0)
			err = lib_map_set(m, (uint64_t)d->v[i].poll, i);
	return err;
}

/* The slowest instances of @o, explained, as text on @out, or as the
 * value of "instances" into @w if it is not NULL. */
static int span_instances(const struct spans *sp, const struct offcpu *oc,
			  const struct delays *d, const struct spans_opts *o,
			  uint32_t *ix, size_t n, size_t matched, FILE *out,
			  struct lib_json *w)
{
	size_t shown = spans__slowest(sp, o, ix, n), i;
	struct inst *in = calloc(shown + 1, sizeof(*in));
	struct lib_map pdelay = {0};
	struct hot h = {0};
	int err = -ENOMEM;

	if (!in || hot_init(&h) || poll_delays(d, &pdelay)) {
		free(in);
		hot_release(&h);
		lib_map_release(&pdelay);
		return -ENOMEM;
	}
	for (i = 0; i < shown; i++) {
		in[i].span = ix[i];
		explain(sp, oc, &pdelay, d, &in[i]);
		for (size_t k = 0; k < in[i].nc; k++)
			if (in[i].c[k].kind == CAUSE_POLL &&
			    hot_want(&h, in[i].c[k].poll))
				goto out;
	}
	err = hot_walk(&h, sp->join);
	if (err)
		goto out;
	if (w) {
		lib_json_array_begin(w);
		for (i = 0; i < shown; i++)
			inst_json(sp, oc, &h, &in[i], w);
		lib_json_array_end(w);
		err = lib_json_error(w);
		goto out;
	}
	for (i = 0; i < shown; i++) {
		if (i)
			fputc('\n', out);
		inst_text(sp, oc, &h, &in[i], out);
	}
	fprintf(out, "# %zu of %zu spans", shown, matched);
	if (o->name) {
		char lab[NAME_W * 4 + 8];

		analysis_fit_name(o->name, 0, lab, sizeof(lab));
		fprintf(out, " named %s", lab);
	}
	if (o->min_ns) {
		char a[32];

		fprintf(out, " of at least %s", text_duration(o->min_ns, a, sizeof(a)));
	}
	fprintf(out, ", slowest first; a duration ending in \"+\" is a lower bound%s\n",
		shown < matched ? "; --limit 0 for all" : "");
	refused_note(sp, out);
	err = ferror(out) ? -EIO : 0;
out:
	hot_release(&h);
	lib_map_release(&pdelay);
	free(in);
	return err;
}

/* What analysis__spans() writes, as text on @out or, with @w, as JSON
 * members "spans" (rows) or "instances" and "matched" of the open
 * object. */
static int spans_view(const struct spans *sp, const struct offcpu *oc,
		      const struct delays *d, const struct spans_opts *o, FILE *out,
		      struct lib_json *w)
{
	uint32_t *ix;
	size_t n, matched;
	int err;

	if (!sp->ninstances)
		return -ENODATA;
	if (w)
		lib_json_name(w, o->instances ? "instances" : "spans");
	if (!o->instances)
		return span_rows(sp, oc, o, out, w);
	/* without keep.all, those kept are o's: the others were counted */
	if (!spans__built_for(sp, o->name, o->min_ns) ||
	    (!sp->keep.all && (o->limit ? o->limit : SIZE_MAX) > sp->keep.top))
		return -EINVAL;
	ix = malloc((sp->n + 1) * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	n = spans__chosen(sp, o, ix);
	matched = sp->keep.all ? n : sp->nmatched;
	err = n ? span_instances(sp, oc, d, o, ix, n, matched, out, w) : -ENOENT;
	if (!err && w)
		lib_json_uint_field(w, "matched", matched);
	free(ix);
	return err;
}

int analysis__spans(const struct spans *sp, const struct offcpu *oc,
		    const struct delays *d, const struct spans_opts *o, FILE *out)
{
	struct lib_json w;
	int err;

	if (!o->json)
		return spans_view(sp, oc, d, o, out, NULL);
	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	err = spans_view(sp, oc, d, o, out, &w);
	if (err)
		return err;
	lib_json_object_end(&w);
	return lib_json_finish(&w);
}

int analysis__spans_json(const struct spans *sp, const struct offcpu *oc,
			 const struct delays *d, const struct spans_opts *o,
			 struct lib_json *w)
{
	return spans_view(sp, oc, d, o, NULL, w);
}

/* ---- application events ----------------------------------------------------- */

struct erow {
	const char *name;
	uint64_t n;
	int64_t min, p50, p99, max, sum;
	int sum_over;	  /* sum saturated: -1 below INT64_MIN, 1 above
			   * INT64_MAX (the values are the target's) */
	const char *text; /* the most frequent */
	uint64_t text_n;
};

/* The sum of the values of events @ix[0..n) (ascending by value) into
 * @x: exact, or the bound it passes (sum_over). Each step adds a value
 * of the sign opposite to the sum's while there is one, which cannot
 * overflow; an overflow then means all the values left have the sum's
 * sign, so the total is past that bound. */
static void sum_values(const struct spans *sp, const uint32_t *ix, size_t n,
		       struct erow *x)
{
	size_t lo = 0, hi = n; /* [lo, hi): not added yet */
	int64_t sum = 0;

	while (lo < hi) {
		int64_t v = sum >= 0 && sp->events[ix[lo]].value < 0
				    ? sp->events[ix[lo++]].value
				    : sp->events[ix[--hi]].value;

		if (__builtin_add_overflow(sum, v, &sum)) {
			x->sum_over = v < 0 ? -1 : 1;
			x->sum = v < 0 ? INT64_MIN : INT64_MAX;
			return;
		}
	}
	x->sum = sum;
}

static int ev_cmp(const void *a, const void *b, void *ctx)
{
	const struct spans *sp = ctx;
	const struct trace_span *x = &sp->events[*(const uint32_t *)a];
	const struct trace_span *y = &sp->events[*(const uint32_t *)b];
	int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");

	if (c)
		return c;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	c = strcmp(x->text ? x->text : "", y->text ? y->text : "");
	if (c)
		return c;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int text_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return strcmp(x ? x : "", y ? y : "");
}

/* The most frequent text of events @ix[0..n) (sorted by value): *@text, its
 * count returned; @tmp has room for @n. */
static uint64_t top_text(const struct spans *sp, const uint32_t *ix, size_t n,
			 const char **tmp, const char **text)
{
	uint64_t best = 0;
	size_t i, k;

	for (i = 0; i < n; i++)
		tmp[i] = sp->events[ix[i]].text;
	qsort(tmp, n, sizeof(*tmp), text_cmp);
	*text = NULL;
	for (i = 0; i < n; i = k) {
		for (k = i; k < n && !text_cmp(&tmp[k], &tmp[i]); k++)
			;
		if (tmp[i] && k - i > best) {
			best = k - i;
			*text = tmp[i];
		}
	}
	return best;
}

int analysis__events(const struct spans *sp, const struct events_opts *o, FILE *out)
{
	uint32_t *ix;
	const char **tmp;
	struct erow *r;
	size_t i, n = 0, nr = 0, w = 5;
	struct lib_json jw;
	int err = 0, over = 0;

	if (!sp->nevents)
		return -ENODATA;
	ix = malloc(sp->nevents * sizeof(*ix));
	tmp = malloc(sp->nevents * sizeof(*tmp));
	r = malloc(sp->nevents * sizeof(*r));
	if (!ix || !tmp || !r) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < sp->nevents; i++)
		if (!o->name ||
		    (sp->events[i].name && !strcmp(sp->events[i].name, o->name)))
			ix[n++] = (uint32_t)i;
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	qsort_r(ix, n, sizeof(*ix), ev_cmp, (void *)sp);
	for (i = 0; i < n;) {
		const char *name = sp->events[ix[i]].name;
		struct erow *x = &r[nr++];
		size_t k, m;

		memset(x, 0, sizeof(*x));
		x->name = name ? name : "[unnamed]";
		for (k = i; k < n; k++) {
			const char *nk = sp->events[ix[k]].name;

			if (strcmp(nk ? nk : "", name ? name : ""))
				break;
		}
		m = k - i;
		x->n = m;
		x->min = sp->events[ix[i]].value;
		x->max = sp->events[ix[k - 1]].value;
		x->p50 = sp->events[ix[i + (m * 50 + 99) / 100 - 1]].value;
		x->p99 = sp->events[ix[i + (m * 99 + 99) / 100 - 1]].value;
		sum_values(sp, ix + i, m, x);
		x->text_n = top_text(sp, ix + i, m, tmp, &x->text);
		i = k;
	}
	if (o->json) {
		lib_json_init(&jw, out);
		lib_json_object_begin(&jw);
		lib_json_name(&jw, "events");
		lib_json_array_begin(&jw);
		for (i = 0; i < nr; i++) {
			lib_json_break(&jw);
			lib_json_object_begin(&jw);
			lib_json_str_field(&jw, "name", r[i].name);
			lib_json_uint_field(&jw, "count", r[i].n);
			lib_json_int_field(&jw, "min", r[i].min);
			lib_json_int_field(&jw, "p50", r[i].p50);
			lib_json_int_field(&jw, "p99", r[i].p99);
			lib_json_int_field(&jw, "max", r[i].max);
			lib_json_int_field(&jw, "sum", r[i].sum);
			if (r[i].sum_over)
				lib_json_bool_field(&jw, "sum_saturated", 1);
			lib_json_str_field(&jw, "top_text", r[i].text);
			lib_json_uint_field(&jw, "top_text_count", r[i].text_n);
			lib_json_object_end(&jw);
		}
		lib_json_array_end(&jw);
		lib_json_object_end(&jw);
		err = lib_json_finish(&jw);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		char lab[NAME_W * 4 + 8];

		analysis_fit_name(r[i].name, NAME_W, lab, sizeof(lab));
		if (analysis_u8_width(lab) > w)
			w = analysis_u8_width(lab);
	}
	fprintf(out, "%-*s  %8s  %12s  %12s  %12s  %12s  %14s  %s\n", (int)w, "EVENT",
		"COUNT", "MIN", "P50", "P99", "MAX", "SUM", "TOP-TEXT");
	for (i = 0; i < nr; i++) {
		char lab[NAME_W * 4 + 8], text[NAME_W * 4 + 8], sum[32];

		analysis_fit_name(r[i].name, NAME_W, lab, sizeof(lab));
		if (r[i].text)
			analysis_fit_name(r[i].text, NAME_W, text, sizeof(text));
		if (r[i].sum_over)
			snprintf(sum, sizeof(sum), "%s",
				 r[i].sum_over > 0 ? ">9.2e18" : "<-9.2e18");
		else
			snprintf(sum, sizeof(sum), "%" PRId64, r[i].sum);
		over |= r[i].sum_over != 0;
		fprintf(out,
			"%s%*s  %8" PRIu64 "  %12" PRId64 "  %12" PRId64 "  %12" PRId64
			"  %12" PRId64 "  %14s  ",
			lab, (int)(w - analysis_u8_width(lab)), "", r[i].n, r[i].min,
			r[i].p50, r[i].p99, r[i].max, sum);
		if (r[i].text)
			fprintf(out, "%s (%" PRIu64 ")\n", text, r[i].text_n);
		else
			fprintf(out, "-\n");
	}
	fprintf(out,
		"# %zu event names, %zu events; values as the application gave them\n",
		nr, n);
	if (over)
		fprintf(out, "# a SUM of >9.2e18 or <-9.2e18 is past what a 64-bit "
			     "integer holds (INT64_MAX or INT64_MIN)\n");
	err = ferror(out) ? -EIO : 0;
out:
	free(ix);
	free(tmp);
	free(r);
	return err;
}
