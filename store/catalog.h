/* SPDX-License-Identifier: MIT */
/*
 * catalog.h - what a store holds, from its keys alone: the object-store
 * layout that `record --key-prefix` and `--upload` write,
 *
 *   [PREFIX/]YYYY-MM-DD/HHMM/SERVICE/HOST/BOOT/NAME
 *
 * (UTC; NAME "EPOCH-INDEX.d9" for a segment, "d9prof-PID-...data" for a
 * flight dump), read back into entries, filtered by time, service and
 * host, and shown as `d9prof ls` shows it: the range, the services and
 * their hosts and boots, the density per time bucket, the dumps with
 * their reasons. Keys of an S3 listing or paths under a directory; a key
 * not in the layout is counted, not shown.
 */
#ifndef D9_STORE_CATALOG_H
#define D9_STORE_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct catalog_entry {
	char *key; /* as listed (relative to the listed prefix or DIR) */
	char service[64], host[64], boot[24];
	time_t wall; /* unix seconds: a segment's start (EPOCH), a dump's
		      * minute (HHMM) */
	uint64_t size;
	int dump;     /* a flight dump, else a segment */
	char *reason; /* a dump's, when known (NULL) */
};

struct catalog {
	struct catalog_entry *v;
	size_t n, cap;
	uint64_t others; /* keys not in the layout */
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
/* The reasons of the dumps @keep keeps, from their metadata (one HEAD
 * each, at most @max). 0 or the first error, -errno with why. */
int catalog__reasons(struct catalog *c, struct s3 *s, const char *prefix,
		     const unsigned char *keep, size_t max, char *why, size_t len);

/* `d9prof ls`: what the selected entries hold, under @title (the store),
 * as text or one JSON object. 0 or -EIO. */
int catalog__print(const struct catalog *c, const unsigned char *keep, const char *title,
		   int json, FILE *out);

#endif /* D9_STORE_CATALOG_H */
