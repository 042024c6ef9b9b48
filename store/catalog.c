// SPDX-License-Identifier: MIT
/*
 * catalog.c - a store's keys read back as the object-store layout
 * (catalog.h), and `d9prof ls`'s view of them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/json.h"
#include "lib/text.h"
#include "store/catalog.h"
#include "store/fetch.h"
#include "store/s3.h"

#define DIR_DEPTH      16 /* catalog__add_dir(): directories deep, at most */
#define HEADS_PARALLEL 8  /* catalog__meta(): HEAD requests at once */

static int digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* 1 to 16 lowercase hex digits */
static int hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return n > 0 && n <= 16;
}

static unsigned int num(const char *s, size_t n)
{
	unsigned int v = 0;

	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned int)(s[i] - '0');
	return v;
}

/* @s (@n bytes) into @buf as a name of the layout: 1 to len-1 bytes, no
 * '/'. 0 or -1. */
static int component(const char *s, size_t n, char *buf, size_t len)
{
	/* what the recorder writes (flight.c: safe_component()) and nothing
	 * else: a key is anyone's with PutObject, and a SERVICE or HOST goes
	 * into commands d9prof suggests */
	if (!n || n >= len || s[0] == '.')
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!text_name_char(s[i]))
			return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* @key's last six components as the layout, into @e (not its key). */
static int parse(const char *key, struct catalog_entry *e)
{
	const char *c[6], *end = key + strlen(key);
	size_t len[6];
	struct tm tm;
	time_t minute;

	for (int i = 5; i >= 0; i--) {
		const char *s = end;

		while (s > key && s[-1] != '/')
			s--;
		c[i] = s;
		len[i] = (size_t)(end - s);
		if (i && s == key)
			return -1;
		end = s - 1;
	}
	if (len[0] != 10 || !digits(c[0], 4) || c[0][4] != '-' || !digits(c[0] + 5, 2) ||
	    c[0][7] != '-' || !digits(c[0] + 8, 2) || len[1] != 4 || !digits(c[1], 4) ||
	    component(c[2], len[2], e->service, sizeof(e->service)) ||
	    component(c[3], len[3], e->host, sizeof(e->host)) ||
	    component(c[4], len[4], e->boot, sizeof(e->boot)))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (int)num(c[0], 4) - 1900;
	tm.tm_mon = (int)num(c[0] + 5, 2) - 1;
	tm.tm_mday = (int)num(c[0] + 8, 2);
	tm.tm_hour = (int)num(c[1], 2);
	tm.tm_min = (int)num(c[1] + 2, 2);
	/* (a plausible date: 0000-01-01 and 9999-12-31 made ls print half a
	 * million buckets) */
	if (tm.tm_year < 2000 - 1900 || tm.tm_year >= 2200 - 1900 || tm.tm_mon > 11 ||
	    !tm.tm_mday || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59)
		return -1;
	minute = timegm(&tm);
	if (len[5] > 3 && !memcmp(c[5] + len[5] - 3, ".d9", 3)) {
		/* EPOCH-INDEX[-TAG].d9: its start, in the minute of its
		 * directory (TAG, the recording's, is hex) */
		const char *dash = memchr(c[5], '-', len[5]), *fin = c[5] + len[5] - 3;
		const char *tag =
			dash ? memchr(dash + 1, '-', (size_t)(fin - dash - 1)) : NULL;

		if (!tag)
			tag = fin;
		if (!dash || !digits(c[5], (size_t)(dash - c[5])) || dash - c[5] > 12 ||
		    !digits(dash + 1, (size_t)(tag - dash - 1)) ||
		    (tag < fin && !hex(tag + 1, (size_t)(fin - tag - 1))))
			return -1;
		e->wall = (time_t)strtoll(c[5], NULL, 10);
		if (e->wall < minute || e->wall >= minute + 60)
			return -1;
		e->dump = 0;
		return 0;
	}
	if (len[5] > 12 && !memcmp(c[5], "d9prof-", 7) &&
	    !memcmp(c[5] + len[5] - 5, ".data", 5)) {
		e->wall = minute;
		e->dump = 1;
		return 0;
	}
	return -1;
}

/* [PREFIX/]TABLE/service=S/host=H/date=D/PART.parquet: a table of the
 * layout's (see the top) */
static int is_table(const char *key)
{
	const char *s = strstr(key, "/service="), *h = s ? strstr(s, "/host=") : NULL;
	size_t n = strlen(key);

	return s && s > key && h && strstr(h, "/date=") && n > 8 &&
	       !strcmp(key + n - 8, ".parquet");
}

int catalog__add(struct catalog *c, const char *key, uint64_t size)
{
	struct catalog_entry e;

	memset(&e, 0, sizeof(e));
	if (is_table(key)) {
		c->tables++;
		return 0;
	}
	if (parse(key, &e)) {
		c->others++;
		return 0;
	}
	e.size = size;
	e.key = strdup(key);
	if (!e.key || LIB_GROW(c->v, c->cap, c->n + 1)) {
		free(e.key);
		return -ENOMEM;
	}
	c->v[c->n++] = e;
	return 0;
}

/* The files under @fd (a directory at @rel, "" the top), @depth deep. */
static int add_dir(struct catalog *c, int fd, const char *rel, unsigned int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int err = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		char path[4096];
		struct stat sb;

		if (de->d_name[0] == '.')
			continue; /* ., .., and files still being written */
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "",
				     de->d_name) >= sizeof(path) ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISREG(sb.st_mode)) {
			err = catalog__add(c, path, (uint64_t)sb.st_size);
		} else if (S_ISDIR(sb.st_mode) && depth < DIR_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				err = add_dir(c, sub, path, depth + 1);
		}
	}
	closedir(d);
	return err;
}

int catalog__add_dir(struct catalog *c, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : add_dir(c, fd, "", 0);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct catalog_entry *x = a, *y = b;
	int d = strcmp(x->service, y->service);

	if (!d)
		d = strcmp(x->host, y->host);
	if (!d)
		d = strcmp(x->boot, y->boot);
	if (!d)
		d = (x->wall > y->wall) - (x->wall < y->wall);
	return d ? d : strcmp(x->key, y->key);
}

void catalog__sort(struct catalog *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(c->v[0]), entry_cmp);
}

void catalog__release(struct catalog *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].reason);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int same_run(const struct catalog_entry *a, const struct catalog_entry *b)
{
	return !strcmp(a->service, b->service) && !strcmp(a->host, b->host) &&
	       !strcmp(a->boot, b->boot);
}

size_t catalog__select(const struct catalog *c, const struct catalog_filter *f,
		       unsigned char *keep)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct catalog_entry *e = &c->v[i];

		keep[i] = (!f->service || !strcmp(e->service, f->service)) &&
			  (!f->host || !strcmp(e->host, f->host)) &&
			  (!f->to || e->wall < f->to);
		if (keep[i] && f->from && e->wall < f->from) {
			/* before the window: kept if it is the segment that
			 * runs into it (the next of its run starts after) */
			const struct catalog_entry *next = NULL;

			for (size_t j = i + 1; j < c->n && same_run(e, &c->v[j]); j++)
				if (!c->v[j].dump) {
					next = &c->v[j];
					break;
				}
			keep[i] = !e->dump && (!next || next->wall > f->from);
		}
		n += keep[i];
	}
	return n;
}

int catalog_days(time_t from, time_t to, char (*days)[16], size_t max, size_t *n)
{
	*n = 0;
	for (time_t d = from - from % 86400; d < to; d += 86400) {
		struct tm tm;

		if (*n == max)
			return -E2BIG;
		gmtime_r(&d, &tm);
		strftime(days[(*n)++], sizeof(days[0]), "%Y-%m-%d/", &tm);
	}
	return 0;
}

/* ---- from S3 ---------------------------------------------------------------- */

#define DAYS_MAX 62 /* list day by day up to this many days, else all */
/* keys in the layout a listing keeps at most, all days together (a
 * 500-host fleet sealing a segment a minute writes 720k a day) */
#define LIST_KEYS_MAX 2000000

struct listing {
	struct catalog *c;
	size_t plen; /* the listed prefix's, cut off each key */
};

static int add_page(void *arg, const struct s3_object *v, size_t n)
{
	struct listing *l = arg;
	struct catalog *c = l->c;

	for (size_t i = 0; i < n; i++) {
		size_t before = c->n;
		int err;

		if (c->n >= LIST_KEYS_MAX)
			return -E2BIG;
		err = catalog__add(c,
				   v[i].key + (strlen(v[i].key) >= l->plen ? l->plen : 0),
				   v[i].size);
		if (err)
			return err;
		if (c->n > before)
			memcpy(c->v[c->n - 1].etag, v[i].etag, sizeof(v[i].etag));
	}
	return 0;
}

int catalog__add_s3(struct catalog *c, struct s3 *s, const char *prefix, time_t from,
		    time_t to, char *why, size_t len)
{
	char days[DAYS_MAX][16], p[1100];
	struct listing l = {.c = c, .plen = strlen(prefix) + (*prefix ? 1 : 0)};
	size_t ndays = 0;
	int err = 0;

	if (!from || !to || catalog_days(from, to, days, DAYS_MAX, &ndays)) {
		ndays = 1;
		days[0][0] = '\0';
	}
	for (size_t d = 0; d < ndays && !err; d++) {
		snprintf(p, sizeof(p), "%s%s%s", prefix, *prefix ? "/" : "", days[d]);
		err = s3__list(s, p, add_page, &l, why, len);
		if (err == -E2BIG)
			text_say(
				why, len,
				"more than %d keys in the layout: narrow it with --from and "
				"--to (or a longer prefix)",
				LIST_KEYS_MAX);
	}
	return err;
}

void catalog_index_format(const struct catalog_index *ix, char *buf, size_t len)
{
	snprintf(buf, len,
		 "polls=%llu samples=%llu lost=%llu max-poll=%llu max-delay=%llu",
		 (unsigned long long)ix->polls, (unsigned long long)ix->samples,
		 (unsigned long long)ix->lost, (unsigned long long)ix->max_poll_ns,
		 (unsigned long long)ix->max_delay_ns);
}

int catalog_index_parse(const char *s, struct catalog_index *ix)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
		{"polls", offsetof(struct catalog_index, polls)},
		{"samples", offsetof(struct catalog_index, samples)},
		{"lost", offsetof(struct catalog_index, lost)},
		{"max-poll", offsetof(struct catalog_index, max_poll_ns)},
		{"max-delay", offsetof(struct catalog_index, max_delay_ns)},
	};
	int found = 0;

	memset(ix, 0, sizeof(*ix));
	while (s && *s) {
		size_t n = strcspn(s, "="), w;
		const char *v = s + n;

		w = strcspn(s, " ");
		if (*v == '=' && n < w) {
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				char *end;
				unsigned long long x;

				if (strlen(keys[k].name) != n ||
				    strncmp(s, keys[k].name, n))
					continue;
				errno = 0;
				x = strtoull(v + 1, &end, 10);
				if (errno || end == v + 1 || (*end && *end != ' ') ||
				    v[1] == '-')
					return -EINVAL;
				*(uint64_t *)((char *)ix + keys[k].off) = x;
				found = 1;
			}
		}
		s += w;
		s += strspn(s, " ");
	}
	return found ? 0 : -EINVAL;
}

/* The keys of the entries @pick picks among those @keep keeps (at most
 * @max; -E2BIG past it), into *@keys (*@n of them, c->v's order) and
 * their entries into *@at. */
static int pick_keys(const struct catalog *c, const unsigned char *keep, int dump,
		     size_t max, const char ***keys, size_t **at, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < c->n; i++)
		*n += keep[i] && c->v[i].dump == dump;
	if (*n > max)
		return -E2BIG;
	*keys = calloc(*n + 1, sizeof(**keys));
	*at = calloc(*n + 1, sizeof(**at));
	if (!*keys || !*at)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (keep[i] && c->v[i].dump == dump) {
			(*at)[*n] = i;
			(*keys)[(*n)++] = c->v[i].key;
		}
	return 0;
}

int catalog__meta(struct catalog *c, const struct s3_config *cfg, const char *bucket,
		  const char *prefix, const unsigned char *keep, size_t max,
		  size_t *failed, char *why, size_t len)
{
	*failed = 0;
	c->unindexed = 0;
	c->too_many = 0;
	for (int dump = 0; dump < 2; dump++) {
		const char **keys = NULL;
		size_t *at = NULL, n, nf = 0;
		char **values = NULL, w[400] = "";
		int err = pick_keys(c, keep, dump, max, &keys, &at, &n);

		if (!err && n)
			err = store_heads(cfg, bucket, prefix, keys, n,
					  dump ? "d9prof-reason" : CATALOG_INDEX_META,
					  HEADS_PARALLEL, &values, &nf, w, sizeof(w));
		for (size_t k = 0; !err && k < n; k++) {
			struct catalog_entry *e = &c->v[at[k]];

			if (!values[k])
				continue;
			if (dump && !(e->reason = strdup(values[k])))
				err = -ENOMEM;
			else if (!dump)
				e->indexed = !catalog_index_parse(values[k], &e->ix);
		}
		if (nf && !*failed)
			snprintf(why, len, "%s", w);
		*failed += nf;
		store_fetch_free(values, n);
		free(keys);
		free(at);
		if (err == -E2BIG) {
			c->too_many |= !dump;
			continue;
		}
		if (err) {
			snprintf(why, len, "%s", w[0] ? w : strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < c->n; i++)
		c->unindexed += keep[i] && !c->v[i].dump && !c->v[i].indexed;
	return 0;
}

/* ---- the view -------------------------------------------------------------- */

/* "YYYY-MM-DD HH:MM" (UTC). */
static char *when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

/* A width of the density's time buckets that makes at most 24 of them
 * over [lo, hi] (past 24 weeks, whole weeks). */
static time_t bucket_width(time_t lo, time_t hi)
{
	static const time_t w[] = {60,	 300,	600,   900,   1800,  3600,
				   7200, 10800, 21600, 43200, 86400, 7 * 86400};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if ((hi - lo) / w[i] < 24)
			return w[i];
	return ((hi - lo) / 23 / (7 * 86400) + 1) * 7 * 86400;
}

/* @a + @b, at most UINT64_MAX: index values are the bucket's writers' */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* What the indexes of some segments add up to. */
struct tally {
	uint64_t indexed, polls, samples, lost, max_poll_ns, max_delay_ns;
	uint64_t flagged; /* segments with a red flag */
};

struct run { /* one service/host/boot */
	size_t first, n;
	uint64_t segments, dumps, bytes;
	time_t lo, hi;
	struct tally t;
};

struct bucket {
	time_t start;
	uint64_t segments, dumps, bytes;
	unsigned int hosts;
	struct tally t;
};

static void tally_add(struct tally *t, const struct catalog *c,
		      const struct catalog_entry *e)
{
	if (e->dump || !e->indexed)
		return;
	t->indexed++;
	t->polls = sat_add(t->polls, e->ix.polls);
	t->samples = sat_add(t->samples, e->ix.samples);
	t->lost = sat_add(t->lost, e->ix.lost);
	t->max_poll_ns =
		e->ix.max_poll_ns > t->max_poll_ns ? e->ix.max_poll_ns : t->max_poll_ns;
	t->max_delay_ns = e->ix.max_delay_ns > t->max_delay_ns ? e->ix.max_delay_ns
							       : t->max_delay_ns;
	t->flagged += (c->flag_poll_ns && e->ix.max_poll_ns >= c->flag_poll_ns) ||
		      (c->flag_delay_ns && e->ix.max_delay_ns >= c->flag_delay_ns);
}

/* The runs and the buckets of the entries kept. */
static int summarize(const struct catalog *c, const unsigned char *keep,
		     struct run **runs, size_t *nruns, struct bucket **bk, size_t *nbk,
		     time_t *width)
{
	size_t cap = 0, i;
	time_t lo = 0, hi = 0;
	int any = 0;

	*runs = NULL;
	*bk = NULL;
	*nruns = *nbk = 0;
	for (i = 0; i < c->n; i++) {
		const struct catalog_entry *e = &c->v[i];
		struct run *r;

		if (!keep[i])
			continue;
		if (!*nruns || !same_run(&c->v[(*runs)[*nruns - 1].first], e)) {
			if (LIB_GROW(*runs, cap, *nruns + 1))
				return -ENOMEM;
			(*runs)[(*nruns)++] =
				(struct run){.first = i, .lo = e->wall, .hi = e->wall};
		}
		r = &(*runs)[*nruns - 1];
		r->n++;
		r->bytes = sat_add(r->bytes, e->size);
		tally_add(&r->t, c, e);
		*(e->dump ? &r->dumps : &r->segments) += 1;
		r->lo = e->wall < r->lo ? e->wall : r->lo;
		r->hi = e->wall > r->hi ? e->wall : r->hi;
		lo = !any || e->wall < lo ? e->wall : lo;
		hi = !any || e->wall > hi ? e->wall : hi;
		any = 1;
	}
	if (!any)
		return 0;
	*width = bucket_width(lo, hi);
	lo -= lo % *width;
	*nbk = (size_t)((hi - lo) / *width) + 1;
	*bk = calloc(*nbk, sizeof(**bk));
	if (!*bk)
		return -ENOMEM;
	for (i = 0; i < *nbk; i++)
		(*bk)[i].start = lo + (time_t)i * *width;
	for (size_t r = 0; r < *nruns; r++) {
		const struct run *rn = &(*runs)[r];
		size_t last = (size_t)-1;

		for (i = rn->first; i < c->n && same_run(&c->v[rn->first], &c->v[i]);
		     i++) {
			const struct catalog_entry *e = &c->v[i];
			size_t b = (size_t)((e->wall - lo) / *width);

			if (!keep[i])
				continue;
			(*bk)[b].bytes = sat_add((*bk)[b].bytes, e->size);
			tally_add(&(*bk)[b].t, c, e);
			*(e->dump ? &(*bk)[b].dumps : &(*bk)[b].segments) += 1;
			if (b != last)
				(*bk)[b].hosts++;
			last = b;
		}
	}
	return 0;
}

/* "indexed" (segments with an index) and, from them, what they add up
 * to. */
static void json_tally(struct lib_json *w, const struct tally *t)
{
	lib_json_uint_field(w, "indexed", t->indexed);
	if (!t->indexed)
		return;
	lib_json_uint_field(w, "polls", t->polls);
	lib_json_uint_field(w, "samples", t->samples);
	lib_json_uint_field(w, "lost", t->lost);
	lib_json_uint_field(w, "max_poll_ns", t->max_poll_ns);
	lib_json_uint_field(w, "max_delay_ns", t->max_delay_ns);
	lib_json_uint_field(w, "flagged", t->flagged);
}

static void print_json(const struct catalog *c, const unsigned char *keep,
		       const char *title, const struct run *runs, size_t nruns,
		       const struct bucket *bk, size_t nbk, time_t width, FILE *out)
{
	struct lib_json w;

	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	lib_json_str_field(&w, "store", title);
	lib_json_uint_field(&w, "others", c->others);
	lib_json_uint_field(&w, "tables", c->tables);
	lib_json_uint_field(&w, "unindexed", c->unindexed);
	lib_json_uint_field(&w, "flag_poll_ns", c->flag_poll_ns);
	lib_json_uint_field(&w, "flag_delay_ns", c->flag_delay_ns);
	lib_json_name(&w, "runs");
	lib_json_array_begin(&w);
	for (size_t r = 0; r < nruns; r++) {
		const struct catalog_entry *e = &c->v[runs[r].first];

		lib_json_object_begin(&w);
		lib_json_str_field(&w, "service", e->service);
		lib_json_str_field(&w, "host", e->host);
		lib_json_str_field(&w, "boot", e->boot);
		lib_json_uint_field(&w, "segments", runs[r].segments);
		lib_json_uint_field(&w, "dumps", runs[r].dumps);
		lib_json_uint_field(&w, "bytes", runs[r].bytes);
		lib_json_int_field(&w, "first", runs[r].lo);
		lib_json_int_field(&w, "last", runs[r].hi);
		json_tally(&w, &runs[r].t);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_int_field(&w, "bucket_seconds", width);
	lib_json_name(&w, "buckets");
	lib_json_array_begin(&w);
	for (size_t b = 0; b < nbk; b++) {
		lib_json_object_begin(&w);
		lib_json_int_field(&w, "start", bk[b].start);
		lib_json_uint_field(&w, "segments", bk[b].segments);
		lib_json_uint_field(&w, "dumps", bk[b].dumps);
		lib_json_uint_field(&w, "bytes", bk[b].bytes);
		lib_json_uint_field(&w, "hosts", bk[b].hosts);
		json_tally(&w, &bk[b].t);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_name(&w, "dumps");
	lib_json_array_begin(&w);
	for (size_t i = 0; i < c->n; i++) {
		const struct catalog_entry *e = &c->v[i];

		if (!keep[i] || !e->dump)
			continue;
		lib_json_object_begin(&w);
		lib_json_str_field(&w, "key", e->key);
		lib_json_str_field(&w, "service", e->service);
		lib_json_str_field(&w, "host", e->host);
		lib_json_int_field(&w, "time", e->wall);
		lib_json_uint_field(&w, "bytes", e->size);
		lib_json_str_field(&w, "reason", e->reason);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_object_end(&w);
	lib_json_finish(&w);
}

/* @s shown in at most @width columns, padded (a name the target chose). */
static void put_col(FILE *out, const char *s, int width)
{
	char buf[256];
	size_t n = text_clean(s, buf, sizeof(buf));

	fprintf(out, "%-*s", width, buf);
	(void)n;
}

/* POLLS, MAX POLL, (MAX DELAY with @delay,) FLAGGED: "-" where no
 * segment has an index. */
static void put_tally(FILE *out, const struct tally *t, int delay)
{
	char p[32], d[32];

	if (!t->indexed) {
		fprintf(out, "%9s %8s %*s%s%7s", "-", "-", delay ? 9 : 0,
			delay ? "-" : "", delay ? " " : "", "-");
		return;
	}
	fprintf(out, "%9llu %8s ", (unsigned long long)t->polls,
		text_duration(t->max_poll_ns, p, sizeof(p)));
	if (delay)
		fprintf(out, "%9s ", text_duration(t->max_delay_ns, d, sizeof(d)));
	fprintf(out, "%7llu", (unsigned long long)t->flagged);
}

static void print_text(const struct catalog *c, const unsigned char *keep,
		       const char *title, const struct run *runs, size_t nruns,
		       const struct bucket *bk, size_t nbk, time_t width, FILE *out)
{
	uint64_t segs = 0, dumps = 0, bytes = 0, most = 1;
	time_t lo = 0, hi = 0;
	char a[32], b[32], sz[32];

	for (size_t r = 0; r < nruns; r++) {
		segs += runs[r].segments;
		dumps += runs[r].dumps;
		bytes = sat_add(bytes, runs[r].bytes);
		lo = !r || runs[r].lo < lo ? runs[r].lo : lo;
		hi = !r || runs[r].hi > hi ? runs[r].hi : hi;
	}
	text_put(out, title);
	if (!nruns) {
		fprintf(out, ": nothing in the layout");
		if (c->others)
			fprintf(out, " (%llu other key%s)", (unsigned long long)c->others,
				c->others == 1 ? "" : "s");
		fprintf(out, "\n");
		return;
	}
	fprintf(out, ": %llu segment%s and %llu dump%s (%s), %s to %s UTC\n",
		(unsigned long long)segs, segs == 1 ? "" : "s", (unsigned long long)dumps,
		dumps == 1 ? "" : "s", text_size((double)bytes, sz, sizeof(sz)),
		when(lo, a, sizeof(a)), when(hi, b, sizeof(b)));
	if (c->tables)
		fprintf(out, "(and %llu Parquet table file%s beside them)\n",
			(unsigned long long)c->tables, c->tables == 1 ? "" : "s");
	if (c->others)
		fprintf(out, "(and %llu key%s not in the layout)\n",
			(unsigned long long)c->others, c->others == 1 ? "" : "s");
	fprintf(out, "\n%-20s %-20s %-10s %8s %5s %9s %9s %8s %7s  %-16s  %s\n",
		"SERVICE", "HOST", "BOOT", "SEGMENTS", "DUMPS", "BYTES", "POLLS",
		"MAX POLL", "FLAGGED", "FIRST", "LAST");
	for (size_t r = 0; r < nruns; r++) {
		const struct catalog_entry *e = &c->v[runs[r].first];

		put_col(out, e->service, 20);
		fputc(' ', out);
		put_col(out, e->host, 20);
		fputc(' ', out);
		put_col(out, e->boot, 10);
		fprintf(out, " %8llu %5llu %9s ", (unsigned long long)runs[r].segments,
			(unsigned long long)runs[r].dumps,
			text_size((double)runs[r].bytes, sz, sizeof(sz)));
		put_tally(out, &runs[r].t, 0);
		fprintf(out, "  %-16s  %s\n", when(runs[r].lo, a, sizeof(a)),
			when(runs[r].hi, b, sizeof(b)));
	}
	for (size_t i = 0; i < nbk; i++)
		most = bk[i].segments > most ? bk[i].segments : most;
	fprintf(out, "\n%-16s %8s %5s %9s %5s %9s %8s %9s %7s  (per %lld min)\n",
		"WHEN (UTC)", "SEGMENTS", "DUMPS", "BYTES", "HOSTS", "POLLS", "MAX POLL",
		"MAX DELAY", "FLAGGED", (long long)width / 60);
	for (size_t i = 0; i < nbk; i++) {
		int bar = (int)((bk[i].segments * 30 + most - 1) / most);

		fprintf(out, "%-16s %8llu %5llu %9s %5u ",
			when(bk[i].start, a, sizeof(a)),
			(unsigned long long)bk[i].segments,
			(unsigned long long)bk[i].dumps,
			text_size((double)bk[i].bytes, sz, sizeof(sz)), bk[i].hosts);
		put_tally(out, &bk[i].t, 1);
		fprintf(out, "  %.*s\n", bar, "##############################");
	}
	if (c->too_many)
		fprintf(out, "\n(the segments' indexes were not read: more than can be "
			     "asked for at once; narrow with --from/--to, --service or "
			     "--host)\n");
	else if (c->unindexed)
		fprintf(out,
			"\n(%zu segment%s without an index: uploaded by another "
			"tool, or not answered)\n",
			c->unindexed, c->unindexed == 1 ? "" : "s");
	if (c->flag_poll_ns || c->flag_delay_ns) {
		char p[32], d[32];

		fprintf(out,
			"(FLAGGED: segments with a poll of %s or more, or a task "
			"woken and not polled for %s or more)\n",
			text_duration(c->flag_poll_ns, p, sizeof(p)),
			text_duration(c->flag_delay_ns, d, sizeof(d)));
	}
	if (!dumps)
		return;
	fprintf(out, "\ndumps:\n");
	for (size_t i = 0; i < c->n; i++) {
		const struct catalog_entry *e = &c->v[i];

		if (!keep[i] || !e->dump)
			continue;
		fprintf(out, "  %s  ", when(e->wall, a, sizeof(a)));
		text_put(out, e->key);
		fprintf(out, " (%s)", text_size((double)e->size, sz, sizeof(sz)));
		if (e->reason) {
			fprintf(out, ": ");
			text_put(out, e->reason);
		}
		fputc('\n', out);
	}
}

int catalog__print(const struct catalog *c, const unsigned char *keep, const char *title,
		   int json, FILE *out)
{
	struct run *runs;
	struct bucket *bk;
	size_t nruns, nbk;
	time_t width = 60;
	int err = summarize(c, keep, &runs, &nruns, &bk, &nbk, &width);

	if (!err) {
		if (json)
			print_json(c, keep, title, runs, nruns, bk, nbk, width, out);
		else
			print_text(c, keep, title, runs, nruns, bk, nbk, width, out);
	}
	free(runs);
	free(bk);
	if (err)
		return err;
	return ferror(out) ? -EIO : 0;
}
