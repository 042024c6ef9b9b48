/* SPDX-License-Identifier: MIT */
/*
 * amap.c - the u64 -> u64 hash map behind the join and the flame builder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_int.h"

static int amap_alloc(struct amap *m, size_t cap)
{
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		return -ENOMEM;
	}
	/* all-ones bytes == AMAP_EMPTY */
	memset(m->keys, 0xff, cap * sizeof(*m->keys));
	m->cap = cap;
	return 0;
}

int amap_init(struct amap *m, size_t hint)
{
	size_t cap = 16;

	memset(m, 0, sizeof(*m));
	while (cap < hint * 2 && cap < ((size_t)1 << 62))
		cap <<= 1;
	return amap_alloc(m, cap);
}

static size_t amap_slot(const uint64_t *keys, size_t cap, uint64_t key)
{
	size_t mask = cap - 1, i = lib_hash64(key) & mask;

	while (keys[i] != AMAP_EMPTY && keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static int amap_grow(struct amap *m)
{
	struct amap old = *m;
	size_t i, j;

	if (amap_alloc(m, old.cap * 2)) {
		*m = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++) {
		if (old.keys[i] == AMAP_EMPTY)
			continue;
		j = amap_slot(m->keys, m->cap, old.keys[i]);
		m->keys[j] = old.keys[i];
		m->vals[j] = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
	return 0;
}

uint64_t *amap_get(struct amap *m, uint64_t key, int *created)
{
	size_t i;

	if (created)
		*created = 0;
	if (key == AMAP_EMPTY) {
		if (!m->has_empty_key) {
			m->has_empty_key = 1;
			m->empty_val = 0;
			if (created)
				*created = 1;
		}
		return &m->empty_val;
	}
	i = amap_slot(m->keys, m->cap, key);
	if (m->keys[i] == key)
		return &m->vals[i];
	if ((m->n + 1) * 2 > m->cap) {
		if (amap_grow(m))
			return NULL;
		i = amap_slot(m->keys, m->cap, key);
	}
	m->keys[i] = key;
	m->vals[i] = 0;
	m->n++;
	if (created)
		*created = 1;
	return &m->vals[i];
}

uint64_t *amap_find(const struct amap *m, uint64_t key)
{
	size_t i;

	if (key == AMAP_EMPTY)
		return m->has_empty_key ? (uint64_t *)&m->empty_val : NULL;
	if (!m->cap)
		return NULL;
	i = amap_slot(m->keys, m->cap, key);
	return m->keys[i] == key ? &m->vals[i] : NULL;
}

void amap_release(struct amap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
