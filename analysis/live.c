// SPDX-License-Identifier: MIT
/*
 * live.c - the running process's tasks as they are now (`d9prof top`): a
 * trace writer's tap (trace.h) feeds what the recorder writes, as it
 * writes it, and a snapshot each interval gives per task, task name or
 * thread what that interval held. One lock: the recorder's thread feeds,
 * the viewer's thread snapshots.
 *
 * Records come per thread in time order, but CPU samples come from other
 * rings than the runtime's records, and the shim writes a poll only at
 * its end: a sample is put in the poll of its thread that holds it, from
 * the thread's polls of the last LIVE_PEND_NS (at most LIVE_HIST of
 * them), or the one in progress (from the
 * recorder's look at the shim's ring headers, live__polling()); one that
 * no poll holds yet waits in its thread (at most LIVE_PEND) until one
 * does, or until a snapshot finds it older than LIVE_PEND_NS: outside
 * polls then.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/live.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/text.h"

#define LIVE_HIST	 4096	       /* recent polls kept per thread, at most */
#define LIVE_PEND	 512	       /* samples waiting for their poll, per thread */
#define LIVE_PEND_ENTERS 8	       /* span enters waiting for theirs */
#define LIVE_SPANS	 16384	       /* open spans kept (the rest: no label) */
#define LIVE_PEND_NS	 2000000000ULL /* ... at most this long */
#define LIVE_PEND_SW	 128	       /* off-CPU intervals waiting, per thread */
#define LIVE_PARKS	 16	       /* parks remembered, per thread */
#define LIVE_MAX	 65536	       /* threads, and tasks, at most */
#define LIVE_BUCKETS	 LIVE_DELAY_BUCKETS /* delay histogram (bucket()) */

struct lpoll {
	uint64_t start, end, task;
};

/* What waits in a thread for the poll that holds it, in arrival order:
 * CPU samples (with their callchains while a task's stacks are wanted)
 * at pend[p0 .. npend), off-CPU intervals at sw[s0 .. nsw). */
struct lwait {
	struct {
		uint64_t time;
		uint32_t weight, n;
		uint64_t *ips; /* NULL unless stacks are wanted */
	} pend[LIVE_PEND];
	unsigned int p0, npend;
	struct {
		uint64_t time, blocked, runq;
	} sw[LIVE_PEND_SW];
	unsigned int s0, nsw;
	struct {
		uint64_t time, span;
	} ent[LIVE_PEND_ENTERS]; /* spans entered, their poll not known yet */
	unsigned int e0, nent;
};

/* A span of the application open now: its name and fields, as a task's
 * row shows it ("request req=7 route=/checkout") */
struct lspan {
	uint64_t id, parent;
	char label[64];
};

struct lthread {
	uint32_t tid;
	uint64_t task, begin; /* the poll in progress (task 0: none) */
	int from_header;      /* ... known from the ring header only */
	uint64_t open_seen;   /* ... known to run up to here: a sample
			       * later than that may be the next poll's */
	uint64_t park;	      /* parked since (0: not) */
	struct {
		uint64_t from, to;
	} parks[LIVE_PARKS]; /* its last parks ended, a ring at pk */
	unsigned int pk;
	uint64_t known_to;  /* its polls up to here are all written: the
			     * latest poll, park or thread record (not a
			     * wake or spawn, which a poll may hold) */
	int idle;	    /* snapshots in a row with nothing of it */
	struct lpoll *hist; /* a ring, oldest at hpos once full */
	unsigned int nhist, hpos, hcap;
	struct lwait *w; /* what waits for its poll; made when first needed */
	/* this interval */
	uint64_t poll_ns, parked_ns, blocked_ns, runq_ns, samples, samples_in;
	uint64_t polls, polls_ns, max_poll; /* the polls that ended in it */
	int seen; /* a record this interval, or something open */
};

struct ltask {
	uint64_t id;
	char name[64];
	uint64_t wake;	    /* woken, not polled since (0: no) */
	uint64_t begun;	    /* its latest poll's begin: a wake before it
			     * drained late (from another thread's ring)
			     * is over */
	uint32_t polled_on; /* the thread polling it now, 0 none */
	int ended, born;    /* born: its spawn seen */
	uint64_t last_end;  /* its last poll's end */
	uint64_t dropped;   /* its last waker dropped then, pending (0: no) */
	/* its life: met first (its spawn, or the first event seen of it),
	 * its end; its polls, their time, and its wake-to-poll time */
	uint64_t first, end_at, polls_life, busy, sched;
	char span[64]; /* the span its polls entered last (its request) */
	int gone;      /* (snap_forget()) */
	/* this interval */
	uint64_t polls, poll_ns, max_poll, samples, blocked_ns, runq_ns;
	uint32_t delays[LIVE_BUCKETS];
	uint64_t ndelays;
	uint64_t wakes, self_wakes; /* ... by the thread polling it */
};

/* A name's live tasks at the last snapshots, newest first (the leak's) */
struct lname {
	char name[64];
	uint32_t alive[LIVE_LEAK_SNAPS + 1];
	int seen; /* at this snapshot */
};
#define LIVE_NAMES	 256
#define LIVE_WAKERS_KEPT 32

struct live {
	pthread_mutex_t lock;
	struct trace_tap tap;
	struct lib_map thread_ix, task_ix; /* id -> index + 1 */
	struct lthread *th;
	size_t nth, th_cap;
	struct ltask *tk;
	size_t ntk, tk_cap;
	uint64_t last; /* the last snapshot, ns */
	int have_last; /* ... there was one */
	uint64_t refused, samples, inside, outside;
	struct live_lost lost; /* live__set_lost() */
	int auto_names;	       /* GROUP_AUTO chose by name (for good) */
	double period_ns;
	int off;	  /* live__enable(0): the tap drops everything */
	double lean_unit; /* a lean recording (meta): ns per unit of its
			   * sums' buckets; its polls counted from the
			   * sums, not from those written (summed too) */
	int names_wanted; /* enabled again: names come again (live__wants()) */
	/* thread names, apart from the threads: an idle thread goes, its
	 * name stays (tid -> index + 1 into tname) */
	struct lib_map tname_ix;
	char (*tname)[32];
	size_t ntname, tname_cap;
	/* the last thread and task looked up (a batch of records is one
	 * thread's, a poll's records one task's): index + 1, 0 none */
	uint32_t c_tid;
	size_t c_th;
	uint64_t c_task;
	size_t c_tk;
	uint64_t ends;	     /* tasks seen to end */
	struct lname *names; /* the leak's, LIVE_NAMES at most */
	size_t nnames, names_cap;
	struct lib_map name_ix; /* lib_hash_str(name) -> index + 1 */
	/* open spans (LIVE_SPANS at most): id -> index + 1 */
	struct lib_map span_ix;
	struct lspan *sp;
	size_t nsp, sp_cap;
	/* the hot stacks and detail of task want (live__want_stacks()): its
	 * wakers, LIVE_WAKERS_KEPT at most (then others) */
	uint64_t want;
	struct live_detail det;
	struct live_waker wk[LIVE_WAKERS_KEPT];
	size_t nwk;
	struct live_stack hot[4 * LIVE_STACKS];
	size_t nhot;
};

/* Is @l fed? (a relaxed load: the tap of a recorder nobody watches costs
 * a call and this) */
static inline int live_on(const struct live *l)
{
	return !__atomic_load_n(&l->off, __ATOMIC_RELAXED);
}

/* ---- feeding (the recorder's thread) --------------------------------- */

static struct lthread *thread_of(struct live *l, uint32_t tid)
{
	int created;
	uint64_t *v;
	struct lthread *t;

	if (l->c_th && l->c_tid == tid)
		return &l->th[l->c_th - 1];
	v = lib_map_get(&l->thread_ix, tid, &created);
	if (!v)
		return NULL;
	if (!created) {
		l->c_tid = tid;
		l->c_th = *v;
		return &l->th[*v - 1];
	}
	if (l->nth >= LIVE_MAX || LIB_GROW(l->th, l->th_cap, l->nth + 1)) {
		lib_map_del(&l->thread_ix, tid);
		l->refused++;
		return NULL;
	}
	t = &l->th[l->nth];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	*v = ++l->nth;
	return t;
}

static struct ltask *task_of(struct live *l, uint64_t id)
{
	int created;
	uint64_t *v;
	struct ltask *k;

	if (!id)
		return NULL;
	if (l->c_tk && l->c_task == id)
		return &l->tk[l->c_tk - 1];
	v = lib_map_get(&l->task_ix, id, &created);
	if (!v)
		return NULL;
	if (!created) {
		l->c_task = id;
		l->c_tk = *v;
		return &l->tk[*v - 1];
	}
	if (l->ntk >= LIVE_MAX || LIB_GROW(l->tk, l->tk_cap, l->ntk + 1)) {
		lib_map_del(&l->task_ix, id);
		l->refused++;
		return NULL;
	}
	k = &l->tk[l->ntk];
	memset(k, 0, sizeof(*k));
	k->id = id;
	*v = ++l->ntk;
	return k;
}

/* Bucket of a delay: two per power of two of microseconds (0: under
 * 1 us), so 64 of them reach an hour. */
static unsigned int bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int e, b;

	if (!us)
		return 0;
	e = 63 - (unsigned int)__builtin_clzll(us);
	b = 1 + 2 * e + (e ? (unsigned int)(us >> (e - 1)) & 1 : 0);
	return b < LIVE_BUCKETS ? b : LIVE_BUCKETS - 1;
}

uint64_t live_bucket_ns(unsigned int b)
{
	unsigned int e;

	if (!b)
		return 0;
	e = (b - 1) / 2;
	return ((1ULL << e) + ((b - 1) % 2 && e ? 1ULL << (e - 1) : 0)) * 1000;
}

/* The samples @t holds that [start, end] (a poll of @k) takes. */
static void hot_add(struct live *l, const uint64_t *ips, unsigned int n, uint32_t w);

/* Sample @p of a wait list taken by a poll of @task (@in 0: by none,
 * outside polls): counted, its callchain let go. */
static void take_sample(struct live *l, struct lthread *t, unsigned int p, int in,
			uint64_t task, struct ltask *k)
{
	struct lwait *wt = t->w;
	uint32_t w = wt->pend[p].weight;

	if (!in) {
		l->outside += w;
	} else {
		l->inside += w;
		t->samples_in += w;
		if (k)
			k->samples += w;
		if (task == l->want && wt->pend[p].ips)
			hot_add(l, wt->pend[p].ips, wt->pend[p].n, w);
	}
	free(wt->pend[p].ips);
	wt->pend[p].ips = NULL;
}

/* What waits in @t up to @end, now that a poll of @task (@k when
 * counted) is known to hold [start, end]. */
/* Task @k entered span @id in a poll: its row's span, the outermost of
 * @id's open ancestors (the request, not the route's span within it) */
static void span_entered(struct live *l, struct ltask *k, uint64_t id)
{
	const uint64_t *v = lib_map_find(&l->span_ix, id), *up;

	if (!k || !v)
		return;
	for (int depth = 0; depth < 8 && l->sp[*v - 1].parent &&
			    (up = lib_map_find(&l->span_ix, l->sp[*v - 1].parent));
	     depth++)
		v = up;
	snprintf(k->span, sizeof(k->span), "%s", l->sp[*v - 1].label);
}

static void resolve(struct live *l, struct lthread *t, uint64_t start, uint64_t end,
		    uint64_t task, struct ltask *k)
{
	struct lwait *w = t->w;

	if (!w)
		return;
	/* a thread's polls come in time order, and its samples nearly so:
	 * what waits before @start was in no poll, what waits up to @end
	 * was in this one; the first after @end waits on */
	for (; w->p0 < w->npend && w->pend[w->p0].time <= end; w->p0++)
		take_sample(l, t, w->p0, w->pend[w->p0].time >= start, task, k);
	/* (one in no poll: parked, or idle, not blocked) */
	for (; w->s0 < w->nsw && w->sw[w->s0].time <= end; w->s0++)
		if (w->sw[w->s0].time >= start) {
			t->blocked_ns += w->sw[w->s0].blocked;
			if (k) {
				k->blocked_ns += w->sw[w->s0].blocked;
				k->runq_ns += w->sw[w->s0].runq;
			}
		}
	for (; w->e0 < w->nent && w->ent[w->e0].time <= end; w->e0++)
		if (w->ent[w->e0].time >= start)
			span_entered(l, k, w->ent[w->e0].span);
	if (w->p0 == w->npend)
		w->p0 = w->npend = 0;
	if (w->s0 == w->nsw)
		w->s0 = w->nsw = 0;
	if (w->e0 == w->nent)
		w->e0 = w->nent = 0;
}

/* Room at the end of a wait list of @cap entries of @size bytes at @v,
 * holding [*first, *n): 1, after moving what waits to its start if need
 * be; 0 when it is full. */
static int wait_room(void *v, size_t size, unsigned int cap, unsigned int *first,
		     unsigned int *n)
{
	if (*n < cap)
		return 1;
	if (!*first)
		return 0;
	memmove(v, (char *)v + (size_t)*first * size, (size_t)(*n - *first) * size);
	*n -= *first;
	*first = 0;
	return 1;
}

/* How much of [a, b] is in [from, to]. */
static uint64_t clip(uint64_t a, uint64_t b, uint64_t from, uint64_t to)
{
	uint64_t lo = a > from ? a : from, hi = b < to ? b : to;

	return hi > lo ? hi - lo : 0;
}

/* [start, end] of @task into @t's recent polls: the oldest go once they
 * are LIVE_PEND_NS older, or the ring is full at LIVE_HIST. */
static void hist_add(struct lthread *t, uint64_t start, uint64_t end, uint64_t task)
{
	if (t->nhist == t->hcap) {
		/* grow while the oldest is recent */
		if (t->hcap < LIVE_HIST &&
		    (!t->nhist || t->hist[t->hpos].end + LIVE_PEND_NS > end)) {
			unsigned int cap = t->hcap ? t->hcap * 2 : 64;
			struct lpoll *h = malloc(cap * sizeof(*h));

			if (h) {
				/* unrolled, oldest first */
				for (unsigned int i = 0; i < t->nhist; i++)
					h[i] = t->hist[(t->hpos + i) % t->hcap];
				free(t->hist);
				t->hist = h;
				t->hcap = cap;
				t->hpos = 0;
			}
		}
	}
	if (!t->hcap)
		return;
	if (t->nhist < t->hcap) {
		t->hist[(t->hpos + t->nhist) % t->hcap] =
			(struct lpoll){start, end, task};
		t->nhist++;
	} else {
		t->hist[t->hpos] = (struct lpoll){start, end, task};
		t->hpos = (t->hpos + 1) % t->hcap;
	}
}

/* @n polls of @task (@k; NULL: not kept) on @t (NULL: not kept), @ns in
 * all, the longest @max, into the interval's counts of the thread, the
 * task and the followed task's detail: a poll written, or a lean
 * recording's sums */
static void count_polls(struct live *l, struct lthread *t, uint64_t task, struct ltask *k,
			uint64_t n, uint64_t ns, uint64_t max)
{
	if (t) {
		t->polls += n;
		t->polls_ns += ns;
		if (max > t->max_poll)
			t->max_poll = max;
	}
	if (task && task == l->want) {
		l->det.npolls += n;
		l->det.poll_ns += ns;
		if (max > l->det.max_poll_ns)
			l->det.max_poll_ns = max;
	}
	if (!k)
		return;
	k->polls += n;
	k->poll_ns += ns;
	k->polls_life += n;
	k->busy += ns;
	if (max > k->max_poll)
		k->max_poll = max;
}

/* A poll of @task on @t over [start, end]. */
static void poll_done(struct live *l, struct lthread *t, uint64_t task, uint64_t start,
		      uint64_t end)
{
	struct ltask *k = task_of(l, task);

	hist_add(t, start, end, task);
	t->seen = 1;
	resolve(l, t, start, end, task, k);
	if (k && k->polled_on == t->tid)
		k->polled_on = 0;
	if (k && end > k->last_end)
		k->last_end = end;
	if (l->lean_unit)
		return; /* counted in the sums (tap_sum()) */
	/* the threads' time is this interval's: what an earlier snapshot
	 * showed open is not counted twice */
	t->poll_ns += clip(start, end, l->last, end);
	count_polls(l, t, task, k, 1, end - start, end - start);
	if (task && task == l->want)
		l->det.polls[bucket(end - start)]++;
}

/* A poll of @k begins at @start: the wait since its wake is a delay
 * (lean: counted in the sums). */
static void poll_begins(const struct live *l, struct ltask *k, uint64_t start)
{
	if (!k)
		return;
	if (k->wake && k->wake <= start && !l->lean_unit) {
		k->delays[bucket(start - k->wake)]++;
		k->ndelays++;
		k->sched += start - k->wake;
	}
	if (start >= k->begun) {
		k->wake = 0;
		k->begun = start;
	}
	if (start >= k->dropped)
		k->dropped = 0;
}

/* @k woken at @time, unless a poll began since or it ended (the rings
 * of two threads drain one after the other: a wake can come late). */
static void woken(struct ltask *k, uint64_t time)
{
	if (k && !k->ended && !k->wake && time >= k->begun)
		k->wake = time;
	if (k && time >= k->dropped)
		k->dropped = 0;
}

/* The wanted task @k woken from thread @t: by itself (its own poll), by
 * the task @t polls, or by @t outside tasks */
static void woken_by(struct live *l, const struct ltask *k, const struct lthread *t)
{
	uint64_t task = t->task;
	size_t i;

	if (k->polled_on == t->tid) {
		l->det.self++;
		return;
	}
	for (i = 0; i < l->nwk; i++)
		if (l->wk[i].task == task && (task || l->wk[i].tid == t->tid))
			break;
	if (i == l->nwk) {
		if (l->nwk == LIVE_WAKERS_KEPT) {
			l->det.others++;
			return;
		}
		l->wk[l->nwk++] = (struct live_waker){.task = task, .tid = t->tid};
	}
	l->wk[i].wakes++;
}

static int waker_cmp(const void *a, const void *b)
{
	const struct live_waker *x = a, *y = b;

	return x->wakes != y->wakes ? (x->wakes > y->wakes ? -1 : 1) : 0;
}

/* @k met at @time: its life began then, if not before */
static void met_at(struct ltask *k, uint64_t time)
{
	if (k && time && (!k->first || time < k->first))
		k->first = time;
}

static void event(struct live *l, const struct trace_event *e, uint64_t len)
{
	struct lthread *t = thread_of(l, e->tid);
	struct ltask *k;

	if (!t)
		return;
	if (e->task && e->type != TRACE_EV_THREAD_START &&
	    e->type != TRACE_EV_THREAD_STOP && e->type != TRACE_EV_PARK &&
	    e->type != TRACE_EV_UNPARK && e->type != TRACE_EV_POLL_END)
		met_at(task_of(l, e->task), trace_rec_events(e->type) > 1 && e->time > len
						    ? e->time - len
						    : e->time);
	t->seen = 1;
	if (e->type != TRACE_EV_WAKE && e->type != TRACE_EV_SPAWN &&
	    e->type != TRACE_EV_TASK_END && e->type != TRACE_EV_WAKER_DROP &&
	    e->time > t->known_to)
		t->known_to = e->time;
	switch (e->type) {
	case TRACE_REC_POLL:
	case TRACE_REC_POLL_WOKEN:
		k = task_of(l, e->task);
		poll_begins(l, k, e->time - len);
		if (t->task == e->task && t->from_header)
			t->task = 0;
		poll_done(l, t, e->task, e->time - len, e->time);
		if (e->type == TRACE_REC_POLL_WOKEN && k) {
			k->wakes++;
			k->self_wakes++;
			woken(k, e->time);
			if (e->task == l->want)
				l->det.self++;
		}
		break;
	case TRACE_EV_POLL_BEGIN:
		k = task_of(l, e->task);
		poll_begins(l, k, e->time);
		t->task = e->task;
		t->begin = e->time;
		t->open_seen = e->time;
		t->from_header = 0;
		if (k)
			k->polled_on = t->tid;
		break;
	case TRACE_EV_POLL_END:
		if (t->task == e->task && e->time >= t->begin)
			poll_done(l, t, e->task, t->begin, e->time);
		t->task = 0;
		break;
	case TRACE_EV_WAKE:
	case TRACE_EV_SPAWN:
		k = task_of(l, e->task);
		if (!k)
			break;
		if (e->type == TRACE_EV_SPAWN)
			k->born = 1;
		else if (k->polled_on == e->tid)
			k->self_wakes++;
		if (e->type == TRACE_EV_WAKE && e->task == l->want)
			woken_by(l, k, t);
		k->wakes += e->type == TRACE_EV_WAKE;
		if (k->polled_on != e->tid)
			woken(k, e->time);
		break;
	case TRACE_EV_WAKER_DROP:
		k = task_of(l, e->task);
		if (k && !k->ended && !k->wake && e->time >= k->begun)
			k->dropped = e->time;
		break;
	case TRACE_EV_TASK_END:
		k = task_of(l, e->task);
		l->ends++;
		if (k) {
			k->ended = 1;
			k->end_at = e->time;
			k->wake = 0;
		}
		break;
	case TRACE_EV_PARK:
		t->park = e->time;
		break;
	case TRACE_EV_UNPARK:
		if (t->park)
			t->parked_ns += clip(t->park, e->time, l->last, e->time);
		if (t->park) {
			t->parks[t->pk].from = t->park;
			t->parks[t->pk].to = e->time;
			t->pk = (t->pk + 1) % LIVE_PARKS;
		}
		t->park = 0;
		break;
	}
	/* what waits before a park, or a poll's begin, was in no poll */
	if (e->type == TRACE_EV_PARK || e->type == TRACE_EV_UNPARK ||
	    e->type == TRACE_EV_POLL_BEGIN || e->type == TRACE_EV_THREAD_START ||
	    e->type == TRACE_EV_THREAD_STOP)
		resolve(l, t, UINT64_MAX, e->time ? e->time - 1 : 0, 0, NULL);
}

/* Was @t parked at @time (now, or in one of its last parks)? An
 * off-CPU interval comes at its end, parks may have come and gone. */
static int parked_at(const struct lthread *t, uint64_t time)
{
	if (t->park && time >= t->park)
		return 1;
	for (unsigned int i = 0; i < LIVE_PARKS; i++)
		if (t->parks[i].to && time >= t->parks[i].from && time <= t->parks[i].to)
			return 1;
	return 0;
}

/* A lean recording's sums of thread s->tid's polls of task s->task
 * since their last: the polls' counts, time and longest, the waits'
 * histogram, in the interval they came in (the recorder has them sent
 * at the pace of a viewer: a slice of polls may fall in the next one) */
static void tap_sum(void *ctx, const struct trace_sum *s, const struct trace_sum_ent *ent)
{
	struct live *l = ctx;
	struct lthread *t;
	struct ltask *k;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	if (!l->lean_unit)
		goto out;
	if ((t = thread_of(l, s->tid))) {
		t->poll_ns += s->poll_total;
		t->seen = 1;
	}
	k = task_of(l, s->task);
	count_polls(l, t, s->task, k, s->polls, s->poll_total, s->poll_max);
	if (k)
		k->sched += s->delay_total;
	for (uint32_t e = 0; e < s->nent; e++) {
		unsigned int b = bucket(lean_bucket_ns(ent[e].bucket, l->lean_unit));

		if (ent[e].which && k) {
			k->delays[b] += ent[e].count;
			k->ndelays += ent[e].count;
		} else if (!ent[e].which && s->task == l->want) {
			l->det.polls[b] += ent[e].count;
		}
	}
out:
	pthread_mutex_unlock(&l->lock);
}

/* Meta "lean": from now on the polls count from the sums. Taken even
 * while nobody watches: it comes once, at the start. (lean_unit is the
 * feeding thread's alone: no lock) */
static void tap_meta(void *ctx, const char *key, const char *value)
{
	struct live *l = ctx;

	if (!strcmp(key, TRACE_META_LEAN))
		analysis_lean_parse(value, NULL, NULL, &l->lean_unit);
}

static void tap_records(void *ctx, const struct trace_event *rec, const uint64_t *len,
			size_t n)
{
	struct live *l = ctx;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < n; i++)
		event(l, &rec[i], len && trace_rec_events(rec[i].type) > 1 ? len[i] : 0);
	pthread_mutex_unlock(&l->lock);
}

/* The end of @t's latest poll written, 0 if none. */
static uint64_t last_end(const struct lthread *t)
{
	return t->nhist ? t->hist[(t->hpos + t->nhist - 1) % t->hcap].end : 0;
}

/* The task whose poll on @t held @time, 0 if none; -1 if not known yet
 * (no poll of @t has reached @time). Where no poll held it, a zero-code
 * task id @tagged (the sample's or switch's, read in the thread) is the
 * task, with no poll. */
static int64_t poll_at(const struct lthread *t, uint64_t time, uint64_t tagged,
		       uint64_t *task)
{
	/* newest first: a thread's polls are in time order */
	for (unsigned int i = t->nhist; i-- > 0;) {
		const struct lpoll *p = &t->hist[(t->hpos + i) % t->hcap];

		if (time >= p->start && time <= p->end) {
			*task = p->task;
			return 1;
		}
		if (p->end < time)
			break;
	}
	if (t->task && time >= t->begin && time <= t->open_seen) {
		*task = t->task;
		return 1;
	}
	if (tagged & TRACE_TASK_TOKIO) {
		*task = tagged;
		return 1;
	}
	*task = 0;
	/* in no poll where the thread's records went past it; past them, a
	 * poll under way may hold it (written whole at its end): wait */
	return time < t->known_to ? 0 : -1;
}

/* A sample of the wanted task with callchain @ips: counted with its
 * stack, which takes the place of the least counted one when all are
 * taken. */
static void hot_add(struct live *l, const uint64_t *ips, unsigned int n, uint32_t w)
{
	size_t i, least = 0;

	if (n > LIVE_STACK_DEPTH)
		n = LIVE_STACK_DEPTH;
	for (i = 0; i < l->nhot; i++) {
		if (l->hot[i].n == n && !memcmp(l->hot[i].ips, ips, n * sizeof(*ips))) {
			l->hot[i].samples += w;
			return;
		}
		if (l->hot[i].samples < l->hot[least].samples)
			least = i;
	}
	if (l->nhot < sizeof(l->hot) / sizeof(l->hot[0]))
		least = l->nhot++;
	memcpy(l->hot[least].ips, ips, n * sizeof(*ips));
	l->hot[least].n = n;
	l->hot[least].samples = w;
}

static int hot_cmp(const void *a, const void *b)
{
	const struct live_stack *x = a, *y = b;

	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

void live__set_lost(struct live *l, const struct live_lost *lost)
{
	pthread_mutex_lock(&l->lock);
	l->lost = *lost;
	pthread_mutex_unlock(&l->lock);
}

void live__want_stacks(struct live *l, uint64_t task)
{
	pthread_mutex_lock(&l->lock);
	if (task != l->want) {
		l->want = task;
		l->nhot = 0;
		memset(&l->det, 0, sizeof(l->det));
		l->nwk = 0;
	}
	pthread_mutex_unlock(&l->lock);
}

static void tap_sample(void *ctx, const struct trace_sample *s, const uint64_t *ips,
		       unsigned int n)
{
	struct live *l = ctx;
	struct lthread *t;
	uint64_t task;
	uint32_t w = s->weight ? s->weight : 1;
	int64_t at;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	l->samples += w;
	t = thread_of(l, s->tid);
	if (!t)
		goto out;
	t->samples += w;
	at = poll_at(t, s->time, s->task, &task);
	if (at > 0) {
		struct ltask *k = task_of(l, task);

		l->inside += w;
		t->samples_in += w;
		if (k)
			k->samples += w;
		if (task == l->want)
			hot_add(l, ips, n, w);
	} else if (at < 0 && (t->w || (t->w = calloc(1, sizeof(*t->w)))) &&
		   wait_room(t->w->pend, sizeof(t->w->pend[0]), LIVE_PEND, &t->w->p0,
			     &t->w->npend)) {
		struct lwait *wt = t->w;
		unsigned int k = n < LIVE_STACK_DEPTH ? n : LIVE_STACK_DEPTH;

		wt->pend[wt->npend].time = s->time;
		wt->pend[wt->npend].weight = w;
		wt->pend[wt->npend].n = 0;
		wt->pend[wt->npend].ips = NULL;
		if (l->want && k &&
		    (wt->pend[wt->npend].ips = malloc(k * sizeof(*ips)))) {
			memcpy(wt->pend[wt->npend].ips, ips, k * sizeof(*ips));
			wt->pend[wt->npend].n = k;
		}
		wt->npend++;
	} else {
		l->outside += w;
	}
out:
	pthread_mutex_unlock(&l->lock);
}

static void tap_switch(void *ctx, const struct trace_switch *s)
{
	struct live *l = ctx;
	struct lthread *t;
	uint64_t in, r, blocked, runq, task;
	struct ltask *k = NULL;
	int64_t at;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	t = thread_of(l, s->tid);
	if (!t)
		goto out;
	in = s->time_in ? s->time_in : s->time;
	r = s->preempted ? s->time : s->runnable;
	if (!r || r > in)
		r = in;
	/* this interval's part: it is known only at the switch-in */
	blocked = clip(s->time, r, l->last, in);
	runq = clip(r, in, l->last, in);
	t->runq_ns += runq;
	at = poll_at(t, s->time, s->task, &task);
	if (at > 0)
		k = task_of(l, task);
	/* off-CPU while parked is parked time (counted from the markers),
	 * not blocked; one not placed yet counts once a poll takes it */
	if (at > 0 || (at == 0 && !parked_at(t, s->time)))
		t->blocked_ns += blocked;
	if (k) {
		k->blocked_ns += blocked;
		k->runq_ns += runq;
	} else if (at < 0 && (t->w || (t->w = calloc(1, sizeof(*t->w)))) &&
		   wait_room(t->w->sw, sizeof(t->w->sw[0]), LIVE_PEND_SW, &t->w->s0,
			     &t->w->nsw)) {
		t->w->sw[t->w->nsw].time = s->time;
		t->w->sw[t->w->nsw].blocked = blocked;
		t->w->sw[t->w->nsw++].runq = runq;
	}
out:
	pthread_mutex_unlock(&l->lock);
}

static void tap_name(void *ctx, int task, uint64_t id, const char *name)
{
	struct live *l = ctx;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	if (task) {
		struct ltask *k = task_of(l, id);

		if (k)
			snprintf(k->name, sizeof(k->name), "%s", name);
	} else if (id <= UINT32_MAX) {
		int created;
		uint64_t *v = lib_map_get(&l->tname_ix, id, &created);

		if (v && created &&
		    (l->ntname >= LIVE_MAX ||
		     LIB_GROW(l->tname, l->tname_cap, l->ntname + 1))) {
			lib_map_del(&l->tname_ix, id);
			l->refused++;
			v = NULL;
		} else if (v && created) {
			*v = ++l->ntname;
		}
		if (v)
			snprintf(l->tname[*v - 1], sizeof(l->tname[0]), "%s", name);
	}
	pthread_mutex_unlock(&l->lock);
}

/* Thread @tid's name, "" if none came. */
static const char *thread_name(const struct live *l, uint32_t tid)
{
	const uint64_t *v = lib_map_find(&l->tname_ix, tid);

	return v ? l->tname[*v - 1] : "";
}

void live__polling(struct live *l, uint32_t tid, uint64_t task, uint64_t begin,
		   uint64_t now)
{
	struct lthread *t;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	t = thread_of(l, tid);
	if (!t)
		goto out;
	if (t->task && !t->from_header) {
		/* begun in a record (something was recorded inside it), its
		 * end not drained: it runs up to @now */
		if (now > t->open_seen)
			t->open_seen = now;
	} else {
		struct ltask *k = task ? task_of(l, task) : NULL;

		met_at(k, begin);
		if (task && t->task != task)
			poll_begins(l, k, begin);
		t->task = task;
		t->begin = begin;
		t->open_seen = now;
		t->from_header = task != 0;
		if (k)
			k->polled_on = tid;
	}
	/* what waits up to now is in this poll (or before it, in none) */
	if (t->task)
		resolve(l, t, t->begin, t->open_seen, t->task, task_of(l, t->task));
out:
	pthread_mutex_unlock(&l->lock);
}

/* ---- spans: the request a task serves -------------------------------- */

static void span_close(struct live *l, uint64_t id)
{
	uint64_t *v = lib_map_find(&l->span_ix, id), last;

	if (!v)
		return;
	last = l->nsp - 1;
	if (*v - 1 != last) {
		l->sp[*v - 1] = l->sp[last];
		*lib_map_find(&l->span_ix, l->sp[last].id) = *v;
	}
	lib_map_del(&l->span_ix, id);
	l->nsp--;
}

/* Span record @s: a span's name and fields kept while it is open; the
 * task whose poll entered it (now, or once that poll is known) takes its
 * label */
static void tap_span(void *ctx, const struct trace_span *s)
{
	struct live *l = ctx;
	struct lthread *t;
	uint64_t *v, task;
	int64_t at;
	int created;

	if (!live_on(l))
		return;
	pthread_mutex_lock(&l->lock);
	switch (s->type) {
	case TRACE_SPAN_NEW:
		if (l->nsp >= LIVE_SPANS || LIB_GROW(l->sp, l->sp_cap, l->nsp + 1) ||
		    !(v = lib_map_get(&l->span_ix, s->id, &created)))
			break;
		if (created)
			*v = ++l->nsp;
		l->sp[*v - 1].id = s->id;
		l->sp[*v - 1].parent = (uint64_t)s->value;
		snprintf(l->sp[*v - 1].label, sizeof(l->sp[*v - 1].label), "%s",
			 s->name ? s->name : "?");
		break;
	case TRACE_SPAN_FIELD:
		/* (tracing's target is where, not what: not in the label) */
		if ((v = lib_map_find(&l->span_ix, s->id)) && s->name &&
		    strcmp(s->name, "target")) {
			char *b = l->sp[*v - 1].label;
			size_t n = strlen(b);

			if (s->text)
				snprintf(b + n, sizeof(l->sp[0].label) - n, " %s=%s",
					 s->name, s->text);
			else
				snprintf(b + n, sizeof(l->sp[0].label) - n,
					 " %s=%" PRId64, s->name, s->value);
		}
		break;
	case TRACE_SPAN_ENTER:
		if (!lib_map_find(&l->span_ix, s->id) || !(t = thread_of(l, s->tid)))
			break;
		at = poll_at(t, s->time, 0, &task);
		if (at > 0)
			span_entered(l, task_of(l, task), s->id);
		else if (at < 0 && (t->w || (t->w = calloc(1, sizeof(*t->w)))) &&
			 wait_room(t->w->ent, sizeof(t->w->ent[0]), LIVE_PEND_ENTERS,
				   &t->w->e0, &t->w->nent)) {
			t->w->ent[t->w->nent].time = s->time;
			t->w->ent[t->w->nent++].span = s->id;
		}
		break;
	case TRACE_SPAN_CLOSE:
		span_close(l, s->id);
		break;
	}
	pthread_mutex_unlock(&l->lock);
}

int live__new(double period_ns, struct live **out)
{
	struct live *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->period_ns = period_ns;
	l->tap = (struct trace_tap){.records = tap_records,
				    .sample = tap_sample,
				    .sw = tap_switch,
				    .span = tap_span,
				    .name = tap_name,
				    .ctx = l};
	/* a lean recording's */
	l->tap.sum = tap_sum;
	l->tap.meta = tap_meta;
	*out = l;
	return 0;
}

const struct trace_tap *live__tap(const struct live *l)
{
	return &l->tap;
}

/* Let go of what @t holds. */
static void thread_release(struct lthread *t)
{
	struct lwait *w = t->w;

	for (unsigned int p = 0; w && p < w->npend; p++)
		free(w->pend[p].ips);
	free(w);
	free(t->hist);
}

/* Forget every thread and task, and their names (the recorder names
 * them again: live__wants()). */
static void forget(struct live *l)
{
	for (size_t i = 0; i < l->nth; i++)
		thread_release(&l->th[i]);
	l->nth = l->ntk = 0;
	lib_map_release(&l->thread_ix);
	lib_map_release(&l->task_ix);
	lib_map_release(&l->tname_ix);
	l->ntname = 0;
	lib_map_release(&l->name_ix);
	l->nnames = 0;
	lib_map_release(&l->span_ix);
	l->nsp = 0;
	l->ends = 0;
	l->have_last = 0;
	l->refused = l->samples = l->outside = 0;
	l->c_th = l->c_tk = 0;
}

void live__enable(struct live *l, int on)
{
	pthread_mutex_lock(&l->lock);
	if (on && l->off) {
		forget(l);
		__atomic_store_n(&l->names_wanted, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&l->off, !on, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
}

/* (the feeding thread's call: lean_unit is its own) */
unsigned int live__wants(void *ctx)
{
	struct live *l = ctx;
	unsigned int w = __atomic_exchange_n(&l->names_wanted, 0, __ATOMIC_RELAXED)
				 ? LIVE_WANT_NAMES
				 : 0;

	return w | (live_on(l) && l->lean_unit > 0 ? LIVE_WANT_SUMS : 0);
}

void live__free(struct live *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	forget(l);
	free(l->th);
	free(l->tk);
	free(l->tname);
	free(l->names);
	free(l->sp);
	free(l);
}

/* ---- snapshots (the viewer's thread) --------------------------------- */

uint64_t live_hist_pct(const uint32_t *b, uint64_t n, unsigned int pct)
{
	uint64_t rank = (n * pct + 99) / 100, seen = 0;

	for (unsigned int i = 0; i < LIVE_BUCKETS; i++) {
		seen += b[i];
		if (seen >= rank)
			return i + 1 < LIVE_BUCKETS ? live_bucket_ns(i + 1)
						    : live_bucket_ns(i);
	}
	return 0;
}

/* A row's key in the grouping @by: the task id, the name's index in @names
 * (@nn of them, found or added), or the tid. */
static size_t name_ix(const char **names, size_t *nn, const char *name)
{
	for (size_t i = 0; i < *nn; i++)
		if (!strcmp(names[i], name))
			return i;
	names[*nn] = name;
	return (*nn)++;
}

static void add_task(struct live_row *r, const struct ltask *k, uint64_t now)
{
	uint64_t until = k->ended && k->end_at ? k->end_at : now,
		 life = k->first && until > k->first ? until - k->first : 0;

	r->life_ns += life;
	r->busy_ns += k->busy;
	r->sched_ns += k->sched;
	r->idle_ns += life > k->busy + k->sched ? life - k->busy - k->sched : 0;
	r->polls_life += k->polls_life;
	r->polls += k->polls;
	r->poll_ns += k->poll_ns;
	if (k->max_poll > r->max_poll_ns)
		r->max_poll_ns = k->max_poll;
	r->samples += k->samples;
	r->blocked_ns += k->blocked_ns;
	r->runq_ns += k->runq_ns;
	for (unsigned int i = 0; i < LIVE_BUCKETS; i++)
		r->delays_[i] += k->delays[i];
	r->ndelays += k->ndelays;
	if (k->polled_on) {
		r->state = LIVE_POLLED;
	} else if (k->wake && r->state != LIVE_POLLED) {
		r->state = LIVE_WOKEN;
		if (now > k->wake && now - k->wake > r->state_ns)
			r->state_ns = now - k->wake;
	} else if (!r->state) {
		r->state = k->ended ? LIVE_ENDED : LIVE_IDLE;
		if (k->ended && now > k->end_at)
			r->state_ns = now - k->end_at;
	}
	r->ntasks++;
	r->nzc += !!(k->id & TRACE_TASK_TOKIO);
}

/* The threads into @out: its workers (in polls, parked, blocked, run
 * queue this interval, with what is open now up to @now) and, by thread,
 * its rows; their interval's counts start again. */
static void snap_threads(struct live *l, uint64_t now, struct live_snap *out)
{
	for (size_t i = 0; i < l->nth; i++) {
		struct lthread *t = &l->th[i];
		struct live_worker *w = &out->workers[out->nworkers];

		/* samples no poll came for: outside polls */
		for (; t->w && t->w->p0 < t->w->npend &&
		       t->w->pend[t->w->p0].time + LIVE_PEND_NS < now;
		     t->w->p0++)
			take_sample(l, t, t->w->p0, 0, 0, NULL);
		for (; t->w && t->w->s0 < t->w->nsw &&
		       t->w->sw[t->w->s0].time + LIVE_PEND_NS < now;
		     t->w->s0++)
			;
		w->tid = t->tid;
		snprintf(w->name, sizeof(w->name), "%s", thread_name(l, t->tid));
		w->poll_ns = t->poll_ns;
		w->parked_ns = t->parked_ns;
		w->blocked_ns = t->blocked_ns;
		w->runq_ns = t->runq_ns;
		w->samples = t->samples;
		if (t->task && now > t->begin) {
			w->task = t->task;
			/* as long as it is known to have run: a recorder late
			 * to drain (a busy machine) has not seen its end yet */
			w->in_poll_ns =
				t->open_seen > t->begin ? t->open_seen - t->begin : 0;
			w->poll_ns += clip(t->begin, now, l->last, now);
		}
		if (t->park && now > t->park)
			w->parked_ns += now - (t->park > l->last ? t->park : l->last);
		if (t->task || t->park || t->seen || t->poll_ns)
			out->nworkers++;
		if (out->by == GROUP_THREAD &&
		    (t->seen || t->samples || t->park || t->task)) {
			struct live_row *r = &out->rows[out->nrows++];

			r->tid = t->tid;
			r->id = t->tid;
			snprintf(r->name, sizeof(r->name), "%s", w->name);
			r->samples = t->samples;
			r->poll_ns = w->poll_ns;
			r->polls = t->polls;
			r->max_poll_ns = t->max_poll;
			r->mean_poll_ns = t->polls ? t->polls_ns / t->polls : 0;
			r->blocked_ns = t->blocked_ns;
			r->runq_ns = t->runq_ns;
			r->state = t->task   ? LIVE_POLLED
				   : t->park ? LIVE_PARKED
					     : LIVE_IDLE;
			r->state_ns = t->task ? w->in_poll_ns : 0;
			r->task = t->task;
		}
		if (t->task || t->park || t->seen || t->samples ||
		    (t->w && (t->w->p0 < t->w->npend || t->w->s0 < t->w->nsw)))
			t->idle = 0;
		else
			t->idle++;
		t->poll_ns = t->parked_ns = t->blocked_ns = t->runq_ns = 0;
		t->polls = t->polls_ns = t->max_poll = 0;
		t->samples = t->samples_in = 0;
		t->seen = 0;
	}
}

/* The tasks into @out's rows, by task or by name (@names: room for one
 * per task). */
static void snap_tasks(struct live *l, uint64_t now, const char **names,
		       struct live_snap *out)
{
	size_t nn = 0;

	for (size_t i = 0; i < l->ntk; i++) {
		struct ltask *k = &l->tk[i];
		struct live_row *r;
		size_t ix;

		/* by name, a task counts in the frame it ended, not after */
		if (out->by == GROUP_NAME && k->ended && k->end_at < l->last)
			continue;
		if (out->by == GROUP_NAME) {
			ix = name_ix(names, &nn, k->name);
			if (ix == out->nrows) {
				out->nrows++;
				snprintf(out->rows[ix].name, sizeof(out->rows[ix].name),
					 "%s", k->name);
			}
			r = &out->rows[ix];
		} else {
			r = &out->rows[out->nrows++];
			r->id = k->id;
			snprintf(r->name, sizeof(r->name), "%s", k->name);
			snprintf(r->span, sizeof(r->span), "%s", k->span);
		}
		add_task(r, k, now);
		if (k->polled_on) {
			const uint64_t *v = lib_map_find(&l->thread_ix, k->polled_on);
			const struct lthread *t = v ? &l->th[*v - 1] : NULL;

			/* (known to have run so long: see snap_threads()) */
			if (t && t->task == k->id && t->open_seen > t->begin &&
			    t->open_seen - t->begin > r->state_ns) {
				r->state_ns = t->open_seen - t->begin;
				r->tid = t->tid;
			}
		}
	}
}

static void find(struct live_snap *out, uint32_t kind, uint64_t task, const char *name,
		 uint64_t ns, uint64_t a, uint64_t b)
{
	struct live_find *f;

	if (out->nfinds == LIVE_FINDS)
		return;
	f = &out->finds[out->nfinds++];
	*f = (struct live_find){.kind = kind, .task = task, .ns = ns, .a = a, .b = b};
	snprintf(f->name, sizeof(f->name), "%s", name);
}

/* Name @name's leak history (NULL: LIVE_NAMES are known, or no memory) */
static struct lname *name_of(struct live *l, const char *name)
{
	int created;
	uint64_t *v = lib_map_get(&l->name_ix, lib_hash_str(name), &created);
	struct lname *n;

	if (!v)
		return NULL;
	if (!created)
		return strcmp(l->names[*v - 1].name, name) ? NULL : &l->names[*v - 1];
	if (l->nnames == LIVE_NAMES || LIB_GROW(l->names, l->names_cap, l->nnames + 1)) {
		lib_map_del(&l->name_ix, lib_hash_str(name));
		return NULL;
	}
	n = &l->names[l->nnames];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	*v = ++l->nnames;
	return n;
}

const char *live_worker_named(const struct live_snap *s, uint32_t tid, char *buf,
			      size_t len)
{
	char name[32];

	for (size_t i = 0; i < s->nworkers; i++)
		if (s->workers[i].tid == tid) {
			analysis_fit_name(s->workers[i].name[0] ? s->workers[i].name
								: "?",
					  24, name, sizeof(name));
			snprintf(buf, len, "%s[%" PRIu32 "]", name, tid);
			return buf;
		}
	snprintf(buf, len, "[%" PRIu32 "]", tid);
	return buf;
}

const char *live_find_say(const struct live_snap *s, const struct live_find *f, char *buf,
			  size_t len)
{
	char d[32], t[48], name[64], who[96];

	/* (whole: a Rust task's TYPE FILE:LINE reads only so) */
	analysis_fit_name(f->name[0] ? f->name
			  : f->task  ? NULL
				     : "[unnamed]",
			  0, name, sizeof(name));
	snprintf(who, sizeof(who), "task %" PRIu64 " %s", trace_task_number(f->task),
		 name);
	text_duration(f->ns, d, sizeof(d));
	switch (f->kind) {
	case LIVE_LOST_WAKER:
		if (f->a)
			snprintf(buf, len, "%s pending, its last waker dropped %s ago",
				 who, d);
		else
			snprintf(buf, len,
				 "%s pending, not woken for %s since its last poll", who,
				 d);
		break;
	case LIVE_SELF_WAKES:
		snprintf(buf, len,
			 "%s woke itself %" PRIu64 " of its %" PRIu64
			 " wakes, polls of %s",
			 who, f->a, f->b, d);
		break;
	case LIVE_NO_YIELD:
		snprintf(buf, len, "%s in one poll for %s on %s", who, d,
			 live_worker_named(s, (uint32_t)f->a, t, sizeof(t)));
		break;
	default:
		snprintf(buf, len, "tasks %s: %" PRIu64 " alive, more each time for %s",
			 name, f->a,
			 text_duration(s->interval_ns * LIVE_LEAK_SNAPS, t, sizeof(t)));
		break;
	}
	return buf;
}

/* What the detectors find at @now (struct live_find), of the interval
 * that ends: before snap_forget() starts its counts again */
static void snap_finds(struct live *l, uint64_t now, struct live_snap *out)
{
	size_t i;

	for (i = 0; i < l->nth; i++) {
		const struct lthread *t = &l->th[i];
		const uint64_t *v;

		/* (known to have run so long: see snap_threads()) */
		if (!t->task || t->open_seen < t->begin ||
		    t->open_seen - t->begin < DELAYS_NO_YIELD_NS)
			continue;
		v = lib_map_find(&l->task_ix, t->task);
		find(out, LIVE_NO_YIELD, t->task, v ? l->tk[*v - 1].name : "",
		     t->open_seen - t->begin, t->tid, 0);
	}
	for (i = 0; i < l->nnames; i++) {
		struct lname *n = &l->names[i];

		memmove(n->alive + 1, n->alive, LIVE_LEAK_SNAPS * sizeof(n->alive[0]));
		n->alive[0] = 0;
	}
	for (i = 0; i < l->ntk; i++) {
		const struct ltask *k = &l->tk[i];
		struct lname *n;

		/* with no waker left (the runtime counts them), at once */
		if (!k->ended && !k->polled_on && !k->wake && k->dropped &&
		    now >= k->dropped)
			find(out, LIVE_LOST_WAKER, k->id, k->name, now - k->dropped, 1,
			     0);
		else if (!k->ended && !k->polled_on && !k->wake && k->last_end &&
			 (k->born || l->ends) && now >= k->last_end + DELAYS_IDLE_NS)
			find(out, LIVE_LOST_WAKER, k->id, k->name, now - k->last_end, 0,
			     0);
		if (k->wakes >= DELAYS_SELF_MIN && k->self_wakes * 2 > k->wakes &&
		    k->polls && k->poll_ns / k->polls < DELAYS_SELF_POLL_NS)
			find(out, LIVE_SELF_WAKES, k->id, k->name, k->poll_ns / k->polls,
			     k->self_wakes, k->wakes);
		if (k->born && !k->ended && (n = name_of(l, k->name)))
			n->alive[0]++;
	}
	for (i = 0; i < l->nnames; i++) {
		const struct lname *n = &l->names[i];
		size_t k;

		for (k = 0; k < LIVE_LEAK_SNAPS && n->alive[k] > n->alive[k + 1]; k++)
			;
		if (k == LIVE_LEAK_SNAPS && n->alive[0] >= DELAYS_LEAK_MIN)
			find(out, LIVE_LEAK, 0, n->name, 0, n->alive[0], 0);
	}
}

/* The interval's counts start again; tasks that ended go, once shown, and
 * so do threads with nothing for two snapshots and no poll a late sample
 * may still fall in (their names stay). */
static void snap_forget(struct live *l, uint64_t now)
{
	size_t i, n, kept = 0;

	/* ended tasks stay LIVE_KEEP_ENDED_NS, the last LIVE_KEEP_ENDED of
	 * them at most (the newest come last) */
	for (i = l->ntk; i-- > 0;) {
		struct ltask *k = &l->tk[i];

		k->gone = k->ended && !k->polled_on &&
			  (now >= k->end_at + LIVE_KEEP_ENDED_NS ||
			   kept++ >= LIVE_KEEP_ENDED);
	}
	for (i = n = 0; i < l->ntk; i++) {
		struct ltask *k = &l->tk[i];

		if (k->gone) {
			lib_map_del(&l->task_ix, k->id);
			continue;
		}
		k->polls = k->poll_ns = k->max_poll = k->samples = 0;
		k->blocked_ns = k->runq_ns = k->ndelays = 0;
		k->wakes = k->self_wakes = 0;
		memset(k->delays, 0, sizeof(k->delays));
		if (n != i) {
			l->tk[n] = *k;
			*lib_map_find(&l->task_ix, k->id) = n + 1;
		}
		n++;
	}
	l->ntk = n;
	l->c_tk = 0; /* tasks moved */
	for (i = n = 0; i < l->nth; i++) {
		struct lthread *t = &l->th[i];

		if (t->idle >= 2 && last_end(t) + LIVE_PEND_NS < now) {
			lib_map_del(&l->thread_ix, t->tid);
			thread_release(t);
			continue;
		}
		if (n != i) {
			l->th[n] = *t;
			*lib_map_find(&l->thread_ix, t->tid) = n + 1;
		}
		n++;
	}
	l->nth = n;
	l->c_th = 0; /* threads moved */
}

/* The wanted task's hottest stacks into @out; then their counts halve. */
static void snap_stacks(struct live *l, struct live_snap *out)
{
	size_t i, n;

	qsort(l->hot, l->nhot, sizeof(l->hot[0]), hot_cmp);
	out->stacks_task = l->want;
	/* its detail: the most frequent wakers, the rest among others */
	qsort(l->wk, l->nwk, sizeof(l->wk[0]), waker_cmp);
	out->detail = l->det;
	out->detail.task = l->want;
	for (i = 0; i < l->nwk; i++)
		if (i < LIVE_WAKERS)
			out->detail.wakers[out->detail.nwakers++] = l->wk[i];
		else
			out->detail.others += l->wk[i].wakes;
	for (i = 0; i < l->nhot && i < LIVE_STACKS; i++)
		out->stacks[out->nstacks++] = l->hot[i];
	for (i = n = 0; i < l->nhot; i++)
		if ((l->hot[i].samples /= 2))
			l->hot[n++] = l->hot[i];
	l->nhot = n;
}

int live__snapshot(struct live *l, uint64_t now, enum group_by by, struct live_snap *out)
{
	const char **names = NULL;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&l->lock);
	out->time = now;
	out->interval_ns = l->have_last && now > l->last ? now - l->last : 0;
	out->period_ns = l->period_ns;
	out->refused = l->refused;
	/* by task, until many short tasks make a column of ended rows that
	 * change every frame: by name from then on */
	if (by == GROUP_AUTO) {
		size_t ended = 0;

		for (size_t i = 0; i < l->ntk; i++)
			ended += l->tk[i].ended && l->tk[i].end_at >= l->last;
		if (ended >= LIVE_AUTO_ENDED)
			l->auto_names = 1;
		by = l->auto_names ? GROUP_NAME : GROUP_TASK;
		out->auto_by = 1;
	}
	out->by = by;
	out->rows =
		calloc((by == GROUP_THREAD ? l->nth : l->ntk) + 1, sizeof(*out->rows));
	out->workers = calloc(l->nth + 1, sizeof(*out->workers));
	names = malloc((l->ntk + 1) * sizeof(*names));
	if (!out->rows || !out->workers || !names)
		goto out;
	snap_threads(l, now, out);
	if (by != GROUP_THREAD)
		snap_tasks(l, now, names, out);
	for (size_t i = 0; i < out->nrows; i++) {
		struct live_row *r = &out->rows[i];

		r->delay_p99_ns = live_hist_pct(r->delays_, r->ndelays, 99);
		/* (a thread's: of its polls, set above) */
		if (by != GROUP_THREAD)
			r->mean_poll_ns = r->polls ? r->poll_ns / r->polls : 0;
	}
	snap_finds(l, now, out);
	snap_forget(l, now);
	snap_stacks(l, out);
	out->inside = l->inside;
	out->outside = l->outside;
	out->samples = l->samples;
	out->lost = l->lost;
	l->inside = l->outside = l->samples = 0;
	l->last = now;
	l->have_last = 1;
	err = 0;
out:
	pthread_mutex_unlock(&l->lock);
	free(names);
	if (err)
		live_snap_release(out);
	return err;
}

void live_snap_release(struct live_snap *s)
{
	free(s->rows);
	free(s->workers);
	memset(s, 0, sizeof(*s));
}

/* ---- a snapshot as bytes -------------------------------------------------- */

#define PACK_MAGIC   0x564c3944u /* "D9LV" */
#define PACK_VERSION 5
#define PACK_MAX     (1u << 20) /* rows, and workers, at most */

struct pack_hdr {
	uint32_t magic, version;
	uint32_t row_size, worker_size;
	uint64_t nrows, nworkers;
	uint64_t time, interval_ns, samples, inside, outside, refused;
	struct live_lost lost;
	double period_ns;
	int32_t by, auto_by;
	uint64_t stacks_task, nstacks;
	struct live_stack stacks[LIVE_STACKS];
	uint64_t nfinds;
	struct live_find finds[LIVE_FINDS];
	struct live_detail detail;
};

int live_snap_pack(const struct live_snap *s, void **buf, size_t *len)
{
	struct pack_hdr h = {
		.magic = PACK_MAGIC,
		.version = PACK_VERSION,
		.row_size = sizeof(struct live_row),
		.worker_size = sizeof(struct live_worker),
		.nrows = s->nrows,
		.nworkers = s->nworkers,
		.time = s->time,
		.interval_ns = s->interval_ns,
		.samples = s->samples,
		.inside = s->inside,
		.outside = s->outside,
		.lost = s->lost,
		.refused = s->refused,
		.period_ns = s->period_ns,
		.by = (int32_t)s->by,
		.auto_by = s->auto_by,
		.stacks_task = s->stacks_task,
		.nstacks = s->nstacks,
		.nfinds = s->nfinds,
	};
	size_t rows = s->nrows * sizeof(*s->rows),
	       workers = s->nworkers * sizeof(*s->workers);
	char *p;

	memcpy(h.stacks, s->stacks, sizeof(h.stacks));
	memcpy(h.finds, s->finds, sizeof(h.finds));
	h.detail = s->detail;
	*len = sizeof(h) + rows + workers;
	p = *buf = malloc(*len);
	if (!p)
		return -ENOMEM;
	memcpy(p, &h, sizeof(h));
	if (rows)
		memcpy(p + sizeof(h), s->rows, rows);
	if (workers)
		memcpy(p + sizeof(h) + rows, s->workers, workers);
	return 0;
}

int live_snap_unpack(const void *buf, size_t len, struct live_snap *s)
{
	const char *p = buf;
	struct pack_hdr h;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	if (h.magic != PACK_MAGIC || h.version != PACK_VERSION ||
	    h.row_size != sizeof(struct live_row) ||
	    h.worker_size != sizeof(struct live_worker) || h.nrows > PACK_MAX ||
	    h.nworkers > PACK_MAX ||
	    len != sizeof(h) + h.nrows * sizeof(struct live_row) +
			    h.nworkers * sizeof(struct live_worker) ||
	    h.by < GROUP_AUTO || h.by > GROUP_SPAN || !(h.period_ns >= 0) ||
	    h.nstacks > LIVE_STACKS || h.nfinds > LIVE_FINDS ||
	    h.detail.nwakers > LIVE_WAKERS)
		return -EBADMSG;
	for (i = 0; i < h.nfinds; i++)
		if (h.finds[i].kind < LIVE_LOST_WAKER || h.finds[i].kind > LIVE_NO_YIELD)
			return -EBADMSG;
	for (i = 0; i < h.nstacks; i++)
		if (h.stacks[i].n > LIVE_STACK_DEPTH)
			return -EBADMSG;
	s->rows = calloc(h.nrows + 1, sizeof(*s->rows));
	s->workers = calloc(h.nworkers + 1, sizeof(*s->workers));
	if (!s->rows || !s->workers) {
		live_snap_release(s);
		return -ENOMEM;
	}
	memcpy(s->rows, p + sizeof(h), h.nrows * sizeof(*s->rows));
	memcpy(s->workers, p + sizeof(h) + h.nrows * sizeof(*s->rows),
	       h.nworkers * sizeof(*s->workers));
	s->nrows = h.nrows;
	s->nworkers = h.nworkers;
	s->time = h.time;
	s->interval_ns = h.interval_ns;
	s->samples = h.samples;
	s->inside = h.inside;
	s->outside = h.outside;
	s->lost = h.lost;
	s->refused = h.refused;
	s->period_ns = h.period_ns;
	s->by = (enum group_by)h.by;
	s->auto_by = !!h.auto_by;
	s->stacks_task = h.stacks_task;
	s->nstacks = h.nstacks;
	memcpy(s->stacks, h.stacks, sizeof(s->stacks));
	s->nfinds = h.nfinds;
	memcpy(s->finds, h.finds, sizeof(s->finds));
	for (i = 0; i < s->nfinds; i++)
		s->finds[i].name[sizeof(s->finds[i].name) - 1] = '\0';
	s->detail = h.detail;
	/* another process wrote it: names end inside, states are states */
	for (i = 0; i < s->nrows; i++) {
		s->rows[i].name[sizeof(s->rows[i].name) - 1] = '\0';
		if ((unsigned int)s->rows[i].state > LIVE_ENDED)
			s->rows[i].state = LIVE_IDLE;
	}
	for (i = 0; i < s->nworkers; i++)
		s->workers[i].name[sizeof(s->workers[i].name) - 1] = '\0';
	return 0;
}
