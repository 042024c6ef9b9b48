/* SPDX-License-Identifier: MIT */
/*
 * catalog.h - what a store holds, from its keys alone: the object-store
 * layout that `record --key-prefix` and `--upload` write,
 *
 *   [PREFIX/]YYYY-MM-DD/HHMM/SERVICE/HOST/BOOT/NAME
 *
 * (UTC; NAME "EPOCH-INDEX.d9" for a segment, "d9prof-PID-...data" for a
 * flight dump), and beside it the segments' Parquet tables,
 *
 *   [PREFIX/]TABLE/service=SERVICE/host=HOST/date=YYYY-MM-DD/PART.parquet
 *
 * (counted, not listed), read back into entries, filtered by time, service and
 * host, and shown as `d9prof ls` shows it: the range, the services and
 * their hosts and boots, the density per time bucket, the dumps with
 * their reasons, and from each segment's index in its metadata (when the
 * store keeps one) its polls and red flags. Keys of an S3 listing or paths under a
 * directory; a key not in the layout is counted, not shown.
 */
#ifndef D9_STORE_CATALOG_H
#define D9_STORE_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* A segment's index: what the recorder saw go by while it was open,
 * uploaded with it as one metadata value (CATALOG_INDEX_META),
 * "polls=N samples=N lost=N max-poll=NS max-delay=NS": polls ended, CPU
 * samples, samples and runtime events lost, the longest poll and
 * wake-to-poll delay (ns; one still open at the segment's end as long as
 * it had lasted). Keys unknown to a reader are skipped. */
struct catalog_index {
	uint64_t polls, samples, lost;
	uint64_t max_poll_ns, max_delay_ns;
};
#define CATALOG_INDEX_META "d9prof-index"
#define CATALOG_INDEX_LEN  160
void catalog_index_format(const struct catalog_index *ix, char *buf, size_t len);
/* 0, or -EINVAL if @s holds none of the keys or a bad number. */
int catalog_index_parse(const char *s, struct catalog_index *ix);

struct catalog_entry {
	char *key; /* as listed (relative to the listed prefix or DIR) */
	char service[64], host[64], boot[24];
	time_t wall; /* unix seconds: a segment's start (EPOCH), a dump's
		      * minute (HHMM) */
	uint64_t size;
	char etag[72]; /* S3's, as listed ("" from a directory) */
	int dump;      /* a flight dump, else a segment */
	char *reason;  /* a dump's, when known (NULL) */
	int indexed;   /* a segment's index is known: */
	struct catalog_index ix;
};

struct catalog {
	struct catalog_entry *v;
	size_t n, cap;
	uint64_t others; /* keys not in the layout */
	uint64_t tables; /* Parquet tables beside the segments
			  * (TABLE/service=S/host=H/date=D/PART.parquet,
			  * record --upload-tables) */
	/* a segment's red flags, from its index (report's thresholds): a
	 * poll or a wake-to-poll delay longer than these; 0: none */
	uint64_t flag_poll_ns, flag_delay_ns;
	size_t unindexed; /* segments kept without an index read, */
	int too_many;	  /* ... and if so as more than catalog__meta()'s
			   * @max were kept */
};

/* Add @key (@size bytes) if it is in the layout, else count it. 0 or
 * -ENOMEM. */
int catalog__add(struct catalog *c, const char *key, uint64_t size);
/* Every regular file under @dir (not following links), by its path
 * relative to @dir. 0 or -errno. */
int catalog__add_dir(struct catalog *c, const char *dir);
/* Entries by service, host, boot, then time. */
void catalog__sort(struct catalog *c);
void catalog__release(struct catalog *c);

struct catalog_filter {
	time_t from, to;	    /* [from, to); 0: open */
	const char *service, *host; /* NULL: all */
};

/* The entries @f keeps, with each host's segment that runs into @f->from
 * (the last one starting before it), into @keep (c->n flags, 1 kept).
 * Sorted entries (catalog__sort()). Returns how many. */
size_t catalog__select(const struct catalog *c, const struct catalog_filter *f,
		       unsigned char *keep);

/* The UTC date prefixes ("YYYY-MM-DD/") from @from to @to, to list only
 * those days: *@n of them into @days (room for @max); -E2BIG if more (then
 * list everything). */
int catalog_days(time_t from, time_t to, char (*days)[16], size_t max, size_t *n);

struct s3;
/* The keys of @s under @prefix ("" for the bucket; only the days of
 * [@from, @to) when both are set and few), added relative to it. 0 or
 * -errno with why (s3.h). */
int catalog__add_s3(struct catalog *c, struct s3 *s, const char *prefix, time_t from,
		    time_t to, char *why, size_t len);
struct s3_config;
/* What the metadata of the entries @keep keeps says: the dumps' reasons
 * and the segments' indexes (one HEAD each, several at once), each kind
 * if at most @max of it are kept (else none is asked for; for the
 * segments, c->too_many says so).
 * 0 with *@failed objects that did not answer (why the first did), or
 * -errno with why. */
int catalog__meta(struct catalog *c, const struct s3_config *cfg, const char *bucket,
		  const char *prefix, const unsigned char *keep, size_t max,
		  size_t *failed, char *why, size_t len);

/* `d9prof ls`: what the selected entries hold, under @title (the store),
 * as text or one JSON object. 0 or -EIO. */
int catalog__print(const struct catalog *c, const unsigned char *keep, const char *title,
		   int json, FILE *out);

#endif /* D9_STORE_CATALOG_H */
