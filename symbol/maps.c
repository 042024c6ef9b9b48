// SPDX-License-Identifier: MIT
/*
 * maps.c - the symbolizer's table of the target's executable mappings:
 * sorted by start, binary-searched, a new mapping replacing those it
 * overlaps (the address space was reused), each pointing at its object
 * (symbolize.c). Filled from /proc/PID/maps, read at creation, by
 * symbolizer__refresh() and again on a miss (rate-limited), and from
 * PERF_RECORD_MMAP2 through symbolizer__add_mapping().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "lib/search.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

/* 1 if the symbolizer keeps a mapping of @path: a file, or the vDSO; not
 * [vsyscall] (a fixed legacy page), [heap], [stack], nor anonymous code,
 * "" in maps and "//anon" in a PERF_RECORD_MMAP2 (a JIT's code is named
 * by its perf map, in no mapping). */
static int kept_path(const char *path)
{
	return (path[0] == '/' && path[1] != '/') || !strcmp(path, "[vdso]");
}

/* Index of the first mapping with end > @addr. */
static size_t map_search(const struct symbolizer *s, uint64_t addr)
{
	return LIB_PARTITION_POINT(0, s->nmaps, m, s->maps[m].end <= addr);
}

/* How often an address in no known mapping may re-read the maps. */
#define MISS_REFRESH_NS 50000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* At most every MISS_REFRESH_NS: a process that has just exec'd under
 * `record -- CMD`, or a library it loaded since, is found while its
 * samples are being unwound, not only at the next periodic refresh. */
const struct mapping *symbolizer_find_map(struct symbolizer *s, uint64_t addr)
{
	size_t i = map_search(s, addr);
	uint64_t now;

	if (i < s->nmaps && s->maps[i].start <= addr)
		return &s->maps[i];
	if (s->gone || (now = now_ns()) - s->miss_refresh_ns < MISS_REFRESH_NS)
		return NULL;
	s->miss_refresh_ns = now;
	if (symbolizer__refresh(s) == -ESRCH)
		s->gone = 1;
	i = map_search(s, addr);
	return i < s->nmaps && s->maps[i].start <= addr ? &s->maps[i] : NULL;
}

int symbolizer__add_mapping(struct symbolizer *s, uint64_t start, uint64_t end,
			    uint64_t pgoff, uint64_t dev, uint64_t ino, const char *path)
{
	static const char deleted_sfx[] = " (deleted)";
	const size_t sfx = sizeof(deleted_sfx) - 1;
	char name[PATH_MAX];
	struct mapping m;
	size_t i, j, len;
	int deleted = 0;
	long obj;

	if (!s || !path || !*path || end <= start)
		return -EINVAL;
	if (!kept_path(path))
		return -ENOENT;
	len = strlen(path);
	if (len >= sizeof(name))
		return -EINVAL;
	memcpy(name, path, len + 1);
	if (len > sfx && !strcmp(name + len - sfx, deleted_sfx)) {
		name[len - sfx] = '\0';
		deleted = 1;
	}
	path = name;
	i = map_search(s, start);
	/* already known (refresh sees the same mappings again) */
	if (i < s->nmaps && s->maps[i].start == start && s->maps[i].end == end &&
	    s->maps[i].pgoff == pgoff && !strcmp(s->objs[s->maps[i].obj].path, path) &&
	    (!ino || s->objs[s->maps[i].obj].ino == ino))
		return 0;

	obj = symbolizer_object(s, path, dev, ino, deleted, start, end);
	if (obj < 0)
		return (int)obj;
	m = (struct mapping){
		.start = start,
		.end = end,
		.pgoff = pgoff,
		.obj = (uint32_t)obj,
	};

	/* a new mapping over old ones replaces them: the address space
	 * was reused (munmap/dlclose then mmap) and the newest wins */
	j = i;
	while (j < s->nmaps && s->maps[j].start < end)
		j++;
	if (j == i && s->nmaps == s->capmaps) {
		size_t ncap = s->capmaps ? 2 * s->capmaps : 64;
		struct mapping *nm = realloc(s->maps, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		s->maps = nm;
		s->capmaps = ncap;
	}
	if (j == i) {
		memmove(&s->maps[i + 1], &s->maps[i], (s->nmaps - i) * sizeof(m));
		s->nmaps++;
	} else if (j > i + 1) {
		memmove(&s->maps[i + 1], &s->maps[j], (s->nmaps - j) * sizeof(m));
		s->nmaps -= j - i - 1;
	}
	s->maps[i] = m;
	s->maps_gen++;
	return 0;
}

static int read_file(const char *path, char **out, size_t *outlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : symbol_read_fd(fd, SIZE_MAX, out, outlen);
}

int symbolizer__refresh(struct symbolizer *s)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int err;

	if (!s->pid)
		return -ESRCH;
	perfmap_release(
		&s->perfmap); /* the JIT may have written more: read again on need */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	err = read_file(path, &buf, &len);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err;
	err = symbolizer_parse_maps(s, buf, len);
	free(buf);
	return err;
}

int symbol_maps_line(const char *line, struct symbol_maps_line *out)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int major, minor;
	char perms[8];
	int n = 0;

	/* "start-end perms offset dev inode   path" */
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
		   &major, &minor, &ino, &n) < 7 ||
	    !n)
		return -EINVAL;
	*out = (struct symbol_maps_line){
		.start = start,
		.end = end,
		.pgoff = pgoff,
		.dev = makedev(major, minor),
		.ino = ino,
		.path = line + n,
	};
	if (strlen(perms) < 3 || perms[2] != 'x')
		return -ENOENT;
	if (!kept_path(out->path))
		return -ENOENT;
	return 0;
}

int symbolizer_parse_maps(struct symbolizer *s, char *buf, size_t len)
{
	char *line, *next;
	int err = 0;

	for (line = buf; line < buf + len; line = next) {
		struct symbol_maps_line m;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = '\0';
		else
			next = buf + len;
		if (symbol_maps_line(line, &m))
			continue;
		err = symbolizer__add_mapping(s, m.start, m.end, m.pgoff, m.dev, m.ino,
					      m.path);
		if (err == -ENOMEM)
			break;
		err = 0;
	}
	return err;
}

int symbolizer__module_map(const struct symbolizer *s, size_t i, size_t k,
			   uint64_t *start, uint64_t *end, uint64_t *pgoff)
{
	size_t m;

	if (!s || i >= s->nobjs)
		return -EINVAL;
	for (m = 0; m < s->nmaps; m++) /* sorted by start */
		if (s->maps[m].obj == i && !k--) {
			*start = s->maps[m].start;
			*end = s->maps[m].end;
			*pgoff = s->maps[m].pgoff;
			return 0;
		}
	return -ENOENT;
}
