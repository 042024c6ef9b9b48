// SPDX-License-Identifier: MIT
/* d9prof flame: CPU flamegraph of a trace, per task or split by task. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "analysis/window.h"
#include "cli/cli.h"

enum { OPT_POLL = 256, OPT_DIFF, OPT_BASE_FROM, OPT_BASE_TO, OPT_SPAN };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof flame " INPUT_USAGE "\n"
		"                    [--task ID|NAME] [--by task|name|thread|span]\n"
		"                    [--min-poll DUR] [--span NAME [--min DUR]]\n"
		"                    [--format svg|folded] [-o OUT]\n"
		"       d9prof flame " INPUT_USAGE "\n"
		"                    --poll ID [--format svg|folded] [-o OUT]\n"
		"       d9prof flame " INPUT_USAGE "\n"
		"                    [--diff BASE] [--base-from TIME] [--base-to TIME]\n"
		"                    [--task ID|NAME] [--format svg|folded] [-o OUT]\n\n"
		"Join every CPU sample to the poll running on its thread at that instant\n"
		"and draw the result. Without --task, each sample sits under a root frame\n"
		"naming its task (\"[no poll]\" outside any poll), so one picture shows the\n"
		"split between tasks; past %d tasks the roots are task names (all tasks\n"
		"of one name together; --by task for one root per task).\n\n"
		"With --poll, draw one poll (ids from 'd9prof polls'): its CPU samples\n"
		"under \"[cpu]\" and, if the trace has off-CPU data, the stacks it left the\n"
		"CPU with under \"[off-cpu]\" (\"[runqueue: comm[tid]]\" on top where it\n"
		"was runnable, waiting for the CPU that thread had). Both are in\n"
		"MICROSECONDS: a sample counts 1e6 / F us, F the sampling frequency\n"
		"recorded in the trace (-F).\n\n"
		"With --diff BASE (or --base-from/--base-to: two windows of one trace),\n"
		"draw what changed: widths from the input, colour from each frame's\n"
		"change against BASE scaled to the same total (red grew, blue shrank).\n"
		"Roots are task names, which two recordings share. --format folded\n"
		"writes difffolded.pl's \"stack base new\" lines, raw counts.\n\n"
		"options:\n" INPUT_HELP
		"  -t, --task ID|NAME    only samples taken while task ID (or any task\n"
		"                        named NAME) was polled\n" TASK_TOKIO_HELP BY_HELP
		"                        or span (the innermost span of the application\n"
		"                        entered then; \"[no span]\" outside spans)\n"
		"      --min-poll DUR    only samples inside polls that lasted at least\n"
		"                        DUR (e.g. 500us, 1ms, 2.5s); leaves out [no poll]\n"
		"      --span NAME       only samples taken while a span named NAME was\n"
		"                        entered on their thread ('d9prof spans' lists them)\n"
		"      --min DUR         with --span: only spans that lasted at least DUR\n"
		"                        (the profile of the slow requests only)\n"
		"      --poll ID         one poll's CPU and off-CPU time, in us\n"
		"      --diff BASE       a differential flamegraph against the trace\n"
		"                        BASE (a file or a directory)\n"
		"      --base-from TIME  the base is the window from TIME on (of BASE, or\n"
		"      --base-to TIME    of the input itself without --diff) up to TIME\n"
		"  -f, --format FMT      svg (default: interactive, self-contained) or\n"
		"                        folded (\"root;...;leaf count\" lines for\n"
		"                        flamegraph.pl, inferno, speedscope)\n"
		"      --title TEXT      the SVG's title (default: the command recorded)\n"
		"      --reverse         icicle: the root on top\n"
		"  -o, --output OUT      write there (default: stdout, except SVG for a\n"
		"                        terminal, which goes to d9prof-flame.svg)\n" NO_INLINE_HELP
			STACKS_HELP "  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof flame -o all.svg\n"
		"  d9prof flame --task 42 --format folded | awk '{print $NF, $0}' | sort -n | tail -3\n"
		"  d9prof flame --task short -o short-tasks.svg\n"
		"  d9prof flame --min-poll 1ms -o slow-polls.svg\n"
		"  d9prof flame --span request --min 100ms -o slow-requests.svg\n"
		"  d9prof flame --poll 1234 -o poll1234.svg\n"
		"  d9prof flame --diff before.data -o diff.svg\n"
		"  d9prof flame --from 2 --to 3 --base-from 0 --base-to 1 -f folded\n",
		GROUP_AUTO_TASKS);
}

/* flame --poll: one poll's CPU and off-CPU time together. */
static int poll_flame(struct inputs *in, unsigned int rflags, uint64_t id,
		      enum flame_format format, const char *outp)
{
	struct poll_flame_opts po = {.format = format};
	struct poll_flame_result res = {0};
	struct session se;
	const char *why;
	FILE *out;
	int err, ret = EXIT_OK;

	/* that poll only (and those off-CPU time began in): the join
	 * streams */
	if (session_open_keep(&se, in, rflags, 0, SESSION_OFFCPU,
			      &(struct join_keep){.min_ns = UINT64_MAX,
						  .one = id <= UINT32_MAX,
						  .id = (uint32_t)id}))
		return EXIT_FAIL;
	if (id >= se.j->npolls) {
		error("no poll %llu in '%s' (it has %zu; list them with 'd9prof polls %s')",
		      (unsigned long long)id, inputs_name(in), se.j->npolls,
		      inputs_args(in));
		ret = EXIT_FAIL;
		goto out;
	}
	why = offcpu_missing(se.t);
	if (why)
		warning("CPU samples only: '%s' has no off-CPU data: %s", inputs_name(in),
			why);
	po.poll = (uint32_t)id;
	po.result = &res;
	out = open_output(outp);
	if (!out) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__poll_flame(se.oc, &po, out);
	if (close_output(out, outp))
		ret = EXIT_FAIL;
	folded_losses(se.t, format, LOSS_ALL);
	if (err == -ENODATA) {
		warning("poll %llu has neither CPU samples nor off-CPU time",
			(unsigned long long)id);
	} else if (err && trace__error(se.t)) {
		analysis_failed(in, se.t, err);
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot draw the flamegraph: %s", strerror(-err));
		ret = EXIT_FAIL;
	}
	if (!err && res.period_guessed)
		warning("'%s' does not say its sampling frequency: a sample counts as "
			"%.0f us (999 Hz)",
			inputs_name(in), res.period_us);
out:
	session_close(&se);
	return ret;
}

/* "FILE" or "FILE from A to B" for the subtitle. */
static const char *side_name(struct inputs *in, char *buf, size_t len)
{
	char a[32], b[32];

	if (!in->win.from.kind && !in->win.to.kind)
		return inputs_name(in);
	snprintf(buf, len, "%s from %s to %s", inputs_name(in),
		 in->win.from.kind ? time_spec_text(&in->win.from, a, sizeof(a))
				   : "the start",
		 in->win.to.kind ? time_spec_text(&in->win.to, b, sizeof(b)) : "the end");
	return buf;
}

/* The keep of a flame that walks the samples with their polls. */
static const struct join_keep sampled_polls = {.min_ns = UINT64_MAX, .sampled = 1};

/* flame --diff: the input against a base, both of the tasks @sel keeps. */
static int diff_flame(struct inputs *in, struct inputs *base, unsigned int rflags,
		      const struct task_sel *sel, const struct flame_opts *fo,
		      const char *outp)
{
	struct flame_diff_opts d = {.cur = *fo};
	struct flame_diff_result res;
	/* --min-poll and --by thread walk the samples again with their
	 * polls: the polls samples fell in are listed */
	const struct join_keep *keep =
		fo->min_poll_ns || fo->by == GROUP_THREAD ? &sampled_polls : NULL;
	struct trace *t = NULL, *bt = NULL;
	struct join *j = NULL, *bj = NULL;
	char what[160], bwhat[160], cn[512], bn[512];
	int err, ret = EXIT_FAIL;
	FILE *out;

	t = open_trace(in, rflags | TRACE_READ_NO_SPANS);
	if (!t)
		goto out;
	err = join__new_keep(t, join_flags(in, 0), keep, &j);
	if (err) {
		analysis_failed(in, t, err);
		goto out;
	}
	bt = open_trace(base, rflags | TRACE_READ_NO_SPANS);
	if (!bt)
		goto out;
	err = join__new_keep(bt, join_flags(in, 0), keep, &bj);
	if (err) {
		analysis_failed(base, bt, err);
		goto out;
	}
	if (check_task(j, sel, in))
		goto out;
	err = task_sel_match(j, bj);
	task_sel_text(sel, what, sizeof(what));
	task_sel_text(&bj->sel, bwhat, sizeof(bwhat));
	if (err < 0) {
		error("no %s in the base '%s' (list them with 'd9prof tasks %s --limit 0')",
		      bwhat, inputs_name(base), inputs_args(base));
		goto out;
	}
	if (sel->on && !sel->name)
		info("comparing %s with the base's %s (%s)", what, bwhat,
		     err == TASK_MATCH_SAME ? "same id, same name"
					    : "no task of that id and name there");
	d.cur_name = side_name(in, cn, sizeof(cn));
	d.base_name = side_name(base, bn, sizeof(bn));
	d.result = &res;
	out = open_output(outp);
	if (!out)
		goto out;
	err = analysis__flame_diff(j, bj, &d, out);
	ret = close_output(out, outp) ? EXIT_FAIL : EXIT_OK;
	folded_losses(t, fo->format, LOSS_CPU | LOSS_POLLS);
	if (err == -ENODATA) {
		warning("no CPU samples in %s of '%s'", what, d.cur_name);
	} else if (err && (trace__error(t) || trace__error(bt))) {
		analysis_failed(trace__error(t) ? in : base, trace__error(t) ? t : bt,
				err);
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot draw the flamegraph: %s", strerror(-err));
		ret = EXIT_FAIL;
	} else if (!res.base.weight) {
		warning("no CPU samples in %s of the base '%s': every frame is new",
			bwhat, d.base_name);
	}
out:
	join__free(bj);
	join__free(j);
	close_trace(base, bt);
	close_trace(in, t);
	return ret;
}

/* flame's own options: --poll ID, --diff FILE, --base-from/--base-to */
struct flame_args {
	uint64_t poll;
	int have_poll;
	const char *diff;
	struct inputs base; /* its window: --base-from, --base-to */
	const char *span;   /* --span NAME */
};

static int flame_option(void *ctx, int c, const char *arg)
{
	struct flame_args *fa = ctx;

	switch (c) {
	case OPT_POLL:
		if (parse_u64(arg, &fa->poll) || fa->poll > UINT32_MAX)
			return usage_error("flame ", "bad poll id '%s': want a number",
					   arg);
		fa->have_poll = 1;
		return 0;
	case OPT_DIFF:
		fa->diff = arg;
		return 0;
	case OPT_SPAN:
		fa->span = arg;
		return 0;
	case OPT_BASE_FROM:
	case OPT_BASE_TO:
		if (time_spec_parse(arg, c == OPT_BASE_FROM ? &fa->base.win.from
							    : &fa->base.win.to))
			return usage_error(
				"flame ", "bad %s '%s': " TIME_WANT,
				c == OPT_BASE_FROM ? "--base-from" : "--base-to", arg);
		return 0;
	default:
		return VIEW_NOT_MINE;
	}
}

int cmd_flame(int argc, char **argv)
{
	static const struct option own[] = {
		{"poll", required_argument, NULL, OPT_POLL},
		{"diff", required_argument, NULL, OPT_DIFF},
		{"base-from", required_argument, NULL, OPT_BASE_FROM},
		{"base-to", required_argument, NULL, OPT_BASE_TO},
		{"span", required_argument, NULL, OPT_SPAN},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "flame ",
		.shared = VIEW_FLAMES | VIEW_MIN,
		.own_opts = own,
		.help = help,
		.own = flame_option,
	};
	struct flame_opts fo = {0};
	struct flame_args fa = {.have_poll = 0};
	struct inputs in = {.n = 0}, *base = &fa.base;
	struct view_args va = {.format = FLAME_SVG, .by_span = 1};
	const char *outp, *diff;
	struct trace *t;
	struct join *j = NULL;
	struct spans *sp = NULL;
	FILE *out;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret = EXIT_OK, have_poll;

	if ((err = view_parse(&cmd, &fa, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	diff = fa.diff;
	have_poll = fa.have_poll;
	VIEW_FLAME_OPTS(fo, va);
	outp = va.out;
	rflags |= va.rflags;
	if (have_poll && (va.sel.on || fo.min_poll_ns || fa.span))
		return usage_error("flame ", "--poll draws one poll: it takes no --task, "
					     "--min-poll or --span");
	if (va.min_ns && !fa.span)
		return usage_error("flame ", "--min goes with --span (--min-poll: "
					     "samples inside long polls)");
	if ((fa.span || fo.by == GROUP_SPAN) &&
	    (diff || base->win.from.kind || base->win.to.kind))
		return usage_error("flame ", "--span and --by span take no --diff");
	fo.span.name = fa.span;
	fo.span.min_ns = va.min_ns;
	if (diff || base->win.from.kind || base->win.to.kind) {
		char a[32], b[32];

		if (have_poll)
			return usage_error("flame ",
					   "--poll draws one poll: it takes no --diff");
		if (time_spec_cmp(&base->win.from, &base->win.to) >= 0)
			return usage_error("flame ",
					   "--base-from %s is not before --base-to %s",
					   time_spec_text(&base->win.from, a, sizeof(a)),
					   time_spec_text(&base->win.to, b, sizeof(b)));
		/* without --diff the base is another window of the input */
		if (diff)
			base->path[base->n++] = diff;
		else
			for (base->n = 0; base->n < in.n; base->n++)
				base->path[base->n] = in.path[base->n];
		if (fo.format == FLAME_SVG)
			terminal_svg(&outp, "d9prof-diff.svg");
		return diff_flame(&in, base, rflags, &va.sel, &fo, outp);
	}
	if (fo.format == FLAME_SVG)
		terminal_svg(&outp, have_poll ? "d9prof-poll.svg" : "d9prof-flame.svg");
	if (have_poll)
		return poll_flame(&in, rflags, fa.poll, fo.format, outp);

	t = open_trace(&in,
		       rflags | (fa.span || fo.by == GROUP_SPAN ? TRACE_READ_SPANS_LATER
								: TRACE_READ_NO_SPANS));
	if (!t)
		return EXIT_FAIL;
	/* --min-poll, --by thread or span and --span walk the samples again,
	 * looking their polls up: the polls samples fell in are listed */
	err = join__new_keep(t, join_flags(&in, 0),
			     fo.by == GROUP_THREAD || fo.min_poll_ns || fa.span ||
					     fo.by == GROUP_SPAN
				     ? &sampled_polls
				     : NULL,
			     &j);
	if (!err && (fa.span || fo.by == GROUP_SPAN))
		/* of the spans, those entered where a sample fell */
		err = spans__new_keep(j, NULL,
				      &(struct spans_keep){.at = 1,
							   .name = fa.span,
							   .min_ns = va.min_ns},
				      &sp);
	if (err) {
		analysis_failed(&in, t, err);
		join__free(j);
		close_trace(&in, t);
		return EXIT_FAIL;
	}
	if (check_task(j, &va.sel, &in) ||
	    (fa.span && check_spans(sp, fa.span, va.min_ns, 0, &in))) {
		ret = EXIT_FAIL;
		goto out;
	}
	fo.span.spans = sp;
	out = open_output(outp);
	if (!out) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__flame(j, &fo, out);
	if (close_output(out, outp))
		ret = EXIT_FAIL;
	folded_losses(t, fo.format, LOSS_CPU | LOSS_POLLS);
	lean_min_poll(t, fo.min_poll_ns);
	if (err == -ENODATA) {
		char what[160];

		if (va.sel.on)
			warning("no CPU samples inside %spolls of %s",
				fo.min_poll_ns ? "the --min-poll " : "",
				task_sel_text(&va.sel, what, sizeof(what)));
		else if (fo.min_poll_ns)
			warning("no CPU samples inside polls that long in '%s'",
				inputs_name(&in));
		else
			warning("no CPU samples in '%s'", inputs_name(&in));
	} else if (err && trace__error(t)) {
		analysis_failed(&in, t, err);
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot draw the flamegraph: %s", strerror(-err));
		ret = EXIT_FAIL;
	}
out:
	spans__free(sp);
	join__free(j);
	close_trace(&in, t);
	return ret;
}
