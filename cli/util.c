// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/live.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "analysis/window.h"
#include "cli/cli.h"
#include "lib/text.h"
#include "record/record.h"
#include "store/fetch.h"

/* One message line. Messages name paths and what the target is called
 * (its comm, files named after it, what a trace says): all of it shown
 * through text_put(), so no control or invalid UTF-8 reaches the
 * terminal of the root that runs the recorder. */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *m = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n >= (int)sizeof(small) && (m = malloc((size_t)n + 1)))
		vsnprintf(m, (size_t)n + 1, fmt, ap);
	else if (n >= (int)sizeof(small))
		m = small; /* cut, rather than nothing */
	fprintf(stderr, "d9prof: %s", prefix);
	text_put(stderr, n < 0 ? fmt : m);
	fputc('\n', stderr);
	if (m != small)
		free(m);
}

void cli_msg(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(prefix, fmt, ap);
	va_end(ap);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "try 'd9prof %s--help'\n", cmd ? cmd : "");
	return EXIT_USAGE;
}

int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	case 'T':
	case 't':
		shift = 40;
		end++;
		break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "s")) || !isfinite(v) || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* @why without a leading "@path: " (the reader names the file when it reads
 * several, or a directory: the message already says which). */
static const char *why_in(const char *path, const char *why)
{
	size_t n = strlen(path);

	return why && !strncmp(why, path, n) && !strncmp(why + n, ": ", 2) ? why + n + 2
									   : why;
}

static void read_failed(const char *path, int err, const char *why)
{
	why = why_in(path, why);
	if (err == -ENOENT && !why)
		error("cannot read '%s': no such file (record one with "
		      "'d9prof record -p PID -o %s')",
		      path, path);
	else if (err == -EBADMSG)
		error("cannot read '%s': corrupt or not a d9prof trace (%s)", path,
		      why ? why : "bad data");
	else if (err == -EPROTONOSUPPORT)
		error("cannot read '%s': %s; use a matching d9prof", path,
		      why ? why : "unsupported trace version");
	else if (err == -ENODATA)
		error("cannot read '%s': %s", path, why ? why : "nothing recorded in it");
	else if (err == -ENOTUNIQ && why)
		error("cannot read '%s': %s", path, why);
	else if (why && err == -ENOENT)
		error("cannot read '%s': %s", path, why);
	else if (why)
		error("cannot read '%s': %s: %s", path, why, strerror(-err));
	else
		error("cannot read '%s': %s", path, strerror(-err));
}

void analysis_failed(struct inputs *in, const struct trace *t, int err)
{
	const char *why = trace__error(t);

	if (why)
		read_failed(inputs_name(in), err, why);
	else
		error("cannot analyse '%s': %s", inputs_name(in), strerror(-err));
}

int parse_word(const char *s, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return (int)i;
	return -EINVAL;
}

int check_task(struct join *j, const struct task_sel *sel, struct inputs *in)
{
	const struct task_stat *ts;
	char what[160], name[2][160] = {"", ""};
	int err = join__select(j, sel);

	if (err == 1) {
		/* the marked task is kept; say which other has its number */
		for (size_t i = 0; i < j->ntasks; i++)
			if ((j->tasks[i].task & TRACE_TASK_TOKIO) && j->tasks[i].name &&
			    trace_task_number(j->tasks[i].task) == sel->id)
				text_clean(j->tasks[i].name, name[1], sizeof(name[1]));
		ts = join__selected(j);
		text_clean(ts && ts->name ? ts->name : "", name[0], sizeof(name[0]));
		info("task %llu is the one the shim marked ('%s'); Tokio's task %llu "
		     "read from outside ('%s') is --task tokio:%llu",
		     (unsigned long long)sel->id, name[0], (unsigned long long)sel->id,
		     name[1], (unsigned long long)sel->id);
		return 0;
	}
	if (!err)
		return 0;
	if (!j->trace->nevents && !j->trace->ntasks)
		error("'%s' has no task ids: the target had no d9prof shim (link "
		      "libd9prof; see d9prof(3))",
		      inputs_name(in));
	else
		error("no %s in '%s' (list them with 'd9prof tasks %s --limit 0')",
		      task_sel_text(sel, what, sizeof(what)), inputs_name(in),
		      inputs_args(in));
	return -1;
}

int check_spans(struct spans *sp, const char *name, uint64_t min_ns, int events,
		struct inputs *in)
{
	char what[300], dur[32];

	if (events ? sp->nevents > 0 : sp->ninstances > 0) {
		if (events || !spans__select(sp, name, min_ns))
			return 0;
		text_clean(name ? name : "", what, sizeof(what));
		error("no span%s%s%s%s%s in '%s' (list them with 'd9prof spans %s')",
		      name ? " named " : "", name ? what : "",
		      min_ns ? " of at least " : "",
		      min_ns ? text_duration(min_ns, dur, sizeof(dur)) : "",
		      name ? "" : " at all", inputs_name(in), inputs_args(in));
		return -1;
	}
	error("'%s' has no application %s: the target made none (d9_span_new(), "
	      "d9_event(), or the Rust crate's tracing layer; see d9prof(3))",
	      inputs_name(in), events ? "events" : "spans");
	return -1;
}

int check_shim(const struct join *j, struct inputs *in)
{
	if (j->ntasks)
		return 0;
	error("'%s' has no tasks: the target did not run the d9prof shim while it was "
	      "recorded (link libd9prof, see d9prof(3)); 'd9prof flame' still shows its "
	      "CPU samples",
	      inputs_name(in));
	return -1;
}

void folded_losses(const struct trace *t, enum flame_format format, unsigned int affects)
{
	char buf[LOSS_TEXT_MAX];

	if (format == FLAME_FOLDED && *analysis_losses_text(t, affects, buf, sizeof(buf)))
		info("%s", buf);
}

int parse_task_sel(const char *s, struct task_sel *sel)
{
	uint64_t id;

	memset(sel, 0, sizeof(*sel));
	if (!*s)
		return -EINVAL;
	sel->on = 1;
	if (!parse_u64(s, &id)) {
		if (!id)
			return -EINVAL;
		sel->id = id;
	} else if (!strncmp(s, "tokio:", 6) && !parse_u64(s + 6, &id)) {
		if (!id || (id & TRACE_TASK_TOKIO))
			return -EINVAL;
		sel->id = TRACE_TASK_TOKIO | id;
	} else {
		sel->name = s;
	}
	return 0;
}

int word_option(const char *cmd, const char *what, const char *arg,
		const char *const *words, size_t n, int *out)
{
	char want[256];
	size_t len = 0, left = 0, i;

	*out = parse_word(arg, words, n);
	if (*out >= 0)
		return 0;
	for (i = 0; i < n; i++)
		left += words[i] != NULL;
	for (i = 0; i < n && len < sizeof(want); i++)
		if (words[i])
			len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s",
						words[i],
						--left > 1 ? ", "
						: left	   ? " or "
							   : "");
	return usage_error(cmd, "bad %s '%s': want %s", what, arg, want);
}

int parse_group_by(const char *s)
{
	static const char *const by[] = {
		[GROUP_TASK] = "task",
		[GROUP_NAME] = "name",
		[GROUP_THREAD] = "thread",
		[GROUP_SPAN] = "span",
	};

	return PARSE_WORD(s, by);
}

/* ---- inputs --------------------------------------------------------------- */

/* -i, --from, --to, --frame or --full-stacks (view_option()). */
static int inputs_option(struct inputs *in, const char *cmd, int c, const char *arg)
{
	struct time_spec *ts = c == OPT_FROM ? &in->win.from : &in->win.to;

	if (c == OPT_FULL_STACKS) {
		in->jflags |= JOIN_WHOLE_STACKS;
		return 0;
	}
	if (c == OPT_STORE_SERVICE || c == OPT_STORE_HOST) {
		*(c == OPT_STORE_SERVICE ? &in->service : &in->host) = arg;
		return 0;
	}
	if (c == OPT_PID) {
		uint64_t pid;

		if (parse_u64(arg, &pid) || !pid || pid > INT32_MAX)
			return usage_error(cmd, "bad --pid '%s': want a process id", arg);
		in->pid = (uint32_t)pid;
		return 0;
	}
	if (c == OPT_FRAME) {
		static const char *const frame[] = {"app", "leaf"};

		return WORD_OPTION(cmd, "--frame", arg, frame, &in->raw_leaf);
	}
	if (c == 'i') {
		if (in->n == INPUTS_MAX)
			return usage_error(cmd,
					   "more than %d inputs: give their directory "
					   "instead",
					   INPUTS_MAX);
		in->path[in->n++] = arg;
		return 0;
	}
	if (time_spec_parse(arg, ts))
		return usage_error(cmd, "bad %s '%s': " TIME_WANT,
				   c == OPT_FROM ? "--from" : "--to", arg);
	if (time_spec_cmp(&in->win.from, &in->win.to) >= 0) {
		char a[32], b[32];

		return usage_error(cmd, "--from %s is not before --to %s",
				   time_spec_text(&in->win.from, a, sizeof(a)),
				   time_spec_text(&in->win.to, b, sizeof(b)));
	}
	return 0;
}

int view_option(struct view_args *v, struct inputs *in, const char *cmd, int c,
		const char *arg)
{
	static const char *const text_json[] = {"text", "json"};
	static const char *const flame[] = {
		[FLAME_SVG] = "svg", [FLAME_FOLDED] = "folded"};
	uint64_t n;
	int k;

	switch (c) {
	case 'i':
	case OPT_FROM:
	case OPT_TO:
	case OPT_FRAME:
	case OPT_FULL_STACKS:
	case OPT_STORE_SERVICE:
	case OPT_STORE_HOST:
	case OPT_PID:
		return inputs_option(in, cmd, c, arg);
	case 't':
		if (parse_task_sel(arg, &v->sel))
			return usage_error(cmd, "bad task '%s': " TASK_WANT, arg);
		return 0;
	case OPT_BY:
		if ((k = parse_group_by(arg)) < 0 || (k == GROUP_SPAN && !v->by_span))
			return usage_error(cmd,
					   "bad --by '%s': want task, name or thread%s",
					   arg, v->by_span ? " or span" : "");
		v->by = (enum group_by)k;
		return 0;
	case OPT_REVERSE:
		v->reverse = 1;
		return 0;
	case OPT_TITLE:
		v->title = arg;
		return 0;
	case OPT_MIN_POLL:
		if (duration_parse(arg, &v->min_poll_ns))
			return usage_error(cmd, "bad --min-poll '%s': " DURATION_WANT,
					   arg);
		return 0;
	case 'f':
		k = v->text_json ? PARSE_WORD(arg, text_json) : PARSE_WORD(arg, flame);
		if (k < 0)
			return usage_error(cmd, "bad format '%s': want %s", arg,
					   v->text_json ? "text or json"
							: "svg or folded");
		if (v->text_json)
			v->json = k;
		else
			v->format = (enum flame_format)k;
		return 0;
	case 'o':
		v->out = arg;
		return 0;
	case OPT_NO_INLINE:
		v->rflags |= TRACE_READ_NO_INLINE;
		return 0;
	case OPT_MIN:
		if (duration_parse(arg, &v->min_ns))
			return usage_error(cmd, "bad --min '%s': " DURATION_WANT, arg);
		return 0;
	case 'n':
		if (parse_u64(arg, &n) || n > SIZE_MAX)
			return usage_error(cmd, "bad limit '%s': want a number (0: all)",
					   arg);
		v->limit = (size_t)n;
		return 0;
	case OPT_WIDE:
		v->wide = 1;
		return 0;
	default:
		return usage_error(cmd, "bad option");
	}
}

int view_done(struct inputs *in, const struct trace *t, int err)
{
	int ret = EXIT_OK;

	if (err) {
		analysis_failed(in, t, err);
		ret = EXIT_FAIL;
	}
	if (close_output(stdout, NULL))
		ret = EXIT_FAIL;
	return ret;
}

/* The shared options (struct view_cmd.shared), with their short forms */
/* clang-format off */
static const struct shared_opt {
	unsigned int bit;
	struct option lopt;
	const char *sopt;
} shared_opts[] = {
	{VIEW_FILES,     {"input", required_argument, NULL, 'i'}, "i:"},
	{VIEW_FILES,     {"pid", required_argument, NULL, OPT_PID}, NULL},
	{VIEW_WINDOW,    {"from", required_argument, NULL, OPT_FROM}, NULL},
		{VIEW_WINDOW,    {"to", required_argument, NULL, OPT_TO}, NULL},
	{VIEW_WINDOW,    {"service", required_argument, NULL, OPT_STORE_SERVICE}, NULL},
	{VIEW_WINDOW,    {"host", required_argument, NULL, OPT_STORE_HOST}, NULL},
	{VIEW_FRAME,     {"frame", required_argument, NULL, OPT_FRAME}, NULL},
	{VIEW_STACKS,    {"full-stacks", no_argument, NULL, OPT_FULL_STACKS}, NULL},
	{VIEW_TASK,      {"task", required_argument, NULL, 't'}, "t:"},
	{VIEW_BY,        {"by", required_argument, NULL, OPT_BY}, NULL},
	{VIEW_REVERSE,   {"reverse", no_argument, NULL, OPT_REVERSE}, NULL},
	{VIEW_TITLE,     {"title", required_argument, NULL, OPT_TITLE}, NULL},
	{VIEW_MIN_POLL,  {"min-poll", required_argument, NULL, OPT_MIN_POLL}, NULL},
	{VIEW_MIN,       {"min", required_argument, NULL, OPT_MIN}, NULL},
	{VIEW_LIMIT,     {"limit", required_argument, NULL, 'n'}, "n:"},
	{VIEW_WIDE,      {"wide", no_argument, NULL, OPT_WIDE}, NULL},
	{VIEW_FORMAT,    {"format", required_argument, NULL, 'f'}, "f:"},
	{VIEW_OUTPUT,    {"output", required_argument, NULL, 'o'}, "o:"},
	{VIEW_NO_INLINE, {"no-inline", no_argument, NULL, OPT_NO_INLINE}, NULL},
};
/* clang-format on */

#define VIEW_OPTS_MAX 40 /* long options of one view, at most */

/* getopt's tables for @cmd: its shared options, its own, -h, --help */
static void view_tables(const struct view_cmd *cmd, struct option *lopts, char *sopts,
			size_t slen)
{
	const struct option *o;
	size_t i, n = 0;

	sopts[0] = '\0';
	for (i = 0; i < sizeof(shared_opts) / sizeof(shared_opts[0]); i++) {
		if (!(cmd->shared & shared_opts[i].bit))
			continue;
		lopts[n++] = shared_opts[i].lopt;
		if (shared_opts[i].sopt)
			strncat(sopts, shared_opts[i].sopt, slen - strlen(sopts) - 1);
	}
	for (o = cmd->own_opts; o && o->name && n < VIEW_OPTS_MAX - 2; o++)
		lopts[n++] = *o;
	strncat(sopts, cmd->sopts ? cmd->sopts : "", slen - strlen(sopts) - 1);
	strncat(sopts, "h", slen - strlen(sopts) - 1);
	lopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lopts[n] = (struct option){0};
}

int view_parse(const struct view_cmd *cmd, void *ctx, struct view_args *v,
	       struct inputs *in, int argc, char **argv)
{
	struct option lopts[VIEW_OPTS_MAX];
	char sopts[32];
	int c, err;

	view_tables(cmd, lopts, sopts, sizeof(sopts));
	optind = 1;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (c == 'h') {
			cmd->help(stdout);
			return EXIT_OK;
		}
		err = cmd->own ? cmd->own(ctx, c, optarg) : VIEW_NOT_MINE;
		if (err == VIEW_NOT_MINE)
			err = view_option(v, in, cmd->name, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		return usage_error(cmd->name, "unexpected argument '%s'", argv[optind]);
	return VIEW_RUN;
}

const char *inputs_name(struct inputs *in)
{
	if (!in->n)
		return DEFAULT_TRACE;
	if (in->n == 1)
		return in->path[0];
	snprintf(in->name, sizeof(in->name), "%s and %zu more", in->path[0], in->n - 1);
	return in->name;
}

/* " --NAME VALUE" at @at of @in->args, if @value, VALUE quoted as a
 * shell needs it (a SERVICE or HOST may come from a bucket's keys);
 * where it ends */
static size_t put_arg(struct inputs *in, size_t at, const char *name, const char *value)
{
	size_t end = at;

	if (!value || at >= sizeof(in->args))
		return at;
	end += (size_t)snprintf(in->args + at, sizeof(in->args) - at, " --%s ", name);
	if (end >= sizeof(in->args) ||
	    text_shell_arg(value, in->args, sizeof(in->args), &end)) {
		in->args[at] = '\0'; /* (not cut: left out) */
		return at;
	}
	return end;
}

const char *inputs_args(struct inputs *in)
{
	char from[32], to[32], pid[16];
	size_t at = 0, i;

	in->args[0] = '\0';
	for (i = 0; i < (in->n ? in->n : 1) && at < sizeof(in->args); i++) {
		size_t k = at + (size_t)snprintf(in->args + at, sizeof(in->args) - at,
						 "%s-i ", i ? " " : "");

		if (k >= sizeof(in->args) ||
		    text_shell_arg(in->n ? in->path[i] : DEFAULT_TRACE, in->args,
				   sizeof(in->args), &k))
			break;
		at = k;
	}
	snprintf(pid, sizeof(pid), "%u", in->pid);
	at = put_arg(in, at, "pid", in->pid ? pid : NULL);
	at = put_arg(in, at, "service", in->service);
	at = put_arg(in, at, "host", in->host);
	at = put_arg(in, at, "from",
		     in->win.from.kind ? time_spec_arg(&in->win.from, from, sizeof(from))
				       : NULL);
	put_arg(in, at, "to",
		in->win.to.kind ? time_spec_arg(&in->win.to, to, sizeof(to)) : NULL);
	return in->args;
}

/* 0 if @path can be read as a trace (a regular file with something in it,
 * or a directory); else say why, -1. */
static int check_input(const char *path)
{
	struct stat sb;

	if (stat(path, &sb)) {
		read_failed(path, -errno, NULL);
		return -1;
	}
	if (S_ISDIR(sb.st_mode))
		return 0;
	/* a FIFO or a device would block or be read once: refuse it */
	if (!S_ISREG(sb.st_mode)) {
		error("cannot read '%s': not a regular file (d9prof reads trace files "
		      "that 'd9prof record' wrote)",
		      path);
		return -1;
	}
	if (!sb.st_size) {
		error("cannot read '%s': the file is empty (its recorder stopped before "
		      "writing anything)",
		      path);
		return -1;
	}
	return 0;
}

/* A warning per file cut short: the recorder was killed, or is still
 * writing it. */
static void warn_cut(struct inputs *in, const struct trace *t)
{
	const char *last = NULL;

	if (t->complete)
		return;
	for (size_t i = 0; i < t->nsegments; i++) {
		const struct trace_segment *g = &t->segments[i];

		if (g->complete)
			continue;
		if (!g->file) { /* one file read: what it holds is the trace */
			warning("'%s' is truncated (the recorder did not finish): using its "
				"%zu whole chunks, %zu samples",
				inputs_name(in), t->chunks, t->nsamples);
			return;
		}
		if (last && !strcmp(last, g->file))
			continue;
		last = g->file;
		warning("'%s' is truncated (the recorder did not finish): using its whole "
			"chunks",
			g->file);
	}
}

/* @in's paths, each s3:// one replaced by the files it fetched (*@owned:
 * what to free with store_fetch_free(), *@nowned of them). NULL after
 * saying why. */
static const char **expand_inputs(struct inputs *in, size_t *n, char ***owned,
				  size_t *nowned)
{
	static const char *const dflt[] = {DEFAULT_TRACE};
	const char *const *given = in->n ? in->path : dflt;
	size_t ngiven = in->n ? in->n : 1, cap = ngiven;
	const char **all = malloc(cap * sizeof(*all));

	*n = *nowned = 0;
	*owned = NULL;
	for (size_t i = 0; all && i < ngiven; i++) {
		char **got;
		size_t ngot;
		const char **more;

		if (strncmp(given[i], "s3://", 5)) {
			if (check_input(given[i]))
				goto fail;
			all[(*n)++] = given[i];
			continue;
		}
		if (*owned || inputs_fetch(in, given[i], &got, &ngot))
			goto fail; /* (one store per command) */
		*owned = got;
		*nowned = ngot;
		cap += ngot;
		more = realloc(all, cap * sizeof(*all));
		if (!more)
			goto fail;
		all = more;
		for (size_t k = 0; k < ngot; k++)
			all[(*n)++] = got[k];
	}
	if (all)
		return all;
	error("out of memory");
fail:
	free(all);
	store_fetch_free(*owned, *nowned);
	*owned = NULL;
	return NULL;
}

struct trace *open_trace(struct inputs *in, unsigned int flags)
{
	struct trace_read_opts o = {
		.flags = flags, .pid = in->pid, .last = in->last_process};
	const char **paths;
	char **owned;
	size_t n, nowned;
	const char *why = NULL;
	struct trace *t = NULL;
	char note[256];
	int err;

	paths = expand_inputs(in, &n, &owned, &nowned);
	if (!paths)
		return NULL;
	if (in->win.from.kind || in->win.to.kind) {
		o.window = trace_window_resolve;
		o.ctx = &in->win;
	}
	err = trace__read_paths(paths, n, &o, &t, &why);
	/* the trace names its segments' files by these strings: they live
	 * as long as it does (close_trace()) */
	in->all = paths;
	in->fetched = owned;
	in->nfetched = nowned;
	if (err) {
		if (o.window && in->win.why[0])
			error("%s", in->win.why);
		else
			read_failed(inputs_name(in), err, why);
		close_trace(in, NULL);
		return NULL;
	}
	warn_cut(in, t);
	for (size_t i = 0; i < t->nskipped; i++)
		warning("left out '%s': %s", t->skipped[i].file, t->skipped[i].why);
	if (!in->quiet && *analysis_segments_text(t, note, sizeof(note)))
		info("%s", note);
	return t;
}

void close_trace(struct inputs *in, struct trace *t)
{
	trace__free(t);
	free(in->all);
	store_fetch_free(in->fetched, in->nfetched);
	in->all = NULL;
	in->fetched = NULL;
	in->nfetched = 0;
}

int session_open(struct session *s, struct inputs *in, unsigned int rflags,
		 unsigned int jflags, unsigned int want)
{
	return session_open_keep(s, in, rflags, jflags, want, NULL);
}

int session_open_keep(struct session *s, struct inputs *in, unsigned int rflags,
		      unsigned int jflags, unsigned int want,
		      const struct join_keep *keep)
{
	return session_open_fed(s, in, rflags, jflags, want, keep, NULL, NULL);
}

int session_open_fed(struct session *s, struct inputs *in, unsigned int rflags,
		     unsigned int jflags, unsigned int want, const struct join_keep *keep,
		     const struct delays_keep *dkeep, const struct spans_keep *skeep)
{
	struct join_keep k;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->in = in;
	/* a view that shows no span reads none: they can be millions; one
	 * that does walks them once (spans__new()) */
	s->t = open_trace(in, rflags | (want & SESSION_SPANS ? TRACE_READ_SPANS_LATER
							     : TRACE_READ_NO_SPANS));
	if (!s->t)
		return -1;
	if (keep) {
		k = *keep;
		k.switches |= !!(want & SESSION_OFFCPU);
		keep = &k;
	} else if (want & SESSION_OFFCPU) {
		jflags |= JOIN_POLL_LIST;
	}
	/* (a feed rides a keep's join: one that streams) */
	if (keep && dkeep && !dkeep->listed) {
		err = delays_feed__new(dkeep, &s->feed);
		k.events = delays_feed__events;
		k.events_ctx = s->feed;
	}
	if (!err)
		err = join__new_keep(s->t, join_flags(in, jflags), keep, &s->j);
	if (!err)
		s->j->origin = in->win.origin;
	if (!err && (want & SESSION_OFFCPU))
		err = offcpu__new(s->j, in->raw_leaf ? OFFCPU_RAW_LEAF : 0, &s->oc);
	if (!err && (want & SESSION_SPANS))
		err = skeep ? spans__new_keep(s->j, s->oc, skeep, &s->sp)
			    : spans__new(s->j, s->oc, &s->sp);
	if (err) {
		analysis_failed(in, s->t, err);
		session_close(s);
		return -1;
	}
	return 0;
}

int session_delays(struct session *s, const struct delays_keep *keep)
{
	int err = s->feed ? delays__from_feed(s->feed, s->j, keep, &s->d) : -EAGAIN;

	if (err == -EAGAIN)
		err = delays__new(s->j, keep, &s->d);

	/* a join listing some polls: those of the delays shown too */
	if (!err)
		err = delays__list_polls(s->d, s->j, keep);

	if (err)
		analysis_failed(s->in, s->t, err);
	return err ? -1 : 0;
}

void session_close(struct session *s)
{
	spans__free(s->sp);
	delays__free(s->d);
	delays_feed__free(s->feed);
	offcpu__free(s->oc);
	join__free(s->j);
	if (s->in)
		close_trace(s->in, s->t);
	memset(s, 0, sizeof(*s));
}

void terminal_svg(const char **outp, const char *file)
{
	if (*outp || !isatty(STDOUT_FILENO))
		return;
	*outp = file;
	info("writing the SVG to %s (not to a terminal; -o - forces stdout)", file);
}

size_t terminal_width(FILE *f)
{
	struct winsize ws;
	int fd = fileno(f);

	if (fd < 0 || !isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

FILE *open_output(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "we");
	if (!f)
		error("cannot write '%s': %s", path, strerror(errno));
	return f;
}

int close_output(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (f == stdout) {
		bad |= fflush(f) != 0;
	} else {
		bad |= fclose(f) != 0;
	}
	if (bad) {
		error("cannot write '%s': %s",
		      path && strcmp(path, "-") ? path : "stdout",
		      strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

void live_set_lost(struct live *l, const struct record_stats *st)
{
	struct live_lost lost = {.samples = st->lost_samples,
				 .shim = st->shim_drops,
				 .offcpu = st->offcpu_lost,
				 .wakeups = st->wake_lost,
				 .ctimer = st->ctimer_drops};

	if (l)
		live__set_lost(l, &lost);
}
