/* SPDX-License-Identifier: MIT */
/*
 * map.h - the one u64-keyed hash map of the tree: u64 key -> u64 value.
 *
 * Contract:
 * - Keys: every u64, none reserved. UINT64_MAX marks a free slot inside
 *   the table, so that one key (a task id read from a corrupt file) is
 *   held beside it; callers never see the difference.
 * - Values: u64, 0 for a key just added by lib_map_get(). A u32 id, an
 *   index, a count, a weight or a pointer (uintptr_t) fits without loss.
 * - A zeroed struct lib_map is an empty map: lib_map_init() only sizes it
 *   ahead. lib_map_release() frees it and leaves it empty and usable.
 * - Layout: open addressing, linear probing from lib_hash64(key) (hash.h),
 *   one 16-byte slot per key and value; the table is a power of two of at
 *   least 16 slots and doubles before it would be more than half full, so
 *   it costs 32 to 64 bytes a key. It never shrinks; lib_map_del() moves
 *   later entries back (no tombstones), so a map that sees keys come and
 *   go stays as large as the most it held at once.
 * - Cost: get, find, set and del are O(1) on average, and a lookup (get
 *   of a key held, find) is inline: one lib_hash64() and a short probe;
 *   growth rehashes every key (amortised O(1) an insert); a walk visits
 *   every slot.
 * - Errors: 0 or -ENOMEM (nothing changed then), NULL for a value slot;
 *   nothing is printed.
 * - A value pointer stays valid until the next insert or deletion. The
 *   walk order is the table's: the same keys inserted in the same order
 *   walk in the same order (outputs that follow it are reproducible).
 * - Not thread-safe: one writer, or readers only. The shim (libprof/)
 *   does not use it.
 */
#ifndef D9_LIB_MAP_H
#define D9_LIB_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hash.h"

#define LIB_MAP_FREE UINT64_MAX /* a free slot's key (see above) */

struct lib_map_slot {
	uint64_t key, val;
};

struct lib_map {
	struct lib_map_slot *slot; /* cap of them; key LIB_MAP_FREE: free */
	size_t cap;		   /* power of two, or 0 */
	size_t n;		   /* keys held, LIB_MAP_FREE's included */
	int has_free_key;	   /* LIB_MAP_FREE is a key, its value: */
	uint64_t free_key_val;
};

/* Empty @m, with room for @hint keys before it grows. 0 or -ENOMEM (then
 * @m is empty and zeroed, still usable). */
int lib_map_init(struct lib_map *m, size_t hint);
/* Free @m's memory; @m is then an empty map. */
void lib_map_release(struct lib_map *m);

/* (lib_map_get()'s insertion: @at is the free slot the lookup stopped
 * at, or SIZE_MAX) */
uint64_t *lib_map_add_(struct lib_map *m, uint64_t key, size_t at, int *created);

/* The value slot of @key, added with value 0 if absent (*@created is 1
 * then, else 0; @created may be NULL). NULL on -ENOMEM. A key found costs
 * one hash and a probe, inline (maps are looked up per event and sample). */
static inline uint64_t *lib_map_get(struct lib_map *m, uint64_t key, int *created)
{
	size_t mask = m->cap - 1, i;

	if (!m->cap || key == LIB_MAP_FREE)
		return lib_map_add_(m, key, SIZE_MAX, created);
	for (i = (size_t)lib_hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->slot[i].key == key) {
			if (created)
				*created = 0;
			return &m->slot[i].val;
		}
		if (m->slot[i].key == LIB_MAP_FREE)
			return lib_map_add_(m, key, i, created);
	}
}

/* The value slot of @key, or NULL if absent. */
static inline uint64_t *lib_map_find(const struct lib_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i;

	if (key == LIB_MAP_FREE)
		return m->has_free_key ? (uint64_t *)&m->free_key_val : NULL;
	if (!m->cap)
		return NULL;
	for (i = (size_t)lib_hash64(key) & mask;; i = (i + 1) & mask) {
		if (m->slot[i].key == key)
			return &m->slot[i].val;
		if (m->slot[i].key == LIB_MAP_FREE)
			return NULL;
	}
}

/* @key -> @val, added or replaced. 0 or -ENOMEM. */
int lib_map_set(struct lib_map *m, uint64_t key, uint64_t val);
/* Remove @key: 1 if it was there, else 0. */
int lib_map_del(struct lib_map *m, uint64_t key);

/* Keys held. */
static inline size_t lib_map_count(const struct lib_map *m)
{
	return m->n;
}

/*
 * Walk @m: with *@it = 0 first, each call gives one key and its value
 * slot and returns 1, then 0 when all were given. Values may be changed
 * through *@val during the walk; keys may not be added or removed.
 *
 *	size_t it = 0;
 *	uint64_t key, *val;
 *
 *	while (lib_map_next(&m, &it, &key, &val))
 *		...
 */
static inline int lib_map_next(const struct lib_map *m, size_t *it, uint64_t *key,
			       uint64_t **val)
{
	size_t i = *it;

	for (; i < m->cap; i++)
		if (m->slot[i].key != LIB_MAP_FREE) {
			*key = m->slot[i].key;
			*val = &m->slot[i].val;
			*it = i + 1;
			return 1;
		}
	/* the key that marks a free slot comes last */
	if (i == m->cap && m->has_free_key) {
		*key = LIB_MAP_FREE;
		*val = (uint64_t *)&m->free_key_val;
		*it = i + 1;
		return 1;
	}
	*it = m->cap + 1;
	return 0;
}

#endif /* D9_LIB_MAP_H */
