/* SPDX-License-Identifier: MIT */
/*
 * export_speedscope.c - `d9prof export --format speedscope`: the CPU
 * flamegraph as speedscope's JSON file format (www.speedscope.app/
 * file-format-schema.json), one "sampled" profile per group.
 *
 * The tree is the one `d9prof flame` draws (analysis_flame_build(): the
 * same walk of the samples through the join, the same groups), so the
 * export and `flame --format folded` cannot disagree. Each depth-1 node
 * of the tree (a task, a task name, a thread, "[no poll]") becomes a
 * profile; each node below it with self weight becomes one sample, its
 * path root first as indices into shared.frames (one per distinct frame
 * label). Samples are aggregated per stack, so the profile's time order
 * is not kept: speedscope's Left Heavy and Sandwich views show it all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/json.h"

#define EXPORTER "d9prof " D9_VERSION /* the Makefile's VERSION */

struct ss {
	const struct join *j;
	const struct flame *f;
	double period;	    /* ns a sample weight stands for */
	uint32_t *top;	    /* per node: its depth-1 ancestor, 0 for the root */
	uint32_t *frame_of; /* per label: index in shared.frames, UINT32_MAX */
	uint32_t *frames;   /* shared.frames: their labels */
	size_t nframes;
	uint32_t *path; /* scratch: one sample's nodes, leaf first */
	size_t path_cap;
};

/* Depth-1 nodes, busiest first: speedscope opens the first profile. */
static int root_cmp(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct fnode *x = &f->nodes[*(const uint32_t *)a],
			   *y = &f->nodes[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(flame_label_str(f, x->label), flame_label_str(f, y->label));
}

/* Write node @n's path below its profile's root as frame indices. */
static int write_stack(struct ss *x, uint32_t n, struct lib_json *w)
{
	const struct flame *f = x->f;
	size_t d = 0;

	for (; f->nodes[n].parent != 0; n = f->nodes[n].parent) {
		if (LIB_GROW(x->path, x->path_cap, d + 1))
			return -ENOMEM;
		x->path[d++] = n;
	}
	lib_json_array_begin(w);
	for (size_t k = d; k--;) {
		uint32_t l = f->nodes[x->path[k]].label;

		if (x->frame_of[l] == UINT32_MAX) {
			x->frame_of[l] = (uint32_t)x->nframes;
			x->frames[x->nframes++] = l;
		}
		lib_json_uint(w, x->frame_of[l]);
	}
	lib_json_array_end(w);
	return 0;
}

/* One sampled profile: the nodes @ns[0..n) under depth-1 node @r. */
static int write_profile(struct ss *x, uint32_t r, const uint32_t *ns, size_t n,
			 struct lib_json *w, struct export_result *res)
{
	const struct flame *f = x->f;
	size_t i;
	int err;

	lib_json_object_begin(w);
	lib_json_str_field(w, "type", "sampled");
	lib_json_str_field(w, "name", flame_label_str(f, f->nodes[r].label));
	lib_json_str_field(w, "unit", "nanoseconds");
	lib_json_uint_field(w, "startValue", 0);
	lib_json_name(w, "endValue");
	lib_json_double(w, "%.0f", (double)f->nodes[r].total * x->period);
	lib_json_name(w, "samples");
	lib_json_array_begin(w);
	for (i = 0; i < n; i++) {
		err = write_stack(x, ns[i], w);
		if (err)
			return err;
	}
	lib_json_array_end(w);
	lib_json_name(w, "weights");
	lib_json_array_begin(w);
	for (i = 0; i < n; i++)
		lib_json_double(w, "%.0f", (double)f->nodes[ns[i]].self * x->period);
	lib_json_array_end(w);
	lib_json_object_end(w);
	res->pprof_samples += n;
	return 0;
}

/* Where a frame's function is: its source file and the line it begins
 * at (DWARF), else its module and no line */
struct where {
	const char *file;
	uint32_t line;
};

/* Per label @l, where the function of a frame with that label is, for
 * shared.frames' "file" and "line" (speedscope shows file:line) */
static struct where *frame_files(const struct join *j, struct flame *f)
{
	const struct trace *t = j->trace;
	struct where *file;
	char buf[4096];
	size_t nlab = lib_strset_count(&f->labels);
	uint32_t id;

	file = calloc(nlab + 1, sizeof(*file));
	if (!file)
		return NULL;
	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct trace_frame *fr = &t->frames[i];
		int src = fr->file && *fr->file;

		if (!src && (!fr->module || !*fr->module))
			continue;
		analysis_frame_label(t, i, buf, sizeof(buf));
		/* a label not in the tree gets a new id past nlab: ignored */
		if (flame_intern(f, buf, strlen(buf), &id)) {
			free(file);
			return NULL;
		}
		/* a source file over a module, for any address of the label */
		if (id < nlab && (!file[id].file || (src && !file[id].line)))
			file[id] = (struct where){src ? fr->file : fr->module,
						  src ? fr->start_line : 0};
	}
	return file;
}

static int write_file(struct ss *x, struct flame *f, FILE *out, struct export_result *res)
{
	const struct join *j = x->j;
	size_t nn = f->nnodes, nroots = 0, i, *at = NULL;
	size_t nlab = lib_strset_count(&f->labels);
	uint32_t *roots = NULL, *order = NULL;
	struct where *file = NULL;
	struct lib_json w;
	int err = -ENOMEM;

	x->top = malloc((nn + 1) * sizeof(*x->top));
	x->frame_of = malloc((nlab + 1) * sizeof(*x->frame_of));
	x->frames = malloc((nlab + 1) * sizeof(*x->frames));
	roots = malloc((nn + 1) * sizeof(*roots));
	order = malloc((nn + 1) * sizeof(*order));
	at = calloc(nn + 1, sizeof(*at));
	if (!x->top || !x->frame_of || !x->frames || !roots || !order || !at)
		goto out;
	memset(x->frame_of, 0xff, (nlab + 1) * sizeof(*x->frame_of));
	/* a node comes after its parent: one pass finds every node's profile */
	x->top[0] = 0;
	for (i = 1; i < nn; i++) {
		uint32_t p = f->nodes[i].parent;

		x->top[i] = p == 0 ? (uint32_t)i : x->top[p];
		if (p == 0)
			roots[nroots++] = (uint32_t)i;
	}
	/* bucket the nodes with self weight by profile: at[r] counts, then
	 * becomes each profile's start in order[] */
	for (i = 1; i < nn; i++)
		if (f->nodes[i].self && f->nodes[i].parent != 0)
			at[x->top[i]]++;
	for (size_t k = 0, sum = 0; k < nn; k++) {
		size_t c = at[k];

		at[k] = sum;
		sum += c;
	}
	for (i = 1; i < nn; i++)
		if (f->nodes[i].self && f->nodes[i].parent != 0)
			order[at[x->top[i]]++] = (uint32_t)i;
	qsort_r(roots, nroots, sizeof(*roots), root_cmp, f);

	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	lib_json_str_field(&w, "$schema",
			   "https://www.speedscope.app/file-format-schema.json");
	lib_json_str_field(&w, "exporter", EXPORTER);
	lib_json_str_field(&w, "name",
			   analysis_trace_command(j->trace)
				   ? analysis_trace_command(j->trace)
				   : "d9prof");
	lib_json_uint_field(&w, "activeProfileIndex", 0);
	lib_json_name(&w, "profiles");
	lib_json_array_begin(&w);
	for (i = 0; i < nroots; i++) {
		uint32_t r = roots[i];
		/* at[r] is now the end of r's bucket; it started at at[r - 1]'s
		 * end, i.e. at the previous node's */
		size_t end = at[r], start = r > 1 ? at[r - 1] : 0;

		err = write_profile(x, r, order + start, end - start, &w, res);
		if (err)
			goto out;
	}
	err = -ENOMEM;
	/* flame_intern() may grow the labels: only after the profiles */
	file = frame_files(j, f);
	if (!file)
		goto out;
	lib_json_array_end(&w);
	lib_json_name(&w, "shared");
	lib_json_object_begin(&w);
	lib_json_name(&w, "frames");
	lib_json_array_begin(&w);
	for (i = 0; i < x->nframes; i++) {
		uint32_t l = x->frames[i];

		lib_json_object_begin(&w);
		lib_json_str_field(&w, "name", flame_label_str(f, l));
		if (file[l].file)
			lib_json_str_field(&w, "file", file[l].file);
		if (file[l].line)
			lib_json_uint_field(&w, "line", file[l].line);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_object_end(&w);
	lib_json_object_end(&w);
	res->functions = x->nframes;
	err = lib_json_finish(&w);
out:
	free(file);
	free(roots);
	free(order);
	free(at);
	return err;
}

int analysis__export_speedscope(const struct join *j, const struct export_opts *o,
				FILE *out)
{
	struct flame_opts fo = {.by = o ? o->by : GROUP_AUTO,
				.span.spans = o ? o->spans : NULL};
	struct export_result res = {0};
	struct flame_result fr = {0};
	struct groups *g = NULL;
	struct flame *f = NULL;
	struct ss x = {.j = j};
	int err;

	if (!j || !o || !out || o->format != EXPORT_SPEEDSCOPE || o->offcpu)
		return -EINVAL;
	/* a profile a task, speedscope's list of them, up to a few: past
	 * that (a task a request), one a task name */
	if (fo.by == GROUP_AUTO)
		fo.by = j->ntasks > SPEEDSCOPE_TASKS ? GROUP_NAME : GROUP_TASK;
	res.by = fo.by;
	x.period = analysis_period_ns(j->trace);
	if (!(x.period > 0)) {
		x.period = 1e9 / 999;
		res.period_guessed = 1;
	}
	err = analysis_flame_build(j, &fo, &g, &f, &fr);
	if (err)
		goto out;
	x.f = f;
	res.samples = fr.samples;
	res.weight = fr.weight;
	err = write_file(&x, f, out, &res);
	if (!err && !res.samples)
		err = -ENODATA;
out:
	if (o && o->result)
		*o->result = res;
	free(x.top);
	free(x.frame_of);
	free(x.frames);
	free(x.path);
	flame__free(f);
	groups__free(g);
	return err;
}
