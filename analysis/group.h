/* SPDX-License-Identifier: MIT */
/*
 * group.h - the root frames of a split view: a group per task, task name,
 * thread or span name (group.c).
 */
#ifndef D9_ANALYSIS_GROUP_H
#define D9_ANALYSIS_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join.h"

struct spans;

#define GROUP_NONE (UINT32_MAX - 2) /* outside polls: "[no poll]" */

/* The groups of a split view, resolved for one join. */
struct groups {
	const struct join *j;
	enum group_by by;   /* never GROUP_AUTO */
	uint32_t *of_task;  /* group of each task index, UINT32_MAX if the
			     * task is not selected */
	const char **names; /* GROUP_NAME: each group's name (NULL:
			     * unnamed) */
	uint32_t *tids;	    /* GROUP_THREAD: sorted tids, one a group */
	size_t ntids, ngroups;
	const struct spans *sp; /* GROUP_SPAN: the spans, names[] theirs */
	uint32_t *of_span;	/* ... the group of each span (spans.v) */
};

/* GROUP_SPAN needs @sp (else -EINVAL); the others ignore it. */
int groups__new(const struct join *j, enum group_by by, const struct spans *sp,
		struct groups **out);
/* The group of something inside a poll of task index @task_ix (-1: in
 * no poll) on thread @tid: UINT32_MAX if not kept, GROUP_NONE for "[no
 * poll]". */
uint32_t groups__of(const struct groups *g, int32_t task_ix, uint32_t tid);
/* GROUP_THREAD: the group of thread @tid, whatever the task (UINT32_MAX -
 * 1: a thread with no group). */
uint32_t groups__of_thread(const struct groups *g, uint32_t tid);
/* The same for something at @time (GROUP_SPAN: by the span entered on
 * @tid then, GROUP_NONE for none). */
uint32_t groups__of_at(const struct groups *g, int32_t task_ix, uint32_t tid,
		       uint64_t time);
char *groups__label(const struct groups *g, uint32_t grp, char *buf, size_t len);
void groups__free(struct groups *g);

#endif /* D9_ANALYSIS_GROUP_H */
