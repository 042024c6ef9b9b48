/* SPDX-License-Identifier: MIT */
/*
 * delays.c - wake-to-poll delays and what kept the poller busy meanwhile.
 *
 * The delays (rules in analysis.h): the events that make and end a wait
 * (spawn, wake, poll begin, task end) are collected, 16 bytes each, sorted
 * by (task, time) and replayed per task. What a thread did in an interval
 * is read off its polls (join), its off-CPU intervals, split into blocked
 * and run-queue parts, and its parked time (offcpu join); the rest is time
 * on-CPU outside polls.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/stacks.h"
#include "lib/grow.h"
#include "lib/hist.h"
#include "lib/map.h"
#include "lib/search.h"

/* ---- the delays --------------------------------------------------------- */

/* A wake still pending at the end is a lost wake-up if it waited this
 * long, and this many times the task's longest delay; else the recording
 * just ended first. */
#define LOST_MIN_NS 100000000ULL
#define LOST_FACTOR 10

/* Sort order of events at one time: ready before begin, end last. */
enum { DV_SPAWN = 0, DV_WAKE = 1, DV_BEGIN = 2, DV_END = 3 };

/* An event at @time; @key is DV_* << 62 | task << 30 | self << 29 | tid
 * (task: its index in replay.t; tid: < 2^29; self: a wake by the thread
 * polling the task then, a yield or a requeue of its own), in the order
 * they replay at one time; a wake's or spawn's @polling: the index + 1 in
 * replay.t of the task its thread was polling then, 0: none */
struct dev {
	uint64_t time;
	uint64_t key;
	uint32_t polling;
};

#define DEV_SELF		(1u << 29)
#define DEV_DROP		(1u << 28) /* a DV_END that is a waker drop */
#define DEV_KEY(ord, task, tid) ((uint64_t)(ord) << 62 | (uint64_t)(task) << 30 | (tid))
#define DEV_ORD(e)		((uint32_t)((e)->key >> 62))
#define DEV_TASK(e)		((uint32_t)((e)->key >> 30))
#define DEV_TID(e)		((uint32_t)((e)->key & (DEV_DROP - 1)))
#define DEV_IS_SELF(e)		(((e)->key & DEV_SELF) != 0)
#define DEV_IS_DROP(e)		(((e)->key & DEV_DROP) != 0)

/* How late in the file an event may come after later ones (the recorder
 * drains every ring each tick, 20 ms at most): the events are replayed in
 * time order once this far behind the latest seen. One that comes later
 * than that makes a second walk that sorts them all. */
#define REORDER_NS 250000000ULL

/* A run of the buffer in order, one thread's: its next event, its end,
 * and the run of its thread that follows it (a later chunk's), if in
 * order after it (else RUN_NONE) */
struct dev_run {
	size_t at, end, next;
	int chained; /* a run's next: not in the heap */
};
#define RUN_NONE SIZE_MAX

/* A task's wait being replayed */
struct tstate {
	struct delay cur;	    /* its pending wait */
	uint64_t spawned_at;	    /* its life since spawn: when, */
	uint32_t spawner;	    /* ... by which thread */
	uint64_t tmax, last;	    /* its longest delay; its last event */
	uint64_t wakes, self_wakes; /* every wake of it; by its own polls */
	uint64_t polls, last_poll;  /* polls begun; the last one's begin */
	uint32_t last_poller;
	uint64_t dropped; /* its last waker dropped then, not woken since */
	uint8_t seen, pending, spawned, ended, born; /* born: its spawn seen */
	uint8_t polled_at_end;			     /* in a poll when the trace ends */
};

/* A task met: its wait, its delays, whether the view keeps it (none:
 * not one of the join's, its events left out) */
struct rtask {
	struct tstate s;
	struct lib_hist hist;
	uint64_t id;
	int kept, none;
};

#define TCACHE 256 /* task lookups remembered, by id */

/* Tasks numbered as met, and the task each thread polls now */
struct tasks_met {
	struct lib_map ix;	/* task id -> its number */
	struct lib_map polling; /* tid -> number + 1 of the task it polls */
	uint32_t p_tid;		/* ... the last looked up (a thread's events */
	uint64_t *p_val;	/* come in runs), NULL: none */
	uint32_t n;
	struct tcache {
		uint64_t id;
		uint32_t ix;
		int valid;
	} cache[TCACHE];
};

struct replay {
	const struct join *j;	     /* the join (fed: at the end only) */
	int fed;		     /* by a join's walk (struct delays_feed) */
	const struct join_gap *gaps; /* the join's */
	size_t ngaps;
	struct delays *d;
	const struct delays_keep *keep; /* NULL: list them all */
	struct tasks_met met;		/* (not fed: fed, the feed numbers them) */
	struct rtask *t;		/* the tasks, by number */
	size_t nt, t_cap;
	struct join_cursor *cur; /* the polls' lookups, in time order */
	struct dev *v;		 /* the events not replayed yet */
	size_t n, cap;
	struct dev_run *runs, **heap; /* release()'s */
	size_t runs_cap, heap_cap;
	struct lib_map tail; /* release()'s: tid -> its last run, + 1 */
	size_t vcap, lcap, ucap, icap, scap;
	uint64_t window, seen, released; /* replayed: every event before released */
	uint64_t ends;			 /* tasks that ended */
	int late;
	struct delay *extra; /* keep->listed: those listed polls ended */
	size_t nextra, extra_cap;
};

static int delay_cmp(const void *a, const void *b)
{
	const struct delay *x = a, *y = b;
	uint64_t dx = x->begin - x->wake, dy = y->begin - y->wake;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->wake != y->wake)
		return x->wake < y->wake ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* Most self-wakes first, then by id */
static int self_cmp(const void *a, const void *b)
{
	const struct delays_self *x = a, *y = b;

	if (x->self_wakes != y->self_wakes)
		return x->self_wakes > y->self_wakes ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

static int lost_cmp(const void *a, const void *b)
{
	const struct delay *x = a, *y = b;

	if (x->wake != y->wake)
		return x->wake < y->wake ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

static int push(struct delay **v, size_t *n, size_t *cap, const struct delay *d)
{
	if (LIB_GROW(*v, *cap, *n + 1))
		return -ENOMEM;
	(*v)[(*n)++] = *d;
	return 0;
}

/* @x listed before @y (longest first, then by wake, then task)? */
static int delay_before(const struct delay *x, const struct delay *y)
{
	return delay_cmp(x, y) < 0;
}

/* the list as a heap of its last-listed on top */
static void heap_down(struct delay *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct delay t;

		if (l < n && delay_before(&v[m], &v[l]))
			m = l;
		if (l + 1 < n && delay_before(&v[m], &v[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		t = v[i];
		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

static void heap_up(struct delay *v, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		struct delay t;

		if (!delay_before(&v[p], &v[i]))
			return;
		t = v[i];
		v[i] = v[p];
		v[p] = t;
		i = p;
	}
}

/* Delay @dl of a task @kept or not: counted, and listed as r->keep asks */
static int keep(struct replay *r, int kept, const struct delay *dl)
{
	static const struct delays_keep all = {0};
	const struct delays_keep *k = r->keep ? r->keep : &all;
	struct delays *d = r->d;
	uint64_t ns = dl->begin - dl->wake;

	if (k->stats_only)
		return 0;
	d->counted += kept && ns >= k->count_ns;
	d->matched += kept && ns >= k->min_ns;
	if (!r->keep)
		return push(&d->v, &d->n, &r->vcap, dl);
	if (!kept)
		return 0;
	if (k->each)
		return k->each(k->each_ctx, dl);
	if (k->listed && dl->poll >= 0) {
		int err = push(&r->extra, &r->nextra, &r->extra_cap, dl);

		if (err)
			return err;
	}
	if (ns < k->min_ns)
		return 0;
	if (!k->top || d->n < k->top) {
		int err = push(&d->v, &d->n, &r->vcap, dl);

		if (!err && k->top)
			heap_up(d->v, d->n - 1);
		return err;
	}
	if (delay_before(dl, &d->v[0])) {
		d->v[0] = *dl;
		heap_down(d->v, d->n, 0);
	}
	return 0;
}

/* Did the shim stop recording in [@a, @b) (a gap starts there)? */
static int gap_between(const struct replay *r, uint64_t a, uint64_t b)
{
	size_t k = LIB_PARTITION_POINT(0, r->ngaps, i, r->gaps[i].start < a);

	return k < r->ngaps && r->gaps[k].start < b;
}

/* The poll running on @tid at @time, NULL if none; with a join listing
 * some polls, NULL unless @listed asks for those (else the join finds
 * them later: delays__list_polls()); fed, NULL (delays__from_feed()) */
static const struct poll *poll_at(const struct replay *r, uint32_t tid, uint64_t time,
				  int listed)
{
	if (r->fed || (r->j->nlisted < r->j->npolls && !listed))
		return NULL;
	return join__cursor_poll_at(r->cur, tid, time);
}

static int32_t poll_id(const struct poll *p)
{
	return p ? (int32_t)p->id : -1;
}

/* Is @p the poll that a BEGIN of @task at @time opened? Not so of a
 * listed poll found there that ended at that very ns, the one begun
 * being unlisted (a join listing some polls). */
static int begun_by(const struct poll *p, uint64_t task, uint64_t time)
{
	return p && p->start == time && p->task == task;
}

/* Event @e of its task, after every earlier one */
static int replay_one(struct replay *r, const struct dev *e)
{
	struct rtask *t = &r->t[DEV_TASK(e)];
	struct tstate *s = &t->s;
	uint32_t tid = DEV_TID(e), ord = DEV_ORD(e);
	const struct poll *p;
	int err = 0;

	/* the shim recorded nothing for a while after the task's last
	 * event: whether a pending wake was polled in that gap is not
	 * known. No delay or lost wake is made of that. */
	if (s->seen && (s->pending || s->spawned) && gap_between(r, s->last, e->time))
		s->pending = 0;
	s->seen = 1;
	s->last = e->time;
	if (DEV_IS_DROP(e)) {
		/* no waker left: lost, unless woken or polled after all */
		if (!s->pending && !s->ended)
			s->dropped = e->time;
		return 0;
	}
	s->dropped = 0;
	switch (ord) {
	case DV_SPAWN:
	case DV_WAKE:
		if (ord == DV_WAKE) {
			s->wakes++;
			s->self_wakes += DEV_IS_SELF(e);
		}
		s->born |= ord == DV_SPAWN;
		if (ord == DV_SPAWN && !s->spawned) {
			s->spawned_at = e->time;
			s->spawner = tid;
			s->spawned = 1;
		}
		if (s->pending) {
			s->cur.merged++;
			break;
		}
		memset(&s->cur, 0, sizeof(s->cur));
		s->cur.task = t->id;
		s->cur.wake = e->time;
		s->cur.waker = tid;
		s->cur.waker_poll = poll_id(poll_at(r, tid, e->time, 0));
		s->cur.waker_polling = e->polling && e->polling <= r->nt;
		s->cur.waker_task = s->cur.waker_polling ? r->t[e->polling - 1].id : 0;
		s->cur.poll = -1;
		s->cur.spawn = ord == DV_SPAWN;
		s->pending = 1;
		break;
	case DV_BEGIN:
		s->polls++;
		s->last_poll = e->time;
		s->last_poller = tid;
		if (!s->pending)
			break;
		s->cur.begin = e->time;
		if (s->cur.begin - s->cur.wake > s->tmax)
			s->tmax = s->cur.begin - s->cur.wake;
		s->cur.poller = tid;
		p = poll_at(r, tid, e->time, r->keep && r->keep->listed);
		s->cur.poll = begun_by(p, t->id, e->time) ? (int32_t)p->id : -1;
		err = lib_hist_add(&t->hist, s->cur.begin - s->cur.wake);
		if (!err)
			err = keep(r, t->kept, &s->cur);
		s->pending = 0;
		break;
	case DV_END:
		s->pending = 0; /* cancelled while ready */
		s->spawned = 0;
		s->ended = 1;
		r->ends++;
		break;
	}
	return err;
}

/* (a total order: the merge of the runs is one however made) */
static inline int dev_before(const struct dev *x, const struct dev *y)
{
	return x->time < y->time || (x->time == y->time && x->key < y->key);
}

/* the runs' heap, the run whose next event comes first on top */
static int run_before(const struct dev *v, const struct dev_run *x,
		      const struct dev_run *y)
{
	return dev_before(&v[x->at], &v[y->at]);
}

static void run_down(const struct dev *v, struct dev_run **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct dev_run *t;

		if (l < n && run_before(v, h[l], h[m]))
			m = l;
		if (l + 1 < n && run_before(v, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Replay the events before @until (UINT64_MAX: all) in time order and
 * keep the rest. The buffer is runs in order (a thread's events in a
 * chunk, what the last release kept of each run): they are merged as they
 * are replayed, and what each keeps moved to the front, still a run. */
static int release(struct replay *r, uint64_t until)
{
	struct dev *v = r->v;
	size_t i, k, nr = 0, nh, o;
	int err = 0;

	/* runs of one thread each, a thread's chained where in order: the
	 * heap holds a chain each, as many as threads, not chunks */
	lib_map_release(&r->tail); /* (empty, as a zeroed map) */
	for (i = 0, nh = 0; i < r->n; nr++) {
		size_t s = i;
		uint32_t tid = DEV_TID(&v[i]);
		uint64_t *last;
		int created;

		for (i++;
		     i < r->n && !dev_before(&v[i], &v[i - 1]) && DEV_TID(&v[i]) == tid;
		     i++)
			;
		if (LIB_GROW(r->runs, r->runs_cap, nr + 1) ||
		    LIB_GROW(r->heap, r->heap_cap, nr + 1) ||
		    !(last = lib_map_get(&r->tail, tid, &created)))
			return -ENOMEM;
		r->runs[nr] = (struct dev_run){s, i, RUN_NONE, 0};
		if (!created && !dev_before(&v[s], &v[r->runs[*last - 1].end - 1])) {
			r->runs[*last - 1].next = nr;
			r->runs[nr].chained = 1;
		}
		*last = nr + 1;
	}
	for (k = 0; k < nr; k++)
		if (!r->runs[k].chained)
			r->heap[nh++] = &r->runs[k];
	for (k = nh / 2; k-- > 0;)
		run_down(v, r->heap, nh, k);
	/* (UINT64_MAX: all, an event at that very time too) */
	while (nh && !err && (v[r->heap[0]->at].time < until || until == UINT64_MAX)) {
		struct dev_run *h = r->heap[0];

		err = replay_one(r, &v[h->at++]);
		if (h->at == h->end && h->next != RUN_NONE)
			r->heap[0] = &r->runs[h->next];
		else if (h->at == h->end)
			r->heap[0] = r->heap[--nh];
		run_down(v, r->heap, nh, 0);
	}
	/* the runs' rests to the front, in their order */
	for (k = 0, o = 0; k < nr; k++) {
		size_t m = r->runs[k].end - r->runs[k].at;

		if (m && o != r->runs[k].at)
			memmove(&v[o], &v[r->runs[k].at], m * sizeof(*v));
		o += m;
	}
	r->n = o;
	if (until > r->released)
		r->released = until;
	return err;
}

/* Task @id's number in @m: *@fresh if just given */
static int met(struct tasks_met *m, uint64_t id, uint32_t *ix, int *fresh)
{
	struct tcache *c = &m->cache[id % TCACHE];
	uint64_t *v;

	*fresh = 0;
	if (!c->valid || c->id != id) {
		if (!(v = lib_map_get(&m->ix, id, fresh)))
			return -ENOMEM;
		if (*fresh && m->n == UINT32_MAX >> 2) {
			lib_map_del(&m->ix, id);
			return -EOVERFLOW; /* (DEV_KEY: 32 bits, 2^30 is plenty) */
		}
		if (*fresh)
			*v = m->n++;
		*c = (struct tcache){id, (uint32_t)*v, 1};
	}
	*ix = c->ix;
	return 0;
}

static void met_release(struct tasks_met *m)
{
	lib_map_release(&m->ix);
	lib_map_release(&m->polling);
	memset(m, 0, sizeof(*m));
}

/* Task @id, numbered @ix: its state (fed, every task is one) */
static int add_task(struct replay *r, uint32_t ix, uint64_t id)
{
	const struct task_stat *ts = r->fed ? NULL : join__task(r->j, id);
	struct rtask *t;

	if (LIB_GROW(r->t, r->t_cap, (size_t)ix + 1))
		return -ENOMEM;
	for (; r->nt <= ix; r->nt++) {
		memset(&r->t[r->nt], 0, sizeof(r->t[r->nt]));
		lib_hist_init(&r->t[r->nt].hist);
		r->t[r->nt].none = 1;
	}
	t = &r->t[ix];
	t->id = id;
	t->none = !r->fed && !ts;
	/* (fed: no task is chosen yet; the feed holds for none) */
	t->kept = r->fed || join__kept(r->j, ts);
	return 0;
}

/* The order of @e's kind at one time, or -1 if it makes or ends no wait */
static int dev_ord(const struct trace_event *e)
{
	switch (e->type) {
	case TRACE_EV_SPAWN:
		return DV_SPAWN;
	case TRACE_EV_WAKE:
		return DV_WAKE;
	case TRACE_EV_POLL_BEGIN:
		return DV_BEGIN;
	case TRACE_EV_TASK_END:
	case TRACE_EV_WAKER_DROP: /* (DEV_DROP) */
		return DV_END;
	}
	return -1;
}

/* Event @e as the dev *@out, its task numbered in @m (*@fresh if new):
 * 1, 0 if it makes or ends no wait (or its tid is out of range), or
 * -errno */
/* The slot in @m->polling of thread @tid, added if @add (NULL: absent,
 * or no memory). The last one is kept: the pointer holds until an add,
 * which gives the one kept then. */
static uint64_t *polling_of(struct tasks_met *m, uint32_t tid, int add)
{
	uint64_t *v;

	if (m->p_val && m->p_tid == tid)
		return m->p_val;
	v = add ? lib_map_get(&m->polling, tid, NULL) : lib_map_find(&m->polling, tid);
	if (v) {
		m->p_tid = tid;
		m->p_val = v;
	}
	return v;
}

static int to_dev(struct tasks_met *m, const struct trace_event *e, struct dev *out,
		  int *fresh)
{
	int ord = dev_ord(e), err;
	uint32_t ix, self = 0, polling = 0;
	uint64_t *v;

	*fresh = 0;
	if (e->tid >= DEV_DROP)
		return 0;
	if (e->type == TRACE_EV_POLL_END) {
		/* (a thread's events come in its order: its poll ends here) */
		v = polling_of(m, e->tid, 0);
		if (v)
			*v = 0;
		return 0;
	}
	if (ord < 0)
		return 0;
	if ((err = met(m, e->task, &ix, fresh)))
		return err;
	if (ord == DV_BEGIN) {
		if (!(v = polling_of(m, e->tid, 1)))
			return -ENOMEM;
		*v = (uint64_t)ix + 1;
	} else if ((ord == DV_WAKE || ord == DV_SPAWN) &&
		   (v = polling_of(m, e->tid, 0))) {
		polling = (uint32_t)*v;
		self = ord == DV_WAKE && *v == (uint64_t)ix + 1 ? DEV_SELF : 0;
	} else if (e->type == TRACE_EV_WAKER_DROP) {
		self = DEV_DROP;
	}
	*out = (struct dev){e->time, DEV_KEY(ord, ix, e->tid | self), polling};
	return 1;
}

/* Event @e, after those before it in the file: kept to replay in time
 * order, what is a window behind the latest replayed. -EAGAIN (late)
 * if it comes after its time was replayed. */
static int absorb(struct replay *r, const struct dev *e)
{
	if (e->time < r->released) {
		r->late = 1;
		return -EAGAIN;
	}
	r->v[r->n++] = *e;
	if (e->time <= r->seen)
		return 0;
	r->seen = e->time;
	/* a window more than the last replay: replay what is a window
	 * behind the latest event (the buffer holds two) */
	if (r->window != UINT64_MAX && r->seen > r->window &&
	    r->seen - r->window >= r->released + r->window)
		return release(r, r->seen - r->window);
	return 0;
}

static int collect(void *ctx, const struct trace_event *e, size_t n)
{
	struct replay *r = ctx;

	if (LIB_GROW(r->v, r->cap, r->n + n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct dev v;
		int fresh, err = to_dev(&r->met, &e[i], &v, &fresh);

		if (err < 0)
			return err;
		if (!err)
			continue;
		if (fresh && (err = add_task(r, DEV_TASK(&v), e[i].task)))
			return err;
		if (!r->t[DEV_TASK(&v)].none && (err = absorb(r, &v)))
			return err;
	}
	return 0;
}

/* After the last event: each task's wait outlived the recording (a lost
 * wake, unless the end came too soon to say), or its life did. @m: the
 * tasks met, with the one each thread polls at the end (a task in a poll
 * then is not waiting) */
static int finish(struct replay *r, const struct tasks_met *m)
{
	struct delays *d = r->d;
	size_t it = 0;
	uint64_t tid, *v;
	int err = 0;

	while (lib_map_next(&m->polling, &it, &tid, &v))
		if (*v && *v <= r->nt)
			r->t[*v - 1].s.polled_at_end = 1;

	for (size_t i = 0; i < r->nt && !err; i++) {
		struct tstate *s = &r->t[i].s;
		uint64_t waited;
		int idle, sure;

		if (!s->seen)
			continue;
		if ((s->pending || s->spawned) && gap_between(r, s->last, d->end_time))
			s->pending = s->spawned = 0;
		waited = d->end_time > s->cur.wake ? d->end_time - s->cur.wake : 0;
		if (s->pending && waited >= LOST_MIN_NS &&
		    waited >= LOST_FACTOR * s->tmax)
			err = push(&d->lost, &d->nlost, &r->lcap, &s->cur);
		else if (s->pending)
			d->waiting_at_end++;
		/* waiting (not woken, not ended, not in a poll at the end):
		 * lost for sure with no waker left (the runtime counts its
		 * wakers), else guessed after DELAYS_IDLE_NS without a wake
		 * where the trace says when tasks end (its spawn, or any
		 * task's end; zero-code Tokio tells neither) */
		idle = !s->pending && !s->ended && !s->polled_at_end;
		sure = idle && s->dropped && !gap_between(r, s->dropped, d->end_time);
		if (!err && (sure || (idle && (s->born || r->ends) && s->polls &&
				      d->end_time >= s->last_poll + DELAYS_IDLE_NS &&
				      !gap_between(r, s->last_poll, d->end_time))))
			err = push(
				&d->idle, &d->nidle, &r->icap,
				&(struct delay){.task = r->t[i].id,
						.wake = sure ? s->dropped : s->last_poll,
						.begin = s->last_poll,
						.poller = s->last_poller,
						.poll = -1,
						.waker_poll = -1,
						.dropped = sure});
		if (!err && s->wakes >= DELAYS_SELF_MIN && s->self_wakes * 2 > s->wakes) {
			if (LIB_GROW(d->selfwoken, r->scap, d->nself + 1))
				err = -ENOMEM;
			else
				d->selfwoken[d->nself++] = (struct delays_self){
					r->t[i].id, s->wakes, s->self_wakes};
		}
		if (s->spawned && !err)
			err = push(&d->unended, &d->nunended, &r->ucap,
				   &(struct delay){.task = r->t[i].id,
						   .wake = s->spawned_at,
						   .waker = s->spawner,
						   .poll = -1,
						   .waker_poll = -1,
						   .spawn = 1});
	}
	return err;
}

/* Nothing replayed yet, to replay @window behind the latest event */
static void replay_reset(struct replay *r, uint64_t window)
{
	struct delays *d = r->d;

	for (size_t i = 0; i < r->nt; i++)
		lib_hist_release(&r->t[i].hist);
	r->nt = 0;
	met_release(&r->met);
	r->window = window;
	r->n = r->seen = r->released = r->ends = 0;
	r->late = 0;
	r->nextra = 0;
	if (d) {
		d->n = d->nlost = d->nunended = d->nidle = d->nself = 0;
		d->waiting_at_end = d->matched = d->counted = 0;
	}
}

/* One walk of the events, replayed @window behind the latest (UINT64_MAX:
 * all at the end); -EAGAIN if one came later than that. */
static int replay_walk(struct replay *r, uint64_t window)
{
	int err;

	replay_reset(r, window);
	err = trace__for_each_event(r->j->trace, collect, r);
	return r->late ? -EAGAIN : err;
}

/* The delays listed polls ended into the list, each once (uniq()). */
static int add_extra(struct replay *r)
{
	struct delays *d = r->d;

	for (size_t i = 0; i < r->nextra; i++)
		if (push(&d->v, &d->n, &r->vcap, &r->extra[i]))
			return -ENOMEM;
	return 0;
}

/* @v[0..n) sorted, each delay once (one a task's poll began): the new n */
static size_t uniq(struct delay *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!m || v[m - 1].task != v[i].task || v[m - 1].begin != v[i].begin ||
		    v[m - 1].poller != v[i].poller)
			v[m++] = v[i];
	return m;
}

/* A replay's delays, empty, as @keep asks */
static struct delays *delays_alloc(const struct delays_keep *keep)
{
	struct delays *d = calloc(1, sizeof(*d));

	if (d) {
		d->min_ns = keep ? keep->min_ns : 0;
		d->count_ns = keep ? keep->count_ns : 0;
	}
	return d;
}

/* After the last event, the delays of @r->d for join @j: the replay's
 * end, each task's delays in join.tasks order, the list sorted.
 * -EAGAIN where a task is not one of @j's (fed: then a walk of its own).
 * @m: the tasks met (fed: the feed's) */
static int conclude(struct replay *r, const struct tasks_met *m, const struct join *j)
{
	struct delays *d = r->d;
	uint64_t lo, hi;
	int err;

	r->j = j;
	r->gaps = j->gaps;
	r->ngaps = j->ngaps;
	d->join = j;
	join_seen(j, &lo, &hi);
	d->end_time = j->trace->counters.end_time ? j->trace->counters.end_time : hi;
	err = release(r, UINT64_MAX);
	if (!err)
		err = finish(r, m);
	if (!err && !(d->hist = calloc(j->ntasks + 1, sizeof(*d->hist))))
		err = -ENOMEM;
	for (size_t i = 0; i < r->nt && !err; i++) {
		const struct task_stat *ts;

		if (r->t[i].none)
			continue;
		if (!(ts = join__task(j, r->t[i].id))) {
			err = -EAGAIN;
			break;
		}
		d->hist[ts - j->tasks] = r->t[i].hist;
		lib_hist_init(&r->t[i].hist);
	}
	if (!err)
		err = add_extra(r);
	if (err)
		return err;
	/* (qsort wants an array even of none) */
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), delay_cmp);
	d->n = uniq(d->v, d->n);
	if (d->nlost)
		qsort(d->lost, d->nlost, sizeof(*d->lost), lost_cmp);
	if (d->nunended)
		qsort(d->unended, d->nunended, sizeof(*d->unended), lost_cmp);
	if (d->nidle)
		qsort(d->idle, d->nidle, sizeof(*d->idle), lost_cmp);
	if (d->nself)
		qsort(d->selfwoken, d->nself, sizeof(*d->selfwoken), self_cmp);
	return 0;
}

/* A replay's memory, its delays (unless handed out) too */
static void replay_free(struct replay *r)
{
	replay_reset(r, 0);
	free(r->t);
	free(r->v);
	free(r->extra);
	free(r->runs);
	free(r->heap);
	lib_map_release(&r->tail);
	join__cursor_free(r->cur);
	delays__free(r->d);
}

int delays__new(const struct join *j, const struct delays_keep *keep, struct delays **out)
{
	struct replay r = {.j = j, .keep = keep};
	int err = -ENOMEM;

	*out = NULL;
	r.d = delays_alloc(keep);
	r.cur = join__cursor_new(j);
	if (r.d && r.cur) {
		r.d->join = j;
		r.gaps = j->gaps;
		r.ngaps = j->ngaps;
		err = replay_walk(&r, REORDER_NS);
	}
	if (err == -EAGAIN)
		err = replay_walk(&r, UINT64_MAX);
	if (!err)
		err = conclude(&r, &r.met, j);
	if (!err) {
		*out = r.d;
		r.d = NULL;
	}
	replay_free(&r);
	return err;
}

/* ---- the delays, fed by a join's walk ----------------------------------- */

/*
 * The join's walk hands the feed each batch of events; the feed numbers
 * their tasks and passes them on, as struct dev, to a thread of its own
 * that replays them (the replay costs about what the join does: on two
 * cores the two overlap). At most FEED_QUEUE batches wait: the join waits
 * for room. The replay thread owns the replay until it is joined.
 */
#define FEED_QUEUE 4

struct feed_batch {
	struct feed_batch *next;
	struct join_gap *gaps; /* with a new join: its gaps, else NULL */
	size_t ngaps;
	struct fresh_task { /* the tasks met first in it */
		uint32_t ix;
		uint64_t id;
	} * fresh;
	size_t nfresh;
	size_t n;
	struct dev v[];
};

struct delays_feed {
	struct replay r;	 /* the replay thread's */
	struct delays_keep keep; /* r.keep */
	struct join_gap *gaps;	 /* the replay's copy of the join's */
	int err;		 /* the replay's: -EAGAIN late, or an error */
	int stop;		 /* (atomic) feed it no more: late, failed */
	/* the join's side */
	struct tasks_met met;
	const struct join *last_j;
	/* between them */
	pthread_t thread;
	int started, done;
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	struct feed_batch *head, **tail;
	size_t queued;
};

/* One batch, replayed on the replay thread */
static void feed_take(struct delays_feed *f, struct feed_batch *b)
{
	struct replay *r = &f->r;

	if (b->gaps) {
		free(f->gaps);
		f->gaps = b->gaps;
		r->gaps = f->gaps;
		r->ngaps = b->ngaps;
		b->gaps = NULL;
	}
	for (size_t i = 0; i < b->nfresh && !f->err; i++)
		f->err = add_task(r, b->fresh[i].ix, b->fresh[i].id);
	if (!f->err && LIB_GROW(r->v, r->cap, r->n + b->n))
		f->err = -ENOMEM;
	for (size_t i = 0; i < b->n && !f->err; i++)
		f->err = absorb(r, &b->v[i]);
	if (f->err)
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELAXED);
}

static void batch_free(struct feed_batch *b)
{
	if (b) {
		free(b->gaps);
		free(b->fresh);
		free(b);
	}
}

static void *feed_thread(void *arg)
{
	struct delays_feed *f = arg;

	for (;;) {
		struct feed_batch *b;

		pthread_mutex_lock(&f->lock);
		while (!f->head && !f->done)
			pthread_cond_wait(&f->more, &f->lock);
		b = f->head;
		if (b) {
			f->head = b->next;
			if (!f->head)
				f->tail = &f->head;
			f->queued--;
			pthread_cond_signal(&f->room);
		}
		pthread_mutex_unlock(&f->lock);
		if (!b)
			return NULL;
		feed_take(f, b);
		batch_free(b);
	}
}

/* Hand batch @b to the replay thread (started with the first); with
 * keep.each, replay it here */
static int feed_give(struct delays_feed *f, struct feed_batch *b)
{
	if (f->keep.each) {
		feed_take(f, b);
		batch_free(b);
		return f->err == -EAGAIN ? 0 : f->err;
	}
	if (!f->started) {
		if (pthread_create(&f->thread, NULL, feed_thread, f)) {
			/* no thread: the views walk (delays__from_feed()) */
			batch_free(b);
			f->err = -EAGAIN;
			f->stop = 1;
			return 0;
		}
		f->started = 1;
	}
	b->next = NULL;
	pthread_mutex_lock(&f->lock);
	while (f->queued >= FEED_QUEUE)
		pthread_cond_wait(&f->room, &f->lock);
	*f->tail = b;
	f->tail = &b->next;
	f->queued++;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* The replay thread, done with every batch */
static void feed_stop(struct delays_feed *f)
{
	if (!f->started)
		return;
	pthread_mutex_lock(&f->lock);
	f->done = 1;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	f->started = f->done = 0;
}

/* How far behind the latest event the feed replays */
static uint64_t feed_window(const struct delays_feed *f)
{
	return f->keep.at_end ? UINT64_MAX : REORDER_NS;
}

int delays_feed__new(const struct delays_keep *keep, struct delays_feed **out)
{
	struct delays_feed *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->keep = *keep;
	f->keep.also = NULL;
	f->keep.nalso = 0;
	f->r.keep = &f->keep;
	f->r.fed = 1;
	f->r.d = delays_alloc(keep);
	f->tail = &f->head;
	if (!f->r.d || pthread_mutex_init(&f->lock, NULL)) {
		delays__free(f->r.d);
		free(f);
		return -ENOMEM;
	}
	pthread_cond_init(&f->more, NULL);
	pthread_cond_init(&f->room, NULL);
	replay_reset(&f->r, feed_window(f));
	*out = f;
	return 0;
}

uint64_t delays_feed__replayed(const struct delays_feed *f)
{
	return f->r.released;
}

int delays_feed__late(const struct delays_feed *f)
{
	return f->err == -EAGAIN;
}

int delays_feed__events(void *ctx, const struct join *j, const struct trace_event *e,
			size_t n)
{
	struct delays_feed *f = ctx;
	struct feed_batch *b;
	size_t cap = 0;
	int err = 0;

	/* the join starts over: the replay thread done with the walk
	 * before, all again (the next batch starts it anew) */
	if (!e) {
		feed_stop(f);
		met_release(&f->met);
		f->last_j = NULL;
		replay_reset(&f->r, feed_window(f));
		f->err = f->stop = 0;
		return 0;
	}
	/* not if the replay cannot go on (late, or failed:
	 * delays__from_feed() says) */
	if (__atomic_load_n(&f->stop, __ATOMIC_RELAXED))
		return 0;
	b = malloc(sizeof(*b) + n * sizeof(b->v[0]));
	if (!b)
		return -ENOMEM;
	memset(b, 0, sizeof(*b));
	if (j != f->last_j) {
		/* a new join: its gaps, a copy the replay owns */
		b->gaps = malloc((j->ngaps + 1) * sizeof(*b->gaps));
		if (!b->gaps) {
			batch_free(b);
			return -ENOMEM;
		}
		if (j->ngaps) /* (j->gaps: NULL without any) */
			memcpy(b->gaps, j->gaps, j->ngaps * sizeof(*b->gaps));
		b->ngaps = j->ngaps;
		f->last_j = j;
	}
	for (size_t i = 0; i < n && err >= 0; i++) {
		int fresh;

		err = to_dev(&f->met, &e[i], &b->v[b->n], &fresh);
		if (err > 0 && fresh && LIB_GROW(b->fresh, cap, b->nfresh + 1))
			err = -ENOMEM;
		else if (err > 0 && fresh)
			b->fresh[b->nfresh++] =
				(struct fresh_task){DEV_TASK(&b->v[b->n]), e[i].task};
		b->n += err > 0;
	}
	if (err < 0) {
		batch_free(b);
		return err;
	}
	return feed_give(f, b);
}

int delays__from_feed(struct delays_feed *f, const struct join *j,
		      const struct delays_keep *keep, struct delays **out)
{
	const struct delays_keep *k = &f->keep;
	int err;

	*out = NULL;
	feed_stop(f);
	/* what the feed could not know: a late event, the tasks a view
	 * chose, polls it lists, poll ids (a join listing them all) */
	if (f->err && f->err != -EAGAIN)
		return f->err;
	if (!f->r.d || f->err || (j->sel.on && !k->each) || keep->listed ||
	    keep->stats_only != k->stats_only || keep->min_ns != k->min_ns ||
	    keep->top != k->top || keep->count_ns != k->count_ns ||
	    (j->nlisted >= j->npolls && !k->each))
		return -EAGAIN;
	err = conclude(&f->r, &f->met, j);
	if (!err) {
		*out = f->r.d;
		f->r.d = NULL;
	}
	return err;
}

void delays_feed__free(struct delays_feed *f)
{
	if (!f)
		return;
	feed_stop(f);
	while (f->head) {
		struct feed_batch *b = f->head;

		f->head = b->next;
		batch_free(b);
	}
	met_release(&f->met);
	replay_free(&f->r);
	free(f->gaps);
	pthread_cond_destroy(&f->more);
	pthread_cond_destroy(&f->room);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int delays__list_polls(struct delays *d, struct join *j, const struct delays_keep *keep)
{
	size_t k = 0, m = 0, n = keep ? keep->top : 0, na = keep ? keep->nalso : 0;
	/* the delays whose windows are listed: the first n (0: all), none
	 * of those listed polls ended (keep->listed) alone: theirs are */
	size_t nd = keep && keep->listed && !n ? 0 : d->n;
	struct join_window *w;
	int err;

	if (!j->polls || j->nlisted == j->npolls)
		return 0; /* none listed, or every one */
	if (!nd && !na)
		return 0;
	w = malloc((2 * d->n + na + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		w[k++] = keep->also[i];
	for (size_t i = 0; i < nd && (!n || m < n); i++) {
		const struct delay *x = &d->v[i];

		if (!join__kept(j, join__task(j, x->task)))
			continue;
		m++;
		w[k++] = (struct join_window){x->poller, x->wake, x->begin};
		w[k++] = (struct join_window){x->waker, x->wake, x->begin};
	}
	err = join__list_more(j, w, k);
	free(w);
	for (size_t i = 0; !err && i < d->n; i++) {
		struct delay *x = &d->v[i];
		const struct poll *p = join__poll_at(j, x->waker, x->wake);

		x->waker_poll = poll_id(p);
		p = join__poll_at(j, x->poller, x->begin);
		x->poll = begun_by(p, x->task, x->begin) ? (int32_t)p->id : -1;
	}
	return err;
}

void delays__free(struct delays *d)
{
	if (!d)
		return;
	for (size_t i = 0; d->hist && i < d->join->ntasks; i++)
		lib_hist_release(&d->hist[i]);
	free(d->hist);
	free(d->v);
	free(d->lost);
	free(d->unended);
	free(d->idle);
	free(d->selfwoken);
	free(d);
}

static void stats_of(struct lib_hist *h, struct delay_stats *s)
{
	s->n = h->n;
	s->max = h->max;
	s->p99 = lib_hist_quantile(h, 99, 100);
	s->p50 = lib_hist_quantile(h, 50, 100);
}

int delays__task_stats(const struct delays *d, const uint32_t *group_of, size_t ngroups,
		       struct delay_stats *st)
{
	const struct join *j = d->join;
	struct lib_hist *g;
	size_t i;
	int err = 0;

	memset(st, 0, ngroups * sizeof(*st));
	if (!group_of) {
		for (i = 0; i < j->ntasks && i < ngroups; i++)
			stats_of(&d->hist[i], &st[i]);
		return 0;
	}
	g = calloc(ngroups + 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (i = 0; i < j->ntasks && !err; i++)
		if (group_of[i] < ngroups)
			err = lib_hist_merge(&g[group_of[i]], &d->hist[i]);
	for (i = 0; i < ngroups; i++) {
		if (!err)
			stats_of(&g[i], &st[i]);
		lib_hist_release(&g[i]);
	}
	free(g);
	return err;
}

/* ---- what a thread did -------------------------------------------------- */

static void add_cause(struct delay_cause *v, size_t *n, size_t max, size_t *found,
		      const struct delay_cause *c)
{
	size_t i;

	if (!c->ns)
		return;
	for (i = 0; i < *n; i++) {
		struct delay_cause *x = &v[i];

		if (x->kind == c->kind && x->in_poll == c->in_poll &&
		    x->task == c->task && x->frame == c->frame && x->under == c->under &&
		    x->holder == c->holder) {
			x->ns += c->ns;
			return;
		}
	}
	(*found)++;
	if (*n < max)
		v[(*n)++] = *c;
}

static int cause_cmp(const void *a, const void *b)
{
	const struct delay_cause *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->kind - y->kind;
}

static uint64_t clip(uint64_t a, uint64_t b, uint64_t from, uint64_t to)
{
	if (a < from)
		a = from;
	if (b > to)
		b = to;
	return b > a ? b - a : 0;
}

#define MAX_TRACKED 64 /* polls and causes looked at per interval */

size_t delays__causes(const struct offcpu *oc, uint32_t tid, uint64_t from, uint64_t to,
		      struct delay_cause *out, size_t max)
{
	const struct join *j = oc->join;
	const struct trace *t = oc->trace;
	struct delay_cause v[MAX_TRACKED], c;
	int32_t pid[MAX_TRACKED];
	uint64_t poff[MAX_TRACKED], pover[MAX_TRACKED], best[MAX_TRACKED] = {0};
	uint64_t idle_runq = 0, used = 0, parked;
	const uint32_t *ids = NULL, *sw = NULL;
	size_t n = 0, found = 0, np = 0, i, k, lo, hi, m;

	if (to <= from)
		return 0;
	/* polls of the thread in [from, to]; ends are in start order too */
	m = join__thread_polls(j, tid, &ids);
	for (lo = 0, hi = m; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->polls[ids[mid]].end < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k < m && j->polls[ids[k]].start <= to && np < MAX_TRACKED; k++) {
		const struct poll *p = &j->polls[ids[k]];

		pid[np] = (int32_t)p->id;
		pover[np] = clip(p->start, p->end, from, to);
		poff[np] = 0;
		np++;
	}
	/* off-CPU intervals of the thread: blocked and run-queue parts */
	m = offcpu__thread_switches(oc, tid, &sw);
	for (lo = 0, hi = m; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		const struct trace_switch *s = &t->switches[sw[mid]];
		uint64_t in = s->time_in ? s->time_in : oc->end_time;

		if (in < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k < m && t->switches[sw[k]].time <= to; k++) {
		const struct trace_switch *s = &t->switches[sw[k]];
		const struct offcpu_switch *o = &oc->sw[sw[k]];
		/* clipped to its poll, as the off-CPU view counts it: an
		 * interval past its poll's end (records between lost) would
		 * count the next polls' time twice */
		uint64_t in = s->time + o->ns;
		uint64_t r = s->preempted ? s->time : s->runnable;
		uint64_t blocked, runq;

		if (!r || r > in)
			r = in;
		blocked = clip(s->time, r, from, to);
		runq = clip(r, in, from, to);
		memset(&c, 0, sizeof(c));
		c.poll = -1;
		c.frame = c.under = UINT32_MAX;
		if (o->where == OFFCPU_IN_POLL) {
			c.in_poll = 1;
			c.task = join__poll(j, (uint32_t)o->poll)->task;
			for (i = 0; i < np; i++)
				if (pid[i] == o->poll)
					poff[i] += blocked + runq;
		}
		if (o->where != OFFCPU_IDLE) {
			/* parked blocking is waiting for work: in parked */
			c.kind = CAUSE_BLOCKED;
			c.ns = blocked;
			analysis_site(t, s->stack, oc->raw_leaf, 0, &c.frame, &c.under);
			add_cause(v, &n, MAX_TRACKED, &found, &c);
			if (o->where == OFFCPU_NO_POLL)
				used += blocked;
		} else {
			idle_runq += runq;
		}
		c.kind = CAUSE_RUNQ;
		c.frame = c.under = UINT32_MAX;
		{
			struct trace_hold h[TRACE_MAX_HOLDS];
			size_t nh = analysis_switch_holds(t, s, runq, h);

			for (size_t q = 0; q < nh; q++) {
				c.ns = h[q].ns;
				c.holder = h[q].tid;
				add_cause(v, &n, MAX_TRACKED, &found, &c);
			}
		}
		if (o->where != OFFCPU_IN_POLL)
			used += runq;
	}
	/* on-CPU in polls: each poll's time less its off-CPU time; a task's
	 * entry keeps the poll with the most of it (for its hot stack) */
	for (i = 0; i < np; i++) {
		const struct poll *p = join__poll(j, (uint32_t)pid[i]);
		uint64_t ns = pover[i] > poff[i] ? pover[i] - poff[i] : 0;
		size_t at;

		used += pover[i];
		for (at = 0; at < n; at++)
			if (v[at].kind == CAUSE_POLL && v[at].task == p->task)
				break;
		if (at == n) {
			memset(&c, 0, sizeof(c));
			c.kind = CAUSE_POLL;
			c.task = p->task;
			c.poll = pid[i];
			c.frame = c.under = UINT32_MAX;
			c.ns = ns;
			if (n < MAX_TRACKED)
				best[n] = ns;
			add_cause(v, &n, MAX_TRACKED, &found, &c);
			continue;
		}
		v[at].ns += ns;
		if (ns > best[at]) {
			best[at] = ns;
			v[at].poll = pid[i];
		}
	}
	parked = offcpu__parked_ns(oc, tid, from, to);
	parked = parked > idle_runq ? parked - idle_runq : 0;
	memset(&c, 0, sizeof(c));
	c.frame = c.under = UINT32_MAX;
	c.poll = -1;
	c.kind = CAUSE_PARKED;
	c.ns = parked;
	add_cause(v, &n, MAX_TRACKED, &found, &c);
	used += parked;
	c.kind = CAUSE_RUNNING;
	c.ns = to - from > used ? to - from - used : 0;
	add_cause(v, &n, MAX_TRACKED, &found, &c);
	qsort(v, n, sizeof(*v), cause_cmp);
	memcpy(out, v, (n < max ? n : max) * sizeof(*v));
	return found;
}

/* ---- leaks ---------------------------------------------------------------- */

struct leak_ix {
	const char *name;
	const struct delay *d;
};

static int leak_cmp(const void *a, const void *b)
{
	const struct leak_ix *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->d->wake < y->d->wake ? -1 : x->d->wake > y->d->wake;
}

/* Does group @v (@n of one name, by spawn time) leak: at least
 * DELAYS_LEAK_MIN, spawned all along the recording [@from, @to) (each
 * quarter of it holds an eighth of them)? */
static int leaks(const struct leak_ix *v, size_t n, uint64_t from, uint64_t to)
{
	size_t q[4] = {0};

	if (n < DELAYS_LEAK_MIN || to <= from)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = v[i].d->wake > from ? v[i].d->wake - from : 0;
		size_t k = (size_t)((double)at / (double)(to - from) * 4);

		q[k > 3 ? 3 : k]++;
	}
	for (size_t k = 0; k < 4; k++)
		if (q[k] * 8 < n)
			return 0;
	return 1;
}

size_t delays__leaks(const struct delays *d, struct delays_leak *out, size_t max)
{
	const struct join *j = d->join;
	struct leak_ix *v;
	size_t n = 0, found = 0;

	if (!d->nunended || !j)
		return 0;
	v = malloc(d->nunended * sizeof(*v));
	if (!v)
		return 0;
	for (size_t i = 0; i < d->nunended; i++) {
		const struct task_stat *ts = join__task(j, d->unended[i].task);

		if (ts && !join__kept(j, ts))
			continue;
		v[n++] = (struct leak_ix){ts && ts->name ? ts->name : "", &d->unended[i]};
	}
	qsort(v, n, sizeof(*v), leak_cmp);
	for (size_t i = 0, e; i < n; i = e) {
		for (e = i + 1; e < n && !strcmp(v[e].name, v[i].name); e++)
			;
		if (!leaks(v + i, e - i, j->start_time, d->end_time))
			continue;
		if (found < max)
			out[found] = (struct delays_leak){v[i].name, v[i].d->task, e - i,
							  v[i].d->wake, v[e - 1].d->wake};
		found++;
	}
	free(v);
	return found;
}
