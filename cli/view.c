// SPDX-License-Identifier: MIT
/*
 * view.c - what the analysis views share on their command line and at
 * their end: the shared options (struct view_args; getopt's tables built
 * from struct view_cmd), the --task and --span filters applied once on
 * what was read, and where a view's output goes (a file, stdout, the
 * terminal's width). The inputs' own options are session.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/losses.h"
#include "analysis/spans.h"
#include "cli/cli.h"
#include "lib/text.h"

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

void lean_min_poll(const struct trace *t, uint64_t min_poll_ns)
{
	uint64_t floor;
	char a[32], b[32];

	if (min_poll_ns && analysis_is_lean(t, &floor, NULL, NULL) && min_poll_ns < floor)
		warning("a lean recording keeps only the polls of %s or longer: --min-poll "
			"%s shows those alone (the shorter are counted per task in "
			"'d9prof tasks')",
			text_duration(floor, a, sizeof(a)),
			text_duration(min_poll_ns, b, sizeof(b)));
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
	int bad = ferror(f), e = errno;
	off_t size = f == stdout || bad ? -1 : ftello(f);
	char sz[32];

	errno = e; /* (ftello on a pipe: ESPIPE, not the write's error) */
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
	/* a file: say where it went, as record does */
	if (f != stdout && size >= 0)
		info("wrote %s (%s)", path, text_size((double)size, sz, sizeof(sz)));
	return 0;
}
