/* SPDX-License-Identifier: MIT */
/*
 * hot.c - the leaf and its caller (see hot.h), linked into the program or
 * into a shared library, depending on the layout.
 */
#include "hot.h"

static const uint32_t tab[32] = {
	0x9e3779b9, 0x7f4a7c15, 0xf39cc060, 0x5ced1a2b, 0x85ebca6b, 0xc2b2ae35,
	0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5, 0xb55a4f09, 0x1b873593,
	0xcc9e2d51, 0xe6546b64, 0x94d049bb, 0xbf58476d, 0x2545f491, 0x4f6cdd1d,
	0x6c8e9cf5, 0x7feb352d, 0x846ca68b, 0x68e31da4, 0xb5297a4d, 0x1b56c4e9,
	0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	0x6a09e667, 0xbb67ae85,
};

#ifdef LAYOUT_INLINE
/* built with -DLAYOUT_INLINE: the leaf's work is a function inlined into
 * it, which the trace must show as a frame of its own */
static inline __attribute__((always_inline)) uint32_t layout_round(uint32_t h)
{
	for (unsigned i = 0; i < 32; i++)
		h = (h ^ tab[i]) * 16777619u;
	return h;
}
#endif

HOT_NOINLINE uint32_t layout_leaf(uint32_t h)
{
	for (unsigned r = 0; r < 2048; r++)
#ifdef LAYOUT_INLINE
		h = layout_round(h);
#else
		for (unsigned i = 0; i < 32; i++)
			h = (h ^ tab[i]) * 16777619u;
#endif
	return h;
}

HOT_NOINLINE uint32_t layout_caller(uint32_t seed, unsigned n)
{
	uint32_t h = seed;

	for (unsigned i = 0; i < n; i++)
		h = layout_leaf(h + i) ^ (h >> 3);
	return h;
}
