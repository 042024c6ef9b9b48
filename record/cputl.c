// SPDX-License-Identifier: MIT
/*
 * cputl.c - what ran on each CPU (see cputl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/search.h"
#include "record/cputl.h"

#define NAME_PRUNE_NS 2000000000ULL /* names forgotten at most this often */
#define HOLD_SLOTS    256	    /* distinct threads told apart in a wait */

/* One CPU: switch-ins in time order, entries [head, n) live. */
struct tl {
	uint64_t *time;
	uint32_t *tid;
	size_t head, n, cap;
};

struct name {
	uint32_t tid;
	uint32_t gen; /* the prune generation it was last seen in */
	char comm[16];
};

struct cputl {
	struct tl *cpu;
	size_t ncpu;
	struct name *names;
	size_t nnames, capnames;
	struct lib_map name_of; /* tid -> index in names */
	uint32_t gen;
	uint64_t names_pruned; /* cut of the last prune of names */
};

struct cputl *cputl__new(void)
{
	return calloc(1, sizeof(struct cputl));
}

void cputl__free(struct cputl *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ncpu; i++) {
		free(c->cpu[i].time);
		free(c->cpu[i].tid);
	}
	free(c->cpu);
	free(c->names);
	lib_map_release(&c->name_of);
	free(c);
}

/* Forget the names not seen since generation @keep. */
static void names_prune(struct cputl *c, uint32_t keep)
{
	size_t i, k = 0;

	for (i = 0; i < c->nnames; i++) {
		struct name *x = &c->names[i];

		if (x->gen < keep) {
			lib_map_del(&c->name_of, x->tid);
			continue;
		}
		if (k != i) {
			*lib_map_find(&c->name_of, x->tid) = k;
			c->names[k] = *x;
		}
		k++;
	}
	c->nnames = k;
}

static void name_set(struct cputl *c, uint32_t tid, const char *comm)
{
	const uint64_t *ix = lib_map_find(&c->name_of, tid);
	struct name *x;

	if (ix) {
		x = &c->names[*ix];
	} else {
		if (LIB_GROW(c->names, c->capnames, c->nnames + 1) ||
		    lib_map_set(&c->name_of, tid, c->nnames))
			return; /* a name less */
		x = &c->names[c->nnames++];
		x->tid = tid;
	}
	x->gen = c->gen;
	memcpy(x->comm, comm, sizeof(x->comm));
	x->comm[sizeof(x->comm) - 1] = '\0';
}

const char *cputl__comm(const struct cputl *c, uint32_t tid)
{
	const uint64_t *ix = tid ? lib_map_find(&c->name_of, tid) : NULL;

	return ix ? c->names[*ix].comm : NULL;
}

static void compact(struct tl *t)
{
	memmove(t->time, t->time + t->head, (t->n - t->head) * sizeof(*t->time));
	memmove(t->tid, t->tid + t->head, (t->n - t->head) * sizeof(*t->tid));
	t->n -= t->head;
	t->head = 0;
}

/* Room for one more entry in @t, never past CPUTL_MAX: dead entries go
 * first, then the array grows, then the oldest quarter goes. */
static int room(struct tl *t)
{
	if (t->n < t->cap)
		return 0;
	if (t->head) {
		compact(t);
		return 0;
	}
	if (t->cap < CPUTL_MAX) {
		/* the two arrays grow alike: t->cap is both's */
		size_t tcap = t->cap, icap = t->cap;

		if (LIB_GROW(t->time, tcap, t->n + 1) || LIB_GROW(t->tid, icap, t->n + 1))
			return -ENOMEM;
		t->cap = tcap;
		return 0;
	}
	t->head = CPUTL_MAX / 4;
	compact(t);
	return 0;
}

int cputl__add(struct cputl *c, uint32_t cpu, uint64_t time, uint32_t tid,
	       const char *comm)
{
	struct tl *t;

	if (cpu >= CPUTL_CPUS)
		return -ERANGE;
	if (cpu >= c->ncpu) {
		size_t n = c->ncpu;

		if (LIB_GROW(c->cpu, n, (size_t)cpu + 1))
			return -ENOMEM;
		memset(c->cpu + c->ncpu, 0, (n - c->ncpu) * sizeof(*c->cpu));
		c->ncpu = n;
	}
	t = &c->cpu[cpu];
	if (room(t))
		return -ENOMEM;
	if (t->n > t->head && time < t->time[t->n - 1])
		time = t->time[t->n - 1]; /* never backwards */
	t->time[t->n] = time;
	t->tid[t->n++] = tid;
	if (comm && tid != TRACE_HOLD_IDLE)
		name_set(c, tid, comm);
	return 0;
}

void cputl__prune(struct cputl *c, uint64_t cut)
{
	for (size_t i = 0; i < c->ncpu; i++) {
		struct tl *t = &c->cpu[i];

		while (t->head + 1 < t->n && t->time[t->head + 1] <= cut)
			t->head++;
		if (t->head > t->n / 2)
			compact(t);
	}
	/* names: those not seen in this generation or the last go */
	if (cut - c->names_pruned >= NAME_PRUNE_NS || cut < c->names_pruned) {
		if (c->gen)
			names_prune(c, c->gen - 1);
		c->gen++;
		c->names_pruned = cut;
	}
}

/* 1 if @x goes before @y: more time, then the lower tid */
static int hold_before(const struct trace_hold *x, const struct trace_hold *y)
{
	return x->ns != y->ns ? x->ns > y->ns : x->tid < y->tid;
}

/* Insert @x into @h (@n sorted entries, room for one more). */
static void hold_insert(struct trace_hold *h, size_t n, struct trace_hold x)
{
	while (n && hold_before(&x, &h[n - 1])) {
		h[n] = h[n - 1];
		n--;
	}
	h[n] = x;
}

size_t cputl__holds(const struct cputl *c, uint32_t cpu, uint32_t self, uint64_t from,
		    uint64_t to, struct trace_hold *h)
{
	struct trace_hold v[HOLD_SLOTS];
	uint16_t at[2 * HOLD_SLOTS]; /* tid -> index in v + 1, by hash */
	const struct tl *t;
	uint64_t others = 0;
	size_t lo, n = 0, i, k;

	if (cpu >= c->ncpu || to <= from)
		return 0;
	t = &c->cpu[cpu];
	if (t->n == t->head)
		return 0;
	/* the last entry at or before @from */
	lo = LIB_PARTITION_POINT(t->head, t->n, m, t->time[m] <= from);
	i = lo > t->head ? lo - 1 : t->head;
	if (t->time[i] > from) /* before the oldest entry: not seen */
		v[n++] = (struct trace_hold){TRACE_HOLD_UNKNOWN,
					     (t->time[i] < to ? t->time[i] : to) - from};
	memset(at, 0, sizeof(at));
	for (; i < t->n && t->time[i] < to; i++) {
		uint64_t a = t->time[i] > from ? t->time[i] : from;
		uint64_t b = i + 1 < t->n && t->time[i + 1] < to ? t->time[i + 1] : to;
		uint32_t tid = t->tid[i];

		if (b <= a || tid == self)
			continue;
		for (k = lib_hash64(tid) & (2 * HOLD_SLOTS - 1);
		     at[k] && v[at[k] - 1].tid != tid; k = (k + 1) & (2 * HOLD_SLOTS - 1))
			;
		if (!at[k]) {
			if (n == HOLD_SLOTS) { /* more threads than that: rare */
				others += b - a;
				continue;
			}
			v[n++] = (struct trace_hold){tid, 0};
			at[k] = (uint16_t)n;
		}
		v[at[k] - 1].ns += b - a;
	}
	return cputl__pick_holds(v, n, others, h);
}

size_t cputl__pick_holds(const struct trace_hold *v, size_t n, uint64_t others,
			 struct trace_hold *h)
{
	size_t k, out = 0;

	/* all of them, sorted, when they fit; else the largest but one
	 * and "others" for the rest: a selection, not a sort (a wait among
	 * 400 busy threads has hundreds of holders) */
	if (n <= TRACE_MAX_HOLDS && !others) {
		for (k = 0; k < n; k++)
			hold_insert(h, k, v[k]);
		return n;
	}
	for (k = 0; k < n; k++) {
		if (out < TRACE_MAX_HOLDS - 1) {
			hold_insert(h, out++, v[k]);
		} else if (hold_before(&v[k], &h[out - 1])) {
			others += h[out - 1].ns;
			hold_insert(h, out - 1, v[k]);
		} else {
			others += v[k].ns;
		}
	}
	hold_insert(h, out++, (struct trace_hold){TRACE_HOLD_OTHERS, others});
	return out;
}
