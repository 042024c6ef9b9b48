// SPDX-License-Identifier: MIT
/* d9prof tasks: the task table of a trace. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 30

enum { OPT_SORT = 256, OPT_WIDE };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof tasks " INPUT_USAGE "\n"
		"                    [--by task|name] [--sort KEY] [--limit N]\n\n"
		"List the tasks of a trace, most CPU first: TASK and NAME (or NAME and\n"
		"TASKS with --by name: all tasks of one name in one row), POLLS, CPU (the\n"
		"CPU time sampled inside their polls: samples x 1/frequency), CPU%% (that\n"
		"time as a share of one CPU over the recording), the total, mean and\n"
		"longest poll, and how long they waited to be polled once woken: WAKES\n"
		"(times made ready, by a wake or their spawn, and then polled; wakes before\n"
		"that poll merge into the first) and the DELAY-P50, -P99 and -MAX of those\n"
		"waits (see 'd9prof delays' for the worst ones and their causes).\n\n"
		"options:\n"
		INPUT_HELP
		"      --by KEY          task (default) or name\n"
		"  -s, --sort KEY        cpu (default), polls, longest (poll), delay\n"
		"                        (longest) or name\n"
		"  -n, --limit N         at most N rows (default %d; 0: all)\n"
		"      --wide            never cut names\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof tasks --by name\n"
		"  d9prof tasks --sort delay --limit 5\n",
		DEFAULT_LIMIT);
}

int cmd_tasks(int argc, char **argv)
{
	static const struct option lopts[] = {
		INPUT_OPTIONS,
		{ "by", required_argument, NULL, OPT_BY },
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ "wide", no_argument, NULL, OPT_WIDE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *const keys[] = {"cpu", "polls", "longest", "delay", "name"};
	struct tasks_opts o = { .by = GROUP_TASK, .limit = DEFAULT_LIMIT };
	struct inputs in = { .n = 0 };
	struct view_args va = { 0 };
	struct session se;
	uint64_t v;
	size_t k;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:n:h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_WIDE:
			o.wide = 1;
			break;
		case OPT_BY:
			if (parse_group_by(optarg, &o.by) || o.by == GROUP_THREAD)
				return usage_error("tasks ", "bad --by '%s': want task or name "
						   "(per thread: 'd9prof polls --by thread')",
						   optarg);
			break;
		case 's':
			for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (!strcmp(optarg, keys[k]))
					break;
			if (k == sizeof(keys) / sizeof(keys[0]))
				return usage_error("tasks ", "bad sort key '%s': want cpu, polls, "
						   "longest, delay or name", optarg);
			o.sort = (enum tasks_sort)k;
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v > SIZE_MAX)
				return usage_error("tasks ",
						   "bad limit '%s': want a number (0: all)", optarg);
			o.limit = (size_t)v;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			if ((err = view_option(&va, &in, "tasks ", c, optarg)))
				return err;
		}
	}
	if (optind < argc)
		return usage_error("tasks ", "unexpected argument '%s'", argv[optind]);
	/* no stacks printed: inline frames would be work for nothing */
	if (session_open(&se, &in,
			 TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS | TRACE_READ_NO_INLINE, 0,
			 SESSION_DELAYS))
		return EXIT_FAIL;
	if (check_shim(se.j, &in)) {
		session_close(&se);
		return EXIT_FAIL;
	}
	err = analysis__tasks(se.j, se.d, &o, stdout);
	if (err) {
		analysis_failed(&in, se.t, err);
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
	session_close(&se);
	return ret;
}
