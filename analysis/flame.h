/* SPDX-License-Identifier: MIT */
/*
 * flame.h - the flamegraph tree: built from the samples joined to polls
 * (flame_build.c), written folded (flame.c) or as an SVG (flame_svg.c).
 */
#ifndef D9_ANALYSIS_FLAME_H
#define D9_ANALYSIS_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/join.h"
#include "analysis/spans.h"
#include "lib/map.h"
#include "lib/strset.h"

struct groups;

/* A flamegraph under construction: a tree of frames with weights. Memory
 * grows with distinct stacks, not with samples. */
struct flame;

struct flame *flame__new(void);
/* Add @weight to the path @frames[0] (root) .. @frames[n-1] (leaf); n == 0
 * counts in the total only. Labels are copied. 0, -EINVAL or -ENOMEM. */
int flame__add(struct flame *f, const char *const *frames, size_t n, uint64_t weight);
uint64_t flame__total(const struct flame *f);
/* "root;...;leaf weight\n" lines, one per distinct path with weight
 * ending there, in byte order (as `LC_ALL=C sort`), as flamegraph.pl/
 * inferno/speedscope read them; a differential graph (analysis__flame_diff)
 * has two, "root;...;leaf base new\n", for each path with weight in
 * either. 0, -ENOMEM or -EIO. */
int flame__write_folded(const struct flame *f, FILE *out);
/* A self-contained interactive SVG (hover details, click to zoom, search
 * with a case toggle, reset) as wide as the window, with @title and
 * @subtitle (may be NULL); @unit names the weight ("samples", "us"; NULL =
 * "samples"). Long names lose their middle, keeping the function's own
 * name. A parent's children narrower than a pixel are drawn as one frame,
 * "N small frames"; merged frames narrower than 0.1 px are left out, so
 * the size is bounded whatever the number of stacks. All text is
 * XML-escaped (invalid UTF-8 and controls become '?'). 0, -ENOMEM or
 * -EIO. */
int flame__write_svg(const struct flame *f, FILE *out, const char *title,
		     const char *subtitle, const char *unit);
/* How flame__write_svg() draws @f. All zero, as flame__new() leaves it:
 * a flame graph (root at the bottom) in the warm CPU palette. */
struct flame_style {
	int offcpu;	  /* blue palette, the off-CPU convention */
	int reverse;	  /* icicle: root at the top, callees below */
	double sample_ns; /* CPU time a sample stands for: tooltips of a
			   * graph in samples say the time too; 0: not */
};
/* Copy @s into @f (NULL: back to the default). Only the SVG reads it. */
void flame__set_style(struct flame *f, const struct flame_style *s);
void flame__free(struct flame *f);

enum flame_format {
	FLAME_SVG = 0,
	FLAME_FOLDED = 1,
};

/* What analysis__flame() drew, for the CLI to report. */
struct flame_result {
	uint64_t samples; /* samples kept */
	uint64_t weight;  /* their weight (the graph's total) */
	uint64_t stacks;  /* distinct (root, stack) pairs */
};

struct flame_opts {
	enum group_by by;     /* root frames (GROUP_THREAD: samples outside
			       * polls too, under their thread) */
	uint64_t min_poll_ns; /* > 0: keep only samples inside polls that
			       * lasted at least this long */
	enum flame_format format;
	const char *title;	     /* NULL: a default naming the trace */
	int reverse;		     /* SVG: icicle, root on top */
	struct flame_result *result; /* out, filled if non-NULL */
	struct span_filter span;     /* only samples taken inside it; its
				      * spans are also GROUP_SPAN's */
};

#define FNODE_NONE UINT32_MAX

struct fnode {
	uint32_t label;	 /* interned label id */
	uint32_t parent; /* FNODE_NONE for the root */
	uint32_t child;	 /* first child, FNODE_NONE if a leaf */
	uint32_t next;	 /* next sibling, unordered */
	uint64_t total;	 /* weight of this frame and everything above */
	uint64_t self;	 /* weight of paths that end here */
};

struct flame {
	struct fnode *nodes; /* nodes[0] is the root ("all") */
	size_t nnodes, nodes_cap;

	struct lib_strset labels; /* each label once; fnode.label is an id */

	struct lib_map edges; /* (parent << 32 | label) -> child node */

	/* depth-1 frames are task roots ("task N name", "[no poll]"): the
	 * SVG gives them their own palette */
	int task_roots;
	/* nodes were added by flame_run_add(), which skips the edge map:
	 * rebuild it before the next flame_add_ids() */
	int edges_stale;
	/* palette and orientation of the SVG (flame__set_style()) */
	struct flame_style style;
	/* a differential graph: the base profile's weights per node
	 * (flame_merge_base()), NULL otherwise; folded output then has two
	 * counts a line */
	struct fcount *base;
	/* the SVG asks this for each frame's colour and the end of its
	 * tooltip instead of the palette, if set (flame_diff.c) */
	void (*paint)(const struct flame *f, uint32_t node, int rgb[3], char *tip,
		      size_t len);
	const void *paint_ctx;
};

struct fcount {
	uint64_t total; /* weight of this frame and everything above */
	uint64_t self;	/* weight of paths that end here */
};

/* Bulk loading without hashing: the previous path and its nodes. */
struct flame_run {
	uint32_t *ids;
	uint32_t *nodes;
	size_t n, cap;
};

static inline const char *flame_label_str(const struct flame *f, uint32_t id)
{
	return lib_strset_str(&f->labels, id);
}

/* Intern @s (of @len bytes): its label id in *@id. 0, -ENOMEM or -EOVERFLOW. */
int flame_intern(struct flame *f, const char *s, size_t len, uint32_t *id);
/* flame__add() with interned label ids; the path's last node in *@leaf
 * (0 = the root, for n == 0) if @leaf is non-NULL. */
int flame_add_ids(struct flame *f, const uint32_t *ids, size_t n, uint64_t weight,
		  uint32_t *leaf);
/* Add a path to a flame that @r has filled alone so far, paths coming so
 * that those with a common prefix are contiguous (any trie pre-order):
 * then a path shares nodes only with the previous one, and everything
 * below the point where they part is new, so no lookups are needed. */
int flame_run_add(struct flame *f, struct flame_run *r, const uint32_t *ids, size_t n,
		  uint64_t weight);
void flame_run_release(struct flame_run *r);
/* Give @f the weights of @base, frame for frame (a path matches by its
 * labels), in f->base: paths only in @base get nodes of weight 0 in @f,
 * which the SVG leaves out. 0, -ENOMEM or -EOVERFLOW. */
int flame_merge_base(struct flame *f, const struct flame *base);

/* Intern the root label "task ID name" ("task ID" if unnamed). */
int analysis_task_root(struct flame *f, const struct task_stat *ts, uint32_t *id);

/* The tree analysis__flame() draws, built for @o (its format, title and
 * result left aside): the groups in *@gp and the tree in *@fp, both the
 * caller's to free; what it holds in *@rp (also on failure). 0, -ENOENT
 * (@o->sel keeps no task), -ENOMEM or a walk's error. (flame_build.c) */
int analysis_flame_build(const struct join *j, const struct flame_opts *o,
			 struct groups **gp, struct flame **fp, struct flame_result *rp);

#endif /* D9_ANALYSIS_FLAME_H */
