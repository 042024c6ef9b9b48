// SPDX-License-Identifier: MIT
/*
 * top_view.c - one frame of `d9prof top` from a live snapshot (live.c):
 * the header (the workers' time, what was sampled and lost), the
 * warnings (report's red flags, as they hold now) and the table, as text
 * cut to a width or as one JSON object.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/live.h"
#include "analysis/views.h"
#include "lib/json.h"
#include "lib/text.h"

#define MAX_WARN 3 /* warning lines in a text frame */

/* ---- rows ----------------------------------------------------------------- */

static double cpu_pct(const struct live_snap *s, uint64_t samples)
{
	return s->interval_ns
		       ? 100.0 * (double)samples * s->period_ns / (double)s->interval_ns
		       : 0;
}

static double per_sec(const struct live_snap *s, uint64_t n)
{
	return s->interval_ns ? (double)n * 1e9 / (double)s->interval_ns : 0;
}

struct sort_ctx {
	const struct live_snap *s;
	enum top_sort key;
};

static int row_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const struct live_row *x = &c->s->rows[*(const uint32_t *)a];
	const struct live_row *y = &c->s->rows[*(const uint32_t *)b];
	uint64_t kx, ky;
	int n;

	switch (c->key) {
	case TOP_BY_POLLS:
		kx = x->polls, ky = y->polls;
		break;
	case TOP_BY_MAX:
		kx = x->max_poll_ns, ky = y->max_poll_ns;
		break;
	case TOP_BY_DELAY:
		kx = x->delay_p99_ns, ky = y->delay_p99_ns;
		break;
	case TOP_BY_BLOCKED:
		kx = x->blocked_ns, ky = y->blocked_ns;
		break;
	case TOP_BY_RUNQ:
		kx = x->runq_ns, ky = y->runq_ns;
		break;
	case TOP_BY_NAME:
		n = strcmp(x->name, y->name);
		if (n)
			return n;
		kx = y->id, ky = x->id; /* then by id, ascending */
		break;
	default:
		kx = x->samples, ky = y->samples;
		if (kx == ky)
			kx = x->poll_ns, ky = y->poll_ns;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The rows @o shows, sorted, in *@ix (the caller frees it); how many. */
static size_t shown_rows(const struct live_snap *s, const struct top_opts *o,
			 uint32_t **ix)
{
	struct sort_ctx c = {s, o->sort};
	size_t n = 0;

	*ix = malloc((s->nrows + 1) * sizeof(**ix));
	if (!*ix)
		return 0;
	for (size_t i = 0; i < s->nrows; i++) {
		const struct live_row *r = &s->rows[i];

		if (o->filter && *o->filter && !strstr(r->name, o->filter))
			continue;
		/* by task: a task idle all interval is not a row */
		if (s->by != GROUP_THREAD && !r->polls && !r->samples &&
		    r->state == LIVE_IDLE && !r->blocked_ns)
			continue;
		(*ix)[n++] = (uint32_t)i;
	}
	qsort_r(*ix, n, sizeof(**ix), row_cmp, &c);
	return n;
}

/* ---- warnings ---------------------------------------------------------- */

struct warn {
	const char *flag, *threshold;
	uint64_t task; /* 0: none */
	char text[256];
};

/* A row's name in @w columns: the tables' rule (analysis_fit_name()),
 * but a name the Rust crate made of a type and a spawn site ("TYPE
 * FILE:LINE") keeps its site whole and loses the type's "::{{closure}}"
 * (an async body) first: "spinner src/bugs.rs:135", not "{{closure}}
 * src/bugs.rs:135" */
static void fit_task_name(const char *name, size_t w, char *buf, size_t len)
{
	const char *site = strrchr(name, ' '), *colon;
	char type[64], cut[160];
	size_t n, sw;

	analysis_fit_name(name[0] ? name : NULL, w, buf, len);
	if (!w || analysis_u8_width(buf) == strlen(name) || !site ||
	    !(colon = strrchr(site, ':')) || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return;
	sw = strlen(site);
	n = (size_t)(site - name);
	if (n >= sizeof(type) || sw + 3 >= w)
		return;
	memcpy(type, name, n);
	type[n] = '\0';
	while (n > 13 && !strcmp(type + n - 13, "::{{closure}}"))
		type[n -= 13] = '\0';
	if (analysis_shorten(type, w - sw, cut) || !cut[0])
		return;
	snprintf(buf, len, "%s%s", cut, site);
}

static const char *who(const struct live_snap *s, const struct live_row *r, char *buf,
		       size_t len)
{
	char name[64];

	fit_task_name(r->name, 32, name, sizeof(name));
	if (s->by == GROUP_THREAD)
		snprintf(buf, len, "%s[%" PRIu64 "]", name, r->id);
	else if (s->by == GROUP_NAME)
		snprintf(buf, len, "tasks %s", name);
	else
		snprintf(buf, len, "task %" PRIu64 " %s", trace_task_number(r->id), name);
	return buf;
}

/* "task N name" of task @task, its name from its row (by task; else
 * "task N") */
static const char *task_named(const struct live_snap *s, uint64_t task, char *buf,
			      size_t len)
{
	for (size_t i = 0; s->by == GROUP_TASK && i < s->nrows; i++)
		if (s->rows[i].id == task)
			return who(s, &s->rows[i], buf, len);
	snprintf(buf, len, "task %" PRIu64, trace_task_number(task));
	return buf;
}

/* "task N name" or "thread name[tid]" of waker @k of @s */
static const char *waker_named(const struct live_snap *s, const struct live_waker *k,
			       char *buf, size_t len)
{
	char name[48];

	if (k->task)
		return task_named(s, k->task, buf, len);
	snprintf(buf, len, "thread %s", live_worker_named(s, k->tid, name, sizeof(name)));
	return buf;
}

/* The selected task's detail, below the table: its polls since selected
 * (how many, mean, percentiles, longest) and who woke it */
static void detail_text(const struct live_snap *s, FILE *out)
{
	const struct live_detail *d = &s->detail;
	char a[32], b[32], c[32], e[32], f[32], who[160];

	if (!d->task)
		return;
	fprintf(out, "\n%s, since selected: %" PRIu64 " polls",
		task_named(s, d->task, who, sizeof(who)), d->npolls);
	if (d->npolls)
		fprintf(out, ", mean %s, p50 %s, p90 %s, p99 %s, max %s",
			text_duration(d->poll_ns / d->npolls, a, sizeof(a)),
			text_duration(live_hist_pct(d->polls, d->npolls, 50), b,
				      sizeof(b)),
			text_duration(live_hist_pct(d->polls, d->npolls, 90), c,
				      sizeof(c)),
			text_duration(live_hist_pct(d->polls, d->npolls, 99), e,
				      sizeof(e)),
			text_duration(d->max_poll_ns, f, sizeof(f)));
	fprintf(out, "\n  woken by: itself %" PRIu64, d->self);
	for (size_t i = 0; i < d->nwakers; i++)
		fprintf(out, ", %s %" PRIu64,
			waker_named(s, &d->wakers[i], who, sizeof(who)),
			d->wakers[i].wakes);
	if (d->others)
		fprintf(out, ", others %" PRIu64, d->others);
	fputc('\n', out);
}

static void json_detail(const struct live_snap *s, struct lib_json *w)
{
	const struct live_detail *d = &s->detail;
	char who[160];

	lib_json_name(w, "detail");
	if (!d->task) {
		lib_json_null(w);
		return;
	}
	lib_json_object_begin(w);
	lib_json_uint_field(w, "task", trace_task_number(d->task));
	lib_json_uint_field(w, "polls", d->npolls);
	lib_json_uint_field(w, "poll_ns", d->poll_ns);
	lib_json_uint_field(w, "max_poll_ns", d->max_poll_ns);
	lib_json_name(w, "poll_buckets"); /* [its least ns, polls], non-empty ones */
	lib_json_array_begin(w);
	for (unsigned int i = 0; i < LIVE_DELAY_BUCKETS; i++)
		if (d->polls[i]) {
			lib_json_array_begin(w);
			lib_json_uint(w, live_bucket_ns(i));
			lib_json_uint(w, d->polls[i]);
			lib_json_array_end(w);
		}
	lib_json_array_end(w);
	lib_json_uint_field(w, "self_wakes", d->self);
	lib_json_name(w, "wakers");
	lib_json_array_begin(w);
	for (size_t i = 0; i < d->nwakers; i++) {
		lib_json_object_begin(w);
		lib_json_name(w, "task");
		if (d->wakers[i].task)
			lib_json_uint(w, trace_task_number(d->wakers[i].task));
		else
			lib_json_null(w);
		lib_json_uint_field(w, "tid", d->wakers[i].tid);
		lib_json_str_field(w, "name",
				   waker_named(s, &d->wakers[i], who, sizeof(who)));
		lib_json_uint_field(w, "wakes", d->wakers[i].wakes);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_uint_field(w, "other_wakes", d->others);
	lib_json_object_end(w);
}

/* What holds now of report's flags: polls running past 10 ms, a task in
 * one poll for a second (never yielded), tasks woken 5 ms ago and not
 * polled, and what the detectors found (struct live_find). */
static size_t warnings(const struct live_snap *s, struct warn *w, size_t max)
{
	char a[32], b[160], c[64];
	size_t n = 0;

	for (size_t i = 0; i < s->nworkers && n < max; i++) {
		const struct live_worker *k = &s->workers[i];

		/* (from a second on, the detectors' never yielded) */
		if (!k->task || k->in_poll_ns < ANALYSIS_FLAG_LONG_POLL_NS ||
		    k->in_poll_ns >= DELAYS_NO_YIELD_NS)
			continue;
		analysis_fit_name(k->name[0] ? k->name : "?", 24, c, sizeof(c));
		w[n].flag = "long poll";
		w[n].threshold = "10ms";
		w[n].task = k->task;
		snprintf(w[n].text, sizeof(w[n].text),
			 "%s polled on %s[%" PRIu32 "] for %s now",
			 task_named(s, k->task, b, sizeof(b)), c, k->tid,
			 text_duration(k->in_poll_ns, a, sizeof(a)));
		n++;
	}
	for (size_t i = 0; s->by != GROUP_THREAD && i < s->nrows && n < max; i++) {
		const struct live_row *r = &s->rows[i];

		if (r->state != LIVE_WOKEN || r->state_ns < ANALYSIS_FLAG_DELAY_NS)
			continue;
		w[n].flag = "wake-to-poll delay";
		w[n].threshold = "5ms";
		w[n].task = s->by == GROUP_TASK ? r->id : 0;
		snprintf(w[n].text, sizeof(w[n].text), "%s woken %s ago, not polled yet",
			 who(s, r, b, sizeof(b)),
			 text_duration(r->state_ns, a, sizeof(a)));
		n++;
	}
	for (size_t i = 0; i < s->nfinds && n < max; i++) {
		const struct live_find *f = &s->finds[i];

		static const char *const flag[][2] = {
			[LIVE_LOST_WAKER] = {"lost waker", "2s"},
			[LIVE_SELF_WAKES] = {"self-wakes", "half"},
			[LIVE_LEAK] = {"task leak", "16"},
			[LIVE_NO_YIELD] = {"never yielded", "1s"},
		};

		w[n].task = f->task;
		w[n].flag = flag[f->kind][0];
		w[n].threshold = flag[f->kind][1];
		live_find_say(s, f, w[n].text, sizeof(w[n].text));
		n++;
	}
	return n;
}

/* ---- text ----------------------------------------------------------------- */

/* Columns by priority: the first ones are the last to go on a narrow
 * terminal. */
enum col {
	C_CPU,
	C_STATE,
	C_POLLS,
	C_MAX,
	C_DELAY,
	C_BLOCKED,
	C_MEAN,
	C_RUNQ,
	C_SPAN,
	C_TOTAL,
	C_IDLE,
	C_BUSY,
	C_SCHED,
	NCOLS
};
static const struct {
	const char *title;
	int w;
} cols[NCOLS] = {
	[C_CPU] = {"CPU%", 6},	      [C_STATE] = {"STATE", 16},
	[C_POLLS] = {"POLLS/S", 8},   [C_MAX] = {"MAX", 8},
	[C_DELAY] = {"DELAY-P99", 9}, [C_BLOCKED] = {"BLOCKED", 8},
	[C_MEAN] = {"MEAN", 8},	      [C_RUNQ] = {"RUNQ", 8},
	[C_SPAN] = {"SPAN", 24},      [C_TOTAL] = {"TOTAL", 8},
	[C_IDLE] = {"IDLE", 8},	      [C_BUSY] = {"BUSY", 8},
	[C_SCHED] = {"SCHED", 8},
};
/* the order they are printed in: the interval's, then the life's
 * (since its spawn: tokio-console's Total, Busy, Sched, Idle) */
static const enum col order[NCOLS] = {C_CPU,	 C_POLLS, C_MEAN,  C_MAX,  C_DELAY,
				      C_BLOCKED, C_RUNQ,  C_STATE, C_SPAN, C_TOTAL,
				      C_BUSY,	 C_SCHED, C_IDLE};

/* A row's number: its tasks (by name), the task's as views show it, the
 * tid */
static uint64_t row_id(const struct live_snap *s, const struct live_row *r)
{
	return s->by == GROUP_NAME     ? r->ntasks
	       : s->by == GROUP_THREAD ? r->id
				       : trace_task_number(r->id);
}

/* A row of zero-code tasks only: no polls known, nor their state */
static int zero_code(const struct live_row *r)
{
	return r->nzc && r->nzc == r->ntasks && !r->polls;
}

static void state_text(const struct live_row *r, char *buf, size_t len)
{
	char a[32];

	switch (r->state) {
	case LIVE_POLLED:
		snprintf(buf, len, "polled %s", text_duration(r->state_ns, a, sizeof(a)));
		break;
	case LIVE_WOKEN:
		snprintf(buf, len, "woken %s", text_duration(r->state_ns, a, sizeof(a)));
		break;
	case LIVE_PARKED:
		snprintf(buf, len, "parked");
		break;
	case LIVE_ENDED:
		if (r->state_ns)
			snprintf(buf, len, "ended %s ago",
				 text_duration(r->state_ns, a, sizeof(a)));
		else
			snprintf(buf, len, "ended");
		break;
	default:
		snprintf(buf, len, "idle");
	}
}

static void cell(const struct live_snap *s, const struct live_row *r, enum col c,
		 char *buf, size_t len)
{
	if (zero_code(r) && (c == C_POLLS || c == C_MEAN || c == C_MAX || c == C_STATE)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (c) {
	case C_CPU:
		snprintf(buf, len, "%.1f", cpu_pct(s, r->samples));
		break;
	case C_POLLS:
		snprintf(buf, len, "%.0f", per_sec(s, r->polls));
		break;
	case C_MEAN:
		text_duration(r->mean_poll_ns, buf, len);
		break;
	case C_MAX:
		text_duration(r->max_poll_ns, buf, len);
		break;
	case C_DELAY:
		if (r->ndelays)
			text_duration(r->delay_p99_ns, buf, len);
		else
			snprintf(buf, len, "-");
		break;
	case C_BLOCKED:
		text_duration(r->blocked_ns, buf, len);
		break;
	case C_RUNQ:
		text_duration(r->runq_ns, buf, len);
		break;
	case C_STATE:
		state_text(r, buf, len);
		break;
	case C_SPAN:
		analysis_fit_name(r->span[0] ? r->span : "-", (size_t)cols[C_SPAN].w, buf,
				  len);
		break;
	case C_TOTAL:
		text_duration(r->life_ns, buf, len);
		break;
	case C_BUSY:
		text_duration(r->busy_ns, buf, len);
		break;
	case C_SCHED:
		text_duration(r->sched_ns, buf, len);
		break;
	case C_IDLE:
		text_duration(r->idle_ns, buf, len);
		break;
	default:
		*buf = '\0';
	}
}

static double share(uint64_t ns, uint64_t all)
{
	return all ? 100.0 * (double)ns / (double)all : 0;
}

/* What the recording lost so far, "" for nothing: "12 samples, 3 shim
 * records" */
static char *lost_text(const struct live_lost *l, char *buf, size_t len)
{
	const struct {
		uint64_t n;
		const char *what;
	} v[] = {{l->samples, "samples"},
		 {l->shim, "shim records"},
		 {l->offcpu, "off-CPU records"},
		 {l->wakeups, "wakeups"},
		 {l->ctimer, "ctimer samples"}};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(v) / sizeof(*v) && n < len; i++)
		if (v[i].n)
			n += (size_t)snprintf(buf + n, len - n, "%s%llu %s",
					      n ? ", " : "", (unsigned long long)v[i].n,
					      v[i].what);
	return buf;
}

/* The header: the workers' time in the interval, samples and losses. */
static void text_head(const struct live_snap *s, const struct top_opts *o, FILE *out)
{
	uint64_t poll = 0, parked = 0, blocked = 0, runq = 0, all;
	char line[512], secs[32], lost[160];
	size_t n;
	int zc;

	for (size_t i = 0; i < s->nworkers; i++) {
		poll += s->workers[i].poll_ns;
		parked += s->workers[i].parked_ns;
		blocked += s->workers[i].blocked_ns;
		runq += s->workers[i].runq_ns;
	}
	all = s->interval_ns * s->nworkers;
	n = (size_t)snprintf(line, sizeof(line),
			     "d9prof top - %s - every %s - %zu thread%s",
			     o->title ? o->title : "",
			     text_duration(s->interval_ns, secs, sizeof(secs)),
			     s->nworkers, s->nworkers == 1 ? "" : "s");
	if (all && n < sizeof(line))
		snprintf(
			line + n, sizeof(line) - n,
			": in polls %.0f%%, outside %.0f%%, parked %.0f%%; blocked %.0f%%, run "
			"queue %.0f%%",
			share(poll, all),
			share(all > poll + parked ? all - poll - parked : 0, all),
			share(parked, all), share(blocked, all), share(runq, all));
	if (o->width)
		analysis_u8_cut(line, o->width);
	fprintf(out, "%s\n", line);
	for (zc = 0, n = 0; n < s->nrows && !zc; n++)
		zc = s->rows[n].nzc != 0;
	/* of the samples placed in the interval (one waits up to
	 * LIVE_PEND_NS for its poll's end) */
	n = (size_t)snprintf(
		line, sizeof(line), "CPU: %.1f%% sampled, %.0f%% of it outside %s",
		cpu_pct(s, s->samples), share(s->outside, s->inside + s->outside),
		zc ? "tasks" : "polls");
	if (n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, "; lost: %s",
			 *lost_text(&s->lost, lost, sizeof(lost)) ? lost : "nothing");
	if (o->width)
		analysis_u8_cut(line, o->width);
	fprintf(out, "%s\n", line);
}

/* The title of the column that sorts the rows, NULL for none known */
static const char *sort_title(const struct top_opts *o)
{
	static const enum col by[] = {
		[TOP_BY_CPU] = C_CPU,	      [TOP_BY_POLLS] = C_POLLS,
		[TOP_BY_MAX] = C_MAX,	      [TOP_BY_DELAY] = C_DELAY,
		[TOP_BY_BLOCKED] = C_BLOCKED, [TOP_BY_RUNQ] = C_RUNQ,
	};

	if (o->sort == TOP_BY_NAME)
		return "NAME";
	return (size_t)o->sort < sizeof(by) / sizeof(*by) ? cols[by[o->sort]].title
							  : NULL;
}

/* The rows' grouping as a word */
static const char *by_word(const struct live_snap *s)
{
	return s->by == GROUP_THREAD ? "thread" : s->by == GROUP_NAME ? "name" : "task";
}

/* What the rows are: their grouping (and why, where automatic), the
 * column that sorts them, the filter on */
static void text_rows_line(const struct live_snap *s, const struct top_opts *o, FILE *out)
{
	int on = o->filter && *o->filter;
	char line[256];

	snprintf(line, sizeof(line), "rows: by %s%s; sorted by %s; filter: %s%s%s",
		 by_word(s),
		 !s->auto_by	       ? ""
		 : s->by == GROUP_NAME ? " (auto: many short tasks)"
				       : " (auto)",
		 sort_title(o) ? sort_title(o) : "?", on ? "'" : "",
		 on ? o->filter : "none", on ? "'" : "");
	if (o->width)
		analysis_u8_cut(line, o->width);
	text_put(out, line);
	fputc('\n', out);
}

static void text_frame(const struct live_snap *s, const struct top_opts *o,
		       const uint32_t *ix, size_t n, FILE *out)
{
	struct warn w[MAX_WARN + 1];
	size_t nw = warnings(s, w, MAX_WARN + 1), i, k, namew = 4, idw = 4;
	int on[NCOLS], used;
	char buf[128], name[256], id[32];
	const char *idt = s->by == GROUP_THREAD ? "TID"
			  : s->by == GROUP_NAME ? "TASKS"
						: "TASK";

	text_head(s, o, out);
	text_rows_line(s, o, out);
	for (i = 0; i < nw && i < MAX_WARN; i++) {
		snprintf(name, sizeof(name), "! %s (>= %s): %s", w[i].flag,
			 w[i].threshold, w[i].text);
		if (o->width)
			analysis_u8_cut(name, o->width);
		fprintf(out, "%s\n", name);
	}
	if (nw > MAX_WARN)
		fprintf(out, "! (and more)\n");
	fputc('\n', out);
	/* widths: the id, the names (at most 32, fewer when narrow) */
	for (i = 0; i < n; i++) {
		const struct live_row *r = &s->rows[ix[i]];

		k = (size_t)snprintf(id, sizeof(id), "%" PRIu64, row_id(s, r));
		if (k > idw)
			idw = k;
		fit_task_name(r->name, 32, name, sizeof(name));
		if (analysis_u8_width(name) > namew)
			namew = analysis_u8_width(name);
	}
	/* drop columns from the last priority until a line fits (SPAN: only
	 * where a row has one) */
	for (k = 0; k < NCOLS; k++)
		on[k] = 1;
	on[C_SPAN] = 0;
	for (i = 0; i < n; i++)
		on[C_SPAN] |= s->rows[ix[i]].span[0] != '\0';
	used = (int)(1 + idw + 2 + namew);
	for (k = 0; k < NCOLS; k++)
		used += on[k] ? 2 + cols[k].w : 0;
	for (k = NCOLS; o->width && (size_t)used > o->width && k-- > 1;) {
		used -= on[k] ? 2 + cols[k].w : 0;
		on[k] = 0;
	}
	if (o->width && (size_t)used > o->width && namew > 8) {
		size_t cut = (size_t)used - o->width;

		namew = namew > cut + 8 ? namew - cut : 8;
	}
	fprintf(out, " %*s  %-*s", (int)idw, idt, (int)namew, "NAME");
	for (k = 0; k < NCOLS; k++)
		if (on[order[k]])
			fprintf(out, "  %*s",
				order[k] == C_STATE || order[k] == C_SPAN
					? -cols[order[k]].w
					: cols[order[k]].w,
				cols[order[k]].title);
	fputc('\n', out);
	for (i = 0; i < n && (!o->limit || i < o->limit); i++) {
		const struct live_row *r = &s->rows[ix[i]];

		fit_task_name(r->name, namew, name, sizeof(name));
		fprintf(out, "%c%*" PRIu64 "  %s%*s", (int)i == o->selected ? '>' : ' ',
			(int)idw, row_id(s, r), name,
			(int)(namew - analysis_u8_width(name)), "");
		for (k = 0; k < NCOLS; k++) {
			if (!on[order[k]])
				continue;
			cell(s, r, order[k], buf, sizeof(buf));
			fprintf(out, "  %*s",
				order[k] == C_STATE || order[k] == C_SPAN
					? -cols[order[k]].w
					: cols[order[k]].w,
				buf);
		}
		fputc('\n', out);
	}
	detail_text(s, out);
}

/* ---- JSON ------------------------------------------------------------------- */

/* a row's life since its spawn (or first seen): tokio-console's columns */
static void json_life(struct lib_json *w, const struct live_row *r)
{
	const struct {
		const char *name;
		uint64_t v;
	} f[] = {{"total_ns", r->life_ns},
		 {"busy_ns", r->busy_ns},
		 {"sched_ns", r->sched_ns},
		 {"idle_ns", r->idle_ns},
		 {"polls_total", r->polls_life}};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		lib_json_uint_field(w, f[i].name, f[i].v);
}

static void json_frame(const struct live_snap *s, const struct top_opts *o,
		       const uint32_t *ix, size_t n, struct lib_json *w)
{
	static const char *const state[] = {"idle", "polled", "woken", "parked", "ended"};
	char lost[160];
	struct warn wn[16];
	size_t nw = warnings(s, wn, 16);

	lib_json_object_begin(w);
	lib_json_uint_field(w, "time_ns", s->time);
	lib_json_uint_field(w, "interval_ns", s->interval_ns);
	lib_json_str_field(w, "by", by_word(s));
	lib_json_bool_field(w, "by_auto", s->auto_by);
	lib_json_str_field(w, "sort", sort_title(o));
	lib_json_str_field(w, "filter", o->filter && *o->filter ? o->filter : NULL);
	lib_json_uint_field(w, "samples", s->samples);
	lib_json_uint_field(w, "samples_in_polls", s->inside);
	lib_json_uint_field(w, "samples_outside_polls", s->outside);
	lib_json_str_field(w, "lost",
			   *lost_text(&s->lost, lost, sizeof(lost)) ? lost : NULL);
	lib_json_name(w, "workers");
	lib_json_array_begin(w);
	for (size_t i = 0; i < s->nworkers; i++) {
		const struct live_worker *k = &s->workers[i];

		lib_json_object_begin(w);
		lib_json_uint_field(w, "tid", k->tid);
		lib_json_str_field(w, "thread", k->name[0] ? k->name : NULL);
		lib_json_uint_field(w, "poll_ns", k->poll_ns);
		lib_json_uint_field(w, "parked_ns", k->parked_ns);
		lib_json_uint_field(w, "blocked_ns", k->blocked_ns);
		lib_json_uint_field(w, "runq_ns", k->runq_ns);
		lib_json_uint_field(w, "samples", k->samples);
		lib_json_name(w, "polling");
		if (k->task)
			lib_json_uint(w, trace_task_number(k->task));
		else
			lib_json_null(w);
		lib_json_uint_field(w, "in_poll_ns", k->in_poll_ns);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "rows");
	lib_json_array_begin(w);
	for (size_t i = 0; i < n && (!o->limit || i < o->limit); i++) {
		const struct live_row *r = &s->rows[ix[i]];

		lib_json_break(w);
		lib_json_object_begin(w);
		if (s->by == GROUP_NAME)
			lib_json_uint_field(w, "tasks", r->ntasks);
		else
			lib_json_uint_field(w, s->by == GROUP_THREAD ? "tid" : "task",
					    row_id(s, r));
		lib_json_str_field(w, "name", r->name[0] ? r->name : NULL);
		lib_json_name(w, "cpu_pct");
		lib_json_double(w, "%.3f", cpu_pct(s, r->samples));
		lib_json_uint_field(w, "samples", r->samples);
		if (zero_code(r)) {
			lib_json_name(w, "polls");
			lib_json_null(w);
			lib_json_name(w, "mean_poll_ns");
			lib_json_null(w);
			lib_json_name(w, "max_poll_ns");
			lib_json_null(w);
		} else {
			lib_json_uint_field(w, "polls", r->polls);
			lib_json_uint_field(w, "mean_poll_ns", r->mean_poll_ns);
			lib_json_uint_field(w, "max_poll_ns", r->max_poll_ns);
		}
		lib_json_name(w, "delay_p99_ns");
		if (r->ndelays)
			lib_json_uint(w, r->delay_p99_ns);
		else
			lib_json_null(w);
		lib_json_uint_field(w, "blocked_ns", r->blocked_ns);
		lib_json_uint_field(w, "runq_ns", r->runq_ns);
		lib_json_str_field(w, "state", zero_code(r) ? NULL : state[r->state]);
		lib_json_uint_field(w, "state_ns", r->state_ns);
		lib_json_str_field(w, "span", r->span[0] ? r->span : NULL);
		json_life(w, r);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	lib_json_name(w, "warnings");
	lib_json_array_begin(w);
	for (size_t i = 0; i < nw; i++) {
		lib_json_object_begin(w);
		lib_json_str_field(w, "flag", wn[i].flag);
		lib_json_str_field(w, "threshold", wn[i].threshold);
		lib_json_name(w, "task");
		if (wn[i].task)
			lib_json_uint(w, trace_task_number(wn[i].task));
		else
			lib_json_null(w);
		lib_json_str_field(w, "detail", wn[i].text);
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
	json_detail(s, w);
	lib_json_object_end(w);
}

uint64_t analysis__top_row_id(const struct live_snap *s, const struct top_opts *o,
			      int row)
{
	uint32_t *ix = NULL;
	size_t n = shown_rows(s, o, &ix);
	uint64_t id = row >= 0 && (size_t)row < n ? s->rows[ix[row]].id : 0;

	free(ix);
	return s->by == GROUP_TASK ? id : 0;
}

int analysis__top(const struct live_snap *s, const struct top_opts *o, FILE *out)
{
	uint32_t *ix = NULL;
	size_t n = shown_rows(s, o, &ix);
	struct lib_json w;
	int err = 0;

	if (!ix)
		return -ENOMEM;
	if (o->json) {
		lib_json_init(&w, out);
		json_frame(s, o, ix, n, &w);
		err = lib_json_finish(&w);
	} else {
		text_frame(s, o, ix, n, out);
		err = ferror(out) ? -EIO : 0;
	}
	free(ix);
	return err;
}
