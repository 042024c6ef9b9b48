/* SPDX-License-Identifier: MIT */
/*
 * tokio.h - zero-code Tokio's tasks as the views show them (tokio_tasks.c).
 */
#ifndef D9_ANALYSIS_TOKIO_H
#define D9_ANALYSIS_TOKIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* Was @t recorded with zero-code Tokio (TRACE_META_TOKIO)? */
int analysis_is_tokio(const struct trace *t);
/* ... and without its poll probes (TRACE_META_TOKIO_PROBES): its tasks
 * have no polls, wakes or delays */
int analysis_tokio_unpolled(const struct trace *t);
/* A view's line saying so, and that it has no @what ("polls, wakes or
 * delays"), where @t's zero-code tasks have no polls; nothing elsewhere */
void analysis_tokio_note(const struct trace *t, const char *what, FILE *out);
/* Does stack @s park a Tokio thread with nothing to run (a worker's park,
 * block_on's, the blocking pool's wait)? */
int analysis_tokio_parked(const struct trace *t, uint32_t s);
/* Stack @s at Tokio's task machinery: the number of frames from the leaf
 * that are the task's own future (the rest, Tokio's poll of it and the
 * worker below, a per-task view draws as "[runtime]"), or UINT32_MAX
 * where the stack is in no task's poll; the future's type as the task's
 * name in @name (may be NULL), and in *@runtime whether the task polled
 * is a worker's launch task (the runtime itself, not a task of the
 * program). */
uint32_t analysis_tokio_split(const struct trace *t, uint32_t s, char *name, size_t len,
			      int *runtime);
/* The tasks of a zero-code trace (samples' and switches' TRACE_TASK_TOKIO
 * ids): each named from its stacks, the name weighing most over its
 * samples and switches; one whose stacks are mostly a worker's own launch
 * task is the runtime. One walk of the samples. */
struct tokio_tasks;
int tokio_tasks__new(const struct trace *t, struct tokio_tasks **out);
/* Task @task's name (owned by @z; NULL: none known), and whether it is a
 * worker's launch task (*@runtime 1: then no task of the program) */
const char *tokio_tasks__name(const struct tokio_tasks *z, uint64_t task, int *runtime);
/* analysis_tokio_split() of stack @stack, UINT32_MAX where it has no
 * task of the program */
uint32_t tokio_tasks__keep(const struct tokio_tasks *z, uint32_t stack);
void tokio_tasks__free(struct tokio_tasks *z);

#endif /* D9_ANALYSIS_TOKIO_H */
