/* SPDX-License-Identifier: MIT */
/*
 * delay_table.c - the work behind `d9prof delays`: the worst wake-to-poll
 * delays with their causes, as text or JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/causes.h"
#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/text.h"

#define MAX_CAUSES 8 /* per thread and delay */
/* % of a delay the poller must be parked or idle
 * for the waking thread to be looked at too */
#define BUSY_SHARE 50

/* ---- one delay ---------------------------------------------------------- */

struct row {
	const struct delay *d;
	struct delay_cause c[MAX_CAUSES];
	size_t nc;
	/* the waking thread, when the poller was mostly parked or idle */
	struct delay_cause wc[MAX_CAUSES];
	size_t nwc;
};

static int busy_elsewhere(const struct offcpu *oc, const struct row *r)
{
	uint64_t idle = 0, all = r->d->begin - r->d->wake, ns;

	if (r->d->waker == r->d->poller ||
	    !join__thread_totals(oc->join, r->d->waker, &ns))
		return 0;
	for (size_t i = 0; i < r->nc; i++)
		if (r->c[i].kind == CAUSE_PARKED || r->c[i].kind == CAUSE_RUNNING)
			idle += r->c[i].ns;
	return all && idle * 100 >= all * BUSY_SHARE;
}

static void thread_json(const struct trace *t, uint32_t tid, struct lib_json *w)
{
	lib_json_object_begin(w);
	lib_json_uint_field(w, "tid", tid);
	lib_json_str_field(w, "thread", trace__thread_name(t, tid));
	lib_json_object_end(w);
}

/* The TASK, BY and POLLED-ON cells of a row. */
struct cells {
	char task[160], by[200], on[128];
};

static void row_cells(const struct offcpu *oc, const struct delay *d, struct cells *c)
{
	const struct join *j = oc->join;
	const struct task_stat *ts = join__task(j, d->task);
	char name[128] = "", who[160];

	if (ts && ts->name)
		analysis_clean_name(ts->name, name, sizeof(name));
	snprintf(c->task, sizeof(c->task), "%" PRIu64 "%s%s", trace_task_number(d->task),
		 *name ? " " : "", name);
	if (d->waker_poll >= 0)
		analysis_task_label(j, join__poll(j, (uint32_t)d->waker_poll)->task, who,
				    sizeof(who));
	else if (!d->waker) /* a lean trace's: the wait, not who woke */
		snprintf(who, sizeof(who), "[not recorded]");
	else
		analysis_thread_label(oc->trace, d->waker, who, sizeof(who));
	snprintf(c->by, sizeof(c->by), "%s%s", d->spawn ? "spawn " : "", who);
	analysis_thread_label(oc->trace, d->poller, c->on, sizeof(c->on));
}

static int pad(const char *s, int w)
{
	return w - (int)analysis_u8_width(s);
}

/* One row, cut to @width characters (0: whole, written straight to
 * @out): written to memory first to be cut, its CAUSE being of any
 * length. */
static int row_text(const struct offcpu *oc, const struct hot *h, const struct row *r,
		    const int w[3], size_t width, FILE *out)
{
	const struct delay *d = r->d;
	struct cells c;
	char dur[32], on[128], *line = NULL;
	size_t len = 0;
	FILE *m = width ? open_memstream(&line, &len) : out;

	if (!m)
		return -ENOMEM;
	row_cells(oc, d, &c);
	text_duration(d->begin - d->wake, dur, sizeof(dur));
	fprintf(m, "%-8s  %s%*s  %10.6f  %s%*s  %s%*s  %-7" PRId32 "  ", dur, c.task,
		pad(c.task, w[0]), "", (double)since_start(oc, d->wake) / 1e9, c.by,
		pad(c.by, w[1]), "", c.on, pad(c.on, w[2]), "", d->poll);
	analysis_causes_text(oc, h, r->c, r->nc, d->begin - d->wake, NULL, m);
	if (r->nwc) {
		analysis_thread_label(oc->trace, d->waker, on, sizeof(on));
		fprintf(m, "; meanwhile on %s, which woke it: ", on);
		analysis_causes_text(oc, h, r->wc, r->nwc, d->begin - d->wake, NULL, m);
	}
	if (m == out) {
		fputc('\n', out);
		return 0;
	}
	if (fclose(m)) {
		free(line);
		return -ENOMEM;
	}
	if (width > 2 && analysis_u8_width(line) > width) {
		analysis_u8_cut(line, width - 2);
		fprintf(out, "%s..\n", line);
	} else {
		fprintf(out, "%s\n", line);
	}
	free(line);
	return 0;
}

static void row_json(const struct offcpu *oc, const struct hot *h, const struct row *r,
		     struct lib_json *w)
{
	const struct delay *d = r->d;
	const struct join *j = oc->join;
	const struct task_stat *ts = join__task(j, d->task);

	lib_json_object_begin(w);
	lib_json_uint_field(w, "task", trace_task_number(d->task));
	lib_json_str_field(w, "task_name", ts ? ts->name : NULL);
	lib_json_uint_field(w, "delay_ns", d->begin - d->wake);
	lib_json_uint_field(w, "woken_ns", since_start(oc, d->wake));
	lib_json_bool_field(w, "spawn", d->spawn);
	lib_json_uint_field(w, "merged", d->merged);
	lib_json_name(w, "woken_by");
	lib_json_object_begin(w);
	lib_json_uint_field(w, "tid", d->waker);
	lib_json_str_field(w, "thread", trace__thread_name(oc->trace, d->waker));
	lib_json_name(w, "task");
	if (d->waker_poll >= 0) {
		const struct poll *p = join__poll(j, (uint32_t)d->waker_poll);
		const struct task_stat *wt = join__task(j, p->task);

		lib_json_uint(w, trace_task_number(p->task));
		lib_json_str_field(w, "task_name", wt ? wt->name : NULL);
	} else {
		lib_json_null(w);
	}
	lib_json_object_end(w);
	lib_json_name(w, "polled_on");
	thread_json(oc->trace, d->poller, w);
	lib_json_int_field(w, "poll", d->poll);
	lib_json_name(w, "causes");
	analysis_causes_json(oc, h, r->c, r->nc, w);
	if (r->nwc) {
		lib_json_name(w, "waker_causes");
		analysis_causes_json(oc, h, r->wc, r->nwc, w);
	}
	lib_json_object_end(w);
}

/* The table as one JSON object in @w: @rows[0..@shown) of @n matched. */
static void table_json(const struct offcpu *oc, const struct delays *dl,
		       const struct delays_opts *o, const struct hot *h,
		       const struct row *rows, size_t shown, size_t n, struct lib_json *w)
{
	const struct join *j = oc->join;
	size_t i;

	lib_json_object_begin(w);
	lib_json_name(w, "delays");
	lib_json_array_begin(w);
	for (i = 0; i < shown; i++)
		row_json(oc, h, &rows[i], w);
	lib_json_array_end(w);
	lib_json_uint_field(w, "matched", n);
	lib_json_name(w, "never_polled");
	lib_json_array_begin(w);
	for (i = 0; i < dl->nlost; i++) {
		const struct delay *d = &dl->lost[i];
		const struct task_stat *ts = join__task(j, d->task);

		if (!join__kept(j, ts))
			continue;
		lib_json_object_begin(w);
		lib_json_uint_field(w, "task", trace_task_number(d->task));
		lib_json_str_field(w, "task_name", ts ? ts->name : NULL);
		lib_json_uint_field(w, "woken_ns", since_start(oc, d->wake));
		lib_json_uint_field(w, "waited_ns",
				    dl->end_time > d->wake ? dl->end_time - d->wake : 0);
		lib_json_name(w, "woken_by");
		thread_json(oc->trace, d->waker, w);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_bool_field(w, "runq_split", oc->runq_split);
	lib_json_str_field(w, "runq_missing",
			   oc->runq_split ? NULL : analysis_runq_missing(oc->trace));
	lib_json_str_field(w, "runq_holders_missing",
			   analysis_runq_holders_missing(oc->trace));
	if (!o->no_losses)
		analysis_losses_json(oc->trace, LOSS_ALL, w);
	lib_json_object_end(w);
}

static void lost_text(const struct offcpu *oc, const struct delays *dl,
		      const struct delay *d, FILE *out)
{
	char task[160], by[160], dur[32];

	analysis_task_label(oc->join, d->task, task, sizeof(task));
	analysis_thread_label(oc->trace, d->waker, by, sizeof(by));
	text_duration(dl->end_time > d->wake ? dl->end_time - d->wake : 0, dur,
		      sizeof(dur));
	fprintf(out, "#   %s, woken at %.6f s by %s, waited %s+ to the end\n", task,
		(double)since_start(oc, d->wake) / 1e9, by, dur);
}

/* The table as text on @out, or as JSON in @jw if @jw is not NULL. */
static int delays_table(const struct offcpu *oc, const struct delays *dl,
			const struct delays_opts *o, FILE *out, struct lib_json *jw)
{
	const struct join *j;
	struct row *rows = NULL;
	struct hot h;
	size_t i, n = 0, shown, cap = 0;
	int err = -ENOMEM;

	if (!oc || !dl || !o || (!out && !jw))
		return -EINVAL;
	j = oc->join;
	if (join__keeps_none(j))
		return -ENOENT;
	if (hot_init(&h)) {
		hot_release(&h);
		return -ENOMEM;
	}
	for (i = 0; i < dl->n && !(o->limit && n >= o->limit); i++) {
		const struct delay *d = &dl->v[i];
		struct row *r;

		if (!join__kept(j, join__task(j, d->task)) ||
		    d->begin - d->wake < o->min_ns)
			continue;
		if (LIB_GROW(rows, cap, n + 1))
			goto out;
		r = &rows[n++];
		memset(r, 0, sizeof(*r));
		r->d = d;
		r->nc = delays__causes(oc, d->poller, d->wake, d->begin, r->c,
				       MAX_CAUSES);
		if (r->nc > MAX_CAUSES)
			r->nc = MAX_CAUSES;
		if (busy_elsewhere(oc, r)) {
			r->nwc = delays__causes(oc, d->waker, d->wake, d->begin, r->wc,
						MAX_CAUSES);
			if (r->nwc > MAX_CAUSES)
				r->nwc = MAX_CAUSES;
		}
		for (size_t k = 0; k < r->nc; k++)
			if (r->c[k].kind == CAUSE_POLL && hot_want(&h, r->c[k].poll))
				goto out;
		for (size_t k = 0; k < r->nwc; k++)
			if (r->wc[k].kind == CAUSE_POLL && hot_want(&h, r->wc[k].poll))
				goto out;
	}
	shown = n;
	/* how many match, listed or not: what the delays counted at the
	 * keep's threshold, else what the list (then whole) holds */
	if (o->min_ns == dl->min_ns) {
		n = dl->matched;
	} else {
		for (; i < dl->n; i++)
			n += join__kept(j, join__task(j, dl->v[i].task)) &&
			     dl->v[i].begin - dl->v[i].wake >= o->min_ns;
	}
	err = hot_walk(&h, j);
	if (err)
		goto out;

	if (jw) {
		table_json(oc, dl, o, &h, rows, shown, n, jw);
	} else {
		int w[3] = {4, 2, 9}; /* TASK, BY, POLLED-ON */

		for (i = 0; i < shown; i++) {
			struct cells c;

			row_cells(oc, rows[i].d, &c);
			if (pad(c.task, w[0]) < 0)
				w[0] = (int)analysis_u8_width(c.task);
			if (pad(c.by, w[1]) < 0)
				w[1] = (int)analysis_u8_width(c.by);
			if (pad(c.on, w[2]) < 0)
				w[2] = (int)analysis_u8_width(c.on);
		}
		fprintf(out, "%-8s  %-*s  %10s  %-*s  %-*s  %-7s  %s\n", "DELAY", w[0],
			"TASK", "WOKEN(s)", w[1], "BY", w[2], "POLLED-ON", "POLL",
			"CAUSE");
		for (i = 0; i < shown && !err; i++)
			err = row_text(oc, &h, &rows[i], w, o->width, out);
		if (err)
			goto out;
		fprintf(out, "# %zu of %zu delays, longest first", shown, n);
		if (o->min_ns) {
			char d[32];

			fprintf(out, ", at least %s",
				text_duration(o->min_ns, d, sizeof(d)));
		}
		if (j->sel.on) {
			char what[160];

			fprintf(out, ", %s", task_sel_text(&j->sel, what, sizeof(what)));
		}
		fputc('\n', out);
		analysis_tokio_note(oc->trace, "wakes", out);
		analysis_lean_note(oc->trace, out);
		if (!oc->trace->nswitches)
			fprintf(out, "# causes without off-CPU time: %s\n",
				offcpu_missing(oc->trace));
		else if (!oc->runq_split)
			fprintf(out, "# blocked and run-queue time cannot be split: %s\n",
				analysis_runq_missing(oc->trace));
		else if (analysis_runq_holders_missing(oc->trace))
			fprintf(out, "# run-queue holders approximate: %s\n",
				analysis_runq_holders_missing(oc->trace));
		for (i = 0, n = 0; i < dl->nlost && !o->no_lost; i++) {
			if (!join__kept(j, join__task(j, dl->lost[i].task)))
				continue;
			if (!n++)
				fprintf(out, "# woken and never polled again:\n");
			if (n <= 20)
				lost_text(oc, dl, &dl->lost[i], out);
		}
		if (n > 20)
			fprintf(out, "#   ... and %zu more\n", n - 20);
		if (!o->no_losses)
			analysis_losses_footer(oc->trace, LOSS_ALL, out);
	}
	err = jw ? lib_json_error(jw) : ferror(out) ? -EIO : 0;
	if (o->shown)
		*o->shown = shown;
out:
	free(rows);
	hot_release(&h);
	return err;
}

int analysis__delays_json(const struct offcpu *oc, const struct delays *dl,
			  const struct delays_opts *o, struct lib_json *w)
{
	return w ? delays_table(oc, dl, o, NULL, w) : -EINVAL;
}

int analysis__delays(const struct offcpu *oc, const struct delays *dl,
		     const struct delays_opts *o, FILE *out)
{
	struct lib_json w;
	int err;

	if (!o || !o->json || !out)
		return delays_table(oc, dl, o, out, NULL);
	lib_json_init(&w, out);
	err = delays_table(oc, dl, o, NULL, &w);
	return err ? err : lib_json_finish(&w);
}
