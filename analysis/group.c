/* SPDX-License-Identifier: MIT */
/*
 * group.c - the root frames of a split view (--by task, name, thread or
 * span name).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/spans.h"

static int name_cmp(const void *a, const void *b)
{
	const struct task_stat *x = *(const struct task_stat *const *)a;
	const struct task_stat *y = *(const struct task_stat *const *)b;

	if (!x->name != !y->name)
		return x->name ? -1 : 1;
	return x->name ? strcmp(x->name, y->name) : 0;
}

enum group_by groups_resolve(const struct join *j, enum group_by by)
{
	if (by != GROUP_AUTO)
		return by;
	return j->ntasks > GROUP_AUTO_TASKS ? GROUP_NAME : GROUP_TASK;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* GROUP_SPAN: one group per distinct span name, in name order. */
static int span_groups(struct groups *g, const struct spans *sp)
{
	const char **v = malloc((sp->n + 1) * sizeof(*v));
	size_t i, n = 0;

	g->names = malloc((sp->n + 1) * sizeof(*g->names));
	g->of_span = malloc((sp->n + 1) * sizeof(*g->of_span));
	if (!v || !g->names || !g->of_span) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < sp->n; i++)
		v[i] = spans_name(&sp->v[i]);
	qsort(v, sp->n, sizeof(*v), str_cmp);
	for (i = 0; i < sp->n; i++)
		if (!n || strcmp(v[i], g->names[n - 1]))
			g->names[n++] = v[i];
	for (i = 0; i < sp->n; i++) {
		const char *name = spans_name(&sp->v[i]);
		const char **at = bsearch(&name, g->names, n, sizeof(*g->names), str_cmp);

		g->of_span[i] = (uint32_t)(at - g->names);
	}
	g->ngroups = n;
	g->sp = sp;
	free(v);
	return 0;
}

int groups__new(const struct join *j, enum group_by by, const struct spans *sp,
		struct groups **out)
{
	struct groups *g = calloc(1, sizeof(*g));
	const struct task_stat **v = NULL;
	size_t i, n;
	int err = -ENOMEM;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->j = j;
	g->by = groups_resolve(j, by);
	g->of_task = malloc((j->ntasks + 1) * sizeof(*g->of_task));
	if (!g->of_task)
		goto fail;
	for (i = 0; i < j->ntasks; i++)
		g->of_task[i] = join__kept(j, &j->tasks[i]) ? (uint32_t)i : UINT32_MAX;
	g->ngroups = j->ntasks;
	if (g->by == GROUP_SPAN) {
		err = sp ? span_groups(g, sp) : -EINVAL;
		if (err)
			goto fail;
	} else if (g->by == GROUP_NAME) {
		/* one group per distinct name; unnamed tasks share one */
		v = malloc((j->ntasks + 1) * sizeof(*v));
		g->names = malloc((j->ntasks + 1) * sizeof(*g->names));
		if (!v || !g->names)
			goto fail;
		for (i = 0; i < j->ntasks; i++)
			v[i] = &j->tasks[i];
		qsort(v, j->ntasks, sizeof(*v), name_cmp);
		for (i = n = 0; i < j->ntasks; i++) {
			if (!i || name_cmp(&v[i], &v[i - 1]))
				g->names[n++] = v[i]->name;
			if (g->of_task[v[i] - j->tasks] != UINT32_MAX)
				g->of_task[v[i] - j->tasks] = (uint32_t)(n - 1);
		}
		g->ngroups = n;
	} else if (g->by == GROUP_THREAD) {
		/* the threads that ran polls, plus any seen by a caller later */
		size_t np;
		uint32_t *pt = join__poll_threads(j, &np);

		g->tids = malloc((np + j->trace->nthreads + 1) * sizeof(*g->tids));
		if (!pt || !g->tids) {
			free(pt);
			goto fail;
		}
		for (i = 0; i < j->trace->nthreads; i++)
			g->tids[g->ntids++] = j->trace->threads[i].tid;
		for (i = 0; i < np; i++)
			g->tids[g->ntids++] = pt[i];
		free(pt);
		qsort(g->tids, g->ntids, sizeof(*g->tids), u32_cmp);
		for (i = n = 0; i < g->ntids; i++)
			if (!n || g->tids[n - 1] != g->tids[i])
				g->tids[n++] = g->tids[i];
		g->ntids = g->ngroups = n;
	}
	free(v);
	*out = g;
	return 0;
fail:
	free(v);
	groups__free(g);
	return err;
}

uint32_t groups__of_thread(const struct groups *g, uint32_t tid)
{
	const uint32_t *at = bsearch(&tid, g->tids, g->ntids, sizeof(*g->tids), u32_cmp);

	return at ? (uint32_t)(at - g->tids) : UINT32_MAX - 1;
}

uint32_t groups__of(const struct groups *g, int32_t task_ix, uint32_t tid)
{
	if (task_ix >= 0 && g->of_task[task_ix] == UINT32_MAX)
		return UINT32_MAX; /* a task not selected */
	if (task_ix < 0 && g->j->sel.on)
		return UINT32_MAX; /* outside polls, but polls were asked for */
	if (g->by == GROUP_THREAD)
		return groups__of_thread(g, tid);
	return task_ix < 0 ? GROUP_NONE : g->of_task[task_ix];
}

uint32_t groups__of_at(const struct groups *g, int32_t task_ix, uint32_t tid,
		       uint64_t time)
{
	int32_t i;

	if (g->by != GROUP_SPAN)
		return groups__of(g, task_ix, tid);
	if (task_ix >= 0 && g->of_task[task_ix] == UINT32_MAX)
		return UINT32_MAX;
	if (task_ix < 0 && g->j->sel.on)
		return UINT32_MAX;
	i = spans__at(g->sp, tid, time);
	return i < 0 ? GROUP_NONE : g->of_span[i];
}

char *groups__label(const struct groups *g, uint32_t grp, char *buf, size_t len)
{
	char name[256];

	if (grp == GROUP_NONE) {
		snprintf(buf, len, g->by == GROUP_SPAN ? "[no span]" : "[no poll]");
	} else if (g->by == GROUP_SPAN) {
		analysis_clean_name(grp < g->ngroups ? g->names[grp] : "?", name,
				    sizeof(name));
		snprintf(buf, len, "%s", name);
	} else if (g->by == GROUP_THREAD) {
		if (grp >= g->ntids)
			snprintf(buf, len, "[other threads]");
		else
			analysis_thread_label(g->j->trace, g->tids[grp], buf, len);
	} else if (g->by == GROUP_NAME) {
		if (grp < g->ngroups && g->names[grp]) {
			analysis_clean_name(g->names[grp], name, sizeof(name));
			snprintf(buf, len, "%s", name);
		} else {
			snprintf(buf, len, "[unnamed tasks]");
		}
	} else {
		analysis_task_label(g->j, g->j->tasks[grp].task, buf, len);
	}
	return buf;
}

void groups__free(struct groups *g)
{
	if (!g)
		return;
	free(g->of_task);
	free(g->names);
	free(g->of_span);
	free(g->tids);
	free(g);
}
