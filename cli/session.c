// SPDX-License-Identifier: MIT
/*
 * session.c - what an analysis command reads and builds on it: struct
 * inputs, filled from -i, --pid, --from, --to and the like
 * (inputs_option(); s3:// inputs fetched through inputs_s3.c) and named
 * in messages and suggested commands; the trace read from them
 * (open_trace(): each file checked first, what was cut short or left out
 * said once); the session, that trace with its join, off-CPU join,
 * delays and spans. A read or an analysis that fails is said here, in
 * one shape (analysis_failed()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"
#include "analysis/window.h"
#include "cli/cli.h"
#include "lib/grow.h"
#include "lib/text.h"
#include "store/fetch.h"

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

int inputs_option(struct inputs *in, const char *cmd, int c, const char *arg)
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
		if (LIB_GROW(all, cap, *n + ngiven + ngot))
			goto fail;
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
	s->t = open_trace(in, rflags | (want & (SESSION_SPANS | SESSION_SPAN_RECORDS)
						? TRACE_READ_SPANS_LATER
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
