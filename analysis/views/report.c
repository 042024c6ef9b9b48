/* SPDX-License-Identifier: MIT */
/*
 * report.c - the work behind `d9prof report`: one page, in the order
 * a diagnosis goes, as text or JSON. Everything is computed first into
 * struct page, then rendered, so both forms say the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/causes.h"
#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/map.h"
#include "lib/text.h"

#define TOP	    5 /* rows per section */
#define MAX_HOLDERS 3 /* thieves named per worker */
#define MAX_FLAGS   16

/* Red-flag thresholds (documented in d9prof(1)). */
#define FLAG_LONG_POLL_NS ANALYSIS_FLAG_LONG_POLL_NS
#define FLAG_DELAY_NS	  ANALYSIS_FLAG_DELAY_NS
#define FLAG_RUNQ_NS	  (1 * 1000000ULL)
#define FLAG_BLOCKED_NS	  (1 * 1000000ULL)
#define FLAG_IMBALANCE	  3.0
#define FLAG_SPAN_NS	  (100 * 1000000ULL)

struct holder_ns {
	uint32_t tid;
	uint64_t ns;
};

/* One runtime thread: one with polls or parked time. */
struct worker {
	uint32_t tid;
	uint64_t polls;
	uint64_t poll_cpu, poll_blocked, poll_runq;
	uint64_t out_cpu, out_blocked, out_runq;
	uint64_t parked;
	uint64_t runq;			       /* all its run-queue time */
	struct holder_ns holders[MAX_HOLDERS]; /* largest first */
};

struct flag {
	const char *what; /* "long poll", ... */
	char threshold[32];
	uint64_t count;
	uint64_t task;	    /* 0: none */
	char function[256]; /* "" none */
	char detail[LOSS_TEXT_MAX + 64];
	char next[128]; /* the command to run next */
};

struct page {
	const struct offcpu *oc;
	const struct delays *d;
	const struct spans *sp; /* NULL, or with no span: no section */
	const char *args;	/* the inputs as options, for the next commands */
	struct worker *w;
	size_t nw;
	uint64_t span;
	struct holder_ns thieves[TOP]; /* over all threads */
	size_t nthieves;
	const struct poll *longest[TOP];
	size_t nlongest;
	struct delay_cause lc[TOP][6]; /* the longest polls' causes */
	size_t nlc[TOP];
	const struct task_stat *hot[TOP];
	uint32_t hot_stack[TOP]; /* UINT32_MAX: none */
	uint64_t hot_w[TOP];
	size_t nhot;
	int32_t worst_poll; /* the poll that held up the worst delay most
			     * (its first cause, if a poll), -1 none */
	struct flag flags[MAX_FLAGS];
	size_t nflags;
	struct hot h;
};

/* ---- computing ---------------------------------------------------------- */

static int tid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void add_holder(struct holder_ns *v, size_t max, uint32_t tid, uint64_t ns,
		       size_t *n)
{
	size_t i;

	for (i = 0; i < *n && v[i].tid != tid; i++)
		;
	if (i == *n) {
		if (*n < max)
			(*n)++;
		else if (ns <= v[max - 1].ns)
			return;
		i = *n - 1;
		v[i].tid = tid;
		v[i].ns = ns;
	} else {
		v[i].ns = ns;
	}
	/* keep largest first */
	while (i > 0 && v[i].ns > v[i - 1].ns) {
		struct holder_ns x = v[i];

		v[i] = v[i - 1];
		v[--i] = x;
	}
}

/* Per (tid, holder) run-queue ns, then each worker's largest holders and
 * the largest over all threads of the target. */
static int holders(struct page *pg, const uint32_t *tids)
{
	const struct trace *t = pg->oc->trace;
	struct lib_map m, all;
	uint64_t key, *val;
	size_t i, nt = 0;

	if (lib_map_init(&m, 64) || lib_map_init(&all, 64)) {
		lib_map_release(&m);
		return -ENOMEM;
	}
	for (i = 0; i < t->nswitches; i++) {
		struct trace_hold h[TRACE_MAX_HOLDS];
		size_t nh =
			analysis_switch_holds(t, &t->switches[i], pg->oc->sw[i].runq, h);

		for (size_t k = 0; k < nh; k++) {
			uint64_t *v, *a;

			if (!h[k].tid || !h[k].ns)
				continue;
			v = lib_map_get(&m, (uint64_t)t->switches[i].tid << 32 | h[k].tid,
					NULL);
			a = lib_map_get(&all, h[k].tid, NULL);
			if (!v || !a) {
				lib_map_release(&m);
				lib_map_release(&all);
				return -ENOMEM;
			}
			*v += h[k].ns;
			*a += h[k].ns;
		}
	}
	i = 0;
	while (lib_map_next(&m, &i, &key, &val)) {
		uint32_t tid = (uint32_t)(key >> 32);
		const uint32_t *at;
		struct worker *w;
		size_t n = 0;

		at = bsearch(&tid, tids, pg->nw, sizeof(*tids), tid_cmp);
		if (!at)
			continue;
		w = &pg->w[at - tids];
		while (n < MAX_HOLDERS && w->holders[n].ns)
			n++;
		add_holder(w->holders, MAX_HOLDERS, (uint32_t)key, *val, &n);
	}
	for (i = 0; lib_map_next(&all, &i, &key, &val);)
		add_holder(pg->thieves, TOP, (uint32_t)key, *val, &nt);
	pg->nthieves = nt;
	lib_map_release(&m);
	lib_map_release(&all);
	return 0;
}

/* A worker's @m off-CPU intervals (oc->sw indices @sw): blocked and on a
 * run queue in its polls (with @in_task, its zero-code tasks too: a trace
 * with no polls of theirs; else those count outside polls, which they
 * are), outside them, parked (the parks a trace of polls has are counted
 * from its events: the caller's) */
static void add_switches(struct worker *w, const struct offcpu *oc, const uint32_t *sw,
			 size_t m, int in_task)
{
	for (size_t q = 0; q < m; q++) {
		const struct offcpu_switch *o = &oc->sw[sw[q]];

		w->runq += o->runq;
		if (o->where == OFFCPU_IN_POLL ||
		    (in_task && o->where == OFFCPU_IN_TASK)) {
			w->poll_blocked += o->ns - o->runq;
			w->poll_runq += o->runq;
		} else if (o->where == OFFCPU_NO_POLL || o->where == OFFCPU_IN_TASK) {
			w->out_blocked += o->ns - o->runq;
			w->out_runq += o->runq;
		} else if (o->where == OFFCPU_IDLE && in_task) {
			w->parked += o->ns;
		}
	}
}

/* Zero-code Tokio: per thread, sample weight in a task and outside one */
struct zc_thread {
	uint32_t tid;
	uint64_t in, out;
};

struct zc_walk {
	struct lib_map of_tid; /* tid -> index */
	struct zc_thread *v;
	size_t n, cap;
};

static int zc_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct zc_walk *z = ctx;
	uint64_t *v = lib_map_find(&z->of_tid, s->tid);
	uint64_t w = s->weight ? s->weight : 1;

	if (!v) {
		if (LIB_GROW(z->v, z->cap, z->n + 1) ||
		    lib_map_set(&z->of_tid, s->tid, z->n))
			return -ENOMEM;
		z->v[z->n] = (struct zc_thread){.tid = s->tid};
		v = lib_map_find(&z->of_tid, s->tid);
		z->n++;
	}
	if (p)
		z->v[*v].in += w;
	else
		z->v[*v].out += w;
	return 0;
}

/* The workers the @n thread ids of @tids name (left sorted, each once, in
 * its first pg->nw): pg->w with their tids. -ENOMEM */
static int workers_of(struct page *pg, uint32_t *tids, size_t n)
{
	size_t i, k;

	qsort(tids, n, sizeof(*tids), tid_cmp);
	for (i = k = 0; i < n; i++)
		if (!k || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	pg->nw = k;
	pg->w = calloc(k + 1, sizeof(*pg->w));
	if (!pg->w)
		return -ENOMEM;
	for (i = 0; i < k; i++)
		pg->w[i].tid = tids[i];
	return 0;
}

/* The workers of a zero-code trace: its threads that ran a task or parked
 * in Tokio, their CPU in tasks and outside from the samples (no polls
 * bound them), blocked and run-queue time from the switches (in a task:
 * the one they left), parked from Tokio's park. */
static int zc_workers(struct page *pg)
{
	const struct offcpu *oc = pg->oc;
	const struct trace *t = oc->trace;
	double period = analysis_period_ns(t);
	struct zc_walk z = {0};
	uint32_t *tids = NULL;
	size_t i, n = 0;
	int err = -ENOMEM;

	if (lib_map_init(&z.of_tid, 64))
		return -ENOMEM;
	err = join_for_each_sample(oc->join, zc_sample, &z);
	if (err)
		goto out;
	err = -ENOMEM;
	tids = malloc((z.n + t->nswitches + 1) * sizeof(*tids));
	if (!tids)
		goto out;
	for (i = 0; i < z.n; i++)
		if (z.v[i].in)
			tids[n++] = z.v[i].tid;
	for (i = 0; i < t->nswitches; i++)
		if (oc->sw[i].where == OFFCPU_IN_TASK || oc->sw[i].where == OFFCPU_IDLE)
			tids[n++] = t->switches[i].tid;
	err = workers_of(pg, tids, n);
	if (err)
		goto out;
	for (i = 0; i < pg->nw; i++) {
		struct worker *w = &pg->w[i];
		const uint64_t *at = lib_map_find(&z.of_tid, tids[i]);
		const uint32_t *sw;
		size_t m = offcpu__thread_switches(oc, tids[i], &sw);

		w->polls = UINT64_MAX; /* not known */
		if (at) {
			w->poll_cpu = (uint64_t)((double)z.v[*at].in * period);
			w->out_cpu = (uint64_t)((double)z.v[*at].out * period);
		}
		add_switches(w, oc, sw, m, 1);
	}
	err = holders(pg, tids);
out:
	free(tids);
	free(z.v);
	lib_map_release(&z.of_tid);
	return err;
}

/* A lean trace's threads that polled: those of its sums, after @n in
 * @tids (room for t->nsums more); the new count */
static size_t lean_threads(const struct trace *t, uint32_t *tids, size_t n)
{
	for (size_t i = 0; i < t->nsums; i++)
		tids[n++] = t->sums[i].tid;
	return n;
}

static int workers(struct page *pg)
{
	const struct offcpu *oc = pg->oc;
	const struct join *j = oc->join;
	const struct trace *t = oc->trace;
	/* lean: its polls under the threshold are in its sums, not the
	 * join, and its switches in them carry their task */
	int lean = analysis_is_lean(t, NULL, NULL, NULL);
	uint32_t *tids;
	size_t i, n = 0, cap;
	int err;

	/* the threads that polled, then those that parked */
	tids = join__poll_threads(j, &n);
	cap = n;
	if (!tids || LIB_GROW(tids, cap, n + t->nthreads + (lean ? t->nsums : 0))) {
		free(tids);
		return -ENOMEM;
	}
	if (lean)
		n = lean_threads(t, tids, n);
	for (i = 0; i < t->nthreads; i++)
		if (offcpu__parked_ns(oc, t->threads[i].tid, oc->start_time,
				      oc->end_time))
			tids[n++] = t->threads[i].tid;
	if (workers_of(pg, tids, n)) {
		free(tids);
		return -ENOMEM;
	}
	for (i = 0; i < pg->nw; i++) {
		struct worker *w = &pg->w[i];
		const uint32_t *sw;
		uint64_t in_polls, used;
		size_t m;

		w->polls = lean ? lean_thread_polls(t, tids[i], oc->start_time,
						    oc->end_time, &in_polls)
				: join__thread_totals(j, tids[i], &in_polls);
		m = offcpu__thread_switches(oc, tids[i], &sw);
		add_switches(w, oc, sw, m, lean);
		w->parked = offcpu__parked_ns(oc, tids[i], oc->start_time, oc->end_time);
		/* the switches in a poll are within it, but a lost switch-in
		 * clipped otherwise must not make a negative */
		w->poll_cpu = in_polls > w->poll_blocked + w->poll_runq
				      ? in_polls - w->poll_blocked - w->poll_runq
				      : 0;
		used = in_polls + w->out_blocked + w->out_runq + w->parked;
		w->out_cpu = pg->span > used ? pg->span - used : 0;
	}
	err = holders(pg, tids);
	free(tids);
	return err;
}

static int poll_dur_cmp(const void *a, const void *b)
{
	const struct poll *x = *(const struct poll *const *)a;
	const struct poll *y = *(const struct poll *const *)b;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The TOP longest polls in *@top, their number returned: a running top
 * five, as polls can be millions (a join listing some lists these). */
static size_t top_longest(const struct join *j, const struct poll *top[TOP])
{
	size_t n = 0;

	for (size_t i = 0; i < j->nlisted; i++) {
		const struct poll *p = &j->polls[i];
		size_t k;

		if (n == TOP && poll_dur_cmp(&p, &top[TOP - 1]) >= 0)
			continue;
		if (n < TOP)
			n++;
		for (k = n - 1; k > 0 && poll_dur_cmp(&p, &top[k - 1]) < 0; k--)
			top[k] = top[k - 1];
		top[k] = p;
	}
	return n;
}

size_t analysis_report_windows(const struct join *j, struct join_window *w)
{
	const struct poll *top[TOP];
	size_t n = top_longest(j, top);

	for (size_t i = 0; i < n; i++)
		w[i] = (struct join_window){top[i]->tid, top[i]->start, top[i]->end};
	return n;
}

static int longest_polls(struct page *pg)
{
	const struct poll *top[TOP];
	size_t i, n = top_longest(pg->oc->join, top);

	pg->nlongest = n;
	for (i = 0; i < n; i++) {
		pg->longest[i] = top[i];
		pg->nlc[i] = delays__causes(pg->oc, top[i]->tid, top[i]->start,
					    top[i]->end, pg->lc[i], 6);
		if (pg->nlc[i] > 6)
			pg->nlc[i] = 6;
		if (hot_want(&pg->h, (int32_t)top[i]->id))
			return -ENOMEM;
	}
	return 0;
}

static int task_samples_cmp(const void *a, const void *b)
{
	const struct task_stat *x = *(const struct task_stat *const *)a;
	const struct task_stat *y = *(const struct task_stat *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* The tasks with most samples in polls and each one's hottest stack, as
 * flame draws stacks (pg->h.canon: made by hot_walk), so that its share
 * is the one `flame --task N` shows. */
static int hot_tasks(struct page *pg)
{
	const struct join *j = pg->oc->join;
	const struct join_agg *agg = join_agg(j);
	const struct task_stat **v = malloc((j->ntasks + 1) * sizeof(*v));
	struct lib_map by = {0};
	uint64_t k, *val;
	size_t i, n;
	int err = -ENOMEM;

	if (!v || lib_map_init(&by, 256))
		goto out;
	for (i = 0; i < j->ntasks; i++)
		v[i] = &j->tasks[i];
	qsort(v, j->ntasks, sizeof(*v), task_samples_cmp);
	for (n = 0; n < TOP && n < j->ntasks && v[n]->samples; n++) {
		pg->hot[n] = v[n];
		pg->hot_stack[n] = UINT32_MAX;
		pg->hot_w[n] = 0;
	}
	pg->nhot = n;
	/* (task root, stack) weights summed per (root, path) */
	for (i = 0; agg && lib_map_next(&agg->map, &i, &k, &val);) {
		uint64_t *w;

		if (!(k >> 32))
			continue;
		w = lib_map_get(&by,
				(k >> 32) << 32 | stack_canon(pg->h.canon, pg->h.ncanon,
							      (uint32_t)k),
				NULL);
		if (!w)
			goto out;
		*w += agg->weight[*val];
	}
	for (i = 0; lib_map_next(&by, &i, &k, &val);) {
		uint64_t root = k >> 32, w = *val;
		uint32_t stack = (uint32_t)k;

		for (size_t q = 0; q < n; q++)
			if (root - 1 == (uint64_t)(pg->hot[q] - j->tasks) &&
			    (w > pg->hot_w[q] ||
			     (w == pg->hot_w[q] && stack < pg->hot_stack[q]))) {
				pg->hot_w[q] = w;
				pg->hot_stack[q] = stack;
			}
	}
	err = 0;
out:
	lib_map_release(&by);
	free(v);
	return err;
}

static struct flag *flag_new(struct page *pg, const char *what, const char *threshold)
{
	struct flag *f;

	if (pg->nflags == MAX_FLAGS)
		return NULL;
	f = &pg->flags[pg->nflags++];
	memset(f, 0, sizeof(*f));
	f->what = what;
	snprintf(f->threshold, sizeof(f->threshold), "%s", threshold);
	return f;
}

/* The polls over each flag's threshold: how many, and the worst. */
struct worst {
	const struct poll *lp, *rq, *bl; /* longest, most run queue, most
					  * blocked */
	uint64_t nlong, nrq, nbl;
};

static void worst_polls(const struct offcpu *oc, struct worst *w)
{
	const struct join *j = oc->join;
	const struct poll_offcpu *po, *rq = NULL, *bl = NULL; /* the worst's */
	uint32_t id;

	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < j->nlisted; i++) {
		const struct poll *p = &j->polls[i];

		if (p->end - p->start >= FLAG_LONG_POLL_NS) {
			w->nlong++;
			if (!w->lp || p->end - p->start > w->lp->end - w->lp->start)
				w->lp = p;
		}
	}
	/* listing some (the longest), the join counted them all */
	if (j->nlisted < j->npolls)
		w->nlong = j->ncounted;
	/* the polls with off-CPU time, in id order (the first of the worst
	 * wins, as over every poll) */
	for (size_t it = 0; offcpu__next_poll(oc, &it, &id, &po);) {
		const struct poll *p = join__poll(j, id);

		if (po->runq_ns >= FLAG_RUNQ_NS) {
			w->nrq++;
			if (!rq || po->runq_ns > rq->runq_ns) {
				w->rq = p;
				rq = po;
			}
		}
		if (po->ns - po->runq_ns >= FLAG_BLOCKED_NS) {
			w->nbl++;
			if (!bl || po->ns - po->runq_ns > bl->ns - bl->runq_ns) {
				w->bl = p;
				bl = po;
			}
		}
	}
}

/* Who held the CPU while poll @p waited for one, summed over its
 * switches: "stress[999] 6.00ms, kworker/0:1[12] 1.20ms" (the two that
 * held it longest, "and others" past them), into @buf */
static void poll_holders(const struct offcpu *oc, const struct poll *p, char *buf,
			 size_t len)
{
	enum { MOST = 8 };
	const struct trace *t = oc->trace;
	struct trace_hold sum[MOST], hd[TRACE_MAX_HOLDS];
	const uint32_t *sw;
	size_t m = offcpu__thread_switches(oc, p->tid, &sw), ns = 0, at = 0, k, q;
	char h[96], d[32];

	for (q = 0; q < m; q++) {
		const struct offcpu_switch *x = &oc->sw[sw[q]];
		size_t n;

		if (x->poll != (int32_t)p->id || !x->runq)
			continue;
		n = analysis_switch_holds(t, &t->switches[sw[q]], x->runq, hd);
		for (size_t i = 0; i < n; i++) {
			for (k = 0; k < ns && sum[k].tid != hd[i].tid; k++)
				;
			if (k == ns && ns < MOST)
				sum[ns++] = (struct trace_hold){hd[i].tid, 0};
			if (k < ns)
				sum[k].ns += hd[i].ns;
		}
	}
	/* the longest first */
	for (k = 1; k < ns; k++)
		for (q = k; q > 0 && sum[q].ns > sum[q - 1].ns; q--) {
			struct trace_hold tmp = sum[q];

			sum[q] = sum[q - 1];
			sum[q - 1] = tmp;
		}
	buf[0] = '\0';
	for (k = 0; k < ns && k < 2 && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s", k ? ", " : "",
				       analysis_holder_label(t, sum[k].tid, h, sizeof(h)),
				       text_duration(sum[k].ns, d, sizeof(d)));
	if (ns > 2 && at < len)
		snprintf(buf + at, len - at, " and others");
}

/* The run-queue flag: @nrq polls waited >= 1ms for a CPU, @rq the worst,
 * and who held the CPU meanwhile. */
static void flag_runq(struct page *pg, const struct poll *rq, uint64_t nrq)
{
	const struct offcpu *oc = pg->oc;
	const struct trace *t = oc->trace;
	struct flag *f = flag_new(pg, "run-queue wait in polls", "1ms");
	char a[32];

	if (!f)
		return;
	char h[96] = ANALYSIS_HOLD_UNKNOWN_LABEL;
	uint64_t best = 0;
	const uint32_t *sw;
	size_t m = offcpu__thread_switches(oc, rq->tid, &sw);

	for (size_t q = 0; q < m; q++)
		if (oc->sw[sw[q]].poll == (int32_t)rq->id && oc->sw[sw[q]].runq > best) {
			struct trace_hold hd[TRACE_MAX_HOLDS];

			best = oc->sw[sw[q]].runq;
			if (analysis_switch_holds(t, &t->switches[sw[q]], best, hd))
				analysis_holder_label(t, hd[0].tid, h, sizeof(h));
		}
	f->count = nrq;
	f->task = rq->task;
	snprintf(f->detail, sizeof(f->detail),
		 "%" PRIu64 " polls waited >= 1ms for a CPU, worst %s in poll %" PRIu32
		 ", behind %s",
		 nrq, text_duration(offcpu__poll(oc, rq->id)->runq_ns, a, sizeof(a)),
		 rq->id, h);
	snprintf(f->next, sizeof(f->next), "d9prof flame --poll %" PRIu32, rq->id);
}

/* The imbalance flag: the busiest worker's time in polls FLAG_IMBALANCE
 * times the idlest's or more. */
static void flag_imbalance(struct page *pg)
{
	const struct trace *t = pg->oc->trace;
	const struct worker *hi = NULL, *lo = NULL;
	struct flag *f;
	char a[32], b[32];
	size_t i;

	for (i = 0; i < pg->nw; i++) {
		const struct worker *w = &pg->w[i];
		uint64_t busy = w->poll_cpu + w->poll_blocked + w->poll_runq;

		if (!w->polls)
			continue;
		if (!hi || busy > hi->poll_cpu + hi->poll_blocked + hi->poll_runq)
			hi = w;
		if (!lo || busy < lo->poll_cpu + lo->poll_blocked + lo->poll_runq)
			lo = w;
	}
	if (hi && lo && hi != lo) {
		uint64_t bh = hi->poll_cpu + hi->poll_blocked + hi->poll_runq;
		uint64_t bo = lo->poll_cpu + lo->poll_blocked + lo->poll_runq;

		if ((double)bh >= FLAG_IMBALANCE * (double)bo &&
		    (f = flag_new(pg, "worker imbalance", "3x"))) {
			char x[128], y[128];

			analysis_thread_label(t, hi->tid, x, sizeof(x));
			analysis_thread_label(t, lo->tid, y, sizeof(y));
			f->count = 1;
			snprintf(f->detail, sizeof(f->detail),
				 "%s in polls %s, %s %s (%.1fx)", x,
				 text_duration(bh, a, sizeof(a)), y,
				 text_duration(bo, b, sizeof(b)),
				 bo ? (double)bh / (double)bo : 0.0);
			snprintf(f->next, sizeof(f->next), "d9prof polls --sort start");
		}
	}
}

/* The slow-span flag: spans of the application that lasted FLAG_SPAN_NS
 * or more, the slowest named. */
static void flag_span(struct page *pg)
{
	const struct span *worst;
	char a[32], name[64];
	struct flag *f;
	size_t n = pg->sp ? analysis_spans_over(pg->sp, FLAG_SPAN_NS, &worst) : 0;

	if (!n || !(f = flag_new(pg, "slow span", "100ms")))
		return;
	f->count = n;
	analysis_clean_name(spans_name(worst), name, sizeof(name));
	snprintf(f->detail, sizeof(f->detail),
		 "%zu spans >= 100ms, slowest %s %s (id %" PRIu64 ")", n, name,
		 text_duration(worst->closed - worst->created, a, sizeof(a)), worst->id);
	/* a name the target chose goes into a command to paste only as it
	 * is (not cleaned, not cut: --name matches it whole) and only if no
	 * shell would read anything but one word in it */
	if (!text_shell_word(spans_name(worst)) ||
	    (size_t)snprintf(f->next, sizeof(f->next),
			     "d9prof spans --name %s --min 100ms",
			     spans_name(worst)) >= sizeof(f->next))
		snprintf(f->next, sizeof(f->next), "d9prof spans --min 100ms");
}

static uint64_t mean_poll(const struct join *j, uint64_t task)
{
	const struct task_stat *ts = join__task(j, task);

	return ts && ts->polls ? ts->total_ns / ts->polls : 0;
}

/* Is @task, whose wakes are mostly its own, kept and busy waiting: its
 * polls short (a task that works a while and yields is cooperative) */
static int busy_waits(const struct join *j, uint64_t task)
{
	const struct task_stat *ts = join__task(j, task);

	return ts && join__kept(j, ts) && ts->polls &&
	       mean_poll(j, task) < DELAYS_SELF_POLL_NS;
}

/* What the detectors say of tasks: a poll that never yielded, a lost
 * waker, self-wakes, a leak (thresholds in d9prof(1)) */
static void flag_tasks(struct page *pg)
{
	const struct join *j = pg->oc->join;
	const struct delays *d = pg->d;
	const struct task_stat *worst = NULL;
	struct delays_leak lk[1];
	uint64_t n = 0;
	struct flag *f;
	char a[160], b[32], c[32];
	size_t nl, k, w = 0;

	for (size_t i = 0; i < j->ntasks; i++) {
		const struct task_stat *ts = &j->tasks[i];

		if (!join__kept(j, ts) || ts->longest_ns < DELAYS_NO_YIELD_NS)
			continue;
		n++;
		if (!worst || ts->longest_ns > worst->longest_ns)
			worst = ts;
	}
	if (worst && (f = flag_new(pg, "never yielded", "1s"))) {
		f->count = n;
		f->task = worst->task;
		/* where it spun: the top of its longest poll (one of the
		 * longest of all, by far) */
		for (k = 0; k < pg->nlongest; k++) {
			uint32_t fr, under;

			if (pg->longest[k]->task != worst->task)
				continue;
			if (offcpu__poll_top(pg->oc, pg->longest[k]->id, &fr, &under) > 0)
				site_label(pg->oc->trace, fr, under, f->function,
					   sizeof(f->function));
			break;
		}
		snprintf(f->detail, sizeof(f->detail),
			 "%s ran %s in one poll without yielding%s",
			 analysis_task_label(j, worst->task, a, sizeof(a)),
			 text_duration(worst->longest_ns, b, sizeof(b)),
			 n > 1 ? " (and others)" : "");
		snprintf(f->next, sizeof(f->next),
			 "d9prof flame --task %" PRIu64 " -o task.svg",
			 trace_task_number(worst->task));
	}
	for (n = 0, k = d->nidle; k-- > 0;)
		if (join__kept(j, join__task(j, d->idle[k].task))) {
			/* (the longest silent first: the last met; one whose
			 * wakers the runtime counted first of all) */
			if (!n++ || d->idle[k].dropped || !d->idle[w].dropped)
				w = k;
		}
	if (n && (f = flag_new(pg, "lost waker", "2s"))) {
		const struct delay *x = &d->idle[w];
		const struct poll *p = join__poll_at(j, x->poller, x->begin);
		uint32_t fr, under;

		f->count = n;
		f->task = x->task;
		/* where it last returned pending, if a sample or switch says */
		if (p && offcpu__poll_top(pg->oc, p->id, &fr, &under) > 0)
			site_label(pg->oc->trace, fr, under, f->function,
				   sizeof(f->function));
		snprintf(f->detail, sizeof(f->detail),
			 "%" PRIu64
			 " tasks pending and not woken again (for 2s or more, or no "
			 "waker left): %s, %s %s before the end%s",
			 n, analysis_task_label(j, x->task, a, sizeof(a)),
			 x->dropped ? "its last waker dropped" : "since",
			 text_duration(d->end_time - x->wake, b, sizeof(b)),
			 x->dropped ? "" : " (its waker dropped or lost?)");
		snprintf(f->next, sizeof(f->next), "d9prof polls --task %" PRIu64,
			 trace_task_number(x->task));
	}
	for (n = 0, w = 0, k = d->nself; k-- > 0;)
		if (busy_waits(j, d->selfwoken[k].task)) {
			n++;
			w = k; /* (most self-wakes first: the last met) */
		}
	if (n && (f = flag_new(pg, "self-wakes", "half"))) {
		const struct delays_self *s = &d->selfwoken[w];

		f->count = n;
		f->task = s->task;
		snprintf(f->detail, sizeof(f->detail),
			 "%s woke itself %" PRIu64 " times of its %" PRIu64
			 " wakes, polls of %s on average (a busy loop?)",
			 analysis_task_label(j, s->task, a, sizeof(a)), s->self_wakes,
			 s->wakes, text_duration(mean_poll(j, s->task), b, sizeof(b)));
		snprintf(f->next, sizeof(f->next),
			 "d9prof flame --task %" PRIu64 " -o task.svg",
			 trace_task_number(s->task));
	}
	nl = delays__leaks(d, lk, 1);
	if (nl && (f = flag_new(pg, "task leak", "16"))) {
		char name[128];

		analysis_clean_name(*lk[0].name ? lk[0].name : "[unnamed]", name,
				    sizeof(name));
		f->count = nl;
		f->task = lk[0].task;
		snprintf(f->detail, sizeof(f->detail),
			 "%zu tasks %s spawned all along (%s to %s) and never ended%s",
			 lk[0].n, name,
			 text_duration(lk[0].first - j->start_time, b, sizeof(b)),
			 text_duration(lk[0].last - j->start_time, c, sizeof(c)),
			 nl > 1 ? " (and other names)" : "");
		snprintf(f->next, sizeof(f->next), "d9prof tasks --by name");
	}
}

static void flags(struct page *pg)
{
	const struct offcpu *oc = pg->oc;
	const struct join *j = oc->join;
	const struct trace *t = oc->trace;
	struct worst ws;
	const struct poll *lp, *rq, *bl;
	uint64_t nlong, nrq, nbl, ndel = 0;
	struct loss l[LOSS_KINDS];
	struct flag *f;
	char a[32];
	size_t i, nl;

	worst_polls(oc, &ws);
	lp = ws.lp, rq = ws.rq, bl = ws.bl;
	nlong = ws.nlong, nrq = ws.nrq, nbl = ws.nbl;
	if (lp && (f = flag_new(pg, "long poll", "10ms"))) {
		uint32_t fr, under;

		uint64_t dur = lp->end - lp->start,
			 runq = offcpu__poll(oc, lp->id)->runq_ns;
		char who[200], b[32];

		f->count = nlong;
		f->task = lp->task;
		/* mostly on the run queue: not the task's code, the CPU's
		 * holders */
		if (2 * runq > dur) {
			poll_holders(oc, lp, who, sizeof(who));
			snprintf(f->detail, sizeof(f->detail),
				 "%" PRIu64 " polls >= 10ms, longest %s (poll %" PRIu32
				 "): it waited for a CPU %s (%.0f%%), behind %s",
				 nlong, text_duration(dur, a, sizeof(a)), lp->id,
				 text_duration(runq, b, sizeof(b)),
				 100.0 * (double)runq / (double)dur,
				 who[0] ? who : ANALYSIS_HOLD_UNKNOWN_LABEL);
		} else {
			if (offcpu__poll_top(oc, lp->id, &fr, &under) > 0)
				site_label(t, fr, under, f->function,
					   sizeof(f->function));
			snprintf(f->detail, sizeof(f->detail),
				 "%" PRIu64 " polls >= 10ms, longest %s (poll %" PRIu32
				 ")",
				 nlong, text_duration(dur, a, sizeof(a)), lp->id);
		}
		snprintf(f->next, sizeof(f->next), "d9prof flame --poll %" PRIu32,
			 lp->id);
	}
	/* counted as the delays were made, else from the whole list */
	if (pg->d->count_ns == FLAG_DELAY_NS)
		ndel = pg->d->counted;
	else
		for (i = 0; i < pg->d->n &&
			    pg->d->v[i].begin - pg->d->v[i].wake >= FLAG_DELAY_NS;
		     i++)
			ndel++;
	if (ndel && (f = flag_new(pg, "wake-to-poll delay", "5ms"))) {
		const struct delay *d = &pg->d->v[0];
		char lab[HOT_FRAMES][256];

		f->count = ndel;
		f->task = d->task;
		if (hot_frames(&pg->h, t, pg->worst_poll, lab))
			snprintf(f->function, sizeof(f->function), "%s", lab[0]);
		snprintf(f->detail, sizeof(f->detail),
			 "%" PRIu64 " delays >= 5ms, worst %s", ndel,
			 text_duration(d->begin - d->wake, a, sizeof(a)));
		snprintf(f->next, sizeof(f->next), "d9prof delays --task %" PRIu64,
			 trace_task_number(d->task));
	}
	if (rq)
		flag_runq(pg, rq, nrq);
	if (bl && (f = flag_new(pg, "blocking call in polls", "1ms"))) {
		uint32_t fr, under;

		f->count = nbl;
		f->task = bl->task;
		if (offcpu__poll_top(oc, bl->id, &fr, &under) > 0)
			site_label(t, fr, under, f->function, sizeof(f->function));
		snprintf(f->detail, sizeof(f->detail),
			 "%" PRIu64
			 " polls blocked >= 1ms off-CPU, worst %s (poll %" PRIu32 ")",
			 nbl,
			 text_duration(offcpu__poll(oc, bl->id)->ns -
					       offcpu__poll(oc, bl->id)->runq_ns,
				       a, sizeof(a)),
			 bl->id);
		snprintf(f->next, sizeof(f->next),
			 "d9prof offcpu --task %" PRIu64 " -o off.svg",
			 trace_task_number(bl->task));
	}
	flag_imbalance(pg);
	flag_span(pg);
	flag_tasks(pg);
	if (pg->d->nlost && (f = flag_new(pg, "woken, never polled", "any"))) {
		f->count = pg->d->nlost;
		f->task = pg->d->lost[0].task;
		snprintf(
			f->detail, sizeof(f->detail),
			"%zu tasks woken and not polled again by the end (lost wake-ups?)",
			pg->d->nlost);
		snprintf(f->next, sizeof(f->next), "d9prof delays --task %" PRIu64,
			 trace_task_number(pg->d->lost[0].task));
	}
	nl = analysis_losses(t, LOSS_ALL, l);
	if ((nl || j->unmatched_ends) && (f = flag_new(pg, "data lost", "any"))) {
		char what[LOSS_TEXT_MAX], ends[48] = "", gap[80] = "";
		const struct loss *most = NULL;

		for (i = 0; i < nl; i++) {
			f->count += l[i].count;
			if (l[i].advice && (!most || l[i].count > most->count))
				most = &l[i];
		}
		analysis_losses_text(t, LOSS_ALL, what, sizeof(what));
		if (j->unmatched_ends)
			snprintf(ends, sizeof(ends), "%s%" PRIu64 " poll ends unmatched",
				 *what ? ", " : "", j->unmatched_ends);
		if (j->ngaps)
			snprintf(gap, sizeof(gap), ", %s without runtime events",
				 text_duration(j->gap_ns, a, sizeof(a)));
		/* cut to what the line holds (the return value says by how much) */
		if (snprintf(f->detail, sizeof(f->detail), "%s%s%s", what, ends, gap) < 0)
			*f->detail = '\0';
		/* the recording that loses less of the largest loss one would */
		snprintf(f->next, sizeof(f->next), "%s",
			 most ? most->advice : "d9prof info  # each loss, and where");
	}
}

/* ---- rendering ---------------------------------------------------------- */

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

#define META_W 128

/* Meta @key as shown (text_clean(), cut to META_W - 1 bytes), "?" if the
 * trace has none. */
static const char *meta_text(const struct trace *t, const char *key, char buf[META_W])
{
	const char *v = analysis_meta(t, key);

	text_clean(v ? v : "?", buf, META_W);
	return buf;
}

static void text_recorded(const struct page *pg, FILE *out)
{
	const struct offcpu *oc = pg->oc;
	const struct join *j = oc->join;
	const struct trace *t = oc->trace;
	struct loss l[LOSS_KINDS];
	char a[32], b[32], m[3][META_W];
	uint64_t lean_poll;
	size_t nl;

	/* the trace's words, not ours: the target's command line (whole)
	 * and the rest of the meta cleaned as every shown name */
	fprintf(out, "== What was recorded\n");
	fputs("  target: ", out);
	text_put(out, analysis_meta(t, TRACE_META_CMDLINE) ?: "?");
	fprintf(out, " (pid %s), %s recorded%s\n", meta_text(t, "pid", m[0]),
		text_duration(pg->span, a, sizeof(a)),
		t->complete ? "" : ", trace cut short");
	fprintf(out, "  CPU samples: %" PRIu64 " (%s, %s sampler, %s)\n", j->samples,
		meta_text(t, "event", m[0]), meta_text(t, "sampler", m[1]),
		meta_text(t, "frequency", m[2]));
	if (analysis_tokio_unpolled(t))
		fprintf(out,
			"  runtime: %zu tasks, %zu workers (zero-code Tokio %s: tasks read in "
			"its threads at samples and switch-outs; no polls, wakes or "
			"spawns)\n",
			j->ntasks, pg->nw, analysis_meta(t, TRACE_META_TOKIO));
	else if (analysis_is_lean(t, &lean_poll, NULL, NULL))
		fprintf(out,
			"  runtime: %zu tasks, %zu polls of %s or that waited as long (lean: "
			"the others counted per task, in tasks), %zu workers\n",
			j->ntasks, j->npolls, text_duration(lean_poll, b, sizeof(b)),
			pg->nw);
	else
		fprintf(out, "  runtime: %zu tasks, %zu polls, %zu workers%s\n",
			j->ntasks, j->npolls, pg->nw,
			j->ntasks ? "" : " (no shim: no task attribution)");
	if (t->nswitches)
		fprintf(out, "  off-CPU: %zu intervals (%s)\n", t->nswitches,
			meta_text(t, "offcpu", m[0]));
	else
		fprintf(out, "  off-CPU: none, %s\n", offcpu_missing(t));
	if (oc->runq_split)
		fprintf(out, "  run queue: wakeups recorded (%s)\n",
			meta_text(t, "wakeups", m[0]));
	else
		fprintf(out, "  run queue: blocked and run-queue time not split, %s\n",
			analysis_runq_missing(t));
	nl = analysis_losses(t, LOSS_ALL, l);
	if (!nl)
		fprintf(out, "  lost: nothing\n");
	for (size_t i = 0; i < nl; i++)
		fprintf(out, "  lost: %" PRIu64 " %s\n", l[i].count, l[i].what);
	if (j->ngaps) {
		/* what made them, each kind the trace has */
		static const struct {
			const char *key, *why;
		} kinds[] = {
			{TRACE_META_SHIM_GAP,
			 "the recorder stalled past the shim's lease"},
			{TRACE_META_SEGMENT_GAP, "segments not recorded"},
			{TRACE_META_TOKIO_PROBES_OFF, "the poll probes came off"},
		};
		const char *sep = " (";

		fprintf(out, "  lost: %s of runtime events in %zu gap%s",
			text_duration(j->gap_ns, a, sizeof(a)), j->ngaps,
			j->ngaps == 1 ? "" : "s");
		for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
			if (analysis_meta(t, kinds[i].key)) {
				fprintf(out, "%s%s", sep, kinds[i].why);
				sep = "; ";
			}
		fputs(*sep == ';' ? ")\n" : "\n", out);
	}
}

static void text_workers(const struct page *pg, FILE *out)
{
	const struct trace *t = pg->oc->trace;
	int zc = analysis_tokio_unpolled(t);
	char a[32], n[128];

	fprintf(out, "\n== Workers: where their time went (%% of %s)\n",
		text_duration(pg->span, a, sizeof(a)));
	if (!pg->nw) {
		fprintf(out, "  no thread polled or parked\n");
		return;
	}
	if (zc)
		fprintf(out, "  %-26s %7s  %-23s  %-23s  %6s\n", "", "", "in tasks",
			"outside tasks", "");
	else
		fprintf(out, "  %-26s %7s  %-23s  %-23s  %6s\n", "", "", "in polls",
			"outside polls", "");
	fprintf(out, "  %-26s %7s  %6s %8s %6s  %6s %8s %6s  %6s\n", "THREAD", "POLLS",
		"CPU", "BLOCKED", "RUNQ", "CPU", "BLOCKED", "RUNQ", "PARKED");
	for (size_t i = 0; i < pg->nw; i++) {
		const struct worker *w = &pg->w[i];

		char polls[24] = "-";

		if (w->polls != UINT64_MAX)
			snprintf(polls, sizeof(polls), "%" PRIu64, w->polls);
		analysis_thread_label(t, w->tid, n, sizeof(n));
		fprintf(out,
			"  %-26s %7s"
			"  %5.1f%% %7.1f%% %5.1f%%  %5.1f%% %7.1f%% %5.1f%%  "
			"%5.1f%%\n",
			n, polls, pct(w->poll_cpu, pg->span),
			pct(w->poll_blocked, pg->span), pct(w->poll_runq, pg->span),
			pct(w->out_cpu, pg->span), pct(w->out_blocked, pg->span),
			pct(w->out_runq, pg->span), pct(w->parked, pg->span));
	}
	if (!zc && pg->oc->join->ngaps)
		fprintf(out,
			"  (%s in gaps with no runtime events counts outside polls: "
			"see What was recorded)\n",
			text_duration(pg->oc->join->gap_ns, a, sizeof(a)));
}

static void text_longest(const struct page *pg, FILE *out)
{
	const struct join *j = pg->oc->join;
	const struct trace *t = pg->oc->trace;
	char a[32], task[160], th[128];

	fprintf(out, "\n== Longest polls and what filled them\n");
	if (!pg->nlongest)
		fprintf(out, "  no polls%s\n",
			analysis_tokio_unpolled(t) ? " (zero-code: no poll boundaries)"
						   : "");
	for (size_t i = 0; i < pg->nlongest; i++) {
		const struct poll *p = pg->longest[i];

		analysis_task_label(j, p->task, task, sizeof(task));
		analysis_thread_label(t, p->tid, th, sizeof(th));
		fprintf(out, "  %s%s  poll %" PRIu32 "  %s on %s: ",
			text_duration(p->end - p->start, a, sizeof(a)),
			p->open_start || p->open_end ? "+" : "", p->id, task, th);
		analysis_causes_text(pg->oc, &pg->h, pg->lc[i], pg->nlc[i],
				     p->end - p->start, &p->task, out);
		fputc('\n', out);
	}
}

static void text_runq(const struct page *pg, FILE *out)
{
	const struct trace *t = pg->oc->trace;
	char a[32], b[32], n[128], h[96];
	int any = 0;

	fprintf(out, "\n== Kernel run queue: time runnable, waiting for a CPU\n");
	if (!pg->oc->runq_split)
		fprintf(out, "  (preempted time only: %s)\n", analysis_runq_missing(t));
	for (size_t i = 0; i < pg->nw; i++) {
		const struct worker *w = &pg->w[i];

		if (!w->runq)
			continue;
		any = 1;
		analysis_thread_label(t, w->tid, n, sizeof(n));
		fprintf(out, "  %s waited %s for a CPU", n,
			text_duration(w->runq, a, sizeof(a)));
		for (size_t k = 0; k < MAX_HOLDERS && w->holders[k].ns; k++)
			fprintf(out, "%s%s of it behind %s", k ? ", " : ", ",
				text_duration(w->holders[k].ns, b, sizeof(b)),
				analysis_holder_label(t, w->holders[k].tid, h,
						      sizeof(h)));
		fputc('\n', out);
	}
	if (!any)
		fprintf(out, "  none\n");
	if (any && analysis_runq_holders_missing(t))
		fprintf(out, "  (holders approximate: %s)\n",
			analysis_runq_holders_missing(t));
	if (pg->nthieves) {
		fprintf(out, "  CPU held while our threads waited:");
		for (size_t k = 0; k < pg->nthieves; k++)
			fprintf(out, "%s %s %s", k ? "," : "",
				analysis_holder_label(t, pg->thieves[k].tid, h,
						      sizeof(h)),
				text_duration(pg->thieves[k].ns, a, sizeof(a)));
		fputc('\n', out);
	}
}

static void text_hot(const struct page *pg, FILE *out)
{
	const struct trace *t = pg->oc->trace;
	const struct join *j = pg->oc->join;
	double period = analysis_period_ns(t);
	char task[160], lab[HOT_FRAMES][256], d[32];

	fprintf(out, "\n== CPU hot spots per task\n");
	if (!pg->nhot)
		fprintf(out, "  no CPU samples inside polls\n");
	for (size_t i = 0; i < pg->nhot; i++) {
		size_t n = analysis_stack_labels(t, pg->hot_stack[i], lab, HOT_FRAMES);

		analysis_task_label(j, pg->hot[i]->task, task, sizeof(task));
		fprintf(out, "  %s: ", task);
		/* CPU% as everywhere: of one CPU over the recording */
		if (period)
			fprintf(out, "CPU %s (%.1f%% of a CPU), ",
				text_duration(
					(uint64_t)(period * (double)pg->hot[i]->samples),
					d, sizeof(d)),
				pct((uint64_t)(period * (double)pg->hot[i]->samples),
				    pg->span));
		fprintf(out, "%.1f%% of all samples, hottest stack %.0f%%:",
			pct(pg->hot[i]->samples, j->samples),
			pct(pg->hot_w[i], pg->hot[i]->samples));
		for (size_t k = 0; k < n; k++)
			fprintf(out, "%s%s", k ? " <- " : " ", lab[k]);
		fputc('\n', out);
	}
}

/* The first ten of @n tasks as "task N name: VERB at Xs, STATE Y+ TAIL",
 * Y the time from then to the end, and how many more. */
static void text_task_list(const struct page *pg, const struct delay *v, size_t n,
			   const char *verb, const char *state, const char *tail,
			   FILE *out)
{
	char task[160], a[32];
	size_t i;

	if (!n)
		fprintf(out, "  none\n");
	for (i = 0; i < n && i < 10; i++) {
		analysis_task_label(pg->oc->join, v[i].task, task, sizeof(task));
		fprintf(out, "  %s: %s at %.3fs, %s %s+ %s\n", task, verb,
			(double)since_start(pg->oc, v[i].wake) / 1e9, state,
			text_duration(pg->d->end_time - v[i].wake, a, sizeof(a)), tail);
	}
	if (i < n)
		fprintf(out, "  ... and %zu more\n", n - i);
}

static void text_lost(const struct page *pg, FILE *out)
{
	fprintf(out, "\n== Tasks woken and never polled again (lost wake-ups?)\n");
	text_task_list(pg, pg->d->lost, pg->d->nlost, "woken", "waited", "to the end",
		       out);
	if (pg->d->waiting_at_end)
		fprintf(out,
			"  (%" PRIu64
			" more woken shortly before the end, still waiting: "
			"too soon to say)\n",
			pg->d->waiting_at_end);
	fprintf(out, "\n== Tasks spawned while recorded and never ended\n");
	text_task_list(pg, pg->d->unended, pg->d->nunended, "spawned", "alive",
		       "at the end", out);
}

/* The application's spans: the rows, then the slowest explained. */
static int text_spans(const struct page *pg, FILE *out)
{
	int err;

	if (!pg->sp || !pg->sp->ninstances)
		return 0;
	fprintf(out, "\n== Application spans, slowest (p99) first\n");
	err = analysis__spans(pg->sp, pg->oc, pg->d, &(struct spans_opts){.limit = TOP},
			      out);
	if (!err) {
		fprintf(out, "the slowest:\n");
		err = analysis__spans(pg->sp, pg->oc, pg->d,
				      &(struct spans_opts){.instances = 1, .limit = 1},
				      out);
	}
	return err;
}

/* @f's next command as one can paste it: a view's with the inputs read
 * (pg->args: "-i FILE --pid N --service S --host H --from T --to T"),
 * info's with its files alone (it reads no window or store), record's as
 * it is */
static const char *next_cmd(const struct page *pg, const struct flag *f, char *buf,
			    size_t len)
{
	static const char *const window[] = {" --service ", " --from ", " --to "};
	const char *cmd = f->next + 7, *rest = cmd + strcspn(cmd, " "), *w;
	size_t n = pg->args ? strlen(pg->args) : 0;

	if (!n || strncmp(f->next, "d9prof ", 7) || !strncmp(cmd, "record ", 7))
		return f->next;
	for (size_t i = 0; !strncmp(cmd, "info", 4) && i < 3; i++)
		if ((w = strstr(pg->args, window[i])) && (size_t)(w - pg->args) < n)
			n = (size_t)(w - pg->args);
	snprintf(buf, len, "%.*s %.*s%s", (int)(rest - f->next), f->next, (int)n,
		 pg->args, rest);
	return buf;
}

static void text_flags(const struct page *pg, FILE *out)
{
	char task[160], next[1024];

	fprintf(out, "\n== Red flags\n");
	if (!pg->nflags)
		fprintf(out,
			"  none (long poll >= 10ms, wake-to-poll delay >= 5ms, run-queue wait "
			">= 1ms in a poll, blocking >= 1ms in a poll, worker imbalance >= 3x, "
			"slow span >= 100ms, lost wake-ups, lost data)\n");
	for (size_t i = 0; i < pg->nflags; i++) {
		const struct flag *f = &pg->flags[i];

		fprintf(out, "  ! %s (>= %s): %s", f->what, f->threshold, f->detail);
		if (f->task) {
			analysis_task_label(pg->oc->join, f->task, task, sizeof(task));
			fprintf(out, "; %s", task);
		}
		if (f->function[0])
			fprintf(out, " in %s", f->function);
		fprintf(out, "\n      next: %s\n", next_cmd(pg, f, next, sizeof(next)));
	}
}

static void json_task(const struct join *j, uint64_t task, struct lib_json *w)
{
	const struct task_stat *ts = join__task(j, task);

	lib_json_uint_field(w, "task", trace_task_number(task));
	lib_json_str_field(w, "task_name", ts ? ts->name : NULL);
}

static void json_recorded(const struct page *pg, struct lib_json *w)
{
	const struct offcpu *oc = pg->oc;
	const struct join *j = oc->join;
	const struct trace *t = oc->trace;
	const char *pid = analysis_meta(t, TRACE_META_PID);
	char *end = NULL;
	unsigned long v = pid ? strtoul(pid, &end, 10) : 0;

	lib_json_name(w, "recorded");
	lib_json_object_begin(w);
	lib_json_str_field(w, "cmdline", analysis_meta(t, TRACE_META_CMDLINE));
	lib_json_name(w, "pid");
	if (pid && *pid && end && !*end)
		lib_json_uint(w, v);
	else
		lib_json_null(w);
	lib_json_uint_field(w, "span_ns", pg->span);
	lib_json_bool_field(w, "complete", t->complete);
	lib_json_uint_field(w, "samples", j->samples);
	lib_json_uint_field(w, "tasks", j->ntasks);
	lib_json_uint_field(w, "polls", j->npolls);
	lib_json_uint_field(w, "switches", t->nswitches);
	lib_json_str_field(w, "event", analysis_meta(t, TRACE_META_EVENT));
	lib_json_str_field(w, "sampler", analysis_meta(t, TRACE_META_SAMPLER));
	lib_json_str_field(w, "offcpu", analysis_meta(t, TRACE_META_OFFCPU));
	lib_json_str_field(w, "wakeups", analysis_meta(t, TRACE_META_WAKEUPS));
	lib_json_bool_field(w, "runq_split", oc->runq_split);
	lib_json_uint_field(w, "unmatched_poll_ends", j->unmatched_ends);
	lib_json_uint_field(w, "shim_gap_ns", j->gap_ns);
	analysis_losses_json(t, LOSS_ALL, w);
	lib_json_object_end(w);
}

static void json_workers(const struct page *pg, struct lib_json *w)
{
	const struct trace *t = pg->oc->trace;

	lib_json_name(w, "workers");
	lib_json_array_begin(w);
	for (size_t i = 0; i < pg->nw; i++) {
		const struct worker *wk = &pg->w[i];

		lib_json_object_begin(w);
		lib_json_uint_field(w, "tid", wk->tid);
		lib_json_str_field(w, "thread", trace__thread_name(t, wk->tid));
		lib_json_name(w, "polls");
		if (wk->polls == UINT64_MAX)
			lib_json_null(w);
		else
			lib_json_uint(w, wk->polls);
		lib_json_uint_field(w, "poll_cpu_ns", wk->poll_cpu);
		lib_json_uint_field(w, "poll_blocked_ns", wk->poll_blocked);
		lib_json_uint_field(w, "poll_runq_ns", wk->poll_runq);
		lib_json_uint_field(w, "outside_cpu_ns", wk->out_cpu);
		lib_json_uint_field(w, "outside_blocked_ns", wk->out_blocked);
		lib_json_uint_field(w, "outside_runq_ns", wk->out_runq);
		lib_json_uint_field(w, "parked_ns", wk->parked);
		lib_json_uint_field(w, "runq_ns", wk->runq);
		lib_json_name(w, "holders");
		lib_json_array_begin(w);
		for (size_t k = 0; k < MAX_HOLDERS && wk->holders[k].ns; k++)
			analysis_holder_json(t, wk->holders[k].tid, &wk->holders[k].ns,
					     w);
		lib_json_array_end(w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "thieves");
	lib_json_array_begin(w);
	for (size_t i = 0; i < pg->nthieves; i++)
		analysis_holder_json(t, pg->thieves[i].tid, &pg->thieves[i].ns, w);
	lib_json_array_end(w);
}

static void json_longest(const struct page *pg, struct lib_json *w)
{
	lib_json_name(w, "longest_polls");
	lib_json_array_begin(w);
	for (size_t i = 0; i < pg->nlongest; i++) {
		const struct poll *p = pg->longest[i];

		lib_json_object_begin(w);
		lib_json_uint_field(w, "poll", p->id);
		json_task(pg->oc->join, p->task, w);
		lib_json_uint_field(w, "tid", p->tid);
		lib_json_uint_field(w, "duration_ns", p->end - p->start);
		lib_json_bool_field(w, "lower_bound", p->open_start || p->open_end);
		lib_json_name(w, "causes");
		analysis_causes_json(pg->oc, &pg->h, pg->lc[i], pg->nlc[i], w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}

static void json_hot(const struct page *pg, struct lib_json *w)
{
	const struct offcpu *oc = pg->oc;
	const struct trace *t = oc->trace;
	size_t i;

	lib_json_name(w, "hot");
	lib_json_array_begin(w);
	for (i = 0; i < pg->nhot; i++) {
		char lab[8][256];
		size_t n = analysis_stack_labels(t, pg->hot_stack[i], lab, 8);

		lib_json_object_begin(w);
		json_task(oc->join, pg->hot[i]->task, w);
		lib_json_uint_field(w, "samples", pg->hot[i]->samples);
		lib_json_name(w, "cpu_ns");
		lib_json_double(w, "%.0f",
				analysis_period_ns(t) * (double)pg->hot[i]->samples);
		lib_json_uint_field(w, "stack_samples", pg->hot_w[i]);
		lib_json_name(w, "stack");
		lib_json_array_begin(w);
		for (size_t k = 0; k < n; k++)
			lib_json_str(w, lab[k]);
		lib_json_array_end(w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "never_ended");
	lib_json_array_begin(w);
	for (i = 0; i < pg->d->nunended; i++) {
		lib_json_object_begin(w);
		json_task(oc->join, pg->d->unended[i].task, w);
		lib_json_uint_field(w, "spawned_ns",
				    since_start(oc, pg->d->unended[i].wake));
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}

static void json_flags(const struct page *pg, struct lib_json *w)
{
	lib_json_name(w, "flags");
	lib_json_array_begin(w);
	for (size_t i = 0; i < pg->nflags; i++) {
		const struct flag *f = &pg->flags[i];
		char next[1024];

		lib_json_object_begin(w);
		lib_json_str_field(w, "flag", f->what);
		lib_json_str_field(w, "threshold", f->threshold);
		lib_json_uint_field(w, "count", f->count);
		lib_json_name(w, "task");
		if (f->task)
			lib_json_uint(w, trace_task_number(f->task));
		else
			lib_json_null(w);
		lib_json_str_field(w, "function", f->function[0] ? f->function : NULL);
		lib_json_str_field(w, "detail", f->detail);
		lib_json_str_field(w, "next", next_cmd(pg, f, next, sizeof(next)));
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}

/* "spans": {"spans": rows, "instances": [the slowest], "matched": N}, or
 * null without spans. */
static int json_spans(const struct page *pg, struct lib_json *w)
{
	int err;

	lib_json_name(w, "spans");
	if (!pg->sp || !pg->sp->ninstances) {
		lib_json_null(w);
		return 0;
	}
	lib_json_object_begin(w);
	err = analysis__spans_json(pg->sp, pg->oc, pg->d,
				   &(struct spans_opts){.limit = TOP}, w);
	if (!err)
		err = analysis__spans_json(
			pg->sp, pg->oc, pg->d,
			&(struct spans_opts){.instances = 1, .limit = 1}, w);
	lib_json_object_end(w);
	return err;
}

static int json_page(const struct page *pg, FILE *out)
{
	struct delays_opts dopts = {.limit = TOP, .json = 1, .no_losses = 1};
	struct lib_json w;
	int err;

	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	json_recorded(pg, &w);
	json_workers(pg, &w);
	json_longest(pg, &w);
	lib_json_name(&w, "delays");
	err = analysis__delays_json(pg->oc, pg->d, &dopts, &w);
	if (err)
		return err;
	/* the delays' own document ends its line there: kept, so that the
	 * report reads as it always has */
	lib_json_newline(&w);
	json_hot(pg, &w);
	err = json_spans(pg, &w);
	if (err)
		return err;
	json_flags(pg, &w);
	lib_json_object_end(&w);
	return lib_json_finish(&w);
}

/* What the page says, computed into @pg (page_release() it). */
static int page_make(struct page *pg)
{
	const struct offcpu *oc = pg->oc;
	const struct delays *d = pg->d;
	int err;

	pg->span = oc->end_time > oc->start_time ? oc->end_time - oc->start_time : 0;
	err = hot_init(&pg->h);
	if (!err)
		err = analysis_tokio_unpolled(pg->oc->trace) ? zc_workers(pg)
							     : workers(pg);
	if (!err)
		err = longest_polls(pg);
	/* the worst delay's flag names the hottest frame behind it */
	pg->worst_poll = -1;
	if (!err && d->n) {
		struct delay_cause c[1];

		if (delays__causes(oc, d->v[0].poller, d->v[0].wake, d->v[0].begin, c,
				   1) &&
		    c[0].kind == CAUSE_POLL)
			pg->worst_poll = c[0].poll;
		err = hot_want(&pg->h, pg->worst_poll);
	}
	if (!err)
		err = hot_walk(&pg->h, oc->join);
	if (!err)
		err = hot_tasks(pg);
	if (!err)
		flags(pg);
	return err;
}

static void page_release(struct page *pg)
{
	hot_release(&pg->h);
	free(pg->w);
}

struct join_keep analysis_report_join_keep(void)
{
	return (struct join_keep){.n = TOP, .longest = 1, .count_ns = FLAG_LONG_POLL_NS};
}

struct delays_keep analysis_report_keep(const struct spans *sp)
{
	/* the worst, and the waits of the span it explains */
	return (struct delays_keep){
		.count_ns = FLAG_DELAY_NS, .top = TOP, .listed = sp && sp->ninstances};
}

struct spans_keep analysis_report_spans_keep(void)
{
	return (struct spans_keep){.top = 1, .over_ns = FLAG_SPAN_NS};
}

int analysis__report_row(const struct offcpu *oc, const struct delays *d,
			 const struct spans *sp, struct report_row *out)
{
	struct page pg = {.oc = oc, .d = d, .sp = sp};
	double period;
	uint64_t all = 0, runq = 0;
	size_t at = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!oc || !d)
		return -EINVAL;
	err = page_make(&pg);
	if (err)
		goto out;
	period = analysis_period_ns(oc->trace);
	out->span_ns = pg.span;
	out->polls = oc->join->npolls;
	out->samples = oc->join->samples;
	out->cpu_pct =
		pg.span ? 100.0 * (double)out->samples * period / (double)pg.span : 0;
	out->worst_poll_ns = pg.nlongest ? pg.longest[0]->end - pg.longest[0]->start : 0;
	out->worst_delay_ns = d->n ? d->v[0].begin - d->v[0].wake : 0;
	for (size_t i = 0; i < pg.nw; i++) {
		runq += pg.w[i].runq;
		all += pg.span;
	}
	out->runq_pct = all ? 100.0 * (double)runq / (double)all : 0;
	out->nflags = pg.nflags;
	for (size_t i = 0; i < pg.nflags && at < sizeof(out->flags); i++)
		at += (size_t)snprintf(out->flags + at, sizeof(out->flags) - at, "%s%s",
				       i ? ", " : "", pg.flags[i].what);
out:
	page_release(&pg);
	return err;
}

int analysis__report(const struct offcpu *oc, const struct delays *d,
		     const struct spans *sp, const char *args, int json, FILE *out)
{
	struct page pg = {.oc = oc, .d = d, .sp = sp, .args = args};
	struct delays_opts dopts = {.limit = TOP, .no_lost = 1, .no_losses = 1};
	int err;

	if (!oc || !d || !out)
		return -EINVAL;
	err = page_make(&pg);
	if (err)
		goto out;
	if (json) {
		err = json_page(&pg, out);
	} else {
		text_recorded(&pg, out);
		text_workers(&pg, out);
		text_longest(&pg, out);
		fprintf(out, "\n== Worst wake-to-poll delays\n");
		err = analysis__delays(oc, d, &dopts, out);
		if (!err)
			err = text_spans(&pg, out);
		if (!err) {
			text_runq(&pg, out);
			text_hot(&pg, out);
			text_lost(&pg, out);
			text_flags(&pg, out);
		}
	}
	if (!err && ferror(out))
		err = -EIO;
out:
	page_release(&pg);
	return err;
}
