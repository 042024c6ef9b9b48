// SPDX-License-Identifier: MIT
/*
 * files.c - how the symbolizer opens and reads the target's files: by the
 * path the target sees (inside its root, even a container's), a regular
 * file only, never blocking on one (a FIFO planted at a path), and read
 * whole up to a bound. It calls nothing else of symbol/: the objects'
 * files, /proc/PID/maps and /tmp/perf-PID.map are all read through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/grow.h"
#include "symbol/symbolize_int.h"

/* With RESOLVE_IN_ROOT even absolute symlinks inside a container resolve
 * inside it, and the root fd taken at symbolizer__new keeps working after
 * the target has exited. */
int symbolizer_open(struct symbolizer *s, const char *path, int nofollow, char *used,
		    size_t usedsz)
{
	/* never blocks (a FIFO planted at the path would hold the recorder
	 * forever), and only a regular file is read */
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0);
	struct stat st;
	int fd = -1;

	snprintf(used, usedsz, "%s", path);
	if (s->rootfd >= 0 && !s->same_root) {
		struct open_how how = {
			.flags = (uint64_t)flags,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int)syscall(SYS_openat2, s->rootfd, path, &how, sizeof(how));
		if (fd < 0 && (errno == ENOSYS || errno == EINVAL || errno == E2BIG)) {
			/* pre-5.6 kernel: the magic link works while the
			 * target lives */
			char p[PATH_MAX];

			if (snprintf(p, sizeof(p), "/proc/%d/root%s", (int)s->pid, path) <
			    (int)sizeof(p))
				fd = open(p, flags);
		}
	}
	if (fd < 0)
		fd = open(path, flags);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int symbol_read_fd(int fd, size_t max, char **out, size_t *outlen)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int err = 0;

	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < max) {
		ssize_t n;

		if (LIB_GROW(buf, cap, len + 4096)) {
			err = -ENOMEM;
			break;
		}
		n = read(fd, buf + len,
			 cap - len - 1 < max - len ? cap - len - 1 : max - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}
