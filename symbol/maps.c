// SPDX-License-Identifier: MIT
/*
 * maps.c - the symbolizer's table of the target's executable mappings:
 * sorted by start, binary-searched, a new mapping replacing those it
 * overlaps (the address space was reused), each pointing at its object by
 * index; and the text of /proc/PID/maps, line by line. It reads nothing
 * and opens no object: symbolize.c, above it, does (its
 * symbolizer__add_mapping() opens a mapping's object and inserts it here,
 * symbolizer__refresh() reads /proc/PID/maps, a miss re-reads it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "lib/grow.h"
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

const struct mapping *symbolizer_map_at(const struct symbolizer *s, uint64_t addr)
{
	size_t i = map_search(s, addr);

	return i < s->nmaps && s->maps[i].start <= addr ? &s->maps[i] : NULL;
}

int symbol_map_path(const char *path, char *name, size_t namesz, int *deleted)
{
	static const char deleted_sfx[] = " (deleted)";
	const size_t sfx = sizeof(deleted_sfx) - 1;
	size_t len;

	if (!kept_path(path))
		return -ENOENT;
	len = strlen(path);
	if (len >= namesz)
		return -EINVAL;
	memcpy(name, path, len + 1);
	*deleted = 0;
	if (len > sfx && !strcmp(name + len - sfx, deleted_sfx)) {
		name[len - sfx] = '\0';
		*deleted = 1;
	}
	return 0;
}

int symbolizer_has_map(const struct symbolizer *s, uint64_t start, uint64_t end,
		       uint64_t pgoff, uint64_t ino, const char *path)
{
	size_t i = map_search(s, start);

	return i < s->nmaps && s->maps[i].start == start && s->maps[i].end == end &&
	       s->maps[i].pgoff == pgoff && !strcmp(s->objs[s->maps[i].obj].path, path) &&
	       (!ino || s->objs[s->maps[i].obj].ino == ino);
}

int symbolizer_insert_map(struct symbolizer *s, uint64_t start, uint64_t end,
			  uint64_t pgoff, uint32_t obj)
{
	struct mapping m = {
		.start = start,
		.end = end,
		.pgoff = pgoff,
		.obj = obj,
	};
	size_t i = map_search(s, start), j;

	/* a new mapping over old ones replaces them: the address space
	 * was reused (munmap/dlclose then mmap) and the newest wins */
	j = i;
	while (j < s->nmaps && s->maps[j].start < end)
		j++;
	if (j == i && LIB_GROW(s->maps, s->capmaps, s->nmaps + 1))
		return -ENOMEM;
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
