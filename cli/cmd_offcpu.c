// SPDX-License-Identifier: MIT
/* d9prof offcpu: off-CPU flamegraph, weighted by microseconds blocked. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "cli/cli.h"

enum { OPT_MIN_BLOCK = 256, OPT_IDLE, OPT_SPAN };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof offcpu " INPUT_USAGE "\n"
		"                     [--task ID|NAME] [--by task|name|thread]\n"
		"                     [--min-poll DUR] [--min-block DUR] [--idle]\n"
		"                     [--span NAME [--min DUR]]\n"
		"                     [--format svg|folded] [-o OUT]\n\n"
		"Where did the polls wait? Every time a thread of the target left the CPU,\n"
		"the recorder kept its stack at switch-out and when it ran again. Each\n"
		"such interval goes to the poll running on that thread when it switched\n"
		"out and is drawn under that poll's task (\"task ID name\"), weighted by\n"
		"the MICROSECONDS it spent off-CPU inside the poll. Time off-CPU outside\n"
		"any poll is under \"[no poll]\"; a parked worker (waiting for work) is\n"
		"idle, not blocked, and left out unless --idle puts it under \"[idle]\".\n"
		"Time a thread was runnable but waiting for a CPU (preempted, or woken\n"
		"and not yet running) ends in a frame \"[runqueue: comm[tid]]\" above\n"
		"its leaf, naming the thread that had the CPU (after \"[preempted]\" for\n"
		"a preemption); kernel frames end in \"_[k]\". Without recorded wakeups\n"
		"only preempted time is run-queue time.\n\n"
		"options:\n" INPUT_HELP
		"  -t, --task ID|NAME    only time off-CPU inside polls of task ID (or of\n"
		"                        every task named NAME)\n" TASK_TOKIO_HELP BY_HELP
		"      --min-poll DUR    only time off-CPU inside polls that lasted at\n"
		"                        least DUR (leaves out [no poll] and [idle])\n"
		"      --min-block DUR   only intervals off-CPU for at least DUR\n"
		"      --idle            also the time parked workers waited, as [idle]\n"
		"      --span NAME       only time off-CPU while a span named NAME was\n"
		"                        entered on the thread ('d9prof spans' lists them)\n"
		"      --min DUR         with --span: only spans that lasted at least DUR\n"
		"  -f, --format FMT      svg (default) or folded (\"root;...;leaf us\")\n"
		"      --title TEXT      the SVG's title (default: the command recorded)\n"
		"      --reverse         icicle: the root on top\n"
		"  -o, --output OUT      write there (default: stdout, except SVG for a\n"
		"                        terminal, which goes to d9prof-offcpu.svg)\n" NO_INLINE_HELP
			STACKS_HELP "  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof offcpu --min-poll 1ms -o slow-polls-offcpu.svg\n"
		"  d9prof offcpu --task 42 --format folded | awk '{print $NF, $0}' | sort -n | tail -3\n"
		"  d9prof offcpu -f folded | grep -v '\\[runqueue'   # blocked time only\n"
		"  d9prof offcpu --span request --min 100ms   # what slow requests waited on\n");
}

/* --min-block DUR, --idle */
static int offcpu_option(void *ctx, int c, const char *arg)
{
	struct offcpu_opts *oo = ctx;

	switch (c) {
	case OPT_MIN_BLOCK:
		if (duration_parse(arg, &oo->min_block_ns))
			return usage_error("offcpu ",
					   "bad --min-block '%s': " DURATION_WANT, arg);
		return 0;
	case OPT_IDLE:
		oo->idle = 1;
		return 0;
	case OPT_SPAN:
		oo->span.name = arg;
		return 0;
	default:
		return VIEW_NOT_MINE;
	}
}

int cmd_offcpu(int argc, char **argv)
{
	static const struct option own[] = {
		{"min-block", required_argument, NULL, OPT_MIN_BLOCK},
		{"idle", no_argument, NULL, OPT_IDLE},
		{"span", required_argument, NULL, OPT_SPAN},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "offcpu ",
		.shared = VIEW_FLAMES | VIEW_MIN,
		.own_opts = own,
		.help = help,
		.own = offcpu_option,
	};
	struct offcpu_opts oo = {0};
	struct inputs in = {.n = 0};
	struct view_args va = {.format = FLAME_SVG};
	const char *outp, *why;
	struct session se;
	FILE *out;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, &oo, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	VIEW_FLAME_OPTS(oo, va);
	outp = va.out;
	rflags |= va.rflags;
	if (va.min_ns && !oo.span.name)
		return usage_error("offcpu ", "--min goes with --span (--min-block: long "
					      "intervals, --min-poll: long polls)");
	oo.span.min_ns = va.min_ns;

	if (oo.format == FLAME_SVG)
		terminal_svg(&outp, "d9prof-offcpu.svg");
	/* the intervals' polls only: the join streams */
	/* of the spans, those entered where a switch out fell */
	if (session_open_fed(&se, &in, rflags, 0,
			     SESSION_OFFCPU | (oo.span.name ? SESSION_SPANS : 0),
			     &(struct join_keep){.min_ns = UINT64_MAX}, NULL,
			     &(struct spans_keep){.at = 1,
						  .name = oo.span.name,
						  .min_ns = oo.span.min_ns}))
		return EXIT_FAIL;
	why = offcpu_missing(se.t);
	if (why) {
		error("'%s' has no off-CPU data: %s", inputs_name(&in), why);
		ret = EXIT_FAIL;
		goto out;
	}
	if (check_task(se.j, &va.sel, &in) ||
	    (se.sp && check_spans(se.sp, oo.span.name, oo.span.min_ns, 0, &in))) {
		ret = EXIT_FAIL;
		goto out;
	}
	oo.span.spans = se.sp;
	out = open_output(outp);
	if (!out) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__offcpu(se.oc, &oo, out);
	if (close_output(out, outp))
		ret = EXIT_FAIL;
	folded_losses(se.t, oo.format, LOSS_OFFCPU | LOSS_POLLS | LOSS_WAKEUPS);
	lean_min_poll(se.t, oo.min_poll_ns);
	if (err == -ENODATA) {
		char what[160];

		if (va.sel.on)
			warning("%s spent no time off-CPU%s%s",
				task_sel_text(&va.sel, what, sizeof(what)),
				trace__meta(se.t, TRACE_META_TOKIO) ? ""
								    : " inside polls",
				oo.min_poll_ns || oo.min_block_ns
					? " (with these filters)"
					: "");
		else
			warning("no off-CPU time in '%s' matched%s", inputs_name(&in),
				oo.idle ? "" : " (parked time needs --idle)");
	} else if (err) {
		error("cannot draw the off-CPU flamegraph: %s", strerror(-err));
		ret = EXIT_FAIL;
	}
out:
	session_close(&se);
	return ret;
}
