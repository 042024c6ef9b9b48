// SPDX-License-Identifier: MIT
/*
 * stacks.c - stacks as the views walk them: a stack's frames, its path of
 * frame labels, one id per symbolized stack (analysis_stack_canon), and
 * where a poll's stacks leave the runtime for the task (join__cut_stacks).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/stacks.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
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

size_t analysis_shim_frames(const struct trace *t, const uint32_t *fr, size_t m)
{
	for (size_t k = m; k-- > 0;)
		if (analysis_frame_is_shim(t, fr[k]))
			return k + 1;
	return 0;
}

size_t analysis_stack_labels(const struct trace *t, uint32_t s, char (*lab)[256],
			     size_t max)
{
	const uint32_t *fr = NULL;
	size_t m = s == UINT32_MAX ? 0 : analysis_stack_frames(t, s, &fr), k, n = 0;
	size_t shim = analysis_shim_frames(t, fr, m);

	if (shim && max)
		snprintf(lab[n++], sizeof(*lab), "%s", ANALYSIS_SHIM_LABEL);
	for (k = shim; k < m && n < max; k++) {
		analysis_frame_label(t, fr[k], lab[n], sizeof(*lab));
		if (!n || strcmp(lab[n], lab[n - 1]))
			n++;
	}
	return n;
}

/* Label ids of stack @s root to leaf at (*ids)[at..], growing *ids; the
 * number of labels in *@n. With @keep < its depth: "[runtime]", then the
 * @keep frames nearest the leaf; the shim's frames as one label. */
int analysis_stack_path(struct flame *f, const struct trace *t, uint32_t *flab,
			uint32_t s, uint32_t keep, uint32_t **ids, size_t *cap, size_t at,
			size_t *n)
{
	const uint32_t *fr = NULL;
	size_t k, m = analysis_stack_frames(t, s, &fr), skip = 0, shim, at0 = at;
	int err;

	if (LIB_GROW(*ids, *cap, at + m + 2))
		return -ENOMEM;
	if (keep < m) {
		err = flame_intern(f, ANALYSIS_RUNTIME_LABEL,
				   strlen(ANALYSIS_RUNTIME_LABEL), &(*ids)[at++]);
		if (err)
			return err;
		skip = m - keep;
	}
	shim = analysis_shim_frames(t, fr, m);
	/* root to leaf: fr[m - 1 - skip] .. fr[shim] */
	for (k = m - skip; k-- > shim;) {
		err = frame_ids(f, t, flab, fr[k], &(*ids)[at++]);
		if (err)
			return err;
	}
	if (shim) {
		err = flame_intern(f, ANALYSIS_SHIM_LABEL, strlen(ANALYSIS_SHIM_LABEL),
				   &(*ids)[at++]);
		if (err)
			return err;
	}
	*n = at - at0;
	return 0;
}

/* Does frame @fr run the function named in @site ("MODULE\tNAME...",
 * TRACE_META_POLL_SITE)? */
static int site_frame(const struct trace_frame *fr, const char *site)
{
	size_t ml = strlen(fr->module), sl = strlen(fr->sym);
	const char *p;

	if (strncmp(site, fr->module, ml) || site[ml] != '\t')
		return 0;
	for (p = site + ml; p && *p == '\t'; p = strchr(p + 1, '\t'))
		if (!strncmp(p + 1, fr->sym, sl) && (p[1 + sl] == '\t' || !p[1 + sl]))
			return 1;
	return 0;
}

size_t analysis_poll_sites(const struct trace *t, const char **site, size_t max)
{
	size_t i, k, n = 0;

	for (i = 0; i < t->nmeta && n < max; i++) {
		if (strcmp(t->meta[i].key, TRACE_META_POLL_SITE) ||
		    !strchr(t->meta[i].value, '\t'))
			continue;
		for (k = 0; k < n && strcmp(site[k], t->meta[i].value); k++)
			;
		if (k == n)
			site[n++] = t->meta[i].value;
	}
	return n;
}

int join__cut_stacks(struct join *j)
{
	const struct trace *t = j->trace;
	const char *site[ANALYSIS_POLL_SITES_MAX];
	uint8_t *hit = NULL;
	uint32_t *cut = NULL;
	size_t i, k, nsites = analysis_poll_sites(t, site, ANALYSIS_POLL_SITES_MAX);

	if (!nsites)
		return 0;
	hit = calloc(t->nframes + 1, 1);
	cut = malloc((t->nstacks + 1) * sizeof(*cut));
	if (!hit || !cut) {
		free(hit);
		free(cut);
		return -ENOMEM;
	}
	for (k = 0; k < t->nframes; k++) {
		const struct trace_frame *fr = &t->frames[k];

		if (fr->kernel || !fr->sym || !fr->module)
			continue;
		for (i = 0; i < nsites && !hit[k]; i++)
			hit[k] = (uint8_t)site_frame(fr, site[i]);
	}
	for (i = 0; i < t->nstacks; i++) {
		const uint32_t *fr = NULL;
		size_t m = analysis_stack_frames(t, (uint32_t)i, &fr);

		for (k = 0; k < m && !(fr[k] < t->nframes && hit[fr[k]]); k++)
			;
		cut[i] = k < m ? (uint32_t)k : UINT32_MAX;
	}
	free(hit);
	free(j->cut);
	j->cut = cut;
	return 0;
}

/* 1 if stacks @a and @b have the same labels, in order. */
static int same_path(struct flame *f, const struct trace *t, uint32_t *flab, uint32_t a,
		     uint32_t b, uint32_t **ids, size_t *cap)
{
	size_t na, nb;

	if (analysis_stack_path(f, t, flab, a, UINT32_MAX, ids, cap, 0, &na) ||
	    analysis_stack_path(f, t, flab, b, UINT32_MAX, ids, cap, na, &nb))
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

		err = analysis_stack_path(f, t, flab, s, UINT32_MAX, &ids, &cap, 0, &n);
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
