// SPDX-License-Identifier: MIT
/*
 * tracefs.c - where tracefs is, and what a tracepoint's format says (see
 * tracefs.h). Mounting is the only thing here that changes the machine:
 * only when asked, only as root, only where nothing is mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "record/tracefs.h"

int tracefs_find_in(const char *mounts, char *path, size_t len)
{
	const char *line = mounts;
	char debugfs[256] = "";

	while (line && *line) {
		char dev[256], dir[256], type[64];
		const char *nl = strchr(line, '\n');

		if (sscanf(line, "%255s %255s %63s", dev, dir, type) == 3) {
			if (!strcmp(type, "tracefs")) {
				snprintf(path, len, "%s", dir);
				return 0;
			}
			if (!strcmp(type, "debugfs") && !debugfs[0])
				snprintf(debugfs, sizeof(debugfs), "%s", dir);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (debugfs[0]) {
		/* older kernels: tracefs shows up inside debugfs */
		snprintf(path, len, "%s/tracing", debugfs);
		return 0;
	}
	return -ENOENT;
}

int tracepoint_field(const char *format, const char *field, unsigned int *offset,
		     unsigned int *size, int *is_signed)
{
	size_t flen = strlen(field);
	const char *p = format;

	/* "\tfield:<type> <name>[<n>];\toffset:<o>;\tsize:<s>;\tsigned:<0|1>;" */
	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';'), *name;
		unsigned int o, s;
		int sg = 0;

		if (!semi)
			return -EINVAL;
		name = semi;
		while (name > p && name[-1] != ' ' && name[-1] != '\t')
			name--;
		/* an array field is "name[16]" */
		if ((size_t)(semi - name) >= flen && !strncmp(name, field, flen) &&
		    (name[flen] == ';' || name[flen] == '[')) {
			const char *q = strstr(semi, "offset:"),
				   *r = strstr(semi, "size:");
			const char *sgp = strstr(semi, "signed:");
			const char *eol = strchr(semi, '\n');

			if (!q || !r || (eol && (q > eol || r > eol)) ||
			    sscanf(q, "offset:%u", &o) != 1 ||
			    sscanf(r, "size:%u", &s) != 1)
				return -EINVAL;
			if (sgp && (!eol || sgp < eol))
				sscanf(sgp, "signed:%d", &sg);
			*offset = o;
			*size = s;
			if (is_signed)
				*is_signed = sg;
			return 0;
		}
		p = semi;
	}
	return -ENOENT;
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return 0;
}

int tracepoint_read(const char *dir, const char *name, uint64_t *id, char *fmt,
		    size_t len, char *why, size_t whylen)
{
	char path[192];
	unsigned long long v;
	int err;

	snprintf(path, sizeof(path), "%s/events/%s/id", dir, name);
	err = read_text(path, fmt, len);
	if (err || sscanf(fmt, "%llu", &v) != 1) {
		snprintf(why, whylen, "cannot read '%s': %s", path,
			 strerror(err ? -err : EINVAL));
		return err ? err : -EINVAL;
	}
	*id = v;
	snprintf(path, sizeof(path), "%s/events/%s/format", dir, name);
	err = read_text(path, fmt, len);
	if (err)
		snprintf(why, whylen, "cannot read '%s': %s", path, strerror(-err));
	return err;
}

unsigned int tracepoint_offset(const char *format, const char *name, unsigned int size)
{
	unsigned int off, sz;

	if (tracepoint_field(format, name, &off, &sz, NULL) || sz != size)
		return 0;
	return off;
}

int tracefs_find(int may_mount, char *path, size_t len, int *mounted, char *why,
		 size_t whylen)
{
	static const char mnt[] = "/sys/kernel/tracing";
	char mounts[65536];
	int err;

	*mounted = 0;
	err = read_text("/proc/mounts", mounts, sizeof(mounts));
	if (!err)
		err = tracefs_find_in(mounts, path, len);
	if (err == -ENOENT && may_mount && geteuid() == 0) {
		if (mount("tracefs", mnt, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) == 0) {
			snprintf(path, len, "%s", mnt);
			*mounted = 1;
			return 0;
		}
		err = -errno;
		snprintf(why, whylen,
			 "tracefs is not mounted and mounting it at %s failed: %s", mnt,
			 strerror(errno));
		return err;
	}
	if (err) {
		snprintf(why, whylen,
			 "tracefs is not mounted (mount -t tracefs "
			 "nodev /sys/kernel/tracing as root)");
		return -ENOENT;
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int tracepoint_tid_filter(const char *field, uint32_t *tids, size_t n, char *buf,
			  size_t len)
{
	size_t i, k, nr = 0;
	uint32_t(*r)[2];
	int need;

	if (!n || len < 2)
		return -EINVAL;
	qsort(tids, n, sizeof(*tids), u32_cmp);
	r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (nr && tids[i] <= r[nr - 1][1] + 1) {
			if (tids[i] > r[nr - 1][1])
				r[nr - 1][1] = tids[i];
			continue;
		}
		r[nr][0] = r[nr][1] = tids[i];
		nr++;
	}
	/* threads created later get higher tids: the last range stays open.
	 * Too long for the kernel: merge the ranges closest together (the
	 * tids let in between are dropped by the caller) */
	for (;;) {
		size_t at = 0, best = 0;

		for (k = 0; k < nr; k++) {
			need = k + 1 == nr ? snprintf(buf + at, len - at, "%s%s>=%u",
						      k ? "||" : "", field, r[k][0])
			       : r[k][0] == r[k][1]
				       ? snprintf(buf + at, len - at, "%s%s==%u",
						  k ? "||" : "", field, r[k][0])
				       : snprintf(buf + at, len - at,
						  "%s(%s>=%u&&%s<=%u)", k ? "||" : "",
						  field, r[k][0], field, r[k][1]);
			if (need < 0 || (size_t)need >= len - at)
				break;
			at += (size_t)need;
		}
		if (k == nr)
			break;
		if (nr == 1) {
			free(r);
			return -E2BIG;
		}
		for (k = 1; k + 1 < nr; k++)
			if (r[k + 1][0] - r[k][1] < r[best + 1][0] - r[best][1])
				best = k;
		r[best][1] = r[best + 1][1];
		memmove(&r[best + 1], &r[best + 2], (nr - best - 2) * sizeof(*r));
		nr--;
	}
	free(r);
	return 0;
}
