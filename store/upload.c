// SPDX-License-Identifier: MIT
/*
 * upload.c - the background uploader (upload.h): one thread, one S3
 * connection, a bounded ring of files waiting. The caller's side only
 * takes the lock to queue or read counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/upload.h"

#define META_MAX    8
#define BACKOFF_MIN 500000000ULL  /* ns */
#define BACKOFF_MAX 8000000000ULL /* ns */
#define PUT_TIMEOUT 20		  /* seconds a put may stall */

struct job {
	int fd;
	unsigned int flags; /* upload__put()'s */
	char *key;	    /* PREFIX/KEY */
	size_t nmeta;
	char *mk[META_MAX], *mv[META_MAX];
};

struct uploader {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int started;
	struct job q[UPLOAD_QUEUE]; /* a ring: q[head .. head + n) */
	unsigned int head, n;
	int busy;	   /* the thread holds a job */
	int stop;	   /* upload__finish() was called */
	uint64_t deadline; /* ... and gives up what is left past this */
	uint64_t reported; /* failures upload__poll() said */
	struct upload_stats st;
	struct s3 *s3;
	char *prefix;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	free(j->key);
	for (size_t i = 0; i < j->nmeta; i++) {
		free(j->mk[i]);
		free(j->mv[i]);
	}
	memset(j, 0, sizeof(*j));
	j->fd = -1;
}

/* Under the lock: @j is not uploaded, for @why. */
static void give_up(struct uploader *u, struct job *j, const char *why)
{
	u->st.given_up++;
	if (why)
		snprintf(u->st.last_error, sizeof(u->st.last_error), "%s", why);
	job_free(j);
}

/* Under the lock: wait until @until (ns) or a signal. */
static void wait_until(struct uploader *u, uint64_t until)
{
	struct timespec ts = {.tv_sec = (time_t)(until / 1000000000ULL),
			      .tv_nsec = (long)(until % 1000000000ULL)};

	pthread_cond_timedwait(&u->cond, &u->lock, &ts);
}

/* Under the lock: past upload__finish()'s deadline. */
static int overdue(const struct uploader *u)
{
	return u->stop && now_ns() >= u->deadline;
}

/* Put @j until it is confirmed, given up for good, or overdue. Called
 * and returns with the lock held; drops it around each put. */
static void put_job(struct uploader *u, struct job *j)
{
	uint64_t backoff = BACKOFF_MIN;
	char why[256], msg[320];

	for (unsigned int tries = 0;; tries++) {
		struct s3_meta meta[META_MAX];
		struct stat sb;
		int err;

		if (u->st.broken) {
			give_up(u, j, NULL);
			return;
		}
		if (fstat(j->fd, &sb) ||
		    (!sb.st_nlink && !(j->flags & UPLOAD_UNLINKED_OK))) {
			snprintf(msg, sizeof(msg),
				 "%s: deleted before it was uploaded (--max-total made "
				 "room)",
				 j->key);
			give_up(u, j, msg);
			return;
		}
		for (size_t i = 0; i < j->nmeta; i++)
			meta[i] = (struct s3_meta){j->mk[i], j->mv[i]};
		if (tries)
			u->st.retried++;
		pthread_mutex_unlock(&u->lock);
		why[0] = '\0';
		err = s3__put_fd(u->s3, j->key, j->fd, (uint64_t)sb.st_size, meta,
				 j->nmeta, why, sizeof(why));
		pthread_mutex_lock(&u->lock);
		if (!err) {
			u->st.uploaded++;
			u->st.bytes += (uint64_t)sb.st_size;
			job_free(j);
			return;
		}
		u->st.failures++;
		snprintf(u->st.last_error, sizeof(u->st.last_error), "%s: %s", j->key,
			 why[0] ? why : strerror(-err));
		if (err != -EAGAIN) {
			/* the store said no: for every file if it is who we
			 * are or where we put them */
			if (err == -EACCES || err == -ENOENT)
				u->st.broken = 1;
			give_up(u, j, NULL);
			return;
		}
		if (overdue(u)) {
			give_up(u, j, NULL);
			return;
		}
		wait_until(u, now_ns() + backoff);
		backoff = backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : backoff * 2;
		if (overdue(u)) {
			give_up(u, j, NULL);
			return;
		}
	}
}

static void *run(void *arg)
{
	struct uploader *u = arg;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		struct job j;

		if (!u->n) {
			if (u->stop)
				break;
			pthread_cond_wait(&u->cond, &u->lock);
			continue;
		}
		j = u->q[u->head];
		u->head = (u->head + 1) % UPLOAD_QUEUE;
		u->n--;
		if (overdue(u) || u->st.broken) {
			give_up(u, &j, NULL);
			continue;
		}
		u->busy = 1;
		put_job(u, &j);
		u->busy = 0;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

int upload__new(const struct s3_config *c, const char *bucket, const char *prefix,
		struct uploader **out)
{
	struct uploader *u = calloc(1, sizeof(*u));
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->prefix = strdup(prefix ? prefix : "");
	if (!u->prefix) {
		free(u);
		return -ENOMEM;
	}
	err = s3__new(c, bucket, PUT_TIMEOUT, &u->s3);
	if (err) {
		free(u->prefix);
		free(u);
		return err;
	}
	pthread_mutex_init(&u->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&u->thread, NULL, run, u);
	if (err) {
		upload__free(u);
		return err;
	}
	u->started = 1;
	*out = u;
	return 0;
}

int upload__put(struct uploader *u, int fd, const char *key, const struct s3_meta *meta,
		size_t nmeta, unsigned int flags)
{
	struct job j = {.fd = -1, .flags = flags};
	size_t n;

	if (fd < 0 || !key || !*key || nmeta > META_MAX)
		return -EINVAL;
	n = strlen(u->prefix) + 1 + strlen(key) + 1;
	j.key = malloc(n);
	if (!j.key)
		return -ENOMEM;
	snprintf(j.key, n, "%s%s%s", u->prefix, u->prefix[0] ? "/" : "", key);
	for (; j.nmeta < nmeta; j.nmeta++) {
		j.mk[j.nmeta] = strdup(meta[j.nmeta].key);
		j.mv[j.nmeta] = strdup(meta[j.nmeta].value);
		if (!j.mk[j.nmeta] || !j.mv[j.nmeta]) {
			j.nmeta++;
			job_free(&j);
			return -ENOMEM;
		}
	}
	j.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (j.fd < 0) {
		job_free(&j);
		return -EMFILE;
	}
	pthread_mutex_lock(&u->lock);
	if (u->st.broken || u->stop) {
		give_up(u, &j, NULL);
	} else {
		if (u->n == UPLOAD_QUEUE) {
			char msg[320];

			snprintf(msg, sizeof(msg),
				 "%s: given up, %d files were waiting for the store",
				 u->q[u->head].key, UPLOAD_QUEUE);
			give_up(u, &u->q[u->head], msg);
			u->st.failures++;
			u->head = (u->head + 1) % UPLOAD_QUEUE;
			u->n--;
		}
		u->q[(u->head + u->n) % UPLOAD_QUEUE] = j;
		u->n++;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void upload__poll(struct uploader *u, struct upload_stats *st, uint64_t *new_failures)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	st->waiting = u->n + (unsigned int)u->busy;
	if (new_failures)
		*new_failures = u->st.failures - u->reported;
	u->reported = u->st.failures;
	pthread_mutex_unlock(&u->lock);
}

void upload__finish(struct uploader *u, double wait_s, struct upload_stats *st)
{
	pthread_mutex_lock(&u->lock);
	if (!u->stop) {
		u->stop = 1;
		u->deadline = now_ns() + (uint64_t)(wait_s > 0 ? wait_s * 1e9 : 0);
	}
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	if (u->started) {
		pthread_join(u->thread, NULL);
		u->started = 0;
	}
	if (st)
		upload__poll(u, st, NULL);
}

void upload__free(struct uploader *u)
{
	if (!u)
		return;
	upload__finish(u, 0, NULL);
	while (u->n) {
		job_free(&u->q[u->head]);
		u->head = (u->head + 1) % UPLOAD_QUEUE;
		u->n--;
	}
	s3__free(u->s3);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	free(u->prefix);
	free(u);
}
