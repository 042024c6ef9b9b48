// SPDX-License-Identifier: MIT
/*
 * live_sock.c - the live view a recording serves, so that `d9prof top`
 * works beside it (only one recorder may attach to a target's shim): a
 * UNIX stream socket per target pid, PID.sock in a directory only the
 * recorder's user may enter (/run/d9prof for root, else
 * /tmp/d9prof-UID, mode 0700, checked, never followed as a link). A peer
 * must be that user or root (SO_PEERCRED), both ways.
 *
 * One viewer at a time: while one is connected the recording feeds its
 * live state (live__enable()), otherwise the tap returns at once. The
 * viewer asks, the recorder answers:
 *   request  12 bytes: 'S', then the grouping (enum group_by), then 0, 0,
 *            then the task whose hottest stacks to carry (u64, 0: none)
 *   answer   u32 length (native order), then live_snap_pack()'s bytes
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define ANSWER_MAX (256u << 20) /* bytes of one snapshot, at most */

struct live_server {
	struct live *live;
	int lfd, cfd, stop_fd[2];
	pthread_t th;
	char path[108];
};

/* The directory: made if missing; 0 if it is ours alone, else -errno. */
static int sock_dir(char *buf, size_t len)
{
	uid_t uid = geteuid();
	struct stat st;

	if (uid == 0)
		snprintf(buf, len, "/run/d9prof");
	else
		snprintf(buf, len, "/tmp/d9prof-%u", (unsigned int)uid);
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(buf, &st))
		return -errno;
	/* a link, another's directory, or one others may write: not ours */
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

static int sock_addr(pid_t pid, struct sockaddr_un *a)
{
	char dir[64];
	int err = sock_dir(dir, sizeof(dir));

	if (err)
		return err;
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s/%d.sock", dir, (int)pid);
	return 0;
}

/* Is the peer of @fd this user or root? */
static int peer_ok(int fd)
{
	struct ucred c;
	socklen_t n = sizeof(c);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) &&
	       (c.uid == geteuid() || c.uid == 0);
}

static int full_io(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- the recorder's side -------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Answer the viewer's request; -errno when it is gone or wrong. */
static int answer(struct live_server *s)
{
	uint8_t req[12];
	uint64_t want;
	struct live_snap snap;
	void *buf = NULL;
	size_t len = 0;
	uint32_t n;
	int err = full_io(s->cfd, req, sizeof(req), 0);

	if (err)
		return err;
	if (req[0] != 'S' || req[1] > GROUP_THREAD)
		return -EBADMSG;
	memcpy(&want, req + 4, sizeof(want));
	live__want_stacks(s->live, want);
	err = live__snapshot(s->live, mono_ns(), (enum group_by)req[1], &snap);
	if (!err)
		err = live_snap_pack(&snap, &buf, &len);
	live_snap_release(&snap);
	if (err)
		return err;
	n = (uint32_t)len;
	err = full_io(s->cfd, &n, sizeof(n), 1);
	if (!err)
		err = full_io(s->cfd, buf, len, 1);
	free(buf);
	return err;
}

static void *serve(void *arg)
{
	struct live_server *s = arg;

	for (;;) {
		struct pollfd p[3] = {{s->stop_fd[0], POLLIN, 0},
				      {s->lfd, POLLIN, 0},
				      {s->cfd, POLLIN, 0}};

		if (poll(p, s->cfd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN) {
			int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);

			/* one viewer at a time, this user or root */
			if (fd >= 0 && (s->cfd >= 0 || !peer_ok(fd))) {
				close(fd);
			} else if (fd >= 0) {
				s->cfd = fd;
				live__enable(s->live, 1);
			}
		}
		if (s->cfd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    answer(s)) {
			close(s->cfd);
			s->cfd = -1;
			live__enable(s->live, 0);
		}
	}
	return NULL;
}

int live_server__start(pid_t pid, struct live *l, struct live_server **out)
{
	struct live_server *s;
	struct sockaddr_un a;
	int err, fd;

	*out = NULL;
	err = sock_addr(pid, &a);
	if (err)
		return err;
	/* one that answers is another recorder's: leave it */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(a.sun_path);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->live = l;
	s->cfd = -1;
	s->stop_fd[0] = s->stop_fd[1] = -1;
	snprintf(s->path, sizeof(s->path), "%s", a.sun_path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    chmod(a.sun_path, 0600) || listen(s->lfd, 2) ||
	    pipe2(s->stop_fd, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	live__enable(l, 0);
	if ((err = -pthread_create(&s->th, NULL, serve, s)))
		goto fail;
	*out = s;
	return 0;
fail:
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(s->path);
	}
	if (s->stop_fd[0] >= 0) {
		close(s->stop_fd[0]);
		close(s->stop_fd[1]);
	}
	free(s);
	return err;
}

void live_server__stop(struct live_server *s)
{
	if (!s)
		return;
	if (write(s->stop_fd[1], "x", 1) == 1)
		pthread_join(s->th, NULL);
	close(s->lfd);
	unlink(s->path);
	if (s->cfd >= 0)
		close(s->cfd);
	close(s->stop_fd[0]);
	close(s->stop_fd[1]);
	free(s);
}

/* ---- the viewer's side ------------------------------------------------------ */

int live_client__connect(pid_t pid, int *out)
{
	struct sockaddr_un a;
	struct stat st;
	int fd, err = sock_addr(pid, &a);

	*out = -1;
	if (err)
		return err;
	if (lstat(a.sun_path, &st))
		return -errno;
	if (!S_ISSOCK(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0))
		return -EPERM;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!peer_ok(fd)) {
		close(fd);
		return -EPERM;
	}
	*out = fd;
	return 0;
}

int live_client__snapshot(int fd, enum group_by by, uint64_t stacks_of,
			  struct live_snap *out)
{
	uint8_t req[12] = {'S', (uint8_t)by, 0, 0};
	uint32_t n;
	void *buf;
	int err;

	memset(out, 0, sizeof(*out));
	memcpy(req + 4, &stacks_of, sizeof(stacks_of));
	err = full_io(fd, req, sizeof(req), 1);
	if (!err)
		err = full_io(fd, &n, sizeof(n), 0);
	if (err)
		return err;
	if (n > ANSWER_MAX)
		return -EBADMSG;
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	err = full_io(fd, buf, n, 0);
	if (!err)
		err = live_snap_unpack(buf, n, out);
	free(buf);
	return err;
}
