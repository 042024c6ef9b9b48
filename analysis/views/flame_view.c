// SPDX-License-Identifier: MIT
/*
 * flame_view.c - the work behind `d9prof flame`: the graph of the samples joined
 * to polls, grouped by task, name or thread, as folded text or an SVG.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/losses.h"
#include "analysis/spans.h"
#include "analysis/tokio.h"
#include "analysis/views.h"
#include "lib/text.h"

static int write_svg(const struct join *j, const struct groups *g,
		     const struct flame_opts *o, const struct flame *f,
		     const struct flame_result *res, FILE *out)
{
	const struct trace *t = j->trace;
	char title[512], sub[640], dur[32], what[160];
	uint64_t all = j->samples, inpoll = j->samples_in_polls;
	int n;

	analysis_svg_title(t, o->title, "CPU flame graph", title, sizeof(title));

	if (j->sel.on && !j->sel.name) {
		const struct task_stat *ts = join__selected(j);
		char name[256] = "";

		if (ts->name)
			analysis_clean_name(ts->name, name, sizeof(name));
		if ((ts->task & TRACE_TASK_TOKIO) && !ts->polls)
			n = snprintf(
				sub, sizeof(sub),
				"task %" PRIu64 "%s%s: %" PRIu64
				" samples (%.1f%% of all samples; zero-code: no polls)",
				trace_task_number(ts->task), *name ? " " : "", name,
				res->weight, all ? 100.0 * res->weight / all : 0.0);
		else
			n = snprintf(sub, sizeof(sub),
				     "task %" PRIu64 "%s%s: %" PRIu64
				     " samples in %" PRIu64
				     " polls (%.1f%% of all samples), longest poll %s",
				     trace_task_number(ts->task), *name ? " " : "", name,
				     res->weight, ts->polls,
				     all ? 100.0 * res->weight / all : 0.0,
				     text_duration(ts->longest_ns, dur, sizeof(dur)));
	} else if (j->sel.on) {
		n = snprintf(sub, sizeof(sub),
			     "%s: %" PRIu64 " samples (%.1f%% of all samples)",
			     task_sel_text(&j->sel, what, sizeof(what)), res->weight,
			     all ? 100.0 * res->weight / all : 0.0);
	} else {
		n = snprintf(sub, sizeof(sub),
			     "%" PRIu64 " samples, %.1f%% inside %s%zu tasks", all,
			     all ? 100.0 * inpoll / all : 0.0,
			     analysis_tokio_unpolled(j->trace) ? "" : "polls of ",
			     j->ntasks);
	}
	if (n >= 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; %s",
			      g->by == GROUP_NAME
				      ? (o->by == GROUP_AUTO
						 ? "tasks grouped by name (many tasks; "
						   "--by task for one root each)"
						 : "tasks grouped by name")
			      : g->by == GROUP_THREAD ? "one root per thread"
			      : g->by == GROUP_SPAN   ? "one root per span name"
						      : "one root per task");
	if (n >= 0 && (size_t)n < sizeof(sub) && o->min_poll_ns)
		n += snprintf(sub + n, sizeof(sub) - n,
			      "; only polls >= %s: %" PRIu64 " samples",
			      text_duration(o->min_poll_ns, dur, sizeof(dur)),
			      res->weight);
	if (n >= 0 && (size_t)n < sizeof(sub))
		n += span_filter_note(&o->span, res->weight, "samples", sub + n,
				      sizeof(sub) - n);
	if (n >= 0 && (size_t)n < sizeof(sub))
		losses_note(t, LOSS_CPU | LOSS_POLLS, sub + n, sizeof(sub) - n);
	return flame__write_svg(f, out, title, sub, "samples");
}

int analysis__flame(const struct join *j, const struct flame_opts *o, FILE *out)
{
	struct flame *f = NULL;
	struct groups *g = NULL;
	struct flame_result res = {0};
	int err;

	if (!j || !o || !out)
		return -EINVAL;
	err = analysis_flame_build(j, o, &g, &f, &res);
	if (!err && o->format == FLAME_FOLDED)
		err = flame__write_folded(f, out);
	else if (!err)
		err = write_svg(j, g, o, f, &res, out);
	if (!err && !res.weight)
		err = -ENODATA;
	if (o->result)
		*o->result = res;
	flame__free(f);
	groups__free(g);
	return err;
}
