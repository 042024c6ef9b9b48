// SPDX-License-Identifier: MIT
/* d9prof tasks: the task table of a trace. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/views.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 30

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof tasks " INPUT_USAGE "\n"
		"                    [--by task|name] [--sort KEY] [--limit N]\n\n"
		"List the tasks of a trace, most CPU first: TASK and NAME (or NAME and\n"
		"TASKS with --by name: all tasks of one name in one row), POLLS, CPU (the\n"
		"CPU time sampled inside their polls: samples x 1/frequency), CPU%% (that\n"
		"time as a share of one CPU over the recording), the total and mean poll,\n"
		"the 99th percentile of their lengths (POLL-P99) and the longest poll,\n"
		"and how long they waited to be polled once woken: WAKES\n"
		"(times made ready, by a wake or their spawn, and then polled; wakes before\n"
		"that poll merge into the first) and the DELAY-P50, -P99 and -MAX of those\n"
		"waits (see 'd9prof delays' for the worst ones and their causes).\n\n"
		"options:\n" INPUT_HELP "      --by KEY          task (default) or name\n"
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

/* --by task|name (not thread) and -s, --sort KEY */
static int tasks_option(void *ctx, int c, const char *arg)
{
	static const char *const keys[] = {
		[TASKS_BY_CPU] = "cpu",		[TASKS_BY_POLLS] = "polls",
		[TASKS_BY_LONGEST] = "longest", [TASKS_BY_DELAY] = "delay",
		[TASKS_BY_NAME] = "name",
	};
	struct tasks_opts *o = ctx;
	int k;

	switch (c) {
	case OPT_BY:
		if ((k = parse_group_by(arg)) < 0 || k == GROUP_THREAD || k == GROUP_SPAN)
			return usage_error("tasks ",
					   "bad --by '%s': want task or name "
					   "(per thread: 'd9prof polls --by thread')",
					   arg);
		o->by = (enum group_by)k;
		return 0;
	case 's':
		if (WORD_OPTION("tasks ", "sort key", arg, keys, &k))
			return EXIT_USAGE;
		o->sort = (enum tasks_sort)k;
		return 0;
	default:
		return VIEW_NOT_MINE;
	}
}

int cmd_tasks(int argc, char **argv)
{
	static const struct option own[] = {
		{"sort", required_argument, NULL, 's'},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "tasks ",
		.shared = VIEW_INPUTS | VIEW_BY | VIEW_LIMIT | VIEW_WIDE,
		.sopts = "s:",
		.own_opts = own,
		.help = help,
		.own = tasks_option,
	};
	struct tasks_opts o = {.by = GROUP_TASK};
	struct inputs in = {.n = 0};
	struct view_args va = {.limit = DEFAULT_LIMIT};
	struct session se;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, &o, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	o.limit = va.limit;
	o.wide = va.wide;
	/* no stacks printed: inline frames would be work for nothing */
	if (session_open(&se, &in,
			 TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS |
				 TRACE_READ_NO_INLINE,
			 JOIN_POLL_LENGTHS, 0))
		return EXIT_FAIL;
	if (check_shim(se.j, &in) ||
	    session_delays(&se, &(struct delays_keep){.stats_only = 1})) {
		session_close(&se);
		return EXIT_FAIL;
	}
	ret = view_done(&in, se.t, analysis__tasks(se.j, se.d, &o, stdout));
	session_close(&se);
	return ret;
}
