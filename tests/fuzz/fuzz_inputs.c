// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: reading several inputs as one trace
 * (trace__read_paths(): several -i files, or a directory of them, their
 * segments in time order, copies skipped, gaps noted), then what views
 * show of the result (info, report, polls, flame folded). The first byte
 * picks the read; the rest is up to four files joined by FUZZ_NEXT
 * (seeds: segments of one recording, in or out of order, overlapping,
 * with a gap, and two recordings):
 *
 *   bits 0-1  read flags, as fuzz_trace's
 *   bit  2    --from/--to: the middle third of what the segments cover
 *   bit  3    the files are one directory's (a.d9, b.data, c.d9, d.d9,
 *             with a hidden .e.d9.tmp and a notes.txt it must skip)
 *   bit  4    the first file again, as one more -i (a copy to skip)
 *   bit  5    JSON for info and report
 *
 * The directories are made once (one per number of files, their entries
 * symbolic links to the memfds) under $TMPDIR or /tmp and removed at
 * exit; a crash leaves them.
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include <limits.h>
#include <sys/stat.h>

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"

#define NFILES 4

static int fd[NFILES];
static char path[NFILES][64];
static char top[PATH_MAX], dir[NFILES][PATH_MAX];
static FILE *out;
static const char *const names[NFILES] = {"a.d9", "b.data", "c.d9", "d.d9"};
static const char *const skipped[] = {".e.d9.tmp", "notes.txt"};

static void join_path(char *buf, size_t len, const char *a, const char *b)
{
	if ((size_t)snprintf(buf, len, "%s/%s", a, b) >= len)
		abort();
}

static void cleanup(void)
{
	char p[PATH_MAX + 16];

	for (int n = 0; n < NFILES; n++) {
		for (int i = 0; i <= n; i++) {
			join_path(p, sizeof(p), dir[n], names[i]);
			unlink(p);
		}
		for (size_t i = 0; i < sizeof(skipped) / sizeof(*skipped); i++) {
			join_path(p, sizeof(p), dir[n], skipped[i]);
			unlink(p);
		}
		rmdir(dir[n]);
	}
	rmdir(top);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char p[PATH_MAX + 16], name[16];

	(void)argc;
	(void)argv;
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "fuzz-inputs-%d", i);
		fd[i] = fuzz_memfd(name, path[i], sizeof(path[i]));
	}
	out = fuzz_discard_stream();
	join_path(top, sizeof(top), tmp && *tmp ? tmp : "/tmp", "d9fuzz-inputs.XXXXXX");
	if (!mkdtemp(top))
		abort();
	atexit(cleanup);
	/* dir[n]: the first n + 1 files, and two that are not traces */
	for (int n = 0; n < NFILES; n++) {
		snprintf(name, sizeof(name), "%d", n + 1);
		join_path(dir[n], sizeof(dir[n]), top, name);
		if (mkdir(dir[n], 0700))
			abort();
		for (int i = 0; i <= n; i++) {
			join_path(p, sizeof(p), dir[n], names[i]);
			if (symlink(path[i], p))
				abort();
		}
		for (size_t i = 0; i < sizeof(skipped) / sizeof(*skipped); i++) {
			join_path(p, sizeof(p), dir[n], skipped[i]);
			if (symlink(path[0], p))
				abort();
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t = NULL;
	struct join *j = NULL;
	struct offcpu *oc = NULL;
	struct delays *d = NULL;
	const uint8_t *part[NFILES];
	const char *paths[NFILES + 1];
	size_t len[NFILES], n, np = 0;
	const char *msg;
	unsigned int b;
	int json;

	if (!size)
		return 0;
	b = data[0];
	json = (b & 32) != 0;
	n = fuzz_split(data + 1, size - 1, part, len, NFILES);
	for (size_t i = 0; i < n; i++)
		if (fuzz_memfd_set(fd[i], part[i], len[i]))
			return 0;
	if (b & 8)
		paths[np++] = dir[n - 1];
	else
		for (size_t i = 0; i < n; i++)
			paths[np++] = path[i];
	if (b & 16)
		paths[np++] = path[0];
	struct trace_read_opts ro = {.flags = fuzz_read_flags(b)};

	if (b & 4) {
		ro.window = fuzz_window;
		ro.ctx = &(struct fuzz_part){1, 2, 3};
	}
	if (trace__read_paths(paths, np, &ro, &t, &msg))
		return 0;
	analysis__info(t, &(struct info_opts){.json = json}, out);
	if (!join__new(t, JOIN_POLL_LIST, &j) && !offcpu__new(j, 0, &oc) &&
	    !delays__new(j, NULL, &d)) {
		struct flame_opts fo = {.format = FLAME_FOLDED};
		struct polls_opts po = {.limit = 5};

		if (ro.window)
			j->origin = t->segments ? t->segments[0].start : 0;
		analysis__report(oc, d, NULL, NULL, json, out);
		analysis__polls(oc, &po, out);
		analysis__flame(j, &fo, out);
	}
	fuzz_views_free(t, j, oc, d, out);
	return 0;
}
