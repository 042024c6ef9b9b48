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
 * directory; a key not in the layout is counted, not shown. The keys are
 * folded in as they come: nothing holds them all.
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

struct catalog_filter {
	time_t from, to;	    /* [from, to); 0: open */
	const char *service, *host; /* NULL: all */
};

/* What a catalog keeps, set before the first key. */
struct catalog_opts {
	struct catalog_filter f;
	/* segments whose index catalog__meta() asks for, at most: the
	 * latest of each run, an equal share of them (@index_max / runs; a
	 * run past @index_max runs: none); 0: none */
	size_t index_max;
	/* the objects catalog__objects() gives, at most (past it they are
	 * counted only); 0: none */
	size_t keys_max;
	/* the dumps listed, at most (the latest; past it counted); 0: 1000 */
	size_t dumps_max;
	/* a segment's red flags, from its index (report's thresholds): a
	 * poll or a wake-to-poll delay this long or longer; 0: none */
	uint64_t flag_poll_ns, flag_delay_ns;
};

/* What some segments' indexes add up to. */
struct catalog_tally {
	uint64_t indexed, polls, samples, lost, max_poll_ns, max_delay_ns;
	uint64_t flagged; /* segments with a red flag */
};

/* One service/host/boot of what the window keeps: a row of `ls`. */
struct catalog_run {
	char service[64], host[64], boot[24];
	uint64_t segments, dumps, bytes;
	time_t lo, hi; /* its first and last object's time */
	struct catalog_tally t;
	uint32_t host_id; /* the same for every run of a host */
	/* private (catalog.c) */
	uint32_t service_id;
	struct catalog_obj *last; /* its latest segments, for their index */
	size_t nlast, last_cap;
	struct catalog_obj *before; /* its last segment before the window */
	int at_from;		    /* one begins at its start */
};

/* An object the catalog keeps by its key. */
struct catalog_obj {
	char *key;   /* as listed (relative to the listed prefix or DIR) */
	time_t wall; /* unix seconds: a segment's start (EPOCH), a dump's
		      * minute (HHMM) */
	uint64_t size;
	char etag[72]; /* S3's, as listed ("" from a directory) */
	uint32_t run;  /* its catalog_run (catalog__run()) */
	int dump;      /* a flight dump, else a segment */
	char *reason;  /* a dump's, when known (NULL) */
	int indexed;   /* a segment's index is known: */
	struct catalog_index ix;
};

/* What a store holds, folded key by key into its runs and its time
 * buckets as the keys come (a listing's pages, a directory's files):
 * its memory grows with the runs, the dumps and the objects it is asked
 * to keep (the options' bounds), not with the keys. */
struct catalog;

/* 0 or -ENOMEM. */
int catalog__new(const struct catalog_opts *o, struct catalog **out);
void catalog__free(struct catalog *c);

/* @key (@size bytes, S3's @etag or NULL) folded in if it is in the
 * layout and the window keeps it, else counted; @ix: its index when the
 * caller knows it (else NULL: catalog__meta() may read it). 0 or
 * -ENOMEM. */
int catalog__add(struct catalog *c, const char *key, uint64_t size, const char *etag,
		 const struct catalog_index *ix);
/* Every regular file under @dir (not following links), by its path
 * relative to @dir. 0 or -errno. */
int catalog__add_dir(struct catalog *c, const char *dir);

struct s3;
/* The keys of @s under @prefix ("" for the bucket; only the days of the
 * window when both ends are set and few, and within them up to its end),
 * page by page, relative to it. 0 or -errno with why (s3.h). */
int catalog__add_s3(struct catalog *c, struct s3 *s, const char *prefix, char *why,
		    size_t len);

/* After the last key: each run's segment that runs into the window's
 * start (its last one begun before it) is kept, and the runs, the dumps
 * and the objects are put in order (service, host, boot, time). 0 or
 * -ENOMEM. */
int catalog__finish(struct catalog *c);

struct catalog_counts {
	uint64_t segments, dumps, bytes; /* kept */
	uint64_t others;		 /* keys not in the layout */
	uint64_t tables;		 /* Parquet tables beside the segments
					  * (record --upload-tables) */
	uint64_t objects;		 /* kept (segments and dumps) */
	size_t runs, hosts, services;	 /* distinct, of what is kept */
	time_t lo, hi;			 /* the first and last kept */
};
void catalog__counts(const struct catalog *c, struct catalog_counts *n);
/* The runs, by service, host and boot (after catalog__finish()). */
size_t catalog__runs(const struct catalog *c, const struct catalog_run **v);
/* The objects kept, by service, host, boot and time: all of them when
 * *@n equals catalog_counts.objects, else the first options.keys_max
 * added (after catalog__finish()). */
const struct catalog_obj *catalog__objects(const struct catalog *c, size_t *n);

/* The UTC date prefixes ("YYYY-MM-DD/") from @from to @to, to list only
 * those days: *@n of them into @days (room for @max); -E2BIG if more (then
 * list everything). */
int catalog_days(time_t from, time_t to, char (*days)[16], size_t max, size_t *n);

struct s3_config;
/* What the metadata of the objects kept says, after catalog__finish():
 * the dumps' reasons and the indexes of the segments options.index_max
 * picks (one HEAD each, several at once), folded into the runs and the
 * buckets. 0 with *@failed objects that did not answer (why the first
 * did), or -errno with why. */
int catalog__meta(struct catalog *c, const struct s3_config *cfg, const char *bucket,
		  const char *prefix, size_t *failed, char *why, size_t len);

/* `d9prof ls`: what the window holds, under @title (the store), as text
 * or one JSON object (after catalog__finish()). 0 or -EIO. */
int catalog__print(const struct catalog *c, const char *title, int json, FILE *out);

#endif /* D9_STORE_CATALOG_H */
