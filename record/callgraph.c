// SPDX-License-Identifier: MIT
/*
 * callgraph.c - how much user stack a CPU sample copies: --call-graph.
 *
 * The kernel's callchain follows frame pointers; the recorder CFI-unwinds
 * the sample's stack copy over whatever frames it covers and joins that to
 * the kernel's chain (ustack.h). fp copies 512 bytes, enough for the one
 * step over a frameless leaf or libc's memcpy; dwarf copies SIZE bytes
 * (8192 by default, as perf) so that code built without frame pointers is
 * unwound by its CFI all the way up. auto, the default, looks at the
 * target's own modules (its executable and the libraries outside the
 * system's directories: libc and the like are the leaves the fp copy
 * already covers) and takes dwarf where one lacks frame pointers
 * (symbol_frame_pointers). A command not yet exec'd has the recorder's
 * maps: its program file is judged instead (its libraries are not).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/proc.h"
#include "record/record.h"
#include "symbol/framepointer.h"

/* Judge @path (the target's view of it through @root), adding its name
 * to @c's list when it lacks frame pointers. */
static void judge(struct record_callgraph *c, const char *root, const char *path)
{
	char at[PATH_MAX + 32];
	const char *base = strrchr(path, '/');
	int r;

	snprintf(at, sizeof(at), "%s%s", root, path);
	r = symbol_frame_pointers(at, NULL, NULL);
	if (r < 0 && root[0])
		r = symbol_frame_pointers(path, NULL, NULL);
	base = base ? base + 1 : path;
	c->modules++;
	if (r == 0) {
		size_t n = strlen(c->without);

		c->nwithout++;
		snprintf(c->without + n, sizeof(c->without) - n, "%s%s", n ? ", " : "",
			 base);
	} else if (r < 0) {
		size_t n = strlen(c->unknown);

		snprintf(c->unknown + n, sizeof(c->unknown) - n, "%s%s", n ? ", " : "",
			 base);
	}
}

struct judge_ctx {
	struct record_callgraph *c;
	char root[64];
};

static int judge_file(void *ctx, const char *path)
{
	struct judge_ctx *j = ctx;

	judge(j->c, j->root, path);
	return 0;
}

int record_callgraph_choose(pid_t pid, const char *exe, struct record_callgraph *c)
{
	char path[PATH_MAX];
	struct judge_ctx j = {.c = c};
	int err;

	c->modules = c->nwithout = 0;
	c->without[0] = c->unknown[0] = '\0';
	if (exe) {
		if (!proc_which(exe, path, sizeof(path)))
			judge(c, "", path);
	} else {
		snprintf(j.root, sizeof(j.root), "/proc/%d/root", (int)pid);
		err = proc_for_each_own_file(pid, judge_file, &j);
		if (err)
			return err;
	}
	c->mode = c->nwithout ? RECORD_CALLGRAPH_DWARF : RECORD_CALLGRAPH_FP;
	c->bytes = c->nwithout ? RECORD_DWARF_STACK : RECORD_LEAF_STACK;
	return 0;
}

int record_callgraph_parse(const char *s, enum record_callgraph_mode *mode,
			   unsigned int *bytes)
{
	unsigned long long v;
	char *end;

	if (!strcmp(s, "auto") || !strcmp(s, "fp")) {
		*mode = s[0] == 'a' ? RECORD_CALLGRAPH_AUTO : RECORD_CALLGRAPH_FP;
		*bytes = 0;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ','))
		return -EINVAL;
	v = 0;
	if (s[5]) {
		errno = 0;
		v = strtoull(s + 6, &end, 10);
		if (errno || end == s + 6 || *end || !v || v % 8 || v > RECORD_MAX_STACK)
			return -EINVAL;
	}
	*mode = RECORD_CALLGRAPH_DWARF;
	*bytes = (unsigned int)v;
	return 0;
}
