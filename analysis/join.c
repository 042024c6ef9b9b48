/* SPDX-License-Identifier: MIT */
/*
 * join.c - polls from the shim's events, and CPU samples to polls.
 *
 * Both sides carry CLOCK_MONOTONIC ns and a tid, so the join is an interval
 * lookup per thread: events are grouped per thread (counting sort, which
 * keeps file order), replayed through a small state machine into polls, and
 * every sample binary-searches its thread's polls. Polls on one thread never
 * overlap (a BEGIN closes the poll still open), so "the last poll starting
 * at or before t" is the only candidate. O((S + E) log P).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "libprof/d9_segment.h"

/* Polls of one thread, in time order, at [off, off + n) of the by-thread
 * arrays. */
struct jthread {
	uint32_t tid;
	size_t off, n;
};

/* struct join as handed out, plus the per-thread index for lookups. */
struct join_priv {
	struct join pub;
	struct amap tidmap; /* tid -> index in threads */
	struct jthread *threads;
	size_t nthreads;
	uint64_t *starts; /* poll starts, grouped by thread */
	uint32_t *ids;	  /* same order: poll id */
};

#define JOIN_PRIV(j) ((struct join_priv *)(j))

/* An event of interest, copied so that sorting needs no context. */
struct evref {
	uint64_t time;
	uint64_t task;
	uint32_t idx; /* file order, the stable tie-break */
	uint32_t type;
};

static int evref_cmp(const void *a, const void *b)
{
	const struct evref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int joins_thread_state(uint32_t type)
{
	return type == D9_EV_POLL_BEGIN || type == D9_EV_POLL_END ||
	       type == D9_EV_THREAD_START || type == D9_EV_THREAD_STOP;
}

static int carries_task(uint32_t type)
{
	return type == D9_EV_SPAWN || type == D9_EV_WAKE || type == D9_EV_POLL_BEGIN ||
	       type == D9_EV_POLL_END || type == D9_EV_TASK_END;
}

/* Growable array of polls as the state machine emits them. */
struct pollvec {
	struct poll *v;
	size_t n, cap;
};

static int emit(struct pollvec *pv, uint64_t task, uint32_t tid, uint64_t start,
		uint64_t end, int open_start, int open_end)
{
	struct poll *p;

	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 1024;

		p = realloc(pv->v, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		pv->v = p;
		pv->cap = cap;
	}
	p = &pv->v[pv->n++];
	memset(p, 0, sizeof(*p));
	p->task = task;
	p->tid = tid;
	p->start = start;
	p->end = end < start ? start : end;
	p->open_start = open_start;
	p->open_end = open_end;
	return 0;
}

/* Replay one thread's events (time order) into polls. */
static int replay_thread(const struct evref *ev, size_t n, uint32_t tid,
			 uint64_t rec_start, uint64_t rec_end, struct pollvec *pv,
			 uint64_t *unmatched)
{
	uint64_t open_task = 0, open_start = 0;
	/* earliest a poll whose BEGIN we never saw can have started: the
	 * recording start, or this thread's start if we saw it */
	uint64_t floor = rec_start;
	int open = 0, seen_poll = 0, err;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct evref *e = &ev[i];

		switch (e->type) {
		case D9_EV_THREAD_START:
			/* a new thread on this tid: whatever the old one
			 * left open ended by now */
			if (open) {
				err = emit(pv, open_task, tid, open_start, e->time, 0, 1);
				if (err)
					return err;
				open = 0;
			}
			floor = e->time;
			seen_poll = 0;
			break;
		case D9_EV_THREAD_STOP:
			if (open) {
				err = emit(pv, open_task, tid, open_start, e->time, 0, 1);
				if (err)
					return err;
				open = 0;
			}
			seen_poll = 1;
			break;
		case D9_EV_POLL_BEGIN:
			/* nested or missing END (dropped record): the poll
			 * that was open cannot run past this point */
			if (open) {
				err = emit(pv, open_task, tid, open_start, e->time, 0, 1);
				if (err)
					return err;
			}
			open = 1;
			open_task = e->task;
			open_start = e->time;
			seen_poll = 1;
			break;
		case D9_EV_POLL_END:
			if (open && open_task == e->task) {
				err = emit(pv, open_task, tid, open_start, e->time, 0, 0);
				if (err)
					return err;
				open = 0;
			} else if (!open && !seen_poll) {
				/* began before we were there */
				err = emit(pv, e->task, tid,
					   floor < e->time ? floor : e->time, e->time, 1,
					   0);
				if (err)
					return err;
			} else {
				(*unmatched)++;
			}
			seen_poll = 1;
			break;
		}
	}
	if (open)
		return emit(pv, open_task, tid, open_start, rec_end, 0, 1);
	return 0;
}

/* k-way merge of the threads' (already start-ordered) polls into global
 * (start, tid) order: O(P log T) where a sort would be O(P log P). */
struct mhead {
	uint64_t start;
	uint32_t tid;
	uint32_t th; /* thread index */
};

static int mh_less(const struct mhead *a, const struct mhead *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	return a->tid < b->tid;
}

static void mh_down(struct mhead *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct mhead tmp;

		if (l < n && mh_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && mh_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static int order_polls(struct join_priv *jp, struct pollvec *pv)
{
	struct join *j = &jp->pub;
	struct mhead *heap;
	size_t *cur, nh = 0, i, rank = 0;

	j->polls = malloc((pv->n ? pv->n : 1) * sizeof(*j->polls));
	jp->starts = malloc((pv->n ? pv->n : 1) * sizeof(*jp->starts));
	jp->ids = malloc((pv->n ? pv->n : 1) * sizeof(*jp->ids));
	heap = malloc((jp->nthreads + 1) * sizeof(*heap));
	cur = malloc((jp->nthreads + 1) * sizeof(*cur));
	if (!j->polls || !jp->starts || !jp->ids || !heap || !cur) {
		free(heap);
		free(cur);
		return -ENOMEM;
	}
	for (i = 0; i < jp->nthreads; i++) {
		const struct jthread *th = &jp->threads[i];

		cur[i] = th->off;
		if (!th->n)
			continue;
		heap[nh].start = pv->v[th->off].start;
		heap[nh].tid = th->tid;
		heap[nh].th = i;
		nh++;
	}
	for (i = nh; i-- > 0;)
		mh_down(heap, nh, i);
	while (nh) {
		const struct jthread *th = &jp->threads[heap[0].th];
		size_t g = cur[heap[0].th]++;

		j->polls[rank] = pv->v[g];
		j->polls[rank].id = rank;
		jp->starts[g] = pv->v[g].start;
		jp->ids[g] = rank;
		rank++;
		if (cur[heap[0].th] < th->off + th->n)
			heap[0].start = pv->v[cur[heap[0].th]].start;
		else
			heap[0] = heap[--nh];
		mh_down(heap, nh, 0);
	}
	j->npolls = rank;
	free(heap);
	free(cur);
	return 0;
}

/* Index in jp->ids of the poll containing @time on thread @th, or -1. */
static int64_t lookup(const struct join_priv *jp, const struct jthread *th, uint64_t time)
{
	size_t lo = th->off, hi = th->off + th->n;

	/* last start <= time; ties go to the later poll (the one a BEGIN at
	 * this very ns opened) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (jp->starts[mid] <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == th->off)
		return -1;
	lo--;
	if (jp->pub.polls[jp->ids[lo]].end < time)
		return -1;
	return lo;
}

static const struct jthread *thread_of(const struct join_priv *jp, uint32_t tid)
{
	const uint64_t *v = amap_find(&jp->tidmap, tid);

	return v ? &jp->threads[*v] : NULL;
}

const struct poll *join__poll_at(const struct join *j, uint32_t tid, uint64_t time)
{
	const struct join_priv *jp = JOIN_PRIV(j);
	const struct jthread *th;
	int64_t g;

	if (!j)
		return NULL;
	th = thread_of(jp, tid);
	if (!th)
		return NULL;
	g = lookup(jp, th, time);
	return g < 0 ? NULL : &j->polls[jp->ids[g]];
}

const struct task_stat *join__task(const struct join *j, uint64_t task)
{
	size_t lo = 0, hi = j ? j->ntasks : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->tasks[mid].task < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (j ? j->ntasks : 0) && j->tasks[lo].task == task ? &j->tasks[lo]
								     : NULL;
}

/* Group the events that matter per thread, in time order (stable). */
static int build_polls(struct join_priv *jp, const struct trace *t, uint64_t rec_start,
		       uint64_t rec_end)
{
	struct join *j = &jp->pub;
	struct pollvec pv = {0};
	struct evref *ev = NULL;
	uint32_t *slot = NULL;
	size_t *pos = NULL, i, nev = 0;
	int err = -ENOMEM;

	if (t->nevents > UINT32_MAX)
		return -EOVERFLOW;
	slot = malloc((t->nevents + 1) * sizeof(*slot));
	if (!slot)
		goto out;
	for (i = 0; i < t->nevents; i++) {
		const struct trace_event *e = &t->events[i];
		uint64_t *v;
		int created;

		slot[i] = UINT32_MAX;
		if (!joins_thread_state(e->type))
			continue;
		v = amap_get(&jp->tidmap, e->tid, &created);
		if (!v)
			goto out;
		if (created) {
			struct jthread *th;

			if (!(jp->nthreads & (jp->nthreads - 1))) {
				size_t cap = jp->nthreads ? jp->nthreads * 2 : 16;

				th = realloc(jp->threads, cap * sizeof(*th));
				if (!th)
					goto out;
				jp->threads = th;
			}
			*v = jp->nthreads;
			th = &jp->threads[jp->nthreads++];
			th->tid = e->tid;
			th->off = th->n = 0; /* n counts events for now */
		}
		slot[i] = *v;
		jp->threads[*v].n++;
		nev++;
	}

	/* counting sort by thread keeps file order within a thread */
	ev = malloc((nev + 1) * sizeof(*ev));
	pos = malloc((jp->nthreads + 1) * sizeof(*pos));
	if (!ev || !pos)
		goto out;
	for (i = 0, nev = 0; i < jp->nthreads; i++) {
		pos[i] = nev;
		nev += jp->threads[i].n;
	}
	for (i = 0; i < t->nevents; i++) {
		const struct trace_event *e = &t->events[i];
		struct evref *r;

		if (slot[i] == UINT32_MAX)
			continue;
		r = &ev[pos[slot[i]]++];
		r->time = e->time;
		r->task = e->task;
		r->idx = i;
		r->type = e->type;
	}

	for (i = 0, nev = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];
		struct evref *e = ev + nev;
		size_t k, n = th->n;

		nev += n;
		/* each thread's ring is drained in order, so this is sorted
		 * already unless the file was merged oddly: check first */
		for (k = 1; k < n; k++)
			if (e[k].time < e[k - 1].time)
				break;
		if (k < n)
			qsort(e, n, sizeof(*e), evref_cmp);
		th->off = pv.n;
		err = replay_thread(e, n, th->tid, rec_start, rec_end, &pv,
				    &j->unmatched_ends);
		if (err)
			goto out;
		th->n = pv.n - th->off;
	}
	if (pv.n > INT32_MAX) {
		err = -EOVERFLOW;
		goto out;
	}
	err = order_polls(jp, &pv);
out:
	free(pv.v);
	free(ev);
	free(pos);
	free(slot);
	return err;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task_stat *x = a, *y = b;

	return x->task < y->task ? -1 : x->task > y->task;
}

/* Every task the trace knows (named, seen in any event, polled), with its
 * poll statistics. */
static int build_tasks(struct join *j, const struct trace *t)
{
	struct amap m;
	size_t i, k;
	uint64_t *v;
	int err = -ENOMEM;

	if (amap_init(&m, t->ntasks + 64))
		return -ENOMEM;
	for (i = 0; i < t->ntasks; i++)
		if (!amap_get(&m, t->tasks[i].id, NULL))
			goto out;
	for (i = 0; i < t->nevents; i++)
		if (carries_task(t->events[i].type) &&
		    !amap_get(&m, t->events[i].task, NULL))
			goto out;

	j->ntasks = m.n + (m.has_empty_key ? 1 : 0);
	j->tasks = calloc(j->ntasks ? j->ntasks : 1, sizeof(*j->tasks));
	if (!j->tasks)
		goto out;
	for (i = 0, k = 0; i < m.cap; i++)
		if (m.keys[i] != AMAP_EMPTY)
			j->tasks[k++].task = m.keys[i];
	if (m.has_empty_key)
		j->tasks[k++].task = AMAP_EMPTY;
	qsort(j->tasks, j->ntasks, sizeof(*j->tasks), task_cmp);
	for (i = 0; i < j->ntasks; i++)
		*amap_find(&m, j->tasks[i].task) = i;

	/* the last name given to a task wins (a task may be renamed) */
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].name)
			j->tasks[*amap_find(&m, t->tasks[i].id)].name = t->tasks[i].name;

	for (i = 0; i < j->npolls; i++) {
		const struct poll *p = &j->polls[i];
		struct task_stat *ts = &j->tasks[*amap_find(&m, p->task)];
		uint64_t d = p->end - p->start;

		ts->polls++;
		ts->total_ns += d;
		if (d > ts->longest_ns)
			ts->longest_ns = d;
	}
	for (i = 0; i < t->nsamples; i++) {
		int32_t p = j->sample_poll[i];

		if (p >= 0) {
			v = amap_find(&m, j->polls[p].task);
			j->tasks[*v].samples += sample_weight(&t->samples[i]);
		}
	}
	err = 0;
out:
	amap_release(&m);
	return err;
}

static int assign_samples(struct join_priv *jp, const struct trace *t)
{
	struct join *j = &jp->pub;
	const struct jthread *th = NULL;
	uint32_t last_tid = 0;
	int have_last = 0;
	size_t i;

	j->sample_poll =
	    malloc((t->nsamples ? t->nsamples : 1) * sizeof(*j->sample_poll));
	if (!j->sample_poll)
		return -ENOMEM;
	for (i = 0; i < t->nsamples; i++) {
		const struct trace_sample *s = &t->samples[i];
		struct poll *p;
		uint64_t n;
		int64_t g;

		/* samples come in per-thread runs: skip the hash lookup */
		if (!have_last || s->tid != last_tid) {
			th = thread_of(jp, s->tid);
			last_tid = s->tid;
			have_last = 1;
		}
		g = th ? lookup(jp, th, s->time) : -1;
		if (g < 0) {
			j->sample_poll[i] = -1;
			continue;
		}
		j->sample_poll[i] = jp->ids[g];
		p = &j->polls[jp->ids[g]];
		n = (uint64_t)p->samples + sample_weight(s);
		p->samples = n > UINT32_MAX ? UINT32_MAX : n;
	}
	return 0;
}

int join__new(const struct trace *t, struct join **out)
{
	struct join_priv *jp;
	uint64_t lo = UINT64_MAX, hi = 0, rec_start, rec_end;
	size_t i;
	int err;

	*out = NULL;
	jp = calloc(1, sizeof(*jp));
	if (!jp)
		return -ENOMEM;
	jp->pub.trace = t;
	err = amap_init(&jp->tidmap, 64);
	if (err)
		goto fail;

	for (i = 0; i < t->nevents; i++) {
		if (t->events[i].time < lo)
			lo = t->events[i].time;
		if (t->events[i].time > hi)
			hi = t->events[i].time;
	}
	for (i = 0; i < t->nsamples; i++) {
		if (t->samples[i].time < lo)
			lo = t->samples[i].time;
		if (t->samples[i].time > hi)
			hi = t->samples[i].time;
	}
	/* a cut trace has no END chunk, hence no counters: fall back to
	 * the times actually seen */
	rec_start =
	    t->counters.start_time ? t->counters.start_time : (lo == UINT64_MAX ? 0 : lo);
	rec_end = t->counters.end_time ? t->counters.end_time : hi;

	err = build_polls(jp, t, rec_start, rec_end);
	if (err)
		goto fail;
	err = assign_samples(jp, t);
	if (err)
		goto fail;
	err = build_tasks(&jp->pub, t);
	if (err)
		goto fail;
	*out = &jp->pub;
	return 0;
fail:
	join__free(&jp->pub);
	return err;
}

void join__free(struct join *j)
{
	struct join_priv *jp = JOIN_PRIV(j);

	if (!j)
		return;
	free(j->polls);
	free(j->sample_poll);
	free(j->tasks);
	amap_release(&jp->tidmap);
	free(jp->threads);
	free(jp->starts);
	free(jp->ids);
	free(jp);
}
