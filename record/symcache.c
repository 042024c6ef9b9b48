// SPDX-License-Identifier: MIT
/*
 * symcache.c - remembered symbolizations (symcache.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "record/symcache.h"

struct entry {
	uint64_t addr;
	const char *sym, *module;	/* interned; NULL as answered */
	uint64_t offset;
	const char **inl;		/* interned names, ninl of them */
	uint32_t ninl;
	uint8_t kernel;
	int used;
};

struct symcache {
	trace_resolve_fn resolve;
	void *ctx;
	struct entry *v;
	size_t cap, n;			/* open addressing, cap a power of 2 */
	char **strs;			/* interned strings, open addressing */
	size_t scap, sn;
	uint64_t resolved, lookups;
};

int symcache__new(trace_resolve_fn resolve, void *ctx, struct symcache **out)
{
	struct symcache *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->resolve = resolve;
	c->ctx = ctx;
	return 0;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].inl);
	for (size_t i = 0; i < c->scap; i++)
		free(c->strs[i]);
	free(c->v);
	free(c->strs);
	free(c);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int grow_strs(struct symcache *c)
{
	size_t cap = c->scap ? c->scap * 2 : 1024;
	char **v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->scap; i++) {
		size_t j;

		if (!c->strs[i])
			continue;
		for (j = hash_str(c->strs[i]) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
			;
		v[j] = c->strs[i];
	}
	free(c->strs);
	c->strs = v;
	c->scap = cap;
	return 0;
}

/* @s interned (NULL stays NULL); -ENOMEM leaves *@out NULL. */
static int intern(struct symcache *c, const char *s, const char **out)
{
	size_t i;

	*out = NULL;
	if (!s)
		return 0;
	if ((c->sn + 1) * 2 > c->scap && grow_strs(c))
		return -ENOMEM;
	for (i = hash_str(s) & (c->scap - 1); c->strs[i]; i = (i + 1) & (c->scap - 1))
		if (!strcmp(c->strs[i], s)) {
			*out = c->strs[i];
			return 0;
		}
	c->strs[i] = strdup(s);
	if (!c->strs[i])
		return -ENOMEM;
	c->sn++;
	*out = c->strs[i];
	return 0;
}

static size_t slot_of(uint64_t addr, size_t cap)
{
	return (size_t)lib_hash64(addr) & (cap - 1);
}

static int grow(struct symcache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 4096;
	struct entry *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->v[i].used)
			continue;
		for (j = slot_of(c->v[i].addr, cap); v[j].used; j = (j + 1) & (cap - 1))
			;
		v[j] = c->v[i];
	}
	free(c->v);
	c->v = v;
	c->cap = cap;
	return 0;
}

static void answer(const struct entry *e, struct trace_frame *out)
{
	out->sym = e->sym;
	out->module = e->module;
	out->offset = e->offset;
	out->kernel = e->kernel;
	out->inl = e->inl;
	out->ninl = e->ninl;
}

int symcache__resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct symcache *c = ctx;
	struct trace_frame f = *out;
	struct entry *e;
	size_t i;
	int err;

	c->lookups++;
	if ((c->n + 1) * 2 > c->cap && grow(c))
		return c->resolve(c->ctx, addr, out); /* no room: uncached */
	for (i = slot_of(addr, c->cap); c->v[i].used; i = (i + 1) & (c->cap - 1))
		if (c->v[i].addr == addr) {
			answer(&c->v[i], out);
			return 0;
		}
	c->resolved++;
	err = c->resolve(c->ctx, addr, &f);
	/* not known yet (a module or a perf map that may show up later):
	 * asked again next time */
	if (err || (!f.sym && !f.module)) {
		*out = f;
		return err;
	}
	e = &c->v[i];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	{
		e->offset = f.offset;
		e->kernel = f.kernel;
		if (intern(c, f.sym, &e->sym) || intern(c, f.module, &e->module))
			return c->resolve(c->ctx, addr, out);
		if (f.ninl) {
			e->inl = calloc(f.ninl, sizeof(*e->inl));
			if (!e->inl)
				return c->resolve(c->ctx, addr, out);
			for (uint32_t k = 0; k < f.ninl; k++)
				if (intern(c, f.inl[k], &e->inl[k])) {
					free(e->inl);
					e->inl = NULL;
					return c->resolve(c->ctx, addr, out);
				}
			e->ninl = f.ninl;
		}
	}
	e->used = 1;
	c->n++;
	answer(e, out);
	return 0;
}

void symcache__stats(const struct symcache *c, uint64_t *resolved, uint64_t *lookups)
{
	*resolved = c ? c->resolved : 0;
	*lookups = c ? c->lookups : 0;
}
