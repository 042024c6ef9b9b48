// SPDX-License-Identifier: MIT
/*
 * tokio_tasks.c - zero-code Tokio's tasks as the views show them (a trace
 * recorded with TRACE_META_TOKIO: its samples and switches carry Tokio's
 * task ids): each task's name, the recorder's, else the one weighing most
 * over its stacks, and whether it is a worker's own launch task (the
 * runtime); where each stack leaves Tokio's task machinery for the task's
 * future. The reading of Tokio's frames is lib/tokio_names.h's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stacks.h"
#include "analysis/tokio.h"
#include "lib/grow.h"
#include "lib/map.h"
#include "lib/strset.h"
#include "lib/tokio_names.h"

static const char *sym_of(const struct trace *t, uint32_t f)
{
	return f < t->nframes && t->frames[f].sym && !t->frames[f].kernel
		       ? t->frames[f].sym
		       : "";
}

struct frames {
	const struct trace *t;
	const uint32_t *fr;
};

static const char *frame_name(void *ctx, size_t k)
{
	const struct frames *f = ctx;

	return sym_of(f->t, f->fr[k]);
}

uint32_t analysis_tokio_split(const struct trace *t, uint32_t s, char *name, size_t len,
			      int *runtime)
{
	struct frames f = {.t = t};
	size_t m = analysis_stack_frames(t, s, &f.fr);
	size_t k = lib_tokio_split(frame_name, &f, m, name, len, runtime);

	return k == SIZE_MAX ? UINT32_MAX : (uint32_t)k;
}

int analysis_tokio_parked(const struct trace *t, uint32_t s)
{
	struct frames f = {.t = t};
	size_t m = analysis_stack_frames(t, s, &f.fr);

	return lib_tokio_parked(frame_name, &f, m);
}

int analysis_is_tokio(const struct trace *t)
{
	return trace__meta(t, TRACE_META_TOKIO) != NULL;
}

int analysis_tokio_unpolled(const struct trace *t)
{
	return analysis_is_tokio(t) && !trace__meta(t, TRACE_META_TOKIO_PROBES);
}

void analysis_tokio_note(const struct trace *t, const char *what, FILE *out)
{
	const char *v = trace__meta(t, TRACE_META_TOKIO);

	if (v && analysis_tokio_unpolled(t))
		fprintf(out,
			"# zero-code Tokio %s: tasks seen from outside (read in their "
			"threads at samples and switch-outs) have no %s; the d9prof "
			"crate's tasks do\n",
			v, what);
}

/* ---- the tasks of a zero-code trace ------------------------------------ */

#define NAMES_PER_TASK 4

struct ztally {
	uint32_t name[NAMES_PER_TASK]; /* ids in tokio_tasks.names */
	uint64_t w[NAMES_PER_TASK];
	uint64_t runtime; /* weight of stacks in a worker's launch task */
};

struct tokio_tasks {
	const struct trace *t;
	struct lib_strset names; /* the tasks' names, each once */
	int32_t *stack_name;	 /* per stack: a name, -1 none, -2 the runtime */
	uint32_t *keep;		 /* per stack: analysis_tokio_split() */
	struct lib_map of_task;	 /* task id -> index in tally */
	struct ztally *tally;
	size_t ntally, captally;
	int err;
};

/* @name's id in names, or -errno. */
static int32_t intern(struct tokio_tasks *z, const char *name)
{
	uint32_t id;
	int err = lib_strset_add(&z->names, name, strlen(name), &id);

	if (err < 0)
		return err;
	return id > INT32_MAX ? -EOVERFLOW : (int32_t)id;
}

static void tally(struct tokio_tasks *z, uint64_t task, uint32_t stack, uint64_t w)
{
	const uint64_t *ix;
	struct ztally *y;
	int32_t nm = stack < z->t->nstacks ? z->stack_name[stack] : -1;
	size_t k, least = 0;

	if (!task || nm == -1)
		return;
	ix = lib_map_find(&z->of_task, task);
	if (!ix) {
		if (LIB_GROW(z->tally, z->captally, z->ntally + 1) ||
		    lib_map_set(&z->of_task, task, z->ntally)) {
			z->err = -ENOMEM;
			return;
		}
		memset(&z->tally[z->ntally], 0, sizeof(*z->tally));
		ix = lib_map_find(&z->of_task, task);
		z->ntally++;
	}
	y = &z->tally[*ix];
	if (nm == -2) {
		y->runtime += w;
		return;
	}
	/* its few names, the lightest one making room for a new one */
	for (k = 0; k < NAMES_PER_TASK; k++) {
		if (y->w[k] && y->name[k] == (uint32_t)nm)
			break;
		if (y->w[k] < y->w[least])
			least = k;
	}
	if (k == NAMES_PER_TASK) {
		k = least;
		y->name[k] = (uint32_t)nm;
		y->w[k] = 0;
	}
	y->w[k] += w;
}

static int tally_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct tokio_tasks *z = ctx;

	for (size_t i = 0; i < n; i++)
		if (s[i].task & TRACE_TASK_TOKIO)
			tally(z, s[i].task, s[i].stack, s[i].weight ? s[i].weight : 1);
	return z->err;
}

int tokio_tasks__new(const struct trace *t, struct tokio_tasks **out)
{
	struct tokio_tasks *z = calloc(1, sizeof(*z));
	char name[512];
	int runtime, err = -ENOMEM;

	*out = NULL;
	if (!z)
		return -ENOMEM;
	z->t = t;
	z->stack_name = malloc((t->nstacks + 1) * sizeof(*z->stack_name));
	z->keep = malloc((t->nstacks + 1) * sizeof(*z->keep));
	if (!z->stack_name || !z->keep || lib_map_init(&z->of_task, 64))
		goto fail;
	for (uint32_t s = 0; s < t->nstacks; s++) {
		z->keep[s] = analysis_tokio_split(t, s, name, sizeof(name), &runtime);
		z->stack_name[s] = z->keep[s] == UINT32_MAX ? -1
				   : runtime		    ? -2
				   : name[0]		    ? intern(z, name)
							    : -1;
		if (z->stack_name[s] < -2)
			goto fail;
	}
	err = trace__for_each_sample(t, tally_samples, z);
	for (size_t i = 0; !err && i < t->nswitches; i++)
		if (t->switches[i].task & TRACE_TASK_TOKIO)
			tally(z, t->switches[i].task, t->switches[i].stack, 1);
	if (!err)
		err = z->err;
	if (err)
		goto fail;
	*out = z;
	return 0;
fail:
	tokio_tasks__free(z);
	return err;
}

const char *tokio_tasks__name(const struct tokio_tasks *z, uint64_t task, int *runtime)
{
	const uint64_t *ix = z ? lib_map_find(&z->of_task, task) : NULL;
	const struct ztally *y;
	size_t best = 0;

	*runtime = 0;
	if (!ix)
		return NULL;
	y = &z->tally[*ix];
	for (size_t k = 1; k < NAMES_PER_TASK; k++)
		if (y->w[k] > y->w[best])
			best = k;
	/* a worker's launch task: its id is what a worker shows outside
	 * any task's poll */
	if (y->runtime > y->w[best]) {
		*runtime = 1;
		return NULL;
	}
	return y->w[best] ? lib_strset_str(&z->names, y->name[best]) : NULL;
}

uint32_t tokio_tasks__keep(const struct tokio_tasks *z, uint32_t stack)
{
	return z && stack < z->t->nstacks && z->stack_name[stack] >= 0 ? z->keep[stack]
								       : UINT32_MAX;
}

void tokio_tasks__free(struct tokio_tasks *z)
{
	if (!z)
		return;
	lib_strset_release(&z->names);
	free(z->stack_name);
	free(z->keep);
	free(z->tally);
	lib_map_release(&z->of_task);
	free(z);
}
