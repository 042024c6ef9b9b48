// SPDX-License-Identifier: MIT
/*
 * symcache.c - remembered symbolizations (symcache.h): the answers in an
 * array, found by address through a lib_map, and their strings interned in
 * a table of their own (keyed by the string).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/map.h"
#include "record/symcache.h"

struct entry {
	const char *sym, *module; /* interned; NULL as answered */
	uint64_t offset;
	const char **inl; /* interned names, ninl of them */
	uint32_t ninl;
	uint8_t kernel;
	const char *file; /* interned */
	uint32_t line, start_line;
	struct trace_inline_src *inl_src; /* files interned; ninl or NULL */
};

struct symcache {
	trace_resolve_fn resolve;
	void *ctx;
	struct lib_map at; /* address -> index in v */
	struct entry *v;
	size_t cap, n;
	char **strs; /* interned strings, open addressing */
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
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].inl);
		free(c->v[i].inl_src);
	}
	lib_map_release(&c->at);
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

static void answer(const struct entry *e, struct trace_frame *out)
{
	out->sym = e->sym;
	out->module = e->module;
	out->offset = e->offset;
	out->kernel = e->kernel;
	out->inl = e->inl;
	out->ninl = e->ninl;
	out->file = e->file;
	out->line = e->line;
	out->start_line = e->start_line;
	out->inl_src = e->inl_src;
}

int symcache__resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct symcache *c = ctx;
	struct trace_frame f = *out;
	const uint64_t *ix;
	struct entry *e;
	int err;

	c->lookups++;
	ix = lib_map_find(&c->at, addr);
	if (ix) {
		answer(&c->v[*ix], out);
		return 0;
	}
	c->resolved++;
	err = c->resolve(c->ctx, addr, &f);
	*out = f;
	/* not known yet (a module or a perf map that may show up later):
	 * asked again next time */
	if (err || (!f.sym && !f.module))
		return err;
	/* no room: answered, uncached */
	if (LIB_GROW(c->v, c->cap, c->n + 1))
		return 0;
	e = &c->v[c->n];
	memset(e, 0, sizeof(*e));
	e->offset = f.offset;
	e->kernel = f.kernel;
	e->line = f.line;
	e->start_line = f.start_line;
	if (intern(c, f.sym, &e->sym) || intern(c, f.module, &e->module) ||
	    intern(c, f.file, &e->file))
		return 0;
	if (f.ninl) {
		e->inl = calloc(f.ninl, sizeof(*e->inl));
		if (!e->inl)
			return 0;
		for (uint32_t k = 0; k < f.ninl; k++)
			if (intern(c, f.inl[k], &e->inl[k]))
				goto uncached;
		if (f.inl_src) {
			e->inl_src = calloc(f.ninl, sizeof(*e->inl_src));
			if (!e->inl_src)
				goto uncached;
			for (uint32_t k = 0; k < f.ninl; k++) {
				e->inl_src[k] = f.inl_src[k];
				if (intern(c, f.inl_src[k].call_file,
					   &e->inl_src[k].call_file))
					goto uncached;
			}
		}
		e->ninl = f.ninl;
	}
	if (lib_map_set(&c->at, addr, c->n))
		goto uncached;
	c->n++;
	answer(e, out);
	return 0;
uncached:
	free(e->inl);
	free(e->inl_src);
	e->inl = NULL;
	e->inl_src = NULL;
	return 0;
}

void symcache__stats(const struct symcache *c, uint64_t *resolved, uint64_t *lookups)
{
	*resolved = c ? c->resolved : 0;
	*lookups = c ? c->lookups : 0;
}
