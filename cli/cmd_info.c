// SPDX-License-Identifier: MIT
/* d9prof info: what a trace holds, where it came from and what it lost. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/views.h"
#include "cli/cli.h"

enum { OPT_JSON = 256 };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof info [-i FILE|DIR ...] [--json]\n\n"
		"Say what a trace holds, without analysing it: the target (command,\n"
		"pid, comm), host and kernel, the recorder, the sampler, event and\n"
		"frequency, the off-CPU and wakeup sources; the span it covers (monotonic\n"
		"clock and wall clock) and its segments: with more than one, each with\n"
		"its times and file, the gaps between them, copies skipped and those cut\n"
		"short; how many samples, runtime events, off-CPU intervals, threads,\n"
		"tasks, frames and stacks; every loss; and for a flight recorder's dump,\n"
		"why it was dumped and how the target ended.\n\n"
		"options:\n" INPUT_FILE_HELP
		"      --json            one JSON object (schema in d9prof(1))\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof info\n"
		"  d9prof info --json | jq '.segments.gaps'\n");
}

/* --json */
static int info_option(void *ctx, int c, const char *arg)
{
	(void)arg;
	if (c != OPT_JSON)
		return VIEW_NOT_MINE;
	((struct info_opts *)ctx)->json = 1;
	return 0;
}

int cmd_info(int argc, char **argv)
{
	static const struct option own[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "info ",
		.shared = VIEW_FILES,
		.own_opts = own,
		.help = help,
		.own = info_option,
	};
	struct info_opts o = {0};
	struct inputs in = {.quiet = 1};
	struct view_args va = {0};
	struct trace *t;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, &o, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	/* counts only: no inline frames, nothing loaded that a walk can do */
	t = open_trace(&in, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS |
				    TRACE_READ_NO_INLINE | TRACE_READ_NO_SPANS);
	if (!t)
		return EXIT_FAIL;
	o.input = inputs_name(&in);
	ret = view_done(&in, t, analysis__info(t, &o, stdout));
	close_trace(&in, t);
	return ret;
}
