/* SPDX-License-Identifier: MIT */
/*
 * poll_table.c - the work behind `d9prof polls`: slow polls, one a line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/stacks.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/hist.h"
#include "lib/map.h"
#include "lib/text.h"

#define NAME_W	  24 /* widest task or thread name column */
#define LABEL_LEN 512
#define TOP_W	  64 /* TOP-FRAME characters, unless wide */

static int by_duration(const void *a, const void *b)
{
	const struct poll *x = *(const struct poll *const *)a;
	const struct poll *y = *(const struct poll *const *)b;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id; /* ids are in start order */
}

static int by_start(const void *a, const void *b)
{
	const struct poll *x = *(const struct poll *const *)a;
	const struct poll *y = *(const struct poll *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* A thread's name: threads are sorted by tid in a read trace, in any
 * order in one built by hand. */
static const char *thread_name(const struct trace *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return t->threads[i].name;
	return NULL;
}

static int width_u64(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* "ID name" cut to fit: the id whole, the name as much as fits. */
static void id_name(uint64_t id, const char *name, int wide, char *buf, size_t len)
{
	char nm[LABEL_LEN - 32];
	int n = snprintf(buf, len, "%" PRIu64, trace_task_number(id));

	if (!name || !*name || n < 0 || (size_t)n + 2 >= len)
		return;
	analysis_fit_name(name, wide ? 0 : NAME_W, nm, sizeof(nm));
	snprintf(buf + n, len - (size_t)n, " %s", nm);
}

struct row {
	const struct poll *p;
	char task[LABEL_LEN];
	char thread[LABEL_LEN];
	char top[LABEL_LEN + 16];
};

/* ---- one row per task, name or thread ------------------------------------ */

/* polls --by: every poll's duration, as the join gives them
 * (join_keep.each), into a distribution per task (per thread with
 * GROUP_THREAD), merged per group once the join is done. */
struct polls_by {
	uint64_t min_ns;
	int by_thread;
	struct lib_map ix; /* task id (tid by thread) -> index in v + 1 */
	struct pb_row {
		uint64_t key;
		uint64_t total;
		struct lib_hist h;
	} * v;
	size_t n, cap;
};

int polls_by__new(const struct polls_opts *o, struct polls_by **out)
{
	struct polls_by *pb = calloc(1, sizeof(*pb));

	*out = NULL;
	if (!pb || lib_map_init(&pb->ix, 64)) {
		free(pb);
		return -ENOMEM;
	}
	pb->min_ns = o->min_ns;
	pb->by_thread = o->by == GROUP_THREAD;
	*out = pb;
	return 0;
}

void polls_by__free(struct polls_by *pb)
{
	if (!pb)
		return;
	for (size_t i = 0; i < pb->n; i++)
		lib_hist_release(&pb->v[i].h);
	free(pb->v);
	lib_map_release(&pb->ix);
	free(pb);
}

int polls_by__poll(void *ctx, const struct poll *p)
{
	struct polls_by *pb = ctx;
	uint64_t *slot;
	struct pb_row *r;
	int created = 0;

	if (!p) { /* the join starts over */
		for (size_t i = 0; i < pb->n; i++)
			lib_hist_release(&pb->v[i].h);
		pb->n = 0;
		lib_map_release(&pb->ix);
		return lib_map_init(&pb->ix, 64);
	}
	if (p->end - p->start < pb->min_ns)
		return 0;
	slot = lib_map_get(&pb->ix, pb->by_thread ? p->tid : p->task, &created);
	if (!slot)
		return -ENOMEM;
	if (created) {
		if (LIB_GROW(pb->v, pb->cap, pb->n + 1))
			return -ENOMEM;
		memset(&pb->v[pb->n], 0, sizeof(*pb->v));
		pb->v[pb->n].key = pb->by_thread ? p->tid : p->task;
		*slot = ++pb->n;
	}
	r = &pb->v[*slot - 1];
	r->total += p->end - p->start;
	return lib_hist_add(&r->h, p->end - p->start);
}

struct grow_ {
	uint32_t grp;
	uint64_t n, total, p50, p99, max, off, runq;
	struct lib_hist h;
};

static int grow_cmp(const void *a, const void *b)
{
	const struct grow_ *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->grp < y->grp ? -1 : x->grp > y->grp;
}

/* The group of a row of @pb (a task's, a thread's), past the groups if none */
static uint32_t pb_group(const struct groups *g, const struct join *j, uint64_t key,
			 int by_thread)
{
	const struct task_stat *ts;

	if (by_thread)
		return groups__of_thread(g, (uint32_t)key);
	ts = join__task(j, key);
	return ts ? groups__of(g, (int32_t)(ts - j->tasks), 0) : UINT32_MAX;
}

/* @pb's rows merged into the groups of @g: the rows in @rows (one per
 * group, grp UINT32_MAX where none), with the off-CPU time of the polls
 * @oc has it for. The polls counted returned in *@n. 0 or -ENOMEM. */
static int group_rows(const struct offcpu *oc, const struct polls_by *pb,
		      const struct groups *g, struct grow_ *rows, size_t nrows, size_t *n)
{
	const struct join *j = oc->join;
	const struct poll_offcpu *po;
	uint32_t id;
	size_t it = 0;

	*n = 0;
	for (size_t i = 0; i < pb->n; i++) {
		uint32_t k = pb_group(g, j, pb->v[i].key, pb->by_thread);

		if (k >= nrows)
			continue;
		rows[k].grp = k;
		rows[k].total += pb->v[i].total;
		rows[k].n += pb->v[i].h.n;
		*n += pb->v[i].h.n;
		if (lib_hist_merge(&rows[k].h, &pb->v[i].h))
			return -ENOMEM;
	}
	/* every poll with off-CPU time is listed (the keep's switches) */
	while (offcpu__next_poll(oc, &it, &id, &po)) {
		const struct poll *p = join__poll(j, id);
		const struct task_stat *ts = p ? join__task(j, p->task) : NULL;
		uint32_t k;

		if (!ts || p->end - p->start < pb->min_ns)
			continue;
		k = groups__of(g, (int32_t)(ts - j->tasks), p->tid);
		if (k >= nrows || !rows[k].n)
			continue;
		rows[k].off += po->ns - po->runq_ns;
		rows[k].runq += po->runq_ns;
	}
	return 0;
}

/* polls --by: poll durations per group (dial9's "poll duration by spawn
 * location", with task names for spawn sites); percentiles from
 * lib/hist.h (exact up to LIB_HIST_EXACT polls a group). */
static int polls_by_group(const struct offcpu *oc, const struct polls_opts *o, FILE *out)
{
	const struct join *j = oc->join;
	struct groups *g = NULL;
	struct polls_by *pb = o->polls_by, *own = NULL;
	struct grow_ *rows = NULL;
	static const char *const titles[] = {"TOTAL",	"P50",	   "P99",
					     "LONGEST", "OFF-CPU", "RUNQ"};
	struct tcol tc[6] = {{0}};
	size_t i, n = 0, nr = 0, nslots = 0, shown, w = 5;
	char a[32], b[32], c[32], d[32], e[32], f[32], lab[300];
	int err = groups__new(j, o->by, NULL, &g);

	if (err)
		return err;
	/* not given the join's: every poll walked again */
	if (!pb) {
		err = polls_by__new(o, &own);
		if (!err)
			err = join_for_each_poll(j, polls_by__poll, own);
		if (err)
			goto out;
		pb = own;
	}
	err = -ENOMEM;
	nslots = g->by == GROUP_THREAD ? g->ntids : g->ngroups;
	rows = calloc(nslots + 1, sizeof(*rows));
	if (!rows)
		goto out;
	err = group_rows(oc, pb, g, rows, nslots, &n);
	if (err)
		goto out;
	for (i = 0; i < nslots; i++) {
		struct grow_ *r = &rows[i];

		if (!r->n)
			continue;
		r->max = r->h.max;
		r->p50 = lib_hist_quantile(&r->h, 50, 100);
		r->p99 = lib_hist_quantile(&r->h, 99, 100);
		lib_hist_release(&r->h);
		lib_hist_init(&r->h);
		rows[nr++] = *r;
	}
	qsort(rows, nr, sizeof(*rows), grow_cmp);
	shown = o->limit && o->limit < nr ? o->limit : nr;
	for (i = 0; i < shown; i++) {
		size_t lw = analysis_u8_width(
			groups__label(g, rows[i].grp, lab, sizeof(lab)));

		if (lw > w)
			w = lw;
	}
	for (i = 0; i < shown; i++) {
		tcol_see(&tc[0], rows[i].total);
		tcol_see(&tc[1], rows[i].p50);
		tcol_see(&tc[2], rows[i].p99);
		tcol_see(&tc[3], rows[i].max);
		tcol_see(&tc[4], rows[i].off);
		tcol_see(&tc[5], rows[i].runq);
	}
	for (i = 0; i < 6; i++)
		tcol_fix(&tc[i], titles[i], 0);
	fprintf(out, "%-*s  %8s  %*s  %*s  %*s  %*s  %*s  %*s\n", (int)w,
		g->by == GROUP_THREAD ? "THREAD"
		: g->by == GROUP_NAME ? "NAME"
				      : "TASK",
		"POLLS", tc[0].w, titles[0], tc[1].w, titles[1], tc[2].w, titles[2],
		tc[3].w, titles[3], tc[4].w, titles[4], tc[5].w, titles[5]);
	for (i = 0; i < shown; i++) {
		const struct grow_ *r = &rows[i];
		int off = oc->trace->nswitches > 0;

		groups__label(g, r->grp, lab, sizeof(lab));
		fprintf(out, "%s%*s  %8" PRIu64 "  %*s  %*s  %*s  %*s  %*s  %*s\n", lab,
			(int)(w - analysis_u8_width(lab)), "", r->n, tc[0].w,
			analysis_fmt_in(r->total, tc[0].unit, a, sizeof(a)), tc[1].w,
			analysis_fmt_in(r->p50, tc[1].unit, b, sizeof(b)), tc[2].w,
			analysis_fmt_in(r->p99, tc[2].unit, c, sizeof(c)), tc[3].w,
			analysis_fmt_in(r->max, tc[3].unit, d, sizeof(d)), tc[4].w,
			off ? analysis_fmt_in(r->off, tc[4].unit, e, sizeof(e)) : "-",
			tc[5].w,
			off ? analysis_fmt_in(r->runq, tc[5].unit, f, sizeof(f)) : "-");
	}
	fprintf(out, "# %zu of %zu %s, most poll time first; %zu polls", shown, nr,
		g->by == GROUP_THREAD ? "threads"
		: g->by == GROUP_NAME ? "task names"
				      : "tasks",
		n);
	if (o->min_ns)
		fprintf(out, " of at least %s", text_duration(o->min_ns, a, sizeof(a)));
	if (j->sel.on)
		fprintf(out, ", %s", task_sel_text(&j->sel, lab, sizeof(lab)));
	if (shown < nr)
		fprintf(out, "; --limit 0 for all");
	fputc('\n', out);
	err = analysis_losses_footer(oc->trace, LOSS_ALL, out);
	if (o->shown)
		*o->shown = shown;
out:
	for (i = 0; rows && i < nslots; i++)
		lib_hist_release(&rows[i].h);
	free(rows);
	polls_by__free(own);
	groups__free(g);
	return err;
}

int analysis__polls(const struct offcpu *oc, const struct polls_opts *o, FILE *out)
{
	const struct join *j;
	const struct trace *t;
	const struct poll **sel = NULL;
	struct row *rows = NULL;
	size_t i, n = 0, shown, taskw = 4, thrw = 6;
	int idw = 4, sw = 7, have_off, err = -ENOMEM;
	struct tcol tc[3] = {{0}};
	char a[32], b[32], c[32], d[32];

	if (!oc || !o || !out)
		return -EINVAL;
	j = oc->join;
	t = oc->trace;
	if (join__keeps_none(j))
		return -ENOENT;
	if (o->by != GROUP_AUTO)
		return polls_by_group(oc, o, out);
	have_off = t->nswitches > 0;
	sel = malloc((j->nlisted + 1) * sizeof(*sel));
	if (!sel)
		goto out;
	/* a join that lists only some polls lists these and more */
	for (i = 0; i < j->nlisted; i++) {
		const struct poll *p = &j->polls[i];

		if (p->end - p->start < o->min_ns ||
		    !join__kept(j, join__task(j, p->task)))
			continue;
		sel[n++] = p;
	}
	qsort(sel, n, sizeof(*sel), o->sort == POLLS_BY_START ? by_start : by_duration);
	shown = o->limit && o->limit < n ? o->limit : n;
	if (j->nlisted < j->npolls)
		n = j->nmatched;

	rows = calloc(shown + 1, sizeof(*rows));
	if (!rows)
		goto out;
	for (i = 0; i < shown; i++) {
		struct row *r = &rows[i];
		const struct poll *p = sel[i];
		const struct task_stat *ts = join__task(j, p->task);
		uint32_t fr, under;
		int top;

		r->p = p;
		id_name(p->task, ts ? ts->name : NULL, o->wide, r->task, sizeof(r->task));
		id_name(p->tid, thread_name(t, p->tid), o->wide, r->thread,
			sizeof(r->thread));
		top = offcpu__poll_top(oc, p->id, &fr, &under);
		if (top < 0) {
			err = top;
			goto out;
		}
		if (top == POLL_TOP_NONE) {
			strcpy(r->top, "-");
		} else {
			char lab[LABEL_LEN];

			site_label(t, fr, under, lab, sizeof(lab));
			analysis_fit_name(lab, o->wide ? 0 : TOP_W, r->top, LABEL_LEN);
			if (top == POLL_TOP_OFFCPU)
				strcat(r->top, " (off-CPU)");
			else if (top == POLL_TOP_PREEMPTED)
				strcat(r->top, " (run queue)");
		}
		if (analysis_u8_width(r->task) > taskw)
			taskw = analysis_u8_width(r->task);
		if (analysis_u8_width(r->thread) > thrw)
			thrw = analysis_u8_width(r->thread);
		if (width_u64(p->id) > idw)
			idw = width_u64(p->id);
		if (width_u64(p->samples) > sw)
			sw = width_u64(p->samples);
	}

	/* one unit a column: DURATION, OFF-CPU (blocked), RUNQ (runnable,
	 * waiting for a CPU) */
	for (i = 0; i < shown; i++) {
		const struct poll *p = rows[i].p;

		tcol_see(&tc[0], p->end - p->start);
		tcol_see(&tc[1],
			 offcpu__poll(oc, p->id)->ns - offcpu__poll(oc, p->id)->runq_ns);
		tcol_see(&tc[2], offcpu__poll(oc, p->id)->runq_ns);
	}
	tcol_fix(&tc[0], "DURATION", 1);
	tcol_fix(&tc[1], "OFF-CPU", 0);
	tcol_fix(&tc[2], "RUNQ", 0);
	fprintf(out, "%-*s  %-*s  %-*s  %12s  %*s  %*s  %*s  %*s  %s\n", idw, "POLL",
		(int)taskw, "TASK", (int)thrw, "THREAD", "START(s)", tc[0].w, "DURATION",
		sw, "SAMPLES", tc[1].w, "OFF-CPU", tc[2].w, "RUNQ", "TOP-FRAME");
	for (i = 0; i < shown; i++) {
		const struct row *r = &rows[i];
		const struct poll *p = r->p;
		uint64_t since = since_start(oc, p->start);

		analysis_fmt_in(p->end - p->start, tc[0].unit, a, sizeof(a));
		if (p->open_start || p->open_end)
			strcat(a, "+");
		if (have_off) {
			analysis_fmt_in(offcpu__poll(oc, p->id)->ns -
						offcpu__poll(oc, p->id)->runq_ns,
					tc[1].unit, b, sizeof(b));
			analysis_fmt_in(offcpu__poll(oc, p->id)->runq_ns, tc[2].unit, d,
					sizeof(d));
		} else {
			strcpy(b, "-");
			strcpy(d, "-");
		}
		snprintf(c, sizeof(c), "%" PRIu64 ".%06" PRIu64, since / 1000000000,
			 since % 1000000000 / 1000);
		fprintf(out,
			"%-*" PRIu32 "  %s%*s  %s%*s  %12s  %*s  %*" PRIu32
			"  %*s  %*s  %s\n",
			idw, p->id, r->task, (int)(taskw - analysis_u8_width(r->task)),
			"", r->thread, (int)(thrw - analysis_u8_width(r->thread)), "", c,
			tc[0].w, a, sw, p->samples, tc[1].w, b, tc[2].w, d, r->top);
	}
	fprintf(out, "# %zu of %zu polls", shown, n);
	if (n != j->npolls)
		fprintf(out, " (%zu in the trace)", j->npolls);
	fprintf(out, ", %s", o->sort == POLLS_BY_START ? "by start" : "longest first");
	if (o->min_ns)
		fprintf(out, ", at least %s", text_duration(o->min_ns, a, sizeof(a)));
	if (j->sel.on) {
		char what[160];

		fprintf(out, ", %s", task_sel_text(&j->sel, what, sizeof(what)));
	}
	fputc('\n', out);
	analysis_tokio_note(t, "poll boundaries", out);
	analysis_lean_note(t, out);
	if (!have_off)
		fprintf(out, "# OFF-CPU, RUNQ: none, %s\n", offcpu_missing(t));
	else if (!oc->runq_split)
		fprintf(out,
			"# RUNQ is preempted time only and OFF-CPU holds the rest: blocked and "
			"run-queue time cannot be split, %s\n",
			analysis_runq_missing(t));
	err = analysis_losses_footer(t, LOSS_ALL, out);
	if (o->shown)
		*o->shown = shown;
out:
	free(sel);
	free(rows);
	return err;
}
