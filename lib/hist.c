// SPDX-License-Identifier: MIT
/*
 * hist.c - a distribution of u64 values in bounded memory (see hist.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hist.h"

#define SUB (1u << LIB_HIST_SUB_BITS)

void lib_hist_init(struct lib_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void lib_hist_release(struct lib_hist *h)
{
	if (!h)
		return;
	free(h->exact);
	for (size_t o = 0; h->oct && o < LIB_HIST_OCTAVES; o++)
		free(h->oct[o]);
	free(h->oct);
	lib_hist_init(h);
}

/* The octave and bucket of @v */
static void where(uint64_t v, unsigned int *o, unsigned int *b)
{
	unsigned int e, s;

	if (v < SUB) {
		*o = 0;
		*b = (unsigned int)v;
		return;
	}
	e = 63u - (unsigned int)__builtin_clzll(v);
	s = e - LIB_HIST_SUB_BITS;
	*o = s + 1;
	*b = (unsigned int)(v >> s) - SUB;
}

/* Bucket @b of octave @o: its lowest value, its width in *@w */
static uint64_t bucket(unsigned int o, unsigned int b, uint64_t *w)
{
	*w = o ? 1ull << (o - 1) : 1;
	return o ? (uint64_t)(SUB + b) << (o - 1) : b;
}

/* Count @k values in @v's bucket */
static int bin(struct lib_hist *h, uint64_t v, uint64_t k)
{
	unsigned int o, b;

	where(v, &o, &b);
	if (!h->oct[o] && !(h->oct[o] = calloc(SUB, sizeof(**h->oct))))
		return -ENOMEM;
	h->oct[o][b] += k;
	return 0;
}

/* The exact values of @h (not binned): its array, or for one or two
 * values (kept as min and max alone, no array) @tmp filled with them */
static const uint64_t *values(const struct lib_hist *h, uint64_t tmp[2])
{
	if (h->exact)
		return h->exact;
	tmp[0] = h->min;
	tmp[1] = h->max;
	return tmp;
}

/* The exact values in an array of their own, room for @more */
static int materialize(struct lib_hist *h, size_t more)
{
	uint64_t tmp[2] = {h->min, h->max}; /* one or two values, no array */
	int had = h->exact != NULL;

	if (LIB_GROW(h->exact, h->exact_cap, h->n + more))
		return -ENOMEM;
	if (!had)
		memcpy(h->exact, tmp, h->n * sizeof(*tmp));
	return 0;
}

/* From exact values to buckets */
static int to_bins(struct lib_hist *h)
{
	uint64_t tmp[2];
	const uint64_t *v = values(h, tmp);

	if (!h->oct && !(h->oct = calloc(LIB_HIST_OCTAVES, sizeof(*h->oct))))
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		if (bin(h, v[i], 1)) {
			/* as it was: the exact values alone */
			for (size_t o = 0; o < LIB_HIST_OCTAVES; o++) {
				free(h->oct[o]);
				h->oct[o] = NULL;
			}
			return -ENOMEM;
		}
	}
	free(h->exact);
	h->exact = NULL;
	h->exact_cap = 0;
	h->binned = 1;
	return 0;
}

static void account(struct lib_hist *h, uint64_t n, uint64_t sum, uint64_t min,
		    uint64_t max)
{
	if (!h->n || min < h->min)
		h->min = min;
	if (!h->n || max > h->max)
		h->max = max;
	h->n += n;
	h->sum += sum;
}

int lib_hist_add(struct lib_hist *h, uint64_t v)
{
	if (!h->binned && h->n >= LIB_HIST_EXACT && to_bins(h))
		return -ENOMEM;
	if (h->binned) {
		if (bin(h, v, 1))
			return -ENOMEM;
	} else if (h->n >= 2 || h->exact) {
		/* one or two values are min and max alone (a short task's) */
		if (materialize(h, 1))
			return -ENOMEM;
		h->exact[h->n] = v;
	}
	account(h, 1, v, v, v);
	return 0;
}

int lib_hist_merge(struct lib_hist *into, const struct lib_hist *from)
{
	uint64_t tmp[2];

	if (!from->n)
		return 0;
	if (!into->binned && !from->binned && into->n + from->n <= LIB_HIST_EXACT) {
		if (materialize(into, from->n))
			return -ENOMEM;
		memcpy(into->exact + into->n, values(from, tmp), from->n * sizeof(*tmp));
	} else {
		if (!into->binned && to_bins(into))
			return -ENOMEM;
		if (!from->binned) {
			const uint64_t *v = values(from, tmp);

			for (size_t i = 0; i < from->n; i++)
				if (bin(into, v[i], 1))
					return -ENOMEM;
		} else {
			uint64_t w;

			for (unsigned int o = 0; o < LIB_HIST_OCTAVES; o++)
				for (unsigned int b = 0; from->oct[o] && b < SUB; b++)
					if (from->oct[o][b] &&
					    bin(into, bucket(o, b, &w), from->oct[o][b]))
						return -ENOMEM;
		}
	}
	account(into, from->n, from->sum, from->min, from->max);
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t lib_hist_quantile(struct lib_hist *h, uint64_t num, uint64_t den)
{
	uint64_t rank, seen = 0;

	if (!h->n || !den)
		return 0;
	if (num >= den)
		return h->max;
	/* ceil(n * num / den), without overflow */
	rank = h->n / den * num +
	       (uint64_t)(((unsigned __int128)(h->n % den) * num + den - 1) / den);
	if (!rank)
		return h->min;
	if (rank >= h->n)
		return h->max;
	if (!h->binned) {
		if (!h->exact) /* two values, the first */
			return h->min;
		qsort(h->exact, h->n, sizeof(*h->exact), u64_cmp);
		return h->exact[rank - 1];
	}
	for (unsigned int o = 0; h->oct && o < LIB_HIST_OCTAVES; o++) {
		for (unsigned int b = 0; h->oct[o] && b < SUB; b++) {
			uint64_t lo, w, mid;

			seen += h->oct[o][b];
			if (seen < rank)
				continue;
			lo = bucket(o, b, &w);
			mid = lo + (w - 1) / 2;
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}

uint64_t lib_hist_above(struct lib_hist *h, uint64_t k)
{
	uint64_t seen = 0;

	if (k >= h->n)
		return 0;
	if (!h->binned) {
		uint64_t tmp[2];
		const uint64_t *v = values(h, tmp);

		if (h->exact)
			qsort(h->exact, h->n, sizeof(*h->exact), u64_cmp);
		/* the (k+1)-th largest: only the k above it may exceed it */
		return v[h->n - k - 1];
	}
	/* from the top, the buckets that k holds whole; the next one's
	 * upper end */
	for (unsigned int o = LIB_HIST_OCTAVES; o-- > 0;) {
		for (unsigned int b = SUB; h->oct[o] && b-- > 0;) {
			uint64_t lo, w;

			if (seen + h->oct[o][b] <= k) {
				seen += h->oct[o][b];
				continue;
			}
			lo = bucket(o, b, &w);
			return lo + (w - 1);
		}
	}
	return 0;
}
