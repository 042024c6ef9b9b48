// SPDX-License-Identifier: MIT
/* d9prof events: the application's events, one row per name. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "analysis/join.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "cli/cli.h"

enum { OPT_NAME = 256 };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof events " INPUT_USAGE "\n"
		"                     [--name NAME] [--format text|json]\n\n"
		"The application's own events (d9_event() in C, a tracing event through\n"
		"the Rust crate's layer): one row per name, COUNT, its values' MIN, P50,\n"
		"P99, MAX and SUM, and its most frequent text (TOP-TEXT, with its count).\n\n"
		"options:\n" INPUT_HELP "      --name NAME       only events named NAME\n"
		"  -f, --format FMT      text (default) or json (schema in d9prof(1))\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof events\n"
		"  d9prof events --name retry --format json | jq '.events[0].p99'\n");
}

/* --name */
static int events_option(void *ctx, int c, const char *arg)
{
	if (c != OPT_NAME)
		return VIEW_NOT_MINE;
	((struct events_opts *)ctx)->name = arg;
	return 0;
}

int cmd_events(int argc, char **argv)
{
	static const struct option own[] = {
		{"name", required_argument, NULL, OPT_NAME},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "events ",
		.shared = VIEW_INPUTS | VIEW_FORMAT,
		.own_opts = own,
		.help = help,
		.own = events_option,
	};
	struct events_opts o = {0};
	struct inputs in = {.n = 0};
	struct view_args va = {.text_json = 1};
	struct session se;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret;

	if ((err = view_parse(&cmd, &o, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	o.json = va.json;
	/* the events only: no poll listed, no span kept whole */
	if (session_open_fed(&se, &in, rflags, 0, SESSION_SPANS,
			     &(struct join_keep){.min_ns = UINT64_MAX}, NULL,
			     &(struct spans_keep){0}))
		return EXIT_FAIL;
	if (check_spans(se.sp, NULL, 0, 1, &in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__events(se.sp, &o, stdout);
	if (err == -ENOENT) {
		error("no event named '%s' in '%s' (list them with 'd9prof events %s')",
		      o.name, inputs_name(&in), inputs_args(&in));
		ret = EXIT_FAIL;
		goto out;
	}
	ret = view_done(&in, se.t, err);
out:
	session_close(&se);
	return ret;
}
