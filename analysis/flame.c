/* SPDX-License-Identifier: MIT */
/*
 * flame.c - the flamegraph tree and its folded output.
 *
 * Labels are interned once (a lib_strset); a node is found by the
 * (parent, label) edge in one hash map, so adding a path costs one probe
 * per frame and memory grows with distinct paths only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "lib/grow.h"
#include "lib/map.h"

static int node_new(struct flame *f, uint32_t parent, uint32_t label, uint32_t *id)
{
	struct fnode *n;

	if (f->nnodes >= FNODE_NONE)
		return -EOVERFLOW;
	if (LIB_GROW(f->nodes, f->nodes_cap, f->nnodes + 1))
		return -ENOMEM;
	*id = f->nnodes;
	n = &f->nodes[f->nnodes++];
	n->label = label;
	n->parent = parent;
	n->child = FNODE_NONE;
	n->next = FNODE_NONE;
	n->total = 0;
	n->self = 0;
	if (parent != FNODE_NONE) {
		n->next = f->nodes[parent].child;
		f->nodes[parent].child = *id;
	}
	return 0;
}

struct flame *flame__new(void)
{
	struct flame *f = calloc(1, sizeof(*f));
	uint32_t root, all;

	if (!f)
		return NULL;
	if (lib_map_init(&f->edges, 256) || flame_intern(f, "all", 3, &all) ||
	    node_new(f, FNODE_NONE, all, &root)) {
		flame__free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

int flame_intern(struct flame *f, const char *s, size_t len, uint32_t *id)
{
	int err = lib_strset_add(&f->labels, s, len, id);

	return err < 0 ? err : 0;
}

static int reindex(struct flame *f)
{
	for (size_t i = 1; i < f->nnodes; i++) {
		uint64_t *v = lib_map_get(
			&f->edges, (uint64_t)f->nodes[i].parent << 32 | f->nodes[i].label,
			NULL);

		if (!v)
			return -ENOMEM;
		*v = i;
	}
	f->edges_stale = 0;
	return 0;
}

/* The child of @parent labelled @label in *@id, made (of weight 0) if
 * there is none. */
static int flame_child(struct flame *f, uint32_t parent, uint32_t label, uint32_t *id)
{
	uint64_t key = (uint64_t)parent << 32 | label;
	int created, err;
	uint64_t *v;

	if (f->edges_stale) {
		err = reindex(f);
		if (err)
			return err;
	}
	v = lib_map_get(&f->edges, key, &created);
	if (!v)
		return -ENOMEM;
	if (created) {
		err = node_new(f, parent, label, id);
		if (err)
			return err;
		/* node_new does not touch the map: v is valid */
		*v = *id;
	}
	*id = (uint32_t)*v;
	return 0;
}

int flame_add_ids(struct flame *f, const uint32_t *ids, size_t n, uint64_t weight,
		  uint32_t *leaf)
{
	uint32_t cur = 0, next;
	size_t i;
	int err;

	if (leaf)
		*leaf = 0;
	if (!weight)
		return 0;
	for (i = 0; i < n; i++) {
		err = flame_child(f, cur, ids[i], &next);
		if (err)
			return err;
		f->nodes[cur].total += weight;
		cur = next;
	}
	f->nodes[cur].total += weight;
	f->nodes[cur].self += weight;
	if (leaf)
		*leaf = cur;
	return 0;
}

int flame_merge_base(struct flame *f, const struct flame *b)
{
	uint32_t *map = malloc(b->nnodes * sizeof(*map));
	struct fcount *base;
	size_t i;
	int err = 0;

	if (!map)
		return -ENOMEM;
	/* a node is made after its parent: one pass in index order */
	map[0] = 0;
	for (i = 1; i < b->nnodes && !err; i++) {
		uint32_t l = b->nodes[i].label, lab;

		err = flame_intern(f, flame_label_str(b, l),
				   lib_strset_len(&b->labels, l), &lab);
		if (!err)
			err = flame_child(f, map[b->nodes[i].parent], lab, &map[i]);
	}
	base = err ? NULL : calloc(f->nnodes, sizeof(*base));
	if (!err && !base)
		err = -ENOMEM;
	for (i = 0; i < b->nnodes && !err; i++) {
		base[map[i]].total += b->nodes[i].total;
		base[map[i]].self += b->nodes[i].self;
	}
	if (!err) {
		free(f->base);
		f->base = base;
	}
	free(map);
	return err;
}

int flame_run_add(struct flame *f, struct flame_run *r, const uint32_t *ids, size_t n,
		  uint64_t weight)
{
	uint32_t parent = 0;
	size_t k = 0, i;
	int err;

	if (!weight)
		return 0;
	if (n > r->cap) {
		/* two arrays on one count: each grows the same way */
		size_t icap = r->cap, ncap = r->cap;

		if (LIB_GROW(r->ids, icap, n) || LIB_GROW(r->nodes, ncap, n))
			return -ENOMEM;
		r->cap = icap;
	}
	while (k < n && k < r->n && r->ids[k] == ids[k])
		k++;
	if (k)
		parent = r->nodes[k - 1];
	for (i = k; i < n; i++) {
		err = node_new(f, parent, ids[i], &parent);
		if (err)
			return err;
		r->ids[i] = ids[i];
		r->nodes[i] = parent;
	}
	r->n = n;
	f->edges_stale = 1;
	f->nodes[0].total += weight;
	for (i = 0; i < n; i++)
		f->nodes[r->nodes[i]].total += weight;
	f->nodes[n ? r->nodes[n - 1] : 0].self += weight;
	return 0;
}

void flame_run_release(struct flame_run *r)
{
	free(r->ids);
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

int flame__add(struct flame *f, const char *const *frames, size_t n, uint64_t weight)
{
	uint32_t buf[128], *ids = buf;
	size_t i;
	int err = 0;

	if (!f || (n && !frames))
		return -EINVAL;
	if (n > sizeof(buf) / sizeof(buf[0])) {
		ids = malloc(n * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
	}
	for (i = 0; i < n && !err; i++)
		err = flame_intern(f, frames[i] ? frames[i] : "",
				   frames[i] ? strlen(frames[i]) : 0, &ids[i]);
	if (!err)
		err = flame_add_ids(f, ids, n, weight, NULL);
	if (ids != buf)
		free(ids);
	return err;
}

uint64_t flame__total(const struct flame *f)
{
	return f && f->nnodes ? f->nodes[0].total : 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int flame__write_folded(const struct flame *f, FILE *out)
{
	char *arena = NULL, **lines = NULL;
	size_t nlines = 0, bytes = 0, i, at = 0;
	uint32_t *path = NULL;
	size_t depth_max = 0;
	int err = 0;

	if (!f || !out)
		return -EINVAL;
	/* one pass to size everything: a line is its path, ';'s, a space,
	 * up to 20 digits and the NUL */
	for (i = 1; i < f->nnodes; i++) {
		size_t d = 0, len = 0;
		uint32_t n;

		if (!f->nodes[i].self && !(f->base && f->base[i].self))
			continue;
		for (n = i; n != 0; n = f->nodes[n].parent) {
			len += lib_strset_len(&f->labels, f->nodes[n].label) + 1;
			d++;
		}
		if (d > depth_max)
			depth_max = d;
		bytes += len + 22 + (f->base ? 21 : 0);
		nlines++;
	}
	arena = malloc(bytes + 1);
	lines = malloc((nlines + 1) * sizeof(*lines));
	path = malloc((depth_max + 1) * sizeof(*path));
	if (!arena || !lines || !path) {
		err = -ENOMEM;
		goto out;
	}
	nlines = 0;
	for (i = 1; i < f->nnodes; i++) {
		size_t d = 0;
		uint32_t n;
		char *p = arena + at;

		if (!f->nodes[i].self && !(f->base && f->base[i].self))
			continue;
		for (n = i; n != 0; n = f->nodes[n].parent)
			path[d++] = n;
		while (d--) {
			uint32_t l = f->nodes[path[d]].label;

			size_t len = lib_strset_len(&f->labels, l);

			memcpy(p, flame_label_str(f, l), len);
			p += len;
			*p++ = d ? ';' : ' ';
		}
		/* difffolded.pl's form: "stack base new" */
		if (f->base)
			p += sprintf(p, "%" PRIu64 " ", f->base[i].self);
		p += sprintf(p, "%" PRIu64, f->nodes[i].self);
		*p++ = '\0';
		lines[nlines++] = arena + at;
		at = p - arena;
	}
	/* byte order, as `LC_ALL=C sort` would give: diffable and stable */
	qsort(lines, nlines, sizeof(*lines), line_cmp);
	for (i = 0; i < nlines; i++) {
		fputs(lines[i], out);
		putc('\n', out);
	}
	if (ferror(out))
		err = -EIO;
out:
	free(arena);
	free(lines);
	free(path);
	return err;
}

void flame__set_style(struct flame *f, const struct flame_style *s)
{
	if (!f)
		return;
	if (s)
		f->style = *s;
	else
		memset(&f->style, 0, sizeof(f->style));
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->base);
	lib_strset_release(&f->labels);
	lib_map_release(&f->edges);
	free(f);
}
