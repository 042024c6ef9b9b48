// SPDX-License-Identifier: MIT
/*
 * command.c - what `record -- CMD` needs around the recording: the command
 * started stopped before its exec, so that sampling is armed before its
 * first instruction and a command that cannot run is known before anything
 * is written; and the output, opened (a previous one kept as .old) only
 * once the recording is sure to happen.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libprof/d9_segment.h"
#include "record/command.h"
#include "record/proc.h"
#include "trace/trace.h"

int record_cmd__start(struct record_cmd *c, char **argv, int wait_attach,
		      const char *const *unset)
{
	int go[2], err_pipe[2];
	char b;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err_pipe, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int e = errno;

		close(go[0]);
		close(go[1]);
		close(err_pipe[0]);
		close(err_pipe[1]);
		return -e;
	}
	if (c->pid == 0) {
		int e;

		close(go[1]);
		close(err_pipe[0]);
		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (wait_attach) {
			char v[32];

			/* single-threaded: setenv is safe after fork */
			snprintf(v, sizeof(v), "%d:%d", (int)getpid(),
				 RECORD_ATTACH_WAIT_MS);
			setenv(D9_ATTACH_WAIT_ENV, v, 1);
		}
		for (; unset && *unset; unset++)
			unsetenv(*unset);
		record_unboost(); /* the command runs as it would alone */
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err_pipe[1]);
	c->go_fd = go[1];
	c->err_fd = err_pipe[0];
	c->name = argv[0];
	return 0;
}

int record_cmd__release(struct record_cmd *c)
{
	ssize_t n;
	int e = 0;

	close(c->go_fd);
	c->go_fd = -1;
	c->released = 1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e) && e) {
		c->exec_failed = 1;
		return -e;
	}
	return 0;
}

int record_cmd__reap(struct record_cmd *c)
{
	int status, ours = 0;
	pid_t r;

	if (c->pid <= 0)
		return -1;
	if (!c->released) {
		/* never let go: it must not run now */
		kill(c->pid, SIGKILL);
		close(c->go_fd);
		close(c->err_fd);
		ours = 1;
	}
	r = waitpid(c->pid, &status, WNOHANG);
	if (r == 0) {
		kill(c->pid, SIGTERM);
		ours = 1;
		/* a second ^C while it takes its time ends it */
		while ((r = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR)
			kill(c->pid, SIGKILL);
	}
	if (r != c->pid || ours || c->exec_failed)
		return -1;
	return status;
}

int record_output__check(const char *out)
{
	char dir[4096], *slash, magic[8];
	struct stat sb;
	int fd;
	ssize_t n;

	if (!lstat(out, &sb)) {
		if (S_ISLNK(sb.st_mode))
			return -ELOOP; /* root following a user's link: never */
		if (S_ISDIR(sb.st_mode))
			return -EISDIR;
		if (!S_ISREG(sb.st_mode))
			return -EEXIST;
		if (access(out, W_OK))
			return -errno;
		if (!sb.st_size)
			return 0;
		/* only a trace is kept as .old and replaced */
		fd = open(out, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return -errno;
		n = read(fd, magic, sizeof(magic));
		close(fd);
		return n == (ssize_t)sizeof(magic) &&
				       !memcmp(magic, TRACE_MAGIC, sizeof(magic))
			       ? 0
			       : -EEXIST;
	}
	if (errno != ENOENT)
		return -errno;
	snprintf(dir, sizeof(dir), "%s", out);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

int record_output__open(const char *out, int *rotated)
{
	struct stat sb;
	int fd, excl;

	if (rotated && strcmp(out, "-") && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
		char old[4096];

		snprintf(old, sizeof(old), "%s.old", out);
		if (rename(out, old))
			return -EEXIST;
		*rotated = 1;
	}
	/* never through a symbolic link, never over a file someone put
	 * there since the check; 0600 as perf writes, as it holds another
	 * process's command line and stacks */
	excl = (rotated && *rotated) || (lstat(out, &sb) && errno == ENOENT);
	fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (excl ? O_EXCL : 0),
		  0600);
	if (fd < 0)
		return -errno;
	/* a trace kept in place: emptied only if it is no hard link to a
	 * file elsewhere */
	if (fstat(fd, &sb) || (S_ISREG(sb.st_mode) && sb.st_nlink > 1)) {
		close(fd);
		return -EMLINK;
	}
	if (S_ISREG(sb.st_mode) && ftruncate(fd, 0)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int record_output__move(int from, int to)
{
	char buf[65536];
	ssize_t n;
	int e = 0;

	if (lseek(from, 0, SEEK_SET) < 0)
		return -errno;
	while (!e && (n = read(from, buf, sizeof(buf))) != 0) {
		ssize_t w, off = 0;

		if (n < 0) {
			if (errno != EINTR)
				e = errno;
			continue;
		}
		while (!e && off < n) {
			w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				e = errno;
			else if (w > 0)
				off += w;
		}
	}
	if (!e && dup3(to, from, O_CLOEXEC) < 0)
		e = errno;
	return -e;
}
