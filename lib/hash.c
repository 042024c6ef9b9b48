// SPDX-License-Identifier: MIT
/*
 * hash.c - xxHash's 32-bit variant, XXH32 (Yann Collet, BSD-2): the trace
 * chunks' checksum (hash.h), written out here because libzstd does not
 * export it. It is fast (several GB/s) and catches any byte flip with
 * probability 1 - 2^-32, which is all a chunk check needs.
 */
#include "lib/hash.h"

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

#define P1 0x9E3779B1u
#define P2 0x85EBCA77u
#define P3 0xC2B2AE3Du
#define P4 0x27D4EB2Fu
#define P5 0x165667B1u

static inline uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static inline uint32_t xxh_round(uint32_t acc, uint32_t lane)
{
	acc += lane * P2;
	acc = rotl32(acc, 13);
	return acc * P1;
}

uint32_t lib_xxh32(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	const uint8_t *end = p + len;
	uint32_t h;

	if (len >= 16) {
		const uint8_t *limit = end - 16;
		uint32_t v1 = seed + P1 + P2;
		uint32_t v2 = seed + P2;
		uint32_t v3 = seed;
		uint32_t v4 = seed - P1;

		do {
			v1 = xxh_round(v1, le32(p));
			v2 = xxh_round(v2, le32(p + 4));
			v3 = xxh_round(v3, le32(p + 8));
			v4 = xxh_round(v4, le32(p + 12));
			p += 16;
		} while (p <= limit);
		h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
	} else {
		h = seed + P5;
	}
	h += (uint32_t)len;
	while ((size_t)(end - p) >= 4) {
		h += le32(p) * P3;
		h = rotl32(h, 17) * P4;
		p += 4;
	}
	while (p < end) {
		h += *p++ * P5;
		h = rotl32(h, 11) * P1;
	}
	h ^= h >> 15;
	h *= P2;
	h ^= h >> 13;
	h *= P3;
	h ^= h >> 16;
	return h;
}
