// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `d9prof flame --diff`, two traces compared as
 * analysis__flame_diff() compares them, after task_sel_match() chose the
 * base's tasks. The first byte picks what the command line would; the rest
 * is the new trace, FUZZ_NEXT, then the base (seeds: a flags byte and two
 * traces so joined), or with bit 7 one trace compared with itself in two
 * windows (--base-from/--base-to):
 *
 *   bit  0    --format folded (else svg; then an odd size: --reverse)
 *   bits 1-2  --by: default, task, name, thread
 *   bit  3    read as analysis does (samples and events left on disk)
 *   bits 4-5  --task: none, a task's id, its name, an id no task has
 *   bit  6    --min-poll of 1 us to 2 ms (by the input's size)
 *   bit  7    one trace: the base its first tenth, the new one the rest
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/views.h"

static int fd[2] = {-1, -1};
static char path[2][64];
static FILE *out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fd[0] = fuzz_memfd("fuzz-diff-new", path[0], sizeof(path[0]));
	fd[1] = fuzz_memfd("fuzz-diff-base", path[1], sizeof(path[1]));
	out = fuzz_discard_stream();
	return 0;
}

static int open_side(const char *p, unsigned int flags, const struct fuzz_part *w,
		     const struct join_keep *keep, struct trace **t, struct join **j)
{
	struct trace_read_opts ro = {.flags = flags};
	const char *paths[] = {p};
	const char *msg;
	int err;

	if (w) {
		ro.window = fuzz_window;
		ro.ctx = (void *)w;
	}
	err = trace__read_paths(paths, 1, &ro, t, &msg);
	if (!err)
		err = join__new_keep(*t, 0, keep, j);
	/* times count from the whole trace's start, as with --from */
	if (!err && w)
		(*j)->origin = (*t)->segments ? (*t)->segments[0].start : 0;
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_part base_w = {0, 1, 10}, new_w = {1, 10, 10};
	struct trace *t = NULL, *bt = NULL;
	struct join *j = NULL, *bj = NULL;
	struct flame_diff_result res;
	struct flame_diff_opts d = {
		.cur_name = "new.data", .base_name = "base.data", .result = &res};
	struct flame_opts *fo = &d.cur;
	const uint8_t *part[2];
	size_t len[2];
	static const struct join_keep sampled = {.min_ns = UINT64_MAX, .sampled = 1};
	const struct join_keep *keep;
	unsigned int b, rflags;
	int one;

	if (!size)
		return 0;
	b = data[0];
	one = (b & 128) != 0;
	if (one) {
		part[0] = data + 1;
		len[0] = size - 1;
	} else if (fuzz_split(data + 1, size - 1, part, len, 2) < 2) {
		return 0;
	}
	if (fuzz_memfd_set(fd[0], part[0], len[0]) ||
	    (!one && fuzz_memfd_set(fd[1], part[1], len[1])))
		return 0;
	fo->format = b & 1 ? FLAME_FOLDED : FLAME_SVG;
	fo->reverse = !(b & 1) && (size & 1);
	fo->by = (enum group_by)((b >> 1) & 3);
	rflags = b & 8 ? TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS : 0;
	if (b & 64)
		fo->min_poll_ns = 1000 * (1 + size % 2000);
	/* as cmd_flame.c's diff_flame() joins them */
	keep = fo->by == GROUP_THREAD || fo->min_poll_ns ? &sampled : NULL;
	if (open_side(path[0], rflags, one ? &new_w : NULL, keep, &t, &j) ||
	    open_side(path[one ? 0 : 1], rflags, one ? &base_w : NULL, keep, &bt, &bj))
		goto out;
	fuzz_pick_task(j, (b >> 4) & 3, size);
	/* the command stops where this fails; the library must not care */
	task_sel_match(j, bj);
	analysis__flame_diff(j, bj, &d, out);
out:
	join__free(bj);
	join__free(j);
	trace__free(bt);
	trace__free(t);
	clearerr(out);
	return 0;
}
