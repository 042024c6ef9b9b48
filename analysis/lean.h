/* SPDX-License-Identifier: MIT */
/*
 * lean.h - a lean recording's polls (record --lean, lean.c): the shim
 * writes only the polls past a length or a wait, and sums every poll per
 * thread and task (trace.sums); here the sums per task of a join, and
 * what a view says it cannot show.
 */
#ifndef D9_ANALYSIS_LEAN_H
#define D9_ANALYSIS_LEAN_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/join.h"
#include "trace/trace.h"

/* Was @t recorded lean (TRACE_META_LEAN)? Its thresholds (ns) and the
 * unit its buckets are in (ns), where not NULL. */
int analysis_is_lean(const struct trace *t, uint64_t *poll_ns, uint64_t *delay_ns,
		     double *unit_ns);
/* Meta TRACE_META_LEAN's value @v parsed, as analysis_is_lean() says */
void analysis_lean_parse(const char *v, uint64_t *poll_ns, uint64_t *delay_ns,
			 double *unit_ns);
/* The middle of trace_sum bucket @b, ns (@unit_ns: of the bucket's unit) */
uint64_t lean_bucket_ns(uint32_t b, double unit_ns);
/* A view's line saying what a lean trace lists and what it counts only;
 * nothing for another trace */
void analysis_lean_note(const struct trace *t, FILE *out);

/* Thread @tid's polls as the shim summed them, those of the sums flushed
 * from @from to @to (ns; sums are flushed every second): their count,
 * and their total length in *@ns */
uint64_t lean_thread_polls(const struct trace *t, uint32_t tid, uint64_t from,
			   uint64_t to, uint64_t *ns);

/* A task's (or several tasks') polls as the shim summed them: all of
 * them, those written too; lengths and waits in trace_sum buckets */
struct lean_stat {
	uint64_t polls, delays;
	uint64_t poll_total, delay_total, poll_max, delay_max; /* ns */
	/* the buckets not empty, in key order: which << 8 | bucket (which
	 * 0: lengths, 1: waits) and its count */
	struct lean_bucket {
		uint16_t key;
		uint64_t count;
	} * b;
	size_t nb, capb;
};
struct lean;
/* The sums of @j's trace per task of @j (join.tasks order); -EINVAL for a
 * trace not lean */
int lean__new(const struct join *j, struct lean **out);
/* Task @i's (join.tasks index); all zero for one with no sums */
const struct lean_stat *lean__task(const struct lean *l, size_t i);
/* @from's sums added to @to's: 0 or -ENOMEM */
int lean_stat_add(struct lean_stat *to, const struct lean_stat *from);
void lean_stat_release(struct lean_stat *s);
/* The @q quantile (0..1, nearest rank) of @s's lengths (@which 0) or
 * waits (1), ns: the middle of its bucket, at most the maximum; 0 for
 * none */
uint64_t lean__quantile(const struct lean *l, const struct lean_stat *s, int which,
			double q);
void lean__free(struct lean *l);

#endif /* D9_ANALYSIS_LEAN_H */
