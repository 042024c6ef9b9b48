/* SPDX-License-Identifier: MIT */
/*
 * offcpu_join.c - off-CPU intervals to polls and parked time, and each
 * poll's top frame. The rules are in analysis.h (struct offcpu).
 *
 * Polls come from the join (one binary search per switch). Parked time is
 * replayed here from PARK/UNPARK events per thread into intervals sorted
 * by (tid, start), which never overlap on one thread, so "parked at t" is
 * one binary search too. Switches are also indexed per poll (counting
 * sort) so that a poll's top frame looks at its own records only; of the
 * samples, one walk keeps each poll's heaviest leaf frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/stacks.h"
#include "analysis/tokio.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/map.h"
#include "lib/search.h"

struct offcpu_priv {
	struct offcpu pub;
	struct offcpu_park *parks;
	size_t nparks;
	/* the polls that have samples, by id: the leaf frame with the most
	 * sample weight (memory by sampled polls, not polls) */
	struct poll_leaf {
		uint32_t poll, leaf;
	} * leaves;
	size_t nleaves;
	/* the switches in polls, by (poll, switch): a poll's are a range
	 * (memory by those switches, not by polls) */
	struct poll_switch {
		uint32_t poll, k;
	} * in_polls;
	size_t nin_polls;
	/* the polls with a switch, by id: their off-CPU time */
	struct poll_total {
		uint32_t poll;
		struct poll_offcpu v;
	} * totals;
	size_t ntotals;
	/* switches by (tid, time): a thread's are by_tid[tid_off[k] ..] */
	uint32_t *by_tid;
};

#define OFFCPU_PRIV(oc) ((struct offcpu_priv *)(oc))

/* ---- parked intervals --------------------------------------------------- */

static int pev_cmp(const void *a, const void *b)
{
	const struct join_pev *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A park ends, at the latest, where its thread begins a poll: a thread
 * polling is not parked (its unpark was lost, or came out of order). */
static uint64_t park_until_poll(const struct join *j, uint32_t tid, uint64_t start,
				uint64_t end)
{
	const uint32_t *ids;
	size_t m = join__thread_polls(j, tid, &ids), lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->polls[ids[mid]].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m && j->polls[ids[lo]].start < end)
		end = j->polls[ids[lo]].start;
	return end;
}

static int add_park(struct offcpu_priv *op, size_t *cap, uint32_t tid, uint64_t start,
		    uint64_t end)
{
	end = park_until_poll(op->pub.join, tid, start, end);
	if (LIB_GROW(op->parks, *cap, op->nparks + 1))
		return -ENOMEM;
	op->parks[op->nparks].tid = tid;
	op->parks[op->nparks].start = start;
	op->parks[op->nparks].end = end < start ? start : end;
	op->nparks++;
	return 0;
}

/* Where a park still open after the events of its thread ends: at the gap
 * @gi if there is one (the shim recorded nothing from there on), else at
 * the recording end. */
static uint64_t park_end(const struct offcpu_priv *op, size_t gi)
{
	const struct join *j = op->pub.join;

	return gi < j->ngaps && j->gaps[gi].start < op->pub.end_time ? j->gaps[gi].start
								     : op->pub.end_time;
}

static int build_parks(struct offcpu_priv *op)
{
	const struct join *j = op->pub.join;
	const struct join_pev *jv;
	struct join_pev *ev;
	size_t i, n = join_park_events(j, &jv), cap = 0, gi = 0;
	uint64_t floor = 0, pstart = 0;
	uint32_t tid = 0;
	int parked = 0, seen = 0, err = 0;

	/* the join's walk met them (no walk of the events here) */
	if (!n)
		return 0;
	ev = malloc(n * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	memcpy(ev, jv, n * sizeof(*ev));
	qsort(ev, n, sizeof(*ev), pev_cmp);
	for (i = 0; i < n && !err; i++) {
		const struct join_pev *e = &ev[i];
		const struct join_gap *g;
		size_t k;

		if (i == 0 || e->tid != tid) {
			if (i && parked)
				err = add_park(op, &cap, tid, pstart, park_end(op, gi));
			tid = e->tid;
			parked = seen = 0;
			floor = j->events_from;
			gi = 0;
		}
		/* gaps since the thread's last event (the gaps before this one
		 * are [0, k)): a park open at the first ends there; after the
		 * last the thread starts afresh, as after a thread start */
		g = join__gap_from(j, e->time);
		k = g ? (size_t)(g - j->gaps) : j->ngaps;
		if (k > gi && !err) {
			if (parked)
				err = add_park(op, &cap, tid, pstart, j->gaps[gi].start);
			parked = seen = 0;
			floor = j->gaps[k - 1].end;
			gi = k;
		}
		if (err)
			break;
		switch (e->type) {
		case TRACE_EV_PARK:
			if (!parked) {
				parked = 1;
				pstart = e->time;
			}
			seen = 1;
			break;
		case TRACE_EV_UNPARK:
			if (parked)
				err = add_park(op, &cap, tid, pstart, e->time);
			else if (!seen) /* parked before we were there */
				err = add_park(op, &cap, tid,
					       floor < e->time ? floor : e->time,
					       e->time);
			parked = 0;
			seen = 1;
			break;
		case TRACE_EV_THREAD_START:
		case TRACE_EV_THREAD_STOP:
			if (parked)
				err = add_park(op, &cap, tid, pstart, e->time);
			parked = 0;
			/* after a (re)start, an UNPARK first is a park we
			 * did not see begin, but not before the start */
			seen = e->type == TRACE_EV_THREAD_STOP;
			floor = e->time;
			break;
		}
	}
	if (!err && parked)
		err = add_park(op, &cap, tid, pstart, park_end(op, gi));
	free(ev);
	/* the replay went tid by tid in time order: sorted by (tid, start) */
	op->pub.parks = op->nparks;
	return err;
}

static int parked_at(const struct offcpu_priv *op, uint32_t tid, uint64_t time)
{
	size_t lo = 0, hi = op->nparks;

	/* the last park with (tid, start) <= (tid, time) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct offcpu_park *p = &op->parks[mid];

		if (p->tid < tid || (p->tid == tid && p->start <= time))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	lo--;
	return op->parks[lo].tid == tid && op->parks[lo].end >= time;
}

size_t offcpu__parks(const struct offcpu *oc, const struct offcpu_park **parks)
{
	*parks = OFFCPU_PRIV(oc)->parks;
	return OFFCPU_PRIV(oc)->nparks;
}

uint64_t offcpu__parked_ns(const struct offcpu *oc, uint32_t tid, uint64_t from,
			   uint64_t to)
{
	const struct offcpu_priv *op = OFFCPU_PRIV(oc);
	size_t lo = 0, hi = op->nparks;
	uint64_t ns = 0;

	/* the first park of @tid that may end at or after @from: parks of
	 * one thread do not overlap, so their ends are in start order too */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct offcpu_park *p = &op->parks[mid];

		if (p->tid < tid || (p->tid == tid && p->end < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < op->nparks && op->parks[lo].tid == tid && op->parks[lo].start <= to;
	     lo++) {
		uint64_t a = op->parks[lo].start > from ? op->parks[lo].start : from;
		uint64_t b = op->parks[lo].end < to ? op->parks[lo].end : to;

		if (b > a)
			ns += b - a;
	}
	return ns;
}

/* ---- the join ----------------------------------------------------------- */

static void span(struct offcpu *oc)
{
	const struct trace *t = oc->trace;
	uint64_t lo, hi;
	size_t i;

#define SEE(x)                                                                           \
	do {                                                                             \
		if ((x) < lo)                                                            \
			lo = (x);                                                        \
		if ((x) > hi)                                                            \
			hi = (x);                                                        \
	} while (0)
	/* events and samples: the join looked, when counters are missing */
	join_seen(oc->join, &lo, &hi);
	for (i = 0; i < t->nswitches; i++) {
		SEE(t->switches[i].time);
		if (t->switches[i].time_in)
			SEE(t->switches[i].time_in);
	}
#undef SEE
	/* a cut trace has no END chunk, hence no counters */
	oc->start_time = t->counters.start_time ? t->counters.start_time
						: (lo == UINT64_MAX ? 0 : lo);
	oc->end_time = t->counters.end_time ? t->counters.end_time : hi;
}

/*
 * Each poll's heaviest frame (ties to the lower frame id): its samples'
 * application frame (analysis_site()), or with raw_leaf their leaf. A poll's
 * samples come in one run almost always (samples are in per-thread runs,
 * in time order), so a run's leaves are summed in a small array and the
 * poll settled when the run ends. A poll met in a second run (or with too
 * many leaves for the array) is marked, and only the marked ones are summed
 * again exactly, per (poll, leaf) in a map, by a second walk.
 */
#define RUN_LEAVES 32

/* A sampled poll's state in the walk */
struct leaf_at {
	uint64_t best; /* the top leaf's weight */
	uint32_t poll, leaf;
	uint8_t state; /* LEAF_* */
};

struct leaf_walk {
	const struct trace *t;
	struct offcpu_priv *op;
	struct lib_map at; /* poll -> index + 1 in v */
	struct leaf_at *v;
	size_t n, cap;
	int exact;	  /* second walk: marked polls into @w */
	struct lib_map w; /* poll << 32 | frame -> weight */
	int32_t run_poll; /* the run's poll, -1 if none */
	size_t nrun;
	uint32_t run_frame[RUN_LEAVES];
	uint64_t run_w[RUN_LEAVES];
};

enum { LEAF_NONE = 0, LEAF_DONE = 1, LEAF_AGAIN = 2 };

/* Poll @p's state, made if new; NULL without memory */
static struct leaf_at *leaf_of(struct leaf_walk *lw, uint32_t p)
{
	int created = 0;
	uint64_t *ix = lib_map_get(&lw->at, p, &created);

	if (!ix)
		return NULL;
	if (created) {
		if (LIB_GROW(lw->v, lw->cap, lw->n + 1)) {
			lib_map_del(&lw->at, p);
			return NULL;
		}
		lw->v[lw->n] = (struct leaf_at){.poll = p, .leaf = UINT32_MAX};
		*ix = ++lw->n;
	}
	return &lw->v[*ix - 1];
}

static void settle(struct leaf_at *a, uint32_t f, uint64_t w)
{
	if (w > a->best || (w == a->best && f < a->leaf)) {
		a->best = w;
		a->leaf = f;
	}
}

static int end_run(struct leaf_walk *lw)
{
	struct leaf_at *a;

	if (lw->run_poll < 0)
		return 0;
	a = leaf_of(lw, (uint32_t)lw->run_poll);
	if (!a)
		return -ENOMEM;
	if (a->state == LEAF_NONE) {
		for (size_t i = 0; i < lw->nrun; i++)
			settle(a, lw->run_frame[i], lw->run_w[i]);
		a->state = LEAF_DONE;
	} else {
		a->state = LEAF_AGAIN;
	}
	lw->run_poll = -1;
	lw->nrun = 0;
	return 0;
}

static int leaf_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct leaf_walk *lw = ctx;
	uint32_t f, under;
	uint64_t *v;
	size_t i;

	if (!p || p->id < 0 ||
	    !analysis_site(lw->t, s->stack, lw->op->pub.raw_leaf, 1, &f, &under))
		return 0;
	if (lw->exact) {
		const uint64_t *ix = lib_map_find(&lw->at, (uint64_t)p->id);

		if (!ix || lw->v[*ix - 1].state != LEAF_AGAIN)
			return 0;
		v = lib_map_get(&lw->w, (uint64_t)p->id << 32 | f, NULL);
		if (!v)
			return -ENOMEM;
		*v += sample_weight(s);
		return 0;
	}
	if (p->id != lw->run_poll) {
		if (end_run(lw))
			return -ENOMEM;
		lw->run_poll = p->id;
	}
	for (i = 0; i < lw->nrun && lw->run_frame[i] != f; i++)
		;
	if (i == lw->nrun) {
		if (i == RUN_LEAVES) { /* too varied for the run: exactly */
			struct leaf_at *a = leaf_of(lw, (uint32_t)p->id);

			if (!a)
				return -ENOMEM;
			a->state = LEAF_AGAIN;
			lw->run_poll = -1;
			lw->nrun = 0;
			return 0;
		}
		lw->run_frame[i] = f;
		lw->run_w[i] = 0;
		lw->nrun++;
	}
	lw->run_w[i] += sample_weight(s);
	return 0;
}

static int leaf_cmp(const void *a, const void *b)
{
	const struct poll_leaf *x = a, *y = b;

	return x->poll < y->poll ? -1 : x->poll > y->poll;
}

static int top_leaves(struct offcpu_priv *op)
{
	const struct join *j = op->pub.join;
	struct leaf_walk lw = {.t = op->pub.trace, .op = op, .run_poll = -1};
	size_t i, k, again = 0;
	uint64_t key, *w;
	int err;

	err = join_for_each_sample(j, leaf_sample, &lw);
	if (!err)
		err = end_run(&lw);
	if (err)
		goto out;
	for (i = 0; i < lw.n; i++)
		if (lw.v[i].state == LEAF_AGAIN) {
			lw.v[i].best = 0;
			lw.v[i].leaf = UINT32_MAX;
			again++;
		}
	if (again) {
		lw.exact = 1;
		err = join_for_each_sample(j, leaf_sample, &lw);
		if (err)
			goto out;
		for (i = 0; lib_map_next(&lw.w, &i, &key, &w);) {
			const uint64_t *ix = lib_map_find(&lw.at, key >> 32);

			if (ix)
				settle(&lw.v[*ix - 1], (uint32_t)key, *w);
		}
	}
	err = -ENOMEM;
	op->leaves = malloc((lw.n + 1) * sizeof(*op->leaves));
	if (!op->leaves)
		goto out;
	for (i = k = 0; i < lw.n; i++)
		if (lw.v[i].leaf != UINT32_MAX)
			op->leaves[k++] = (struct poll_leaf){lw.v[i].poll, lw.v[i].leaf};
	op->nleaves = k;
	qsort(op->leaves, k, sizeof(*op->leaves), leaf_cmp);
	err = 0;
out:
	lib_map_release(&lw.w);
	lib_map_release(&lw.at);
	free(lw.v);
	return err;
}

static int poll_switch_cmp(const void *a, const void *b)
{
	const struct poll_switch *x = a, *y = b;

	if (x->poll != y->poll)
		return x->poll < y->poll ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* The switches in polls, sorted by poll (then file order) */
static int group_by_poll(struct offcpu_priv *op)
{
	const struct offcpu *oc = &op->pub;
	size_t i, n = 0;

	for (i = 0; i < oc->trace->nswitches; i++)
		n += oc->sw[i].poll >= 0;
	op->in_polls = malloc((n ? n : 1) * sizeof(*op->in_polls));
	if (!op->in_polls)
		return -ENOMEM;
	for (i = 0; i < oc->trace->nswitches; i++)
		if (oc->sw[i].poll >= 0)
			op->in_polls[op->nin_polls++] = (struct poll_switch){
				(uint32_t)oc->sw[i].poll, (uint32_t)i};
	qsort(op->in_polls, op->nin_polls, sizeof(*op->in_polls), poll_switch_cmp);
	return 0;
}

/* Each poll's off-CPU time, from its switches (in_polls) */
static int poll_totals(struct offcpu_priv *op)
{
	const struct offcpu *oc = &op->pub;
	size_t i;

	op->totals = malloc((op->nin_polls + 1) * sizeof(*op->totals));
	if (!op->totals)
		return -ENOMEM;
	for (i = 0; i < op->nin_polls; i++) {
		const struct poll_switch *ps = &op->in_polls[i];
		const struct offcpu_switch *o = &oc->sw[ps->k];
		struct poll_total *pt;

		if (!op->ntotals || op->totals[op->ntotals - 1].poll != ps->poll)
			op->totals[op->ntotals++] = (struct poll_total){.poll = ps->poll};
		pt = &op->totals[op->ntotals - 1];
		pt->v.ns += o->ns;
		pt->v.runq_ns += o->runq;
		if (oc->trace->switches[ps->k].preempted)
			pt->v.preempted_ns += o->ns;
		pt->v.switches++;
	}
	return 0;
}

const struct poll_offcpu *offcpu__poll(const struct offcpu *oc, uint32_t poll)
{
	static const struct poll_offcpu none;
	const struct offcpu_priv *op = OFFCPU_PRIV(oc);
	const struct poll_total *v = op->totals;
	size_t k = LIB_PARTITION_POINT(0, op->ntotals, m, v[m].poll < poll);

	return k < op->ntotals && v[k].poll == poll ? &v[k].v : &none;
}

int offcpu__next_poll(const struct offcpu *oc, size_t *it, uint32_t *poll,
		      const struct poll_offcpu **po)
{
	const struct offcpu_priv *op = OFFCPU_PRIV(oc);

	if (*it >= op->ntotals)
		return 0;
	*poll = op->totals[*it].poll;
	*po = &op->totals[*it].v;
	++*it;
	return 1;
}

/* Poll @poll's switches: in_polls[*a .. *b) */
static void poll_switches(const struct offcpu_priv *op, uint32_t poll, size_t *a,
			  size_t *b)
{
	const struct poll_switch *v = op->in_polls;

	*a = LIB_PARTITION_POINT(0, op->nin_polls, m, v[m].poll < poll);
	*b = LIB_PARTITION_POINT(*a, op->nin_polls, m, v[m].poll <= poll);
}

struct tid_key {
	uint32_t tid, ix;
	uint64_t time;
};

static int tid_key_cmp(const void *a, const void *b)
{
	const struct tid_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

static int index_by_tid(struct offcpu_priv *op)
{
	const struct trace *t = op->pub.trace;
	struct tid_key *k = malloc((t->nswitches + 1) * sizeof(*k));
	size_t i;

	op->by_tid = malloc((t->nswitches + 1) * sizeof(*op->by_tid));
	if (!op->by_tid || !k) {
		free(k);
		return -ENOMEM;
	}
	for (i = 0; i < t->nswitches; i++) {
		k[i].tid = t->switches[i].tid;
		k[i].ix = (uint32_t)i;
		k[i].time = t->switches[i].time;
	}
	qsort(k, t->nswitches, sizeof(*k), tid_key_cmp);
	for (i = 0; i < t->nswitches; i++)
		op->by_tid[i] = k[i].ix;
	free(k);
	return 0;
}

size_t offcpu__thread_switches(const struct offcpu *oc, uint32_t tid, const uint32_t **ix)
{
	const struct offcpu_priv *op = OFFCPU_PRIV(oc);
	const struct trace_switch *sw = oc->trace->switches;
	size_t lo = 0, hi = oc->trace->nswitches, a;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sw[op->by_tid[mid]].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo;
	for (hi = oc->trace->nswitches; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (sw[op->by_tid[mid]].tid <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ix = op->by_tid + a;
	return lo - a;
}

int offcpu__new(const struct join *j, unsigned int flags, struct offcpu **out)
{
	struct offcpu_priv *op;
	struct offcpu *oc;
	const struct trace *t;
	size_t i;
	int err = -ENOMEM, zc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!j)
		return -EINVAL;
	t = j->trace;
	if (j->npolls && !j->polls)
		return -EINVAL; /* joined without JOIN_POLL_LIST or a keep */
	if (t->nswitches > INT32_MAX)
		return -EOVERFLOW;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	oc = &op->pub;
	oc->join = j;
	oc->trace = t;
	oc->runq_split = !analysis_runq_missing(t);
	oc->raw_leaf = !!(flags & OFFCPU_RAW_LEAF);
	zc = analysis_is_tokio(t);
	span(oc);
	oc->sw = calloc(t->nswitches ? t->nswitches : 1, sizeof(*oc->sw));
	if (!oc->sw)
		goto fail;
	err = build_parks(op);
	if (err)
		goto fail;

	for (i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		struct offcpu_switch *o = &oc->sw[i];
		uint64_t in = s->time_in ? s->time_in : oc->end_time;
		int32_t id = join__switch_poll(j, i);
		const struct poll *p = id >= 0 ? join__poll(j, (uint32_t)id) : NULL;
		const struct task_stat *ts = NULL;

		uint64_t end = in, runnable = s->preempted ? s->time : s->runnable;

		o->len = in > s->time ? in - s->time : 0;
		o->ns = o->len;
		o->poll = -1;
		o->task = -1;
		if (p && in > p->end) {
			o->ns = p->end > s->time ? p->end - s->time : 0;
			end = s->time + o->ns;
		}
		/* runnable from the preemption or the wakeup to the end */
		o->runq = runnable && end > runnable ? end - runnable : 0;
		if (o->runq > o->ns)
			o->runq = o->ns;
		if (p) {
			o->where = OFFCPU_IN_POLL;
			o->poll = (int32_t)p->id;
		} else if ((ts = join__sample_task(j, s->task))) {
			o->where = OFFCPU_IN_TASK;
			o->task = (int32_t)(ts - j->tasks);
		} else if (parked_at(op, s->tid, s->time) ||
			   (zc && analysis_tokio_parked(t, s->stack))) {
			o->where = OFFCPU_IDLE;
		} else {
			o->where = OFFCPU_NO_POLL;
		}
		oc->ns[o->where] += o->ns;
		oc->runq_ns[o->where] += o->runq;
	}

	err = top_leaves(op);
	if (!err)
		err = index_by_tid(op);
	if (!err)
		err = group_by_poll(op);
	if (!err)
		err = poll_totals(op);
	if (err)
		goto fail;
	*out = oc;
	return 0;
fail:
	offcpu__free(oc);
	return err;
}

void offcpu__free(struct offcpu *oc)
{
	struct offcpu_priv *op = OFFCPU_PRIV(oc);

	if (!oc)
		return;
	free(oc->sw);
	free(op->totals);
	free(op->parks);
	free(op->leaves);
	free(op->in_polls);
	free(op->by_tid);
	free(op);
}

const char *offcpu_missing(const struct trace *t)
{
	const char *v;

	if (t->nswitches)
		return NULL;
	v = analysis_meta(t, TRACE_META_OFFCPU);
	if (!v)
		return "it was recorded without off-CPU collection";
	if (!strncmp(v, "off", 3))
		return "it was recorded with --no-offcpu";
	if (!strncmp(v, "refused", 7))
		return "the kernel refused off-CPU collection when it was recorded "
		       "(record as root, or lower kernel.perf_event_paranoid)";
	return "no thread of the target left the CPU while it was recorded";
}

const char *analysis_runq_holders_missing(const struct trace *t)
{
	const char *v = analysis_meta(t, TRACE_META_RUNQ_HOLDERS);

	if (t->nholds || (v && !strncmp(v, "sched:", 6)))
		return NULL;
	if (v && *v)
		return v; /* "refused: why" */
	return "no CPU timelines in the trace (recorded without system-wide "
	       "sched_switch, or by a d9prof before them): each wait is charged "
	       "to the thread that preempted it, else to the one that ran just "
	       "before it";
}

const char *analysis_runq_missing(const struct trace *t)
{
	const char *v = analysis_meta(t, TRACE_META_WAKEUPS);

	if (!v)
		return "it was recorded without wakeups (by a d9prof before them, or "
		       "without off-CPU collection)";
	if (!strncmp(v, "sched:", 6))
		return NULL;
	if (!strncmp(v, "off", 3))
		return "it was recorded with --no-wakeups";
	return v; /* "refused: why" */
}

void analysis_holder_json(const struct trace *t, uint32_t holder, const uint64_t *ns,
			  struct lib_json *w)
{
	char buf[32];

	if (!holder) {
		lib_json_null(w);
		return;
	}
	lib_json_object_begin(w);
	lib_json_name(w, "pid");
	if (holder == TRACE_HOLD_IDLE || holder == TRACE_HOLD_OTHERS) {
		lib_json_null(w);
		lib_json_str_field(w, "comm",
				   analysis_holder_label(t, holder, buf, sizeof(buf)));
	} else {
		lib_json_uint(w, holder);
		lib_json_str_field(w, "comm", trace__comm(t, holder));
	}
	if (ns)
		lib_json_uint_field(w, "ns", *ns);
	lib_json_object_end(w);
}

size_t analysis_switch_holds(const struct trace *t, const struct trace_switch *s,
			     uint64_t runq, struct trace_hold *out)
{
	const struct trace_hold *h;
	uint64_t total = 0, given = 0;
	size_t k, n = s->nhold;

	if (!runq)
		return 0;
	if (!n || !t->holds || s->hold + n > t->nholds) {
		out[0] = (struct trace_hold){s->holder, runq};
		return 1;
	}
	h = t->holds + s->hold;
	for (k = 0; k < n; k++)
		total += h[k].ns;
	if (!total) {
		out[0] = (struct trace_hold){TRACE_HOLD_UNKNOWN, runq};
		return 1;
	}
	/* shares of @runq (a wait clipped to its poll is a part of it, and
	 * recorded holds that do not cover a whole wait are scaled up) */
	for (k = 0; k < n; k++) {
		out[k].tid = h[k].tid;
		out[k].ns = (uint64_t)((unsigned __int128)runq * h[k].ns / total);
		given += out[k].ns;
	}
	/* the rounding's remainder to the largest */
	out[0].ns += runq - given;
	return n;
}

char *analysis_holder_label(const struct trace *t, uint32_t holder, char *buf, size_t len)
{
	if (!holder || holder == TRACE_HOLD_IDLE || holder == TRACE_HOLD_OTHERS) {
		snprintf(buf, len, "%s",
			 !holder		     ? ANALYSIS_HOLD_UNKNOWN_LABEL
			 : holder == TRACE_HOLD_IDLE ? "[idle CPU]"
						     : "[others]");
		return buf;
	}
	/* one thread, one name: "tokio-runtime-worker[7]" in the delays and
	 * the holders alike, not its comm "tokio-runtime-w" here */
	return analysis_thread_label(t, holder, buf, len);
}

/* ---- a poll's top frame ------------------------------------------------- */

struct fw {
	uint32_t frame, under;
	uint64_t w;
};

static int fw_cmp(const void *a, const void *b)
{
	const struct fw *x = a, *y = b;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return x->under < y->under ? -1 : x->under > y->under;
}

/* The frame with the most weight among @n (frame, under, weight) triples
 * (sorted here), and under it the call with the most weight; ties to the
 * lower ids. 0 if n == 0. */
static int heaviest(struct fw *v, size_t n, uint32_t *frame, uint32_t *under)
{
	uint64_t best = 0, run = 0, ubest = 0, urun = 0;
	size_t i;
	int found = 0;

	qsort(v, n, sizeof(*v), fw_cmp);
	for (i = 0; i < n; i++) {
		run = (i && v[i].frame == v[i - 1].frame) ? run + v[i].w : v[i].w;
		if (i + 1 < n && v[i + 1].frame == v[i].frame)
			continue;
		if (!found || run > best) {
			best = run;
			*frame = v[i].frame;
			found = 1;
		}
	}
	for (i = 0; found && i < n; i++) {
		if (v[i].frame != *frame)
			continue;
		urun = (i && v[i].frame == v[i - 1].frame && v[i].under == v[i - 1].under)
			       ? urun + v[i].w
			       : v[i].w;
		if (i + 1 < n && v[i + 1].frame == v[i].frame &&
		    v[i + 1].under == v[i].under)
			continue;
		if (!ubest || urun > ubest) {
			ubest = urun ? urun : 1;
			*under = v[i].under;
		}
	}
	return found;
}

static int top_offcpu(const struct offcpu_priv *op, uint32_t poll, uint32_t *frame,
		      uint32_t *under)
{
	const struct trace *t = op->pub.trace;
	size_t a, b, i, n = 0;
	struct fw *v;
	uint64_t all = 0, pre = 0;
	int found;

	poll_switches(op, poll, &a, &b);
	v = malloc((b - a + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = a; i < b; i++) {
		uint32_t k = op->in_polls[i].k;

		if (analysis_site(t, t->switches[k].stack, op->pub.raw_leaf, 0,
				  &v[n].frame, &v[n].under)) {
			v[n].w = op->pub.sw[k].ns;
			n++;
		}
	}
	*under = UINT32_MAX;
	found = heaviest(v, n, frame, under);
	free(v);
	if (!found)
		return POLL_TOP_NONE;
	/* was the time at that frame mostly waiting for a CPU? */
	for (i = a; i < b; i++) {
		uint32_t k = op->in_polls[i].k, f, u;

		if (!analysis_site(t, t->switches[k].stack, op->pub.raw_leaf, 0, &f,
				   &u) ||
		    f != *frame)
			continue;
		all += op->pub.sw[k].ns;
		pre += op->pub.sw[k].runq;
	}
	return pre > all / 2 ? POLL_TOP_PREEMPTED : POLL_TOP_OFFCPU;
}

static int top_cpu(const struct offcpu_priv *op, uint32_t poll, uint32_t *frame,
		   uint32_t *under)
{
	const struct poll_leaf *v = op->leaves;
	size_t k = LIB_PARTITION_POINT(0, op->nleaves, m, v[m].poll < poll);

	if (k == op->nleaves || v[k].poll != poll)
		return POLL_TOP_NONE;
	*frame = v[k].leaf;
	*under = UINT32_MAX;
	return POLL_TOP_CPU;
}

int offcpu__poll_top(const struct offcpu *oc, uint32_t poll, uint32_t *frame,
		     uint32_t *under)
{
	const struct offcpu_priv *op = OFFCPU_PRIV(oc);
	const struct poll_offcpu *po;
	const struct poll *p;
	uint64_t blocked;
	uint32_t u = UINT32_MAX;
	int r;

	if (!oc || !frame || !(p = join__poll(oc->join, poll)))
		return -EINVAL;
	if (!under)
		under = &u;
	/* mostly blocked: what it waited on says more than what it ran.
	 * Preempted time does not count: the poll was runnable, its code is
	 * what its samples show, and the kernel's choice is not its doing. */
	po = offcpu__poll(oc, poll);
	blocked = po->ns - po->runq_ns;
	if (blocked && blocked > (p->end - p->start) / 2) {
		r = top_offcpu(op, poll, frame, under);
		if (r)
			return r;
	}
	r = top_cpu(op, poll, frame, under);
	if (r)
		return r;
	return po->ns || po->switches ? top_offcpu(op, poll, frame, under)
				      : POLL_TOP_NONE;
}
