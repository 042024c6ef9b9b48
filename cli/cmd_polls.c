// SPDX-License-Identifier: MIT
/* d9prof polls: the slow polls of a trace, one a line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/join.h"
#include "analysis/views.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 30

enum { OPT_SORT = 256 };

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
		"first: poll duration by spawn site, when tasks are named after it.\n"
		"P50 and P99 are exact up to 1024 polls a line, then within 1%%.\n\n"
		"options:\n" INPUT_HELP FRAME_HELP
		"      --min DUR         only polls that lasted at least DUR\n" TASK_HELP
			BY_HELP
		"      --sort KEY        duration (default: longest first) or start\n"
		"  -n, --limit N         at most N polls (default %d; 0: all)\n"
		"      --wide            never cut names (by default long ones lose\n"
		"                        their middle, keeping the function's name)\n" NO_INLINE_HELP
		"  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof polls --min 1ms\n"
		"  d9prof polls --task 42 --sort start --limit 0 > task42-polls.txt\n"
		"  d9prof polls --by name               # poll durations per task name\n"
		"  d9prof flame --poll 1234 -o poll1234.svg   # one of them, CPU + off-CPU\n",
		DEFAULT_LIMIT);
}

/* --sort duration|start */
static int polls_option(void *ctx, int c, const char *arg)
{
	static const char *const keys[] = {
		[POLLS_BY_DURATION] = "duration",
		[POLLS_BY_START] = "start",
	};
	struct polls_opts *po = ctx;
	int k;

	if (c != OPT_SORT)
		return VIEW_NOT_MINE;
	if (WORD_OPTION("polls ", "sort key", arg, keys, &k))
		return EXIT_USAGE;
	po->sort = (enum polls_sort)k;
	return 0;
}

int cmd_polls(int argc, char **argv)
{
	static const struct option own[] = {
		{"sort", required_argument, NULL, OPT_SORT},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "polls ",
		.shared = VIEW_INPUTS | VIEW_FRAME | VIEW_MIN | VIEW_TASK | VIEW_BY |
			  VIEW_WIDE | VIEW_LIMIT | VIEW_NO_INLINE,
		.own_opts = own,
		.help = help,
		.own = polls_option,
	};
	struct polls_opts po = {.sort = POLLS_BY_DURATION};
	struct inputs in = {.n = 0};
	struct view_args va = {.limit = DEFAULT_LIMIT};
	struct session se;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, &po, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	po.by = va.by;
	po.min_ns = va.min_ns;
	po.wide = va.wide;
	po.limit = va.limit;
	rflags |= va.rflags;

	/* one poll a row: only those shown are listed; by group: every
	 * poll into its task's or thread's distribution as the join goes.
	 * The join streams. */
	if (po.by != GROUP_AUTO && polls_by__new(&po, &po.polls_by)) {
		error("out of memory");
		return EXIT_FAIL;
	}
	if (session_open_keep(&se, &in, rflags, 0, SESSION_OFFCPU,
			      po.by == GROUP_AUTO ? &(struct join_keep){
							    .sel = va.sel,
							    .min_ns = po.min_ns,
							    .n = po.limit,
							    .longest = po.sort ==
								       POLLS_BY_DURATION,
						    }
						  : &(struct join_keep){
							    .sel = va.sel,
							    .min_ns = UINT64_MAX,
							    .each = polls_by__poll,
							    .ctx = po.polls_by,
						    })) {
		polls_by__free(po.polls_by);
		return EXIT_FAIL;
	}
	if (check_shim(se.j, &in) || check_task(se.j, &va.sel, &in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__polls(se.oc, &po, stdout);
	if (err) {
		error("cannot list the polls of '%s': %s", inputs_name(&in),
		      strerror(-err));
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
out:
	session_close(&se);
	polls_by__free(po.polls_by);
	return ret;
}
