/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the one hash of the tree's open-addressing tables.
 *
 * lib_hash64() is murmur3's 64-bit finalizer: every bit of @x reaches
 * every bit of the result, so dense small keys (ids, tids, task ids) and
 * aligned ones (addresses, pointers) spread over a power-of-two table
 * (take the low bits) instead of clustering under linear probing. A
 * sequence hashes as h = lib_hash64(h ^ v) per element.
 *
 * The shim links nothing of lib/ and keeps no copy of this: its task-name
 * table in the segment hashes with d9_name_hash() (d9_segment.h), which is
 * not lib_hash64() (one multiplier differs) and need not be: the shim
 * writing that table and the recorder reading it both take it from
 * d9_segment.h. Its values are segment ABI, pinned by a test.
 */
#ifndef D9_LIB_HASH_H
#define D9_LIB_HASH_H

#include <stdint.h>

static inline uint64_t lib_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A string's hash: FNV-1a over its bytes, then lib_hash64() (names and
 * tokens keyed in a lib_map, their clashes told apart by the caller). */
static inline uint64_t lib_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return lib_hash64(h);
}

#endif /* D9_LIB_HASH_H */
