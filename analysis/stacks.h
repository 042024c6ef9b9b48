/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - stacks as the views walk them: a stack's frames, its labels
 * and path, one id per drawn stack (stacks.c); the one frame a view names
 * for a stack, the application's own (site.c).
 */
#ifndef D9_ANALYSIS_STACKS_H
#define D9_ANALYSIS_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct flame;

/* 1 if frame @id is the system's, not the application's: the kernel, the
 * C library and its loader, the vDSO, the C++/gcc runtimes, the shim (by
 * module); Rust's std/core/alloc, tokio, mio, futures' executors, the
 * d9prof crate, glibc's internal names (by symbol). A bad id is. */
int analysis_frame_is_system(const struct trace *t, uint32_t id);
/* Is frame @id the d9prof shim's own code (libd9prof, its d9_ functions,
 * or code from its sources linked into the program)? Views draw it and
 * what it called (a page fault in its shared segment) as one frame,
 * ANALYSIS_SHIM_LABEL, so that no one reads it as the program's. */
int analysis_frame_is_shim(const struct trace *t, uint32_t id);
#define ANALYSIS_SHIM_LABEL "[d9prof shim]"
/* How many frames of @fr (@m, leaf first) from the leaf are the shim's:
 * up to its first frame from the root, with what it called */
size_t analysis_shim_frames(const struct trace *t, const uint32_t *fr, size_t m);
/* What a view names for stack @s: the innermost application frame in
 * *@frame and the call it made under it (the function of the leaf-most
 * user frame: the system call's wrapper) in *@under, or, where the call is
 * the application's own or no frame is, that call alone (*@under =
 * UINT32_MAX). With @raw_leaf (--frame leaf): the leaf-most user frame
 * alone, or with @cpu (a CPU sample's stack) the leaf. 0 if the stack is empty, else 1.
 */
int analysis_site(const struct trace *t, uint32_t s, int raw_leaf, int cpu,
		  uint32_t *frame, uint32_t *under);
/* "under <- frame" (e.g. "read <- slow_read"), or @frame's label alone. */
char *site_label(const struct trace *t, uint32_t frame, uint32_t under, char *buf,
		 size_t len);

/* Frames of stack @s, leaf first, in *@fr; 0 if the id or its bounds are
 * bad. */
size_t analysis_stack_frames(const struct trace *t, uint32_t s, const uint32_t **fr);
/* One id per stack as flame draws it: (*@canon)[s] is the first stack id
 * whose frames have stack s's labels, in order (addresses in the same
 * functions, as analysis_frame_label() names them, are one path). Views that pick
 * or share out "the hottest stack" count by it, so that they agree with
 * flame. Caller frees. 0 or -ENOMEM. */
int analysis_stack_canon(const struct trace *t, uint32_t **canon);
/* Stack @s as counted: @canon[s], or @s itself past its end (bad id). */
static inline uint32_t stack_canon(const uint32_t *canon, size_t n, uint32_t s)
{
	return canon && s < n ? canon[s] : s;
}

/* The distinct poll sites @t names (TRACE_META_POLL_SITE values
 * "MODULE\tNAME..."), at most @max (a bound on the work per frame: the
 * recorder writes at most 32 per segment), into @site; their number. */
#define ANALYSIS_POLL_SITES_MAX 64
size_t analysis_poll_sites(const struct trace *t, const char **site, size_t max);
/* The labels of stack @s (UINT32_MAX: none) leaf first into @lab, at
 * most @max: the shim's frames as one ANALYSIS_SHIM_LABEL, a label equal
 * to the one before it left out (inlined frames of one function); how
 * many. */
size_t analysis_stack_labels(const struct trace *t, uint32_t s, char (*lab)[256],
			     size_t max);
/* Label ids of stack @s root to leaf at (*ids)[at..], growing *ids (*cap
 * entries); the number of labels in *@n. @flab caches a label id per frame
 * id (t->nframes entries, UINT32_MAX = not yet). With @keep less than the
 * stack's depth (join__keep()), the frames below the @keep nearest the
 * leaf are one, ANALYSIS_RUNTIME_LABEL; from the first of the shim's
 * (analysis_frame_is_shim()) to the leaf, one ANALYSIS_SHIM_LABEL. 0 or
 * -ENOMEM. */
int analysis_stack_path(struct flame *f, const struct trace *t, uint32_t *flab,
			uint32_t s, uint32_t keep, uint32_t **ids, size_t *cap, size_t at,
			size_t *n);

#endif /* D9_ANALYSIS_STACKS_H */
