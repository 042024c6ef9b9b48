// SPDX-License-Identifier: MIT
/*
 * lean.c - a lean recording's sums per task (lean.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lean.h"
#include "lib/grow.h"
#include "lib/search.h"
#include "lib/text.h"

struct lean {
	double unit; /* ns per bucket unit */
	size_t n;
	struct lean_stat *task; /* per join.tasks entry */
	struct lean_stat none;
};

void analysis_lean_parse(const char *v, uint64_t *poll_ns, uint64_t *delay_ns,
			 double *unit_ns)
{
	unsigned long long p = 0, d = 0;
	double u = 1;

	if (sscanf(v, "poll=%llu delay=%llu unit=%lf", &p, &d, &u) != 3 || !(u > 0) ||
	    u > 1e6)
		u = 1;
	if (poll_ns)
		*poll_ns = p;
	if (delay_ns)
		*delay_ns = d;
	if (unit_ns)
		*unit_ns = u;
}

int analysis_is_lean(const struct trace *t, uint64_t *poll_ns, uint64_t *delay_ns,
		     double *unit_ns)
{
	const char *v = trace__meta(t, TRACE_META_LEAN);

	if (!v)
		return 0;
	analysis_lean_parse(v, poll_ns, delay_ns, unit_ns);
	return 1;
}

uint64_t lean_bucket_ns(uint32_t b, double unit_ns)
{
	double lo = (double)trace_sum_bucket_low(b);
	double hi = b + 1 < TRACE_SUM_BUCKETS ? (double)trace_sum_bucket_low(b + 1) : lo;

	return (uint64_t)((lo + hi) / 2 * unit_ns);
}

void analysis_lean_note(const struct trace *t, FILE *out)
{
	uint64_t p, d;
	char a[32], b[32];

	if (!analysis_is_lean(t, &p, &d, NULL))
		return;
	fprintf(out,
		"# lean recording (record --lean): polls shorter than %s whose wake waited "
		"less than %s are counted per task (counts, totals, histograms), not "
		"listed: their exact times, wakes and delays are not in the trace\n",
		text_duration(p, a, sizeof(a)), text_duration(d, b, sizeof(b)));
}

/* Bucket @key of @s counted @n more */
static int stat_count(struct lean_stat *s, uint16_t key, uint64_t n)
{
	size_t at = LIB_PARTITION_POINT(0, s->nb, i, s->b[i].key < key);

	if (at < s->nb && s->b[at].key == key) {
		s->b[at].count += n;
		return 0;
	}
	if (LIB_GROW(s->b, s->capb, s->nb + 1))
		return -ENOMEM;
	memmove(&s->b[at + 1], &s->b[at], (s->nb - at) * sizeof(*s->b));
	s->b[at] = (struct lean_bucket){key, n};
	s->nb++;
	return 0;
}

static void stat_scalars(struct lean_stat *to, const struct lean_stat *from)
{
	to->polls += from->polls;
	to->delays += from->delays;
	to->poll_total += from->poll_total;
	to->delay_total += from->delay_total;
	if (from->poll_max > to->poll_max)
		to->poll_max = from->poll_max;
	if (from->delay_max > to->delay_max)
		to->delay_max = from->delay_max;
}

int lean_stat_add(struct lean_stat *to, const struct lean_stat *from)
{
	stat_scalars(to, from);
	for (size_t i = 0; i < from->nb; i++) {
		int err = stat_count(to, from->b[i].key, from->b[i].count);

		if (err)
			return err;
	}
	return 0;
}

void lean_stat_release(struct lean_stat *s)
{
	free(s->b);
	s->b = NULL;
	s->nb = s->capb = 0;
}

/* Sum @s into @ls */
static int add_sum(struct lean_stat *ls, const struct trace *t, const struct trace_sum *s)
{
	const struct lean_stat one = {.polls = s->polls,
				      .delays = s->delays,
				      .poll_total = s->poll_total,
				      .delay_total = s->delay_total,
				      .poll_max = s->poll_max,
				      .delay_max = s->delay_max};

	stat_scalars(ls, &one);
	for (uint32_t e = 0; e < s->nent; e++) {
		const struct trace_sum_ent *x = &t->sum_ents[s->ent + e];
		int err = stat_count(ls, (uint16_t)(x->which << 8 | x->bucket), x->count);

		if (err)
			return err;
	}
	return 0;
}

uint64_t lean_thread_polls(const struct trace *t, uint32_t tid, uint64_t from,
			   uint64_t to, uint64_t *ns)
{
	uint64_t n = 0;

	*ns = 0;
	for (size_t i = 0; i < t->nsums; i++) {
		const struct trace_sum *s = &t->sums[i];

		if (s->tid == tid && s->time >= from && s->time <= to) {
			n += s->polls;
			*ns += s->poll_total;
		}
	}
	return n;
}

int lean__new(const struct join *j, struct lean **out)
{
	const struct trace *t = j->trace;
	struct lean *l;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (!analysis_is_lean(t, NULL, NULL, &l->unit)) {
		free(l);
		return -EINVAL;
	}
	l->n = j->ntasks;
	l->task = calloc(l->n ? l->n : 1, sizeof(*l->task));
	if (!l->task) {
		free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nsums; i++) {
		const struct task_stat *ts = join__task(j, t->sums[i].task);

		if (ts && add_sum(&l->task[ts - j->tasks], t, &t->sums[i])) {
			lean__free(l);
			return -ENOMEM;
		}
	}
	*out = l;
	return 0;
}

const struct lean_stat *lean__task(const struct lean *l, size_t i)
{
	return i < l->n ? &l->task[i] : &l->none;
}

uint64_t lean__quantile(const struct lean *l, const struct lean_stat *s, int which,
			double q)
{
	uint64_t n = which ? s->delays : s->polls,
		 max = which ? s->delay_max : s->poll_max;
	uint64_t rank, seen = 0;

	if (!n)
		return 0;
	rank = (uint64_t)(q * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	for (size_t i = 0; i < s->nb; i++) {
		uint64_t v;

		if ((uint32_t)(s->b[i].key >> 8) != (uint32_t)which)
			continue;
		seen += s->b[i].count;
		if (seen < rank)
			continue;
		v = lean_bucket_ns(s->b[i].key & 0xff, l->unit);
		return v < max ? v : max;
	}
	return max;
}

void lean__free(struct lean *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		lean_stat_release(&l->task[i]);
	free(l->task);
	free(l);
}
