// SPDX-License-Identifier: MIT
/*
 * live_sock.c - the live view a recording serves, so that `d9prof top`
 * works beside it (only one recorder may attach to a target's shim): a
 * UNIX stream socket per target pid, PID.sock in a directory only the
 * recorder's user may enter, mode 0700, checked, never followed as a link:
 * /run/d9prof for root; else $XDG_RUNTIME_DIR/d9prof where that is set
 * (and this user's), or /tmp/d9prof-UID. The recorder serves in the first
 * of them that is its user's alone, the viewer looks in each, in the same
 * order. A peer must be that user or root (SO_PEERCRED), both ways.
 *
 * One viewer at a time: while one is connected the recording feeds its
 * live state (live__enable()), otherwise the tap returns at once. Another
 * that connects meanwhile is answered ANSWER_REFUSED and closed. The
 * viewer asks, the recorder answers:
 *   request  12 bytes: 'S', then the grouping (enum group_by), then 0, 0,
 *            then the task whose hottest stacks to carry (u64, 0: none)
 *   answer   u32 length (native order), then live_snap_pack()'s bytes
 *
 * Neither side waits on the other for long. The recorder's thread does
 * its I/O non-blocking, polling the stop pipe too, and drops a viewer that
 * does not finish its request or read the whole answer within VIEWER_MS
 * (a stalled or stopped `top`); live_server__stop() shuts the viewer's
 * socket down before it joins, so the recording never waits for a viewer.
 * The viewer gives up on a recorder that has not answered within
 * ANSWER_MS (-ETIMEDOUT: stopped, or stuck); a viewer that must stop at
 * once (a signal) shuts its own socket down, which ends any wait here.
 *
 * The recording's losses reach the live view through live_set_lost(),
 * for record beside a `top` and for top's own recording alike.
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

#include "analysis/join.h"
#include "analysis/live.h"
#include "cli/cli.h"
#include "record/record.h"

#define ANSWER_MAX     (256u << 20) /* bytes of one snapshot, at most */
#define ANSWER_REFUSED UINT32_MAX   /* the length that says: another watches */
#define VIEWER_MS      1500	    /* a request or an answer, at most */
#define ANSWER_MS      4000	    /* the recorder's answer, at most */
#define DIR_MAX	       92	    /* a directory, "/4194304.sock" must fit */
#define NDIRS	       2

struct live_server {
	struct live *live;
	int lfd, cfd, stop_fd[2];
	pthread_mutex_t lock; /* cfd's open and close, against stop's shutdown */
	pthread_t th;
	char path[108];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- where the socket is ---------------------------------------------------- */

/* The directories a socket of this user's may be in, in the order both
 * sides try them; their number. $XDG_RUNTIME_DIR only where it is an
 * absolute path short enough, and (not as root) this user's. */
static int sock_dirs(char dirs[NDIRS][DIR_MAX])
{
	uid_t uid = geteuid();
	const char *x = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n = 0;

	if (uid == 0) {
		snprintf(dirs[n++], DIR_MAX, "/run/d9prof");
		return n;
	}
	if (x && x[0] == '/' && strlen(x) + sizeof("/d9prof") <= DIR_MAX &&
	    !stat(x, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid)
		snprintf(dirs[n++], DIR_MAX, "%s/d9prof", x);
	snprintf(dirs[n++], DIR_MAX, "/tmp/d9prof-%u", (unsigned int)uid);
	return n;
}

/* @dir, made 0700 where missing if @make: 0 if it is a directory of this
 * user alone; -EPERM if not (a link, another's, one others may enter),
 * with its stat in @st; else -errno. */
static int check_dir(const char *dir, int make, struct stat *st)
{
	if (make && mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, st))
		return -errno;
	if (!S_ISDIR(st->st_mode) || st->st_uid != geteuid() || (st->st_mode & 077))
		return -EPERM;
	return 0;
}

static void sock_addr(const char *dir, pid_t pid, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%.*s/%d.sock", DIR_MAX - 1, dir,
		 (int)pid);
}

void live_sock__why(pid_t pid, int err, char *buf, size_t len)
{
	char dirs[NDIRS][DIR_MAX];
	int n = sock_dirs(dirs), i, ours = -1;
	struct stat st;

	if (err == -EADDRINUSE) {
		snprintf(buf, len, "another recording of pid %d serves its live view",
			 (int)pid);
		return;
	}
	for (i = 0; i < n && ours < 0; i++)
		if (!check_dir(dirs[i], 0, &st))
			ours = i;
	/* none of them ours: the first that is not */
	for (i = 0; err == -EPERM && ours < 0 && i < n; i++) {
		if (check_dir(dirs[i], 0, &st) != -EPERM)
			continue;
		if (!S_ISDIR(st.st_mode))
			snprintf(buf, len, "%s is not a directory (remove it)", dirs[i]);
		else if (st.st_uid != geteuid())
			snprintf(buf, len,
				 "%s is uid %u's, not this user's (remove it as root%s)",
				 dirs[i], (unsigned int)st.st_uid,
				 geteuid() ? ", or set XDG_RUNTIME_DIR" : "");
		else
			snprintf(buf, len,
				 "%s is open to others (mode %04o; chmod 700 it)",
				 dirs[i], (unsigned int)(st.st_mode & 07777));
		return;
	}
	snprintf(buf, len, "%s/%d.sock: %s", dirs[ours >= 0 ? ours : n - 1], (int)pid,
		 err == -EPERM ? "not this user's or root's" : strerror(-err));
}

/* Is the peer of @fd this user or root? */
static int peer_ok(int fd)
{
	struct ucred c;
	socklen_t n = sizeof(c);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) &&
	       (c.uid == geteuid() || c.uid == 0);
}

/* All @len bytes to or from the non-blocking @fd before @deadline
 * (CLOCK_MONOTONIC ns), unless @stop_fd (-1: none) becomes readable
 * first: 0, -ETIMEDOUT, -ECANCELED (stopped), -EPIPE (the peer is gone
 * or the socket shut down) or -errno. */
static int full_io(int fd, void *buf, size_t len, int wr, uint64_t deadline, int stop_fd)
{
	char *p = buf;

	while (len) {
		struct pollfd pf[2] = {{fd, wr ? POLLOUT : POLLIN, 0},
				       {stop_fd, POLLIN, 0}};
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
			       : recv(fd, p, len, MSG_DONTWAIT);
		uint64_t now;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		now = mono_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		/* a signal ends the wait early: the loop sees why */
		if (poll(pf, stop_fd >= 0 ? 2 : 1,
			 (int)((deadline - now + 999999) / 1000000)) < 0 &&
		    errno != EINTR)
			return -errno;
		if (pf[1].revents)
			return -ECANCELED;
	}
	return 0;
}

/* ---- the recorder's side -------------------------------------------------- */

/* Answer the viewer's request; -errno when it is gone, wrong or too slow. */
static int answer(struct live_server *s)
{
	uint8_t req[12];
	uint64_t want;
	struct live_snap snap;
	void *buf = NULL;
	size_t len = 0;
	uint32_t n;
	int err = full_io(s->cfd, req, sizeof(req), 0, mono_ns() + VIEWER_MS * 1000000ULL,
			  s->stop_fd[0]);

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
	if (!err && len >= ANSWER_MAX)
		err = -EMSGSIZE;
	if (!err) {
		uint64_t deadline = mono_ns() + VIEWER_MS * 1000000ULL;

		n = (uint32_t)len;
		err = full_io(s->cfd, &n, sizeof(n), 1, deadline, s->stop_fd[0]);
		if (!err)
			err = full_io(s->cfd, buf, len, 1, deadline, s->stop_fd[0]);
	}
	free(buf);
	return err;
}

static void set_viewer(struct live_server *s, int fd)
{
	pthread_mutex_lock(&s->lock);
	if (s->cfd >= 0)
		close(s->cfd);
	s->cfd = fd;
	pthread_mutex_unlock(&s->lock);
	live__enable(s->live, fd >= 0);
}

/* Has the viewer left (its end closed, nothing more to read)? */
static int viewer_gone(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static void take_viewer(struct live_server *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	uint32_t no = ANSWER_REFUSED;

	if (fd < 0)
		return;
	if (!peer_ok(fd)) { /* this user or root only; others hear nothing */
		close(fd);
		return;
	}
	if (s->cfd >= 0 && viewer_gone(s->cfd))
		set_viewer(s, -1);
	if (s->cfd < 0) {
		set_viewer(s, fd);
		return;
	}
	/* one viewer at a time: the other is told so (a fresh socket's
	 * buffer takes 4 bytes; one gone already hears nothing) */
	send(fd, &no, sizeof(no), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
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
		/* the viewer first: one that left makes room for the next */
		if (s->cfd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    answer(s))
			set_viewer(s, -1);
		if (p[1].revents & POLLIN)
			take_viewer(s);
	}
	return NULL;
}

int live_server__start(pid_t pid, struct live *l, struct live_server **out)
{
	char dirs[NDIRS][DIR_MAX];
	int n = sock_dirs(dirs), i, err = -ENOENT, fd;
	struct live_server *s;
	struct sockaddr_un a;
	struct stat st;

	*out = NULL;
	for (i = 0; i < n && (err = check_dir(dirs[i], 1, &st)); i++)
		;
	if (err)
		return err;
	sock_addr(dirs[i], pid, &a);
	/* one that answers (or would: its queue full) is another recorder's */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a)) || errno == EAGAIN) {
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
	pthread_mutex_init(&s->lock, NULL);
	snprintf(s->path, sizeof(s->path), "%s", a.sun_path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    chmod(a.sun_path, 0600) || listen(s->lfd, 4) ||
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
	pthread_mutex_destroy(&s->lock);
	free(s);
	return err;
}

void live_server__stop(struct live_server *s)
{
	ssize_t n;

	if (!s)
		return;
	unlink(s->path); /* no new viewer finds it */
	do
		n = write(s->stop_fd[1], "x", 1);
	while (n < 0 && errno == EINTR);
	/* whatever the thread waits for on the viewer ends now */
	pthread_mutex_lock(&s->lock);
	if (s->cfd >= 0)
		shutdown(s->cfd, SHUT_RDWR);
	pthread_mutex_unlock(&s->lock);
	if (n == 1)
		pthread_join(s->th, NULL);
	close(s->lfd);
	if (s->cfd >= 0)
		close(s->cfd);
	close(s->stop_fd[0]);
	close(s->stop_fd[1]);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- the viewer's side ------------------------------------------------------ */

int live_client__connect(pid_t pid, int *out)
{
	char dirs[NDIRS][DIR_MAX];
	int n = sock_dirs(dirs), i, fd, err, ours = 0, bad = 0, none = -ENOENT;
	struct sockaddr_un a;
	struct stat st;

	*out = -1;
	for (i = 0; i < n; i++) {
		if ((err = check_dir(dirs[i], 0, &st))) {
			bad |= err == -EPERM;
			continue;
		}
		ours = 1;
		sock_addr(dirs[i], pid, &a);
		if (lstat(a.sun_path, &st))
			continue;
		if (!S_ISSOCK(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0))
			return -EPERM;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			err = errno == EAGAIN ? -ETIMEDOUT : -errno;
			close(fd);
			/* left by a recorder that died: look on */
			if (err == -ECONNREFUSED || err == -ENOENT) {
				none = -ECONNREFUSED;
				continue;
			}
			return err; /* -ETIMEDOUT: its queue full, nobody accepts */
		}
		if (!peer_ok(fd)) {
			close(fd);
			return -EPERM;
		}
		*out = fd;
		return 0;
	}
	/* none of ours, and one that is not: a recording could not serve */
	return !ours && bad ? -EPERM : none;
}

int live_client__snapshot(int fd, enum group_by by, uint64_t stacks_of,
			  struct live_snap *out)
{
	uint8_t req[12] = {'S', (uint8_t)by, 0, 0};
	uint64_t deadline = mono_ns() + ANSWER_MS * 1000000ULL;
	uint32_t n;
	void *buf;
	int err, rerr;

	memset(out, 0, sizeof(*out));
	memcpy(req + 4, &stacks_of, sizeof(stacks_of));
	err = full_io(fd, req, sizeof(req), 1, deadline, -1);
	/* one turned away may find why even where its request found no one */
	if (err && err != -EPIPE && err != -ECONNRESET)
		return err;
	rerr = full_io(fd, &n, sizeof(n), 0, deadline, -1);
	if (!rerr && n == ANSWER_REFUSED)
		return -EBUSY;
	if (err || (err = rerr))
		return err;
	if (n > ANSWER_MAX)
		return -EBADMSG;
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	err = full_io(fd, buf, n, 0, deadline, -1);
	if (!err)
		err = live_snap_unpack(buf, n, out);
	free(buf);
	return err;
}

void live_set_lost(struct live *l, const struct record_stats *st)
{
	struct live_lost lost = {.samples = st->lost_samples,
				 .shim = st->shim_drops,
				 .offcpu = st->offcpu_lost,
				 .wakeups = st->wake_lost,
				 .ctimer = st->ctimer_drops};

	if (l)
		live__set_lost(l, &lost);
}
