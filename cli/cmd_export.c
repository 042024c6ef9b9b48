// SPDX-License-Identifier: MIT
/* d9prof export: the joined trace in another tool's format. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "cli/cli.h"
#include "lib/text.h"

enum { OPT_OFFCPU = 256, OPT_MAX_SIZE };

/* what a viewer opens, DevTools or Perfetto in a browser tab */
#define CHROME_MAX_BYTES (96ull << 20)

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof export " INPUT_USAGE "\n"
		"                     --format pprof [-o OUT] [--task ID|NAME] [--offcpu]\n"
		"       d9prof export " INPUT_USAGE "\n"
		"                     --format speedscope [-o OUT] [--task ID|NAME] [--by KEY]\n"
		"       d9prof export " INPUT_USAGE "\n"
		"                     --format chrome [-o OUT] [--task ID|NAME] [--max-size SIZE]\n"
		"       d9prof export " INPUT_USAGE "\n"
		"                     --format parquet -o DIR [--task ID|NAME]\n\n"
		"Write the trace, every CPU sample joined to its poll, in a format other\n"
		"tools read.\n\n"
		"pprof: a gzipped profile.proto for 'go tool pprof', Pyroscope, Parca,\n"
		"Grafana. Values samples/count and cpu/nanoseconds (a sample is 1e9/F ns,\n"
		"F the sampling frequency recorded), with --offcpu off-cpu/nanoseconds.\n"
		"Every sample is labelled task_id and task_name (0 and \"[no poll]\"\n"
		"outside polls), thread and tid, inside a poll, poll (its id in\n"
		"'d9prof polls'), and inside a span of the application, span and\n"
		"span_id, and the fields of the spans entered (route=/x): 'pprof\n"
		"-tagfocus task_id=42' shows one task, '-tagfocus route=/x' a route.\n\n"
		"speedscope: speedscope's JSON for 'npx speedscope FILE' or\n"
		"https://www.speedscope.app: one sampled profile per task, per task\n"
		"name past 16 tasks (--by: per task name, thread or span name), busiest\n"
		"first, the stacks of 'd9prof flame' in nanoseconds of CPU time, each\n"
		"frame with its source file and the line its function begins at. Stacks\n"
		"are summed: no time order.\n\n"
		"chrome: a timeline in the Trace Event Format (JSON) for\n"
		"https://ui.perfetto.dev or Chrome DevTools' Performance panel: a\n"
		"track per thread with its polls (named by task), parks and off-CPU\n"
		"intervals as slices, the CPU samples as call stacks (a Chrome CPU\n"
		"profile per thread), and an arrow from each wake to the poll it\n"
		"caused. Past --max-size the longest polls go whole and the others\n"
		"are merged into runs (per task, else per task name, else per thread),\n"
		"many spans are cut to the longest, and a line says so.\n\n"
		"parquet: tables for SQL engines (DuckDB, Athena/Trino, Spark,\n"
		"ClickHouse, BigQuery), every row of the trace: samples, stacks, polls,\n"
		"tasks, delays, spans and offcpu, each a file\n"
		"DIR/TABLE/service=S/host=H/date=YYYY-MM-DD/PART.parquet (S the\n"
		"recording's --service, else the target's name; H its --host, else\n"
		"the host name). Times of day are UTC ns; d9prof(1) has the columns and\n"
		"the SQL of common questions.\n\n"
		"options:\n" INPUT_HELP FRAME_HELP
		"  -f, --format FMT      pprof, speedscope, chrome or parquet (required)\n"
		"  -t, --task ID|NAME    only what ran inside polls of task ID (or of\n"
		"                        every task named NAME); chrome: their polls,\n"
		"                        the samples and off-CPU time in them and the\n"
		"                        wakes that led to them\n" TASK_TOKIO_HELP
		"      --offcpu          also the off-CPU time in polls and outside them\n"
		"                        (not parked time), from its switch-out stacks\n"
		"                        (pprof only)\n"
		"      --max-size SIZE   chrome: what a viewer opens (default 96M; 0: no\n"
		"                        bound): past it, polls and spans are cut down\n"
		"                        to fit\n"
		"      --by KEY          speedscope: a profile per task (default up to\n"
		"                        16 tasks, else per task name), per task name,\n"
		"                        per thread (samples outside polls too) or per\n"
		"                        span name of the application (\"[no span]\"\n"
		"                        outside spans)\n"
		"  -o, --output OUT      write there (default: stdout, except for a\n"
		"                        terminal, which gets d9prof.pb.gz,\n"
		"                        d9prof.speedscope.json or d9prof.trace.json)\n" NO_INLINE_HELP
			STACKS_HELP "  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof export --format pprof -o d9prof.pb.gz\n"
		"  go tool pprof -http=: d9prof.pb.gz\n"
		"  d9prof export --format pprof --offcpu --task 42 -o t42.pb.gz\n"
		"  d9prof export --format speedscope -o d9prof.speedscope.json\n"
		"  npx speedscope d9prof.speedscope.json\n"
		"  d9prof export --format chrome -o d9prof.trace.json\n"
		"  d9prof export --format parquet -o tables/\n"
		"  duckdb -c \"SELECT task_name, count(*) FROM 'tables/polls/**/*.parquet' GROUP BY 1\"\n");
}

/* Where a terminal's export goes, by format. */
static const char *default_file(enum export_format fmt)
{
	switch (fmt) {
	case EXPORT_PPROF:
		return "d9prof.pb.gz";
	case EXPORT_SPEEDSCOPE:
		return "d9prof.speedscope.json";
	case EXPORT_CHROME:
		return "d9prof.trace.json";
	case EXPORT_PARQUET:
		break;
	}
	return "d9prof.export";
}

static int run(const struct session *se, const struct export_opts *eo, FILE *out)
{
	switch (eo->format) {
	case EXPORT_PPROF:
		return analysis__export_pprof(se->j, se->oc, eo, out);
	case EXPORT_SPEEDSCOPE:
		return analysis__export_speedscope(se->j, eo, out);
	case EXPORT_CHROME:
		return analysis__export_chrome(se->oc, se->d, eo, out);
	case EXPORT_PARQUET:
		break;
	}
	return -EINVAL;
}

/* Where the Parquet tables go: DIR/REL, the directories made as needed;
 * two files open at once at most (the polls and delays tables are
 * written together) */
struct table_dir {
	const char *dir;
	struct table_file {
		FILE *f;
		char path[PATH_MAX];
	} open[2];
	unsigned int files;
};

static FILE *table_open(void *ctx, const char *rel)
{
	struct table_dir *td = ctx;
	struct table_file *tf = !td->open[0].f ? &td->open[0] : &td->open[1];
	size_t from = strlen(td->dir) + 1;

	if (tf->f) {
		errno = EMFILE;
		return NULL;
	}
	if ((size_t)snprintf(tf->path, sizeof(tf->path), "%s/%s", td->dir, rel) >=
	    sizeof(tf->path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	for (char *p = tf->path + from; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(tf->path, 0755) && errno != EEXIST)
			return NULL;
		*p = '/';
	}
	tf->f = fopen(tf->path, "we");
	return tf->f;
}

static int table_close(void *ctx, FILE *f, int err)
{
	struct table_dir *td = ctx;
	struct table_file *tf = td->open[0].f == f ? &td->open[0] : &td->open[1];
	int e = fclose(f) ? -errno : 0;

	if (err || e)
		unlink(tf->path);
	else
		td->files++; /* (a table begun again is one file) */
	tf->f = NULL;
	return e;
}

/* --format parquet -o DIR */
static int export_tables(struct inputs *in, const struct view_args *va,
			 unsigned int rflags)
{
	struct parquet_result res;
	struct table_dir td = {.dir = va->out};
	struct parquet_opts po = {
		.open = table_open, .close = table_close, .ctx = &td, .result = &res};
	struct session se;
	uint64_t bytes = 0;
	char size[32];
	int err, ret = EXIT_OK;

	if (!va->out || !strcmp(va->out, "-"))
		return usage_error("export ",
				   "--format parquet writes a directory of tables: "
				   "give -o DIR");
	if (mkdir(td.dir, 0755) && errno != EEXIST) {
		error("cannot make '%s': %s", td.dir, strerror(errno));
		return EXIT_FAIL;
	}
	/* the polls of the samples (and switches) listed; the export walks
	 * the trace again for the rest, keeping none */
	if (session_open_keep(&se, in, rflags, 0, SESSION_OFFCPU | SESSION_SPAN_RECORDS,
			      &(struct join_keep){.min_ns = UINT64_MAX, .sampled = 1}))
		return EXIT_FAIL;
	if (check_task(se.j, &va->sel, in)) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__export_parquet(se.oc, &po);
	if (err && trace__error(se.t)) {
		analysis_failed(in, se.t, err);
		ret = EXIT_FAIL;
		goto out;
	} else if (err) {
		error("cannot write the tables under '%s': %s", td.dir, strerror(-err));
		ret = EXIT_FAIL;
		goto out;
	}
	for (int i = 0; i < PARQUET_TABLES; i++)
		bytes += res.bytes[i];
	info("parquet: %llu samples, %llu polls, %llu delays, %llu spans, %llu off-CPU "
	     "intervals, %llu stacks, %llu tasks: %u files, %s, under %s",
	     (unsigned long long)res.rows[PARQUET_SAMPLES],
	     (unsigned long long)res.rows[PARQUET_POLLS],
	     (unsigned long long)res.rows[PARQUET_DELAYS],
	     (unsigned long long)res.rows[PARQUET_SPANS],
	     (unsigned long long)res.rows[PARQUET_OFFCPU],
	     (unsigned long long)res.rows[PARQUET_STACKS],
	     (unsigned long long)res.rows[PARQUET_TASKS], td.files,
	     text_size((double)bytes, size, sizeof(size)), td.dir);
	if (!res.utc)
		warning("'%s' does not say its wall clock (no clock_realtime): times are "
			"CLOCK_MONOTONIC ns and date=unknown",
			inputs_name(in));
	if (res.period_guessed)
		warning("'%s' does not say its sampling frequency: a sample counts as "
			"%.0f ns (999 Hz)",
			inputs_name(in), 1e9 / 999);
out:
	session_close(&se);
	return ret;
}

/* -f pprof|speedscope|chrome|parquet, --offcpu */
static int export_option(void *ctx, int c, const char *arg)
{
	static const char *const formats[] = {
		[EXPORT_PPROF] = "pprof",
		[EXPORT_SPEEDSCOPE] = "speedscope",
		[EXPORT_CHROME] = "chrome",
		[EXPORT_PARQUET] = "parquet",
	};
	struct export_opts *eo = ctx;
	int k;

	switch (c) {
	case 'f':
		if (WORD_OPTION("export ", "format", arg, formats, &k))
			return EXIT_USAGE;
		eo->format = (enum export_format)k;
		return 0;
	case OPT_OFFCPU:
		eo->offcpu = 1;
		return 0;
	case OPT_MAX_SIZE:
		if (parse_size(arg, &eo->max_bytes))
			return usage_error(
				"export ",
				"bad --max-size '%s': want a size (256M, 1G; 0: "
				"no bound)",
				arg);
		return 0;
	default:
		return VIEW_NOT_MINE;
	}
}

int cmd_export(int argc, char **argv)
{
	static const struct option own[] = {
		{"offcpu", no_argument, NULL, OPT_OFFCPU},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{0},
	};
	static const struct view_cmd cmd = {
		.name = "export ",
		.shared = VIEW_INPUTS | VIEW_FRAME | VIEW_STACKS | VIEW_TASK |
			  VIEW_FORMAT | VIEW_OUTPUT | VIEW_BY | VIEW_NO_INLINE,
		.own_opts = own,
		.help = help,
		.own = export_option,
	};
	struct export_result res = {0};
	struct export_opts eo = {.result = &res, .max_bytes = CHROME_MAX_BYTES};
	struct inputs in = {.n = 0};
	struct view_args va = {.by_span = 1};
	const char *outp;
	unsigned int rflags = TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS;
	struct session se;
	FILE *out;
	const struct join_keep pkeep = {.min_ns = UINT64_MAX, .sampled = 1};
	struct join_keep ckeep;
	struct spans_keep skeep;
	int err, ret = EXIT_OK;

	if ((err = view_parse(&cmd, &eo, &va, &in, argc, argv)) != VIEW_RUN)
		return err;
	eo.by = va.by;
	outp = va.out;
	rflags |= va.rflags;
	if (!eo.format)
		return usage_error(
			"export ",
			"no --format: want pprof, speedscope, chrome or parquet");
	if (eo.format == EXPORT_PARQUET)
		return export_tables(&in, &va, rflags);
	if (eo.offcpu && eo.format != EXPORT_PPROF)
		return usage_error("export ", "--offcpu is for --format pprof only");
	if (eo.by && eo.format != EXPORT_SPEEDSCOPE)
		return usage_error("export ", "--by is for --format speedscope only");
	/* a binary format is not for a terminal */
	terminal_svg(&outp, default_file(eo.format));

	/* pprof labels samples with their polls' ids, speedscope by thread
	 * or span walks the samples again: the polls samples fell in are
	 * listed, the join streaming (else speedscope draws what the join
	 * counts); chrome lists the polls it may write whole, with the wakes
	 * that ended them */
	ckeep = analysis_chrome_keep(&eo, &va.sel);
	/* pprof and speedscope ask the spans at samples and switches only;
	 * chrome draws them: counted first, then built again keeping what it
	 * writes */
	skeep = (struct spans_keep){.at = 1, .hists = eo.format == EXPORT_CHROME};
	if (session_open_fed(
		    &se, &in, rflags, 0,
		    (eo.offcpu || eo.format == EXPORT_CHROME ? SESSION_OFFCPU : 0) |
			    (eo.format != EXPORT_SPEEDSCOPE || eo.by == GROUP_SPAN
				     ? SESSION_SPANS
				     : 0),
		    eo.format == EXPORT_CHROME ? &ckeep
		    : eo.format == EXPORT_PPROF ||
				    (eo.format == EXPORT_SPEEDSCOPE &&
				     (eo.by == GROUP_THREAD || eo.by == GROUP_SPAN))
			    ? &pkeep
			    : NULL,
		    NULL, &skeep))
		return EXIT_FAIL;
	eo.spans = se.sp;
	if (check_task(se.j, &va.sel, &in) ||
	    (eo.format == EXPORT_CHROME &&
	     session_delays(&se,
			    &(struct delays_keep){.min_ns = UINT64_MAX, .listed = 1}))) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (eo.offcpu && offcpu_missing(se.t))
		warning("CPU samples only: '%s' has no off-CPU data: %s",
			inputs_name(&in), offcpu_missing(se.t));
	out = open_output(outp);
	if (!out) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = run(&se, &eo, out);
	if (close_output(out, outp))
		ret = EXIT_FAIL;
	if (err == -ENODATA) {
		char what[160];

		warning("no CPU samples%s in %s", eo.offcpu ? " or off-CPU time" : "",
			va.sel.on ? task_sel_text(&va.sel, what, sizeof(what))
				  : inputs_name(&in));
	} else if (err && trace__error(se.t)) {
		analysis_failed(&in, se.t, err);
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot export: %s", strerror(-err));
		ret = EXIT_FAIL;
	}
	if (!err && res.cut) {
		char a[32], b[32], c[32], d[32];

		info("chrome: about %s in full, past --max-size %s: the %llu polls longer than %s "
		     "whole, with their wakes; the other %llu merged per %s into %llu runs of "
		     "up to %s (their own tracks). All of them: --max-size 0 (or fewer with "
		     "--task, --from/--to)",
		     text_size((double)res.full_bytes, a, sizeof(a)),
		     text_size((double)eo.max_bytes, b, sizeof(b)),
		     (unsigned long long)res.whole_polls,
		     text_duration(res.whole_ns, c, sizeof(c)),
		     (unsigned long long)res.merged_polls,
		     res.run_by == GROUP_TASK	? "task"
		     : res.run_by == GROUP_NAME ? "task name"
						: "thread",
		     (unsigned long long)res.runs,
		     text_duration(res.run_ns, d, sizeof(d)));
	}
	if (!err && eo.format == EXPORT_SPEEDSCOPE && !eo.by && res.by == GROUP_NAME)
		info("speedscope: a profile per task name, past %d tasks (%zu here); one per "
		     "task: --by task",
		     SPEEDSCOPE_TASKS, se.j->ntasks);
	if (!err && res.span_cut) {
		char a[32], b[32];

		info("chrome: spans past --max-size: the %llu span enters longer than %s and "
		     "the %llu spans longer than %s written, the others left out ('d9prof "
		     "spans' for them)",
		     (unsigned long long)res.span_enters,
		     text_duration(res.enter_ns, a, sizeof(a)),
		     (unsigned long long)res.spans,
		     text_duration(res.life_ns, b, sizeof(b)));
	}
	if (!err && res.period_guessed)
		warning("'%s' does not say its sampling frequency: a sample counts as "
			"%.0f ns (999 Hz)",
			inputs_name(&in), 1e9 / 999);
out:
	session_close(&se);
	return ret;
}
