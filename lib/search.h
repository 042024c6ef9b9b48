/* SPDX-License-Identifier: MIT */
/*
 * search.h - binary search over a sorted array, written once.
 *
 * LIB_PARTITION_POINT(lo, hi, i, pred) is the first index i of [@lo, @hi)
 * for which the expression @pred, of i, is false; @hi if it holds for
 * all. @pred must hold on a prefix of the range and on nothing after it,
 * as a comparison with a key does on a sorted array: with v sorted,
 * v[i] < key gives the first element >= key (where to insert it, or where
 * it is), v[i] <= key the first element above key (the one before it is
 * the last at or below key). std::partition_point in C++. @i names the
 * index inside @pred: a name not otherwise in scope (-Wshadow).
 */
#ifndef D9_LIB_SEARCH_H
#define D9_LIB_SEARCH_H

#include <stddef.h>

#define LIB_PARTITION_POINT(lo, hi, i, pred)                                             \
	({                                                                               \
		size_t lo_ = (lo), hi_ = (hi);                                           \
		while (lo_ < hi_) {                                                      \
			size_t i = lo_ + (hi_ - lo_) / 2;                                \
			if (pred)                                                        \
				lo_ = i + 1;                                             \
			else                                                             \
				hi_ = i;                                                 \
		}                                                                        \
		lo_;                                                                     \
	})

#endif /* D9_LIB_SEARCH_H */
