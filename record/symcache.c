// SPDX-License-Identifier: MIT
/*
 * symcache.c - remembered symbolizations (symcache.h): the answers in an
 * array, found by address through a lib_map, their strings once each in a
 * lib_strset (an answer keeps their ids), and the arrays of the last
 * answer made from them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/map.h"
#include "lib/strset.h"
#include "record/symcache.h"

/* Strings below are ids + 1 in symcache.strs, 0 for NULL. */
struct inl {
	uint32_t name;
	uint32_t call_file, call_line, decl_line; /* with has_src */
};

struct entry {
	uint32_t sym, module, file;
	uint64_t offset;
	struct inl *inl; /* ninl of them */
	uint32_t ninl;
	uint8_t kernel;
	uint8_t has_src; /* the answer had inl_src */
	uint32_t line, start_line;
};

struct symcache {
	trace_resolve_fn resolve;
	void *ctx;
	struct lib_map at; /* address -> index in v */
	struct entry *v;
	size_t cap, n;
	struct lib_strset strs;
	/* the last answer's inl and inl_src, room for any entry's ninl */
	const char **inl;
	struct trace_inline_src *src;
	size_t inl_cap, src_cap;
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
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].inl);
	lib_map_release(&c->at);
	lib_strset_release(&c->strs);
	free(c->v);
	free(c->inl);
	free(c->src);
	free(c);
}

/* @s interned into *@out (NULL: 0). 0 or -errno. */
static int intern(struct symcache *c, const char *s, uint32_t *out)
{
	uint32_t id;
	int err;

	*out = 0;
	if (!s)
		return 0;
	err = lib_strset_add(&c->strs, s, strlen(s), &id);
	if (err < 0)
		return err;
	*out = id + 1;
	return 0;
}

static const char *str(const struct symcache *c, uint32_t s)
{
	return s ? lib_strset_str(&c->strs, s - 1) : NULL;
}

static void answer(struct symcache *c, const struct entry *e, struct trace_frame *out)
{
	out->sym = str(c, e->sym);
	out->module = str(c, e->module);
	out->offset = e->offset;
	out->kernel = e->kernel;
	out->inl = NULL;
	out->ninl = e->ninl;
	out->file = str(c, e->file);
	out->line = e->line;
	out->start_line = e->start_line;
	out->inl_src = NULL;
	if (!e->ninl)
		return;
	for (uint32_t k = 0; k < e->ninl; k++) {
		c->inl[k] = str(c, e->inl[k].name);
		if (e->has_src)
			c->src[k] = (struct trace_inline_src){
				.call_file = str(c, e->inl[k].call_file),
				.call_line = e->inl[k].call_line,
				.decl_line = e->inl[k].decl_line,
			};
	}
	out->inl = c->inl;
	if (e->has_src)
		out->inl_src = c->src;
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
		answer(c, &c->v[*ix], out);
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
		/* answers never allocate: the room for this one now */
		if (LIB_GROW(c->inl, c->inl_cap, f.ninl) ||
		    LIB_GROW(c->src, c->src_cap, f.ninl))
			return 0;
		e->inl = calloc(f.ninl, sizeof(*e->inl));
		if (!e->inl)
			return 0;
		for (uint32_t k = 0; k < f.ninl; k++)
			if (intern(c, f.inl[k], &e->inl[k].name))
				goto uncached;
		if (f.inl_src) {
			e->has_src = 1;
			for (uint32_t k = 0; k < f.ninl; k++) {
				e->inl[k].call_line = f.inl_src[k].call_line;
				e->inl[k].decl_line = f.inl_src[k].decl_line;
				if (intern(c, f.inl_src[k].call_file,
					   &e->inl[k].call_file))
					goto uncached;
			}
		}
		e->ninl = f.ninl;
	}
	if (lib_map_set(&c->at, addr, c->n))
		goto uncached;
	c->n++;
	answer(c, e, out);
	return 0;
uncached:
	free(e->inl);
	e->inl = NULL;
	return 0;
}

void symcache__stats(const struct symcache *c, uint64_t *resolved, uint64_t *lookups)
{
	*resolved = c ? c->resolved : 0;
	*lookups = c ? c->lookups : 0;
}
