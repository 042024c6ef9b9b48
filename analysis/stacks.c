// SPDX-License-Identifier: MIT
/*
 * stacks.c - stacks as the views walk them: a stack's frames, its path of
 * frame labels, and one id per symbolized stack (analysis_stack_canon).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "lib/text.h"

/* Label ids of a stack's frames, cached per frame id: a frame is rendered
 * and interned once however many stacks and samples use it. */
static int frame_ids(struct flame *f, const struct trace *t, uint32_t *cache,
		     uint32_t fid, uint32_t *id)
{
	char buf[4096];
	int err;

	if (fid < t->nframes && cache[fid] != UINT32_MAX) {
		*id = cache[fid];
		return 0;
	}
	analysis_frame_label(t, fid, buf, sizeof(buf));
	err = flame_intern(f, buf, strlen(buf), id);
	if (!err && fid < t->nframes)
		cache[fid] = *id;
	return err;
}

/* Frames of stack @s (leaf first in the trace), or 0 frames if the id or
 * its bounds are bad. */
size_t analysis_stack_frames(const struct trace *t, uint32_t s, const uint32_t **fr)
{
	uint32_t a, b;

	if (s >= t->nstacks || !t->stack_off)
		return 0;
	a = t->stack_off[s];
	b = t->stack_off[s + 1];
	if (b < a || b > t->stack_off[t->nstacks])
		return 0;
	*fr = t->stack_frames + a;
	return b - a;
}

/* Label ids of stack @s root to leaf at (*ids)[at..], growing *ids; the
 * number of frames in *@n. */
int analysis_stack_path(struct flame *f, const struct trace *t, uint32_t *flab,
			uint32_t s, uint32_t **ids, size_t *cap, size_t at, size_t *n)
{
	const uint32_t *fr = NULL;
	size_t k, m = analysis_stack_frames(t, s, &fr);
	int err;

	if (at + m > *cap) {
		uint32_t *tmp = realloc(*ids, (at + m + 64) * sizeof(**ids));

		if (!tmp)
			return -ENOMEM;
		*ids = tmp;
		*cap = at + m + 64;
	}
	for (k = 0; k < m; k++) {
		err = frame_ids(f, t, flab, fr[m - 1 - k], &(*ids)[at + k]);
		if (err)
			return err;
	}
	*n = m;
	return 0;
}

/* 1 if stacks @a and @b have the same labels, in order. */
static int same_path(struct flame *f, const struct trace *t, uint32_t *flab, uint32_t a,
		     uint32_t b, uint32_t **ids, size_t *cap)
{
	size_t na, nb;

	if (analysis_stack_path(f, t, flab, a, ids, cap, 0, &na) ||
	    analysis_stack_path(f, t, flab, b, ids, cap, na, &nb))
		return 0;
	return na == nb && !memcmp(*ids, *ids + na, na * sizeof(**ids));
}

int analysis_stack_canon(const struct trace *t, uint32_t **out)
{
	struct flame *f = flame__new();
	uint32_t *flab = malloc((t->nframes + 1) * sizeof(*flab));
	uint32_t *canon = malloc((t->nstacks + 1) * sizeof(*canon));
	uint32_t *ids = NULL;
	size_t cap = 0, n, k;
	struct lib_map m = {0};
	int err = -ENOMEM;

	*out = NULL;
	if (!f || !flab || !canon || lib_map_init(&m, t->nstacks))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	for (uint32_t s = 0; s < t->nstacks; s++) {
		uint64_t h = 0x51ed27u, *v;
		int created;

		err = analysis_stack_path(f, t, flab, s, &ids, &cap, 0, &n);
		if (err)
			goto out;
		for (k = 0; k < n; k++)
			h = lib_hash64(h ^ ids[k]) + k;
		v = lib_map_get(&m, h, &created);
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		if (created)
			*v = s;
		/* a hash shared by different paths keeps them apart */
		canon[s] = created || same_path(f, t, flab, (uint32_t)*v, s, &ids, &cap)
				   ? (uint32_t)*v
				   : s;
	}
	*out = canon;
	canon = NULL;
	err = 0;
out:
	lib_map_release(&m);
	free(ids);
	free(canon);
	free(flab);
	flame__free(f);
	return err;
}
