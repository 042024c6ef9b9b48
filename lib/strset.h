/* SPDX-License-Identifier: MIT */
/*
 * strset.h - the one set of strings of the tree: each string stored once,
 * named by a dense id.
 *
 * Contract:
 * - Ids: 0, 1, 2, ... in the order the strings were first added; an id
 *   never changes while the set lives (until lib_strset_clear()). A user
 *   keeps what it knows of a string (a count, a colour, a value) in an
 *   array of its own indexed by the id.
 * - Data: every string's bytes followed by a NUL, one after another in id
 *   order, in one buffer (lib_strset_data(), lib_strset_size() bytes): a
 *   string table ready to be written out. A string's offset in it never
 *   changes; a pointer into it (lib_strset_str()) is valid until the next
 *   string is added.
 * - Strings are byte strings of a given length, compared by their bytes;
 *   an embedded NUL is kept (lib_strset_len() tells), and "" is a string.
 * - A zeroed struct lib_strset is an empty set. lib_strset_clear() empties
 *   it and keeps its memory; lib_strset_release() frees it and leaves it
 *   empty and usable.
 * - Layout: open addressing, linear probing from lib_hash_mem() (hash.h)
 *   over 8-byte slots (a hash and an id), a power of two of at least 16
 *   that doubles before it would be more than half full; the offsets and
 *   the data grow through LIB_GROW() (grow.h). A string costs its bytes
 *   and a NUL, and 24 to 48 bytes besides.
 * - Cost: add and find are O(1) on average: one hash of the string, a
 *   short probe, one memcmp() of a string with the same hash.
 * - Errors: 0 or -errno, nothing printed; a failed add changes nothing.
 * - Not thread-safe: one writer, or readers only. The shim (libprof/)
 *   does not use it.
 */
#ifndef D9_LIB_STRSET_H
#define D9_LIB_STRSET_H

#include <stddef.h>
#include <stdint.h>

/* The most strings a set holds: ids and ids + 1 fit a u32. */
#define LIB_STRSET_MAX (UINT32_MAX - 1)

struct lib_strset_slot {
	uint32_t hash; /* the low bits of the string's lib_hash_mem() */
	uint32_t id1;  /* its id + 1; 0: a free slot */
};

struct lib_strset {
	char *data; /* the strings, each with its NUL, in id order */
	size_t size, data_cap;
	size_t *off; /* id -> offset in data; off[n] = size once n > 0 */
	size_t n, off_cap;
	struct lib_strset_slot *slot; /* cap of them */
	size_t cap;		      /* power of two, or 0 */
};

/*
 * Add @s (@len bytes, NUL or not after them) unless it is there: its id
 * in *@id either way. Returns 1 if it was added, 0 if it was there, or
 * -ENOMEM, -EOVERFLOW (LIB_STRSET_MAX strings held, or a size that does
 * not fit a size_t); then nothing changed.
 */
int lib_strset_add(struct lib_strset *ss, const char *s, size_t len, uint32_t *id);
/* The id of @s (@len bytes) in *@id: 0, or -ENOENT if it is not there. */
int lib_strset_find(const struct lib_strset *ss, const char *s, size_t len, uint32_t *id);

/* Forget every string, keep the memory: ids start from 0 again. */
void lib_strset_clear(struct lib_strset *ss);
/* Free @ss's memory; @ss is then an empty set. */
void lib_strset_release(struct lib_strset *ss);

/* Strings held (the next id). */
static inline size_t lib_strset_count(const struct lib_strset *ss)
{
	return ss->n;
}

/* String @id (< lib_strset_count()), NUL-terminated. */
static inline const char *lib_strset_str(const struct lib_strset *ss, uint32_t id)
{
	return ss->data + ss->off[id];
}

/* The length of string @id (< lib_strset_count()), its NUL not counted. */
static inline size_t lib_strset_len(const struct lib_strset *ss, uint32_t id)
{
	return ss->off[id + 1] - ss->off[id] - 1;
}

/* The strings, each followed by its NUL, in id order: lib_strset_size()
 * bytes (NULL for an empty set that never held one). */
static inline const char *lib_strset_data(const struct lib_strset *ss)
{
	return ss->data;
}

static inline size_t lib_strset_size(const struct lib_strset *ss)
{
	return ss->size;
}

#endif /* D9_LIB_STRSET_H */
