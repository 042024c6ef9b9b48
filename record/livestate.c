// SPDX-License-Identifier: MIT
/*
 * livestate.c - the runtime's open polls, parks, pending wakes and unpolled
 * spawns, kept from the drained events (livestate.h).
 *
 * Two tables, of threads and of tasks: their entries in an array, found
 * by id through a lib_map (whose deletion leaves no tombstones, so a table
 * that sees millions of tasks come and go stays as small as what is
 * open); a deleted entry's place is reused. One lookup per event on the
 * drain path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/map.h"
#include "record/livestate.h"

struct slot {
	uint64_t key;	     /* 0: free (tids and task ids are > 0); the
			      * next free one in @a */
	uint64_t a, b;	     /* thread: poll begin, park time;
			      * task: wake time (or, dropped, the time its
			      * last waker went), spawn time (pending) */
	uint64_t task;	     /* thread: the task in its poll;
			      * task: its last poll's begin or its end */
	uint32_t wtid, stid; /* task: who woke it (dropped its waker), who
			      * spawned it */
	uint16_t ended;	     /* task: it ended (at @task) */
	uint16_t dropped;    /* task: @a is when its last waker went, no
			      * wake (TRACE_EV_WAKER_DROP): open until one */
};

#define NO_SLOT UINT64_MAX

struct table {
	struct lib_map ix; /* key -> index in v */
	struct slot *v;
	size_t cap, used, n; /* v's room, its slots used once, entries */
	uint64_t free;	     /* the first free slot below used, or NO_SLOT */
	size_t max;	     /* entries at most (livestate__set_max) */
	int full;	     /* at max with nothing left to purge: new
			      * entries are refused until the next
			      * livestate__purge() */
	uint64_t refused;
	struct slot *last; /* the slot found last (events come a ring,
			    * one thread, at a time): NULL when the
			    * entries move */
};

struct livestate {
	struct table threads, tasks;
	uint64_t poll_ns, delay_ns;
	struct livestate_hit hit;
	struct livestate_summary sum; /* since livestate__summary() */
	struct trace_event *out;
	size_t out_cap;
};

static struct slot *find_slow(struct table *t, uint64_t key)
{
	const uint64_t *i;

	/* 0 marks a free slot: no entry has it (a ring may say it) */
	if (!key || !(i = lib_map_find(&t->ix, key)))
		return NULL;
	return t->last = &t->v[*i];
}

/* (the slot found last first: a ring's events come one thread's, and
 * mostly one task's, at a time) */
static inline struct slot *find(struct table *t, uint64_t key)
{
	if (t->last && t->last->key == key)
		return t->last;
	return find_slow(t, key);
}

static void del(struct table *t, struct slot *s);
static void purge(struct table *t, int (*old)(const struct slot *, uint64_t),
		  uint64_t before);
static int thread_idle(const struct slot *s, uint64_t before);

/* A new slot for @key, not in @t: empty but for its key; NULL on -ENOMEM,
 * or when @t is at its max even after forgetting every entry with nothing
 * open (counted in refused). */
static struct slot *add(struct table *t, uint64_t key)
{
	size_t i;
	uint64_t *ix;

	/* A runtime that never ends its tasks and loses their wakes, or a
	 * target that floods wakes of ever new tasks: stop growing rather
	 * than without bound. What is over first goes (a late wake of such
	 * a task then reads as pending in the next STATE), then new
	 * entries are refused (their state is missed), a purge (one walk of
	 * the table) at most once until the next livestate__purge(). */
	if (t->n >= t->max && !t->full) {
		purge(t, thread_idle, 0);
		t->full = t->n >= t->max - t->max / 4;
	}
	if (t->n >= t->max) {
		t->refused++;
		return NULL;
	}
	if (t->free == NO_SLOT) {
		struct slot *was = t->v;

		if (LIB_GROW(t->v, t->cap, t->used + 1))
			return NULL;
		if (t->v != was)
			t->last = NULL;
		i = t->used;
	} else {
		i = (size_t)t->free;
	}
	ix = lib_map_get(&t->ix, key, NULL);
	if (!ix)
		return NULL;
	*ix = i;
	if (i == t->used)
		t->used++;
	else
		t->free = t->v[i].a;
	t->v[i] = (struct slot){.key = key};
	t->n++;
	return t->last = &t->v[i];
}

/* The slot of @key, added if new. */
static inline struct slot *get(struct table *t, uint64_t key)
{
	struct slot *s = find(t, key);

	return s ? s : add(t, key);
}

/* Delete @s: its place goes on the free list. */
static void del(struct table *t, struct slot *s)
{
	if (t->last == s)
		t->last = NULL;
	lib_map_del(&t->ix, s->key);
	*s = (struct slot){.a = t->free};
	t->free = (uint64_t)(s - t->v);
	t->n--;
}

static void table_release(struct table *t)
{
	lib_map_release(&t->ix);
	free(t->v);
}

int livestate__new(struct livestate **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->threads.free = (*out)->tasks.free = NO_SLOT;
	livestate__set_max(*out, LIVESTATE_MAX);
	return 0;
}

void livestate__set_max(struct livestate *ls, size_t max)
{
	ls->threads.max = ls->tasks.max = max ? max : 1;
}

uint64_t livestate__refused(const struct livestate *ls)
{
	return ls->threads.refused + ls->tasks.refused;
}

void livestate__free(struct livestate *ls)
{
	if (!ls)
		return;
	table_release(&ls->threads);
	table_release(&ls->tasks);
	free(ls->out);
	free(ls);
}

void livestate__set_limits(struct livestate *ls, uint64_t poll_ns, uint64_t delay_ns)
{
	ls->poll_ns = poll_ns;
	ls->delay_ns = delay_ns;
}

static void note_hit(struct livestate *ls, int kind, const struct trace_event *e,
		     uint64_t ns)
{
	if (ls->hit.kind)
		return; /* the first since the last look */
	ls->hit = (struct livestate_hit){
		.kind = kind, .task = e->task, .tid = e->tid, .time = e->time, .ns = ns};
}

/* A poll @ns long ended at @e: counted, and a hit past the limit. */
static void poll_ended(struct livestate *ls, const struct trace_event *e, uint64_t ns)
{
	ls->sum.polls++;
	if (ns > ls->sum.max_poll_ns)
		ls->sum.max_poll_ns = ns;
	if (ls->poll_ns && ns > ls->poll_ns)
		note_hit(ls, LIVESTATE_POLL, e, ns);
}

/* Task @s (not ended) is polled, @e its BEGIN: the wake that made it
 * runnable, if any, is taken (a delay past the limit is a hit), a spawn
 * is over, and this is its latest poll. */
static void task_polled(struct livestate *ls, struct slot *s, const struct trace_event *e)
{
	if (s->dropped && s->a <= e->time) { /* polled after all */
		s->dropped = 0;
		s->a = 0;
	}
	if (s->a && e->time > s->a) {
		uint64_t d = e->time - s->a;

		if (d > ls->sum.max_delay_ns)
			ls->sum.max_delay_ns = d;
		if (ls->delay_ns && d > ls->delay_ns)
			note_hit(ls, LIVESTATE_DELAY, e, d);
	}
	/* polled: no wake pending from before, spawned long ago */
	if (s->a <= e->time)
		s->a = 0;
	s->b = 0;
	if (e->time > s->task)
		s->task = e->time;
}

static int feed_one(struct livestate *ls, const struct trace_event *e)
{
	struct slot *s;

	switch (e->type) {
	case TRACE_EV_POLL_BEGIN:
		if (!e->task || !e->tid)
			return 0;
		s = get(&ls->tasks, e->task);
		if (!s)
			return -ENOMEM;
		if (s->ended)
			return 0;
		task_polled(ls, s, e);
		s = get(&ls->threads, e->tid);
		if (!s)
			return -ENOMEM;
		s->a = e->time;
		s->task = e->task;
		return 0;
	case TRACE_EV_POLL_END:
		s = find(&ls->threads, e->tid);
		if (!s || !s->a)
			return 0;
		poll_ended(ls, e, e->time > s->a ? e->time - s->a : 0);
		s->a = 0;
		s->task = 0;
		return 0;
	case TRACE_EV_PARK:
	case TRACE_EV_UNPARK:
		if (!e->tid)
			return 0;
		s = e->type == TRACE_EV_PARK ? get(&ls->threads, e->tid)
					     : find(&ls->threads, e->tid);
		if (!s)
			return e->type == TRACE_EV_PARK ? -ENOMEM : 0;
		s->b = e->type == TRACE_EV_PARK ? e->time : 0;
		return 0;
	case TRACE_EV_THREAD_STOP:
		s = find(&ls->threads, e->tid);
		if (s)
			del(&ls->threads, s);
		return 0;
	case TRACE_EV_WAKE:
	case TRACE_EV_SPAWN:
		/* Rings are drained one after another: a task's spawn or wake
		 * (another thread's ring) can come after its poll or its end.
		 * What came before its last poll or its end is not open. */
		if (!e->task)
			return 0;
		s = get(&ls->tasks, e->task);
		if (!s)
			return -ENOMEM;
		if (s->ended || e->time <= s->task)
			return 0;
		if (e->type == TRACE_EV_WAKE) {
			/* the first wake counts, as in delays; one after its
			 * waker went, too */
			if (!s->a || (s->dropped && e->time >= s->a)) {
				s->a = e->time;
				s->wtid = e->tid;
				s->dropped = 0;
			}
		} else {
			s->b = e->time;
			s->stid = e->tid;
		}
		return 0;
	case TRACE_EV_WAKER_DROP:
		/* pending (not woken since its last poll): open until a wake,
		 * a poll or its end */
		if (!e->task)
			return 0;
		s = get(&ls->tasks, e->task);
		if (!s)
			return -ENOMEM;
		if (s->ended || s->a || e->time < s->task)
			return 0;
		s->a = e->time;
		s->wtid = e->tid;
		s->dropped = 1;
		return 0;
	case TRACE_EV_TASK_END:
		if (!e->task)
			return 0;
		s = get(&ls->tasks, e->task);
		if (!s)
			return -ENOMEM;
		*s = (struct slot){.key = e->task, .task = e->time, .ended = 1};
		return 0;
	default:
		return 0;
	}
}

/* A whole poll @x, @len long (trace_rec_spread()): what its BEGIN, (WAKE,)
 * END do, with one lookup of its task and none kept of its thread (a poll
 * that begins and ends leaves its thread with nothing open). Anything
 * unusual (zero ids, an ended task, a length of 0) goes the events' way. */
static int feed_poll(struct livestate *ls, const struct trace_event *x, uint64_t len)
{
	struct trace_event e[3];
	struct slot *s = NULL;
	size_t i, k;
	int err = 0;

	if (x->task && x->tid && len && len < x->time)
		s = get(&ls->tasks, x->task);
	if (s && !s->ended) {
		e[0] = (struct trace_event){.time = x->time - len,
					    .task = x->task,
					    .tid = x->tid,
					    .type = TRACE_EV_POLL_BEGIN};
		task_polled(ls, s, &e[0]);
		/* WAKE at its end: runnable again, pending until its next poll */
		if (x->type == TRACE_REC_POLL_WOKEN && x->time > s->task &&
		    (!s->a || s->dropped)) {
			s->dropped = 0;
			s->a = x->time;
			s->wtid = x->tid;
		}
		/* END */
		poll_ended(ls, x, len);
		s = find(&ls->threads, x->tid);
		if (s) {
			s->a = 0;
			s->task = 0;
		}
		return 0;
	}
	k = trace_rec_spread(*x, len, e);
	for (i = 0; i < k; i++) {
		int r = feed_one(ls, &e[i]);

		if (r && !err)
			err = r;
	}
	return err;
}

int livestate__feed(struct livestate *ls, const struct trace_event *rec,
		    const uint64_t *len, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		int r = trace_rec_events(rec[i].type) > 1
				? feed_poll(ls, &rec[i], len ? len[i] : 0)
				: feed_one(ls, &rec[i]);

		if (r && !err)
			err = r;
	}
	return err;
}

void livestate__summary(struct livestate *ls, uint64_t now, struct livestate_summary *s)
{
	*s = ls->sum;
	memset(&ls->sum, 0, sizeof(ls->sum));
	/* what is still open counts as long as it has lasted: a worker stuck
	 * in one poll, a task woken and not polled, all the segment long */
	for (size_t i = 0; i < ls->threads.used; i++) {
		const struct slot *t = &ls->threads.v[i];

		if (t->key && t->a && now > t->a && now - t->a > s->max_poll_ns)
			s->max_poll_ns = now - t->a;
	}
	for (size_t i = 0; i < ls->tasks.used; i++) {
		const struct slot *k = &ls->tasks.v[i];

		if (k->key && !k->ended && !k->dropped && k->a && now > k->a &&
		    now - k->a > s->max_delay_ns)
			s->max_delay_ns = now - k->a;
	}
}

int livestate__hit(struct livestate *ls, struct livestate_hit *hit)
{
	if (!ls->hit.kind)
		return 0;
	*hit = ls->hit;
	ls->hit.kind = 0;
	return 1;
}

/* Delete the entries of @t with nothing open that @old says may go. */
static void purge(struct table *t, int (*old)(const struct slot *, uint64_t),
		  uint64_t before)
{
	for (size_t i = 0; i < t->used; i++) {
		struct slot *s = &t->v[i];

		if (s->key && !s->a && !s->b && old(s, before))
			del(t, s);
	}
}

static int task_old(const struct slot *s, uint64_t before)
{
	return s->task < before;
}

static int thread_idle(const struct slot *s, uint64_t before)
{
	return 1;
}

void livestate__purge(struct livestate *ls, uint64_t before)
{
	purge(&ls->tasks, task_old, before);
	/* threads between polls, not parked: their next poll adds them */
	purge(&ls->threads, thread_idle, before);
	ls->tasks.full = ls->threads.full = 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct trace_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

size_t livestate__open(struct livestate *ls, const struct trace_event **ev)
{
	size_t n = 0, need = 2 * (ls->threads.n + ls->tasks.n);

	*ev = NULL;
	if (LIB_GROW(ls->out, ls->out_cap, need))
		return 0;
	for (size_t i = 0; i < ls->threads.used; i++) {
		const struct slot *s = &ls->threads.v[i];

		if (!s->key)
			continue;
		if (s->a)
			ls->out[n++] = (struct trace_event){.time = s->a,
							    .task = s->task,
							    .tid = (uint32_t)s->key,
							    .type = TRACE_EV_POLL_BEGIN};
		if (s->b)
			ls->out[n++] = (struct trace_event){.time = s->b,
							    .tid = (uint32_t)s->key,
							    .type = TRACE_EV_PARK};
	}
	for (size_t i = 0; i < ls->tasks.used; i++) {
		const struct slot *s = &ls->tasks.v[i];

		if (!s->key || s->ended)
			continue;
		if (s->b)
			ls->out[n++] = (struct trace_event){.time = s->b,
							    .task = s->key,
							    .tid = s->stid,
							    .type = TRACE_EV_SPAWN};
		if (s->a)
			ls->out[n++] = (struct trace_event){
				.time = s->a,
				.task = s->key,
				.tid = s->wtid,
				.type = s->dropped ? TRACE_EV_WAKER_DROP : TRACE_EV_WAKE};
	}
	if (n) /* (ls->out is NULL while nothing was ever open) */
		qsort(ls->out, n, sizeof(*ls->out), ev_cmp);
	*ev = ls->out;
	return n;
}
