// SPDX-License-Identifier: MIT
/* d9prof polls: the slow polls of a trace, one a line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 30

enum { OPT_MIN = 256, OPT_SORT, OPT_WIDE };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof polls " INPUT_USAGE "\n"
		"                    [--min DUR] [--task ID|NAME] [--sort duration|start]\n"
		"                    [--limit N] [--by task|name|thread]\n\n"
		"List polls, longest first: POLL (its id, for 'd9prof flame --poll'), TASK,\n"
		"THREAD, START (seconds since the recording started), DURATION (\"+\": at\n"
		"least that long, its begin or end was not recorded), SAMPLES (CPU samples\n"
		"inside it), OFF-CPU (time blocked off-CPU inside it), RUNQ (time it was\n"
		"runnable inside it, waiting for a CPU; both \"-\" without off-CPU data)\n"
		"and TOP-FRAME: where it blocked longest, marked \"(off-CPU)\", if it spent\n"
		"over half its time off-CPU (\"(run queue)\" if it was mostly waiting for a\n"
		"CPU there, not blocked); else the leaf of most of its CPU samples.\n\n"
		"With --by, one line per task, task name or thread instead: POLLS, TOTAL,\n"
		"P50, P99 and LONGEST poll duration, OFF-CPU and RUNQ, most poll time\n"
		"first: poll duration by spawn site, when tasks are named after it.\n\n"
		"options:\n"
		INPUT_HELP
		FRAME_HELP
		"      --min DUR         only polls that lasted at least DUR\n"
		TASK_HELP
		BY_HELP
		"      --sort KEY        duration (default: longest first) or start\n"
		"  -n, --limit N         at most N polls (default %d; 0: all)\n"
		"      --wide            never cut names (by default long ones lose\n"
		"                        their middle, keeping the function's name)\n"
		NO_INLINE_HELP
		"  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof polls --min 1ms\n"
		"  d9prof polls --task 42 --sort start --limit 0 > task42-polls.txt\n"
		"  d9prof polls --by name               # poll durations per task name\n"
		"  d9prof flame --poll 1234 -o poll1234.svg   # one of them, CPU + off-CPU\n",
		DEFAULT_LIMIT);
}

int cmd_polls(int argc, char **argv)
{
	static const struct option lopts[] = {
		INPUT_OPTIONS,
		FRAME_OPTION,
		{ "min", required_argument, NULL, OPT_MIN },
		VIEW_OPT_TASK,
		VIEW_OPT_BY,
		{ "wide", no_argument, NULL, OPT_WIDE },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "limit", required_argument, NULL, 'n' },
		VIEW_OPT_NO_INLINE,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct polls_opts po = { .sort = POLLS_BY_DURATION, .limit = DEFAULT_LIMIT };
	struct inputs in = { .n = 0 };
	struct view_args va = { 0 };
	struct session se;
	uint64_t v;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:t:n:h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_MIN:
			if (duration_parse(optarg, &po.min_ns))
				return usage_error("polls ", "bad --min '%s': " DURATION_WANT,
						   optarg);
			break;
		case OPT_WIDE:
			po.wide = 1;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "duration"))
				po.sort = POLLS_BY_DURATION;
			else if (!strcmp(optarg, "start"))
				po.sort = POLLS_BY_START;
			else
				return usage_error("polls ",
						   "bad sort key '%s': want duration or start",
						   optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v > SIZE_MAX)
				return usage_error("polls ",
						   "bad limit '%s': want a number (0: all)", optarg);
			po.limit = (size_t)v;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			if ((err = view_option(&va, &in, "polls ", c, optarg)))
				return err;
		}
	}
	if (optind < argc)
		return usage_error("polls ", "unexpected argument '%s'", argv[optind]);
	po.sel = va.sel;
	po.by = va.by;
	rflags |= va.rflags;

	if (session_open(&se, &in, rflags, 0, SESSION_OFFCPU))
		return EXIT_FAIL;
	if (check_shim(se.j, &in) || check_task(se.j, &po.sel, &in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__polls(se.oc, &po, stdout);
	if (err) {
		error("cannot list the polls of '%s': %s", inputs_name(&in), strerror(-err));
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
out:
	session_close(&se);
	return ret;
}
