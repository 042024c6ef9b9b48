/* SPDX-License-Identifier: MIT */
/*
 * join.c - polls from the shim's events, CPU samples to polls, and the tasks a
 * view keeps (--task ID or NAME).
 *
 * Both sides carry CLOCK_MONOTONIC ns and a tid, so the join is an interval
 * lookup per thread. Events are walked once, chunk by chunk, each fed to its
 * thread's state machine, which emits that thread's polls in time order;
 * a thread whose events come out of time order (a file merged oddly) is
 * replayed again from its own events, sorted. Samples are then walked once,
 * chunk by chunk: each binary-searches its thread's polls (they never
 * overlap, so "the last poll starting at or before t" is the only
 * candidate) and is counted per poll, per task and per (task, stack).
 * A poll still open at the end is emitted up to the recording end, and cut
 * back to its thread's last record once the samples were walked too: no
 * sample of that thread lies past it, so none was counted in the part
 * cut off. Neither events nor samples are kept: memory grows with polls
 * (12 bytes each, 56 with JOIN_POLL_LIST), threads, tasks and distinct
 * (task, stack) pairs. O((S + E) log P + W), W switches.
 *
 * A join that keeps no poll, or only those a struct join_keep lists,
 * streams instead (join_priv.stream): one walk of both kinds in file
 * order, polls delivered in id order once no record can change them and
 * freed, so memory grows with what is listed and the last second or so
 * of polls, not with the trace.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/tokio.h"
#include "lib/grow.h"
#include "lib/map.h"
#include "lib/search.h"

/* A poll as the lookup keeps it: 12 bytes. */
struct jpoll {
	uint32_t off;	    /* start - its block's base */
	uint32_t dur;	    /* end - start; DUR_LONG: see join_priv.long_end */
	uint32_t task : 30; /* task slot while building, then index in
			     * join.tasks */
	uint32_t open_start : 1;
	uint32_t open_end : 1;
};

/* A thread's polls come in blocks, never moved once written (no realloc
 * copies, no slack beyond the last block): up to BLOCK_MAX polls whose
 * starts lie within 2^32 ns of the first's. */
struct jblock {
	uint64_t base; /* start of its first poll */
	size_t first;  /* index of its first poll in the thread */
	uint32_t *smp; /* streaming: each poll's sample weight, else NULL */
	uint32_t n, cap;
	struct jpoll p[];
};

#define BLOCK_MIN 16
#define BLOCK_MAX 4096
#define DUR_LONG  UINT32_MAX
#define TASKS_MAX (1u << 30)

/* An event of interest, copied so that sorting needs no context. */
struct evref {
	uint64_t time;
	uint64_t task;
	uint64_t idx; /* file order, the stable tie-break */
	uint32_t type;
};

/* One thread: its replay state and its polls in time order. */
struct jthread {
	uint32_t tid;
	/* replay */
	int open, seen_poll;
	uint32_t open_task; /* slot */
	uint64_t open_start;
	uint32_t open_smp; /* streaming: sample weight in the open poll */
	uint64_t floor;	   /* earliest a poll whose BEGIN we never saw began */
	size_t gap;	   /* the next gap not yet crossed */
	uint64_t last;	   /* time of the last event fed */
	uint64_t last_rec; /* its latest event, sample or switch time */
	int open_at_end;   /* its last poll: ends at last_rec once known */
	uint64_t unmatched;
	int unordered;	  /* an event went back in time: replay sorted */
	struct evref *ev; /* its events, while replaying it sorted */
	size_t nev, ev_cap;
	/* streaming: its polls that ended by this were delivered (numbered,
	 * folded into their tasks' totals); the next to deliver (block,
	 * index); its off-CPU intervals, sw_order[sw_lo .. sw_hi), and the
	 * first not given a poll; where its last sample lookup ended */
	uint64_t delivered_to, delivered_start; /* its last delivered */
	int delivered_any;
	size_t dl_b, dl_i;
	size_t sw_lo, sw_hi, sw_cur;
	size_t win_lo, win_hi; /* its windows of the keep's */
	int32_t last_id;       /* its last poll delivered, -1 none */
	struct jpos {
		size_t b, i;
	} hint;
	/* polls */
	struct jblock **b;
	size_t nb, b_cap;
	uint64_t polls, poll_ns; /* its polls and their total time */
	size_t n;		 /* polls in all blocks */
	uint32_t *ids;		 /* JOIN_POLL_LIST: poll id of each, by index;
				  * streaming, the listed ones: their indices in
				  * join.polls, nlst of them */
	size_t nlst;
};

struct mhead;

#define SLOT_CACHE 256

/* struct join as handed out, plus what the lookups and the renderers use. */
struct join_priv {
	struct join pub;
	unsigned int flags;
	struct lib_map tidmap; /* tid -> index in threads */
	struct jthread *threads;
	size_t nthreads, threads_cap;
	struct lib_map long_end; /* thread << 32 | poll index -> end, for
				  * polls of DUR_LONG or more */
	struct lib_map taskslot; /* task id -> slot while building, then its
				  * index in join.tasks (join__task()) */
	struct slot_cache {	 /* task_slot()'s last answers, by id */
		uint64_t task;
		uint32_t slot;
		int valid;
	} slot_cache[SLOT_CACHE];
	int tasks_indexed; /* ... the latter */
	uint64_t rec_start, rec_end;
	uint64_t lo, hi;    /* earliest and latest event or sample time */
	uint64_t nevents;   /* events fed so far (file order) */
	uint64_t last_task; /* the last task met, and its slot */
	uint32_t last_slot;
	int have_last;
	uint32_t last_tid; /* the last thread met, and its index */
	size_t last_th;
	int have_tid;
	int dropped;		   /* polls freed after the join (no JOIN_KEEP_POLLS) */
	struct jthread *sample_th; /* thread of the last sample counted */
	uint32_t sample_tid;
	/* samples per (root, stack), root = task index + 1 or 0 */
	struct join_agg agg;
	struct tokio_tasks *zc; /* a zero-code trace's tasks, else NULL */
	int lean;		/* a lean trace: samples carry their task */
	struct join_pev *pev;	/* the park events (join_park_events()) */
	size_t npev, pev_cap;
	/* Streaming, where no poll is kept past join__new(): events and
	 * samples are walked together in file order (the order they were
	 * recorded in), and the polls that ended before the horizon, the
	 * latest time both kinds have reached less STREAM_MARGIN, are
	 * folded into their tasks and freed. A record older than what was
	 * freed (a file merged oddly) makes the join start over with the
	 * two walks, keeping every poll to the end: exact either way. */
	int stream;
	uint64_t horizon;
	uint64_t max_ev, max_smp; /* latest event, sample time walked */
	size_t nev_seen, nsmp_seen;
	/* samples ahead of their thread's events and of the horizon,
	 * held[held_at .. nheld), in time order unless held_unsorted */
	size_t held_at;
	int held_unsorted;
	struct trace_sample *held; /* samples ahead of their thread's
				    * events and of the horizon */
	size_t nheld, held_cap;
	struct slot_stat { /* per task slot, of the polls delivered */
		uint64_t polls, total_ns, longest_ns, samples;
		struct lib_hist lens; /* JOIN_POLL_LENGTHS */
	} * slots;
	size_t slots_cap;
	uint64_t *slot_task; /* task id of each slot */
	size_t slot_task_cap;
	struct mhead *heap; /* delivering: a thread each */
	size_t heap_cap;
	/* the off-CPU intervals in (tid, time) order, and each one's poll */
	uint32_t *sw_order;
	int32_t *sw_poll;
	/* what the keep lists: the polls it matched (the longest: a heap),
	 * those an interval began in */
	uint32_t ndelivered; /* the next poll's id */
	uint64_t last_start; /* the last delivered poll's start */
	/* a mark every JOIN_MARK_NS or so of the polls delivered: where a later
	 * walk can start (join__list_more()) */
	struct join_mark *mark;
	size_t nmark, mark_cap;
	/* a walk from a mark (join__list_more()): the records from
	 * @from.start on, the polls numbered from @from's, up to a poll
	 * beginning after @stop */
	const struct join_mark *from;
	uint64_t stop;
	int numbered;
	int has_keep;
	struct join_keep keep;
	struct join_window *win; /* the keep's, sorted by (tid, from) */
	uint64_t *win_reach;	 /* the latest end up to each, per thread */
	struct poll *top, *swp;
	size_t ntop, top_cap, nswp, swp_cap;
};

/* How late a record may come after later ones of the other kind: the
 * recorder writes what it drained about once a second. */
#define STREAM_MARGIN 1000000000ull
/* A thread's event earlier than its last by at most this (seen: 36 ns,
 * two clocks read a hair apart under load) is taken at its last, in
 * both joins: the thread's order holds, and a streamed join does not
 * start over keeping every poll for it. */
#define JOIN_SKEW_NS 10000ull
/* What a walk's callback returns to have the join start over without
 * streaming (never an errno). */
#define JOIN_RESTART 1
/* ... and a walk from a mark: it is past what it was for; its polls are
 * not numbered as from the start (the mark is wrong: walk it all) */
#define JOIN_DONE   2
#define JOIN_ASTRAY 3

/* A poll delivered, numbered @id, the first to begin at @start (no poll
 * of another thread began then too, before it), and the earliest start
 * @running of the polls running then: a walk of the records from @start
 * on makes every poll beginning from @start on as the whole walk did, the
 * polls at and after any time after @start (not before @running) among
 * them (join__list_more()). */
struct join_mark {
	uint64_t start, running;
	uint32_t tid, id;
};

#define JOIN_PRIV(j) ((struct join_priv *)(j))

static int evref_cmp(const void *a, const void *b)
{
	const struct evref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int joins_thread_state(uint32_t type)
{
	return type == TRACE_EV_POLL_BEGIN || type == TRACE_EV_POLL_END ||
	       type == TRACE_EV_THREAD_START || type == TRACE_EV_THREAD_STOP;
}

static int carries_task(uint32_t type)
{
	return type == TRACE_EV_SPAWN || type == TRACE_EV_WAKE ||
	       type == TRACE_EV_POLL_BEGIN || type == TRACE_EV_POLL_END ||
	       type == TRACE_EV_TASK_END;
}

/* Poll @i of block @b of thread @th: its end. */
static uint64_t poll_end(const struct join_priv *jp, size_t th, const struct jblock *b,
			 size_t i)
{
	const struct jpoll *p = &b->p[i];
	const uint64_t *v;

	if (p->dur != DUR_LONG)
		return b->base + p->off + p->dur;
	v = lib_map_find(&jp->long_end, (uint64_t)th << 32 | (b->first + i));
	return v ? *v : b->base + p->off + p->dur;
}

static int emit(struct join_priv *jp, size_t th_ix, uint32_t task, uint64_t start,
		uint64_t end, int open_start, int open_end, uint32_t smp)
{
	struct jthread *th = &jp->threads[th_ix];
	struct jblock *b = th->nb ? th->b[th->nb - 1] : NULL;
	struct jpoll *p;

	if (end < start)
		end = start;
	if (th->n >= UINT32_MAX)
		return -EOVERFLOW;
	/* starts never go back on a thread: a block only fills up or runs
	 * out of offset range */
	if (!b || b->n == b->cap || start - b->base > UINT32_MAX) {
		uint32_t cap =
			b ? (b->cap < BLOCK_MAX ? b->cap * 2 : BLOCK_MAX) : BLOCK_MIN;

		if (LIB_GROW(th->b, th->b_cap, th->nb + 1))
			return -ENOMEM;
		b = malloc(sizeof(*b) + cap * sizeof(b->p[0]) +
			   (jp->stream ? cap * sizeof(*b->smp) : 0));
		if (!b)
			return -ENOMEM;
		b->smp = jp->stream ? (uint32_t *)&b->p[cap] : NULL;
		b->base = start;
		b->first = th->n;
		b->n = 0;
		b->cap = cap;
		th->b[th->nb++] = b;
	}
	if (b->smp)
		b->smp[b->n] = smp;
	p = &b->p[b->n++];
	p->off = (uint32_t)(start - b->base);
	p->task = task;
	p->open_start = open_start;
	p->open_end = open_end;
	if (end - start >= DUR_LONG) {
		uint64_t *v =
			lib_map_get(&jp->long_end, (uint64_t)th_ix << 32 | th->n, NULL);

		if (!v)
			return -ENOMEM;
		*v = end;
		p->dur = DUR_LONG;
	} else {
		p->dur = (uint32_t)(end - start);
	}
	th->n++;
	return 0;
}

/* Thread @th_ix's open poll, ended at @end, with the samples it has. */
static int emit_open(struct join_priv *jp, size_t th_ix, uint64_t end, int open_end)
{
	struct jthread *th = &jp->threads[th_ix];
	uint32_t smp = th->open_smp;

	th->open_smp = 0;
	return emit(jp, th_ix, th->open_task, th->open_start, end, 0, open_end, smp);
}

/* The gaps before @time that thread @th_ix has not crossed yet: the shim
 * recorded nothing in them. A poll open at the first one's start ends
 * there; after the last one the thread starts afresh from its end, as
 * after a THREAD_START. */
static int cross_gaps(struct join_priv *jp, size_t th_ix, uint64_t time)
{
	struct jthread *th = &jp->threads[th_ix];
	const struct join_gap *g = jp->pub.gaps;
	size_t lo = th->gap, hi = jp->pub.ngaps;
	int err = 0;

	if (lo == hi || g[lo].start >= time)
		return 0;
	if (th->open)
		err = emit_open(jp, th_ix, g[lo].start, 1);
	th->open = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g[mid].start < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	th->gap = lo;
	th->floor = g[lo - 1].end;
	th->seen_poll = 0;
	return err;
}

/* Feed one event (time order on its thread) to its thread's state machine. */
static int replay(struct join_priv *jp, size_t th_ix, uint32_t type, uint64_t time,
		  uint32_t task)
{
	struct jthread *th = &jp->threads[th_ix];
	int err = cross_gaps(jp, th_ix, time);

	if (err)
		return err;
	switch (type) {
	case TRACE_EV_THREAD_START:
		/* a new thread on this tid: whatever the old one left open
		 * ended by now */
		if (th->open)
			err = emit_open(jp, th_ix, time, 1);
		th->open = 0;
		th->floor = time;
		th->seen_poll = 0;
		break;
	case TRACE_EV_THREAD_STOP:
		if (th->open)
			err = emit_open(jp, th_ix, time, 1);
		th->open = 0;
		th->seen_poll = 1;
		break;
	case TRACE_EV_POLL_BEGIN:
		/* nested or missing END (dropped record): the poll that was
		 * open cannot run past this point */
		if (th->open)
			err = emit_open(jp, th_ix, time, 1);
		th->open = 1;
		th->open_task = task;
		th->open_start = time;
		th->seen_poll = 1;
		break;
	case TRACE_EV_POLL_END:
		if (th->open && th->open_task == task) {
			err = emit_open(jp, th_ix, time, 0);
			th->open = 0;
		} else if (!th->open && !th->seen_poll) {
			/* began before we were there */
			uint64_t start = th->floor < time ? th->floor : time;

			/* (a walk from a mark: began before it, not listed) */
			if (jp->from && start < jp->from->start)
				;
			/* ... where samples may have been joined already */
			else if (jp->stream && start < jp->horizon)
				return JOIN_RESTART;
			else
				err = emit(jp, th_ix, task, start, time, 1, 0, 0);
		} else {
			th->unmatched++;
		}
		th->seen_poll = 1;
		break;
	}
	return err;
}

static void thread_reset(struct join_priv *jp, struct jthread *th)
{
	th->open = th->seen_poll = 0;
	th->open_smp = 0;
	th->floor = jp->pub.events_from;
	th->gap = 0;
	th->last = 0;
	th->unmatched = 0;
	while (th->nb)
		free(th->b[--th->nb]);
	th->n = 0;
}

/* The thread of @tid, created if new; its index in *@ix. */
static int thread_get(struct join_priv *jp, uint32_t tid, size_t *ix)
{
	int created;
	uint64_t *v = lib_map_get(&jp->tidmap, tid, &created);
	struct jthread *th;

	if (!v)
		return -ENOMEM;
	if (created) {
		if (LIB_GROW(jp->threads, jp->threads_cap, jp->nthreads + 1))
			return -ENOMEM;
		*v = jp->nthreads;
		th = &jp->threads[jp->nthreads++];
		memset(th, 0, sizeof(*th));
		th->tid = tid;
		th->last_id = -1;
		thread_reset(jp, th);
		if (jp->sw_order) {
			const struct trace_switch *sw = jp->pub.trace->switches;
			const uint32_t *o = jp->sw_order;
			size_t n = jp->pub.trace->nswitches;

			th->sw_lo = LIB_PARTITION_POINT(0, n, i, sw[o[i]].tid < tid);
			th->sw_hi =
				LIB_PARTITION_POINT(th->sw_lo, n, i, sw[o[i]].tid <= tid);
			th->sw_cur = th->sw_lo;
		}
		if (jp->win) {
			const struct join_window *w = jp->win;
			size_t n = jp->keep.nwin;

			th->win_lo = LIB_PARTITION_POINT(0, n, i, w[i].tid < tid);
			th->win_hi =
				LIB_PARTITION_POINT(th->win_lo, n, i, w[i].tid <= tid);
		}
	}
	*ix = *v;
	return 0;
}

static int task_slot(struct join_priv *jp, uint64_t task, uint32_t *slot)
{
	struct slot_cache *c = &jp->slot_cache[task % SLOT_CACHE];
	int created;
	uint64_t *v;

	/* (tasks take turns: the map's last answers, by id) */
	if (c->valid && c->task == task) {
		*slot = c->slot;
		return 0;
	}
	v = lib_map_get(&jp->taskslot, task, &created);
	if (!v)
		return -ENOMEM;
	if (created) {
		size_t n = lib_map_count(&jp->taskslot) - 1;

		if (n >= TASKS_MAX)
			return -EOVERFLOW;
		*v = n;
		if (jp->stream) {
			if (LIB_GROW(jp->slot_task, jp->slot_task_cap, n + 1))
				return -ENOMEM;
			jp->slot_task[n] = task;
		}
	}
	*slot = (uint32_t)*v;
	*c = (struct slot_cache){task, *slot, 1};
	return 0;
}

static int stream_advance(struct join_priv *jp);

/* First walk of the events: tasks, and polls of the threads whose events
 * come in time order (streaming: the walk of both kinds). */
static int on_events(void *ctx, const struct trace_event *e, size_t n)
{
	struct join_priv *jp = ctx;
	size_t i, th_ix;
	uint32_t slot = 0;
	int err;

	if (jp->has_keep && jp->keep.events &&
	    (err = jp->keep.events(jp->keep.events_ctx, &jp->pub, e, n)))
		return err;
	for (i = 0; i < n; i++, jp->nevents++) {
		struct jthread *th;
		uint64_t time;

		if (((jp->flags & JOIN_POLL_LIST) || jp->has_keep) &&
		    (e[i].type == TRACE_EV_PARK || e[i].type == TRACE_EV_UNPARK ||
		     e[i].type == TRACE_EV_THREAD_START ||
		     e[i].type == TRACE_EV_THREAD_STOP)) {
			if (LIB_GROW(jp->pev, jp->pev_cap, jp->npev + 1))
				return -ENOMEM;
			jp->pev[jp->npev++] = (struct join_pev){
				.time = e[i].time,
				.tid = e[i].tid,
				.type = e[i].type,
				.idx = jp->nevents,
			};
		}
		/* a poll's END follows its BEGIN: one lookup for both */
		if (carries_task(e[i].type) && jp->have_last &&
		    e[i].task == jp->last_task)
			slot = jp->last_slot;
		else if (carries_task(e[i].type) &&
			 (err = task_slot(jp, e[i].task, &slot)))
			return err;
		else if (carries_task(e[i].type)) {
			jp->last_task = e[i].task;
			jp->last_slot = slot;
			jp->have_last = 1;
		}
		/* events come in per-thread runs: one lookup per run */
		if (jp->have_tid && e[i].tid == jp->last_tid) {
			th_ix = jp->last_th;
		} else {
			err = thread_get(jp, e[i].tid, &th_ix);
			if (err)
				return err;
			jp->last_tid = e[i].tid;
			jp->last_th = th_ix;
			jp->have_tid = 1;
		}
		th = &jp->threads[th_ix];
		if (e[i].time > th->last_rec)
			th->last_rec = e[i].time;
		if (e[i].time > jp->max_ev)
			jp->max_ev = e[i].time;
		if (!joins_thread_state(e[i].type) || th->unordered)
			continue;
		time = e[i].time;
		if (time < th->last && th->last - time <= JOIN_SKEW_NS)
			time = th->last;
		if (jp->stream && (time < th->last || time < jp->horizon))
			return JOIN_RESTART;
		if (time < th->last) {
			th->unordered = 1;
			continue;
		}
		th->last = time;
		err = replay(jp, th_ix, e[i].type, time, slot);
		if (err)
			return err;
	}
	jp->nev_seen += n;
	return jp->stream ? stream_advance(jp) : 0;
}

/* Second walk, only if some thread's events went back in time: collect
 * those threads' events to replay them sorted. */
static int on_events_sort(void *ctx, const struct trace_event *e, size_t n)
{
	struct join_priv *jp = ctx;
	size_t i;

	for (i = 0; i < n; i++, jp->nevents++) {
		const uint64_t *v;
		struct jthread *th;
		struct evref *r;

		if (!joins_thread_state(e[i].type))
			continue;
		v = lib_map_find(&jp->tidmap, e[i].tid);
		th = &jp->threads[*v];
		if (!th->unordered)
			continue;
		if (LIB_GROW(th->ev, th->ev_cap, th->nev + 1))
			return -ENOMEM;
		r = &th->ev[th->nev++];
		r->time = e[i].time;
		r->task = e[i].task;
		r->idx = jp->nevents;
		r->type = e[i].type;
	}
	return 0;
}

static int replay_unordered(struct join_priv *jp)
{
	size_t i, k;
	int any = 0, err;

	for (i = 0; i < jp->nthreads; i++)
		if (jp->threads[i].unordered) {
			thread_reset(jp, &jp->threads[i]);
			any = 1;
		}
	if (!any)
		return 0;
	/* long_end keys of those threads are overwritten as they re-emit */
	jp->nevents = 0;
	err = trace__for_each_event(jp->pub.trace, on_events_sort, jp);
	if (err)
		return err;
	for (i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		if (!th->unordered)
			continue;
		qsort(th->ev, th->nev, sizeof(*th->ev), evref_cmp);
		for (k = 0; k < th->nev; k++) {
			uint32_t slot = 0;

			if (carries_task(th->ev[k].type) &&
			    (err = task_slot(jp, th->ev[k].task, &slot)))
				return err;
			err = replay(jp, i, th->ev[k].type, th->ev[k].time, slot);
			if (err)
				return err;
		}
		free(th->ev);
		th->ev = NULL;
		th->nev = th->ev_cap = 0;
	}
	return 0;
}

/* Polls still open at the end, and the totals. */
static int finish_threads(struct join_priv *jp)
{
	size_t i, n = 0;
	int err;

	for (i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		if (th->open) {
			/* open at the end: to the next gap or the recording
			 * end for now, to the thread's last record if that
			 * comes first once its samples were seen
			 * (end_open_polls) */
			const struct join_gap *g =
				th->gap < jp->pub.ngaps ? &jp->pub.gaps[th->gap] : NULL;
			uint64_t end =
				g && g->start < jp->rec_end ? g->start : jp->rec_end;

			err = emit_open(jp, i, end, 1);
			if (err)
				return err;
			th->open = 0;
			th->open_at_end = 1;
		}
		jp->pub.unmatched_ends += th->unmatched;
		n += th->n;
	}
	if (n > INT32_MAX)
		return -EOVERFLOW;
	jp->pub.npolls = n;
	return 0;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task_stat *x = a, *y = b;

	return x->task < y->task ? -1 : x->task > y->task;
}

/* Is zero-code id @task no task of the program: a worker's launch task
 * (the runtime), a task the crate marks, or one no stack of it and no
 * name says is one (its samples and switches are then outside tasks)? */
static int not_a_task(const struct join_priv *jp, uint64_t task)
{
	const char *name;
	int runtime = 0;

	if (!jp->zc || !(task & TRACE_TASK_TOKIO))
		return 0;
	name = tokio_tasks__name(jp->zc, task, &runtime);
	return runtime || (!name && !trace__task_name(jp->pub.trace, task));
}

/* Streaming: the freed polls' totals and the samples counted per task
 * slot, given to the tasks (slot @s is task index @ix[s]). */
static int stream_tasks(struct join_priv *jp, const uint32_t *ix)
{
	struct join_agg *a = &jp->agg;
	struct lib_map m;
	uint64_t key, *v;
	size_t i = 0, nslots = lib_map_count(&jp->taskslot);
	int err;

	for (size_t s = 0; s < jp->slots_cap && s < nslots; s++) {
		const struct slot_stat *st = &jp->slots[s];
		struct task_stat *ts = &jp->pub.tasks[ix[s]];

		ts->polls += st->polls;
		ts->total_ns += st->total_ns;
		ts->samples += st->samples;
		if (st->longest_ns > ts->longest_ns)
			ts->longest_ns = st->longest_ns;
		if ((err = lib_hist_merge(&ts->lens, &st->lens)))
			return err;
	}
	/* (slot + 1, stack) -> (index + 1, stack), a one-to-one map */
	err = lib_map_init(&m, lib_map_count(&a->map) + 1);
	while (!err && lib_map_next(&a->map, &i, &key, &v)) {
		uint64_t root = key >> 32;

		if (root)
			root = (uint64_t)ix[root - 1] + 1;
		err = lib_map_set(&m, root << 32 | (key & UINT32_MAX), *v);
	}
	if (err) {
		lib_map_release(&m);
		return err;
	}
	lib_map_release(&a->map);
	a->map = m;
	return 0;
}

/* Every task the trace knows (named, seen in any event, polled), sorted,
 * with its poll statistics; polls get their task's index. */
static int build_tasks(struct join_priv *jp)
{
	struct join *j = &jp->pub;
	const struct trace *t = j->trace;
	struct lib_map *m = &jp->taskslot;
	uint32_t *ix = NULL, slot;
	uint64_t key, *v;
	size_t i, k;
	int err;

	for (i = 0; i < t->ntasks; i++)
		if (!not_a_task(jp, t->tasks[i].id) &&
		    (err = task_slot(jp, t->tasks[i].id, &slot)))
			return err;
	j->ntasks = lib_map_count(m);
	j->tasks = calloc(j->ntasks ? j->ntasks : 1, sizeof(*j->tasks));
	ix = malloc((j->ntasks ? j->ntasks : 1) * sizeof(*ix));
	if (!j->tasks || !ix) {
		free(ix);
		return -ENOMEM;
	}
	i = 0;
	k = 0;
	while (lib_map_next(m, &i, &key, &v))
		j->tasks[k++].task = key;
	qsort(j->tasks, j->ntasks, sizeof(*j->tasks), task_cmp);
	for (i = 0; i < j->ntasks; i++)
		ix[*lib_map_find(m, j->tasks[i].task)] = (uint32_t)i;

	/* the last name given to a task wins (a task may be renamed); a
	 * zero-code task is named from its code */
	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i].name && !not_a_task(jp, t->tasks[i].id))
			j->tasks[ix[*lib_map_find(m, t->tasks[i].id)]].name =
				t->tasks[i].name;
	for (i = 0; jp->zc && i < j->ntasks; i++) {
		int runtime;

		if (!j->tasks[i].name && (j->tasks[i].task & TRACE_TASK_TOKIO))
			j->tasks[i].name =
				tokio_tasks__name(jp->zc, j->tasks[i].task, &runtime);
	}

	for (i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		for (size_t bi = 0; bi < th->nb; bi++)
			for (k = 0; k < th->b[bi]->n; k++)
				th->b[bi]->p[k].task = ix[th->b[bi]->p[k].task];
	}
	err = jp->stream ? stream_tasks(jp, ix) : 0;
	free(ix);
	if (err)
		return err;
	/* the map finds a task's index from now on: join__task() is asked
	 * for every event of every walk */
	for (i = 0; i < j->ntasks; i++)
		*lib_map_find(m, j->tasks[i].task) = i;
	memset(jp->slot_cache, 0, sizeof(jp->slot_cache));
	jp->tasks_indexed = 1;
	return 0;
}

/* Each task's polls, their total and longest duration (and lengths), from
 * the polls as they finally end. 0 or -ENOMEM. */
static int task_stats(struct join_priv *jp)
{
	int lens = !!(jp->flags & JOIN_POLL_LENGTHS);

	for (size_t i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		for (size_t bi = 0; bi < th->nb; bi++) {
			struct jblock *b = th->b[bi];

			for (size_t k = 0; k < b->n; k++) {
				const struct jpoll *p = &b->p[k];
				struct task_stat *ts = &jp->pub.tasks[p->task];
				uint64_t d = poll_end(jp, i, b, k) - (b->base + p->off);

				ts->polls++;
				ts->total_ns += d;
				if (d > ts->longest_ns)
					ts->longest_ns = d;
				if (lens && lib_hist_add(&ts->lens, d))
					return -ENOMEM;
				th->polls++;
				th->poll_ns += d;
			}
		}
	}
	return 0;
}

/* JOIN_POLL_LIST: every poll as a struct poll, numbered in (start, tid)
 * order by a k-way merge of the threads' (start-ordered) polls:
 * O(P log T) where a sort would be O(P log P). */
struct mhead {
	uint64_t start;
	uint32_t tid;
	uint32_t th; /* thread index */
	size_t b, i; /* its next poll: block, index in it */
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

static int list_polls(struct join_priv *jp)
{
	struct join *j = &jp->pub;
	struct mhead *heap;
	size_t nh = 0, i, rank = 0;

	j->polls = malloc((j->npolls ? j->npolls : 1) * sizeof(*j->polls));
	if (!j->polls)
		return -ENOMEM;
	heap = malloc((jp->nthreads + 1) * sizeof(*heap));
	if (!heap)
		goto nomem;
	for (i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		th->ids = malloc((th->n ? th->n : 1) * sizeof(*th->ids));
		if (!th->ids)
			goto nomem;
		if (!th->n)
			continue;
		heap[nh].start = th->b[0]->base + th->b[0]->p[0].off;
		heap[nh].tid = th->tid;
		heap[nh].th = i;
		heap[nh].b = heap[nh].i = 0;
		nh++;
	}
	for (i = nh; i-- > 0;)
		mh_down(heap, nh, i);
	while (nh) {
		size_t ti = heap[0].th;
		struct jthread *th = &jp->threads[ti];
		const struct jblock *b = th->b[heap[0].b];
		const struct jpoll *q = &b->p[heap[0].i];
		size_t g = b->first + heap[0].i;

		j->polls[rank] = (struct poll){
			.start = b->base + q->off,
			.end = poll_end(jp, ti, b, heap[0].i),
			.task = j->tasks[q->task].task,
			.tid = th->tid,
			.id = (uint32_t)rank,
			.open_start = q->open_start,
			.open_end = q->open_end,
		};
		th->ids[g] = rank;
		rank++;
		if (++heap[0].i == b->n) {
			heap[0].i = 0;
			heap[0].b++;
		}
		if (heap[0].b < th->nb)
			heap[0].start = th->b[heap[0].b]->base +
					th->b[heap[0].b]->p[heap[0].i].off;
		else
			heap[0] = heap[--nh];
		mh_down(heap, nh, 0);
	}
	free(heap);
	return 0;
nomem:
	free(heap);
	return -ENOMEM;
}

static uint64_t start_at(const struct jthread *th, size_t b, size_t i)
{
	return th->b[b]->base + th->b[b]->p[i].off;
}

/* The poll of thread @th_ix containing @time: its block in *@bp and its
 * index there; -1 if none. @hint (may be NULL) is where the last lookup on
 * this thread ended: samples come in time order, so the answer is usually
 * there or a few polls on, found without a search. */
static int64_t lookup(const struct join_priv *jp, size_t th_ix, uint64_t time,
		      const struct jblock **bp, struct jpos *hint)
{
	const struct jthread *th = &jp->threads[th_ix];
	const struct jblock *b;
	size_t lo = 0, hi = th->nb, bi;
	uint64_t off;

	if (hint && hint->b < th->nb && hint->i < th->b[hint->b]->n &&
	    start_at(th, hint->b, hint->i) <= time) {
		struct jpos at = *hint;

		for (int step = 0; step < 8; step++) {
			struct jpos nx = {at.b, at.i + 1};

			if (nx.i == th->b[nx.b]->n) {
				nx.b++;
				nx.i = 0;
			}
			if (nx.b == th->nb || start_at(th, nx.b, nx.i) > time) {
				*hint = at;
				b = th->b[at.b];
				off = time - b->base;
				lo = at.i;
				goto found;
			}
			at = nx;
		}
	}

	/* last start <= time; ties go to the later poll (the one a BEGIN at
	 * this very ns opened): first the block, then in it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (th->b[mid]->base <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	bi = lo - 1;
	b = th->b[bi];
	off = time - b->base;
	lo = 0;
	hi = b->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->p[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo--; /* the block's first poll starts at its base <= time */
	if (hint) {
		hint->b = bi;
		hint->i = lo;
	}
found:
	if (b->p[lo].dur != DUR_LONG ? off - b->p[lo].off > b->p[lo].dur
				     : poll_end(jp, th_ix, b, lo) < time)
		return -1;
	*bp = b;
	return (int64_t)lo;
}

static const uint64_t *thread_of(const struct join_priv *jp, uint32_t tid)
{
	return lib_map_find(&jp->tidmap, tid);
}

/* A streaming join's listed poll on thread @th_ix containing @time, or
 * NULL (th->ids: the thread's listed polls, indices in join.polls).
 * @hint (may be NULL): hint->i, how many of them the last lookup found
 * starting by its time; asked in time order, the answer is there or a
 * few on, found without a search. */
static const struct poll *listed_at(const struct join_priv *jp, size_t th_ix,
				    uint64_t time, struct jpos *hint)
{
	const struct jthread *th = &jp->threads[th_ix];
	const struct poll *v = jp->pub.polls;
	size_t k = 0;

#define STARTS_BY(x) (v[th->ids[x]].start <= time)
	if (hint && hint->i <= th->nlst && (!hint->i || STARTS_BY(hint->i - 1))) {
		k = hint->i;
		for (int step = 0; step < 4 && k < th->nlst && STARTS_BY(k); step++)
			k++;
	}
	k = LIB_PARTITION_POINT(k, th->nlst, i, STARTS_BY(i));
#undef STARTS_BY
	if (hint)
		hint->i = k;
	return k && v[th->ids[k - 1]].end >= time ? &v[th->ids[k - 1]] : NULL;
}

const struct poll *join__poll_at(const struct join *j, uint32_t tid, uint64_t time)
{
	const struct join_priv *jp = JOIN_PRIV(j);
	const struct jblock *b = NULL;
	const uint64_t *th;
	int64_t g;

	if (!j || !j->polls)
		return NULL;
	th = thread_of(jp, tid);
	if (!th)
		return NULL;
	if (jp->stream)
		return listed_at(jp, *th, time, NULL);
	g = lookup(jp, *th, time, &b, NULL);
	return g < 0 ? NULL : &j->polls[jp->threads[*th].ids[b->first + g]];
}

uint32_t *join__poll_threads(const struct join *j, size_t *n)
{
	const struct join_priv *jp = JOIN_PRIV(j);
	uint32_t *v = malloc((jp->nthreads + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < jp->nthreads; i++)
		if (jp->threads[i].polls)
			v[(*n)++] = jp->threads[i].tid;
	return v;
}

uint64_t join__thread_totals(const struct join *j, uint32_t tid, uint64_t *ns)
{
	const uint64_t *th = thread_of(JOIN_PRIV(j), tid);

	*ns = th ? JOIN_PRIV(j)->threads[*th].poll_ns : 0;
	return th ? JOIN_PRIV(j)->threads[*th].polls : 0;
}

struct join_cursor {
	const struct join *j;
	struct jpos *hint; /* per thread of the join */
	uint32_t tid;	   /* the last thread asked of, and its index */
	uint64_t th;
	int have_th, have;
};

struct join_cursor *join__cursor_new(const struct join *j)
{
	struct join_cursor *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->j = j;
	c->hint = calloc(JOIN_PRIV(j)->nthreads + 1, sizeof(*c->hint));
	if (!c->hint) {
		free(c);
		return NULL;
	}
	return c;
}

void join__cursor_free(struct join_cursor *c)
{
	if (!c)
		return;
	free(c->hint);
	free(c);
}

const struct poll *join__cursor_poll_at(struct join_cursor *c, uint32_t tid,
					uint64_t time)
{
	const struct join_priv *jp = JOIN_PRIV(c->j);
	const struct jblock *b = NULL;
	int64_t g;

	if (!c->j->polls)
		return NULL;
	if (!c->have || tid != c->tid) {
		const uint64_t *th = thread_of(jp, tid);

		c->have = 1;
		c->tid = tid;
		c->have_th = th != NULL;
		c->th = th ? *th : 0;
	}
	if (!c->have_th)
		return NULL;
	if (jp->stream)
		return listed_at(jp, c->th, time, &c->hint[c->th]);
	g = lookup(jp, c->th, time, &b, &c->hint[c->th]);
	return g < 0 ? NULL : &c->j->polls[jp->threads[c->th].ids[b->first + g]];
}

size_t join__thread_polls(const struct join *j, uint32_t tid, const uint32_t **ids)
{
	const struct join_priv *jp = JOIN_PRIV(j);
	const uint64_t *th;

	if (!j || !j->polls || !(th = thread_of(jp, tid)) || !jp->threads[*th].ids)
		return 0;
	*ids = jp->threads[*th].ids;
	return jp->stream ? jp->threads[*th].nlst : jp->threads[*th].n;
}

const struct task_stat *join__sample_task(const struct join *j, uint64_t task)
{
	const struct join_priv *jp = JOIN_PRIV(j);

	if (!task || !(task & TRACE_TASK_TOKIO ? jp->zc != NULL : jp->lean))
		return NULL;
	return join__task(j, task);
}

const struct task_stat *join__task(const struct join *j, uint64_t task)
{
	size_t lo = 0, hi = j ? j->ntasks : 0;

	if (j && JOIN_PRIV(j)->tasks_indexed) {
		const uint64_t *v = lib_map_find(&JOIN_PRIV(j)->taskslot, task);

		return v ? &j->tasks[*v] : NULL;
	}

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

/* ---- walking the samples ------------------------------------------------ */

struct sample_walk {
	const struct join_priv *jp;
	join_sample_fn fn;
	void *ctx;
	struct jpos *hint; /* per thread */
	size_t th;	   /* thread of the last tid */
	uint32_t last_tid;
	int have_last, have_th;
};

/* Sample @s in no poll: in its task where zero-code Tokio read the task
 * in its thread (no poll), else in none */
static int sample_outside(struct sample_walk *w, const struct join *j,
			  const struct trace_sample *s)
{
	const struct task_stat *ts = join__sample_task(j, s->task);
	struct join_hit hit = {.start = s->time, .end = s->time, .id = -1, .nopoll = 1};

	if (!ts)
		return w->fn(w->ctx, s, NULL);
	hit.task = (uint32_t)(ts - j->tasks);
	return w->fn(w->ctx, s, &hit);
}

static int on_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct sample_walk *w = ctx;
	const struct join_priv *jp = w->jp;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		const struct jblock *b = NULL;
		struct join_hit hit;
		int64_t g = -1;

		/* samples come in per-thread runs: skip the hash lookup */
		if (!w->have_last || s[i].tid != w->last_tid) {
			const uint64_t *v = thread_of(jp, s[i].tid);

			w->have_th = v != NULL;
			w->th = v ? *v : 0;
			w->last_tid = s[i].tid;
			w->have_last = 1;
		}
		if (jp->stream) {
			const struct poll *p =
				w->have_th
					? listed_at(jp, w->th, s[i].time, &w->hint[w->th])
					: NULL;

			if (p) {
				hit.start = p->start;
				hit.end = p->end;
				hit.task = (uint32_t)(join__task(&jp->pub, p->task) -
						      jp->pub.tasks);
				hit.id = (int32_t)p->id;
				hit.nopoll = 0;
				err = w->fn(w->ctx, &s[i], &hit);
			} else {
				err = sample_outside(w, &jp->pub, &s[i]);
			}
			if (err)
				return err;
			continue;
		}
		if (w->have_th)
			g = lookup(jp, w->th, s[i].time, &b, &w->hint[w->th]);
		if (g < 0) {
			err = sample_outside(w, &jp->pub, &s[i]);
		} else {
			const struct jthread *th = &jp->threads[w->th];
			const struct jpoll *p = &b->p[g];

			hit.start = b->base + p->off;
			hit.end = poll_end(jp, w->th, b, (size_t)g);
			hit.task = p->task;
			hit.id = th->ids ? (int32_t)th->ids[b->first + g] : -1;
			hit.nopoll = 0;
			err = w->fn(w->ctx, &s[i], &hit);
		}
		if (err)
			return err;
	}
	return 0;
}

int join_for_each_sample(const struct join *j, join_sample_fn fn, void *ctx)
{
	struct sample_walk w = {.jp = JOIN_PRIV(j), .fn = fn, .ctx = ctx};
	int err;

	if (JOIN_PRIV(j)->dropped && !(JOIN_PRIV(j)->stream && j->polls))
		return -EINVAL;
	w.hint = calloc(JOIN_PRIV(j)->nthreads + 1, sizeof(*w.hint));
	if (!w.hint)
		return -ENOMEM;
	err = trace__for_each_sample(j->trace, on_samples, &w);
	free(w.hint);
	return err;
}

static void drop_polls(struct join_priv *jp)
{
	for (size_t i = 0; i < jp->nthreads; i++) {
		thread_reset(jp, &jp->threads[i]);
		free(jp->threads[i].b);
		jp->threads[i].b = NULL;
		jp->threads[i].b_cap = 0;
	}
	lib_map_release(&jp->long_end);
	jp->dropped = 1;
}

/* Weight @w more for (root, stack) @key. 0 or -ENOMEM. */
static int agg_add(struct join_agg *a, uint64_t key, uint64_t w)
{
	int created;
	uint64_t *v = lib_map_get(&a->map, key, &created);

	if (!v)
		return -ENOMEM;
	if (created) {
		/* two arrays on one count: each grows the same way from it */
		size_t wcap = a->cap, ccap = a->cap;

		if (LIB_GROW(a->weight, wcap, a->n + 1) ||
		    LIB_GROW(a->count, ccap, a->n + 1))
			return -ENOMEM;
		a->cap = wcap;
		*v = a->n;
		a->weight[a->n] = 0;
		a->count[a->n] = 0;
		a->n++;
	}
	a->weight[*v] += w;
	a->count[*v]++;
	return 0;
}

/* The join's own walk: counts per poll, task and (root, stack). */
static int count_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct join_priv *jp = ctx;
	uint64_t w = sample_weight(s), root = 0;

	/* samples come in per-thread runs: one lookup per run */
	if (!jp->sample_th || s->tid != jp->sample_tid) {
		const uint64_t *th = thread_of(jp, s->tid);

		jp->sample_th = th ? &jp->threads[*th] : NULL;
		jp->sample_tid = s->tid;
	}
	if (jp->sample_th && s->time > jp->sample_th->last_rec)
		jp->sample_th->last_rec = s->time;
	jp->pub.samples += w;
	if (p) {
		root = (uint64_t)p->task + 1;
		jp->pub.samples_in_polls += w;
		jp->pub.tasks[p->task].samples += w;
		if (p->id >= 0 && jp->pub.polls) {
			struct poll *q = &jp->pub.polls[p->id];
			uint64_t n = (uint64_t)q->samples + w;

			q->samples = n > UINT32_MAX ? UINT32_MAX : n;
		}
	}
	return agg_add(&jp->agg, root << 32 | s->stack, w);
}

/* ---- streaming (join_priv.stream) --------------------------------------- */

/* Task slot @slot's totals of freed polls; NULL without memory. */
static struct slot_stat *slot_stat(struct join_priv *jp, uint32_t slot)
{
	size_t old = jp->slots_cap;

	if (slot >= old) {
		if (LIB_GROW(jp->slots, jp->slots_cap, (size_t)slot + 1))
			return NULL;
		memset(jp->slots + old, 0, (jp->slots_cap - old) * sizeof(*jp->slots));
	}
	return &jp->slots[slot];
}

/* Count sample @s in the poll of its thread then, which the thread's
 * events have reached (or the horizon has). */
static int stream_place(struct join_priv *jp, const struct trace_sample *s)
{
	const uint64_t *v = thread_of(jp, s->tid);
	struct jthread *th = v ? &jp->threads[*v] : NULL;
	uint64_t w = sample_weight(s), root = 0;
	const struct join_gap *g;
	const struct jblock *b;
	uint32_t *smp = NULL;
	int64_t k;

	if (th) {
		/* its poll may have been freed */
		if (th->delivered_any && s->time <= th->delivered_to)
			return JOIN_RESTART;
		if (s->time > th->last_rec)
			th->last_rec = s->time;
		/* the open poll first: it wins a tie with the one before;
		 * it ends at the next gap not crossed yet */
		g = th->gap < jp->pub.ngaps ? &jp->pub.gaps[th->gap] : NULL;
		if (th->open && th->open_start <= s->time && !(g && g->start < s->time)) {
			root = (uint64_t)th->open_task + 1;
			smp = &th->open_smp;
		} else if ((k = lookup(jp, *v, s->time, &b, &th->hint)) >= 0) {
			root = (uint64_t)b->p[k].task + 1;
			smp = &b->smp[k];
		}
	}
	if (smp) {
		uint64_t n = (uint64_t)*smp + w;

		*smp = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	jp->pub.samples += w;
	if (root) {
		struct slot_stat *st = slot_stat(jp, (uint32_t)(root - 1));

		if (!st)
			return -ENOMEM;
		st->samples += w;
		jp->pub.samples_in_polls += w;
	}
	return agg_add(&jp->agg, root << 32 | s->stack, w);
}

/* The task id of slot @slot (or, once build_tasks() ran, of index @slot). */
static uint64_t slot_task_id(const struct join_priv *jp, uint32_t slot)
{
	return jp->tasks_indexed ? jp->pub.tasks[slot].task : jp->slot_task[slot];
}

/* Is @a a better pick than @b for keep->longest (longer; ties: first)? */
static int longer(const struct poll *a, const struct poll *b)
{
	uint64_t x = a->end - a->start, y = b->end - b->start;

	return x != y ? x > y : a->id < b->id;
}

/* The longest kept so far are a heap, the least long on top. */
static void top_down(struct poll *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct poll tmp;

		if (l < n && longer(&h[m], &h[l]))
			m = l;
		if (l + 1 < n && longer(&h[m], &h[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/* ... and the one at @i just added, moved up to its place */
static void top_up(struct poll *h, size_t i)
{
	while (i) {
		size_t up = (i - 1) / 2;
		struct poll tmp;

		if (!longer(&h[up], &h[i]))
			return;
		tmp = h[i];
		h[i] = h[up];
		h[up] = tmp;
		i = up;
	}
}

/* Does poll @p of thread @th overlap one of its windows: does one that
 * begins by the poll's end reach its start (win_reach: the latest end
 * among the windows up to each)? */
static int in_window(const struct join_priv *jp, const struct jthread *th,
		     const struct poll *p)
{
	const struct join_window *w = jp->win;
	size_t k = LIB_PARTITION_POINT(th->win_lo, th->win_hi, i, w[i].from <= p->end);

	return k > th->win_lo && jp->win_reach[k - 1] >= p->start;
}

/* Is task @task one of those of the keep's selection? */
static int sel_keeps(const struct join_priv *jp, uint64_t task)
{
	const struct join_keep *k = &jp->keep;
	struct task_stat ts = {.task = task};

	if (!k->sel.on)
		return 1;
	if (k->sel.name)
		ts.name = trace__task_name(jp->pub.trace, task);
	return task_sel_has(&k->sel, &ts);
}

/* What the keep does with poll @p: count it, list it or not. */
static int keep_poll(struct join_priv *jp, const struct jthread *th, const struct poll *p,
		     int had_switch)
{
	const struct join_keep *k = &jp->keep;

	if ((had_switch && k->switches) || (p->samples && k->sampled) ||
	    (k->one && p->id == k->id)) {
		if (LIB_GROW(jp->swp, jp->swp_cap, jp->nswp + 1))
			return -ENOMEM;
		jp->swp[jp->nswp++] = *p;
	}
	if (th->win_hi > th->win_lo && in_window(jp, th, p)) {
		if (LIB_GROW(jp->swp, jp->swp_cap, jp->nswp + 1))
			return -ENOMEM;
		jp->swp[jp->nswp++] = *p;
	}
	if (p->end - p->start < k->min_ns && p->end - p->start < k->count_ns)
		return 0;
	if (!sel_keeps(jp, p->task))
		return 0;
	if (k->count_ns && p->end - p->start >= k->count_ns)
		jp->pub.ncounted++;
	if (p->end - p->start < k->min_ns)
		return 0;
	jp->pub.nmatched++;
	if (!k->n || (!k->longest && jp->ntop < k->n)) {
		if (LIB_GROW(jp->top, jp->top_cap, jp->ntop + 1))
			return -ENOMEM;
		jp->top[jp->ntop++] = *p;
	} else if (k->longest && jp->ntop < k->n) {
		if (LIB_GROW(jp->top, jp->top_cap, jp->ntop + 1))
			return -ENOMEM;
		jp->top[jp->ntop++] = *p;
		top_up(jp->top, jp->ntop - 1);
	} else if (k->longest && longer(p, &jp->top[0])) {
		jp->top[0] = *p;
		top_down(jp->top, jp->ntop, 0);
	}
	return 0;
}

/* A mark at the poll beginning at @start on @th, about to be delivered */
static int mark(struct join_priv *jp, const struct jthread *th, uint64_t start)
{
	uint64_t running = start;

	/* a poll running then began before: its thread's last delivered */
	for (size_t i = 0; i < jp->nthreads; i++) {
		const struct jthread *o = &jp->threads[i];

		if (o->delivered_any && o->delivered_to >= start &&
		    o->delivered_start < running)
			running = o->delivered_start;
	}
	if (LIB_GROW(jp->mark, jp->mark_cap, jp->nmark + 1))
		return -ENOMEM;
	jp->mark[jp->nmark++] = (struct join_mark){
		.start = start, .running = running, .tid = th->tid, .id = jp->ndelivered};
	return 0;
}

/* Poll @k of block @b of thread @th_ix, the next in (start, tid) order:
 * numbered, given the off-CPU intervals that began in it, folded into its
 * task's totals and kept or not. */
static int deliver(struct join_priv *jp, size_t th_ix, const struct jblock *b, size_t k)
{
	struct jthread *th = &jp->threads[th_ix];
	const struct jpoll *q = &b->p[k];
	const struct trace_switch *sw = jp->pub.trace->switches;
	uint64_t start = b->base + q->off, end = poll_end(jp, th_ix, b, k);
	struct slot_stat *st = slot_stat(jp, q->task);
	struct poll p;
	size_t c = th->sw_cur;
	int had = 0;

	if (!st)
		return -ENOMEM;
	st->polls++;
	st->total_ns += end - start;
	if (end - start > st->longest_ns)
		st->longest_ns = end - start;
	if ((jp->flags & JOIN_POLL_LENGTHS) && lib_hist_add(&st->lens, end - start))
		return -ENOMEM;
	th->polls++;
	th->poll_ns += end - start;
	if (!jp->has_keep) {
		th->delivered_to = end;
		th->delivered_any = 1;
		return 0; /* no poll is listed by id */
	}
	if (jp->from && !jp->numbered) {
		/* from a mark: those before it are not numbered (a poll
		 * that began earlier, ended in the walk), it is */
		if (start < jp->from->start ||
		    (start == jp->from->start && th->tid < jp->from->tid))
			return 0;
		if (start != jp->from->start || th->tid != jp->from->tid)
			return JOIN_ASTRAY;
		jp->ndelivered = jp->from->id;
		jp->numbered = 1;
	}
	if (jp->from && start > jp->stop)
		return JOIN_DONE;
	if (!jp->from &&
	    (!jp->nmark || start >= jp->mark[jp->nmark - 1].start + JOIN_MARK_NS) &&
	    (!jp->ndelivered || start > jp->last_start)) {
		int err = mark(jp, th, start);

		if (err)
			return err;
	}
	th->delivered_to = end;
	th->delivered_start = start;
	th->delivered_any = 1;
	jp->last_start = start;
	p = (struct poll){
		.start = start,
		.end = end,
		.task = slot_task_id(jp, q->task),
		.tid = th->tid,
		.id = jp->ndelivered++,
		.samples = b->smp[k],
		.open_start = q->open_start,
		.open_end = q->open_end,
	};
	/* an interval beginning where the thread's poll before ended and
	 * this one began is this one's: the later poll wins a tie */
	for (; c > th->sw_lo && sw[jp->sw_order[c - 1]].time == start &&
	       jp->sw_poll[jp->sw_order[c - 1]] == th->last_id;
	     c--)
		;
	for (; c < th->sw_hi && sw[jp->sw_order[c]].time <= end; c++)
		if (sw[jp->sw_order[c]].time >= start) {
			jp->sw_poll[jp->sw_order[c]] = (int32_t)p.id;
			had = 1;
		}
	th->sw_cur = c;
	th->last_id = (int32_t)p.id;
	if (jp->keep.each && sel_keeps(jp, p.task)) {
		int err = jp->keep.each(jp->keep.ctx, &p);

		if (err)
			return err;
	}
	return keep_poll(jp, th, &p, had);
}

static int free_delivered(struct join_priv *jp, size_t th_ix);

/* Deliver every poll that precedes (in (start, tid) order) any poll not
 * final yet: one that ends at or after @h, or is still open; with @h
 * UINT64_MAX all of them (with no keep, in no order: nothing is listed
 * by id). Blocks delivered whole are freed. */
static int stream_deliver(struct join_priv *jp, uint64_t h)
{
	struct mhead *heap, open = {.start = UINT64_MAX};
	size_t nh = 0, i;
	int err = 0;

	/* nothing listed: no ids wanted, no order to keep */
	for (i = 0; !jp->has_keep && i < jp->nthreads && !err; i++) {
		struct jthread *th = &jp->threads[i];

		while (th->dl_b < th->nb && !err) {
			const struct jblock *b = th->b[th->dl_b];

			if (h != UINT64_MAX && poll_end(jp, i, b, th->dl_i) >= h)
				break;
			err = deliver(jp, i, b, th->dl_i);
			if (++th->dl_i == b->n) {
				th->dl_i = 0;
				th->dl_b++;
			}
		}
		if (!err)
			err = free_delivered(jp, i);
	}
	if (!jp->has_keep || err)
		return err;
	if (LIB_GROW(jp->heap, jp->heap_cap, jp->nthreads + 1))
		return -ENOMEM;
	heap = jp->heap;

	for (i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		if (th->open && h != UINT64_MAX &&
		    mh_less(&(struct mhead){.start = th->open_start, .tid = th->tid},
			    &open))
			open = (struct mhead){.start = th->open_start, .tid = th->tid};
		if (th->dl_b < th->nb) {
			heap[nh].start = start_at(th, th->dl_b, th->dl_i);
			heap[nh].tid = th->tid;
			heap[nh].th = (uint32_t)i;
			nh++;
		}
	}
	for (i = nh; i-- > 0;)
		mh_down(heap, nh, i);
	while (nh && !err && mh_less(&heap[0], &open)) {
		size_t ti = heap[0].th;
		struct jthread *th = &jp->threads[ti];
		const struct jblock *b = th->b[th->dl_b];

		if (h != UINT64_MAX && poll_end(jp, ti, b, th->dl_i) >= h)
			break;
		err = deliver(jp, ti, b, th->dl_i);
		if (++th->dl_i == b->n) {
			th->dl_i = 0;
			th->dl_b++;
		}
		if (th->dl_b < th->nb)
			heap[0].start = start_at(th, th->dl_b, th->dl_i);
		else
			heap[0] = heap[--nh];
		mh_down(heap, nh, 0);
	}
	for (i = 0; i < jp->nthreads && !err; i++)
		err = free_delivered(jp, i);
	return err;
}

/* Free thread @th_ix's blocks delivered whole. */
static int free_delivered(struct join_priv *jp, size_t th_ix)
{
	struct jthread *th = &jp->threads[th_ix];
	size_t nb = th->dl_b;

	for (size_t i = 0; i < nb; i++) {
		struct jblock *b = th->b[i];

		for (size_t k = 0; k < b->n; k++)
			if (b->p[k].dur == DUR_LONG)
				lib_map_del(&jp->long_end,
					    (uint64_t)th_ix << 32 | (b->first + k));
		free(b);
	}
	if (!nb)
		return 0;
	memmove(th->b, th->b + nb, (th->nb - nb) * sizeof(*th->b));
	th->nb -= nb;
	th->dl_b = 0;
	if (th->hint.b >= nb)
		th->hint.b -= nb;
	else
		th->hint = (struct jpos){0, 0};
	return 0;
}

static int sample_time_cmp(const void *a, const void *b)
{
	const struct trace_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* The horizon after a chunk: samples held back to it joined, polls
 * ended before it freed. */
static int stream_advance(struct join_priv *jp)
{
	const struct trace *t = jp->pub.trace;
	uint64_t e = jp->nev_seen >= t->nevents ? UINT64_MAX : jp->max_ev;
	uint64_t sm = jp->nsmp_seen >= t->nsamples ? UINT64_MAX : jp->max_smp;
	uint64_t h = e < sm ? e : sm;
	size_t i, k = 0;
	int err = 0;

	/* both walked to their end: the end of the join does the rest */
	if (h == UINT64_MAX)
		return 0;
	h = h > STREAM_MARGIN ? h - STREAM_MARGIN : 0;
	if (h <= jp->horizon)
		return 0;
	jp->horizon = h;
	/* the held in time order: those before the horizon are a prefix
	 * (samples come nearly in time order: seldom sorted) */
	if (jp->held_unsorted) {
		qsort(jp->held + jp->held_at, jp->nheld - jp->held_at, sizeof(*jp->held),
		      sample_time_cmp);
		jp->held_unsorted = 0;
	}
	for (i = jp->held_at; i < jp->nheld && jp->held[i].time < h && !err; i++)
		err = stream_place(jp, &jp->held[i]);
	jp->held_at = i;
	if (jp->held_at > jp->nheld / 2) {
		k = jp->nheld - jp->held_at;
		memmove(jp->held, jp->held + jp->held_at, k * sizeof(*jp->held));
		jp->nheld = k;
		jp->held_at = 0;
	}
	return err ? err : stream_deliver(jp, h);
}

/* The samples of the walk of both kinds: joined now where their thread's
 * events are there (or the horizon is past them), else held. */
static int on_stream_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct join_priv *jp = ctx;
	int err;

	for (size_t i = 0; i < n; i++) {
		const uint64_t *v = thread_of(jp, s[i].tid);

		if (s[i].time > jp->max_smp)
			jp->max_smp = s[i].time;
		if ((!v || s[i].time > jp->threads[*v].last) &&
		    s[i].time >= jp->horizon) {
			if (LIB_GROW(jp->held, jp->held_cap, jp->nheld + 1))
				return -ENOMEM;
			if (jp->nheld > jp->held_at &&
			    s[i].time < jp->held[jp->nheld - 1].time)
				jp->held_unsorted = 1;
			jp->held[jp->nheld++] = s[i];
			continue;
		}
		err = stream_place(jp, &s[i]);
		if (err)
			return err;
	}
	jp->nsmp_seen += n;
	return stream_advance(jp);
}

/* After the walk: every sample still held joined (the events are all
 * there). */
static int stream_finish(struct join_priv *jp)
{
	int err = 0;

	for (size_t i = jp->held_at; i < jp->nheld && !err; i++)
		err = stream_place(jp, &jp->held[i]);
	free(jp->held);
	jp->held = NULL;
	jp->nheld = jp->held_cap = jp->held_at = 0;
	return err;
}

/* A poll open at the end ends at its thread's last record, not later: for
 * all anyone knows the thread (or the whole target) was gone after it, and
 * the recording end is another thread's or the recorder's time. A thread
 * still switched out at the end of a complete trace was off-CPU until the
 * end, its last record. It stays open_end: at least that long. */
static void end_open_polls(struct join_priv *jp)
{
	const struct trace *t = jp->pub.trace;
	size_t i, any = 0;

	for (i = 0; i < jp->nthreads; i++)
		any += jp->threads[i].open_at_end;
	/* events and samples were seen; switches are in memory */
	for (i = 0; any && i < t->nswitches; i++) {
		const struct trace_switch *sw = &t->switches[i];
		const uint64_t *v = thread_of(jp, sw->tid);
		struct jthread *th = v ? &jp->threads[*v] : NULL;

		if (th && sw->time > th->last_rec)
			th->last_rec = sw->time;
		if (th && sw->time_in > th->last_rec)
			th->last_rec = sw->time_in;
		/* still off-CPU when a complete recording ended: switch-ins
		 * are recorded to the end, so it was off-CPU until then (a
		 * poll blocked at the end is the one worth seeing) */
		if (th && !sw->time_in && t->counters.end_time &&
		    jp->rec_end > th->last_rec)
			th->last_rec = jp->rec_end;
	}
	for (i = 0; any && i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];
		struct jblock *b;
		struct jpoll *p;
		uint64_t start, end, *v;

		if (!th->open_at_end)
			continue;
		th->open_at_end = 0;
		b = th->b[th->nb - 1];
		p = &b->p[b->n - 1];
		start = b->base + p->off;
		end = th->last_rec > start ? th->last_rec : start;
		if (end >= poll_end(jp, i, b, b->n - 1))
			continue;
		if (end - start < DUR_LONG)
			p->dur = (uint32_t)(end - start);
		else if ((v = lib_map_find(&jp->long_end,
					   (uint64_t)i << 32 | (th->n - 1))))
			*v = end; /* still long, as it was */
		if (th->ids && jp->pub.polls)
			jp->pub.polls[th->ids[th->n - 1]].end = end;
	}
}

static void see_time(struct join_priv *jp, uint64_t time)
{
	if (time < jp->lo)
		jp->lo = time;
	if (time > jp->hi)
		jp->hi = time;
}

static int see_events(void *ctx, const struct trace_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		see_time(ctx, e[i].time);
	return 0;
}

static int see_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		see_time(ctx, s[i].time);
	return 0;
}

static int gap_cmp(const void *a, const void *b)
{
	const struct join_gap *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int analysis_meta_gap(const char *v, uint64_t *start, uint64_t *end)
{
	char *e;

	if (!v || !isdigit((unsigned char)*v))
		return -EINVAL;
	*start = strtoull(v, &e, 10);
	if (*e != '-' || !isdigit((unsigned char)e[1]))
		return -EINVAL;
	*end = strtoull(e + 1, &e, 10);
	return !*e && *start <= *end ? 0 : -EINVAL;
}

static int is_gap_key(const char *k)
{
	return !strcmp(k, TRACE_META_SHIM_GAP) || !strcmp(k, TRACE_META_SEGMENT_GAP) ||
	       !strcmp(k, TRACE_META_TOKIO_PROBES_OFF);
}

/* The gaps: the shim's (meta "shim_gap" = "START-END") and those between
 * segments ("segment_gap", trace.h), sorted, merged where they
 * overlap (a malformed one is left out), and their total. */
static int read_gaps(struct join_priv *jp)
{
	const struct trace *t = jp->pub.trace;
	struct join *j = &jp->pub;
	size_t i, n = 0;

	for (i = 0; i < t->nmeta; i++)
		n += is_gap_key(t->meta[i].key);
	if (!n)
		return 0;
	j->gaps = malloc(n * sizeof(*j->gaps));
	if (!j->gaps)
		return -ENOMEM;
	for (i = 0; i < t->nmeta; i++) {
		struct join_gap g;

		if (is_gap_key(t->meta[i].key) &&
		    !analysis_meta_gap(t->meta[i].value, &g.start, &g.end))
			j->gaps[j->ngaps++] = g;
	}
	qsort(j->gaps, j->ngaps, sizeof(*j->gaps), gap_cmp);
	for (i = 0, n = 0; i < j->ngaps; i++) {
		if (n && j->gaps[i].start <= j->gaps[n - 1].end) {
			if (j->gaps[i].end > j->gaps[n - 1].end)
				j->gaps[n - 1].end = j->gaps[i].end;
			continue;
		}
		j->gaps[n++] = j->gaps[i];
	}
	j->ngaps = n;
	for (i = 0; i < n; i++)
		j->gap_ns += j->gaps[i].end - j->gaps[i].start;
	return 0;
}

const struct join_gap *join__gap_from(const struct join *j, uint64_t time)
{
	size_t lo = 0, hi = j->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->gaps[mid].start < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->ngaps ? &j->gaps[lo] : NULL;
}

/* A zero-code task's stacks are cut where Tokio's task machinery polls
 * its future (analysis_tokio_split()), those the shim's poll sites did
 * not cut already. 0 or -ENOMEM. */
static int cut_tokio(struct join_priv *jp)
{
	struct join *j = &jp->pub;
	size_t n = j->trace->nstacks;

	if (!j->cut) {
		j->cut = malloc((n + 1) * sizeof(*j->cut));
		if (!j->cut)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			j->cut[i] = UINT32_MAX;
	}
	for (size_t i = 0; i < n; i++)
		if (j->cut[i] == UINT32_MAX)
			j->cut[i] = tokio_tasks__keep(jp->zc, (uint32_t)i);
	return 0;
}

/* Not streaming: the list is every poll (JOIN_POLL_LIST); a keep's
 * count of those it matches, and the intervals' polls. */
static void list_all(struct join_priv *jp)
{
	struct join *j = &jp->pub;
	const struct trace *t = j->trace;

	if (!j->polls)
		return;
	j->nlisted = j->npolls;
	for (size_t i = 0; jp->has_keep && i < j->npolls; i++) {
		const struct poll *p = &j->polls[i];
		struct task_stat ts = {.task = p->task,
				       .name = trace__task_name(t, p->task)};

		if (jp->keep.sel.on && !task_sel_has(&jp->keep.sel, &ts))
			continue;
		j->nmatched += p->end - p->start >= jp->keep.min_ns;
		j->ncounted +=
			jp->keep.count_ns && p->end - p->start >= jp->keep.count_ns;
	}
	for (size_t i = 0; jp->sw_poll && i < t->nswitches; i++) {
		const struct poll *p =
			join__poll_at(j, t->switches[i].tid, t->switches[i].time);

		jp->sw_poll[i] = p ? (int32_t)p->id : -1;
	}
}

static int poll_id_cmp(const void *a, const void *b)
{
	const struct poll *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int index_listed(struct join_priv *jp);

/* Polls @a and @b (@na, @nb of them, each in id order) merged in id
 * order, each once: a new array, its length in *@n; NULL without memory. */
static struct poll *merge_polls(const struct poll *a, size_t na, const struct poll *b,
				size_t nb, size_t *n)
{
	struct poll *v = malloc((na + nb + 1) * sizeof(*v));
	size_t x = 0, y = 0, m = 0;

	if (!v)
		return NULL;
	while (x < na || y < nb) {
		const struct poll *p =
			y == nb || (x < na && a[x].id <= b[y].id) ? &a[x++] : &b[y++];

		if (!m || v[m - 1].id != p->id)
			v[m++] = *p;
	}
	*n = m;
	return v;
}

/* A streaming join's list: what the keep kept, in id order, once each;
 * each thread's listed polls for the lookups. */
static int list_kept(struct join_priv *jp)
{
	struct join *j = &jp->pub;

	if (jp->ntop) /* (NULL without any) */
		qsort(jp->top, jp->ntop, sizeof(*jp->top), poll_id_cmp);
	j->polls = merge_polls(jp->top, jp->ntop, jp->swp, jp->nswp, &j->nlisted);
	if (!j->polls)
		return -ENOMEM;
	free(jp->top);
	free(jp->swp);
	jp->top = jp->swp = NULL;
	return index_listed(jp);
}

/* Each thread's listed polls, for the lookups. */
static int index_listed(struct join_priv *jp)
{
	const struct join *j = &jp->pub;

	for (size_t i = 0; i < jp->nthreads; i++) {
		free(jp->threads[i].ids);
		jp->threads[i].ids = NULL;
		jp->threads[i].nlst = 0;
	}
	for (size_t i = 0; i < j->nlisted; i++)
		jp->threads[*thread_of(jp, j->polls[i].tid)].nlst++;
	for (size_t i = 0; i < jp->nthreads; i++) {
		struct jthread *th = &jp->threads[i];

		th->ids = malloc((th->nlst + 1) * sizeof(*th->ids));
		if (!th->ids)
			return -ENOMEM;
		th->nlst = 0;
	}
	for (size_t i = 0; i < j->nlisted; i++) {
		struct jthread *th = &jp->threads[*thread_of(jp, j->polls[i].tid)];

		th->ids[th->nlst++] = (uint32_t)i;
	}
	return 0;
}

const struct poll *join__poll(const struct join *j, uint32_t id)
{
	size_t k;

	if (!j->polls || id >= j->npolls)
		return NULL;
	if (j->nlisted == j->npolls)
		return &j->polls[id];
	k = LIB_PARTITION_POINT(0, j->nlisted, i, j->polls[i].id < id);
	return k < j->nlisted && j->polls[k].id == id ? &j->polls[k] : NULL;
}

int32_t join__switch_poll(const struct join *j, size_t i)
{
	const struct join_priv *jp = JOIN_PRIV(j);

	return jp->sw_poll && i < j->trace->nswitches ? jp->sw_poll[i] : -1;
}

/* Streaming: the off-CPU intervals in (tid, time) order, for deliver(). */
struct swkey {
	uint32_t tid;
	uint32_t ix;
	uint64_t time;
};

static int swkey_cmp(const void *a, const void *b)
{
	const struct swkey *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

static int order_switches(struct join_priv *jp)
{
	const struct trace *t = jp->pub.trace;
	size_t n = t->nswitches;
	struct swkey *k = malloc((n + 1) * sizeof(*k));

	jp->sw_order = malloc((n + 1) * sizeof(*jp->sw_order));
	jp->sw_poll = malloc((n + 1) * sizeof(*jp->sw_poll));
	if (!k || !jp->sw_order || !jp->sw_poll) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		k[i] = (struct swkey){t->switches[i].tid, (uint32_t)i,
				      t->switches[i].time};
		jp->sw_poll[i] = -1;
	}
	qsort(k, n, sizeof(*k), swkey_cmp);
	for (size_t i = 0; i < n; i++)
		jp->sw_order[i] = k[i].ix;
	free(k);
	return 0;
}

static int window_cmp(const void *a, const void *b)
{
	const struct join_window *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* The keep's windows sorted, and how far each thread's reach. */
static int order_windows(struct join_priv *jp)
{
	size_t n = jp->keep.nwin;

	jp->win = malloc(n * sizeof(*jp->win));
	jp->win_reach = malloc(n * sizeof(*jp->win_reach));
	if (!jp->win || !jp->win_reach)
		return -ENOMEM;
	memcpy(jp->win, jp->keep.win, n * sizeof(*jp->win));
	qsort(jp->win, n, sizeof(*jp->win), window_cmp);
	for (size_t i = 0; i < n; i++)
		jp->win_reach[i] = i && jp->win[i - 1].tid == jp->win[i].tid &&
						   jp->win_reach[i - 1] > jp->win[i].to
					   ? jp->win_reach[i - 1]
					   : jp->win[i].to;
	return 0;
}

/* join__new(), streaming if @stream and the trace allows: 0 and the join
 * in *@out, or an error (JOIN_RESTART: a record came too late to
 * stream). */
static int join_run(const struct trace *t, unsigned int flags, int stream,
		    const struct join_keep *keep, const struct join_mark *from,
		    uint64_t stop, struct join_priv **out)
{
	struct join_priv *jp;
	const struct trace_counters *c;
	const char *attached;
	int err;

	jp = calloc(1, sizeof(*jp));
	if (!jp)
		return -ENOMEM;
	jp->pub.trace = t;
	jp->flags = flags;
	if (keep) {
		jp->has_keep = 1;
		jp->keep = *keep;
	}
	jp->from = from;
	jp->stop = stop;
	jp->lo = UINT64_MAX;
	err = lib_map_init(&jp->tidmap, 64);
	if (!err)
		err = lib_map_init(&jp->long_end, 16);
	if (!err)
		err = lib_map_init(&jp->taskslot, t->ntasks + 64);
	if (!err)
		err = lib_map_init(&jp->agg.map, 64);
	if (err)
		goto fail;

	/* a cut trace has no END chunk, hence no counters: fall back to the
	 * times actually seen, which takes a walk of its own */
	c = &t->counters;
	if (!c->start_time || !c->end_time) {
		err = trace__for_each_event(t, see_events, jp);
		if (!err)
			err = trace__for_each_sample(t, see_samples, jp);
		if (err)
			goto fail;
	}
	jp->rec_start =
		c->start_time ? c->start_time : (jp->lo == UINT64_MAX ? 0 : jp->lo);
	jp->rec_end = c->end_time ? c->end_time : jp->hi;
	/* Shim records exist only from the shim's attach on (meta
	 * "shim_attached", later than the recording start when the recorder
	 * started the command): a poll seen ending first began before that,
	 * not before the recording. */
	jp->pub.events_from = jp->rec_start;
	attached = trace__meta(t, TRACE_META_SHIM_ATTACHED);
	if (attached) {
		unsigned long long v = strtoull(attached, NULL, 10);

		if (v > jp->pub.events_from)
			jp->pub.events_from = v;
	}
	jp->pub.start_time = jp->rec_start;
	jp->pub.end_time = jp->rec_end;

	err = read_gaps(jp);
	if (!err && analysis_is_tokio(t))
		err = tokio_tasks__new(t, &jp->zc);
	jp->lean = trace__meta(t, TRACE_META_LEAN) != NULL; /* (lean.h) */
	/* a zero-code or lean sample's own task is known only once all
	 * events are (a lean trace lists few polls) */
	jp->stream = stream && !jp->zc && !jp->lean;
	/* not streaming, a keep lists every poll */
	if (keep && !jp->stream)
		jp->flags = flags |= JOIN_POLL_LIST;
	if (!err && (jp->stream || (flags & JOIN_POLL_LIST)))
		err = order_switches(jp);
	if (!err && keep && keep->nwin)
		err = order_windows(jp);
	if (err)
		goto fail;
	if (jp->stream) {
		/* polls are delivered (numbered, counted, kept) as the walk
		 * passes them, the rest at its end, all as they end */
		err = trace__for_each_record_from(t, from ? from->start : 0,
						  on_stream_samples, on_events, jp);
		if (!err)
			err = stream_finish(jp);
		if (!err)
			err = finish_threads(jp);
		if (!err) {
			end_open_polls(jp);
			err = stream_deliver(jp, UINT64_MAX);
		}
		/* (from a mark, walked as far as asked) */
		if (err == JOIN_DONE)
			err = 0;
		if (!err && !from)
			err = build_tasks(jp);
		if (!err && jp->has_keep)
			err = list_kept(jp);
	} else {
		err = trace__for_each_event(t, on_events, jp);
		if (!err)
			err = replay_unordered(jp);
		if (!err)
			err = finish_threads(jp);
		if (!err)
			err = build_tasks(jp);
		if (!err && (flags & JOIN_POLL_LIST))
			err = list_polls(jp);
		if (!err)
			err = join_for_each_sample(&jp->pub, count_sample, jp);
		if (!err) {
			end_open_polls(jp);
			err = task_stats(jp);
			list_all(jp);
		}
	}
	if (!err && !(flags & JOIN_WHOLE_STACKS))
		err = join__cut_stacks(&jp->pub);
	if (!err && !(flags & JOIN_WHOLE_STACKS) && jp->zc)
		err = cut_tokio(jp);
	if (err)
		goto fail;
	/* nothing will look a poll up again: its memory need not stay for
	 * what the caller builds next */
	if (!(flags & (JOIN_POLL_LIST | JOIN_KEEP_POLLS)))
		drop_polls(jp);
	*out = jp;
	return 0;
fail:
	join__free(&jp->pub);
	return err;
}

/* join_run() streaming if @stream and it can, else (or where it must
 * start over) listing every poll: @keep->each is given every poll
 * either way. */
static int join_keep_run(const struct trace *t, unsigned int flags, int stream,
			 const struct join_keep *keep, struct join_priv **out)
{
	join_poll_fn each = keep ? keep->each : NULL;
	int err;

	*out = NULL;
	err = join_run(t, flags, stream, keep, NULL, 0, out);
	if (err == JOIN_RESTART) {
		err = each ? each(keep->ctx, NULL) : 0;
		if (!err && keep && keep->events)
			err = keep->events(keep->events_ctx, NULL, NULL, 0);
		if (!err)
			err = join_run(t, flags, 0, keep, NULL, 0, out);
	}
	/* not streamed, its polls were listed, not delivered */
	for (size_t i = 0; !err && each && !(*out)->stream && i < (*out)->pub.nlisted;
	     i++)
		if (sel_keeps(*out, (*out)->pub.polls[i].task))
			err = each(keep->ctx, &(*out)->pub.polls[i]);
	if (err && *out) {
		join__free(&(*out)->pub);
		*out = NULL;
	}
	return err;
}

int join__new_keep(const struct trace *t, unsigned int flags,
		   const struct join_keep *keep, struct join **out)
{
	const unsigned int keeps = JOIN_POLL_LIST | JOIN_KEEP_POLLS;
	struct join_priv *jp = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!t || (keep && (flags & keeps)))
		return -EINVAL;
	/* a join that keeps no poll, or only some, streams */
	err = join_keep_run(t, flags, !(flags & (keeps | JOIN_NO_STREAM)), keep, &jp);
	if (!err)
		*out = &jp->pub;
	return err;
}

int join__new(const struct trace *t, unsigned int flags, struct join **out)
{
	return join__new_keep(t, flags, NULL, out);
}

/* @*v (*@n of them) and the polls @more lists, merged */
static int merge_more(struct poll **v, size_t *n, struct join_priv *more)
{
	struct poll *m = merge_polls(*v, *n, more->pub.polls, more->pub.nlisted, n);

	join__free(&more->pub);
	if (!m)
		return -ENOMEM;
	free(*v);
	*v = m;
	return 0;
}

/* A walk from a mark, for the windows from @w on: mark @m, and where
 * the walk can stop */
struct mark_walk {
	size_t m;
	uint64_t stop;
};

static int mark_walk_cmp(const void *a, const void *b)
{
	const struct mark_walk *x = a, *y = b;

	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	return x->stop < y->stop ? -1 : x->stop > y->stop;
}

/* The last mark of @jp beginning at or before @time; the first if none */
static size_t mark_at(const struct join_priv *jp, uint64_t time)
{
	size_t k = LIB_PARTITION_POINT(0, jp->nmark, i, jp->mark[i].start <= time);

	return k ? k - 1 : 0;
}

/* join__list_more() by walks from the marks before the windows, as few
 * as cover them: the polls found in *@v (*@n); JOIN_ASTRAY if a walk
 * numbered its polls otherwise than the whole walk did. */
static int list_from_marks(struct join_priv *jp, const struct join_keep *k,
			   struct poll **v, size_t *n)
{
	struct mark_walk *w = malloc((k->nwin + 1) * sizeof(*w));
	int seekable = trace__seekable(jp->pub.trace);
	size_t nw = 0;
	int err = 0;

	if (!w)
		return -ENOMEM;
	/* each window's: the mark before the polls running at its start */
	for (size_t i = 0; i < k->nwin; i++) {
		const struct join_mark *m = &jp->mark[mark_at(jp, k->win[i].from)];

		w[i] = (struct mark_walk){mark_at(jp, m->running), k->win[i].to};
	}
	qsort(w, k->nwin, sizeof(*w), mark_walk_cmp);
	/* one walk for the windows it passes anyway (all of them where a
	 * walk from a mark decodes all before it: one walk, as before) */
	for (size_t i = 0; i < k->nwin; i++) {
		if (nw && (jp->mark[w[i].m].start <= w[nw - 1].stop || !seekable)) {
			if (w[i].stop > w[nw - 1].stop)
				w[nw - 1].stop = w[i].stop;
			continue;
		}
		w[nw++] = w[i];
	}
	for (size_t i = 0; i < nw && !err; i++) {
		struct join_priv *more = NULL;

		err = join_run(jp->pub.trace, jp->flags, 1, k, &jp->mark[w[i].m],
			       w[i].stop, &more);
		if (!err)
			err = merge_more(v, n, more);
	}
	free(w);
	return err;
}

int join__list_more(struct join *j, const struct join_window *win, size_t n)
{
	struct join_priv *jp = JOIN_PRIV(j), *more = NULL;
	const struct join_keep k = {.min_ns = UINT64_MAX, .win = win, .nwin = n};
	struct poll *v = NULL, *all;
	size_t m = 0;
	int err;

	if (!jp->stream || !n)
		return 0; /* every poll is listed, or none asked for */
	/* from the marks before the windows; else (a walk from one started
	 * over, or went astray: never, unless the trace is odd) all of it */
	err = jp->nmark ? list_from_marks(jp, &k, &v, &m) : JOIN_ASTRAY;
	if (err == JOIN_RESTART || err == JOIN_ASTRAY) {
		free(v);
		v = NULL;
		m = 0;
		err = join_keep_run(j->trace, jp->flags, 1, &k, &more);
		if (!err)
			err = merge_more(&v, &m, more);
	}
	all = err ? NULL : merge_polls(j->polls, j->nlisted, v, m, &m);
	free(v);
	if (err || !all)
		return err ? err : -ENOMEM;
	free(j->polls);
	j->polls = all;
	j->nlisted = m;
	return index_listed(jp);
}

int join_for_each_poll(const struct join *j, join_poll_fn fn, void *ctx)
{
	return join_for_each_poll_fed(j, fn, ctx, NULL, NULL);
}

int join_for_each_poll_fed(const struct join *j, join_poll_fn fn, void *ctx,
			   join_events_fn events, void *events_ctx)
{
	const struct join_keep k = {.sel = j->sel,
				    .min_ns = UINT64_MAX,
				    .each = fn,
				    .ctx = ctx,
				    .events = events,
				    .events_ctx = events_ctx};
	struct join_priv *again;
	int err = 0;

	if (j->polls && j->nlisted == j->npolls && !events) {
		for (size_t i = 0; i < j->nlisted && !err; i++)
			if (join__kept(j, join__task(j, j->polls[i].task)))
				err = fn(ctx, &j->polls[i]);
		return err;
	}
	err = join_keep_run(j->trace, JOIN_PRIV(j)->flags, 1, &k, &again);
	if (!err)
		join__free(&again->pub);
	return err;
}

size_t join_park_events(const struct join *j, const struct join_pev **v)
{
	*v = JOIN_PRIV(j)->pev;
	return JOIN_PRIV(j)->npev;
}

int join_streamed(const struct join *j)
{
	return JOIN_PRIV(j)->stream;
}

const struct join_agg *join_agg(const struct join *j)
{
	return &JOIN_PRIV(j)->agg;
}

void join_seen(const struct join *j, uint64_t *lo, uint64_t *hi)
{
	*lo = JOIN_PRIV(j)->lo;
	*hi = JOIN_PRIV(j)->hi;
}

void join__free(struct join *j)
{
	struct join_priv *jp = JOIN_PRIV(j);
	size_t i;

	if (!j)
		return;
	free(j->polls);
	for (i = 0; j->tasks && i < j->ntasks; i++)
		lib_hist_release(&j->tasks[i].lens);
	free(j->tasks);
	free(j->gaps);
	free(j->cut);
	for (i = 0; i < jp->nthreads; i++) {
		thread_reset(jp, &jp->threads[i]);
		free(jp->threads[i].b);
		free(jp->threads[i].ids);
		free(jp->threads[i].ev);
	}
	free(jp->threads);
	lib_map_release(&jp->tidmap);
	lib_map_release(&jp->long_end);
	lib_map_release(&jp->taskslot);
	lib_map_release(&jp->agg.map);
	free(jp->agg.weight);
	free(jp->agg.count);
	tokio_tasks__free(jp->zc);
	free(jp->pev);
	free(jp->held);
	for (i = 0; i < jp->slots_cap; i++)
		lib_hist_release(&jp->slots[i].lens);
	free(jp->slots);
	free(jp->slot_task);
	free(jp->heap);
	free(jp->mark);
	free(jp->sw_order);
	free(jp->sw_poll);
	free(jp->top);
	free(jp->swp);
	free(jp->win);
	free(jp->win_reach);
	free(jp);
}

/* ---- which tasks a view keeps (--task ID or NAME) ---------------------- */

int task_sel_has(const struct task_sel *s, const struct task_stat *ts)
{
	if (s->name)
		return ts->name && !strcmp(ts->name, s->name);
	if (s->id & TRACE_TASK_TOKIO)
		return ts->task == s->id;
	return trace_task_number(ts->task) == s->id;
}

int join__select(struct join *j, const struct task_sel *sel)
{
	size_t i;

	j->sel = *sel;
	j->nkept = 0;
	for (i = 0; i < j->ntasks; i++) {
		j->tasks[i].kept = !sel->on || task_sel_has(sel, &j->tasks[i]);
		j->nkept += j->tasks[i].kept;
	}
	if (j->nkept > 1 && sel->on && !sel->name) {
		/* N is a marked task's and one read from outside: the marked */
		for (i = 0; i < j->ntasks; i++)
			if (j->tasks[i].kept && (j->tasks[i].task & TRACE_TASK_TOKIO)) {
				j->tasks[i].kept = 0;
				j->nkept--;
			}
		return 1;
	}
	return join__keeps_none(j) ? -ENOENT : 0;
}

const struct task_stat *join__selected(const struct join *j)
{
	for (size_t i = 0; j->sel.on && i < j->ntasks; i++)
		if (j->tasks[i].kept)
			return &j->tasks[i];
	return NULL;
}

char *task_sel_text(const struct task_sel *s, char *buf, size_t len)
{
	char name[128];

	if (!s || !s->on) {
		snprintf(buf, len, "all tasks");
	} else if (s->name) {
		analysis_clean_name(s->name, name, sizeof(name));
		snprintf(buf, len, "tasks named %s", name);
	} else {
		snprintf(buf, len, "task %s%" PRIu64,
			 s->id & TRACE_TASK_TOKIO ? "tokio:" : "",
			 trace_task_number(s->id));
	}
	return buf;
}

/* ---- naming ----------------------------------------------------------------- */

char *analysis_task_label(const struct join *j, uint64_t task, char *buf, size_t len)
{
	const struct task_stat *ts = join__task(j, task);
	char name[128] = "";

	if (ts && ts->name)
		analysis_clean_name(ts->name, name, sizeof(name));
	snprintf(buf, len, "task %" PRIu64 "%s%s", trace_task_number(task),
		 *name ? " " : "", name);
	return buf;
}
