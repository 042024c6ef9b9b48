// SPDX-License-Identifier: MIT
/* d9prof spans: the application's spans, one row per name, or the slowest
 * instances with where their time went. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "cli/cli.h"

#define DEFAULT_INSTANCES 10

enum { OPT_NAME = 256, OPT_SORT, OPT_INSTANCES };

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof spans " INPUT_USAGE "\n"
		"                    [--name NAME] [--min DUR] [--instances] [--sort KEY]\n"
		"                    [--limit N] [--format text|json]\n\n"
		"Where did the application's requests spend their time? A span (a request,\n"
		"a database call: d9_span_new() in C, a tracing span through the Rust\n"
		"crate's layer) lives from its creation to its close, and is entered on\n"
		"threads, maybe many times, inside polls of one task or several.\n\n"
		"One row per span name: COUNT, its duration's P50, P99 and MAX (creation\n"
		"to close), then per span on average: ENTERED (on threads, summed: two\n"
		"threads inside it at once count twice), CPU (sampled while entered),\n"
		"BLOCKED and RUNQ (off-CPU while entered: blocked, or waiting for a CPU)\n"
		"and WAITING (alive, not entered: to be polled, or for I/O, a timer,\n"
		"another task). P50 and P99 are exact up to 1024 spans a name, then\n"
		"within 1%%.\n\n"
		"With --instances (or --min): the slowest spans, each explained: the\n"
		"tasks and polls that served it, what its threads did while it was entered\n"
		"(CPU in which code, blocked in which call, on the run queue behind whom),\n"
		"and of the time it was not entered, how long a task serving it had been\n"
		"woken and not yet polled. Its entered share of its duration is summed\n"
		"over threads too: over 100%% when several had it entered at once.\n\n"
		"options:\n" INPUT_HELP FRAME_HELP
		"      --name NAME       only spans named NAME\n"
		"      --min DUR         only spans that lasted at least DUR (implies\n"
		"                        --instances)\n"
		"      --instances       the slowest spans, explained\n"
		"      --sort KEY        rows: p99 (default), count, max, total, cpu,\n"
		"                        blocked or name\n"
		"  -n, --limit N         at most N rows (default: all) or instances\n"
		"                        (default %d; 0: all)\n"
		"  -f, --format FMT      text (default) or json (schema in d9prof(1))\n" NO_INLINE_HELP
		"  -h, --help            this help\n\n"
		"DUR is a number and a unit: 100ns, 500us, 1ms, 2.5s.\n\n"
		"examples:\n"
		"  d9prof spans\n"
		"  d9prof spans --name request --min 100ms   # the slow requests, explained\n"
		"  d9prof flame --span request --min 100ms -o slow.svg   # their CPU\n",
		DEFAULT_INSTANCES);
}

struct spans_args {
	struct spans_opts o;
	int limit_set;
};

/* --name, --sort, --instances */
static int spans_option(void *ctx, int c, const char *arg)
{
	static const char *const keys[] = {
		[SPANS_BY_P99] = "p99",	  [SPANS_BY_COUNT] = "count",
		[SPANS_BY_MAX] = "max",	  [SPANS_BY_TOTAL] = "total",
		[SPANS_BY_CPU] = "cpu",	  [SPANS_BY_BLOCKED] = "blocked",
		[SPANS_BY_NAME] = "name",
	};
	struct spans_opts *o = ctx;
	int k;

	switch (c) {
	case OPT_NAME:
		o->name = arg;
		return 0;
	case OPT_INSTANCES:
		o->instances = 1;
		return 0;
	case OPT_SORT:
		if (WORD_OPTION("spans ", "sort key", arg, keys, &k))
			return EXIT_USAGE;
		o->sort = (enum spans_sort)k;
		return 0;
	default:
		return VIEW_NOT_MINE;
	}
}

int cmd_spans(int argc, char **argv)
{
	static const struct option own[] = {
		{"name", required_argument, NULL, OPT_NAME},
		{"sort", required_argument, NULL, OPT_SORT},
		{"instances", no_argument, NULL, OPT_INSTANCES},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "spans ",
		.shared = VIEW_INPUTS | VIEW_FRAME | VIEW_MIN | VIEW_LIMIT | VIEW_FORMAT |
			  VIEW_NO_INLINE,
		.own_opts = own,
		.help = help,
		.own = spans_option,
	};
	struct spans_opts o = {.sort = SPANS_BY_P99};
	struct inputs in = {.n = 0};
	struct view_args va = {.limit = SIZE_MAX, .text_json = 1};
	struct session se;
	struct spans_keep skeep;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	int err, ret;

	if ((err = view_parse(&cmd, &o, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	o.min_ns = va.min_ns;
	o.instances |= va.min_ns > 0;
	o.json = va.json;
	o.limit = va.limit != SIZE_MAX ? va.limit : o.instances ? DEFAULT_INSTANCES : 0;
	rflags |= va.rflags;

	/* rows need no poll; the instances explained, the polls they were
	 * entered in and the wakes those ended: the join streams */
	/* of the spans, the rows, and the instances shown kept whole */
	skeep = (struct spans_keep){.name = o.name,
				    .min_ns = o.min_ns,
				    .top = !o.instances ? 0
					   : o.limit	? o.limit
							: SIZE_MAX};
	if (session_open_fed(&se, &in, rflags, 0, SESSION_OFFCPU | SESSION_SPANS,
			     &(struct join_keep){.min_ns = UINT64_MAX}, NULL, &skeep))
		return EXIT_FAIL;
	if (check_spans(se.sp, o.name, o.min_ns, 0, &in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (o.instances) {
		err = spans__list_polls(se.sp, se.j, &o);
		if (err) {
			analysis_failed(&in, se.t, err);
			ret = EXIT_FAIL;
			goto out;
		}
		if (session_delays(&se, &(struct delays_keep){.min_ns = UINT64_MAX,
							      .listed = 1})) {
			ret = EXIT_FAIL;
			goto out;
		}
	}
	ret = view_done(&in, se.t, analysis__spans(se.sp, se.oc, se.d, &o, stdout));
out:
	session_close(&se);
	return ret;
}
