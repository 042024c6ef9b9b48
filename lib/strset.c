// SPDX-License-Identifier: MIT
/*
 * strset.c - the set of strings (strset.h): the strings in one buffer, an
 * offset per id, and a table of (hash, id + 1) slots to find them by.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/strset.h"

#define MIN_CAP 16

/* Whether slot @x holds @s (@len bytes, hash @h). */
static inline int holds(const struct lib_strset *ss, const struct lib_strset_slot *x,
			uint32_t h, const char *s, size_t len)
{
	uint32_t id = x->id1 - 1;

	return x->hash == h && lib_strset_len(ss, id) == len &&
	       !memcmp(ss->data + ss->off[id], s, len);
}

/* The slot of @s (@len bytes, hash @h): its own, or the free one it would
 * take. The table has a free slot (it is at most half full). */
static inline size_t slot_of(const struct lib_strset *ss, uint32_t h, const char *s,
			     size_t len)
{
	size_t mask = ss->cap - 1, i = h & mask;

	while (ss->slot[i].id1 && !holds(ss, &ss->slot[i], h, s, len))
		i = (i + 1) & mask;
	return i;
}

/* The table at twice its size (MIN_CAP at first), every id put back. */
static int grow(struct lib_strset *ss)
{
	size_t cap = ss->cap ? ss->cap * 2 : MIN_CAP, mask = cap - 1;
	struct lib_strset_slot *v;

	if (ss->cap > SIZE_MAX / 2 / sizeof(*v))
		return -ENOMEM;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ss->cap; i++) {
		size_t j;

		if (!ss->slot[i].id1)
			continue;
		for (j = ss->slot[i].hash & mask; v[j].id1; j = (j + 1) & mask)
			;
		v[j] = ss->slot[i];
	}
	free(ss->slot);
	ss->slot = v;
	ss->cap = cap;
	return 0;
}

int lib_strset_add(struct lib_strset *ss, const char *s, size_t len, uint32_t *id)
{
	uint32_t h = (uint32_t)lib_hash_mem(s, len);
	size_t i;

	if ((ss->n + 1) * 2 > ss->cap) {
		int err = grow(ss);

		if (err)
			return err;
	}
	i = slot_of(ss, h, s, len);
	if (ss->slot[i].id1) {
		*id = ss->slot[i].id1 - 1;
		return 0;
	}
	if (ss->n >= LIB_STRSET_MAX || len >= SIZE_MAX - ss->size)
		return -EOVERFLOW;
	if (LIB_GROW(ss->off, ss->off_cap, ss->n + 2) ||
	    LIB_GROW(ss->data, ss->data_cap, ss->size + len + 1))
		return -ENOMEM;
	memcpy(ss->data + ss->size, s, len);
	ss->data[ss->size + len] = '\0';
	ss->off[ss->n] = ss->size;
	ss->size += len + 1;
	ss->off[ss->n + 1] = ss->size;
	ss->slot[i].hash = h;
	ss->slot[i].id1 = (uint32_t)++ss->n;
	*id = ss->slot[i].id1 - 1;
	return 1;
}

int lib_strset_find(const struct lib_strset *ss, const char *s, size_t len, uint32_t *id)
{
	size_t i;

	if (!ss->n)
		return -ENOENT;
	i = slot_of(ss, (uint32_t)lib_hash_mem(s, len), s, len);
	if (!ss->slot[i].id1)
		return -ENOENT;
	*id = ss->slot[i].id1 - 1;
	return 0;
}

void lib_strset_clear(struct lib_strset *ss)
{
	if (ss->slot)
		memset(ss->slot, 0, ss->cap * sizeof(*ss->slot));
	ss->n = 0;
	ss->size = 0;
}

void lib_strset_release(struct lib_strset *ss)
{
	free(ss->data);
	free(ss->off);
	free(ss->slot);
	memset(ss, 0, sizeof(*ss));
}
