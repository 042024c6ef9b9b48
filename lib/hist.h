/* SPDX-License-Identifier: MIT */
/*
 * hist.h - a distribution of u64 values (durations in ns) in bounded
 * memory: its count, sum, minimum and maximum exact, its quantiles exact
 * while it holds at most LIB_HIST_EXACT values, then from log-linear
 * buckets (HDR-style: 128 per power of two, values under 128 each their
 * own) with a relative error of at most 1/256 (0.4%; stated as 1%).
 * Mergeable: the histograms of two sets merged are the histogram of their
 * union, so a task's, a group's and a fleet's quantiles are one code.
 *
 * Memory: 64 bytes (one or two values are its min and max), 8 more a
 * value from the third up to LIB_HIST_EXACT values, then
 * 1 KiB per power of two the values span (a few tens of KiB for
 * durations), whatever the count. Not thread-safe; allocates (lib_grow()).
 */
#ifndef D9_LIB_HIST_H
#define D9_LIB_HIST_H

#include <stddef.h>
#include <stdint.h>

/* values kept exactly, at most, before they are binned */
#define LIB_HIST_EXACT	  1024
#define LIB_HIST_SUB_BITS 7
/* octave 0 holds 0..127 one a bucket; octave o >= 1 the values with
 * o + 6 bits, 2^(o - 1) a bucket */
#define LIB_HIST_OCTAVES (64 - LIB_HIST_SUB_BITS + 1)

struct lib_hist {
	uint64_t n, sum, min, max; /* sum wraps past 2^64 ns (584 years) */
	uint64_t *exact;	   /* the values while n <= LIB_HIST_EXACT
				    * (NULL for one or two: min, max) */
	size_t exact_cap;
	uint64_t **oct; /* then: LIB_HIST_OCTAVES arrays of counts, each
			 * allocated when first used */
	int binned;
};

/* An empty histogram; zeroed memory is one too. */
void lib_hist_init(struct lib_hist *h);
void lib_hist_release(struct lib_hist *h);

/* Add @v. 0 or -ENOMEM (then @h is unchanged). */
int lib_hist_add(struct lib_hist *h, uint64_t v);

/* Add every value of @from to @into. 0 or -ENOMEM (then @into may hold
 * part of them: release it). */
int lib_hist_merge(struct lib_hist *into, const struct lib_hist *from);

/* The nearest-rank quantile @num/@den (0 < @num <= @den, e.g. 99/100):
 * the value of rank ceil(n * @num / @den) in ascending order, exactly
 * while @h holds its values, else its bucket's middle within [min, max];
 * 0 if @h is empty. Sorts the exact values in place (hence not const). */
uint64_t lib_hist_quantile(struct lib_hist *h, uint64_t num, uint64_t den);

/* The least value, exact or a bucket's upper end, that at most @k of
 * @h's values exceed (0 if @k >= n): a threshold that lets through no
 * more than @k. Sorts the exact values in place. */
uint64_t lib_hist_above(struct lib_hist *h, uint64_t k);

#endif /* D9_LIB_HIST_H */
