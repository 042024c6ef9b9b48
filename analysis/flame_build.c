// SPDX-License-Identifier: MIT
/*
 * flame_build.c - the flamegraph tree of the samples joined to polls: a root
 * per task, name, thread or span name (groups), each sample's stack under
 * it, as `flame`, the diff and the speedscope export all draw it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "lib/map.h"

int analysis_task_root(struct flame *f, const struct task_stat *ts, uint32_t *id)
{
	char name[256], buf[300];
	int n;

	if (ts->name && *ts->name) {
		analysis_clean_name(ts->name, name, sizeof(name));
		n = snprintf(buf, sizeof(buf), "task %" PRIu64 " %s",
			     trace_task_number(ts->task), name);
	} else {
		n = snprintf(buf, sizeof(buf), "task %" PRIu64,
			     trace_task_number(ts->task));
	}
	return flame_intern(f, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
			    id);
}

struct fentry {
	uint32_t root; /* group + 1, 0 = no poll */
	uint32_t rank; /* pre-order rank of the stack's path */
	uint32_t stack;
	uint64_t weight;
};

static int fentry_cmp(const void *a, const void *b)
{
	const struct fentry *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Pre-order rank of every node of @trie. */
static uint32_t *preorder(const struct flame *trie)
{
	uint32_t *rank = malloc(trie->nnodes * sizeof(*rank));
	uint32_t *stack = malloc(trie->nnodes * sizeof(*stack));
	size_t top = 0, r = 0;

	if (!rank || !stack) {
		free(rank);
		free(stack);
		return NULL;
	}
	stack[top++] = 0;
	while (top) {
		uint32_t n = stack[--top];

		rank[n] = r++;
		for (uint32_t c = trie->nodes[n].child; c != FNODE_NONE;
		     c = trie->nodes[c].next)
			stack[top++] = c;
	}
	free(stack);
	return rank;
}

/* Fill @f from the (root, stack) -> weight pairs of @agg.
 *
 * Adding each pair's path through the edge map costs a hash probe per
 * frame, and with many tasks times many stacks that is millions of random
 * probes. Instead: put the distinct stacks in a small trie (one probe per
 * frame per distinct stack), sort the pairs by (root, pre-order rank of
 * the stack in that trie) so that paths sharing a prefix are adjacent, and
 * bulk-load @f with flame_run_add(), which compares with the previous path
 * only. */
/* Frames kept of stack @s under root @root (0: no poll): by task or name,
 * a poll's stack from where the runtime called the task (join__keep());
 * by thread, or outside polls, whole. */
static uint32_t root_keep(const struct join *j, const struct groups *g, uint64_t root,
			  uint32_t s)
{
	return root && g->by != GROUP_THREAD && g->by != GROUP_SPAN ? join__keep(j, s)
								    : UINT32_MAX;
}

static int build_tree(const struct join *j, const struct groups *g, struct flame *f,
		      const struct lib_map *agg, uint32_t *flab)
{
	const struct trace *t = j->trace;
	struct flame *trie = flame__new();
	struct flame_run run = {0};
	struct fentry *ent = malloc((lib_map_count(agg) + 1) * sizeof(*ent));
	/* trie node per (stack, cut or whole) */
	uint32_t *leaf = malloc((t->nstacks + 1) * 2 * sizeof(*leaf));
	uint32_t *rootlab = malloc((g->ngroups + 2) * sizeof(*rootlab));
	uint32_t *rank = NULL, *ids = NULL;
	size_t cap = 0, m = 0, i, n;
	uint64_t key, *w;
	int err = -ENOMEM;

	if (!trie || !ent || !leaf || !rootlab)
		goto out;
	memset(leaf, 0xff, (t->nstacks + 1) * 2 * sizeof(*leaf));
	memset(rootlab, 0xff, (g->ngroups + 2) * sizeof(*rootlab));
	i = 0;
	while (lib_map_next(agg, &i, &key, &w)) {
		uint32_t s = (uint32_t)key, node = 0;
		uint32_t keep = root_keep(j, g, key >> 32, s);
		size_t x = (size_t)s * 2 + (keep != UINT32_MAX);

		if (s < t->nstacks && leaf[x] != UINT32_MAX) {
			node = leaf[x];
		} else if (s < t->nstacks) {
			err = analysis_stack_path(f, t, flab, s, keep, &ids, &cap, 0, &n);
			if (!err)
				err = flame_add_ids(trie, ids, n, 1, &node);
			if (err)
				goto out;
			leaf[x] = node;
		}
		ent[m].root = key >> 32;
		ent[m].rank = node; /* the rank once it is known */
		ent[m].stack = s;
		ent[m].weight = *w;
		m++;
	}
	err = -ENOMEM;
	rank = preorder(trie);
	if (!rank)
		goto out;
	for (i = 0; i < m; i++)
		ent[i].rank = rank[ent[i].rank];
	qsort(ent, m, sizeof(*ent), fentry_cmp);

	for (i = 0; i < m; i++) {
		uint32_t r = ent[i].root;
		/* by thread, samples of threads the groups do not list are one
		 * group past them ("[other threads]": groups__of) */
		uint32_t ri = r <= g->ngroups ? r : g->ngroups + 1;

		if (rootlab[ri] == UINT32_MAX) {
			char lab[300];

			groups__label(g, r ? r - 1 : GROUP_NONE, lab, sizeof(lab));
			err = flame_intern(f, lab, strlen(lab), &rootlab[ri]);
			if (err)
				goto out;
		}
		err = analysis_stack_path(f, t, flab, ent[i].stack,
					  root_keep(j, g, r, ent[i].stack), &ids, &cap, 1,
					  &n);
		if (err)
			goto out;
		ids[0] = rootlab[ri];
		err = flame_run_add(f, &run, ids, n + 1, ent[i].weight);
		if (err)
			goto out;
	}
	err = 0;
out:
	flame__free(trie);
	flame_run_release(&run);
	free(ent);
	free(leaf);
	free(rootlab);
	free(rank);
	free(ids);
	return err;
}

/* The samples again (--min-poll, --by thread), per (root, stack). */
struct flame_walk {
	struct lib_map *agg;
	struct flame_result *res;
	const struct flame_opts *o;
	const struct groups *g;
};

/* Aggregation key root of group @grp: group + 1, 0 for "[no poll]". */
static uint64_t group_root(uint32_t grp)
{
	return grp == GROUP_NONE ? 0 : (uint64_t)grp + 1;
}

static int flame_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct flame_walk *fw = ctx;
	uint64_t w = sample_weight(s), *v;
	uint32_t grp;

	if (fw->o->min_poll_ns && (!p || p->end - p->start < fw->o->min_poll_ns))
		return 0;
	if (span_filter_on(&fw->o->span) &&
	    !spans__kept_at(fw->o->span.spans, s->tid, s->time))
		return 0;
	grp = groups__of_at(fw->g, p ? (int32_t)p->task : -1, s->tid, s->time);
	if (grp == UINT32_MAX)
		return 0;
	v = lib_map_get(fw->agg, group_root(grp) << 32 | s->stack, NULL);
	if (!v)
		return -ENOMEM;
	*v += w;
	fw->res->samples++;
	fw->res->weight += w;
	return 0;
}

int analysis_flame_build(const struct join *j, const struct flame_opts *o,
			 struct groups **gp, struct flame **fp, struct flame_result *rp)
{
	const struct trace *t;
	struct flame *f = NULL;
	struct groups *g = NULL;
	struct lib_map agg = {0};
	struct flame_result res = {0};
	uint32_t *flab = NULL;
	size_t i;
	int err;

	*gp = NULL;
	*fp = NULL;
	t = j->trace;
	if (join__keeps_none(j))
		return -ENOENT;
	/* root keys (group + 1, 0 = no poll) share a u64 key with the stack
	 * id */
	if (j->ntasks >= UINT32_MAX - 3)
		return -EOVERFLOW;
	err = groups__new(j, o->by, o->span.spans, &g);
	if (err)
		return err;
	err = -ENOMEM;
	f = flame__new();
	flab = malloc((t->nframes + 1) * sizeof(*flab));
	if (!f || !flab || lib_map_init(&agg, lib_map_count(&join_agg(j)->map)))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	f->task_roots = 1;
	flame__set_style(f, &(struct flame_style){.reverse = o->reverse,
						  .sample_ns = analysis_period_ns(t)});

	/* 1M samples collapse to a few thousand (task, stack) pairs, which
	 * the join counted: pick those wanted, then walk the tree once per
	 * pair instead of per sample. --min-poll and --by thread need the
	 * samples again (the pairs say neither how long their polls were
	 * nor on which thread). */
	if (o->min_poll_ns || o->span.spans || g->by == GROUP_THREAD) {
		struct flame_walk fw = {.agg = &agg, .res = &res, .o = o, .g = g};

		err = join_for_each_sample(j, flame_sample, &fw);
		if (err)
			goto out;
		err = -ENOMEM;
	} else {
		const struct join_agg *ja = join_agg(j);

		uint64_t key, *ix;

		i = 0;
		while (lib_map_next(&ja->map, &i, &key, &ix)) {
			size_t e = *ix;
			uint64_t *v;
			uint32_t grp;

			grp = groups__of(g, (int32_t)(key >> 32) - 1, 0);
			if (grp == UINT32_MAX)
				continue;
			v = lib_map_get(&agg, group_root(grp) << 32 | (uint32_t)key,
					NULL);
			if (!v)
				goto out;
			*v += ja->weight[e];
			res.samples += ja->count[e];
			res.weight += ja->weight[e];
		}
	}
	res.stacks = lib_map_count(&agg);
	err = build_tree(j, g, f, &agg, flab);
out:
	*rp = res;
	lib_map_release(&agg);
	free(flab);
	if (err) {
		flame__free(f);
		groups__free(g);
		return err;
	}
	*fp = f;
	*gp = g;
	return 0;
}
