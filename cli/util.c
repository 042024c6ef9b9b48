// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "d9prof: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
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
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
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

static void read_failed(const char *path, int err, const char *why)
{
	if (err == -ENOENT)
		error("cannot read '%s': no such file (record one with "
		      "'d9prof record -p PID -o %s')", path, path);
	else if (err == -EBADMSG)
		error("cannot read '%s': corrupt or not a d9prof trace (%s)", path,
		      why ? why : "bad data");
	else if (err == -EPROTONOSUPPORT)
		error("cannot read '%s': %s; use a matching d9prof", path,
		      why ? why : "unsupported trace version");
	else
		error("cannot read '%s': %s", path, strerror(-err));
}

void analysis_failed(const char *path, const struct trace *t, int err)
{
	const char *why = trace__error(t);

	if (why)
		read_failed(path, err, why);
	else
		error("cannot analyse '%s': %s", path, strerror(-err));
}

int parse_flame_format(const char *s, enum flame_format *out)
{
	if (!strcmp(s, "svg"))
		*out = FLAME_SVG;
	else if (!strcmp(s, "folded"))
		*out = FLAME_FOLDED;
	else
		return -EINVAL;
	return 0;
}

int check_task(const struct join *j, const struct task_sel *sel, const char *in)
{
	char what[160];

	if (!sel->on || task_sel_any(j, sel))
		return 0;
	if (!j->trace->nevents && !j->trace->ntasks)
		error("'%s' has no task ids: the target had no d9prof shim (link "
		      "libd9prof; see d9prof(3))", in);
	else
		error("no %s in '%s' (list them with 'd9prof tasks -i %s --limit 0')",
		      task_sel_text(sel, what, sizeof(what)), in, in);
	return -1;
}

int check_shim(const struct join *j, const char *in)
{
	if (j->ntasks)
		return 0;
	error("'%s' has no tasks: the target did not run the d9prof shim while it was "
	      "recorded (link libd9prof, see d9prof(3)); 'd9prof flame' still shows its "
	      "CPU samples", in);
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
	} else {
		sel->name = s;
	}
	return 0;
}

int parse_group_by(const char *s, enum group_by *by)
{
	if (!strcmp(s, "task"))
		*by = GROUP_TASK;
	else if (!strcmp(s, "name"))
		*by = GROUP_NAME;
	else if (!strcmp(s, "thread"))
		*by = GROUP_THREAD;
	else
		return -EINVAL;
	return 0;
}

struct trace *open_trace(const char *path, unsigned int flags)
{
	const char *why = NULL;
	struct trace *t = NULL;
	struct stat sb;
	int err;

	/* a FIFO or a device would block or be read once: refuse it */
	if (!stat(path, &sb) && !S_ISREG(sb.st_mode)) {
		error("cannot read '%s': not a regular file (d9prof reads trace files "
		      "that 'd9prof record' wrote)", path);
		return NULL;
	}
	if (!stat(path, &sb) && !sb.st_size) {
		error("cannot read '%s': the file is empty (its recorder stopped before "
		      "writing anything)", path);
		return NULL;
	}
	err = trace__read_opts(path, flags, &t, &why);

	if (err) {
		read_failed(path, err, why);
		return NULL;
	}
	if (!t->complete)
		warning("'%s' is truncated (the recorder did not finish): using its "
			"%zu whole chunks, %zu samples", path, t->chunks, t->nsamples);
	return t;
}

int session_open(struct session *s, const char *path, unsigned int rflags,
		 unsigned int jflags, unsigned int want)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->t = open_trace(path, rflags);
	if (!s->t)
		return -1;
	if (want & SESSION_OFFCPU)
		jflags |= JOIN_POLL_LIST;
	err = join__new(s->t, jflags, &s->j);
	if (!err && (want & SESSION_OFFCPU))
		err = offcpu__new(s->j, &s->oc);
	if (!err && (want & SESSION_DELAYS))
		err = delays__new(s->j, &s->d);
	if (err) {
		analysis_failed(path, s->t, err);
		session_close(s);
		return -1;
	}
	return 0;
}

void session_close(struct session *s)
{
	delays__free(s->d);
	offcpu__free(s->oc);
	join__free(s->j);
	trace__free(s->t);
	memset(s, 0, sizeof(*s));
}

void terminal_svg(const char **outp, const char *file)
{
	if (*outp || !isatty(STDOUT_FILENO))
		return;
	*outp = file;
	info("writing the SVG to %s (not to a terminal; -o - forces stdout)", file);
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
		error("cannot write '%s': %s", path && strcmp(path, "-") ? path : "stdout",
		      strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
