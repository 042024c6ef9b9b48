/* SPDX-License-Identifier: MIT */
/*
 * flame_diff.c - differential flamegraphs: what changed between two
 * profiles (two recordings, or two windows of one).
 *
 * Both profiles are built as analysis__flame() builds one; the base's tree
 * is then merged into the new one path by path (flame_merge_base), so each
 * node carries both weights. The folded form is difffolded.pl's; the SVG is
 * flame_svg.c's with a paint hook: widths from the new profile, colour from
 * the change against the base scaled to the new total (Brendan Gregg's
 * differential flame graphs, as flamegraph.pl draws difffolded.pl's output
 * after its -n).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/losses.h"
#include "analysis/views.h"

static int same_name(const char *a, const char *b)
{
	return (!a || !*a) ? (!b || !*b) : (b && !strcmp(a, b));
}

int task_sel_match(const struct join *j, struct join *base)
{
	const struct task_sel *sel = &j->sel;
	struct task_sel out = *sel;
	const struct task_stat *ts, *bs;

	if (!sel->on || sel->name)
		return join__select(base, &out) < 0 ? -ENOENT : TASK_MATCH_SAME;
	/* ids are handed out afresh by each run: the same id is the same
	 * task only if its name agrees */
	ts = join__selected(j);
	bs = NULL;
	for (size_t i = 0; !bs && i < base->ntasks; i++)
		if (task_sel_has(sel, &base->tasks[i]))
			bs = &base->tasks[i];
	if (bs && same_name(ts ? ts->name : NULL, bs->name))
		return join__select(base, &out) < 0 ? -ENOENT : TASK_MATCH_SAME;
	if (ts && ts->name && *ts->name) {
		out.id = 0;
		out.name = ts->name;
	}
	return join__select(base, &out) < 0 || !out.name ? -ENOENT : TASK_MATCH_NAME;
}

struct diff_paint {
	double scale; /* base weight to new */
	double max;   /* the largest |change| of any frame */
};

/* A frame's change: its new weight less its base weight scaled. */
static double change(const struct flame *f, const struct diff_paint *p, uint32_t n)
{
	return (double)f->nodes[n].total - p->scale * (double)f->base[n].total;
}

/* flamegraph.pl's differential palette: white for no change, towards red
 * for growth and blue for shrinking. The tooltip has no " (": the script
 * takes the label as what comes before the last one. */
static void diff_paint(const struct flame *f, uint32_t node, int rgb[3], char *tip,
		       size_t len)
{
	const struct diff_paint *p = f->paint_ctx;
	uint64_t now = f->nodes[node].total, was = f->base[node].total;
	double d = change(f, p, node), s = p->max > 0 ? fabs(d) / p->max : 0;
	int v = (int)lround(210 * (s > 1 ? 1 : s));

	if (d > 0)
		rgb[0] = 255, rgb[1] = rgb[2] = 255 - v;
	else if (d < 0)
		rgb[0] = rgb[1] = 255 - v, rgb[2] = 255;
	else
		rgb[0] = rgb[1] = rgb[2] = 250;
	if (!was || !p->scale)
		snprintf(tip, len, "new: base 0 -> new %" PRIu64 " samples", now);
	else if (p->scale == 1.0)
		snprintf(tip, len, "%+.1f%%: base %" PRIu64 " -> new %" PRIu64 " samples",
			 100.0 * d / (p->scale * was), was, now);
	else
		snprintf(tip, len,
			 "%+.1f%%: base %.0f -> new %" PRIu64 " samples, normalized; "
			 "raw base %" PRIu64,
			 100.0 * d / (p->scale * was), p->scale * was, now, was);
}

static int write_diff_svg(const struct join *j, const struct flame_diff_opts *o,
			  const struct flame *f, const struct flame_diff_result *r,
			  FILE *out)
{
	char title[512], sub[1024], what[160];
	uint64_t bw = r->base.weight;
	size_t n = 0;

	analysis_svg_title(j->trace, o->cur.title, "Differential CPU flame graph", title,
			   sizeof(title));
	if (j->sel.on)
		n = (size_t)snprintf(sub, sizeof(sub),
				     "%s: ", task_sel_text(&j->sel, what, sizeof(what)));
	if (n < sizeof(sub))
		n += (size_t)snprintf(sub + n, sizeof(sub) - n,
				      "new: %s, %" PRIu64
				      " samples (widths); base: %s, %" PRIu64 " samples",
				      o->cur_name ? o->cur_name : "new", r->cur.weight,
				      o->base_name ? o->base_name : "base", bw);
	if (n < sizeof(sub) && bw)
		n += (size_t)snprintf(
			sub + n, sizeof(sub) - n,
			" scaled x%.3f; red grew, blue shrank; %" PRIu64
			" base samples (%.1f%%) in stacks the new profile lacks",
			r->scale, r->vanished, 100.0 * r->vanished / bw);
	else if (n < sizeof(sub))
		n += (size_t)snprintf(sub + n, sizeof(sub) - n,
				      ": the base is empty, every frame is new");
	if (n < sizeof(sub))
		losses_note(j->trace, LOSS_CPU | LOSS_POLLS, sub + n, sizeof(sub) - n);
	return flame__write_svg(f, out, title, sub, "samples");
}

int analysis__flame_diff(const struct join *j, const struct join *base,
			 const struct flame_diff_opts *o, FILE *out)
{
	struct flame_diff_result r = {0};
	struct flame *f = NULL, *bf = NULL;
	struct groups *g = NULL, *bg = NULL;
	struct flame_opts co, bo;
	struct diff_paint paint = {0};
	int err;

	if (!j || !base || !o || !out)
		return -EINVAL;
	co = o->cur;
	/* task ids differ between runs; names are what two recordings share */
	if (co.by == GROUP_AUTO)
		co.by = GROUP_NAME;
	bo = co;
	err = analysis_flame_build(j, &co, &g, &f, &r.cur);
	if (!err)
		err = analysis_flame_build(base, &bo, &bg, &bf, &r.base);
	if (!err)
		err = flame_merge_base(f, bf);
	if (err)
		goto out;
	r.scale = r.base.weight ? (double)r.cur.weight / r.base.weight : 0;
	paint.scale = r.scale;
	/* saturation is relative to the largest change of a frame that is
	 * drawn; what has no width in the new profile is counted instead */
	for (size_t i = 0; i < f->nnodes; i++) {
		double d = fabs(change(f, &paint, (uint32_t)i));

		if (!f->nodes[i].total)
			r.vanished += f->base[i].self;
		else if (d > paint.max)
			paint.max = d;
	}
	if (o->cur.format == FLAME_FOLDED) {
		err = flame__write_folded(f, out);
	} else {
		f->paint = diff_paint;
		f->paint_ctx = &paint;
		err = write_diff_svg(j, o, f, &r, out);
	}
	if (!err && !r.cur.weight)
		err = -ENODATA;
out:
	if (o->result)
		*o->result = r;
	flame__free(f);
	flame__free(bf);
	groups__free(g);
	groups__free(bg);
	return err;
}
