// SPDX-License-Identifier: MIT
/*
 * spans.c - the application's spans (trace.spans) as instances with their
 * entered intervals, joined to what the threads that entered them did:
 * CPU samples, blocked and run-queue time, polls of which tasks. What
 * `d9prof spans` and `events` print, and the span filter of `flame
 * --span` (spans__kept_at()).
 *
 * The records are walked once, in time order, and each instance summed
 * into its name's row as it ends: memory holds the instances alive at
 * once and what spans_keep asks to keep whole (every one for
 * spans__at() and the filter; the slowest N for the views).
 *
 * Read with a window (trace.from/to), the trace holds the records of the
 * spans' lives from before it too (trace_decode.c): an instance closed
 * before the window is left out; one that overlaps it keeps its whole
 * life as the trace has it (its creation, its enters before the window),
 * so that its duration and entered time are its own, while its CPU
 * samples and off-CPU time are those inside the window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/hist.h"
#include "lib/map.h"
#include "lib/search.h"
#include "lib/strset.h"
#include "lib/text.h"

#define NONE UINT32_MAX

/* ---- building ----------------------------------------------------------- */

/*
 * The records are built in time order (struct order, below). An instance
 * lives in a slot of the builder from its first record until it is
 * closed and none of its enters is open; then it is finished: summed
 * into its name's row, counted, and kept whole in spans.v if spans_keep
 * says so, else let go. Each enter is accounted as it ends: its length,
 * the samples of its thread inside it, and that thread's off-CPU time
 * inside it. Memory: the slots alive at once, the enters open, those of
 * the instances that may be kept, and what spans_keep keeps.
 */

/* An enter not exited yet: the thread, the instance's slot, where it
 * began. Open enters are nodes of builder.open, each on the stack of its
 * (thread, instance) (builder.top maps tid << 32 | slot to the top node
 * + 1) and in its instance's list, so that an EXIT and a CLOSE find
 * theirs at once, however many are open. */
struct open_enter {
	uint32_t tid;
	uint32_t slot;
	uint64_t start;
	uint64_t seq;	     /* ENTER order */
	uint32_t below;	     /* the one under it on its stack (NONE: none) */
	uint32_t prev, next; /* in its instance's list, in ENTER order */
	uint8_t open_start;
};

/* An instance being built. */
struct live {
	struct span s;
	uint32_t enters; /* its enters ended, in builder.pool (NONE: none) */
	uint32_t first_open, last_open; /* its open enters (NONE: none) */
	int used;
	/* with a window: its parent's slot and seq, and its children alive */
	uint32_t parent_slot, kids;
	uint64_t parent_seq;
};

/* An ended enter of a live instance, chained in builder.pool. */
struct pooled {
	struct span_enter e;
	uint32_t next;
};

/* The samples of the trace by (tid, time), their weights summed: the
 * weight of samples [a, b) is cum[b] - cum[a]. */
struct tsample {
	uint64_t time;
	uint32_t tid, weight;
};

struct samples_by_tid {
	struct tsample *v;
	uint64_t *cum; /* n + 1 */
	size_t n, cap;
};

/* A thread seen ending an enter: its samples and switches, and
 * cursors in them (ends come in time order, starts nearly). */
struct tstate {
	size_t first, n, at;
	uint32_t nopen, refused; /* enters open; ENTERs left out, unpaired */
	const uint32_t *sw;
	size_t nsw, sw_at; /* switches; the first off-CPU at the last
			    * enter's start */
};

struct builder {
	struct spans *sp;
	const struct samples_by_tid *smp;
	const struct offcpu *oc;
	struct lib_map cur; /* application id -> slot + 1 */
	struct live *live;
	size_t nlive, live_cap;
	uint32_t *free;
	size_t nfree, free_cap;
	struct open_enter *open; /* the nodes */
	size_t nodes, open_cap, nopen;
	uint32_t open_free; /* nodes let go, through .below */
	struct lib_map top;
	uint64_t open_seq;
	struct pooled *pool;
	size_t npool, pool_cap;
	uint32_t pool_free;
	struct lib_map threads; /* tid -> index in ts + 1 */
	struct tstate *ts;
	size_t nts, ts_cap;
	struct lib_strset row_names; /* a row's id is its name's */
	struct lib_hist *hist;	     /* the rows' durations */
	size_t rows_cap, hist_cap;
	/* spans_keep.top: sp->v as a heap, the one kept last on top, each
	 * one's enters in kent[] */
	uint32_t *heap;
	size_t nheap, heap_cap;
	struct kept_enters {
		struct span_enter *v;
		size_t n, cap;
	} * kent;
	size_t kent_cap;
	size_t spans_cap, enters_cap, events_cap;
	uint64_t seq;
	uint64_t from;	     /* where records begin: the shim's first */
	uint64_t win_from;   /* a window's start: instances closed before it
			      * are left out */
	struct lib_map gone; /* seq of one left out -> its children alive */
};

/* ---- samples and switches inside an enter ---- */

static int sample_take(void *ctx, const struct trace_sample *s, size_t n)
{
	struct samples_by_tid *x = ctx;

	if (LIB_GROW(x->v, x->cap, x->n + n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		x->v[x->n++] = (struct tsample){.time = s[i].time,
						.tid = s[i].tid,
						.weight = (uint32_t)sample_weight(&s[i])};
	return 0;
}

static int tsample_cmp(const void *a, const void *b)
{
	const struct tsample *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* The trace's samples by thread and time (the order of equal ones does
 * not matter: an enter holds all or none of them). 0, -ENOMEM or the
 * walk's error. */
static int samples_load(const struct trace *t, struct samples_by_tid *x)
{
	int err;

	memset(x, 0, sizeof(*x));
	err = trace__for_each_sample(t, sample_take, x);
	if (err)
		return err;
	if (x->n)
		qsort(x->v, x->n, sizeof(*x->v), tsample_cmp);
	x->cum = malloc((x->n + 1) * sizeof(*x->cum));
	if (!x->cum)
		return -ENOMEM;
	x->cum[0] = 0;
	for (size_t i = 0; i < x->n; i++)
		x->cum[i + 1] = x->cum[i] + x->v[i].weight;
	return 0;
}

static void samples_release(struct samples_by_tid *x)
{
	free(x->v);
	free(x->cum);
}

/* Thread @tid's state, made when first seen. NULL on -ENOMEM. */
static struct tstate *thread_of(struct builder *b, uint32_t tid)
{
	const struct samples_by_tid *x = b->smp;
	uint64_t *v = lib_map_get(&b->threads, tid, NULL);
	struct tstate *t;

	if (!v)
		return NULL;
	if (*v)
		return &b->ts[*v - 1];
	if (LIB_GROW(b->ts, b->ts_cap, b->nts + 1))
		return NULL;
	t = &b->ts[b->nts];
	*v = ++b->nts;
	t->first = LIB_PARTITION_POINT(0, x->n, i, x->v[i].tid < tid);
	t->n = LIB_PARTITION_POINT(t->first, x->n, i, x->v[i].tid <= tid) - t->first;
	t->at = t->first;
	t->nopen = t->refused = 0;
	t->sw = NULL;
	t->nsw = b->oc ? offcpu__thread_switches(b->oc, tid, &t->sw) : 0;
	t->sw_at = 0;
	return t;
}

/* The weight of @t's samples in [@start, @end]. Ends come in time order:
 * the thread's cursor moves on past @end, and an enter holds a few
 * samples before it, else they are searched. */
static uint64_t samples_in(const struct samples_by_tid *x, struct tstate *t,
			   uint64_t start, uint64_t end)
{
	size_t last = t->first + t->n, hi = t->at, lo, k;

	if (hi > t->first && x->v[hi - 1].time > end) {
		hi = LIB_PARTITION_POINT(t->first, hi, i, x->v[i].time <= end);
	} else {
		while (hi < last && x->v[hi].time <= end)
			hi++;
		t->at = hi;
	}
	for (lo = hi, k = 0; lo > t->first && x->v[lo - 1].time >= start; lo--)
		if (++k == 8) {
			lo = LIB_PARTITION_POINT(t->first, lo, i, x->v[i].time < start);
			break;
		}
	return x->cum[hi] - x->cum[lo];
}

static uint64_t clip(uint64_t a, uint64_t b, uint64_t from, uint64_t to)
{
	uint64_t lo = a > from ? a : from, hi = b < to ? b : to;

	return hi > lo ? hi - lo : 0;
}

/* Blocked and run-queue time of @t's thread in [@start, @end], to @s.
 * Does a switch out fall in it? */
static int offcpu_in(const struct builder *b, struct tstate *t, struct span *s,
		     uint64_t start, uint64_t end)
{
	const struct trace_switch *sw = b->oc->trace->switches;
	uint64_t oend = b->oc->end_time;
	size_t lo = t->sw_at;
	int held = 0;

#define SW_END(w) (sw[t->sw[w]].time_in ? sw[t->sw[w]].time_in : oend)
	/* the first still off-CPU at the start: near where the thread's
	 * last enter found it */
	if (lo > 0 && SW_END(lo - 1) >= start)
		lo = LIB_PARTITION_POINT(0, lo, w, SW_END(w) < start);
	else
		while (lo < t->nsw && SW_END(lo) < start)
			lo++;
#undef SW_END
	t->sw_at = lo;
	for (; lo < t->nsw && sw[t->sw[lo]].time <= end; lo++) {
		const struct trace_switch *x = &sw[t->sw[lo]];
		uint64_t in = x->time_in ? x->time_in : oend;
		uint64_t r = x->preempted ? x->time : x->runnable;

		if (!r || r > in)
			r = in;
		s->blocked_ns += clip(x->time, r, start, end);
		s->runq_ns += clip(r, in, start, end);
		held |= x->time >= start;
	}
	return held;
}

/* ---- instances ---- */

/* The instance of id @id now: the one created last with that id, or a new
 * one named by nothing (created before the recording) at @time; with
 * @create, a new one. Its slot, or NONE on -ENOMEM. */
static uint32_t instance(struct builder *b, uint64_t id, uint64_t time, int create)
{
	uint64_t *v = lib_map_get(&b->cur, id, NULL);
	struct live *l;
	uint32_t slot;

	if (!v)
		return NONE;
	if (*v && !create)
		return (uint32_t)(*v - 1);
	if (b->nfree) {
		slot = b->free[--b->nfree];
	} else {
		if (b->nlive >= NONE - 1 || LIB_GROW(b->live, b->live_cap, b->nlive + 1))
			return NONE;
		slot = (uint32_t)b->nlive++;
	}
	l = &b->live[slot];
	memset(l, 0, sizeof(*l));
	l->used = 1;
	l->enters = NONE;
	l->first_open = l->last_open = NONE;
	l->s.id = id;
	l->s.seq = b->seq++;
	l->s.created = create ? time : (b->from < time ? b->from : time);
	l->s.open_start = !create;
	*v = (uint64_t)slot + 1;
	return slot;
}

/* Is @s named @name (NULL: any name)? */
static int named(const struct span *s, const char *name)
{
	const char *n = spans_name(s);

	return !name || n == name || !strcmp(n, name);
}

/* Might @s be kept whole (its enters too; with keep.at, those that hold
 * a sample or a switch out)? */
static int may_keep(const struct spans *sp, const struct span *s)
{
	return sp->keep.all || sp->keep.at || (sp->keep.top && named(s, sp->keep.name));
}

/* Enter @o of a live instance ended at @end: its length, samples and
 * off-CPU time to the instance, and the enter to its chain if the
 * instance may be kept. @dup: an enter of the same instance on the same
 * thread holds this one (its samples count once). */
static int enter_done(struct builder *b, const struct open_enter *o, uint64_t end,
		      int open_end, int dup)
{
	struct tstate *t = thread_of(b, o->tid);
	struct live *l = &b->live[o->slot];
	struct span_enter e = {.start = o->start,
			       .end = end > o->start ? end : o->start,
			       .tid = o->tid,
			       .span = o->slot,
			       .up = NONE,
			       .open_start = o->open_start,
			       .open_end = (uint8_t)open_end};
	uint64_t w;
	uint32_t k;
	int held;

	if (!t)
		return -ENOMEM;
	l->s.nenters++;
	l->s.entered_ns += e.end - e.start;
	w = samples_in(b->smp, t, e.start, e.end);
	if (!dup)
		l->s.samples += w;
	held = w > 0;
	if (b->oc)
		held |= offcpu_in(b, t, &l->s, e.start, e.end);
	if (b->sp->keep.hists) {
		b->sp->nenters_all++;
		if (lib_hist_add(&b->sp->enter_hist, e.end - e.start))
			return -ENOMEM;
	}
	if (b->sp->keep.longer && e.end - e.start > b->sp->keep.enter_longer_ns)
		held = 1;
	if (!may_keep(b->sp, &l->s) || (!b->sp->keep.all && b->sp->keep.at && !held))
		return 0;
	if (b->pool_free != NONE) {
		k = b->pool_free;
		b->pool_free = b->pool[k].next;
	} else {
		if (b->npool >= NONE - 1 || LIB_GROW(b->pool, b->pool_cap, b->npool + 1))
			return -ENOMEM;
		k = (uint32_t)b->npool++;
	}
	b->pool[k] = (struct pooled){.e = e, .next = l->enters};
	l->enters = k;
	return 0;
}

/* Thread @tid entered slot @slot at @start: its open enter pushed, or
 * past SPANS_OPEN_MAX open on the thread counted and left out (and the
 * EXIT it pairs with). 0 or -ENOMEM. */
static int enter_open(struct builder *b, uint32_t tid, uint32_t slot, uint64_t start)
{
	struct tstate *t = thread_of(b, tid);
	struct live *l = &b->live[slot];
	struct open_enter *o;
	uint64_t *top;
	uint32_t k;

	if (!t)
		return -ENOMEM;
	if (t->nopen >= SPANS_OPEN_MAX) {
		t->refused++;
		b->sp->enters_refused++;
		return 0;
	}
	if (!(top = lib_map_get(&b->top, (uint64_t)tid << 32 | slot, NULL)))
		return -ENOMEM;
	if (b->open_free != NONE) {
		k = b->open_free;
		b->open_free = b->open[k].below;
	} else {
		if (b->nodes >= NONE - 1 || LIB_GROW(b->open, b->open_cap, b->nodes + 1))
			return -ENOMEM;
		k = (uint32_t)b->nodes++;
	}
	o = &b->open[k];
	*o = (struct open_enter){.tid = tid,
				 .slot = slot,
				 .start = start,
				 .seq = b->open_seq++,
				 .below = *top ? (uint32_t)(*top - 1) : NONE,
				 .prev = l->last_open,
				 .next = NONE};
	*top = (uint64_t)k + 1;
	if (l->last_open != NONE)
		b->open[l->last_open].next = k;
	else
		l->first_open = k;
	l->last_open = k;
	t->nopen++;
	b->nopen++;
	return 0;
}

/* Open enter @k, the top of its stack, ends at @end. An enter of the same
 * instance under it on its thread holds it: its samples count once. */
static int enter_close(struct builder *b, uint32_t k, uint64_t end, int open_end)
{
	struct open_enter o = b->open[k];
	struct live *l = &b->live[o.slot];
	uint64_t key = (uint64_t)o.tid << 32 | o.slot;
	struct tstate *t = thread_of(b, o.tid);

	if (!t)
		return -ENOMEM;
	if (o.below != NONE)
		*lib_map_find(&b->top, key) = (uint64_t)o.below + 1;
	else
		lib_map_del(&b->top, key);
	if (o.prev != NONE)
		b->open[o.prev].next = o.next;
	else
		l->first_open = o.next;
	if (o.next != NONE)
		b->open[o.next].prev = o.prev;
	else
		l->last_open = o.prev;
	b->open[k].below = b->open_free;
	b->open[k].slot = NONE;
	b->open_free = k;
	t->nopen--;
	b->nopen--;
	return enter_done(b, &o, end, open_end, o.below != NONE);
}

/* Every open enter of @slot ends at @end (its CLOSE): the latest first,
 * each the top of its stack then. */
static int enters_close(struct builder *b, uint32_t slot, uint64_t end)
{
	int err = 0;

	while (!err && b->live[slot].last_open != NONE)
		err = enter_close(b, b->live[slot].last_open, end, 1);
	return err;
}

static int open_seq_desc(const void *a, const void *b, void *ctx)
{
	const struct open_enter *v = ctx;
	uint64_t x = v[*(const uint32_t *)a].seq, y = v[*(const uint32_t *)b].seq;

	return x > y ? -1 : x < y;
}

/* What is still entered at the end ends there: the latest first. */
static int enters_close_all(struct builder *b, uint64_t end)
{
	uint32_t *ix = malloc((b->nopen + 1) * sizeof(*ix));
	size_t n = 0;
	int err = 0;

	if (!ix)
		return -ENOMEM;
	for (size_t k = 0; k < b->nodes; k++)
		if (b->open[k].slot != NONE)
			ix[n++] = (uint32_t)k;
	qsort_r(ix, n, sizeof(*ix), open_seq_desc, b->open);
	for (size_t i = 0; !err && i < n; i++)
		err = enter_close(b, ix[i], end, 1);
	free(ix);
	return err;
}

/* Where an enter of @s whose ENTER the trace lacks began, for its EXIT at
 * @exit: its creation or where the records begin, not after @exit. */
static uint64_t entered_since(const struct builder *b, const struct span *s,
			      uint64_t exit)
{
	uint64_t t = s->created > b->from ? s->created : b->from;

	return t < exit ? t : exit;
}

/* ---- finished instances: rows, counts, the kept ---- */

/* The row of @name, added if new: its index in *@k, the id of @name in
 * builder.row_names (a name whose row could not be made has the next
 * row's id). 0 or -errno. */
static int row_of(struct builder *b, const char *name, size_t *k)
{
	struct spans *sp = b->sp;
	uint32_t id;
	int err = lib_strset_add(&b->row_names, name, strlen(name), &id);

	if (err < 0)
		return err;
	if (id == sp->nrows) {
		if (LIB_GROW(sp->rows, b->rows_cap, sp->nrows + 1) ||
		    LIB_GROW(b->hist, b->hist_cap, sp->nrows + 1))
			return -ENOMEM;
		sp->nrows++;
		memset(&sp->rows[id], 0, sizeof(sp->rows[id]));
		sp->rows[id].name = name;
		lib_hist_init(&b->hist[id]);
	}
	*k = id;
	return 0;
}

static uint64_t duration(const struct span *s)
{
	return s->closed - s->created;
}

/* @s summed into its name's row (the durations in a histogram: exact to
 * LIB_HIST_EXACT, then within 1%, no sort of them all). 0 or -ENOMEM. */
static int row_add(struct builder *b, const struct span *s)
{
	const char *name = spans_name(s);
	uint64_t d = duration(s);
	struct span_row *x;
	size_t k;
	int err = row_of(b, name, &k);

	if (err)
		return err;
	x = &b->sp->rows[k];
	x->total += d;
	x->entered += s->entered_ns;
	x->samples += s->samples;
	x->blocked += s->blocked_ns;
	x->runq += s->runq_ns;
	x->waiting += d > s->entered_ns ? d - s->entered_ns : 0;
	x->open += s->open_start || s->open_end;
	return lib_hist_add(&b->hist[k], d);
}

/* Is @x slower than @y (the same: created first)? The order instances
 * are shown in. */
static int slower(const struct span *x, const struct span *y)
{
	return duration(x) != duration(y) ? duration(x) > duration(y) : x->seq < y->seq;
}

/* b->heap (indexes in sp->v) from @i: the one kept last on top */
static void top_down(struct builder *b, size_t i)
{
	const struct span *v = b->sp->v;

	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t t;

		if (l < b->nheap && slower(&v[b->heap[m]], &v[b->heap[l]]))
			m = l;
		if (l + 1 < b->nheap && slower(&v[b->heap[m]], &v[b->heap[l + 1]]))
			m = l + 1;
		if (m == i)
			return;
		t = b->heap[i];
		b->heap[i] = b->heap[m];
		b->heap[m] = t;
		i = m;
	}
}

static void top_up(struct builder *b, size_t i)
{
	const struct span *v = b->sp->v;

	while (i) {
		size_t p = (i - 1) / 2;
		uint32_t t;

		if (!slower(&v[b->heap[p]], &v[b->heap[i]]))
			return;
		t = b->heap[i];
		b->heap[i] = b->heap[p];
		b->heap[p] = t;
		i = p;
	}
}

/* @l kept at sp->v[@at], its enters to *@e (span: @at): its fields are
 * taken. 0 or -ENOMEM. */
static int keep_at(struct builder *b, struct live *l, size_t at, struct span_enter **e,
		   size_t *n, size_t *cap)
{
	struct spans *sp = b->sp;

	sp->v[at] = l->s;
	l->s.fields = NULL;
	for (uint32_t k = l->enters; k != NONE; k = b->pool[k].next) {
		if (LIB_GROW(*e, *cap, *n + 1))
			return -ENOMEM;
		(*e)[*n] = b->pool[k].e;
		(*e)[(*n)++].span = (uint32_t)at;
	}
	return 0;
}

/* @l kept: appended, or among the spans_keep.top slowest. 0 or
 * -ENOMEM. */
static int keep(struct builder *b, struct live *l)
{
	struct spans *sp = b->sp;
	struct kept_enters *ke;
	size_t at;
	int err, added = sp->n < sp->keep.top;

	if (sp->n >= NONE - 1)
		return -ENOMEM;
	if (sp->keep.all || sp->keep.at || sp->keep.top == SIZE_MAX) {
		if (LIB_GROW(sp->v, b->spans_cap, sp->n + 1))
			return -ENOMEM;
		at = sp->n++;
		return keep_at(b, l, at, &sp->enters, &sp->nenters, &b->enters_cap);
	}
	if (added) {
		if (LIB_GROW(sp->v, b->spans_cap, sp->n + 1) ||
		    LIB_GROW(b->kent, b->kent_cap, sp->n + 1) ||
		    LIB_GROW(b->heap, b->heap_cap, sp->n + 1))
			return -ENOMEM;
		at = sp->n++;
		b->kent[at] = (struct kept_enters){0};
		b->heap[b->nheap++] = (uint32_t)at;
	} else {
		at = b->heap[0];
		if (!slower(&l->s, &sp->v[at]))
			return 0;
		free(sp->v[at].fields);
		b->kent[at].n = 0;
	}
	ke = &b->kent[at];
	err = keep_at(b, l, at, &ke->v, &ke->n, &ke->cap);
	if (added)
		top_up(b, b->nheap - 1);
	else
		top_down(b, 0);
	return err;
}

/* With a window: @l's parent link let go if its parent was left out
 * (closed before the window), and that parent told one child less if it
 * is alive; @l's children told if @l is left out. 0 or -ENOMEM. */
static int parent_left_out(struct builder *b, struct live *l)
{
	const struct live *p = &b->live[l->parent_slot];
	uint64_t *v;

	if (!l->s.parent) {
	} else if (p->used && p->s.seq == l->parent_seq) {
		b->live[l->parent_slot].kids--;
	} else if ((v = lib_map_find(&b->gone, l->parent_seq))) {
		l->s.parent = 0;
		l->s.parent_name = NULL;
		if (!--*v)
			lib_map_del(&b->gone, l->parent_seq);
	}
	if (l->kids && l->s.closed < b->win_from)
		return lib_map_set(&b->gone, l->s.seq, l->kids);
	return 0;
}

/* Slot @slot's instance is done (closed, no enter open): summed, counted,
 * kept if spans_keep says so, and its slot let go. 0 or -ENOMEM. */
static int finish(struct builder *b, uint32_t slot)
{
	struct spans *sp = b->sp;
	struct live *l = &b->live[slot];
	const struct span *s = &l->s;
	uint64_t *v = lib_map_find(&b->cur, s->id);
	int err = 0;

	if (v && *v == (uint64_t)slot + 1)
		lib_map_del(&b->cur, s->id);
	if (b->win_from)
		err = parent_left_out(b, l);
	/* (with a window: one closed before it is left out) */
	if (!err && (!b->win_from || s->closed >= b->win_from)) {
		int matched = named(s, sp->keep.name) && duration(s) >= sp->keep.min_ns;

		sp->ninstances++;
		sp->nover += sp->keep.over_ns && duration(s) >= sp->keep.over_ns;
		sp->nmatched += matched;
		err = row_add(b, s);
		if (!err && sp->keep.each)
			err = sp->keep.each(sp->keep.each_ctx, s);
		if (!err && sp->keep.hists)
			err = lib_hist_add(&sp->life_hist, duration(s));
		if (!err && (sp->keep.all ||
			     (sp->keep.at &&
			      (l->enters != NONE ||
			       (sp->keep.longer && duration(s) > sp->keep.longer_ns))) ||
			     (matched && sp->keep.top)))
			err = keep(b, l);
	}
	free(l->s.fields);
	for (uint32_t k = l->enters, next; k != NONE; k = next) {
		next = b->pool[k].next;
		b->pool[k].next = b->pool_free;
		b->pool_free = k;
	}
	l->used = 0;
	if (!err && LIB_GROW(b->free, b->free_cap, b->nfree + 1))
		err = -ENOMEM;
	if (!err)
		b->free[b->nfree++] = slot;
	return err;
}

/* Finish slot @slot's instance if it is done. */
static int maybe_finish(struct builder *b, uint32_t slot)
{
	const struct live *l = &b->live[slot];

	return l->used && l->s.closed && l->last_open == NONE ? finish(b, slot) : 0;
}

/* "key=value" appended to @s's fields (at most SPAN_FIELDS_MAX bytes:
 * what is over is left out). */
static int add_field(struct span *s, const struct trace_span *r)
{
	char buf[256];
	size_t have = s->fields ? strlen(s->fields) : 0, cap;
	int n;

	if (r->text)
		n = snprintf(buf, sizeof(buf), "%s%s=%s", have ? " " : "",
			     r->name ? r->name : "?", r->text);
	else
		n = snprintf(buf, sizeof(buf), "%s%s=%" PRId64, have ? " " : "",
			     r->name ? r->name : "?", r->value);
	if (n < 0 || have + (size_t)n > SPAN_FIELDS_MAX)
		return 0;
	/* a string: its capacity is at least its length + 1, and growing
	 * from that is growing from less than it may hold */
	cap = s->fields ? have + 1 : 0;
	if (LIB_GROW(s->fields, cap, have + (size_t)n + 1))
		return -ENOMEM;
	memcpy(s->fields + have, buf, (size_t)n + 1);
	return 0;
}

static int record(struct builder *b, const struct trace_span *r)
{
	struct spans *sp = b->sp;
	uint32_t i, old = NONE;
	struct tstate *t;
	uint64_t *v;
	int err;

	switch (r->type) {
	case TRACE_SPAN_NEW: {
		uint64_t *pv =
			r->value ? lib_map_find(&b->cur, (uint64_t)r->value) : NULL;
		const char *pname = pv && *pv ? spans_name(&b->live[*pv - 1].s) : NULL;

		/* an id created again: the one before it ended unseen */
		if ((v = lib_map_find(&b->cur, r->id)) && *v) {
			old = (uint32_t)(*v - 1);
			if (!b->live[old].s.closed) {
				b->live[old].s.closed = r->time;
				b->live[old].s.open_end = 1;
			}
		}
		i = instance(b, r->id, r->time, 1);
		if (i == NONE)
			return -ENOMEM;
		b->live[i].s.name = r->name;
		b->live[i].s.parent = pname ? (uint64_t)r->value : 0;
		b->live[i].s.parent_name = pname;
		if (pname && b->win_from) {
			struct live *p = &b->live[*pv - 1];

			b->live[i].parent_slot = (uint32_t)(*pv - 1);
			b->live[i].parent_seq = p->s.seq;
			p->kids++;
		}
		return old != NONE ? maybe_finish(b, old) : 0;
	}
	case TRACE_SPAN_ENTER:
		i = instance(b, r->id, r->time, 0);
		return i == NONE ? -ENOMEM : enter_open(b, r->tid, i, r->time);
	case TRACE_SPAN_EXIT:
		i = instance(b, r->id, r->time, 0);
		if (i == NONE || !(t = thread_of(b, r->tid)))
			return -ENOMEM;
		v = lib_map_find(&b->top, (uint64_t)r->tid << 32 | i);
		if (v) {
			err = enter_close(b, (uint32_t)(*v - 1), r->time, 0);
		} else if (t->refused) {
			/* (the pair of an ENTER left out) */
			t->refused--;
			err = 0;
		} else {
			/* entered before the records began (or its ENTER was
			 * lost) */
			struct open_enter o = {
				.tid = r->tid,
				.slot = i,
				.start = entered_since(b, &b->live[i].s, r->time),
				.open_start = 1};

			sp->unmatched_exits++;
			err = enter_done(b, &o, r->time, 0, 0);
		}
		return err ? err : maybe_finish(b, i);
	case TRACE_SPAN_CLOSE:
		i = instance(b, r->id, r->time, 0);
		if (i == NONE)
			return -ENOMEM;
		b->live[i].s.closed = r->time;
		/* what is still entered of it ends here */
		err = enters_close(b, i, r->time);
		return err ? err : maybe_finish(b, i);
	case TRACE_SPAN_FIELD:
		i = instance(b, r->id, r->time, 0);
		return i == NONE ? -ENOMEM : add_field(&b->live[i].s, r);
	case TRACE_SPAN_EVENT:
		if (LIB_GROW(sp->events, b->events_cap, sp->nevents + 1))
			return -ENOMEM;
		sp->events[sp->nevents++] = *r;
		return 0;
	}
	return 0;
}

static int enter_cmp(const void *a, const void *b)
{
	const struct span_enter *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* the outer one first */
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->span < y->span ? -1 : x->span > y->span;
}

/* Sorted enters: each one's nearest enclosing enter on its thread. */
static int nest(struct spans *sp)
{
	uint32_t *stack = malloc((sp->nenters + 1) * sizeof(*stack));
	size_t top = 0;

	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < sp->nenters; i++) {
		struct span_enter *e = &sp->enters[i];

		if (i && e->tid != sp->enters[i - 1].tid)
			top = 0;
		while (top && sp->enters[stack[top - 1]].end < e->end)
			top--;
		e->up = top ? stack[top - 1] : NONE;
		stack[top++] = (uint32_t)i;
	}
	free(stack);
	return 0;
}

/* The records in time order (file order for equal times), as a walk
 * gives them in file order: they come in runs already in order (what a
 * thread said, drained); those a window behind the latest are merged
 * through a heap of the runs' heads and built, the rest kept for the
 * next (memory: the records of two windows). A record later than that
 * makes another walk with a window that holds it (a recorder short of
 * CPU drains a thread late), up to SPAN_REORDER_MAX; past that, a record
 * that late is built where it comes, and counted (spans.late_records). */
#define SPAN_REORDER_NS	 250000000ULL
#define SPAN_REORDER_MAX 2000000000ULL

struct run_at {
	size_t at, end;
};

/* A run in the heap: the time of its next record (kept here: a
 * comparison reads no record). */
struct head {
	uint64_t time;
	uint32_t run;
};

struct merge {
	const struct trace_span *v;
	struct run_at *runs;
	struct head *heap; /* runs by their next record's time, the first on top */
	size_t nh;
};

/* Does head @x come before head @y (ties: the earlier run, which is
 * earlier in the file)? */
static int run_first(const struct head *x, const struct head *y)
{
	return x->time != y->time ? x->time < y->time : x->run < y->run;
}

static void merge_down(struct merge *m, size_t i)
{
	struct head h = m->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, f;

		if (l >= m->nh)
			break;
		f = l + 1 < m->nh && run_first(&m->heap[l + 1], &m->heap[l]) ? l + 1 : l;
		if (!run_first(&m->heap[f], &h))
			break;
		m->heap[i] = m->heap[f];
		i = f;
	}
	m->heap[i] = h;
}

/* @v[0..@n) split into runs in time order, their heap made (the
 * arrays reused: *@nr runs). 0 or -ENOMEM. */
static int merge_init(struct merge *m, const struct trace_span *v, size_t n,
		      size_t *runs_cap, size_t *heap_cap, size_t *nr)
{
	*nr = 0;
	m->v = v;
	for (size_t i = 0; i < n; i++) {
		if (i && v[i].time >= v[i - 1].time)
			continue;
		if (*nr >= UINT32_MAX || LIB_GROW(m->runs, *runs_cap, *nr + 1))
			return -ENOMEM;
		if (*nr)
			m->runs[*nr - 1].end = i;
		m->runs[(*nr)++] = (struct run_at){i, n};
	}
	if (LIB_GROW(m->heap, *heap_cap, *nr + 1))
		return -ENOMEM;
	for (m->nh = 0; m->nh < *nr; m->nh++)
		m->heap[m->nh] = (struct head){.time = v[m->runs[m->nh].at].time,
					       .run = (uint32_t)m->nh};
	for (size_t i = m->nh / 2; i-- > 0;)
		merge_down(m, i);
	return 0;
}

/* The next record in time order if before @until (UINT64_MAX: any),
 * else NULL. */
static const struct trace_span *merge_next(struct merge *m, uint64_t until)
{
	struct run_at *r;
	const struct trace_span *s;

	if (!m->nh)
		return NULL;
	r = &m->runs[m->heap[0].run];
	s = &m->v[r->at];
	if (until != UINT64_MAX && s->time >= until)
		return NULL;
	r->at++;
	if (r->at == r->end)
		m->heap[0] = m->heap[--m->nh];
	else
		m->heap[0].time = m->v[r->at].time;
	merge_down(m, 0);
	return s;
}

/* The walk of the records, built in time order */
struct order {
	struct builder *b;
	struct trace_span *v; /* not built yet, in file order */
	size_t n, cap;
	struct merge m;
	size_t runs_cap, heap_cap;
	uint64_t window, seen, released, end;
	uint64_t late_by; /* the lateness of the record that came too late */
	int late;
};

/* Build the records before @until (UINT64_MAX: all), keep the rest. */
static int order_release(struct order *o, uint64_t until)
{
	const struct trace_span *r;
	size_t nr, k, at = 0;
	int err = merge_init(&o->m, o->v, o->n, &o->runs_cap, &o->heap_cap, &nr);

	while (!err && (r = merge_next(&o->m, until))) {
		err = record(o->b, r);
		if (r->time > o->end)
			o->end = r->time;
	}
	/* the runs' rests to the front, in their order */
	for (k = 0; k < nr && !err; k++) {
		size_t m = o->m.runs[k].end - o->m.runs[k].at;

		if (m && at != o->m.runs[k].at)
			memmove(&o->v[at], &o->v[o->m.runs[k].at], m * sizeof(*o->v));
		at += m;
	}
	o->n = at;
	if (until > o->released)
		o->released = until;
	return err;
}

static int order_take(void *ctx, const struct trace_span *s, size_t n)
{
	struct order *o = ctx;

	if (LIB_GROW(o->v, o->cap, o->n + n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i].time < o->released) {
			int err;

			if (o->window < SPAN_REORDER_MAX) {
				o->late = 1;
				o->late_by = o->seen - s[i].time;
				return -EAGAIN;
			}
			o->b->sp->late_records++;
			if ((err = record(o->b, &s[i])))
				return err;
			continue;
		}
		o->v[o->n++] = s[i];
		if (s[i].time <= o->seen)
			continue;
		o->seen = s[i].time;
		/* a window more than the last build: build what is a window
		 * behind the latest record (the buffer holds two) */
		if (o->seen > o->window &&
		    o->seen - o->window >= o->released + o->window) {
			int err = order_release(o, o->seen - o->window);

			if (err)
				return err;
		}
	}
	return 0;
}

static void order_free(struct order *o)
{
	free(o->v);
	free(o->m.runs);
	free(o->m.heap);
}

/* Where the records read begin: the shim's first (join.events_from),
 * which with a window is the window's start or later; but the span
 * records before the window are read too, from the first segment read's
 * start, or the shim's attach if that came later. */
static uint64_t records_from(const struct join *j)
{
	const struct trace *t = j->trace;
	uint64_t from = j->events_from ? j->events_from : j->start_time, seg, v;
	const char *a;

	if (!t->from || !t->nsegments || !(seg = t->segments[0].start) || seg >= from)
		return from;
	a = trace__meta(t, TRACE_META_SHIM_ATTACHED);
	v = a ? strtoull(a, NULL, 10) : 0;
	return v > seg ? v : seg; /* (v <= from: events_from counts it) */
}

static int seq_cmp(const void *a, const void *b, void *ctx)
{
	const struct span *v = ctx;
	uint64_t x = v[*(const uint32_t *)a].seq, y = v[*(const uint32_t *)b].seq;

	return x < y ? -1 : x > y;
}

static void builder_release(struct builder *b)
{
	for (size_t i = 0; i < b->nlive; i++)
		if (b->live[i].used)
			free(b->live[i].s.fields);
	free(b->live);
	free(b->free);
	free(b->open);
	free(b->pool);
	lib_map_release(&b->cur);
	lib_map_release(&b->threads);
	free(b->ts);
	lib_strset_release(&b->row_names);
	lib_map_release(&b->top);
	lib_map_release(&b->gone);
	for (size_t i = 0; i < b->sp->nrows; i++)
		lib_hist_release(&b->hist[i]);
	free(b->hist);
	free(b->heap);
	for (size_t i = 0; b->kent && i < b->sp->n; i++)
		free(b->kent[i].v);
	free(b->kent);
}

/* The rows' figures from their histograms; the top kept's enters
 * gathered; v in creation order, the enters sorted and nested. 0 or
 * -ENOMEM. */
static int conclude(struct builder *b)
{
	struct spans *sp = b->sp;
	uint32_t *ix, *at;
	struct span *v;
	size_t i;

	for (i = 0; i < sp->nrows; i++) {
		struct span_row *r = &sp->rows[i];

		r->n = b->hist[i].n;
		r->max = b->hist[i].max;
		r->p50 = lib_hist_quantile(&b->hist[i], 50, 100);
		r->p99 = lib_hist_quantile(&b->hist[i], 99, 100);
	}
	for (i = 0; b->kent && i < sp->n; i++) {
		const struct kept_enters *ke = &b->kent[i];

		if (LIB_GROW(sp->enters, b->enters_cap, sp->nenters + ke->n))
			return -ENOMEM;
		memcpy(&sp->enters[sp->nenters], ke->v, ke->n * sizeof(*ke->v));
		sp->nenters += ke->n;
	}
	/* kept as they finished: in creation order again */
	ix = malloc((sp->n + 1) * sizeof(*ix));
	at = malloc((sp->n + 1) * sizeof(*at));
	v = malloc((sp->n + 1) * sizeof(*v));
	if (!ix || !at || !v) {
		free(ix);
		free(at);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < sp->n; i++)
		ix[i] = (uint32_t)i;
	qsort_r(ix, sp->n, sizeof(*ix), seq_cmp, sp->v);
	for (i = 0; i < sp->n; i++) {
		v[i] = sp->v[ix[i]];
		at[ix[i]] = (uint32_t)i;
	}
	for (i = 0; i < sp->nenters; i++)
		sp->enters[i].span = at[sp->enters[i].span];
	free(sp->v);
	sp->v = v;
	b->spans_cap = sp->n + 1;
	free(ix);
	free(at);
	if (sp->nenters)
		qsort(sp->enters, sp->nenters, sizeof(*sp->enters), enter_cmp);
	return nest(sp);
}

/* @j's trace's span records built into *@out, a window of @window
 * behind the latest in time order: 0, -EAGAIN if one came later than
 * that (by *@late_by), -ENOMEM or a walk's error. */
static int build(const struct join *j, const struct offcpu *oc,
		 const struct samples_by_tid *smp, const struct spans_keep *keep,
		 uint64_t window, uint64_t *late_by, struct spans **out)
{
	const struct trace *t = j->trace;
	struct builder b = {.smp = smp,
			    .oc = oc,
			    .pool_free = NONE,
			    .open_free = NONE,
			    .from = records_from(j),
			    .win_from = t->from};
	struct order o = {.b = &b, .window = window, .end = j->end_time};
	struct spans *sp;
	int err = 0;

	*out = NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->join = j;
	sp->period_ns = analysis_period_ns(t);
	sp->keep = *keep;
	lib_hist_init(&sp->enter_hist);
	lib_hist_init(&sp->life_hist);
	b.sp = sp;
	if (keep->each)
		err = keep->each(keep->each_ctx, NULL);
	/* none, or not read (TRACE_READ_NO_SPANS): no walk */
	if (!err && t->nspans) {
		err = trace__for_each_span(t, order_take, &o);
		if (!err)
			err = order_release(&o, UINT64_MAX);
	}
	/* still entered at the end, or never closed: to the recording end */
	if (!err)
		err = enters_close_all(&b, o.end);
	for (size_t i = 0; !err && i < b.nlive; i++) {
		struct live *l = &b.live[i];

		if (!l->used)
			continue;
		if (!l->s.closed) {
			l->s.closed = o.end > l->s.created ? o.end : l->s.created;
			l->s.open_end = 1;
		}
		err = finish(&b, (uint32_t)i);
	}
	if (!err)
		err = conclude(&b);
	order_free(&o);
	builder_release(&b);
	if (err) {
		spans__free(sp);
		*late_by = o.late_by;
		return o.late ? -EAGAIN : err;
	}
	*out = sp;
	return 0;
}

int spans__new_keep(const struct join *j, const struct offcpu *oc,
		    const struct spans_keep *keep, struct spans **out)
{
	uint64_t window = SPAN_REORDER_NS, late_by = 0;
	struct samples_by_tid smp;
	int err;

	*out = NULL;
	err = samples_load(j->trace, &smp);
	while (!err) {
		err = build(j, oc, &smp, keep, window, &late_by, out);
		if (err != -EAGAIN)
			break;
		/* a window that holds the late record, and more: up to the
		 * most, which takes every record */
		window = window * 4 > late_by * 2 ? window * 4 : late_by * 2;
		if (window > SPAN_REORDER_MAX)
			window = SPAN_REORDER_MAX;
		err = 0;
	}
	samples_release(&smp);
	return err;
}

int spans__new(const struct join *j, const struct offcpu *oc, struct spans **out)
{
	return spans__new_keep(j, oc, &(struct spans_keep){.all = 1}, out);
}

void spans__free(struct spans *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->n; i++)
		free(sp->v[i].fields);
	free(sp->v);
	free(sp->enters);
	free(sp->rows);
	free(sp->events);
	lib_hist_release(&sp->enter_hist);
	lib_hist_release(&sp->life_hist);
	free(sp);
}

/* ---- accounting ----------------------------------------------------------- */

/* The first enter of thread @tid in sp->enters, and how many it has. */
static size_t thread_enters(const struct spans *sp, uint32_t tid, size_t *first)
{
	size_t a = LIB_PARTITION_POINT(0, sp->nenters, i, sp->enters[i].tid < tid);

	*first = a;
	return LIB_PARTITION_POINT(a, sp->nenters, i, sp->enters[i].tid <= tid) - a;
}

/* The innermost enter of @tid holding @time, or NONE; its enclosing ones
 * follow through .up. */
static uint32_t enter_at(const struct spans *sp, uint32_t tid, uint64_t time)
{
	size_t first, n = thread_enters(sp, tid, &first), lo;
	uint32_t k;

	lo = LIB_PARTITION_POINT(first, first + n, i, sp->enters[i].start <= time);
	if (lo == first)
		return NONE;
	for (k = (uint32_t)(lo - 1); k != NONE && sp->enters[k].end < time;
	     k = sp->enters[k].up)
		;
	return k;
}

/* ---- selection ------------------------------------------------------------ */

const char *spans_name(const struct span *s)
{
	return s->name ? s->name : s->open_start ? SPANS_UNNAMED : SPANS_NO_NAME;
}

int spans__built_for(const struct spans *sp, const char *name, uint64_t min_ns)
{
	return sp->keep.all || (min_ns == sp->keep.min_ns && !name == !sp->keep.name &&
				(!name || !strcmp(name, sp->keep.name)));
}

int spans__select(struct spans *sp, const char *name, uint64_t min_ns)
{
	size_t n = 0;

	if (!spans__built_for(sp, name, min_ns))
		return -EINVAL;
	for (size_t i = 0; i < sp->n; i++) {
		struct span *s = &sp->v[i];

		s->kept = named(s, name) && duration(s) >= min_ns;
		n += s->kept;
	}
	sp->nkept = sp->keep.all ? n : sp->nmatched;
	sp->selected = 1;
	return sp->nkept ? 0 : -ENOENT;
}

int32_t spans__at(const struct spans *sp, uint32_t tid, uint64_t time)
{
	uint32_t k = sp ? enter_at(sp, tid, time) : NONE;

	return k == NONE ? -1 : (int32_t)sp->enters[k].span;
}

size_t spans__chain_at(const struct spans *sp, uint32_t tid, uint64_t time, int32_t *v,
		       size_t max)
{
	size_t n = 0;

	for (uint32_t k = sp ? enter_at(sp, tid, time) : NONE; k != NONE && n < max;
	     k = sp->enters[k].up)
		v[n++] = (int32_t)sp->enters[k].span;
	return n;
}

uint64_t spans__enter_end(const struct spans *sp, uint32_t tid, uint64_t time)
{
	uint32_t k = sp ? enter_at(sp, tid, time) : NONE;

	return k == NONE ? UINT64_MAX : sp->enters[k].end;
}

int spans__kept_at(const struct spans *sp, uint32_t tid, uint64_t time)
{
	for (uint32_t k = enter_at(sp, tid, time); k != NONE; k = sp->enters[k].up)
		if (!sp->selected || sp->v[sp->enters[k].span].kept)
			return 1;
	return 0;
}

/* ---- what the views choose and say of the spans --------------------------- */

/* The instances @o keeps, in *@ix; their number. */
size_t spans__chosen(const struct spans *sp, const struct spans_opts *o, uint32_t *ix)
{
	size_t n = 0;

	for (size_t i = 0; i < sp->n; i++) {
		const struct span *s = &sp->v[i];

		if (o->name && strcmp(spans_name(s), o->name))
			continue;
		if (o->instances && duration(s) < o->min_ns)
			continue;
		ix[n++] = (uint32_t)i;
	}
	return n;
}

static int dur_desc(const void *a, const void *b, void *ctx)
{
	const struct spans *sp = ctx;
	uint64_t x = duration(&sp->v[*(const uint32_t *)a]);
	uint64_t y = duration(&sp->v[*(const uint32_t *)b]);

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The instances @o explains, of the @n in @ix (spans__chosen()): the slowest
 * first, @o->limit of them (0: all); their number. (Without
 * spans_keep.all, @ix holds the slowest already: spans__new_keep() keeps
 * them in a heap as the instances end.) */
size_t spans__slowest(const struct spans *sp, const struct spans_opts *o, uint32_t *ix,
		      size_t n)
{
	qsort_r(ix, n, sizeof(*ix), dur_desc, (void *)sp);
	return o->limit && o->limit < n ? o->limit : n;
}

int spans__list_polls(const struct spans *sp, struct join *j, const struct spans_opts *o)
{
	struct join_window *w = NULL;
	size_t n, shown, k = 0;
	uint32_t *ix;
	int err = -ENOMEM;

	if (!o->instances || !j->polls || j->nlisted == j->npolls || !sp->n)
		return 0; /* none explained, or every poll listed */
	ix = malloc(sp->n * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	n = spans__chosen(sp, o, ix);
	shown = spans__slowest(sp, o, ix, n);
	/* the enters of those shown: ix sorted by index for a lookup */
	qsort(ix, shown, sizeof(*ix), u32_cmp);
	w = malloc((sp->nenters + 1) * sizeof(*w));
	if (!w)
		goto out;
	for (size_t e = 0; e < sp->nenters; e++) {
		const struct span_enter *x = &sp->enters[e];

		if (bsearch(&x->span, ix, shown, sizeof(*ix), u32_cmp))
			w[k++] = (struct join_window){x->tid, x->start, x->end};
	}
	err = join__list_more(j, w, k);
out:
	free(w);
	free(ix);
	return err;
}

size_t analysis_spans_over(const struct spans *sp, uint64_t min_ns,
			   const struct span **worst)
{
	size_t n = 0;

	*worst = NULL;
	for (size_t i = 0; i < sp->n; i++) {
		const struct span *s = &sp->v[i];

		if (duration(s) < min_ns)
			continue;
		n++;
		if (!*worst || duration(s) > duration(*worst))
			*worst = s;
	}
	/* (without keep.all: counted as they closed) */
	return sp->keep.all ? n : sp->nover;
}

int span_filter_note(const struct span_filter *f, uint64_t weight, const char *unit,
		     char *buf, size_t len)
{
	char name[256], dur[32];

	if (!span_filter_on(f))
		return 0;
	analysis_clean_name(f->name ? f->name : "", name, sizeof(name));
	return snprintf(buf, len,
			"; only while %zu spans%s%s%s%s were entered: %" PRIu64 " %s",
			f->spans->nkept, f->name ? " named " : "", name,
			f->min_ns ? " of at least " : "",
			f->min_ns ? text_duration(f->min_ns, dur, sizeof(dur)) : "",
			weight, unit);
}
