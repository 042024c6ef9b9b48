// SPDX-License-Identifier: MIT
/*
 * perfmap.c - names of JIT code from /tmp/perf-PID.map, for addresses in
 * no file mapping, and the pid a target knows itself by.
 *
 * A JIT (V8, JVM agents, LuaJIT, ...) that wants its code named writes
 * /tmp/perf-PID.map, one line per code region: "START SIZE name", START
 * and SIZE in hex (with or without 0x), PID as the process sees itself
 * (its pid in its own namespace: the last NSpid). Regions may be reused:
 * a later line wins over an earlier one it overlaps.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/search.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

static int cmp_jit(const void *pa, const void *pb)
{
	const struct perfmap_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

pid_t symbol_inner_pid(pid_t pid)
{
	char path[64], line[256];
	long v, last = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *e;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;; p = e) {
			v = strtol(p, &e, 10);
			if (e == p)
				break;
			last = v;
		}
		break;
	}
	fclose(f);
	return (pid_t)last;
}

void perfmap_init(struct perfmap *pm, pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(pm->path, sizeof(pm->path), "/tmp/perf-%d.map",
		 (int)symbol_inner_pid(pid));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	pm->uid = stat(path, &st) ? 0 : st.st_uid;
}

/* Bytes of /tmp/perf-PID.map read at most. */
#define JIT_MAP_MAX (256u << 20)

void perfmap_release(struct perfmap *pm)
{
	free(pm->text);
	free(pm->syms);
	pm->text = NULL;
	pm->syms = NULL;
	pm->n = pm->cap = 0;
	pm->state = 0;
}

static void load(struct perfmap *pm, struct symbolizer *s)
{
	char used[PATH_MAX + 32], *text, *line, *next;
	struct stat st;
	size_t len;
	uint32_t lineno = 0;
	int fd;

	pm->state = 1;
	/* perf's rule: not through a link, a regular file of the target's
	 * owner or root (anyone may have put it in /tmp) */
	fd = symbolizer_open(s, pm->path, 1, used, sizeof(used));
	if (fd >= 0 && (fstat(fd, &st) || (st.st_uid && st.st_uid != pm->uid))) {
		close(fd);
		return;
	}
	/* a runaway map: the regions of its first JIT_MAP_MAX bytes */
	if (fd < 0 || symbol_read_fd(fd, JIT_MAP_MAX, &text, &len))
		return;
	pm->text = text;
	for (line = text; line < text + len; line = next) {
		unsigned long long start, size;
		char *e, *name;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = text + len;
		lineno++;
		start = strtoull(line, &e, 16);
		if (e == line || *e != ' ')
			continue;
		size = strtoull(e, &name, 16);
		if (name == e || *name != ' ' || !size || start + size < start)
			continue;
		while (*name == ' ')
			name++;
		if (!*name)
			continue;
		if (LIB_GROW(pm->syms, pm->cap, pm->n + 1))
			break;
		pm->syms[pm->n++] = (struct perfmap_sym){
			.start = start, .size = size, .name = name, .line = lineno};
	}
	if (pm->n)
		qsort(pm->syms, pm->n, sizeof(*pm->syms), cmp_jit);
}

/* How many regions before the last one starting at or below an address are
 * checked for one that covers it (overlaps are rare: reused code). */
#define JIT_LOOKBACK 64

const struct perfmap_sym *perfmap_find(struct perfmap *pm, struct symbolizer *s,
				       uint64_t addr)
{
	const struct perfmap_sym *best = NULL;
	size_t lo, k, stop;

	if (!pm->state)
		load(pm, s);
	lo = LIB_PARTITION_POINT(0, pm->n, m, pm->syms[m].start <= addr);
	stop = lo > JIT_LOOKBACK ? lo - JIT_LOOKBACK : 0;
	for (k = lo; k-- > stop;) {
		const struct perfmap_sym *j = &pm->syms[k];

		if (addr - j->start < j->size && (!best || j->line > best->line))
			best = j;
	}
	return best;
}
