// SPDX-License-Identifier: MIT
/*
 * fetch.c - objects into the local cache (fetch.h): a few threads, each
 * with its own connection, taking the next key until none is left or one
 * failed; then the cache's bound, least recently used first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/text.h"
#include "store/fetch.h"

#define PARALLEL_MAX 16
#define GET_STALL    30 /* seconds a get may move nothing */

struct job {
	const struct s3_config *c;
	const char *bucket, *prefix;
	const char *const *keys;
	const uint64_t *sizes;
	const char *const *etags;
	size_t n;
	int dirfd;	      /* the bucket's directory in the cache */
	const char *dir;      /* ... its path */
	char **paths;	      /* out: the files, or with meta_key the values */
	const char *meta_key; /* store_heads(): HEAD, not GET */
	pthread_mutex_t lock;
	size_t next; /* the next key to take */
	int err;     /* the first failure */
	char why[400];
	struct fetch_stats st;
};

int store_cache_dir(char *buf, size_t len)
{
	const char *d = getenv("D9PROF_CACHE"), *x = getenv("XDG_CACHE_HOME"),
		   *h = getenv("HOME");
	int n;

	if (d && *d)
		n = snprintf(buf, len, "%s", d);
	else if (x && *x == '/')
		n = snprintf(buf, len, "%s/d9prof", x);
	else if (h && *h == '/')
		n = snprintf(buf, len, "%s/.cache/d9prof", h);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The file that marks a cache directory d9prof made: eviction deletes
 * only in one (D9PROF_CACHE may name any directory, ~/.cache under sudo
 * -E), and only the names cache_name() makes. */
#define CACHE_MARK ".d9prof-cache"

/* @path's directory, made (0700, with its missing parents) if need be,
 * opened without following a link, and ours alone; marked if @mark is 1
 * and it is made now, or @mark is 2 (d9prof's own default place). The fd
 * or -errno, with why. */
static int cache_open(const char *path, int mark, char *why, size_t len)
{
	int made, m;
	char p[4096];
	struct stat sb;
	int fd;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	made = !mkdir(p, 0700);
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "cannot use the cache '%s': %s", path,
			 strerror(errno));
		return -errno;
	}
	if (fstat(fd, &sb) || sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		close(fd);
		snprintf(why, len,
			 "cannot use the cache '%s': another user owns it or can write "
			 "it (chmod 700 it, or set D9PROF_CACHE)",
			 path);
		return -EPERM;
	}
	if ((mark > 1 || (mark && made)) &&
	    (m = openat(fd, CACHE_MARK,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0)
		close(m);
	return fd;
}

/* Is the cache at @top one d9prof made (its mark a regular file of
 * ours)? */
static int cache_marked(int top)
{
	struct stat sb;

	return !fstatat(top, CACHE_MARK, &sb, AT_SYMLINK_NOFOLLOW) &&
	       S_ISREG(sb.st_mode) && sb.st_uid == geteuid();
}

/* Is @name one cache_name() makes (16 hex digits, '-', the rest)? */
static int cache_named(const char *name)
{
	for (int i = 0; i < 16; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		      (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return name[16] == '-' && name[17];
}

/* The cache file of @key at @endpoint as @etag: a hash of the endpoint,
 * the whole key and the ETag (an object written again is another file),
 * then its last part made a safe name (what is not [A-Za-z0-9._-]
 * becomes '_': a key is anyone's with PutObject). */
static void cache_name(const char *endpoint, const char *prefix, const char *key,
		       const char *etag, char *buf, size_t len)
{
	const char *base = strrchr(key, '/');
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	int n;

	for (const char *s = endpoint; *s; s++)
		h = lib_hash64(h ^ (unsigned char)*s);
	h = lib_hash64(h ^ ' ');
	for (const char *s = prefix; *s; s++)
		h = lib_hash64(h ^ (unsigned char)*s);
	h = lib_hash64(h ^ '/');
	for (const char *s = key; *s; s++)
		h = lib_hash64(h ^ (unsigned char)*s);
	h = lib_hash64(h ^ '"');
	for (const char *s = etag; *s; s++)
		h = lib_hash64(h ^ (unsigned char)*s);
	n = snprintf(buf, len, "%016llx-%.180s", (unsigned long long)h,
		     base ? base + 1 : key);
	for (char *c = buf + 17; n > 0 && *c; c++)
		if (!text_name_char(*c))
			*c = '_';
}

/* Key @i into the cache: reused, or fetched under a hidden name and
 * renamed. 0 or -errno with why. */
static int fetch_one(struct job *j, struct s3 *s, size_t i, char *why, size_t len)
{
	char name[256], tmp[300], key[2048], path[4400];
	struct stat sb;
	uint64_t got = 0;
	int fd, err;

	cache_name(j->c->endpoint, j->prefix, j->keys[i], j->etags[i], name,
		   sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", j->dir, name);
	j->paths[i] = strdup(path);
	if (!j->paths[i])
		return -ENOMEM;
	if (!fstatat(j->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISREG(sb.st_mode) &&
	    (uint64_t)sb.st_size == j->sizes[i]) {
		/* there: just used */
		utimensat(j->dirfd, name, NULL, AT_SYMLINK_NOFOLLOW);
		pthread_mutex_lock(&j->lock);
		j->st.reused++;
		pthread_mutex_unlock(&j->lock);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), ".%s.%zu.tmp", name, i);
	unlinkat(j->dirfd, tmp, 0);
	fd = openat(j->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		snprintf(why, len, "cannot write into the cache '%s': %s", j->dir,
			 strerror(errno));
		return -errno;
	}
	snprintf(key, sizeof(key), "%s%s%s", j->prefix, *j->prefix ? "/" : "",
		 j->keys[i]);
	err = s3__get_fd(s, key, fd, j->sizes[i], &got, why, len);
	if (!err && close(fd))
		err = -errno;
	else if (err)
		close(fd);
	if (!err && renameat(j->dirfd, tmp, j->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(j->dirfd, tmp, 0);
		return err;
	}
	pthread_mutex_lock(&j->lock);
	j->st.fetched++;
	j->st.bytes += got;
	pthread_mutex_unlock(&j->lock);
	return 0;
}

/* Key @i's metadata value into j->paths[i] (NULL if it has none); a
 * failure is kept as the first one but stops nothing. */
static int head_one(struct job *j, struct s3 *s, size_t i, char *why, size_t len)
{
	char key[2048], value[512];
	int err;

	snprintf(key, sizeof(key), "%s%s%s", j->prefix, *j->prefix ? "/" : "",
		 j->keys[i]);
	err = s3__head(s, key, NULL, j->meta_key, value, sizeof(value), why, len);
	if (!err && value[0] && !(j->paths[i] = strdup(value)))
		return -ENOMEM;
	if (err && err != -ENOMEM) {
		pthread_mutex_lock(&j->lock);
		if (!j->st.failed++)
			snprintf(j->why, sizeof(j->why), "%s",
				 why[0] ? why : strerror(-err));
		pthread_mutex_unlock(&j->lock);
		return 0;
	}
	return err;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct s3 *s = NULL;
	char why[400] = "";
	int err = s3__new(j->c, j->bucket, GET_STALL, &s);

	for (;;) {
		size_t i;

		pthread_mutex_lock(&j->lock);
		if (err && !j->err) {
			j->err = err;
			snprintf(j->why, sizeof(j->why), "%s",
				 why[0] ? why : s3_strerror(err));
		}
		i = j->err || j->next >= j->n ? (size_t)-1 : j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i == (size_t)-1)
			break;
		why[0] = '\0';
		err = j->meta_key ? head_one(j, s, i, why, sizeof(why))
				  : fetch_one(j, s, i, why, sizeof(why));
	}
	s3__free(s);
	return NULL;
}

struct cached {
	int dirfd;
	char *name;
	uint64_t size;
	struct timespec mtime;
};

static int older(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) -
	       (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* The files of every bucket's directory under @top, the oldest deleted
 * until they hold at most @max bytes; none used since @since. */
static size_t evict(int top, uint64_t max, time_t since)
{
	struct cached *v = NULL;
	size_t n = 0, cap = 0, gone = 0;
	int fds[64], nfd = 0;
	uint64_t total = 0;
	DIR *d = fdopendir(dup(top));
	struct dirent *de;

	while (d && (de = readdir(d)) && nfd < 64) {
		int b;
		DIR *bd;
		struct dirent *f;

		if (de->d_name[0] == '.')
			continue;
		b = openat(top, de->d_name,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (b < 0)
			continue;
		fds[nfd++] = b;
		bd = fdopendir(dup(b));
		while (bd && (f = readdir(bd))) {
			struct stat sb;

			if (!cache_named(f->d_name) ||
			    fstatat(b, f->d_name, &sb, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISREG(sb.st_mode))
				continue;
			total += (uint64_t)sb.st_size;
			if (sb.st_mtim.tv_sec >= since || LIB_GROW(v, cap, n + 1))
				continue;
			v[n].dirfd = b;
			v[n].name = strdup(f->d_name);
			v[n].size = (uint64_t)sb.st_size;
			v[n].mtime = sb.st_mtim;
			if (v[n].name)
				n++;
		}
		if (bd)
			closedir(bd);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), older);
	for (size_t i = 0; i < n; i++) {
		if (total > max && !unlinkat(v[i].dirfd, v[i].name, 0)) {
			total -= v[i].size;
			gone++;
		}
		free(v[i].name);
	}
	free(v);
	while (nfd)
		close(fds[--nfd]);
	return gone;
}

/* @j's keys by @parallel workers (0: 4, at most PARALLEL_MAX), each with
 * its connection. */
static void run_job(struct job *j, unsigned int parallel)
{
	pthread_t th[PARALLEL_MAX];
	unsigned int k = parallel ? parallel : 4, started = 0;

	pthread_mutex_init(&j->lock, NULL);
	if (k > PARALLEL_MAX)
		k = PARALLEL_MAX;
	if (k > j->n)
		k = (unsigned int)j->n;
	for (; started < k; started++)
		if (pthread_create(&th[started], NULL, worker, j))
			break;
	if (!started && j->n)
		worker(j);
	while (started)
		pthread_join(th[--started], NULL);
	pthread_mutex_destroy(&j->lock);
}

int store_heads(const struct s3_config *c, const char *bucket, const char *prefix,
		const char *const *keys, size_t n, const char *meta_key,
		unsigned int parallel, char ***values, size_t *failed, char *why,
		size_t len)
{
	struct job j = {.c = c,
			.bucket = bucket,
			.prefix = prefix,
			.keys = keys,
			.n = n,
			.dirfd = -1,
			.meta_key = meta_key};

	*values = NULL;
	*failed = 0;
	j.paths = calloc(n + 1, sizeof(*j.paths));
	if (!j.paths)
		return -ENOMEM;
	run_job(&j, parallel);
	*failed = j.st.failed;
	if (j.err || j.st.failed)
		snprintf(why, len, "%s", j.why);
	if (j.err) {
		store_fetch_free(j.paths, n);
		return j.err;
	}
	*values = j.paths;
	return 0;
}

int store_fetch(const struct s3_config *c, const char *bucket, const char *prefix,
		const char *const *keys, const uint64_t *sizes, const char *const *etags,
		size_t n, const struct fetch_opts *o, char ***paths,
		struct fetch_stats *st, char *why, size_t len)
{
	struct job j = {.c = c,
			.bucket = bucket,
			.prefix = prefix,
			.keys = keys,
			.sizes = sizes,
			.etags = etags,
			.n = n,
			.dirfd = -1};
	char dir[4200];
	const char *env;
	time_t since = time(NULL) - 1;
	int top, err = 0;

	*paths = NULL;
	memset(st, 0, sizeof(*st));
	/* what does not fit the cache is not fetched */
	for (size_t i = 0, all = 0; o->max_bytes && i < n; i++) {
		all += sizes[i];
		if (sizes[i] > o->max_bytes || all > o->max_bytes) {
			snprintf(why, len,
				 "%s%s%s is listed at %llu bytes: the objects asked for "
				 "pass the cache's %llu (D9PROF_CACHE_MAX; or fewer, "
				 "with --from/--to)",
				 prefix, *prefix ? "/" : "", keys[i],
				 (unsigned long long)sizes[i],
				 (unsigned long long)o->max_bytes);
			return -EFBIG;
		}
	}
	env = getenv("D9PROF_CACHE");
	top = cache_open(o->cache, env && *env ? 1 : 2, why, len);
	if (top < 0)
		return top;
	snprintf(dir, sizeof(dir), "%s/%s", o->cache, bucket);
	j.dirfd = cache_open(dir, 0, why, len);
	if (j.dirfd < 0) {
		close(top);
		return j.dirfd;
	}
	j.dir = dir;
	j.paths = calloc(n + 1, sizeof(*j.paths));
	if (!j.paths) {
		err = -ENOMEM;
		goto out;
	}
	run_job(&j, o->parallel);
	err = j.err;
	if (err)
		snprintf(why, len, "%s", j.why);
	*st = j.st;
	if (!err && o->max_bytes && cache_marked(top))
		st->evicted = evict(top, o->max_bytes, since);
out:
	close(j.dirfd);
	close(top);
	if (err) {
		store_fetch_free(j.paths, n);
		return err;
	}
	*paths = j.paths;
	return 0;
}

void store_fetch_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}
