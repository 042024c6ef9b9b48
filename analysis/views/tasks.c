// SPDX-License-Identifier: MIT
/*
 * tasks.c - the work behind `d9prof tasks`: one row per task (or group), CPU,
 * polls and delays.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/lean.h"
#include "analysis/labels.h"
#include "analysis/losses.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/text.h"

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

#define NAME_MAX_W 32

/* One row of the task table: a task, or all tasks of one name. */
struct trow {
	uint32_t grp;
	uint64_t task; /* GROUP_TASK: the task id */
	uint64_t ntasks, polls, weight, total_ns, longest_ns;
	uint64_t nzc;	 /* of its tasks, zero-code ones: no polls known */
	uint64_t p99_ns; /* poll length's 99th percentile */
	struct lib_hist lens;
	struct delay_stats ds;
	int lean;
	struct lean_stat ls; /* a lean trace's sums of its tasks */
};

static int trow_cmp(const void *a, const void *b, void *key)
{
	const struct trow *x = a, *y = b;
	uint64_t kx, ky;

	switch (*(const enum tasks_sort *)key) {
	case TASKS_BY_POLLS:
		kx = x->polls, ky = y->polls;
		break;
	case TASKS_BY_LONGEST:
		kx = x->longest_ns, ky = y->longest_ns;
		break;
	case TASKS_BY_DELAY:
		kx = x->ds.max, ky = y->ds.max;
		break;
	case TASKS_BY_NAME:
		kx = ky = 0;
		break;
	default:
		kx = x->weight, ky = y->weight;
		if (kx == ky)
			kx = x->total_ns, ky = y->total_ns;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->grp != y->grp) /* groups are in id or name order */
		return x->grp < y->grp ? -1 : 1;
	return 0;
}

/* A lean trace: each row's tasks' sums, its delays from them */
static int lean_rows(const struct join *j, const struct groups *g, struct trow *rows,
		     size_t nr)
{
	struct lean *lean;
	size_t i;
	int err = lean__new(j, &lean);

	if (err)
		return err;
	for (i = 0; i < j->ntasks && !err; i++)
		err = lean_stat_add(&rows[g->of_task[i]].ls, lean__task(lean, i));
	for (i = 0; i < nr; i++) {
		struct lean_stat *x = &rows[i].ls;

		rows[i].lean = 1;
		rows[i].p99_ns = lean__quantile(lean, x, 0, 0.99);
		rows[i].ds = (struct delay_stats){
			.n = x->delays,
			.p50 = lean__quantile(lean, x, 1, 0.5),
			.p99 = lean__quantile(lean, x, 1, 0.99),
			.max = x->delay_max,
		};
		lean_stat_release(x); /* its buckets: the row keeps its sums */
	}
	lean__free(lean);
	return err;
}

/* The lines under the table: what it shows of how many, by what, what
 * CPU means, the CPU in and outside polls, ends without a begin. */
static void tasks_footer(const struct join *j, const struct groups *g,
			 const struct tasks_opts *o, size_t shown, size_t nr,
			 double period, uint64_t span, FILE *out)
{
	int zc = analysis_is_tokio(j->trace);
	char lab[32];

	fprintf(out, "# %zu of %zu %s", shown, nr,
		g->by == GROUP_NAME ? "task names" : "tasks");
	if (g->by == GROUP_NAME)
		fprintf(out, " (%zu tasks)", j->ntasks);
	fprintf(out, ", by %s",
		o->sort == TASKS_BY_POLLS     ? "polls"
		: o->sort == TASKS_BY_LONGEST ? "longest poll"
		: o->sort == TASKS_BY_DELAY   ? "longest delay"
		: o->sort == TASKS_BY_NAME    ? "name"
					      : "CPU");
	if (shown < nr)
		fprintf(out, "; --limit 0 for all");
	fputc('\n', out);
	fprintf(out,
		"# CPU: sampled CPU time inside the %s (%s); CPU%%: of one CPU over the "
		"%s recorded\n",
		zc ? "tasks" : "polls",
		period ? "sampling periods x 1/frequency"
		       : "no sampling frequency in the trace",
		text_duration(span, lab, sizeof(lab)));
	analysis_tokio_note(j->trace, "polls, wakes or delays", out);
	analysis_lean_note(j->trace, out);
	if (analysis_is_lean(j->trace, NULL, NULL, NULL))
		fprintf(out,
			"# lean: POLLS, TOTAL-, MEAN- and LONGEST-POLL count every "
			"poll; WAKES are the polls whose wake was seen; POLL-P99 and "
			"DELAY-P50, -P99 the middle of their histogram bucket (within "
			"12%%)\n");
	/* weights, not samples: a ctimer sample may stand for several periods */
	if (period) {
		char a[32], b[32];

		fprintf(out, "# sampled CPU: %s in %s (%.1f%%), %s outside %s (%.1f%%)\n",
			text_duration((uint64_t)((double)j->samples_in_polls * period), a,
				      sizeof(a)),
			zc ? "tasks" : "polls",
			j->samples ? 100.0 * j->samples_in_polls / j->samples : 0.0,
			text_duration(
				(uint64_t)((double)(j->samples - j->samples_in_polls) *
					   period),
				b, sizeof(b)),
			zc ? "tasks" : "polls",
			j->samples
				? 100.0 * (j->samples - j->samples_in_polls) / j->samples
				: 0.0);
	} else {
		fprintf(out,
			"# %" PRIu64 " sampling periods: %" PRIu64
			" in %s (%.1f%%), %" PRIu64 " outside %s (%.1f%%)\n",
			j->samples, j->samples_in_polls, zc ? "tasks" : "polls",
			j->samples ? 100.0 * j->samples_in_polls / j->samples : 0.0,
			j->samples - j->samples_in_polls, zc ? "tasks" : "polls",
			j->samples
				? 100.0 * (j->samples - j->samples_in_polls) / j->samples
				: 0.0);
	}
	if (j->unmatched_ends)
		fprintf(out, "# incomplete: %" PRIu64 " poll ends without a begin\n",
			j->unmatched_ends);
}

int analysis__tasks(const struct join *j, const struct delays *d,
		    const struct tasks_opts *o, FILE *out)
{
	static const struct tasks_opts dflt = {0};
	const struct trace *t;
	struct groups *g = NULL;
	struct trow *rows = NULL;
	struct delay_stats *ds = NULL;
	uint64_t span, lo, hi;
	double period;
	size_t i, nr, shown, namew = 4;
	int err, pw = 5, unpolled;
	char name[NAME_MAX_W * 4 + 8], lab[300];

	if (!j || !out)
		return -EINVAL;
	if (!o)
		o = &dflt;
	t = j->trace;
	err = groups__new(j, o->by == GROUP_THREAD ? GROUP_TASK : o->by, NULL, &g);
	if (err)
		return err;
	err = -ENOMEM;
	nr = g->ngroups;
	rows = calloc(nr + 1, sizeof(*rows));
	if (d)
		ds = malloc((nr + 1) * sizeof(*ds));
	if (!rows || (d && (!ds || delays__task_stats(d, g->of_task, nr, ds))))
		goto out;
	err = 0;
	for (i = 0; i < nr; i++) {
		rows[i].grp = (uint32_t)i;
		if (ds)
			rows[i].ds = ds[i];
	}
	if (analysis_is_lean(t, NULL, NULL, NULL) && (err = lean_rows(j, g, rows, nr)))
		goto out;
	unpolled = analysis_tokio_unpolled(t);
	for (i = 0; i < j->ntasks; i++) {
		const struct task_stat *ts = &j->tasks[i];
		struct trow *r = &rows[g->of_task[i]];

		r->task = ts->task;
		r->ntasks++;
		r->nzc += unpolled && (ts->task & TRACE_TASK_TOKIO);
		r->polls += ts->polls;
		r->weight += ts->samples;
		r->total_ns += ts->total_ns;
		if (ts->longest_ns > r->longest_ns)
			r->longest_ns = ts->longest_ns;
		if (!r->lean && (err = lib_hist_merge(&r->lens, &ts->lens)))
			goto out;
	}
	for (i = 0; i < nr; i++)
		if (!rows[i].lean)
			rows[i].p99_ns = lib_hist_quantile(&rows[i].lens, 99, 100);
	for (i = 0; i < nr; i++)
		if (rows[i].lean) {
			/* every poll counted, not the few written */
			rows[i].polls = rows[i].ls.polls;
			rows[i].total_ns = rows[i].ls.poll_total;
			rows[i].longest_ns = rows[i].ls.poll_max;
		}
	qsort_r(rows, nr, sizeof(*rows), trow_cmp, (void *)&o->sort);
	shown = o->limit && o->limit < nr ? o->limit : nr;
	period = analysis_period_ns(t);
	join_seen(j, &lo, &hi);
	span = t->counters.end_time > t->counters.start_time
		       ? t->counters.end_time - t->counters.start_time
		       : (hi > lo ? hi - lo : 0);
	for (i = 0; i < shown; i++) {
		if (g->by == GROUP_NAME)
			groups__label(g, rows[i].grp, lab, sizeof(lab));
		else
			snprintf(lab, sizeof(lab), "%s",
				 j->tasks[rows[i].grp].name ?: "-");
		analysis_clean_name(lab, name, sizeof(name));
		if (analysis_u8_width(name) > namew)
			namew = analysis_u8_width(name);
		if (digits(rows[i].polls) > pw)
			pw = digits(rows[i].polls);
	}
	if (namew > NAME_MAX_W && !o->wide)
		namew = NAME_MAX_W;

	if (g->by == GROUP_NAME)
		fprintf(out, "%-*s  %6s", (int)namew, "NAME", "TASKS");
	else
		fprintf(out, "%-8s  %-*s", "TASK", (int)namew, "NAME");
	fprintf(out, "  %*s  %9s  %6s  %10s  %9s  %8s  %12s  %*s  %9s  %9s  %9s\n", pw,
		"POLLS", "CPU", "CPU%", "TOTAL-POLL", "MEAN-POLL", "POLL-P99",
		"LONGEST-POLL", pw, "WAKES", "DELAY-P50", "DELAY-P99", "DELAY-MAX");
	for (i = 0; i < shown; i++) {
		const struct trow *r = &rows[i];
		double cpu = period ? (double)r->weight * period : 0;
		char cpus[32] = "-", pct[16] = "-", tot[32] = "-", mean[32] = "-",
		     longest[32] = "-", p99p[32] = "-";
		char wakes[24] = "-", p50[32] = "-", p99[32] = "-", max[32] = "-";
		char polls[24] = "-";

		if (period) {
			text_duration((uint64_t)cpu, cpus, sizeof(cpus));
			if (span)
				snprintf(pct, sizeof(pct), "%.1f%%",
					 100.0 * cpu / (double)span);
		}
		if (r->polls) {
			text_duration(r->total_ns, tot, sizeof(tot));
			text_duration(r->total_ns / r->polls, mean, sizeof(mean));
			text_duration(r->longest_ns, longest, sizeof(longest));
			if (r->lean || r->lens.n) /* (kept: JOIN_POLL_LENGTHS) */
				text_duration(r->p99_ns, p99p, sizeof(p99p));
		}
		if (r->nzc < r->ntasks)
			snprintf(polls, sizeof(polls), "%" PRIu64, r->polls);
		if (ds && r->nzc < r->ntasks) {
			snprintf(wakes, sizeof(wakes), "%" PRIu64, r->ds.n);
			if (r->ds.n) {
				text_duration(r->ds.p50, p50, sizeof(p50));
				text_duration(r->ds.p99, p99, sizeof(p99));
				text_duration(r->ds.max, max, sizeof(max));
			}
		}
		if (g->by == GROUP_NAME) {
			groups__label(g, r->grp, lab, sizeof(lab));
			analysis_fit_name(lab, namew, name, sizeof(name));
			fprintf(out, "%s%*s  %6" PRIu64, name,
				(int)(namew - analysis_u8_width(name)), "", r->ntasks);
		} else {
			analysis_fit_name(j->tasks[r->grp].name, namew, name,
					  sizeof(name));
			fprintf(out, "%-8" PRIu64 "  %s%*s", trace_task_number(r->task),
				name, (int)(namew - analysis_u8_width(name)), "");
		}
		fprintf(out,
			"  %*s  %9s  %6s  %10s  %9s  %8s  %12s  %*s  %9s  %9s  %9s\n", pw,
			polls, cpus, pct, tot, mean, p99p, longest, pw, wakes, p50, p99,
			max);
	}
	tasks_footer(j, g, o, shown, nr, period, span, out);
	err = analysis_losses_footer(t, LOSS_CPU | LOSS_POLLS, out);
out:
	for (i = 0; rows && i < nr; i++)
		lib_hist_release(&rows[i].lens);
	free(rows);
	free(ds);
	groups__free(g);
	return err;
}
