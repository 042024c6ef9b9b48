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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/text.h"
#include "record/flight.h"
#include "record/proc.h"

struct kept {
	int fd; /* memory: the memfd; rotate: -1 */
	uint64_t index, start, end, bytes;
	char *path;	     /* rotate: the sealed file, as said */
	char *rel;	     /* ... relative to DIR */
	pid_t hook;	     /* rotate: its on-segment command, 0 if none */
	uint64_t hook_start; /* ... started at (CLOCK_MONOTONIC ns) */
	int hook_wait;	     /* ... waits for a free slot */
	int hook_killed;     /* ... killed for running past its timeout */
};

/* A dump this recording wrote (memory mode), for max_total. */
struct dumped {
	char *name; /* in DIR */
	uint64_t bytes;
};

struct flight {
	struct flight_opts o;
	char *dir, *key_prefix, *on_segment, *tag;
	int dirfd; /* DIR, opened once */
	char service[64], host[64], boot[16];
	struct kept *v; /* oldest first */
	size_t n, cap;
	uint64_t bytes; /* of the kept ones */
	/* the open segment: in segdir (under DIR), as tmp until sealed */
	int fd, segdir;
	uint64_t index, start;
	time_t start_wall;
	char rel[4096], tmp[64], final[64];
	/* dumps written */
	struct dumped *dumps;
	size_t ndumps, capdumps;
	uint64_t dump_bytes;
	/* on-segment commands */
	unsigned int failed, skipped;
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

/* May root write in the directory @fd (named @name)? Not when the target's
 * owner (@owner, not us) owns it, nor when anyone may write in it without
 * the sticky bit: they could plant a link there, or swap a file for one,
 * for us to write through or hand to a hook. 0, or -EACCES with why. */
static int dir_safe(int fd, const char *name, uid_t owner, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (owner != (uid_t)-1 && owner != geteuid() && st.st_uid == owner) {
		snprintf(
			why, len,
			"%s belongs to uid %u, the target's owner, who could plant links "
			"in it for the recorder to write through",
			name, (unsigned int)owner);
		return -EACCES;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, len, "anyone may write in %s (mode %03o, no sticky bit)",
			 name, (unsigned int)(st.st_mode & 07777));
		return -EACCES;
	}
	return 0;
}

/* Open the directory @path (relative to @at), a component at a time:
 * missing ones made (0700) when @create; a symbolic link followed only
 * when root or we own it; each component dir_safe() for @owner. The fd,
 * or -errno (and why, for -EACCES and -ELOOP). */
static int dir_open(int at, const char *path, int create, uid_t owner, char *why,
		    size_t len)
{
	char buf[4096], *save = NULL, *c;
	int fd, err = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	fd = buf[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			   : fcntl(at, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (c = strtok_r(buf, "/", &save); c && !err; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next;

		if (create && mkdirat(fd, c, 0700) && errno != EEXIST) {
			err = -errno;
			break;
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && !fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode)) {
			if (st.st_uid && st.st_uid != geteuid()) {
				snprintf(why, len,
					 "%s is a symbolic link of uid %u: not followed",
					 c, (unsigned int)st.st_uid);
				err = -ELOOP;
				break;
			}
			next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		if (next < 0) {
			err = -errno;
			break;
		}
		close(fd);
		fd = next;
		err = dir_safe(fd, c, owner, why, len);
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
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

int flight__new(const struct flight_opts *o, struct flight **out, char *why, size_t len)
{
	struct flight *f;
	char host[64];
	int err = 0;

	*out = NULL;
	why[0] = '\0';
	if (!o->dir || (o->mode != FLIGHT_MEMORY && o->mode != FLIGHT_ROTATE))
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->fd = f->segdir = -1;
	f->dir = dup_or_null(o->dir, &err);
	f->key_prefix = dup_or_null(o->key_prefix, &err);
	f->on_segment = dup_or_null(o->on_segment, &err);
	f->tag = dup_or_null(o->tag, &err);
	if (!err) {
		char abs[4096], cwd[4096];

		/* from /: the directories above DIR are checked too */
		if (f->dir[0] != '/' && (!getcwd(cwd, sizeof(cwd)) ||
					 (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd,
							  f->dir) >= sizeof(abs)))
			err = -ENAMETOOLONG;
		else if (f->dir[0] != '/')
			f->dirfd = dir_open(-1, abs, 1, o->owner, why, len);
		else
			f->dirfd = dir_open(-1, f->dir, 1, o->owner, why, len);
		if (!err && f->dirfd < 0)
			err = f->dirfd;
	}
	if (err) {
		f->dirfd = -1;
		flight__free(f);
		return err;
	}
	text_name_component(o->service, f->service, sizeof(f->service));
	if (gethostname(host, sizeof(host)))
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	text_name_component(o->host ? o->host : host, f->host, sizeof(f->host));
	/* the boot: the first 8 hex digits of its id */
	read_line("/proc/sys/kernel/random/boot_id", f->boot, sizeof(f->boot));
	f->boot[8] = '\0';
	text_name_component(f->boot[0] ? f->boot : "noboot", f->boot, sizeof(f->boot));
	*out = f;
	return 0;
}

/* Remove the file @rel (under DIR), through the directories it was
 * written in, never a link. */
static void unlink_rel(struct flight *f, const char *rel)
{
	char dir[4096];
	const char *slash = strrchr(rel, '/');
	int fd;

	if (!slash) {
		unlinkat(f->dirfd, rel, 0);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	fd = dir_open(f->dirfd, dir, 0, (uid_t)-1, f->fail_why, sizeof(f->fail_why));
	if (fd < 0)
		return;
	unlinkat(fd, slash + 1, 0);
	close(fd);
}

static void drop(struct flight *f, size_t i, int unlink_it)
{
	struct kept *k = &f->v[i];

	if (k->fd >= 0)
		close(k->fd);
	if (unlink_it && k->rel)
		unlink_rel(f, k->rel);
	free(k->path);
	free(k->rel);
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
	for (size_t i = 0; i < f->ndumps; i++)
		free(f->dumps[i].name);
	free(f->dumps);
	if (f->fd >= 0)
		close(f->fd);
	if (f->o.mode == FLIGHT_ROTATE && f->tmp[0] && f->segdir >= 0)
		unlinkat(f->segdir, f->tmp, 0); /* a segment never sealed */
	if (f->segdir >= 0)
		close(f->segdir);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->dir);
	free(f->key_prefix);
	free(f->tag);
	free(f->on_segment);
	free(f);
}

/* A new file in @dir, "." + @name + ".XXXXXX.tmp" (random, in @tmp):
 * created, never opened, never through a link; mode 0600 (it holds
 * another process's command line and stacks). The fd or -errno. */
static int tmp_create(int dir, const char *name, char *tmp, size_t len)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 64; tries++) {
		unsigned char r[6];
		char x[7];
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(rand() ^ (int)getpid() ^ tries);
		for (size_t i = 0; i < sizeof(r); i++)
			x[i] = set[r[i] % (sizeof(set) - 1)];
		x[6] = '\0';
		if ((size_t)snprintf(tmp, len, ".%s.%s.tmp", name, x) >= len)
			return -ENAMETOOLONG;
		fd = openat(dir, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

/* The object-store layout of a file made at @wall:
 * "DATE/HHMM/SERVICE/HOST/BOOT/" then @name ("" for the directory). */
static int layout_key(const struct flight *f, time_t wall, const char *name, char *buf,
		      size_t len)
{
	struct tm tm;
	int n;

	gmtime_r(&wall, &tm);
	n = snprintf(buf, len, "%04d-%02d-%02d/%02d%02d/%s/%s/%s/%s", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, f->service,
		     f->host, f->boot, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Where rotate mode puts segment files, relative to DIR: "" or the
 * object-store layout under --key-prefix (ending in '/'). */
static int segment_rel(struct flight *f, time_t wall, char *buf, size_t len)
{
	size_t n;

	if (!f->key_prefix) {
		buf[0] = '\0';
		return 0;
	}
	n = (size_t)snprintf(buf, len, "%s/", f->key_prefix);
	return n >= len ? -ENAMETOOLONG : layout_key(f, wall, "", buf + n, len - n);
}

/* A read-only fd of @name in @dirfd, never through a link, when the
 * caller asked for one (flight_opts.open_sealed); else -1. */
static int open_sealed(const struct flight *f, int dirfd, const char *name)
{
	if (!f->o.open_sealed)
		return -1;
	return openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
}

int flight__open(struct flight *f, uint64_t index, uint64_t start_ns, time_t start_wall,
		 int *fd)
{
	int err;

	if (f->fd >= 0)
		return -EBUSY;
	f->index = index;
	f->start = start_ns;
	f->start_wall = start_wall;
	f->tmp[0] = '\0';
	if (f->o.mode == FLIGHT_MEMORY) {
		f->fd = memfd_create("d9prof-flight", MFD_CLOEXEC);
		if (f->fd < 0)
			return -errno;
		*fd = f->fd;
		return 0;
	}
	err = segment_rel(f, start_wall, f->rel, sizeof(f->rel));
	if (err)
		return err;
	if (f->segdir >= 0)
		close(f->segdir);
	f->segdir = f->rel[0] ? dir_open(f->dirfd, f->rel, 1, f->o.owner, f->fail_why,
					 sizeof(f->fail_why))
			      : fcntl(f->dirfd, F_DUPFD_CLOEXEC, 0);
	if (f->segdir < 0) {
		err = f->rel[0] ? f->segdir : -errno;
		f->segdir = -1;
		return err;
	}
	if ((size_t)snprintf(f->final, sizeof(f->final), "%lld-%llu%s%s.d9",
			     (long long)start_wall, (unsigned long long)index,
			     f->tag ? "-" : "", f->tag ? f->tag : "") >= sizeof(f->final))
		return -ENAMETOOLONG;
	f->fd = tmp_create(f->segdir, f->final, f->tmp, sizeof(f->tmp));
	if (f->fd < 0) {
		err = f->fd;
		f->fd = -1;
		f->tmp[0] = '\0';
		return err;
	}
	*fd = f->fd;
	return 0;
}

static int push(struct flight *f, struct kept k)
{
	if (LIB_GROW(f->v, f->cap, f->n + 1))
		return -ENOMEM;
	f->v[f->n++] = k;
	f->bytes += k.bytes;
	return 0;
}

/* The shell command for the on-segment template: every {} becomes a
 * reference to $D9PROF_SEGMENT fit for where it stands: "$D9PROF_SEGMENT"
 * outside quotes, ${D9PROF_SEGMENT} within double quotes, and closing and
 * reopening single quotes around it. The path itself never becomes shell
 * text, so no name can run a command whatever the quoting. */
static char *hook_cmd(const char *tmpl)
{
	static const char *const ref[] = {"\"$D9PROF_SEGMENT\"", "'\"$D9PROF_SEGMENT\"'",
					  "${D9PROF_SEGMENT}"};
	size_t n = 0, cap = strlen(tmpl) + 1;
	int q = 0; /* 0: outside quotes, 1: in '', 2: in "" */
	char *out;

	for (const char *p = strstr(tmpl, "{}"); p; p = strstr(p + 2, "{}"))
		cap += strlen(ref[1]);
	out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = tmpl; *p;) {
		if (p[0] == '{' && p[1] == '}') {
			size_t l = strlen(ref[q]);

			memcpy(out + n, ref[q], l);
			n += l;
			p += 2;
			continue;
		}
		if (*p == '\\' && q != 1 && p[1]) {
			out[n++] = *p++;
		} else if (*p == '\'' && q != 2) {
			q = q ? 0 : 1;
		} else if (*p == '"' && q != 1) {
			q = q ? 0 : 2;
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	return out;
}

/* Run the on-segment command on @k's file, in the background, in a
 * process group of its own (a timeout ends all of it), with nothing of
 * ours but stdout and stderr. */
static void run_hook(struct flight *f, struct kept *k)
{
	extern char **environ;
	char *cmd = hook_cmd(f->on_segment), *var = NULL, **env = NULL;
	char *argv[] = {"sh", "-c", cmd, NULL};
	size_t n = 0;
	pid_t pid = -1;

	k->hook_wait = 0;
	/* everything the child needs is made before the fork: the recorder
	 * has threads, and a child may only exec */
	while (environ && environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (cmd && env && asprintf(&var, "D9PROF_SEGMENT=%s", k->path) >= 0) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (strncmp(environ[i], "D9PROF_SEGMENT=", 15))
				env[m++] = environ[i];
		env[m++] = var;
		env[m] = NULL;
		pid = fork();
	} else {
		var = NULL;
		errno = ENOMEM;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0 && null != STDIN_FILENO) {
			dup2(null, STDIN_FILENO);
			close(null);
		}
		setpgid(0, 0);
		syscall(SYS_close_range, 3U, ~0U, 0U);
		record_unboost();
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	if (pid < 0) {
		f->failed++;
		snprintf(f->fail_why, sizeof(f->fail_why), "cannot start it: %s",
			 strerror(errno));
	} else {
		setpgid(pid, pid); /* (either of us may be first) */
		k->hook = pid;
		k->hook_start = record_now_ns();
	}
	free(cmd);
	free(var);
	free(env);
}

/* Start waiting commands while fewer than max_hooks run. */
static void start_hooks(struct flight *f)
{
	unsigned int running = flight__running(f);

	for (size_t i = 0; i < f->n && running < f->o.max_hooks; i++)
		if (f->v[i].hook_wait) {
			run_hook(f, &f->v[i]);
			running += f->v[i].hook != 0;
		}
}

/* Rotate mode: delete the oldest files while all of them, and @extra
 * bytes about to join them, pass max_total; a file whose command runs
 * waits for it, one whose command waits for a slot is deleted with its
 * command skipped (counted). Without max_total only the files whose
 * command runs or waits are remembered. */
static uint64_t enforce_total(struct flight *f, uint64_t extra)
{
	uint64_t dropped = 0;

	if (!f->o.max_total) {
		for (size_t i = 0; i < f->n;)
			if (f->v[i].hook || f->v[i].hook_wait)
				i++;
			else
				drop(f, i, 0);
		return 0;
	}
	for (size_t i = 0; i < f->n && f->bytes + extra > f->o.max_total;) {
		if (f->v[i].hook) {
			i++;
			continue;
		}
		f->skipped += f->v[i].hook_wait;
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
	char rel[4096 + 64];
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
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
	/* the oldest go before the new one shows: the files never pass
	 * max_total, not even between its rename and their deletion */
	out->dropped = err ? 0 : enforce_total(f, k.bytes);
	if (!err && renameat(f->segdir, f->tmp, f->segdir, f->final))
		err = -errno;
	if (err) {
		unlinkat(f->segdir, f->tmp, 0);
		f->tmp[0] = '\0';
		return err;
	}
	f->tmp[0] = '\0';
	snprintf(rel, sizeof(rel), "%s%s", f->rel, f->final);
	if ((size_t)snprintf(out->path, sizeof(out->path), "%s/%s", f->dir, rel) >=
	    sizeof(out->path))
		err = -ENAMETOOLONG;
	if (!err)
		err = layout_key(f, f->start_wall, f->final, out->key, sizeof(out->key));
	k.rel = strdup(rel);
	k.path = strdup(out->path);
	k.hook_wait = f->on_segment != NULL;
	if (err || !k.rel || !k.path || push(f, k)) {
		free(k.rel);
		free(k.path);
		return err ? err : -ENOMEM;
	}
	out->fd = open_sealed(f, f->segdir, f->final);
	start_hooks(f);
	out->dropped += enforce_total(f, 0);
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
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
		    errno != EOPNOTSUPP)
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

/* Memory mode: delete this recording's oldest dumps while all of them
 * pass max_total (the newest stays). How many. */
static unsigned int enforce_dumps(struct flight *f)
{
	unsigned int deleted = 0;

	while (f->o.max_total && f->ndumps >= 2 && f->dump_bytes > f->o.max_total) {
		unlinkat(f->dirfd, f->dumps[0].name, 0);
		f->dump_bytes -= f->dumps[0].bytes;
		free(f->dumps[0].name);
		memmove(f->dumps, f->dumps + 1, --f->ndumps * sizeof(*f->dumps));
		deleted++;
	}
	return deleted;
}

static int push_dump(struct flight *f, const char *name, uint64_t bytes)
{
	char *copy = strdup(name);

	if (!copy || LIB_GROW(f->dumps, f->capdumps, f->ndumps + 1)) {
		free(copy);
		return -ENOMEM;
	}
	f->dumps[f->ndumps++] = (struct dumped){.name = copy, .bytes = bytes};
	f->dump_bytes += bytes;
	return 0;
}

int flight__dump(struct flight *f, uint64_t to, time_t wall, struct flight_dump *out)
{
	uint64_t from = to > f->o.window_ns ? to - f->o.window_ns : 0;
	char stem[96], name[128], tmp[192];
	struct tm tm;
	size_t first = f->n;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
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
	snprintf(stem, sizeof(stem), "d9prof-%d-%04d%02d%02d-%02d%02d%02d", (int)f->o.pid,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec);
	fd = tmp_create(f->dirfd, stem, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
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
	/* unique: two dumps in one second get -2, -3, ...; never over a
	 * file that is there */
	for (unsigned int u = 1; !err; u++) {
		char nth[16] = "";

		if (u > 1)
			snprintf(nth, sizeof(nth), "-%u", u);
		snprintf(name, sizeof(name), "%s%s.data", stem, nth);
		if (!renameat2(f->dirfd, tmp, f->dirfd, name, RENAME_NOREPLACE))
			break;
		if (errno != EEXIST || u > 1000)
			err = -errno;
	}
	if (!err && (size_t)snprintf(out->path, sizeof(out->path), "%s/%s", f->dir,
				     name) >= sizeof(out->path))
		out->path[sizeof(out->path) - 1] = '\0';
	if (err) {
		unlinkat(f->dirfd, tmp, 0);
		out->path[0] = '\0';
		return err;
	}
	(void)push_dump(f, name, out->bytes); /* (no memory: not deleted later) */
	if (layout_key(f, wall, name, out->key, sizeof(out->key)))
		out->key[0] = '\0';
	out->fd = open_sealed(f, f->dirfd, name);
	out->deleted = enforce_dumps(f);
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

unsigned int flight__reap(struct flight *f, uint64_t now, struct flight_hooks *h)
{
	unsigned int failed;

	for (size_t i = 0; i < f->n; i++) {
		struct kept *k = &f->v[i];
		int status;

		if (!k->hook)
			continue;
		if (waitpid(k->hook, &status, WNOHANG) != k->hook) {
			/* past its time: the whole group goes, and is reaped
			 * next time */
			if (f->o.hook_timeout_ns && !k->hook_killed &&
			    now > k->hook_start &&
			    now - k->hook_start > f->o.hook_timeout_ns) {
				kill(-k->hook, SIGKILL);
				k->hook_killed = 1;
			}
			continue;
		}
		k->hook = 0;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		f->failed++;
		if (k->hook_killed)
			snprintf(f->fail_why, sizeof(f->fail_why),
				 "killed after %.0f s on %s",
				 (double)f->o.hook_timeout_ns / 1e9, k->path);
		else if (WIFEXITED(status))
			snprintf(f->fail_why, sizeof(f->fail_why), "exited with %d on %s",
				 WEXITSTATUS(status), k->path);
		else
			snprintf(f->fail_why, sizeof(f->fail_why),
				 "killed by signal %d on %s", WTERMSIG(status), k->path);
	}
	if (f->o.mode == FLIGHT_ROTATE) {
		start_hooks(f);
		/* files kept for their command may go now */
		enforce_total(f, 0);
	}
	failed = f->failed;
	memset(h, 0, sizeof(*h));
	h->failed = failed;
	h->skipped = f->skipped;
	h->running = flight__running(f);
	for (size_t i = 0; i < f->n; i++)
		h->waiting += f->v[i].hook_wait;
	f->failed = f->skipped = 0;
	if (failed)
		snprintf(h->why, sizeof(h->why), "%s", f->fail_why);
	return failed;
}

unsigned int flight__running(const struct flight *f)
{
	unsigned int n = 0;

	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].hook != 0;
	return n;
}
