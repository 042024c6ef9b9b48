/* SPDX-License-Identifier: MIT */
/*
 * fetch.h - objects of a bucket into a local cache, several at once, for
 * the analysis commands' `-i s3://...`; and their metadata alone, several
 * at once, for `d9prof ls`.
 *
 * The cache is a directory of ours (made 0700 if missing; refused if
 * another user owns it or can write it, or it is a symbolic link): one
 * subdirectory per bucket, one file per object, named by a hash of the
 * endpoint, its key and ETag, and its key's last component. An object
 * already there with the listed size is not fetched again (and counts as
 * just used); a new one is written under a hidden name and renamed when
 * whole. After a fetch the least recently used files go until the cache
 * holds at most its bound, never one of this fetch.
 */
#ifndef D9_STORE_FETCH_H
#define D9_STORE_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "store/s3.h"

struct fetch_opts {
	const char *cache;     /* the cache directory */
	uint64_t max_bytes;    /* the cache's bound (0: no bound) */
	unsigned int parallel; /* connections at once (0: 4, at most 16) */
};

struct fetch_stats {
	size_t fetched, reused; /* objects */
	uint64_t bytes;		/* fetched */
	size_t evicted;		/* files deleted for the bound */
	size_t failed;		/* store_heads(): objects not answered */
};

/* Fetch PREFIX/@keys[i] (@sizes[i] bytes and ETag @etags[i] as listed;
 * @n of them) of @bucket into the cache; *@paths gets their local paths in
 * the same order (store_fetch_free() frees it). A file is cached under its
 * ETag too: an object written again is fetched again. 0 or -errno, with
 * why (the first failure stops the rest). */
int store_fetch(const struct s3_config *c, const char *bucket, const char *prefix,
		const char *const *keys, const uint64_t *sizes, const char *const *etags,
		size_t n, const struct fetch_opts *o, char ***paths,
		struct fetch_stats *st, char *why, size_t len);
void store_fetch_free(char **paths, size_t n);

/* The metadata value for @meta_key (without "x-amz-meta-") of
 * PREFIX/@keys[i] (@n of them) of @bucket, asked for by @parallel HEAD
 * requests at once (0: 4, at most 16): *@values gets them in the same
 * order, NULL where an object has none or did not answer (*@failed of
 * them; why the first did); store_fetch_free() frees it. 0, or -errno
 * when nothing could be asked (no memory, no connection), with why. */
int store_heads(const struct s3_config *c, const char *bucket, const char *prefix,
		const char *const *keys, size_t n, const char *meta_key,
		unsigned int parallel, char ***values, size_t *failed, char *why,
		size_t len);

/* The cache directory as documented: $D9PROF_CACHE, else
 * $XDG_CACHE_HOME/d9prof, else ~/.cache/d9prof, into @buf. 0 or
 * -ENAMETOOLONG/-ENOENT (no home). */
int store_cache_dir(char *buf, size_t len);

#endif /* D9_STORE_FETCH_H */
