/* SPDX-License-Identifier: MIT */
/*
 * upload.h - a background uploader: files handed over by fd go to
 * s3://BUCKET/PREFIX/KEY from a thread of its own, so the caller (the
 * recorder's loop) never waits on the network.
 *
 * The queue is bounded (UPLOAD_QUEUE files): a file handed over when it is
 * full takes the place of the oldest waiting one, which is given up and
 * counted. A failed put is tried again after a backoff (0.5 s doubling to
 * 8 s) for as long as the uploader runs, unless the store said no for good
 * (credentials, permission, no such bucket: then this and every later
 * file are given up, and the reason kept); a file deleted meanwhile (its
 * link count 0: `--max-total` made room) is given up. Every failure is
 * counted and its reason kept; the caller reports them (upload__poll()).
 */
#ifndef D9_STORE_UPLOAD_H
#define D9_STORE_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "store/s3.h"

#define UPLOAD_QUEUE 64

struct upload_stats {
	uint64_t uploaded, bytes; /* objects confirmed, their bytes */
	uint64_t retried;	  /* puts tried again */
	uint64_t given_up;	  /* files not uploaded */
	unsigned int waiting;	  /* in the queue or being put now */
	uint64_t failures;	  /* failed puts, all reasons */
	char last_error[400];	  /* the latest failure ("" none) */
	int broken;		  /* the store said no for good */
};

struct uploader;

/* An uploader to @bucket under @prefix ("" for none) with @c (copied);
 * its thread starts. 0 or -errno. */
int upload__new(const struct s3_config *c, const char *bucket, const char *prefix,
		struct uploader **out);
/* upload__put() flags */
/* the caller unlinks the file once it is handed over (a temporary one):
 * put what the fd holds whatever its link count, where a file deleted
 * before its put is otherwise given up (--max-total made room) */
#define UPLOAD_UNLINKED_OK 0x1u

/* Hand over the file open at @fd (dup'ed: the caller keeps its own) as
 * PREFIX/@key with @meta (@nmeta pairs, copied; at most 8). Never blocks
 * on the network. 0, -ENOMEM, -EMFILE (no fd to dup), -EINVAL. */
int upload__put(struct uploader *u, int fd, const char *key, const struct s3_meta *meta,
		size_t nmeta, unsigned int flags);
/* The counts so far; *@new_failures the failures since the last call
 * (to report them as they come). */
void upload__poll(struct uploader *u, struct upload_stats *st, uint64_t *new_failures);
/* Wait up to @wait_s seconds for the queue to empty, then stop: what is
 * left is given up. The final counts in @st. */
void upload__finish(struct uploader *u, double wait_s, struct upload_stats *st);
/* Stop (upload__finish() with no wait if not done) and free. */
void upload__free(struct uploader *u);

#endif /* D9_STORE_UPLOAD_H */
