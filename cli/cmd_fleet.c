// SPDX-License-Identifier: MIT
/* d9prof fleet: one row per service and host of a store's window, worst
 * first, each the report in one line (analysis__report_row()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/views.h"
#include "analysis/window.h"
#include "cli/cli.h"
#include "lib/json.h"
#include "lib/text.h"
#include "store/catalog.h"

/* objects of the window kept from fleet's one listing, at most (each
 * host's read takes its keys from it); past it, each host lists its own */
#define FLEET_KEYS_MAX 50000

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof fleet -i s3://BUCKET[/PREFIX] [--from T] [--to T]\n"
		"                    [--service S] [--host H] [--format text|json]\n\n"
		"The fleet at a glance: for each service and host that the store holds\n"
		"in the window, its segments are fetched (into the cache, as -i s3://\n"
		"does) and reported in one row: time recorded, polls, CPU, the longest\n"
		"poll, the worst wake-to-poll delay, the workers' run-queue share and\n"
		"the report's red flags; worst first (most flags, then the worst\n"
		"delay), each with the command that opens its report.\n\n"
		"options:\n" INPUT_HELP "  -f, --format F        text (default) or json\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof fleet -i s3://traces/prod --from -1h\n"
		"  d9prof fleet -i s3://traces/prod --from 2026-11-26T14:00 --to "
		"2026-11-26T14:10\n");
}

struct host_row {
	const struct catalog_run *e; /* its service and host */
	struct report_row r;
	int failed;   /* it could not be read (said) */
	uint32_t pid; /* restarted in the window: the process read (the
		       * last), else 0 */
};

static int worse(const void *a, const void *b)
{
	const struct host_row *x = a, *y = b;

	if (x->failed != y->failed)
		return x->failed - y->failed;
	if (x->r.nflags != y->r.nflags)
		return x->r.nflags > y->r.nflags ? -1 : 1;
	if (x->r.worst_delay_ns != y->r.worst_delay_ns)
		return x->r.worst_delay_ns > y->r.worst_delay_ns ? -1 : 1;
	return (x->r.worst_poll_ns < y->r.worst_poll_ns) -
	       (x->r.worst_poll_ns > y->r.worst_poll_ns);
}

/* The report row of one host: its window read as -i s3:// reads it. */
static int host_report(const struct inputs *all, struct host_row *h)
{
	struct inputs in = *all;
	struct session se;
	struct delays_keep keep;
	struct join_keep jkeep = analysis_report_join_keep();
	struct join_window win[8];
	int err;

	in.service = h->e->service;
	in.host = h->e->host;
	in.quiet = 1;
	/* a service restarted in the window: its last process (two are
	 * never read as one) */
	in.last_process = 1;
	/* the polls report shows only: the join streams */
	keep = analysis_report_keep(NULL);
	if (session_open_fed(&se, &in, TRACE_READ_NO_EVENTS, 0, SESSION_OFFCPU, &jkeep,
			     &keep, NULL))
		return -1;
	keep.also = win;
	keep.nalso = analysis_report_windows(se.j, win);
	if (session_delays(&se, &keep)) {
		session_close(&se);
		return -1;
	}
	if (se.t->other_segments && se.t->nsegments)
		h->pid = se.t->segments[0].pid;
	err = analysis__report_row(se.oc, se.d, NULL, &h->r);
	if (err)
		analysis_failed(&in, se.t, err);
	session_close(&se);
	return err ? -1 : 0;
}

/* The command that opens @h's report over the same window, as its
 * arguments (in @argv, at most 14, their text in @text) and as one line
 * to paste into @buf, each argument quoted as a shell needs it: SERVICE
 * and HOST come from the bucket's keys. Returns how many arguments. */
static size_t report_cmd(const struct inputs *in, const struct host_row *h, char *buf,
			 size_t len, const char **argv, char (*text)[32])
{
	size_t n = 0, at = 0;

	argv[n++] = "d9prof";
	argv[n++] = "report";
	argv[n++] = "-i";
	argv[n++] = in->path[0];
	argv[n++] = "--service";
	argv[n++] = h->e->service;
	argv[n++] = "--host";
	argv[n++] = h->e->host;
	if (h->pid) {
		snprintf(text[0], sizeof(text[0]), "%u", h->pid);
		argv[n++] = "--pid";
		argv[n++] = text[0];
	}
	if (in->win.from.kind) {
		argv[n++] = "--from";
		argv[n++] = time_spec_arg(&in->win.from, text[1], sizeof(text[1]));
	}
	if (in->win.to.kind) {
		argv[n++] = "--to";
		argv[n++] = time_spec_arg(&in->win.to, text[2], sizeof(text[2]));
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i && at + 1 < len) {
			buf[at++] = ' ';
			buf[at] = '\0';
		}
		if (text_shell_arg(argv[i], buf, len, &at)) {
			/* (a path too long to paste: the argv has it) */
			snprintf(buf, len,
				 "d9prof report --service ... (see report_argv)");
			break;
		}
	}
	return n;
}

static void print_text(const struct inputs *in, const struct host_row *v, size_t n)
{
	char a[32], b[32], c[32], cmd[1200], text[3][32];
	const char *argv[16];

	printf("%-16s %-20s %9s %9s %6s %11s %11s %5s  %s\n", "SERVICE", "HOST",
	       "RECORDED", "POLLS", "CPU%", "WORST-POLL", "WORST-DELAY", "RUNQ%",
	       "FLAGS");
	for (size_t i = 0; i < n; i++) {
		const struct report_row *r = &v[i].r;
		char svc[64], host[64];

		text_clean(v[i].e->service, svc, sizeof(svc));
		text_clean(v[i].e->host, host, sizeof(host));
		if (v[i].failed) {
			printf("%-16s %-20s (not read: said above)\n", svc, host);
			continue;
		}
		printf("%-16s %-20s %9s %9llu %6.1f %11s %11s %5.1f  %s\n", svc, host,
		       text_duration(r->span_ns, a, sizeof(a)),
		       (unsigned long long)r->polls, r->cpu_pct,
		       text_duration(r->worst_poll_ns, b, sizeof(b)),
		       text_duration(r->worst_delay_ns, c, sizeof(c)), r->runq_pct,
		       r->nflags ? r->flags : "-");
		if (v[i].pid)
			printf("  (restarted in the window: its last process, pid %u)\n",
			       v[i].pid);
		report_cmd(in, &v[i], cmd, sizeof(cmd), argv, text);
		printf("  ");
		text_put(stdout, cmd);
		printf("\n");
	}
}

static void print_json(const struct inputs *in, const struct host_row *v, size_t n)
{
	struct lib_json w;
	char cmd[1200], text[3][32];
	const char *argv[16];
	size_t k;

	lib_json_init(&w, stdout);
	lib_json_object_begin(&w);
	lib_json_str_field(&w, "store", in->path[0]);
	lib_json_name(&w, "hosts");
	lib_json_array_begin(&w);
	for (size_t i = 0; i < n; i++) {
		const struct report_row *r = &v[i].r;

		lib_json_object_begin(&w);
		lib_json_str_field(&w, "service", v[i].e->service);
		lib_json_str_field(&w, "host", v[i].e->host);
		lib_json_bool_field(&w, "read", !v[i].failed);
		lib_json_uint_field(&w, "span_ns", r->span_ns);
		lib_json_uint_field(&w, "polls", r->polls);
		lib_json_uint_field(&w, "samples", r->samples);
		lib_json_name(&w, "cpu_pct");
		lib_json_double(&w, "%.2f", r->cpu_pct);
		lib_json_uint_field(&w, "worst_poll_ns", r->worst_poll_ns);
		lib_json_uint_field(&w, "worst_delay_ns", r->worst_delay_ns);
		lib_json_name(&w, "runq_pct");
		lib_json_double(&w, "%.2f", r->runq_pct);
		lib_json_uint_field(&w, "nflags", r->nflags);
		lib_json_str_field(&w, "flags", r->flags);
		if (v[i].pid)
			lib_json_uint_field(&w, "restarted_pid", v[i].pid);
		k = report_cmd(in, &v[i], cmd, sizeof(cmd), argv, text);
		lib_json_str_field(&w, "report", cmd);
		lib_json_name(&w, "report_argv");
		lib_json_array_begin(&w);
		for (size_t m = 0; m < k; m++)
			lib_json_str(&w, argv[m]);
		lib_json_array_end(&w);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_object_end(&w);
	lib_json_finish(&w);
}

int cmd_fleet(int argc, char **argv)
{
	static const struct view_cmd cmd = {
		.name = "fleet ",
		.shared = VIEW_INPUTS | VIEW_FORMAT,
		.help = help,
	};
	struct inputs in = {.n = 0};
	struct view_args va = {.text_json = 1};
	struct host_row *v = NULL;
	const struct catalog_run *runs;
	struct catalog_counts cn;
	struct catalog *c;
	size_t n = 0, nruns, nobjs, failed = 0;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, NULL, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	if (in.n != 1 || strncmp(in.path[0], "s3://", 5))
		return usage_error("fleet ", "want one -i s3://BUCKET[/PREFIX]");
	/* listed once: each host's read takes its keys from here */
	if (inputs_catalog(&in, in.path[0], FLEET_KEYS_MAX, &c))
		return EXIT_FAIL;
	catalog__counts(c, &cn);
	(void)catalog__objects(c, &nobjs);
	if (nobjs == cn.objects)
		in.listed = c;
	nruns = catalog__runs(c, &runs);
	v = calloc(nruns + 1, sizeof(*v));
	if (!v) {
		error("out of memory");
		ret = EXIT_FAIL;
		goto out;
	}
	/* one row per service/host (the runs are in their order) */
	for (size_t i = 0; i < nruns; i++) {
		const struct catalog_run *e = &runs[i];

		if (n && !strcmp(v[n - 1].e->service, e->service) &&
		    !strcmp(v[n - 1].e->host, e->host))
			continue;
		v[n++].e = e;
	}
	for (size_t i = 0; i < n; i++)
		if (host_report(&in, &v[i])) {
			v[i].failed = 1;
			failed++;
		}
	qsort(v, n, sizeof(*v), worse);
	if (va.json)
		print_json(&in, v, n);
	else
		print_text(&in, v, n);
	if (failed == n)
		ret = EXIT_FAIL;
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
out:
	free(v);
	catalog__free(c);
	return ret;
}
