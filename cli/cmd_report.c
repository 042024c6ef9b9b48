// SPDX-License-Identifier: MIT
/* d9prof report: one page to read first after a recording. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "cli/cli.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof report " INPUT_USAGE "\n"
		"                     [--format text|json]\n\n"
		"One page, in the order a diagnosis goes: what was recorded and what was\n"
		"refused or lost; per worker thread, the share of the recording spent in\n"
		"polls (on-CPU, blocked, on the run queue), outside polls and parked;\n"
		"the longest polls and what filled them; the worst wake-to-poll delays\n"
		"and their causes; run-queue time per worker and the threads that had\n"
		"the CPU meanwhile; each busy task's hottest stack; tasks woken and never\n"
		"polled again, and spawned and never ended. It ends with red flags, each\n"
		"with its threshold, the task and function, and the command to run next:\n"
		"long poll >= 10ms, wake-to-poll delay >= 5ms, run-queue wait >= 1ms in a\n"
		"poll, blocking >= 1ms in a poll, worker imbalance >= 3x, lost wake-ups,\n"
		"lost data.\n\n"
		"options:\n" INPUT_HELP FRAME_HELP
		"  -f, --format FMT      text (default) or json (schema in d9prof(1))\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof record -p 4242 -d 10 && d9prof report\n"
		"  d9prof report --format json | jq '.flags'\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct view_cmd cmd = {
		.name = "report ",
		.shared = VIEW_INPUTS | VIEW_FRAME | VIEW_FORMAT,
		.help = help,
	};
	struct inputs in = {.n = 0};
	struct view_args va = {.text_json = 1};
	struct session se;
	struct delays_keep keep;
	struct join_keep jkeep;
	struct spans_keep skeep;
	struct join_window win[8];
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, NULL, &va, &in, argc, argv)) != VIEW_RUN)
		return err;

	/* the polls it shows only: the join streams */
	jkeep = analysis_report_join_keep();
	/* the delays replayed in the join's walk: those of a report without
	 * a span to explain (with one, they are walked again) */
	keep = analysis_report_keep(NULL);
	skeep = analysis_report_spans_keep();
	if (session_open_fed(&se, &in, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS, 0,
			     SESSION_OFFCPU | SESSION_SPANS, &jkeep, &keep, &skeep))
		return EXIT_FAIL;
	/* the slowest span, explained: the polls it was entered in */
	err = se.sp ? spans__list_polls(se.sp, se.j,
					&(struct spans_opts){.instances = 1, .limit = 1})
		    : 0;
	if (err) {
		analysis_failed(&in, se.t, err);
		session_close(&se);
		return EXIT_FAIL;
	}
	keep = analysis_report_keep(se.sp);
	keep.also = win;
	keep.nalso = analysis_report_windows(se.j, win);
	if (session_delays(&se, &keep)) {
		session_close(&se);
		return EXIT_FAIL;
	}
	ret = view_done(
		&in, se.t,
		analysis__report(se.oc, se.d, se.sp, inputs_args(&in), va.json, stdout));
	session_close(&se);
	return ret;
}
