/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the tree's hashes: the one of its open-addressing tables, the
 * one of strings, and two whose values are written down (a checksum in
 * every trace, the flamegraph's colours).
 *
 * lib_hash64() is murmur3's 64-bit finalizer: every bit of @x reaches
 * every bit of the result, so dense small keys (ids, tids, task ids) and
 * aligned ones (addresses, pointers) spread over a power-of-two table
 * (take the low bits) instead of clustering under linear probing. A
 * sequence hashes as h = lib_hash64(h ^ v) per element.
 *
 * lib_hash_mem() hashes a string of bytes (lib_hash_str() one up to its
 * NUL) for a table (strset.h, a lib_map keyed by strings): 16 bytes a round
 * in two lanes, then lib_hash64(). Its values are no format: nothing
 * written or shown may depend on them.
 *
 * lib_xxh32() is XXH32, the trace chunks' checksum (trace_format.h):
 * every trace file holds its values. Not for tables.
 *
 * lib_hash_fnv1a32() is FNV-1a 32 of a string, kept for the flamegraph
 * SVG's colours alone (flame_svg.c): they are made of its values, and a
 * function keeps its colour across graphs and versions. Not for tables.
 *
 * The shim links nothing of lib/ and keeps no copy of this: its task-name
 * table in the segment hashes with d9_name_hash() (d9_segment.h), which is
 * not lib_hash64() (one multiplier differs) and need not be: the shim
 * writing that table and the recorder reading it both take it from
 * d9_segment.h. Its values are segment ABI, pinned by a test.
 */
#ifndef D9_LIB_HASH_H
#define D9_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t lib_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* (one lane of lib_hash_mem(): @v into @lane, a bijection of either) */
static inline uint64_t lib_hash_lane_(uint64_t lane, uint64_t v)
{
	lane = (lane ^ v) * 0x9e3779b97f4a7c15ULL;
	return lane << 31 | lane >> 33;
}

/* The @len bytes at @p's hash. */
static inline uint64_t lib_hash_mem(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t a = lib_hash64(len), b = 0, v, w;
	uint32_t x, y;

	for (; len > 16; s += 16, len -= 16) {
		memcpy(&v, s, 8);
		memcpy(&w, s + 8, 8);
		a = lib_hash_lane_(a, v);
		b = lib_hash_lane_(b, w);
	}
	/* the last 1 to 16 bytes, read as two words that may overlap (the
	 * length, in a from the start, tells them apart) */
	if (len > 8) {
		memcpy(&v, s, 8);
		memcpy(&w, s + len - 8, 8);
	} else if (len >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + len - 4, 4);
		v = x;
		w = y;
	} else if (len) {
		v = s[0] | (uint32_t)s[len / 2] << 8 | (uint32_t)s[len - 1] << 16;
		w = 0;
	} else {
		v = w = 0;
	}
	a = lib_hash_lane_(a, v);
	b = lib_hash_lane_(b, w);
	return lib_hash64(a ^ lib_hash64(b));
}

/* A NUL-terminated string's hash: lib_hash_mem() of its bytes. */
static inline uint64_t lib_hash_str(const char *s)
{
	return lib_hash_mem(s, strlen(s));
}

/* XXH32 of the @len bytes at @buf with @seed (see above: checksums). */
uint32_t lib_xxh32(const void *buf, size_t len, uint32_t seed);

/* FNV-1a 32 of the bytes of @s up to its NUL (see above: colours). */
static inline uint32_t lib_hash_fnv1a32(const char *s)
{
	uint32_t h = 0x811c9dc5u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x01000193u;
	return h;
}

#endif /* D9_LIB_HASH_H */
