/* SPDX-License-Identifier: MIT */
/*
 * causes.h - what kept a delayed task from its poll, as the views show
 * it: the hottest stacks of the polls a cause names, and causes as text
 * and JSON (causes.c).
 */
#ifndef D9_ANALYSIS_CAUSES_H
#define D9_ANALYSIS_CAUSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/delays.h"
#include "lib/map.h"

struct lib_json;

#define HOT_FRAMES 3 /* innermost distinct frames shown of a hot stack */

struct hot {
	uint32_t *canon; /* analysis_stack_canon(), made by hot_walk */
	size_t ncanon;
	struct lib_map want; /* poll id -> 1 + index in best */
	struct lib_map w;    /* poll << 32 | canon[stack] -> weight */
	uint32_t *best;	     /* per wanted poll: stack id, UINT32_MAX none */
	uint64_t *best_w;
	size_t n, cap;
};

/* Start, want poll @poll (< 0: ignored) looked at, walk the samples once,
 * then read a poll's HOT_FRAMES innermost distinct frame labels of its
 * hottest stack into @lab (their number; 0 if none). 0 or -errno. */
int hot_init(struct hot *h);
int hot_want(struct hot *h, int32_t poll);
int hot_walk(struct hot *h, const struct join *j);
size_t hot_frames(const struct hot *h, const struct trace *t, int32_t poll,
		  char lab[HOT_FRAMES][256]);
void hot_release(struct hot *h);

/* ---- causes as text and JSON (causes.c) ------------------------------- */

/* Causes @c (@n of them; the text shows the first 4) of an interval of
 * @all ns, as "polling task N name 1.2ms (40%) in a <- b <- c; blocked
 * ..." (delays) or, with @own set, as the causes of a poll of task @own:
 * its own CPU time "CPU 1.2ms (40%) in ...", and no "inside task N's
 * poll". The JSON form is an array of objects (schema in d9prof(1)). */
void analysis_causes_text(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, uint64_t all,
			  const uint64_t *own, FILE *out);
void analysis_causes_json(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, struct lib_json *w);

#endif /* D9_ANALYSIS_CAUSES_H */
