// SPDX-License-Identifier: MIT
/*
 * fuzz_io.h - what the trace fuzz targets share, made once per process:
 * memfds that stand for files on disk (the reader opens them by path,
 * /proc/self/fd/N, as it opens a file), a stream that discards what the
 * analyses print without a system call, the split of one input into
 * several files, and a time window over a trace's segments.
 *
 * Several files in one input are separated by FUZZ_NEXT: a token a
 * mutation keeps or breaks as a whole (a length prefix turns most
 * mutations of itself into a truncation), and one no trace holds by
 * chance. Seeds are files joined with it (run.sh).
 */
#ifndef D9_FUZZ_IO_H
#define D9_FUZZ_IO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "trace/trace.h"

#define FUZZ_NEXT     "\n--d9fuzz-next--\n"
#define FUZZ_NEXT_LEN (sizeof(FUZZ_NEXT) - 1)

static inline ssize_t fuzz_discard(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)n;
}

/* A stream that takes everything and keeps nothing; aborts if it cannot
 * be made (the target cannot run without it). */
static inline FILE *fuzz_discard_stream(void)
{
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = fuzz_discard});

	if (!f)
		abort();
	return f;
}

/* A memfd named @name and its path in @path; aborts on failure. */
static inline int fuzz_memfd(const char *name, char *path, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Make the file @fd hold @p[0..@n) and nothing else. 0, or -1. */
static inline int fuzz_memfd_set(int fd, const uint8_t *p, size_t n)
{
	if (ftruncate(fd, 0))
		return -1;
	return n && pwrite(fd, p, n, 0) != (ssize_t)n ? -1 : 0;
}

/* Cut @data at each FUZZ_NEXT into at most @max parts (the last one keeps
 * the rest, separators and all): their starts in @part, lengths in @len.
 * Returns the number of parts, >= 1 (@size 0 is one empty part). */
static inline size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **part,
				size_t *len, size_t max)
{
	size_t n = 0;

	while (n + 1 < max) {
		const uint8_t *s = memmem(data, size, FUZZ_NEXT, FUZZ_NEXT_LEN);

		if (!s)
			break;
		part[n] = data;
		len[n++] = (size_t)(s - data);
		size -= (size_t)(s - data) + FUZZ_NEXT_LEN;
		data = s + FUZZ_NEXT_LEN;
	}
	part[n] = data;
	len[n++] = size;
	return n;
}

/* A trace_read_opts.window: from @from / @of to @to / @of of the span the
 * segments cover (up to the last one's start if it was cut), as
 * --from/--to would pick them (ctx: a struct fuzz_part). */
struct fuzz_part {
	unsigned int from, to, of;
};

static inline int fuzz_window(void *ctx, const struct trace_segment *seg, size_t n,
			      uint64_t *from, uint64_t *to)
{
	const struct fuzz_part *w = ctx;
	uint64_t a = seg[0].start, b = a + 3;

	for (size_t i = 0; i < n; i++) {
		b = seg[i].start > b ? seg[i].start : b;
		b = seg[i].end > b ? seg[i].end : b;
	}
	*from = a + w->from * ((b - a) / w->of);
	*to = a + w->to * ((b - a) / w->of);
	return 0;
}

/* --task as a command gives it (join__select()), from bits of the input:
 * @how 0 all tasks, 1 a task by id, 2 by name, 3 an id no task has; the
 * task is picked by the input's @size, so that inputs that differ in
 * length try different ones. What a selection keeps nothing of, the views
 * must refuse (-ENOENT), whatever join__select() said. */
static inline void fuzz_pick_task(struct join *j, unsigned int how, size_t size)
{
	const struct task_stat *ts = j->ntasks ? &j->tasks[size % j->ntasks] : NULL;
	struct task_sel sel = {.on = how != 0};

	if (how == 1 && ts)
		sel.id = ts->task;
	else if (how == 2 && ts && ts->name)
		sel.name = ts->name;
	else if (how)
		sel.id = j->ntasks ? j->tasks[j->ntasks - 1].task + 1 : 1;
	join__select(j, &sel);
}

/* The read flags @b's bits 0-1 pick (fuzz_trace, fuzz_inputs): all,
 * neither samples nor events, no inlines, no samples. */
static inline unsigned int fuzz_read_flags(unsigned int b)
{
	static const unsigned int flags[] = {0,
					     TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
					     TRACE_READ_NO_INLINE, TRACE_READ_NO_SAMPLES};

	return flags[b & 3];
}

/* What a target of one input file makes once, in LLVMFuzzerInitialize():
 * the memfd @name its input is written to (static int fd), that file's
 * path (static char path[]) and the stream the views print to (static
 * FILE *out). One use a target, at file scope. */
#define FUZZ_ONE_FILE(name)                                                              \
	static int fd = -1;                                                              \
	static char path[64];                                                            \
	static FILE *out;                                                                \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                                \
	{                                                                                \
		(void)argc;                                                              \
		(void)argv;                                                              \
		fd = fuzz_memfd(name, path, sizeof(path));                               \
		out = fuzz_discard_stream();                                             \
		return 0;                                                                \
	}

/* Free what one input made (any of them NULL) and clear @out's error for
 * the next input. */
static inline void fuzz_views_free(struct trace *t, struct join *j, struct offcpu *oc,
				   struct delays *d, FILE *out)
{
	delays__free(d);
	offcpu__free(oc);
	join__free(j);
	trace__free(t);
	clearerr(out);
}

#endif /* D9_FUZZ_IO_H */
