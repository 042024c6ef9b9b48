// SPDX-License-Identifier: MIT
/* d9prof delays: wake-to-poll delays, worst first, with their causes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/views.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 20

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof delays " INPUT_USAGE "\n"
		"                     [--task ID|NAME] [--min DUR] [--limit N]\n"
		"                     [--format text|json] [--wide]\n\n"
		"How long did woken tasks wait for their poll, and behind what? A task is\n"
		"ready from its wake (d9_task_wake, or its spawn for its first poll; more\n"
		"wakes before the poll merge into the first) to the next begin of a poll\n"
		"of it. One row per such delay, longest first: DELAY, TASK, WOKEN\n"
		"(seconds since the recording started), BY (the task being polled on the\n"
		"waking thread, else that thread as name[tid]; \"spawn\" for a first\n"
		"poll), POLLED-ON (the thread that polled it), POLL (that poll's id, for\n"
		"'d9prof flame --poll') and CAUSE: what the polling thread did meanwhile,\n"
		"largest share first: polling another task (with the three innermost\n"
		"frames of that poll's hottest stack), blocked off-CPU in a function,\n"
		"on the run queue behind the thread that had its CPU (comm[tid]),\n"
		"parked, or running outside polls. When the polling thread was mostly\n"
		"parked or idle and another thread woke the task, what that thread did\n"
		"follows (\"meanwhile on\"): the task waited in its queue. Tasks woken\n"
		"and never polled again are listed at the end.\n\n"
		"options:\n" INPUT_HELP FRAME_HELP TASK_HELP
		"      --min DUR         only delays at least DUR long\n"
		"  -n, --limit N         at most N rows (default %d; 0: all)\n"
		"  -f, --format FMT      text (default) or json (schema in d9prof(1))\n"
		"      --wide            never cut a row (on a terminal rows are cut to\n"
		"                        its width, '..' marking the cut)\n" NO_INLINE_HELP
		"  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof delays --min 1ms\n"
		"  d9prof delays --task 7 --format json | jq '.delays[0].causes'\n",
		DEFAULT_LIMIT);
}

int cmd_delays(int argc, char **argv)
{
	static const struct view_cmd cmd = {
		.name = "delays ",
		.shared = VIEW_INPUTS | VIEW_FRAME | VIEW_TASK | VIEW_MIN | VIEW_LIMIT |
			  VIEW_FORMAT | VIEW_NO_INLINE | VIEW_WIDE,
		.help = help,
	};
	struct delays_opts o;
	struct inputs in = {.n = 0};
	struct view_args va = {.limit = DEFAULT_LIMIT, .text_json = 1};
	struct session se;
	struct delays_keep keep;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, NULL, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	o = (struct delays_opts){.min_ns = va.min_ns,
				 .limit = va.limit,
				 .json = va.json,
				 .width = va.wide ? 0 : terminal_width(stdout)};
	rflags |= va.rflags;
	keep = (struct delays_keep){.min_ns = o.min_ns, .top = o.limit};

	/* no poll but those of the delays shown (session_delays()); the
	 * delays replayed in the join's walk unless tasks are chosen */
	if (session_open_fed(&se, &in, rflags, 0, SESSION_OFFCPU,
			     &(struct join_keep){.min_ns = UINT64_MAX}, &keep, NULL))
		return EXIT_FAIL;
	/* what the table lists, once the tasks are chosen */
	if (check_shim(se.j, &in) || check_task(se.j, &va.sel, &in) ||
	    session_delays(&se, &keep)) {
		ret = EXIT_FAIL;
		goto out;
	}
	ret = view_done(&in, se.t, analysis__delays(se.oc, se.d, &o, stdout));
out:
	session_close(&se);
	return ret;
}
