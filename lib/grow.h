/* SPDX-License-Identifier: MIT */
/*
 * grow.h - arrays that grow by doubling (git's ALLOC_GROW), the one way in
 * the tree.
 *
 * lib_grow() makes the array *@p hold at least @need elements of @size
 * bytes (@need 0 counts as 1: an array that was grown is never NULL, so
 * it may be indexed and offset when empty): a no-op while *@cap is
 * enough, else a realloc to the next power of two from 16 up. On overflow
 * or no memory it returns -ENOMEM and leaves *@p and *@cap as they were;
 * else 0. LIB_GROW() is the same for an array variable, sized by its
 * type: LIB_GROW(v, cap, n + 1).
 *
 * The shim (libprof/) allocates nothing on its paths and does not use it.
 */
#ifndef D9_LIB_GROW_H
#define D9_LIB_GROW_H

#include <stddef.h>

int lib_grow(void **p, size_t *cap, size_t need, size_t size);

#define LIB_GROW(arr, cap, need) lib_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif /* D9_LIB_GROW_H */
