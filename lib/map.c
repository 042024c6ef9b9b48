// SPDX-License-Identifier: MIT
/*
 * map.c - the u64 -> u64 hash map (map.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/map.h"

#define MIN_CAP 16

/* A table of @cap free slots into @m (whose old table the caller keeps). */
static int alloc_slots(struct lib_map *m, size_t cap)
{
	struct lib_map_slot *v;

	if (cap > SIZE_MAX / sizeof(*v))
		return -ENOMEM;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	/* all-ones bytes: every key LIB_MAP_FREE */
	memset(v, 0xff, cap * sizeof(*v));
	m->slot = v;
	m->cap = cap;
	return 0;
}

int lib_map_init(struct lib_map *m, size_t hint)
{
	size_t cap = MIN_CAP;

	memset(m, 0, sizeof(*m));
	while (cap / 2 < hint) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap <<= 1;
	}
	return alloc_slots(m, cap);
}

void lib_map_release(struct lib_map *m)
{
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* @key's slot in @v (@cap of them): its own, or the free one it would take. */
static inline size_t slot_of(const struct lib_map_slot *v, size_t cap, uint64_t key)
{
	size_t mask = cap - 1, i = (size_t)lib_hash64(key) & mask;

	while (v[i].key != LIB_MAP_FREE && v[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static int grow(struct lib_map *m)
{
	struct lib_map_slot *old = m->slot;
	size_t oldcap = m->cap, i;

	if (oldcap > SIZE_MAX / 2 || alloc_slots(m, oldcap ? oldcap * 2 : MIN_CAP))
		return -ENOMEM; /* (@m unchanged) */
	for (i = 0; i < oldcap; i++)
		if (old[i].key != LIB_MAP_FREE)
			m->slot[slot_of(m->slot, m->cap, old[i].key)] = old[i];
	free(old);
	return 0;
}

uint64_t *lib_map_add_(struct lib_map *m, uint64_t key, size_t at, int *created)
{
	if (created)
		*created = 0;
	if (key == LIB_MAP_FREE) {
		if (!m->has_free_key) {
			m->has_free_key = 1;
			m->free_key_val = 0;
			m->n++;
			if (created)
				*created = 1;
		}
		return &m->free_key_val;
	}
	/* keys in the table, this one included, at most half of it */
	if ((m->n - (size_t)m->has_free_key + 1) * 2 > m->cap) {
		if (grow(m))
			return NULL;
		at = SIZE_MAX;
	}
	if (at == SIZE_MAX)
		at = slot_of(m->slot, m->cap, key);
	m->slot[at].key = key;
	m->slot[at].val = 0;
	m->n++;
	if (created)
		*created = 1;
	return &m->slot[at].val;
}

int lib_map_set(struct lib_map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = lib_map_get(m, key, NULL);

	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

int lib_map_del(struct lib_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, hole, i;

	if (key == LIB_MAP_FREE) {
		if (!m->has_free_key)
			return 0;
		m->has_free_key = 0;
		m->n--;
		return 1;
	}
	if (!m->cap)
		return 0;
	hole = slot_of(m->slot, m->cap, key);
	if (m->slot[hole].key != key)
		return 0;
	/* the entries after the hole in its run move back into it unless
	 * their home is cyclically in (hole, i] */
	for (i = (hole + 1) & mask; m->slot[i].key != LIB_MAP_FREE; i = (i + 1) & mask) {
		size_t home = (size_t)lib_hash64(m->slot[i].key) & mask;

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			m->slot[hole] = m->slot[i];
			hole = i;
		}
	}
	m->slot[hole].key = LIB_MAP_FREE;
	m->n--;
	return 1;
}
