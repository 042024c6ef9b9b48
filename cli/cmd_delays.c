// SPDX-License-Identifier: MIT
/* d9prof delays: wake-to-poll delays, worst first, with their causes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"

#define DEFAULT_LIMIT 20

enum { OPT_MIN = 256, OPT_FORMAT };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof delays " INPUT_USAGE "\n"
		"                     [--task ID|NAME] [--min DUR] [--limit N]\n"
		"                     [--format text|json]\n\n"
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
		"options:\n"
		INPUT_HELP
		FRAME_HELP
		TASK_HELP
		"      --min DUR         only delays at least DUR long\n"
		"  -n, --limit N         at most N rows (default %d; 0: all)\n"
		"  -f, --format FMT      text (default) or json (schema in d9prof(1))\n"
		NO_INLINE_HELP
		"  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof delays --min 1ms\n"
		"  d9prof delays --task 7 --format json | jq '.delays[0].causes'\n",
		DEFAULT_LIMIT);
}

int cmd_delays(int argc, char **argv)
{
	static const struct option lopts[] = {
		INPUT_OPTIONS,
		FRAME_OPTION,
		VIEW_OPT_TASK,
		{ "min", required_argument, NULL, OPT_MIN },
		{ "limit", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		VIEW_OPT_NO_INLINE,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct delays_opts o = { .limit = DEFAULT_LIMIT };
	struct inputs in = { .n = 0 };
	struct view_args va = { 0 };
	struct session se;
	uint64_t v;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:t:n:f:h", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_MIN:
			if (duration_parse(optarg, &o.min_ns))
				return usage_error("delays ", "bad --min '%s': " DURATION_WANT,
						   optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v > SIZE_MAX)
				return usage_error("delays ",
						   "bad limit '%s': want a number (0: all)", optarg);
			o.limit = (size_t)v;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o.json = 0;
			else if (!strcmp(optarg, "json"))
				o.json = 1;
			else
				return usage_error("delays ",
						   "bad format '%s': want text or json", optarg);
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			if ((err = view_option(&va, &in, "delays ", c, optarg)))
				return err;
		}
	}
	if (optind < argc)
		return usage_error("delays ", "unexpected argument '%s'", argv[optind]);
	o.sel = va.sel;
	rflags |= va.rflags;

	if (session_open(&se, &in, rflags, 0, SESSION_OFFCPU | SESSION_DELAYS))
		return EXIT_FAIL;
	if (check_shim(se.j, &in) || check_task(se.j, &o.sel, &in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__delays(se.oc, se.d, &o, stdout);
	if (err) {
		analysis_failed(&in, se.t, err);
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
out:
	session_close(&se);
	return ret;
}
