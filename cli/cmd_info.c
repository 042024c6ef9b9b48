// SPDX-License-Identifier: MIT
/* d9prof info: what a trace holds, where it came from and what it lost. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/analysis.h"
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
		"options:\n"
		INPUT_FILE_HELP
		"      --json            one JSON object (schema in d9prof(1))\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof info\n"
		"  d9prof info --json | jq '.segments.gaps'\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct info_opts o = { 0 };
	struct inputs in = { .quiet = 1 };
	struct view_args va = { 0 };
	struct trace *t;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			o.json = 1;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			if ((err = view_option(&va, &in, "info ", c, optarg)))
				return err;
		}
	}
	if (optind < argc)
		return usage_error("info ", "unexpected argument '%s'", argv[optind]);
	/* counts only: no inline frames, nothing loaded that a walk can do */
	t = open_trace(&in, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS | TRACE_READ_NO_INLINE);
	if (!t)
		return EXIT_FAIL;
	o.input = inputs_name(&in);
	err = analysis__info(t, &o, stdout);
	if (err) {
		analysis_failed(&in, t, err);
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
	trace__free(t);
	return ret;
}
