// SPDX-License-Identifier: MIT
/*
 * spanstate.c - the application's open spans, for each segment's
 * SPAN_STATE (spanstate.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/map.h"
#include "record/spanstate.h"

struct open_span {
	struct trace_span rec[1 + SPANSTATE_FIELDS + SPANSTATE_ENTERS];
	unsigned int nfields, nenters;
	size_t bytes; /* its share of spanstate.bytes */
};

/* How long a CLOSE drained before its NEW is remembered: the rings of two
 * threads drain one after the other, so a span closed on one thread may
 * come before its creation on another. */
#define CLOSED_NS 2000000000ULL

struct spanstate {
	struct lib_map ix;     /* span id -> index + 1 */
	struct lib_map closed; /* span id -> its CLOSE's time: not open */
	uint64_t latest;       /* the latest record's time */
	struct open_span *v;
	size_t n, cap;
	struct trace_span *out; /* spanstate__open()'s */
	size_t out_cap;
	uint64_t refused;
	size_t bytes, max_bytes; /* of what is open, about as written; the
				  * most (0: no bound but SPANSTATE_MAX) */
	struct lib_map left_out; /* ids refused, not closed yet (at most
				  * LEFT_OUT_MAX) */
};

/* Refused spans remembered until they close: how many a segment's start
 * lacks (past this many, the count stops growing). */
#define LEFT_OUT_MAX (4 * SPANSTATE_MAX)

/* A record's bytes in a SPAN_STATE chunk, about: its fields and its
 * strings (a bound, not an account: the chunk is compressed). */
static size_t rec_bytes(const struct trace_span *r)
{
	return 48 + (r->name ? strlen(r->name) : 0) + (r->text ? strlen(r->text) : 0);
}

/* Room for @n more bytes? Else one more refused. */
static int room(struct spanstate *ss, size_t n)
{
	if (!ss->max_bytes || ss->bytes + n <= ss->max_bytes)
		return 1;
	ss->refused++;
	return 0;
}

/* Span @id refused: remembered as open and not carried. */
static int left_out(struct spanstate *ss, uint64_t id)
{
	if (lib_map_count(&ss->left_out) >= LEFT_OUT_MAX)
		return 0;
	return lib_map_set(&ss->left_out, id, 1);
}

size_t spanstate__left_out(const struct spanstate *ss)
{
	return lib_map_count(&ss->left_out);
}

void spanstate__set_max_bytes(struct spanstate *ss, size_t max)
{
	ss->max_bytes = max;
}

int spanstate__new(struct spanstate **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void release(struct open_span *o)
{
	for (unsigned int i = 0; i < 1 + o->nfields; i++) {
		free((char *)o->rec[i].name);
		free((char *)o->rec[i].text);
	}
}

void spanstate__free(struct spanstate *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->n; i++)
		release(&ss->v[i]);
	free(ss->v);
	free(ss->out);
	lib_map_release(&ss->ix);
	lib_map_release(&ss->closed);
	lib_map_release(&ss->left_out);
	free(ss);
}

/* A copy of @r with its strings copied; -ENOMEM. */
static int copy(struct trace_span *to, const struct trace_span *r)
{
	*to = *r;
	to->name = r->name ? strdup(r->name) : NULL;
	to->text = r->text ? strdup(r->text) : NULL;
	if ((r->name && !to->name) || (r->text && !to->text)) {
		free((char *)to->name);
		free((char *)to->text);
		to->name = to->text = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Forget the span at index @i (the last one takes its place). */
static void drop(struct spanstate *ss, size_t i)
{
	lib_map_del(&ss->ix, ss->v[i].rec[0].id);
	ss->bytes -= ss->v[i].bytes;
	release(&ss->v[i]);
	if (i != --ss->n) {
		ss->v[i] = ss->v[ss->n];
		*lib_map_find(&ss->ix, ss->v[i].rec[0].id) = i + 1;
	}
}

int spanstate__feed(struct spanstate *ss, const struct trace_span *s)
{
	uint64_t *v = lib_map_find(&ss->ix, s->id);
	struct open_span *o = v ? &ss->v[*v - 1] : NULL;
	unsigned int i;
	uint64_t *c;

	if (s->time > ss->latest)
		ss->latest = s->time;
	switch (s->type) {
	case TRACE_SPAN_NEW:
		if (o)
			drop(ss, *v - 1);
		/* closed already, drained first */
		c = lib_map_find(&ss->closed, s->id);
		if (c && *c >= s->time) {
			lib_map_del(&ss->closed, s->id);
			return 0;
		}
		lib_map_del(&ss->left_out, s->id);
		if (ss->n >= SPANSTATE_MAX) {
			ss->refused++;
			return left_out(ss, s->id);
		}
		if (!room(ss, rec_bytes(s)))
			return left_out(ss, s->id);
		if (LIB_GROW(ss->v, ss->cap, ss->n + 1))
			return -ENOMEM;
		o = &ss->v[ss->n];
		memset(o, 0, sizeof(*o));
		if (copy(&o->rec[0], s))
			return -ENOMEM;
		v = lib_map_get(&ss->ix, s->id, NULL);
		if (!v) {
			release(o);
			return -ENOMEM;
		}
		*v = ++ss->n;
		o->bytes = rec_bytes(s);
		ss->bytes += o->bytes;
		return 0;
	case TRACE_SPAN_FIELD:
		if (!o || o->nfields >= SPANSTATE_FIELDS || !room(ss, rec_bytes(s)))
			return 0;
		if (copy(&o->rec[1 + o->nfields], s))
			return -ENOMEM;
		o->nfields++;
		o->bytes += rec_bytes(s);
		ss->bytes += rec_bytes(s);
		return 0;
	case TRACE_SPAN_ENTER:
		if (o && o->nenters < SPANSTATE_ENTERS && room(ss, 48)) {
			o->rec[1 + SPANSTATE_FIELDS + o->nenters++] =
				(struct trace_span){.time = s->time,
						    .id = s->id,
						    .tid = s->tid,
						    .type = s->type};
			o->bytes += 48;
			ss->bytes += 48;
		}
		return 0;
	case TRACE_SPAN_EXIT:
		/* the latest enter of it on that thread */
		for (i = o ? o->nenters : 0; i-- > 0;) {
			struct trace_span *e = &o->rec[1 + SPANSTATE_FIELDS];

			if (e[i].tid == s->tid) {
				e[i] = e[--o->nenters];
				o->bytes -= 48;
				ss->bytes -= 48;
				break;
			}
		}
		return 0;
	case TRACE_SPAN_CLOSE:
		lib_map_del(&ss->left_out, s->id);
		if (o) {
			drop(ss, *v - 1);
		} else if (lib_map_count(&ss->closed) < SPANSTATE_MAX) {
			c = lib_map_get(&ss->closed, s->id, NULL);
			if (!c)
				return -ENOMEM;
			*c = s->time;
		}
		return 0;
	default:
		return 0;
	}
}

size_t spanstate__open(struct spanstate *ss, const struct trace_span **out)
{
	size_t n = 0, i;
	uint64_t key, *t;

	*out = NULL;
	/* closes whose creation never came: forgotten after a while (the
	 * map made again of the others) */
	if (lib_map_count(&ss->closed)) {
		struct lib_map keep = {0};
		int ok = 1;

		for (i = 0; ok && lib_map_next(&ss->closed, &i, &key, &t);) {
			uint64_t *k;

			if (*t + CLOSED_NS < ss->latest)
				continue;
			k = lib_map_get(&keep, key, NULL);
			if (k)
				*k = *t;
			ok = k != NULL; /* out of memory: keep them all */
		}
		if (ok) {
			lib_map_release(&ss->closed);
			ss->closed = keep;
		} else {
			lib_map_release(&keep);
		}
	}
	for (i = 0; i < ss->n; i++)
		n += 1 + ss->v[i].nfields + ss->v[i].nenters;
	if (!n || LIB_GROW(ss->out, ss->out_cap, n))
		return 0;
	for (i = n = 0; i < ss->n; i++) {
		const struct open_span *o = &ss->v[i];

		memcpy(&ss->out[n], o->rec, (1 + o->nfields) * sizeof(o->rec[0]));
		n += 1 + o->nfields;
		memcpy(&ss->out[n], &o->rec[1 + SPANSTATE_FIELDS],
		       o->nenters * sizeof(o->rec[0]));
		n += o->nenters;
	}
	*out = ss->out;
	return n;
}

uint64_t spanstate__refused(const struct spanstate *ss)
{
	return ss->refused;
}
