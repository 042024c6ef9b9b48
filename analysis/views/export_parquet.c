// SPDX-License-Identifier: MIT
/*
 * export_parquet.c - the joined trace as Parquet tables for SQL engines
 * (analysis__export_parquet() in views.h): samples, stacks, polls, tasks,
 * delays, spans and offcpu, every row of the trace (exact, not sampled),
 * each table one file of a Hive-partitioned layout
 *
 *   TABLE/service=SERVICE/host=HOST/date=YYYY-MM-DD/PART.parquet
 *
 * opened through the caller's callback, so that this file knows no
 * directory. Columns are named as the JSON views name them; times of day
 * are UTC ns (CLOCK_MONOTONIC plus the trace's clock_realtime), lengths
 * ns. Stacks are written once per file, named by a hash of their frames'
 * labels (stack_id), the same for the same frames in every file of every
 * host, so that a fleet joins samples to frames across files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/lean.h"
#include "analysis/offcpu.h"
#include "analysis/parquet.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/text.h"

#define MAX_FRAMES 512
#define CREATED_BY "d9prof"
#define NAME_LEN   256 /* of a cleaned name */
#define NAME_CACHE 64  /* names cleaned once, by where they are */

struct px {
	const struct parquet_opts *o;
	const struct offcpu *oc;
	const struct join *j;
	const struct trace *t;
	struct spans *sp; /* (those kept at the samples and switches) */
	struct parquet_result *res;
	char service[64], host[64], date[16], part[64];
	int64_t pid;
	int64_t wall;	  /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	double period;	  /* ns a sample stands for */
	int offcpu;	  /* the trace has off-CPU data (polls' blocked_ns...) */
	uint64_t *sid;	  /* per trace stack: its stack_id, 0: not yet */
	uint8_t *used;	  /* per trace stack: written in a row */
	char (*lab)[256]; /* MAX_FRAMES labels */
	struct pq_table *tab;
	FILE *f;
	int table; /* enum parquet_table being written */
	struct cached_name {
		const char *key; /* the trace's string, NULL: none yet */
		size_t len;
		char v[NAME_LEN];
	} names[NAME_CACHE];
};

/* ---- names --------------------------------------------------------- */

static const char *const table_names[PARQUET_TABLES] = {
	[PARQUET_SAMPLES] = "samples", [PARQUET_STACKS] = "stacks",
	[PARQUET_POLLS] = "polls",     [PARQUET_TASKS] = "tasks",
	[PARQUET_DELAYS] = "delays",   [PARQUET_SPANS] = "spans",
	[PARQUET_OFFCPU] = "offcpu",
};

const char *analysis_parquet_table(int table)
{
	return table >= 0 && table < PARQUET_TABLES ? table_names[table] : NULL;
}

static void names(struct px *x)
{
	const struct trace *t = x->t;
	const char *svc = x->o->service, *host = x->o->host;
	uint64_t start = x->j->start_time;
	time_t sec;
	struct tm tm;

	const char *pid = analysis_meta(t, TRACE_META_PID);

	x->pid = pid ? atoll(pid) : 0;
	for (size_t i = 0; i < t->nsegments && !x->wall; i++)
		x->wall = t->segments[i].wall_offset;
	if (!svc)
		svc = analysis_meta(t, TRACE_META_SERVICE);
	if (!svc)
		svc = analysis_meta(t, TRACE_META_COMM);
	if (!host)
		host = analysis_meta(t, TRACE_META_STORE_HOST);
	if (!host)
		host = analysis_meta(t, TRACE_META_HOSTNAME);
	text_name_component(svc, x->service, sizeof(x->service));
	text_name_component(host, x->host, sizeof(x->host));
	sec = (time_t)(((int64_t)start + x->wall) / 1000000000);
	if (!x->wall || !gmtime_r(&sec, &tm))
		snprintf(x->date, sizeof(x->date), "unknown");
	else
		strftime(x->date, sizeof(x->date), "%Y-%m-%d", &tm);
	if (x->o->part) {
		text_name_component(x->o->part, x->part, sizeof(x->part));
	} else {
		const struct trace_segment *s = t->nsegments ? &t->segments[0] : NULL;
		snprintf(x->part, sizeof(x->part), "%lld-%lld-%llu", (long long)x->pid,
			 (long long)sec, (unsigned long long)(s ? s->index : 0));
		text_name_component(x->part, x->part, sizeof(x->part));
	}
	x->res->utc = x->wall != 0;
}

/* ns of CLOCK_MONOTONIC @t as UTC */
static int64_t utc(const struct px *x, uint64_t t)
{
	return (int64_t)t + x->wall;
}

static int64_t cpu_of(const struct px *x, uint64_t weight)
{
	return (int64_t)((double)weight * x->period + 0.5);
}

/* ---- one table at a time -------------------------------------------- */

static int open_table(struct px *x, int table, const struct pq_column *cols, size_t n)
{
	char rel[512];
	int err;

	snprintf(rel, sizeof(rel), "%s/service=%s/host=%s/date=%s/%s.parquet",
		 table_names[table], x->service, x->host, x->date, x->part);
	x->f = x->o->open(x->o->ctx, rel);
	if (!x->f)
		return -errno ? -errno : -EIO;
	x->table = table;
	err = pq__new(x->f, cols, n, CREATED_BY, &x->tab);
	if (err) {
		x->o->close(x->o->ctx, x->f, err);
		x->f = NULL;
	}
	return err;
}

static int close_table(struct px *x, int err)
{
	if (!err)
		err = pq__finish(x->tab);
	if (!err) {
		x->res->rows[x->table] = pq_rows(x->tab);
		x->res->bytes[x->table] = (uint64_t)ftello(x->f);
	}
	pq__free(x->tab);
	x->tab = NULL;
	err = x->o->close(x->o->ctx, x->f, err) ?: err;
	x->f = NULL;
	return err;
}

/* service and host, last in every row */
static void where(struct px *x, size_t col)
{
	pq_str(x->tab, col, x->service, strlen(x->service));
	pq_str(x->tab, col + 1, x->host, strlen(x->host));
}

static void str(struct px *x, size_t col, const char *s)
{
	pq_str(x->tab, col, s, s ? strlen(s) : 0);
}

/* text the target gave, cleaned as the views show it; NULL stays NULL */
static void cleaned(struct px *x, size_t col, const char *s)
{
	char buf[NAME_LEN];

	if (!s) {
		pq_null(x->tab, col);
		return;
	}
	analysis_clean_name(s, buf, sizeof(buf));
	str(x, col, buf);
}

/* ... a name the trace holds (a thread's, a task's, a span's: the same
 * string for the export's life), cleaned once: a row has a few */
static void name(struct px *x, size_t col, const char *s)
{
	struct cached_name *c = &x->names[((uintptr_t)s >> 3) % NAME_CACHE];

	if (!s) {
		pq_null(x->tab, col);
		return;
	}
	if (c->key != s) {
		analysis_clean_name(s, c->v, sizeof(c->v));
		c->len = strlen(c->v);
		c->key = s;
	}
	pq_str(x->tab, col, c->v, c->len);
}

static void opt_i64(struct px *x, size_t col, int have, int64_t v)
{
	if (have)
		pq_i64(x->tab, col, v);
	else
		pq_null(x->tab, col);
}

/* a task by its id in the trace: its number and name, or NULLs */
static void task_cols(struct px *x, size_t col, const struct task_stat *ts)
{
	opt_i64(x, col, ts != NULL, ts ? (int64_t)trace_task_number(ts->task) : 0);
	if (ts && ts->name)
		name(x, col + 1, ts->name);
	else
		pq_null(x->tab, col + 1);
}

/* stack @s's stack_id: a hash of its labels root first, 63 bits, never 0 */
static int64_t stack_id(struct px *x, uint32_t s)
{
	size_t n;
	uint64_t h = 0x9e3779b97f4a7c15ull;

	if (s >= x->t->nstacks)
		return 0;
	if (x->sid[s])
		return (int64_t)x->sid[s];
	n = analysis_stack_labels(x->t, s, x->lab, MAX_FRAMES);
	for (size_t i = n; i-- > 0;)
		h = lib_hash64(h ^ lib_hash_mem(x->lab[i], strlen(x->lab[i])));
	h &= INT64_MAX;
	x->sid[s] = h ? h : 1;
	return (int64_t)x->sid[s];
}

static void stack_col(struct px *x, size_t col, uint32_t s)
{
	if (s < x->t->nstacks)
		x->used[s] = 1;
	pq_i64(x->tab, col, stack_id(x, s));
}

/* ---- samples --------------------------------------------------------- */

enum {
	S_TIME,
	S_TID,
	S_THREAD,
	S_TASK,
	S_TASK_NAME,
	S_POLL,
	S_SPAN,
	S_SPAN_ID,
	S_WEIGHT,
	S_STACK,
	S_PID,
	S_SERVICE,
	S_HOST,
	S_N
};

static const struct pq_column sample_cols[S_N] = {
	[S_TIME] = {"time_ns", PQ_INT64, 0},
	[S_TID] = {"tid", PQ_INT64, 0},
	[S_THREAD] = {"thread", PQ_STRING, 1},
	[S_TASK] = {"task", PQ_INT64, 1},
	[S_TASK_NAME] = {"task_name", PQ_STRING, 1},
	[S_POLL] = {"poll", PQ_INT64, 1},
	[S_SPAN] = {"span", PQ_STRING, 1},
	[S_SPAN_ID] = {"span_id", PQ_INT64, 1},
	[S_WEIGHT] = {"weight_ns", PQ_INT64, 0},
	[S_STACK] = {"stack_id", PQ_INT64, 0},
	[S_PID] = {"pid", PQ_INT64, 0},
	[S_SERVICE] = {"service", PQ_STRING, 0},
	[S_HOST] = {"host", PQ_STRING, 0},
};

static int on_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct px *x = ctx;
	const struct task_stat *ts = p ? &x->j->tasks[p->task] : NULL;
	int32_t span = x->sp ? spans__at(x->sp, s->tid, s->time) : -1;

	if (!join__kept(x->j, ts))
		return 0;
	pq_i64(x->tab, S_TIME, utc(x, s->time));
	pq_i64(x->tab, S_TID, s->tid);
	name(x, S_THREAD, trace__thread_name(x->t, s->tid));
	task_cols(x, S_TASK, ts);
	opt_i64(x, S_POLL, p && p->id >= 0, p ? p->id : 0);
	if (span >= 0)
		name(x, S_SPAN, spans_name(&x->sp->v[span]));
	else
		pq_null(x->tab, S_SPAN);
	opt_i64(x, S_SPAN_ID, span >= 0, span >= 0 ? (int64_t)x->sp->v[span].id : 0);
	pq_i64(x->tab, S_WEIGHT, cpu_of(x, sample_weight(s)));
	stack_col(x, S_STACK, s->stack);
	pq_i64(x->tab, S_PID, x->pid);
	where(x, S_SERVICE);
	return pq_row_end(x->tab);
}

static int write_samples(struct px *x)
{
	int err = open_table(x, PARQUET_SAMPLES, sample_cols, S_N);

	if (err)
		return err;
	return close_table(x, join_for_each_sample(x->j, on_sample, x));
}

/* ---- off-CPU intervals ---------------------------------------------- */

enum {
	O_START,
	O_DURATION,
	O_WEIGHT,
	O_RUNQ,
	O_WHERE,
	O_PREEMPTED,
	O_TID,
	O_THREAD,
	O_TASK,
	O_TASK_NAME,
	O_POLL,
	O_STACK,
	O_SERVICE,
	O_HOST,
	O_N
};

static const struct pq_column offcpu_cols[O_N] = {
	[O_START] = {"start_ns", PQ_INT64, 0},
	[O_DURATION] = {"duration_ns", PQ_INT64, 0},
	[O_WEIGHT] = {"weight_ns", PQ_INT64, 0},
	[O_RUNQ] = {"runq_ns", PQ_INT64, 0},
	[O_WHERE] = {"where", PQ_STRING, 0},
	[O_PREEMPTED] = {"preempted", PQ_BOOL, 0},
	[O_TID] = {"tid", PQ_INT64, 0},
	[O_THREAD] = {"thread", PQ_STRING, 1},
	[O_TASK] = {"task", PQ_INT64, 1},
	[O_TASK_NAME] = {"task_name", PQ_STRING, 1},
	[O_POLL] = {"poll", PQ_INT64, 1},
	[O_STACK] = {"stack_id", PQ_INT64, 0},
	[O_SERVICE] = {"service", PQ_STRING, 0},
	[O_HOST] = {"host", PQ_STRING, 0},
};

static const char *const where_names[OFFCPU_WHERE] = {
	[OFFCPU_IN_POLL] = "poll",
	[OFFCPU_NO_POLL] = "no poll",
	[OFFCPU_IDLE] = "parked",
	[OFFCPU_IN_TASK] = "task",
};

static int write_offcpu(struct px *x)
{
	const struct trace *t = x->t;
	int err = open_table(x, PARQUET_OFFCPU, offcpu_cols, O_N);

	for (size_t i = 0; !err && i < t->nswitches; i++) {
		const struct offcpu_switch *sw = &x->oc->sw[i];
		const struct trace_switch *ts = &t->switches[i];
		const struct poll *q =
			sw->poll >= 0 ? join__poll(x->j, (uint32_t)sw->poll) : NULL;
		const struct task_stat *task = q	       ? join__task(x->j, q->task)
					       : sw->task >= 0 ? &x->j->tasks[sw->task]
							       : NULL;

		if (!join__kept(x->j, task))
			continue;
		pq_i64(x->tab, O_START, utc(x, ts->time));
		pq_i64(x->tab, O_DURATION, (int64_t)sw->len);
		pq_i64(x->tab, O_WEIGHT, (int64_t)sw->ns);
		pq_i64(x->tab, O_RUNQ, (int64_t)sw->runq);
		str(x, O_WHERE, where_names[sw->where < OFFCPU_WHERE ? sw->where : 1]);
		pq_bool(x->tab, O_PREEMPTED, ts->preempted);
		pq_i64(x->tab, O_TID, ts->tid);
		name(x, O_THREAD, trace__thread_name(x->t, ts->tid));
		task_cols(x, O_TASK, task);
		opt_i64(x, O_POLL, q != NULL, sw->poll);
		stack_col(x, O_STACK, ts->stack);
		where(x, O_SERVICE);
		err = pq_row_end(x->tab);
	}
	return x->tab ? close_table(x, err) : err;
}

/* ---- stacks ---------------------------------------------------------- */

enum { K_STACK, K_FRAMES, K_SERVICE, K_HOST, K_N };

static const struct pq_column stack_cols[K_N] = {
	[K_STACK] = {"stack_id", PQ_INT64, 0},
	[K_FRAMES] = {"frames", PQ_STRINGS, 0},
	[K_SERVICE] = {"service", PQ_STRING, 0},
	[K_HOST] = {"host", PQ_STRING, 0},
};

/* the stacks the rows before named, each stack_id once */
static int write_stacks(struct px *x)
{
	struct lib_map seen = {0};
	int err = open_table(x, PARQUET_STACKS, stack_cols, K_N);

	for (uint32_t s = 0; !err && s < x->t->nstacks; s++) {
		int created;
		uint64_t *v;
		size_t n;

		if (!x->used[s])
			continue;
		v = lib_map_get(&seen, (uint64_t)stack_id(x, s), &created);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		if (!created)
			continue;
		pq_i64(x->tab, K_STACK, stack_id(x, s));
		n = analysis_stack_labels(x->t, s, x->lab, MAX_FRAMES);
		for (size_t i = n; i-- > 0;)
			pq_item(x->tab, K_FRAMES, x->lab[i], strlen(x->lab[i]));
		where(x, K_SERVICE);
		err = pq_row_end(x->tab);
	}
	lib_map_release(&seen);
	return x->tab ? close_table(x, err) : err;
}

/* ---- polls ----------------------------------------------------------- */

enum {
	P_POLL,
	P_TASK,
	P_TASK_NAME,
	P_TID,
	P_THREAD,
	P_START,
	P_DURATION,
	P_CPU,
	P_BLOCKED,
	P_RUNQ,
	P_SAMPLES,
	P_OPEN_START,
	P_OPEN_END,
	P_SERVICE,
	P_HOST,
	P_N
};

static const struct pq_column poll_cols[P_N] = {
	[P_POLL] = {"poll", PQ_INT64, 0},
	[P_TASK] = {"task", PQ_INT64, 1},
	[P_TASK_NAME] = {"task_name", PQ_STRING, 1},
	[P_TID] = {"tid", PQ_INT64, 0},
	[P_THREAD] = {"thread", PQ_STRING, 1},
	[P_START] = {"start_ns", PQ_INT64, 0},
	[P_DURATION] = {"duration_ns", PQ_INT64, 0},
	[P_CPU] = {"cpu_ns", PQ_INT64, 1},
	[P_BLOCKED] = {"blocked_ns", PQ_INT64, 1},
	[P_RUNQ] = {"runq_ns", PQ_INT64, 1},
	[P_SAMPLES] = {"samples", PQ_INT64, 0},
	[P_OPEN_START] = {"open_start", PQ_BOOL, 0},
	[P_OPEN_END] = {"open_end", PQ_BOOL, 0},
	[P_SERVICE] = {"service", PQ_STRING, 0},
	[P_HOST] = {"host", PQ_STRING, 0},
};

/* Poll @p's row */
static int poll_row(struct px *x, const struct poll *p)
{
	const struct task_stat *ts = join__task(x->j, p->task);
	const struct poll_offcpu *po = offcpu__poll(x->oc, p->id);
	uint64_t len = p->end - p->start, off = po ? po->ns : 0,
		 runq = po ? po->runq_ns : 0;

	pq_i64(x->tab, P_POLL, p->id);
	task_cols(x, P_TASK, ts);
	pq_i64(x->tab, P_TID, p->tid);
	name(x, P_THREAD, trace__thread_name(x->t, p->tid));
	pq_i64(x->tab, P_START, utc(x, p->start));
	pq_i64(x->tab, P_DURATION, (int64_t)len);
	opt_i64(x, P_CPU, x->offcpu, (int64_t)(len > off ? len - off : 0));
	opt_i64(x, P_BLOCKED, x->offcpu, (int64_t)(off - runq));
	opt_i64(x, P_RUNQ, x->offcpu, (int64_t)runq);
	pq_i64(x->tab, P_SAMPLES, p->samples);
	pq_bool(x->tab, P_OPEN_START, p->open_start);
	pq_bool(x->tab, P_OPEN_END, p->open_end);
	where(x, P_SERVICE);
	return pq_row_end(x->tab);
}

/* ---- tasks ----------------------------------------------------------- */

enum {
	T_TASK,
	T_TASK_NAME,
	T_POLLS,
	T_BUSY,
	T_LONGEST,
	T_SAMPLES,
	T_CPU,
	T_DELAYS,
	T_DELAY_P50,
	T_DELAY_P99,
	T_DELAY_MAX,
	T_SERVICE,
	T_HOST,
	T_N
};

static const struct pq_column task_cols_def[T_N] = {
	[T_TASK] = {"task", PQ_INT64, 0},
	[T_TASK_NAME] = {"task_name", PQ_STRING, 1},
	[T_POLLS] = {"polls", PQ_INT64, 0},
	[T_BUSY] = {"busy_ns", PQ_INT64, 0},
	[T_LONGEST] = {"longest_ns", PQ_INT64, 0},
	[T_SAMPLES] = {"samples", PQ_INT64, 0},
	[T_CPU] = {"cpu_ns", PQ_INT64, 0},
	[T_DELAYS] = {"delays", PQ_INT64, 0},
	[T_DELAY_P50] = {"delay_p50_ns", PQ_INT64, 1},
	[T_DELAY_P99] = {"delay_p99_ns", PQ_INT64, 1},
	[T_DELAY_MAX] = {"delay_max_ns", PQ_INT64, 1},
	[T_SERVICE] = {"service", PQ_STRING, 0},
	[T_HOST] = {"host", PQ_STRING, 0},
};

/* A lean trace's task rows count every poll, from the shim's sums (its
 * polls and delays tables hold the polls it wrote): lean task @i's
 * polls into *@ts, its delays' statistics into *@st */
static void lean_task(const struct lean *l, size_t i, struct task_stat *ts,
		      struct delay_stats *st)
{
	const struct lean_stat *ls = lean__task(l, i);

	ts->polls = ls->polls;
	ts->total_ns = ls->poll_total;
	ts->longest_ns = ls->poll_max;
	*st = (struct delay_stats){
		.n = ls->delays,
		.p50 = lean__quantile(l, ls, 1, 0.5),
		.p99 = lean__quantile(l, ls, 1, 0.99),
		.max = ls->delay_max,
	};
}

static int write_tasks(struct px *x, const struct delays *d)
{
	struct delay_stats *st = calloc(x->j->ntasks ? x->j->ntasks : 1, sizeof(*st));
	struct lean *lean = NULL;
	int err = st ? 0 : -ENOMEM;

	if (!err && analysis_is_lean(x->t, NULL, NULL, NULL))
		err = lean__new(x->j, &lean);
	else if (!err && d)
		err = delays__task_stats(d, NULL, x->j->ntasks, st);
	if (!err)
		err = open_table(x, PARQUET_TASKS, task_cols_def, T_N);
	for (size_t i = 0; !err && i < x->j->ntasks; i++) {
		struct task_stat ts = x->j->tasks[i]; /* the row's figures */

		if (!join__kept(x->j, &x->j->tasks[i]))
			continue;
		if (lean)
			lean_task(lean, i, &ts, &st[i]);
		pq_i64(x->tab, T_TASK, (int64_t)trace_task_number(ts.task));
		name(x, T_TASK_NAME, ts.name);
		pq_i64(x->tab, T_POLLS, (int64_t)ts.polls);
		pq_i64(x->tab, T_BUSY, (int64_t)ts.total_ns);
		pq_i64(x->tab, T_LONGEST, (int64_t)ts.longest_ns);
		pq_i64(x->tab, T_SAMPLES, (int64_t)ts.samples);
		pq_i64(x->tab, T_CPU, cpu_of(x, ts.samples));
		pq_i64(x->tab, T_DELAYS, (int64_t)st[i].n);
		opt_i64(x, T_DELAY_P50, st[i].n > 0, (int64_t)st[i].p50);
		opt_i64(x, T_DELAY_P99, st[i].n > 0, (int64_t)st[i].p99);
		opt_i64(x, T_DELAY_MAX, st[i].n > 0, (int64_t)st[i].max);
		where(x, T_SERVICE);
		err = pq_row_end(x->tab);
	}
	lean__free(lean);
	free(st);
	return x->tab ? close_table(x, err) : err;
}

/* ---- delays ---------------------------------------------------------- */

enum {
	D_TASK,
	D_TASK_NAME,
	D_DELAY,
	D_WOKEN,
	D_SPAWN,
	D_MERGED,
	D_WAKER_TID,
	D_WAKER_THREAD,
	D_WAKER_TASK,
	D_TID,
	D_THREAD,
	D_POLL,
	D_SERVICE,
	D_HOST,
	D_N
};

static const struct pq_column delay_cols[D_N] = {
	[D_TASK] = {"task", PQ_INT64, 1},
	[D_TASK_NAME] = {"task_name", PQ_STRING, 1},
	[D_DELAY] = {"delay_ns", PQ_INT64, 0},
	[D_WOKEN] = {"woken_ns", PQ_INT64, 0},
	[D_SPAWN] = {"spawn", PQ_BOOL, 0},
	[D_MERGED] = {"merged", PQ_INT64, 0},
	[D_WAKER_TID] = {"waker_tid", PQ_INT64, 0},
	[D_WAKER_THREAD] = {"waker_thread", PQ_STRING, 1},
	[D_WAKER_TASK] = {"waker_task", PQ_INT64, 1},
	[D_TID] = {"tid", PQ_INT64, 0},
	[D_THREAD] = {"thread", PQ_STRING, 1},
	[D_POLL] = {"poll", PQ_INT64, 1},
	[D_SERVICE] = {"service", PQ_STRING, 0},
	[D_HOST] = {"host", PQ_STRING, 0},
};

/* Delay @e's row, @poll its poll's id (-1: unknown) */
static int delay_row(struct px *x, const struct delay *e, int32_t poll)
{
	const struct task_stat *ts = join__task(x->j, e->task);
	const struct task_stat *wt =
		e->waker_polling ? join__task(x->j, e->waker_task) : NULL;

	task_cols(x, D_TASK, ts);
	pq_i64(x->tab, D_DELAY, (int64_t)(e->begin - e->wake));
	pq_i64(x->tab, D_WOKEN, utc(x, e->wake));
	pq_bool(x->tab, D_SPAWN, e->spawn);
	pq_i64(x->tab, D_MERGED, e->merged);
	pq_i64(x->tab, D_WAKER_TID, e->waker);
	name(x, D_WAKER_THREAD, trace__thread_name(x->t, e->waker));
	opt_i64(x, D_WAKER_TASK, wt != NULL,
		wt ? (int64_t)trace_task_number(wt->task) : 0);
	pq_i64(x->tab, D_TID, e->poller);
	name(x, D_THREAD, trace__thread_name(x->t, e->poller));
	opt_i64(x, D_POLL, poll >= 0, poll);
	where(x, D_SERVICE);
	return pq_row_end(x->tab);
}

/* ---- polls and delays, in one walk ------------------------------------ */

/*
 * One streamed walk of the trace gives the polls in id order (start,
 * then tid), and hands its events to a delays replay that runs in it,
 * making the delays in begin order (a wake-to-poll delay ends where its
 * poll begins). Each poll's row is written as it comes; a delay's row
 * needs the id of the poll that began at its end on its thread: the two
 * streams, both in time order, meet in two short queues. A poll waits
 * until the replay is past its start (no delay of it can come after); a
 * delay until its poll, or a later one, came. Memory is the lag between
 * the join and the replay, not the trace.
 */
struct pkey {
	uint64_t start, task;
	uint32_t tid, id;
};

struct pdwalk {
	struct px *x; /* the polls table */
	struct px y;  /* the delays table */
	struct delays_feed *feed;
	struct pkey *p; /* polls waiting, p[ph..pn) */
	size_t ph, pn, pcap;
	struct delay *d; /* delays waiting, d[dh..dn) */
	size_t dh, dn, dcap;
	struct pkey last; /* the last poll given */
	int any;
};

/* Drop the first @k of queue @v[*h..*n), its room reused once empty */
#define QUEUE_POP(v, h, n, k)                                                            \
	do {                                                                             \
		*(h) += (k);                                                             \
		if (*(h) == *(n))                                                        \
			*(h) = *(n) = 0;                                                 \
		else if (*(h) > 4096 && *(h)*2 > *(n)) {                                 \
			memmove((v), (v) + *(h), (*(n) - *(h)) * sizeof(*(v)));          \
			*(n) -= *(h);                                                    \
			*(h) = 0;                                                        \
		}                                                                        \
	} while (0)

/* Drop the polls waiting that began before @t */
static void pd_drop_before(struct pdwalk *w, uint64_t t)
{
	size_t k = w->ph;

	while (k < w->pn && w->p[k].start < t)
		k++;
	QUEUE_POP(w->p, &w->ph, &w->pn, k - w->ph);
}

/* Write the delays whose poll is known (or known to be none); @end: all */
static int pd_drain(struct pdwalk *w, int end)
{
	int err = 0;

	while (!err && w->dh < w->dn) {
		const struct delay *e = &w->d[w->dh];
		int32_t id = -1;
		size_t k;

		pd_drop_before(w, e->begin);
		/* (a poll of no length may end where the next one begins) */
		for (k = w->ph; k < w->pn && w->p[k].start == e->begin; k++)
			if (w->p[k].tid == e->poller && w->p[k].task == e->task) {
				id = (int32_t)w->p[k].id;
				break;
			}
		/* not come yet, unless the join is past it */
		if (id < 0 && !end &&
		    !(w->any && (w->last.start > e->begin ||
				 (w->last.start == e->begin && w->last.tid > e->poller))))
			break;
		err = delay_row(&w->y, e, id);
		QUEUE_POP(w->d, &w->dh, &w->dn, 1);
	}
	/* no delay ends at a poll the replay is past */
	if (w->dh == w->dn)
		pd_drop_before(w, delays_feed__replayed(w->feed));
	return err;
}

static int pd_delay(void *ctx, const struct delay *e)
{
	struct pdwalk *w = ctx;

	if (delays_feed__late(w->feed))
		return -EAGAIN;
	if (!join__kept(w->x->j, join__task(w->x->j, e->task)))
		return 0;
	if (LIB_GROW(w->d, w->dcap, w->dn + 1))
		return -ENOMEM;
	w->d[w->dn++] = *e;
	return pd_drain(w, 0);
}

/* Both tables begun anew, nothing waiting */
static int pd_open(struct pdwalk *w)
{
	int err = open_table(w->x, PARQUET_POLLS, poll_cols, P_N);

	if (!err && (err = open_table(&w->y, PARQUET_DELAYS, delay_cols, D_N)))
		close_table(w->x, -ECANCELED);
	w->ph = w->pn = w->dh = w->dn = 0;
	w->any = 0;
	return err;
}

/* ... ended: kept, or (@err) removed */
static int pd_close(struct pdwalk *w, int err)
{
	int e1 = w->x->tab ? close_table(w->x, err) : err;
	int e2 = w->y.tab ? close_table(&w->y, err ? err : e1) : e1;

	return err ? err : e1 ? e1 : e2;
}

static int pd_poll(void *ctx, const struct poll *p)
{
	struct pdwalk *w = ctx;
	int err;

	if (!p) { /* the join starts over: so do the tables */
		pd_close(w, -ECANCELED);
		return pd_open(w);
	}
	/* an event came late for the replay: all again, replayed at the
	 * end (pd_walk()), not a walk more for nothing */
	if (delays_feed__late(w->feed))
		return -EAGAIN;
	if ((err = poll_row(w->x, p)))
		return err;
	if (LIB_GROW(w->p, w->pcap, w->pn + 1))
		return -ENOMEM;
	w->last = (struct pkey){p->start, p->task, p->tid, p->id};
	w->p[w->pn++] = w->last;
	w->any = 1;
	return pd_drain(w, 0);
}

/* The polls and delays tables, and the delays' statistics in *@out for
 * the tasks table: one walk with the replay @at_end or (late) -EAGAIN. */
static int pd_walk(struct pdwalk *w, int at_end, struct delays **out)
{
	const struct delays_keep k = {.each = pd_delay, .each_ctx = w, .at_end = at_end};
	int err = delays_feed__new(&k, &w->feed);

	if (!err)
		err = pd_open(w);
	if (!err)
		err = join_for_each_poll_fed(w->x->j, pd_poll, w, delays_feed__events,
					     w->feed);
	if (!err)
		err = delays__from_feed(w->feed, w->x->j, &k, out);
	if (!err)
		err = pd_drain(w, 1);
	err = pd_close(w, err);
	delays_feed__free(w->feed);
	w->feed = NULL;
	return err;
}

static int write_polls_delays(struct px *x, struct delays **out)
{
	struct pdwalk w = {.x = x, .y = *x};
	int err = pd_walk(&w, 0, out);

	if (err == -EAGAIN) /* an event came late for the replay */
		err = pd_walk(&w, 1, out);
	free(w.p);
	free(w.d);
	return err;
}

/* ---- spans ----------------------------------------------------------- */

enum {
	N_NAME,
	N_ID,
	N_PARENT,
	N_FIELDS,
	N_START,
	N_DURATION,
	N_ENTERED,
	N_WAITING,
	N_SAMPLES,
	N_CPU,
	N_BLOCKED,
	N_RUNQ,
	N_ENTERS,
	N_OPEN_START,
	N_OPEN_END,
	N_PID,
	N_SERVICE,
	N_HOST,
	N_N
};

static const struct pq_column span_cols[N_N] = {
	[N_NAME] = {"name", PQ_STRING, 0},
	[N_ID] = {"id", PQ_INT64, 0},
	[N_PARENT] = {"parent", PQ_INT64, 1},
	[N_FIELDS] = {"fields", PQ_STRING, 1},
	[N_START] = {"start_ns", PQ_INT64, 0},
	[N_DURATION] = {"duration_ns", PQ_INT64, 0},
	[N_ENTERED] = {"entered_ns", PQ_INT64, 0},
	[N_WAITING] = {"waiting_ns", PQ_INT64, 0},
	[N_SAMPLES] = {"samples", PQ_INT64, 0},
	[N_CPU] = {"cpu_ns", PQ_INT64, 0},
	[N_BLOCKED] = {"blocked_ns", PQ_INT64, 0},
	[N_RUNQ] = {"runq_ns", PQ_INT64, 0},
	[N_ENTERS] = {"enters", PQ_INT64, 0},
	[N_OPEN_START] = {"open_start", PQ_BOOL, 0},
	[N_OPEN_END] = {"open_end", PQ_BOOL, 0},
	[N_PID] = {"pid", PQ_INT64, 0},
	[N_SERVICE] = {"service", PQ_STRING, 0},
	[N_HOST] = {"host", PQ_STRING, 0},
};

/* Instance @s's row; NULL: the build starts over, so does the table */
static int span_row(void *ctx, const struct span *s)
{
	struct px *x = ctx;
	uint64_t life;

	if (!s) {
		if (x->tab)
			close_table(x, -ECANCELED);
		return open_table(x, PARQUET_SPANS, span_cols, N_N);
	}
	life = s->closed > s->created ? s->closed - s->created : 0;
	name(x, N_NAME, spans_name(s));
	pq_i64(x->tab, N_ID, (int64_t)s->id);
	opt_i64(x, N_PARENT, s->parent != 0, (int64_t)s->parent);
	cleaned(x, N_FIELDS, s->fields); /* (freed once the span is written) */
	pq_i64(x->tab, N_START, utc(x, s->created));
	pq_i64(x->tab, N_DURATION, (int64_t)life);
	pq_i64(x->tab, N_ENTERED, (int64_t)s->entered_ns);
	pq_i64(x->tab, N_WAITING,
	       (int64_t)(life > s->entered_ns ? life - s->entered_ns : 0));
	pq_i64(x->tab, N_SAMPLES, (int64_t)s->samples);
	pq_i64(x->tab, N_CPU, cpu_of(x, s->samples));
	pq_i64(x->tab, N_BLOCKED, (int64_t)s->blocked_ns);
	pq_i64(x->tab, N_RUNQ, (int64_t)s->runq_ns);
	pq_i64(x->tab, N_ENTERS, s->nenters);
	pq_bool(x->tab, N_OPEN_START, s->open_start);
	pq_bool(x->tab, N_OPEN_END, s->open_end);
	pq_i64(x->tab, N_PID, x->pid);
	where(x, N_SERVICE);
	return pq_row_end(x->tab);
}

/* The spans table, written as the instances are done; in x->sp those
 * the samples and switches were entered in (spans_keep.at), for them */
static int write_spans(struct px *x)
{
	struct spans *sp = NULL;
	int err = spans__new_keep(
		x->j, x->oc,
		&(struct spans_keep){.at = 1, .each = span_row, .each_ctx = x}, &sp);

	x->sp = sp;
	return x->tab ? close_table(x, err) : err;
}

/* ---- the export ------------------------------------------------------- */

int analysis__export_parquet(const struct offcpu *oc, const struct parquet_opts *o)
{
	struct delays *d = NULL;
	struct parquet_result dummy;
	struct px x = {
		.o = o,
		.oc = oc,
		.j = oc ? oc->join : NULL,
		.res = o && o->result ? o->result : &dummy,
	};
	int err = 0;

	if (!o || !oc || !o->open || !o->close)
		return -EINVAL;
	if (join__keeps_none(x.j))
		return -ENOENT;
	x.t = x.j->trace;
	memset(x.res, 0, sizeof(*x.res));
	x.period = analysis_period_ns(x.t);
	if (!(x.period > 0)) {
		x.period = 1e9 / 999;
		x.res->period_guessed = 1;
	}
	names(&x);
	x.offcpu = !offcpu_missing(x.t);
	x.sid = calloc(x.t->nstacks + 1, sizeof(*x.sid));
	x.used = calloc(x.t->nstacks + 1, 1);
	x.lab = malloc(MAX_FRAMES * sizeof(*x.lab));
	if (!x.sid || !x.used || !x.lab)
		err = -ENOMEM;
	if (!err)
		err = write_spans(&x);
	if (!err)
		err = write_samples(&x);
	if (!err)
		err = write_offcpu(&x);
	if (!err)
		err = write_stacks(&x);
	if (!err)
		err = write_polls_delays(&x, &d);
	if (!err)
		err = write_tasks(&x, d);
	delays__free(d);
	spans__free(x.sp);
	free(x.sid);
	free(x.used);
	free(x.lab);
	return err;
}
