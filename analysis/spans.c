// SPDX-License-Identifier: MIT
/*
 * spans.c - the application's spans (trace.spans) as instances with their
 * entered intervals, joined to what the threads that entered them did:
 * CPU samples, blocked and run-queue time, polls of which tasks. What
 * `d9prof spans` and `events` print, and the span filter of `flame
 * --span` (spans__kept_at()).
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

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "lib/search.h"

#define NONE UINT32_MAX

/* ---- building ----------------------------------------------------------- */

/* An enter not exited yet: the thread, the span, where it began. */
struct open_enter {
	uint32_t tid;
	uint32_t span;
	uint64_t start;
	uint8_t open_start;
};

struct builder {
	struct spans *sp;
	struct lib_map cur; /* application id -> instance index + 1 */
	struct open_enter *open;
	size_t nopen, open_cap;
	size_t spans_cap, enters_cap, events_cap;
	uint64_t from; /* where records begin: the shim's first */
};

/* The instance of id @id now: the one created last with that id, or a new
 * one named by nothing (created before the recording) at @time. Its
 * index, or NONE on -ENOMEM. */
static uint32_t instance(struct builder *b, uint64_t id, uint64_t time, int create)
{
	struct spans *sp = b->sp;
	uint64_t *v = lib_map_get(&b->cur, id, NULL);
	struct span *s;

	if (!v)
		return NONE;
	if (*v && !create)
		return (uint32_t)(*v - 1);
	if (sp->n >= NONE - 1 || LIB_GROW(sp->v, b->spans_cap, sp->n + 1))
		return NONE;
	s = &sp->v[sp->n];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->created = create ? time : (b->from < time ? b->from : time);
	s->open_start = !create;
	*v = ++sp->n;
	return (uint32_t)(sp->n - 1);
}

/* Open enter @o ended at @end: one of sp->enters. */
static int enter_add(struct builder *b, const struct open_enter *o, uint64_t end,
		     int open_end)
{
	struct spans *sp = b->sp;

	if (LIB_GROW(sp->enters, b->enters_cap, sp->nenters + 1))
		return -ENOMEM;
	sp->enters[sp->nenters++] =
		(struct span_enter){.start = o->start,
				    .end = end > o->start ? end : o->start,
				    .tid = o->tid,
				    .span = o->span,
				    .up = NONE,
				    .open_start = o->open_start,
				    .open_end = (uint8_t)open_end};
	return 0;
}

/* b->open stays in ENTER order, as open_find() needs it to take the
 * latest enter of a span re-entered on its thread: what is closed is
 * taken out, not swapped with the last. */
static int enter_close(struct builder *b, size_t k, uint64_t end, int open_end)
{
	int err = enter_add(b, &b->open[k], end, open_end);

	if (err)
		return err;
	memmove(&b->open[k], &b->open[k + 1], (b->nopen - k - 1) * sizeof(*b->open));
	b->nopen--;
	return 0;
}

/* Every open enter of @span ends at @end (its CLOSE), in one pass. */
static int enters_close(struct builder *b, uint32_t span, uint64_t end)
{
	size_t k, m = 0;
	int err;

	for (k = 0; k < b->nopen; k++) {
		if (b->open[k].span != span)
			b->open[m++] = b->open[k];
		else if ((err = enter_add(b, &b->open[k], end, 1)))
			return err;
	}
	b->nopen = m;
	return 0;
}

/* The open enter of @span on @tid, the latest; SIZE_MAX if none (b->open
 * is in ENTER order). */
static size_t open_find(const struct builder *b, uint32_t tid, uint32_t span)
{
	for (size_t k = b->nopen; k-- > 0;)
		if (b->open[k].tid == tid && (span == NONE || b->open[k].span == span))
			return k;
	return SIZE_MAX;
}

/* Where an enter of @s whose ENTER the trace lacks began, for its EXIT at
 * @exit: its creation or where the records begin, not after @exit. */
static uint64_t entered_since(const struct builder *b, const struct span *s,
			      uint64_t exit)
{
	uint64_t t = s->created > b->from ? s->created : b->from;

	return t < exit ? t : exit;
}

/* "key=value" appended to @s's fields (at most SPAN_FIELDS_MAX bytes:
 * what is over is left out). */
static int add_field(struct span *s, const struct trace_span *r)
{
	char buf[256];
	size_t have = s->fields ? strlen(s->fields) : 0;
	int n;
	char *f;

	if (r->text)
		n = snprintf(buf, sizeof(buf), "%s%s=%s", have ? " " : "",
			     r->name ? r->name : "?", r->text);
	else
		n = snprintf(buf, sizeof(buf), "%s%s=%" PRId64, have ? " " : "",
			     r->name ? r->name : "?", r->value);
	if (n < 0 || have + (size_t)n > SPAN_FIELDS_MAX)
		return 0;
	f = realloc(s->fields, have + (size_t)n + 1);
	if (!f)
		return -ENOMEM;
	memcpy(f + have, buf, (size_t)n + 1);
	s->fields = f;
	return 0;
}

static int record(struct builder *b, const struct trace_span *r)
{
	struct spans *sp = b->sp;
	uint32_t i;
	size_t k;

	switch (r->type) {
	case TRACE_SPAN_NEW: {
		uint64_t *pv =
			r->value ? lib_map_find(&b->cur, (uint64_t)r->value) : NULL;
		uint32_t parent = pv ? (uint32_t)*pv : 0;

		/* an id created again: the one before it ended unseen */
		if (lib_map_find(&b->cur, r->id)) {
			i = instance(b, r->id, r->time, 0);
			if (!sp->v[i].closed) {
				sp->v[i].closed = r->time;
				sp->v[i].open_end = 1;
			}
		}
		i = instance(b, r->id, r->time, 1);
		if (i == NONE)
			return -ENOMEM;
		sp->v[i].name = r->name;
		sp->v[i].parent = parent;
		return 0;
	}
	case TRACE_SPAN_ENTER:
		i = instance(b, r->id, r->time, 0);
		if (i == NONE || LIB_GROW(b->open, b->open_cap, b->nopen + 1))
			return -ENOMEM;
		b->open[b->nopen++] =
			(struct open_enter){.tid = r->tid, .span = i, .start = r->time};
		return 0;
	case TRACE_SPAN_EXIT:
		i = instance(b, r->id, r->time, 0);
		if (i == NONE)
			return -ENOMEM;
		k = open_find(b, r->tid, i);
		if (k != SIZE_MAX)
			return enter_close(b, k, r->time, 0);
		/* entered before the records began (or its ENTER was lost) */
		if (LIB_GROW(b->open, b->open_cap, b->nopen + 1))
			return -ENOMEM;
		b->open[b->nopen++] =
			(struct open_enter){.tid = r->tid,
					    .span = i,
					    .start = entered_since(b, &sp->v[i], r->time),
					    .open_start = 1};
		sp->unmatched_exits++;
		return enter_close(b, b->nopen - 1, r->time, 0);
	case TRACE_SPAN_CLOSE:
		i = instance(b, r->id, r->time, 0);
		if (i == NONE)
			return -ENOMEM;
		sp->v[i].closed = r->time;
		/* what is still entered of it ends here */
		return enters_close(b, i, r->time);
	case TRACE_SPAN_FIELD:
		i = instance(b, r->id, r->time, 0);
		return i == NONE ? -ENOMEM : add_field(&sp->v[i], r);
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
 * makes a second walk that keeps them all to the end. */
#define SPAN_REORDER_NS 250000000ULL

struct run_at {
	size_t at, end;
};

struct merge {
	const struct trace_span *v;
	struct run_at *runs;
	uint32_t *heap; /* runs by their next record's time, the first on top */
	size_t nh;
};

/* Does run @x's next record come before run @y's (ties: the earlier run,
 * which is earlier in the file)? */
static int run_first(const struct merge *m, uint32_t x, uint32_t y)
{
	uint64_t a = m->v[m->runs[x].at].time, b = m->v[m->runs[y].at].time;

	return a != b ? a < b : x < y;
}

static void merge_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, f = i;
		uint32_t t;

		if (l < m->nh && run_first(m, m->heap[l], m->heap[f]))
			f = l;
		if (l + 1 < m->nh && run_first(m, m->heap[l + 1], m->heap[f]))
			f = l + 1;
		if (f == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[f];
		m->heap[f] = t;
		i = f;
	}
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
		m->heap[m->nh] = (uint32_t)m->nh;
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
	r = &m->runs[m->heap[0]];
	s = &m->v[r->at];
	if (until != UINT64_MAX && s->time >= until)
		return NULL;
	r->at++;
	if (r->at == r->end)
		m->heap[0] = m->heap[--m->nh];
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
			o->late = 1;
			return -EAGAIN;
		}
		o->v[o->n++] = s[i];
		if (s[i].time <= o->seen)
			continue;
		o->seen = s[i].time;
		/* a window more than the last build: build what is a window
		 * behind the latest record (the buffer holds two) */
		if (o->window != UINT64_MAX && o->seen > o->window &&
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

/* Leave out the instances closed before @from, and their enters; the
 * others keep their order (creation) and their parents if kept. 0 or
 * -ENOMEM. */
static int drop_closed_before(struct spans *sp, uint64_t from)
{
	uint32_t *map;
	size_t i, n = 0, m = 0;

	for (i = 0; i < sp->n && sp->v[i].closed >= from; i++)
		;
	if (i == sp->n)
		return 0;
	map = malloc(sp->n * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (i = 0; i < sp->n; i++) {
		struct span *s = &sp->v[i];

		if (s->closed < from) {
			free(s->fields);
			map[i] = NONE;
			continue;
		}
		map[i] = (uint32_t)n;
		sp->v[n++] = *s;
	}
	sp->n = n;
	for (i = 0; i < n; i++) {
		struct span *s = &sp->v[i];

		if (s->parent)
			s->parent =
				map[s->parent - 1] == NONE ? 0 : map[s->parent - 1] + 1;
	}
	for (i = 0; i < sp->nenters; i++) {
		struct span_enter *e = &sp->enters[i];

		if (map[e->span] == NONE)
			continue;
		e->span = map[e->span];
		sp->enters[m++] = *e;
	}
	sp->nenters = m;
	free(map);
	return 0;
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

static int span_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct spans *sp = ctx;

	for (size_t m = 0; m < n; m++) {
		uint32_t last = NONE;

		for (uint32_t k = enter_at(sp, s[m].tid, s[m].time); k != NONE;
		     k = sp->enters[k].up) {
			uint32_t i = sp->enters[k].span;

			if (i != last) /* a span entered again inside itself: once */
				sp->v[i].samples += sample_weight(&s[m]);
			last = i;
		}
	}
	return 0;
}

static uint64_t clip(uint64_t a, uint64_t b, uint64_t from, uint64_t to)
{
	uint64_t lo = a > from ? a : from, hi = b < to ? b : to;

	return hi > lo ? hi - lo : 0;
}

/* Blocked and run-queue time of each enter's thread inside it. */
static void span_offcpu(struct spans *sp, const struct offcpu *oc)
{
	const struct trace *t = oc->trace;
	const uint32_t *sw = NULL;
	size_t m = 0;

	for (size_t i = 0; i < sp->nenters; i++) {
		const struct span_enter *e = &sp->enters[i];
		struct span *s = &sp->v[e->span];
		size_t lo;

		/* (enters come by thread: its switches once a thread) */
		if (!i || e->tid != sp->enters[i - 1].tid)
			m = offcpu__thread_switches(oc, e->tid, &sw);

		/* the first still off-CPU at the enter's start */
		lo = LIB_PARTITION_POINT(0, m, w,
					 (t->switches[sw[w]].time_in
						  ? t->switches[sw[w]].time_in
						  : oc->end_time) < e->start);
		for (; lo < m && t->switches[sw[lo]].time <= e->end; lo++) {
			const struct trace_switch *x = &t->switches[sw[lo]];
			uint64_t in = x->time_in ? x->time_in : oc->end_time;
			uint64_t r = x->preempted ? x->time : x->runnable;

			if (!r || r > in)
				r = in;
			s->blocked_ns += clip(x->time, r, e->start, e->end);
			s->runq_ns += clip(r, in, e->start, e->end);
		}
	}
}

/* @j's trace's span records built into *@out, a window of @window
 * behind the latest in time order (UINT64_MAX: all at the end): 0,
 * -EAGAIN if one came later than that, -ENOMEM or a walk's error. */
static int build(const struct join *j, uint64_t window, struct spans **out)
{
	const struct trace *t = j->trace;
	struct builder b = {.from = records_from(j)};
	struct order o = {.b = &b, .window = window, .end = j->end_time};
	struct spans *sp;
	int err = -ENOMEM;

	*out = NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->join = j;
	sp->period_ns = analysis_period_ns(t);
	b.sp = sp;
	/* none, or not read (TRACE_READ_NO_SPANS): no walk */
	if (t->nspans && !lib_map_init(&b.cur, 64)) {
		err = trace__for_each_span(t, order_take, &o);
		if (!err)
			err = order_release(&o, UINT64_MAX);
	} else if (!t->nspans) {
		err = 0;
	}
	/* still entered at the end, or never closed: to the recording end */
	while (!err && b.nopen)
		err = enter_close(&b, b.nopen - 1, o.end, 1);
	for (size_t i = 0; !err && i < sp->n; i++)
		if (!sp->v[i].closed) {
			sp->v[i].closed =
				o.end > sp->v[i].created ? o.end : sp->v[i].created;
			sp->v[i].open_end = 1;
		}
	order_free(&o);
	free(b.open);
	lib_map_release(&b.cur);
	if (err) {
		spans__free(sp);
		return o.late ? -EAGAIN : err;
	}
	*out = sp;
	return 0;
}

int spans__new(const struct join *j, const struct offcpu *oc, struct spans **out)
{
	const struct trace *t = j->trace;
	struct spans *sp;
	size_t i;
	int err;

	*out = NULL;
	err = build(j, SPAN_REORDER_NS, &sp);
	if (err == -EAGAIN)
		err = build(j, UINT64_MAX, &sp);
	if (err)
		return err;
	if (t->from && (err = drop_closed_before(sp, t->from)))
		goto fail;
	if (sp->nenters)
		qsort(sp->enters, sp->nenters, sizeof(*sp->enters), enter_cmp);
	err = nest(sp);
	if (err)
		goto fail;
	for (i = 0; i < sp->nenters; i++) {
		struct span *s = &sp->v[sp->enters[i].span];

		s->entered_ns += sp->enters[i].end - sp->enters[i].start;
		s->nenters++;
	}
	err = trace__for_each_sample(t, span_samples, sp);
	if (err)
		goto fail;
	if (oc)
		span_offcpu(sp, oc);
	*out = sp;
	return 0;
fail:
	spans__free(sp);
	return err;
}

void spans__free(struct spans *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->n; i++)
		free(sp->v[i].fields);
	free(sp->v);
	free(sp->enters);
	free(sp->events);
	free(sp);
}

/* ---- selection ------------------------------------------------------------ */

const char *spans_name(const struct span *s)
{
	return s->name ? s->name : s->open_start ? SPANS_UNNAMED : SPANS_NO_NAME;
}

int spans__select(struct spans *sp, const char *name, uint64_t min_ns)
{
	sp->nkept = 0;
	for (size_t i = 0; i < sp->n; i++) {
		struct span *s = &sp->v[i];

		s->kept = (!name || !strcmp(spans_name(s), name)) &&
			  s->closed - s->created >= min_ns;
		sp->nkept += s->kept;
	}
	sp->selected = 1;
	return sp->nkept ? 0 : -ENOENT;
}

int32_t spans__at(const struct spans *sp, uint32_t tid, uint64_t time)
{
	uint32_t k = sp ? enter_at(sp, tid, time) : NONE;

	return k == NONE ? -1 : (int32_t)sp->enters[k].span;
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
