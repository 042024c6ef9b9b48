// SPDX-License-Identifier: MIT
/*
 * flight.c - trace segments kept in memory for a flight recorder, or
 * rotated to disk (flight.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/flight.h"
#include "record/record.h"

struct kept {
	int fd;			/* memory: the memfd; rotate: -1 */
	uint64_t index, start, end, bytes;
	char *path;		/* rotate: the sealed file */
	pid_t hook;		/* rotate: its on-segment command, 0 if none */
};

struct flight {
	struct flight_opts o;
	char *dir, *key_prefix, *service, *on_segment;
	char host[64], boot[16];
	struct kept *v;		/* oldest first */
	size_t n, cap;
	uint64_t bytes;		/* of the kept ones */
	/* the open segment */
	int fd;
	uint64_t index, start;
	char tmp[4096], final[4096];
	/* on-segment commands */
	unsigned int failed;
	char fail_why[160];
};

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

/* mkdir -p @path (mode 0755); 0 or -errno. */
static int mkdirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

int flight__new(const struct flight_opts *o, struct flight **out)
{
	struct flight *f;
	int err = 0;

	*out = NULL;
	if (!o->dir || (o->mode != FLIGHT_MEMORY && o->mode != FLIGHT_ROTATE))
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->fd = -1;
	f->dir = dup_or_null(o->dir, &err);
	f->key_prefix = dup_or_null(o->key_prefix, &err);
	f->service = dup_or_null(o->service && o->service[0] ? o->service : "unknown", &err);
	f->on_segment = dup_or_null(o->on_segment, &err);
	if (!err)
		err = mkdirs(f->dir);
	if (err) {
		flight__free(f);
		return err;
	}
	if (gethostname(f->host, sizeof(f->host)))
		snprintf(f->host, sizeof(f->host), "unknown");
	f->host[sizeof(f->host) - 1] = '\0';
	/* the boot: the first 8 hex digits of its id */
	read_line("/proc/sys/kernel/random/boot_id", f->boot, sizeof(f->boot));
	f->boot[8] = '\0';
	if (!f->boot[0])
		snprintf(f->boot, sizeof(f->boot), "noboot");
	*out = f;
	return 0;
}

static void drop(struct flight *f, size_t i, int unlink_it)
{
	struct kept *k = &f->v[i];

	if (k->fd >= 0)
		close(k->fd);
	if (unlink_it && k->path)
		unlink(k->path);
	free(k->path);
	f->bytes -= k->bytes;
	memmove(k, k + 1, (f->n - i - 1) * sizeof(*k));
	f->n--;
}

void flight__free(struct flight *f)
{
	if (!f)
		return;
	while (f->n)
		drop(f, 0, 0);
	free(f->v);
	if (f->fd >= 0)
		close(f->fd);
	if (f->o.mode == FLIGHT_ROTATE && f->tmp[0])
		unlink(f->tmp);	/* a segment never sealed */
	free(f->dir);
	free(f->key_prefix);
	free(f->service);
	free(f->on_segment);
	free(f);
}

/* Where rotate mode puts segment files: DIR, or the object-store layout
 * under it. */
static int segment_dir(struct flight *f, time_t wall, char *buf, size_t len)
{
	struct tm tm;
	int n;

	if (!f->key_prefix) {
		n = snprintf(buf, len, "%s", f->dir);
	} else {
		gmtime_r(&wall, &tm);
		n = snprintf(buf, len, "%s/%s/%04d-%02d-%02d/%02d%02d/%s/%s/%s", f->dir,
			     f->key_prefix, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			     tm.tm_hour, tm.tm_min, f->service, f->host, f->boot);
	}
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return f->key_prefix ? mkdirs(buf) : 0;
}

int flight__open(struct flight *f, uint64_t index, uint64_t start_ns, time_t start_wall,
		 int *fd)
{
	char dir[4096];
	int err;

	if (f->fd >= 0)
		return -EBUSY;
	f->index = index;
	f->start = start_ns;
	f->tmp[0] = '\0';
	if (f->o.mode == FLIGHT_MEMORY) {
		f->fd = memfd_create("d9prof-flight", MFD_CLOEXEC);
		if (f->fd < 0)
			return -errno;
		*fd = f->fd;
		return 0;
	}
	err = segment_dir(f, start_wall, dir, sizeof(dir));
	if (err)
		return err;
	if ((size_t)snprintf(f->final, sizeof(f->final), "%s/%lld-%llu.d9", dir,
			     (long long)start_wall, (unsigned long long)index) >= sizeof(f->final) ||
	    (size_t)snprintf(f->tmp, sizeof(f->tmp), "%s/.%lld-%llu.d9.tmp", dir,
			     (long long)start_wall, (unsigned long long)index) >= sizeof(f->tmp))
		return -ENAMETOOLONG;
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		err = -errno;
		f->tmp[0] = '\0';
		return err;
	}
	*fd = f->fd;
	return 0;
}

static int push(struct flight *f, struct kept k)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct kept *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = k;
	f->bytes += k.bytes;
	return 0;
}

/* The command for @path: every {} becomes the path in single quotes. */
static char *hook_cmd(const char *tmpl, const char *path)
{
	size_t qlen = 2, n = 0, cap;
	char *out;

	for (const char *p = path; *p; p++)
		qlen += *p == '\'' ? 4 : 1;
	cap = strlen(tmpl) + 1;
	for (const char *p = strstr(tmpl, "{}"); p; p = strstr(p + 2, "{}"))
		cap += qlen;
	out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = tmpl; *p;) {
		if (p[0] == '{' && p[1] == '}') {
			out[n++] = '\'';
			for (const char *q = path; *q; q++) {
				if (*q == '\'') {
					memcpy(out + n, "'\\''", 4);
					n += 4;
				} else {
					out[n++] = *q;
				}
			}
			out[n++] = '\'';
			p += 2;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return out;
}

/* Run the on-segment command on @k's file, in the background. */
static void run_hook(struct flight *f, struct kept *k)
{
	char *cmd = hook_cmd(f->on_segment, k->path);
	pid_t pid;

	if (!cmd) {
		f->failed++;
		snprintf(f->fail_why, sizeof(f->fail_why), "out of memory");
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		record_unboost();
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	free(cmd);
	if (pid < 0) {
		f->failed++;
		snprintf(f->fail_why, sizeof(f->fail_why), "cannot start it: %s", strerror(errno));
		return;
	}
	k->hook = pid;
}

/* Rotate mode: delete the oldest files while all of them pass max_total;
 * a file whose command still runs waits for it. Without max_total only
 * the files whose command runs are remembered. */
static uint64_t enforce_total(struct flight *f)
{
	uint64_t dropped = 0;

	if (!f->o.max_total) {
		for (size_t i = 0; i < f->n;)
			if (f->v[i].hook)
				i++;
			else
				drop(f, i, 0);
		return 0;
	}
	for (size_t i = 0; i < f->n && f->bytes > f->o.max_total;) {
		if (f->v[i].hook) {
			i++;
			continue;
		}
		drop(f, i, 1);
		dropped++;
	}
	return dropped;
}

/* Memory mode: drop the oldest while the rest still cover the window, and
 * while all pass max_bytes (the newest stays). */
static uint64_t enforce_window(struct flight *f)
{
	uint64_t dropped = 0;

	while (f->n >= 2) {
		const struct kept *last = &f->v[f->n - 1];
		int covered = last->end >= f->o.window_ns &&
			      f->v[1].start <= last->end - f->o.window_ns;

		if (!covered && !(f->o.max_bytes && f->bytes > f->o.max_bytes))
			break;
		drop(f, 0, 0);
		dropped++;
	}
	return dropped;
}

int flight__seal(struct flight *f, uint64_t end_ns, struct flight_sealed *out)
{
	struct kept k = {.fd = -1, .index = f->index, .start = f->start, .end = end_ns};
	struct stat st;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (f->fd < 0)
		return -EBADF;
	if (fstat(f->fd, &st))
		err = -errno;
	k.bytes = err ? 0 : (uint64_t)st.st_size;
	out->bytes = k.bytes;
	if (f->o.mode == FLIGHT_MEMORY) {
		k.fd = f->fd;
		f->fd = -1;
		if (!err)
			err = push(f, k);
		if (err) {
			close(k.fd);
			return err;
		}
		out->dropped = enforce_window(f);
		return 0;
	}
	close(f->fd);
	f->fd = -1;
	if (!err && rename(f->tmp, f->final))
		err = -errno;
	if (err) {
		unlink(f->tmp);
		f->tmp[0] = '\0';
		return err;
	}
	f->tmp[0] = '\0';
	k.path = strdup(f->final);
	if (!k.path || push(f, k)) {
		free(k.path);
		return -ENOMEM;
	}
	snprintf(out->path, sizeof(out->path), "%s", f->final);
	if (f->on_segment)
		run_hook(f, &f->v[f->n - 1]);
	out->dropped = enforce_total(f);
	return 0;
}

/* Copy all of @from (from its start) to the end of @to. */
static int copy_all(int from, int to, uint64_t len)
{
	off_t off = 0;
	char buf[65536];

	while ((uint64_t)off < len) {
		ssize_t n = copy_file_range(from, &off, to, NULL, len - (uint64_t)off, 0);

		if (n > 0)
			continue;
		if (n == 0)
			return -EIO; /* shorter than it was */
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		/* no in-kernel copy between these: by hand */
		n = pread(from, buf, sizeof(buf), off);
		if (n <= 0)
			return n ? -errno : -EIO;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return -errno;
			w += k;
		}
		off += n;
	}
	return 0;
}

int flight__dump(struct flight *f, uint64_t to, time_t wall, struct flight_dump *out)
{
	uint64_t from = to > f->o.window_ns ? to - f->o.window_ns : 0;
	char name[128], tmp[4096];
	struct tm tm;
	size_t first = f->n;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	if (f->o.mode != FLIGHT_MEMORY)
		return -EINVAL;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].end > from) {
			first = i;
			break;
		}
	if (first == f->n)
		return -ENODATA;
	localtime_r(&wall, &tm);
	/* unique: two dumps in one second get -2, -3, ... */
	for (unsigned int u = 1;; u++) {
		char nth[16] = "";
		int n;

		if (u > 1)
			snprintf(nth, sizeof(nth), "-%u", u);
		n = snprintf(name, sizeof(name), "d9prof-%d-%04d%02d%02d-%02d%02d%02d%s.data",
			     (int)f->o.pid, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			     tm.tm_min, tm.tm_sec, nth);
		if (n < 0 || (size_t)n >= sizeof(name) ||
		    (size_t)snprintf(out->path, sizeof(out->path), "%s/%s", f->dir, name) >=
			    sizeof(out->path))
			return -ENAMETOOLONG;
		if (access(out->path, F_OK))
			break;
		if (u > 1000)
			return -EEXIST;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", f->dir, name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (size_t i = first; i < f->n && !err; i++) {
		err = copy_all(f->v[i].fd, fd, f->v[i].bytes);
		out->bytes += f->v[i].bytes;
		out->segments++;
	}
	/* it is what is left of a target that may have just died: on disk
	 * before it has its name */
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, out->path))
		err = -errno;
	if (err) {
		unlink(tmp);
		out->path[0] = '\0';
		return err;
	}
	out->from = f->v[first].start;
	out->to = f->v[f->n - 1].end;
	return 0;
}

uint64_t flight__bytes(const struct flight *f, uint64_t *open)
{
	struct stat st;
	uint64_t open_bytes = 0;

	if (f->o.mode == FLIGHT_MEMORY && f->fd >= 0 && !fstat(f->fd, &st))
		open_bytes = (uint64_t)st.st_size;
	if (open)
		*open = open_bytes;
	return f->bytes + open_bytes;
}

unsigned int flight__reap(struct flight *f, char *why, size_t len)
{
	unsigned int failed;

	for (size_t i = 0; i < f->n; i++) {
		struct kept *k = &f->v[i];
		int status;

		if (!k->hook || waitpid(k->hook, &status, WNOHANG) != k->hook)
			continue;
		k->hook = 0;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		f->failed++;
		if (WIFEXITED(status))
			snprintf(f->fail_why, sizeof(f->fail_why), "'%s' exited with %d on %s",
				 f->on_segment, WEXITSTATUS(status), k->path);
		else
			snprintf(f->fail_why, sizeof(f->fail_why), "'%s' killed by signal %d on %s",
				 f->on_segment, WTERMSIG(status), k->path);
	}
	/* files kept for their command may go now */
	if (f->o.mode == FLIGHT_ROTATE)
		enforce_total(f);
	failed = f->failed;
	f->failed = 0;
	if (failed && why)
		snprintf(why, len, "%s", f->fail_why);
	return failed;
}

unsigned int flight__running(const struct flight *f)
{
	unsigned int n = 0;

	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].hook != 0;
	return n;
}
