// SPDX-License-Identifier: MIT
/* d9prof tasks: the task table of a trace. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof tasks [-i FILE]\n\n"
		"List the tasks of a trace: id, name, polls, CPU samples taken inside\n"
		"their polls, total, mean and longest poll time, and how long they\n"
		"waited to be polled once woken: WAKES (times made ready, by a wake or\n"
		"their spawn, and then polled; wakes before the poll merge into the\n"
		"first) and the DELAY-P50, -P99 and -MAX of those waits (see 'd9prof\n"
		"delays' for the worst ones and their causes).\n\n"
		"options:\n"
		"  -i, --input FILE      trace (default ./" DEFAULT_TRACE ")\n"
		"  -h, --help            this help\n\n"
		"example:\n"
		"  d9prof tasks -i api.d9 | head\n");
}

int cmd_tasks(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *in = DEFAULT_TRACE;
	struct session se;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			return usage_error("tasks ", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("tasks ", "unexpected argument '%s'", argv[optind]);
	/* no stacks printed: inline frames would be work for nothing */
	if (session_open(&se, in,
			 TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS | TRACE_READ_NO_INLINE, 0,
			 SESSION_DELAYS))
		return EXIT_FAIL;
	err = analysis__tasks(se.j, se.d, stdout);
	if (err) {
		analysis_failed(in, se.t, err);
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
	session_close(&se);
	return ret;
}
