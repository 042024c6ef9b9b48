// SPDX-License-Identifier: MIT
/*
 * catalog.c - a store's keys read back as the object-store layout
 * (catalog.h), and `d9prof ls`'s view of them.
 *
 * A key is folded in as it comes and not kept: into its run (one per
 * service/host/boot), into a fine time bucket (with a bit for its host,
 * so that a bucket counts hosts, not runs), and kept only where the
 * output needs it: the latest segments of each run whose index is to be
 * read (an equal share of index_max, held in an array of twice as many
 * cut to the newest when full), the latest dumps (dumps_max, the same
 * way), each run's segment before the window (the one that may
 * run into it: decided at the end), and the objects asked for (keys_max).
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
#include "lib/strset.h"
#include "lib/text.h"
#include "store/catalog.h"
#include "store/fetch.h"
#include "store/s3.h"

#define DIR_DEPTH      16   /* catalog__add_dir(): directories deep, at most */
#define HEADS_PARALLEL 8    /* catalog__meta(): HEAD requests at once */
#define DUMPS_MAX      1000 /* dumps listed unless the options say */
/* The time buckets are kept fine (at most FINE_MAX of a width in
 * fine_widths[]) and drawn coarser (bucket_width(), a multiple of the
 * fine width): the range is known only when the last key is in. */
#define FINE_MAX   1024
#define FINE_WORDS (FINE_MAX / 64)

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

/* A key read as the layout */
struct parsed {
	char service[64], host[64], boot[24];
	time_t wall;
	int dump;
};

/* @key's last six components as the layout, into @e. */
static int parse(const char *key, struct parsed *e)
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

/* a fine time bucket: what its kept objects add up to */
struct fine {
	uint64_t segments, dumps, bytes;
	struct catalog_tally t;
};

struct catalog {
	struct catalog_opts o;
	struct lib_strset names; /* "SERVICE\0HOST\0BOOT" -> run */
	struct lib_strset hosts, services;
	struct catalog_run *runs;
	size_t nruns, runs_cap;
	size_t per_run;	 /* segments each run keeps for its index */
	uint32_t *order; /* the runs shown, in order (catalog__finish()) */
	size_t norder;
	struct catalog_obj *dumps; /* the latest (latest_push()) */
	size_t ndumps, dumps_cap;
	struct catalog_obj *objs; /* options.keys_max of the kept */
	size_t nobjs, objs_cap;
	uint64_t others, segments, ndump, bytes, objects;
	uint64_t tables;	  /* Parquet tables beside the segments (is_table()) */
	size_t nhosts, nservices; /* of the runs kept (catalog__finish()) */
	uint64_t known;		  /* segments whose index came with their key */
	uint64_t asked;		  /* segments whose index catalog__meta() asked for */
	int meta_done;
	/* the fine time buckets: FINE_MAX of fine_w seconds from fine_base,
	 * and FINE_WORDS of bits per host: the buckets it has objects in */
	struct fine *fine, *spare;
	uint64_t *bits;
	size_t bits_cap;
	time_t fine_w, fine_base, lo, hi;
	int any;
	/* catalog__add_s3(): a key of this minute or later ends a day's
	 * listing ("YYYY-MM-DD/HHMM"; "" none) */
	char stop_at[16];
	int stopped;
};

static const time_t fine_widths[] = {
	/* each a multiple of those before it, and a divisor of every
	 * width bucket_width() draws that is not below it */
	60,	    300,	900,	    1800,	 3600,
	10800,	    21600,	43200,	    86400,	 7 * 86400,
	14 * 86400, 28 * 86400, 56 * 86400, 112 * 86400, 224 * 86400,
};

static void obj_release(struct catalog_obj *o)
{
	free(o->key);
	free(o->reason);
	o->key = o->reason = NULL;
}

/* @a before @b: older, or as old and first by key */
static int older(const struct catalog_obj *a, const struct catalog_obj *b)
{
	if (a->wall != b->wall)
		return a->wall < b->wall;
	return strcmp(a->key, b->key) < 0;
}

/* ---- the latest objects of a kind --------------------------------------------- */

static int newer_first(const void *a, const void *b)
{
	return older(b, a) - older(a, b);
}

/* The newest @max of @v (*@n of them) kept, the rest dropped. */
static void latest_cut(struct catalog_obj *v, size_t *n, size_t max)
{
	if (*n <= max)
		return;
	qsort(v, *n, sizeof(*v), newer_first);
	for (size_t i = max; i < *n; i++)
		obj_release(&v[i]);
	*n = max;
}

/* A copy of @o (its key) added to the array that keeps the @max newest:
 * it holds up to twice as many, cut to the newest @max when full (a sort
 * every @max objects). 0 or -ENOMEM. */
static int latest_push(struct catalog_obj **v, size_t *n, size_t *cap, size_t max,
		       const struct catalog_obj *o)
{
	struct catalog_obj c = *o;

	if (!max)
		return 0;
	if (*n >= 2 * max)
		latest_cut(*v, n, max);
	c.key = strdup(o->key);
	c.reason = NULL;
	if (!c.key || LIB_GROW(*v, *cap, *n + 1)) {
		free(c.key);
		return -ENOMEM;
	}
	(*v)[(*n)++] = c;
	return 0;
}

/* ---- the time buckets -------------------------------------------------------- */

static size_t fine_at(const struct catalog *c, time_t t)
{
	return (size_t)((t - c->fine_base) / c->fine_w);
}

/* @a + @b, at most UINT64_MAX: index values are the bucket's writers' */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void tally_add(struct catalog_tally *t, const struct catalog_opts *o,
		      const struct catalog_index *ix)
{
	t->indexed++;
	t->polls = sat_add(t->polls, ix->polls);
	t->samples = sat_add(t->samples, ix->samples);
	t->lost = sat_add(t->lost, ix->lost);
	t->max_poll_ns =
		ix->max_poll_ns > t->max_poll_ns ? ix->max_poll_ns : t->max_poll_ns;
	t->max_delay_ns =
		ix->max_delay_ns > t->max_delay_ns ? ix->max_delay_ns : t->max_delay_ns;
	t->flagged += (o->flag_poll_ns && ix->max_poll_ns >= o->flag_poll_ns) ||
		      (o->flag_delay_ns && ix->max_delay_ns >= o->flag_delay_ns);
}

static void tally_merge(struct catalog_tally *t, const struct catalog_tally *u)
{
	t->indexed += u->indexed;
	t->polls = sat_add(t->polls, u->polls);
	t->samples = sat_add(t->samples, u->samples);
	t->lost = sat_add(t->lost, u->lost);
	t->max_poll_ns =
		u->max_poll_ns > t->max_poll_ns ? u->max_poll_ns : t->max_poll_ns;
	t->max_delay_ns =
		u->max_delay_ns > t->max_delay_ns ? u->max_delay_ns : t->max_delay_ns;
	t->flagged += u->flagged;
}

static void fine_merge(struct fine *a, const struct fine *b)
{
	a->segments += b->segments;
	a->dumps += b->dumps;
	a->bytes = sat_add(a->bytes, b->bytes);
	tally_merge(&a->t, &b->t);
}

/* The fine buckets over [lo, hi] (which holds what they held): the
 * first width that fits FINE_MAX of them. */
static void fine_cover(struct catalog *c, time_t lo, time_t hi)
{
	size_t k = 0, nw = sizeof(fine_widths) / sizeof(fine_widths[0]);
	time_t w, base;

	while (fine_widths[k] < c->fine_w)
		k++;
	for (; k + 1 < nw; k++)
		if ((hi - (lo - lo % fine_widths[k])) / fine_widths[k] < FINE_MAX)
			break;
	w = fine_widths[k];
	base = lo - lo % w;
	memset(c->spare, 0, FINE_MAX * sizeof(*c->spare));
	for (size_t i = 0; i < FINE_MAX; i++)
		if (c->fine[i].segments || c->fine[i].dumps)
			fine_merge(&c->spare[(size_t)((c->fine_base +
						       (time_t)i * c->fine_w - base) /
						      w)],
				   &c->fine[i]);
	for (size_t h = 0; h < lib_strset_count(&c->hosts); h++) {
		uint64_t *b = c->bits + h * FINE_WORDS, nb[FINE_WORDS] = {0};

		for (size_t i = 0; i < FINE_MAX; i++)
			if (b[i / 64] >> (i % 64) & 1) {
				size_t j = (size_t)((c->fine_base +
						     (time_t)i * c->fine_w - base) /
						    w);

				nb[j / 64] |= 1ULL << (j % 64);
			}
		memcpy(b, nb, sizeof(nb));
	}
	{
		struct fine *t = c->fine;

		c->fine = c->spare;
		c->spare = t;
	}
	c->fine_w = w;
	c->fine_base = base;
}

/* The fine bucket of @t, the buckets made to cover it. */
static struct fine *fine_of(struct catalog *c, time_t t, uint32_t host)
{
	size_t i;

	if (!c->any) {
		c->fine_w = fine_widths[0];
		c->fine_base = t - t % c->fine_w;
		c->lo = c->hi = t;
		c->any = 1;
	} else {
		c->lo = t < c->lo ? t : c->lo;
		c->hi = t > c->hi ? t : c->hi;
		if (t < c->fine_base || t >= c->fine_base + FINE_MAX * c->fine_w)
			fine_cover(c, c->lo, c->hi);
	}
	i = fine_at(c, t);
	c->bits[host * FINE_WORDS + i / 64] |= 1ULL << (i % 64);
	return &c->fine[i];
}

/* ---- folding keys in --------------------------------------------------------- */

int catalog__new(const struct catalog_opts *o, struct catalog **out)
{
	struct catalog *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->o = *o;
	if (!c->o.dumps_max)
		c->o.dumps_max = DUMPS_MAX;
	c->per_run = c->o.index_max;
	c->fine = calloc(FINE_MAX, sizeof(*c->fine));
	c->spare = calloc(FINE_MAX, sizeof(*c->spare));
	if (!c->fine || !c->spare) {
		catalog__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void catalog__free(struct catalog *c)
{
	if (!c)
		return;
	for (size_t r = 0; r < c->nruns; r++) {
		struct catalog_run *rn = &c->runs[r];

		for (size_t i = 0; i < rn->nlast; i++)
			obj_release(&rn->last[i]);
		free(rn->last);
		if (rn->before)
			obj_release(rn->before);
		free(rn->before);
	}
	for (size_t i = 0; i < c->ndumps; i++)
		obj_release(&c->dumps[i]);
	for (size_t i = 0; i < c->nobjs; i++)
		obj_release(&c->objs[i]);
	lib_strset_release(&c->names);
	lib_strset_release(&c->hosts);
	lib_strset_release(&c->services);
	free(c->runs);
	free(c->order);
	free(c->dumps);
	free(c->objs);
	free(c->fine);
	free(c->spare);
	free(c->bits);
	free(c);
}

/* The run of @e, made if new (the index's share of each run shrunk to
 * make room for it). Its index in *@run; 0 or -ENOMEM/-EOVERFLOW. */
static int run_of(struct catalog *c, const struct parsed *e, uint32_t *run)
{
	char name[sizeof(e->service) + sizeof(e->host) + sizeof(e->boot)];
	size_t a = strlen(e->service), b = strlen(e->host), d = strlen(e->boot);
	struct catalog_run *r;
	uint32_t host, svc;
	int err;

	memcpy(name, e->service, a + 1);
	memcpy(name + a + 1, e->host, b + 1);
	memcpy(name + a + b + 2, e->boot, d);
	err = lib_strset_find(&c->names, name, a + b + d + 2, run);
	if (!err)
		return 0;
	if (LIB_GROW(c->runs, c->runs_cap, c->nruns + 1))
		return -ENOMEM;
	err = lib_strset_add(&c->hosts, e->host, b, &host);
	if (err >= 0 && host >= c->bits_cap / FINE_WORDS) {
		size_t had = c->bits_cap;

		err = LIB_GROW(c->bits, c->bits_cap, (size_t)(host + 1) * FINE_WORDS)
			      ? -ENOMEM
			      : 0;
		if (!err)
			memset(c->bits + had, 0, (c->bits_cap - had) * sizeof(*c->bits));
	}
	if (err >= 0)
		err = lib_strset_add(&c->services, e->service, a, &svc);
	if (err >= 0)
		err = lib_strset_add(&c->names, name, a + b + d + 2, run);
	if (err < 0)
		return err;
	r = &c->runs[c->nruns++];
	memset(r, 0, sizeof(*r));
	memcpy(r->service, e->service, sizeof(r->service));
	memcpy(r->host, e->host, sizeof(r->host));
	memcpy(r->boot, e->boot, sizeof(r->boot));
	r->host_id = host;
	r->service_id = svc;
	c->per_run = c->nruns <= c->o.index_max ? c->o.index_max / c->nruns : 0;
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].nlast > 2 * c->per_run)
			latest_cut(c->runs[i].last, &c->runs[i].nlast, c->per_run);
	return 0;
}

static void fold_index(struct catalog *c, struct catalog_obj *o)
{
	tally_add(&c->runs[o->run].t, &c->o, &o->ix);
	tally_add(&c->fine[fine_at(c, o->wall)].t, &c->o, &o->ix);
}

/* @o kept: in its run, its bucket, and where it is to be read. */
static int keep(struct catalog *c, struct catalog_obj *o)
{
	struct catalog_run *r = &c->runs[o->run];
	struct fine *f = fine_of(c, o->wall, r->host_id);
	int err = 0;

	if (!r->segments && !r->dumps)
		r->lo = r->hi = o->wall;
	r->lo = o->wall < r->lo ? o->wall : r->lo;
	r->hi = o->wall > r->hi ? o->wall : r->hi;
	*(o->dump ? &r->dumps : &r->segments) += 1;
	*(o->dump ? &f->dumps : &f->segments) += 1;
	*(o->dump ? &c->ndump : &c->segments) += 1;
	r->bytes = sat_add(r->bytes, o->size);
	f->bytes = sat_add(f->bytes, o->size);
	c->bytes = sat_add(c->bytes, o->size);
	c->objects++;
	if (o->dump)
		err = latest_push(&c->dumps, &c->ndumps, &c->dumps_cap, c->o.dumps_max,
				  o);
	else if (o->indexed) {
		fold_index(c, o);
		c->known++;
	} else
		err = latest_push(&r->last, &r->nlast, &r->last_cap, c->per_run, o);
	if (!err && c->nobjs < c->o.keys_max) {
		struct catalog_obj k = *o;

		k.reason = NULL;
		if (!(k.key = strdup(o->key)) ||
		    LIB_GROW(c->objs, c->objs_cap, c->nobjs + 1)) {
			free(k.key);
			return -ENOMEM;
		}
		c->objs[c->nobjs++] = k;
	}
	return err;
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

int catalog__add(struct catalog *c, const char *key, uint64_t size, const char *etag,
		 const struct catalog_index *ix)
{
	const struct catalog_filter *f = &c->o.f;
	struct catalog_obj o = {.key = (char *)key, .size = size};
	struct catalog_run *r;
	struct parsed e;
	int err;

	if (is_table(key)) {
		c->tables++;
		return 0;
	}
	if (parse(key, &e)) {
		c->others++;
		return 0;
	}
	if ((f->service && strcmp(e.service, f->service)) ||
	    (f->host && strcmp(e.host, f->host)) || (f->to && e.wall >= f->to))
		return 0;
	err = run_of(c, &e, &o.run);
	if (err)
		return err;
	r = &c->runs[o.run];
	o.wall = e.wall;
	o.dump = e.dump;
	if (etag)
		snprintf(o.etag, sizeof(o.etag), "%s", etag);
	if (ix && !e.dump) {
		o.indexed = 1;
		o.ix = *ix;
	}
	if (f->from && e.wall < f->from) {
		/* before the window: a segment that may run into it, if it
		 * is its run's last begun before it (decided at the end) */
		if (e.dump || (r->before && !older(r->before, &o)))
			return 0;
		if (!r->before && !(r->before = calloc(1, sizeof(*r->before))))
			return -ENOMEM;
		obj_release(r->before);
		*r->before = o;
		r->before->key = strdup(key);
		return r->before->key ? 0 : -ENOMEM;
	}
	if (f->from && e.wall == f->from && !e.dump)
		r->at_from = 1;
	return keep(c, &o);
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
			err = catalog__add(c, path, (uint64_t)sb.st_size, NULL, NULL);
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

static int obj_cmp(const void *a, const void *b, void *arg)
{
	const struct catalog_obj *x = a, *y = b;
	const struct catalog *c = arg;
	const struct catalog_run *p = &c->runs[x->run], *q = &c->runs[y->run];
	int d = strcmp(p->service, q->service);

	if (!d)
		d = strcmp(p->host, q->host);
	if (!d)
		d = strcmp(p->boot, q->boot);
	if (!d)
		d = (x->wall > y->wall) - (x->wall < y->wall);
	return d ? d : strcmp(x->key, y->key);
}

static int run_cmp(const void *a, const void *b, void *arg)
{
	const struct catalog *c = arg;
	const struct catalog_run *p = &c->runs[*(const uint32_t *)a],
				 *q = &c->runs[*(const uint32_t *)b];
	int d = strcmp(p->service, q->service);

	if (!d)
		d = strcmp(p->host, q->host);
	return d ? d : strcmp(p->boot, q->boot);
}

/* The runs with something kept, in order, their objects told; how many
 * hosts and services they are. */
static int order_runs(struct catalog *c)
{
	uint32_t *order = calloc(c->nruns + 1, sizeof(*order));
	uint32_t *to = calloc(c->nruns + 1, sizeof(*to));
	struct catalog_run *v = calloc(c->nruns + 1, sizeof(*v));
	unsigned char *hs = calloc(lib_strset_count(&c->hosts) + 1, 1);
	unsigned char *ss = calloc(lib_strset_count(&c->services) + 1, 1);
	size_t n = 0;
	int err = -ENOMEM;

	if (!order || !to || !v || !hs || !ss)
		goto out;
	for (size_t r = 0; r < c->nruns; r++)
		if (c->runs[r].segments || c->runs[r].dumps)
			order[n++] = (uint32_t)r;
		else
			free(c->runs[r].last); /* (empty) */
	qsort_r(order, n, sizeof(*order), run_cmp, c);
	for (size_t i = 0; i < n; i++) {
		v[i] = c->runs[order[i]];
		to[order[i]] = (uint32_t)i;
		for (size_t j = 0; j < v[i].nlast; j++)
			v[i].last[j].run = (uint32_t)i;
		c->nhosts += !hs[v[i].host_id]++;
		c->nservices += !ss[v[i].service_id]++;
	}
	for (size_t i = 0; i < c->ndumps; i++)
		c->dumps[i].run = to[c->dumps[i].run];
	for (size_t i = 0; i < c->nobjs; i++)
		c->objs[i].run = to[c->objs[i].run];
	free(c->runs);
	c->runs = v;
	v = NULL;
	c->nruns = n;
	c->runs_cap = n + 1;
	/* (no key comes after the finish) */
	lib_strset_release(&c->names);
	err = 0;
out:
	free(order);
	free(to);
	free(v);
	free(hs);
	free(ss);
	return err;
}

int catalog__finish(struct catalog *c)
{
	int err = 0;

	for (size_t r = 0; r < c->nruns && !err; r++) {
		struct catalog_run *rn = &c->runs[r];

		if (rn->before && !rn->at_from)
			err = keep(c, rn->before);
		if (rn->before)
			obj_release(rn->before);
		free(rn->before);
		rn->before = NULL;
	}
	if (err)
		return err;
	for (size_t r = 0; r < c->nruns; r++)
		latest_cut(c->runs[r].last, &c->runs[r].nlast, c->per_run);
	latest_cut(c->dumps, &c->ndumps, c->o.dumps_max);
	err = order_runs(c);
	if (err)
		return err;
	/* (NULL while none: qsort_r() wants an array) */
	if (c->ndumps)
		qsort_r(c->dumps, c->ndumps, sizeof(*c->dumps), obj_cmp, c);
	if (c->nobjs)
		qsort_r(c->objs, c->nobjs, sizeof(*c->objs), obj_cmp, c);
	return 0;
}

void catalog__counts(const struct catalog *c, struct catalog_counts *n)
{
	memset(n, 0, sizeof(*n));
	n->segments = c->segments;
	n->dumps = c->ndump;
	n->bytes = c->bytes;
	n->others = c->others;
	n->tables = c->tables;
	n->objects = c->objects;
	n->runs = c->nruns;
	n->hosts = c->nhosts;
	n->services = c->nservices;
	n->lo = c->lo;
	n->hi = c->hi;
}

size_t catalog__runs(const struct catalog *c, const struct catalog_run **v)
{
	*v = c->runs;
	return c->nruns;
}

const struct catalog_obj *catalog__objects(const struct catalog *c, size_t *n)
{
	*n = c->nobjs;
	return c->objs;
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

struct listing {
	struct catalog *c;
	size_t plen; /* the listed prefix's, cut off each key */
	char *why;
	size_t len;
};

static int add_page(void *arg, const struct s3_object *v, size_t n)
{
	struct listing *l = arg;
	struct catalog *c = l->c;

	for (size_t i = 0; i < n; i++) {
		const char *k = v[i].key + (strlen(v[i].key) >= l->plen ? l->plen : 0);
		int err;

		/* a day's keys come in time order: one of the window's end
		 * minute or later, and so is every one after it */
		if (c->stop_at[0] && strlen(k) > 15 && k[15] == '/' &&
		    digits(k + 11, 4) && memcmp(k, c->stop_at, 15) >= 0) {
			c->stopped = 1;
			return -ECANCELED;
		}
		err = catalog__add(c, k, v[i].size, v[i].etag, NULL);
		if (err) {
			text_say(l->why, l->len, "%s", strerror(-err));
			return err;
		}
	}
	return 0;
}

int catalog__add_s3(struct catalog *c, struct s3 *s, const char *prefix, char *why,
		    size_t len)
{
	char days[DAYS_MAX][16], p[1100];
	struct listing l = {.c = c,
			    .plen = strlen(prefix) + (*prefix ? 1 : 0),
			    .why = why,
			    .len = len};
	time_t from = c->o.f.from, to = c->o.f.to;
	size_t ndays = 0;
	int err = 0;

	c->stop_at[0] = '\0';
	if (!from || !to || catalog_days(from, to, days, DAYS_MAX, &ndays)) {
		ndays = 1;
		days[0][0] = '\0';
	} else {
		/* the first minute whose keys all begin at or after --to */
		time_t m = to + 59 - (to + 59) % 60;
		struct tm tm;

		gmtime_r(&m, &tm);
		strftime(c->stop_at, sizeof(c->stop_at), "%Y-%m-%d/%H%M", &tm);
	}
	for (size_t d = 0; d < ndays && !err; d++) {
		snprintf(p, sizeof(p), "%s%s%s", prefix, *prefix ? "/" : "", days[d]);
		c->stopped = 0;
		err = s3__list(s, p, add_page, &l, why, len);
		if (err == -ECANCELED && c->stopped)
			err = 0;
	}
	c->stop_at[0] = '\0';
	return err;
}

/* ---- the metadata ------------------------------------------------------------ */

/* The keys of @v (@n of them) into *@keys. 0 or -ENOMEM. */
static int keys_of(const struct catalog_obj *v, size_t n, const char ***keys)
{
	*keys = calloc(n + 1, sizeof(**keys));
	if (!*keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		(*keys)[i] = v[i].key;
	return 0;
}

int catalog__meta(struct catalog *c, const struct s3_config *cfg, const char *bucket,
		  const char *prefix, size_t *failed, char *why, size_t len)
{
	struct catalog_obj *segs = NULL;
	size_t nsegs = 0;
	int err = 0;

	*failed = 0;
	c->meta_done = 1;
	/* the segments picked, the runs' latest end to end */
	for (size_t r = 0; r < c->nruns; r++)
		nsegs += c->runs[r].nlast;
	segs = calloc(nsegs + 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	nsegs = 0;
	for (size_t r = 0; r < c->nruns; r++)
		for (size_t i = 0; i < c->runs[r].nlast; i++)
			segs[nsegs++] = c->runs[r].last[i];
	c->asked = nsegs;
	for (int dump = 0; dump < 2 && !err; dump++) {
		struct catalog_obj *v = dump ? c->dumps : segs;
		size_t n = dump ? c->ndumps : nsegs, nf = 0;
		const char **keys = NULL;
		char **values = NULL, w[400] = "";

		if (!n)
			continue;
		err = keys_of(v, n, &keys);
		if (!err)
			err = store_heads(cfg, bucket, prefix, keys, n,
					  dump ? "d9prof-reason" : CATALOG_INDEX_META,
					  HEADS_PARALLEL, &values, &nf, w, sizeof(w));
		for (size_t k = 0; !err && k < n; k++) {
			if (!values[k])
				continue;
			if (dump && !(v[k].reason = strdup(values[k])))
				err = -ENOMEM;
			else if (!dump && !catalog_index_parse(values[k], &v[k].ix))
				fold_index(c, &v[k]);
		}
		if (nf && !*failed)
			snprintf(why, len, "%s", w);
		*failed += nf;
		store_fetch_free(values, n);
		free(keys);
		if (err)
			snprintf(why, len, "%s", w[0] ? w : strerror(-err));
	}
	free(segs);
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

struct bucket {
	time_t start;
	struct fine f;
	unsigned int hosts;
};

/* The fine buckets drawn as at most 24 (or so: one more where the range
 * straddles), into *@bk (*@nbk of @width seconds). 0 or -ENOMEM. */
static int buckets(const struct catalog *c, struct bucket **bk, size_t *nbk,
		   time_t *width)
{
	time_t w, base;

	*bk = NULL;
	*nbk = 0;
	if (!c->any)
		return 0;
	w = bucket_width(c->lo, c->hi);
	/* a multiple of the fine width (only past 1024 weeks is it not one
	 * already) */
	w = (w + c->fine_w - 1) / c->fine_w * c->fine_w;
	base = c->lo - c->lo % w;
	*width = w;
	*nbk = (size_t)((c->hi - base) / w) + 1;
	*bk = calloc(*nbk, sizeof(**bk));
	if (!*bk)
		return -ENOMEM;
	for (size_t i = 0; i < *nbk; i++)
		(*bk)[i].start = base + (time_t)i * w;
	for (size_t i = 0; i < FINE_MAX; i++)
		if (c->fine[i].segments || c->fine[i].dumps)
			fine_merge(&(*bk)[(size_t)((c->fine_base + (time_t)i * c->fine_w -
						    base) /
						   w)]
					    .f,
				   &c->fine[i]);
	for (size_t h = 0; h < lib_strset_count(&c->hosts); h++) {
		const uint64_t *b = c->bits + h * FINE_WORDS;
		size_t last = SIZE_MAX;

		for (size_t i = 0; i < FINE_MAX; i++)
			if (b[i / 64] >> (i % 64) & 1) {
				size_t k = (size_t)((c->fine_base +
						     (time_t)i * c->fine_w - base) /
						    w);

				if (k != last)
					(*bk)[k].hosts++;
				last = k;
			}
	}
	return 0;
}

/* Segments kept whose index was not asked for (options.index_max). */
static uint64_t left_out(const struct catalog *c)
{
	return c->meta_done ? c->segments - c->known - c->asked : 0;
}

/* Segments asked for, or known, without an index. */
static uint64_t unindexed(const struct catalog *c)
{
	uint64_t indexed = 0;

	for (size_t r = 0; r < c->nruns; r++)
		indexed += c->runs[r].t.indexed;
	return c->meta_done ? c->known + c->asked - indexed : 0;
}

/* "indexed" (segments with an index) and, from them, what they add up
 * to. */
static void json_tally(struct lib_json *w, const struct catalog_tally *t)
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

static void print_json(const struct catalog *c, const char *title,
		       const struct bucket *bk, size_t nbk, time_t width, FILE *out)
{
	struct lib_json w;

	lib_json_init(&w, out);
	lib_json_object_begin(&w);
	lib_json_str_field(&w, "store", title);
	lib_json_uint_field(&w, "hosts", c->nhosts);
	lib_json_uint_field(&w, "services", c->nservices);
	lib_json_uint_field(&w, "segments", c->segments);
	lib_json_uint_field(&w, "others", c->others);
	lib_json_uint_field(&w, "tables", c->tables);
	lib_json_uint_field(&w, "unindexed", unindexed(c));
	lib_json_uint_field(&w, "index_left_out", left_out(c));
	lib_json_uint_field(&w, "flag_poll_ns", c->o.flag_poll_ns);
	lib_json_uint_field(&w, "flag_delay_ns", c->o.flag_delay_ns);
	lib_json_name(&w, "runs");
	lib_json_array_begin(&w);
	for (size_t r = 0; r < c->nruns; r++) {
		const struct catalog_run *rn = &c->runs[r];

		lib_json_object_begin(&w);
		lib_json_str_field(&w, "service", rn->service);
		lib_json_str_field(&w, "host", rn->host);
		lib_json_str_field(&w, "boot", rn->boot);
		lib_json_uint_field(&w, "segments", rn->segments);
		lib_json_uint_field(&w, "dumps", rn->dumps);
		lib_json_uint_field(&w, "bytes", rn->bytes);
		lib_json_int_field(&w, "first", rn->lo);
		lib_json_int_field(&w, "last", rn->hi);
		json_tally(&w, &rn->t);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_int_field(&w, "bucket_seconds", width);
	lib_json_name(&w, "buckets");
	lib_json_array_begin(&w);
	for (size_t b = 0; b < nbk; b++) {
		lib_json_object_begin(&w);
		lib_json_int_field(&w, "start", bk[b].start);
		lib_json_uint_field(&w, "segments", bk[b].f.segments);
		lib_json_uint_field(&w, "dumps", bk[b].f.dumps);
		lib_json_uint_field(&w, "bytes", bk[b].f.bytes);
		lib_json_uint_field(&w, "hosts", bk[b].hosts);
		json_tally(&w, &bk[b].f.t);
		lib_json_object_end(&w);
	}
	lib_json_array_end(&w);
	lib_json_uint_field(&w, "dumps_not_listed", c->ndump - c->ndumps);
	lib_json_name(&w, "dumps");
	lib_json_array_begin(&w);
	for (size_t i = 0; i < c->ndumps; i++) {
		const struct catalog_obj *e = &c->dumps[i];

		lib_json_object_begin(&w);
		lib_json_str_field(&w, "key", e->key);
		lib_json_str_field(&w, "service", c->runs[e->run].service);
		lib_json_str_field(&w, "host", c->runs[e->run].host);
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

	text_clean(s, buf, sizeof(buf));
	fprintf(out, "%-*s", width, buf);
}

/* POLLS, MAX POLL, (MAX DELAY with @delay,) FLAGGED: "-" where no
 * segment has an index. */
static void put_tally(FILE *out, const struct catalog_tally *t, int delay)
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

/* What was said of the indexes: the ones not read, and why. */
static void index_notes(const struct catalog *c, FILE *out)
{
	uint64_t lo = left_out(c), un = unindexed(c);

	if (lo && !c->per_run)
		fprintf(out,
			"\n(the segments' indexes were not read: %zu runs, more than "
			"can be asked for at once; narrow with --from/--to, --service "
			"or --host)\n",
			c->nruns);
	else if (lo)
		fprintf(out,
			"\n(indexes read for the latest %zu segment%s of each run: "
			"%llu of %llu segments left out; narrow with --from/--to, "
			"--service or --host for theirs)\n",
			c->per_run, c->per_run == 1 ? "" : "s", (unsigned long long)lo,
			(unsigned long long)c->segments);
	if (un)
		fprintf(out,
			"%s(%llu segment%s without an index: uploaded by another "
			"tool, or not answered)\n",
			lo ? "" : "\n", (unsigned long long)un, un == 1 ? "" : "s");
}

static void print_text(const struct catalog *c, const char *title,
		       const struct bucket *bk, size_t nbk, time_t width, FILE *out)
{
	uint64_t most = 1;
	char a[32], b[32], sz[32];

	text_put(out, title);
	if (!c->nruns) {
		fprintf(out, ": nothing in the layout");
		if (c->others)
			fprintf(out, " (%llu other key%s)", (unsigned long long)c->others,
				c->others == 1 ? "" : "s");
		fprintf(out, "\n");
		return;
	}
	fprintf(out,
		": %llu segment%s and %llu dump%s (%s) of %zu host%s and %zu service%s, %s to %s UTC\n",
		(unsigned long long)c->segments, c->segments == 1 ? "" : "s",
		(unsigned long long)c->ndump, c->ndump == 1 ? "" : "s",
		text_size((double)c->bytes, sz, sizeof(sz)), c->nhosts,
		c->nhosts == 1 ? "" : "s", c->nservices, c->nservices == 1 ? "" : "s",
		when(c->lo, a, sizeof(a)), when(c->hi, b, sizeof(b)));
	if (c->tables)
		fprintf(out, "(and %llu Parquet table file%s beside them)\n",
			(unsigned long long)c->tables, c->tables == 1 ? "" : "s");
	if (c->others)
		fprintf(out, "(and %llu key%s not in the layout)\n",
			(unsigned long long)c->others, c->others == 1 ? "" : "s");
	fprintf(out, "\n%-20s %-20s %-10s %8s %5s %9s %9s %8s %7s  %-16s  %s\n",
		"SERVICE", "HOST", "BOOT", "SEGMENTS", "DUMPS", "BYTES", "POLLS",
		"MAX POLL", "FLAGGED", "FIRST", "LAST");
	for (size_t r = 0; r < c->nruns; r++) {
		const struct catalog_run *rn = &c->runs[r];

		put_col(out, rn->service, 20);
		fputc(' ', out);
		put_col(out, rn->host, 20);
		fputc(' ', out);
		put_col(out, rn->boot, 10);
		fprintf(out, " %8llu %5llu %9s ", (unsigned long long)rn->segments,
			(unsigned long long)rn->dumps,
			text_size((double)rn->bytes, sz, sizeof(sz)));
		put_tally(out, &rn->t, 0);
		fprintf(out, "  %-16s  %s\n", when(rn->lo, a, sizeof(a)),
			when(rn->hi, b, sizeof(b)));
	}
	for (size_t i = 0; i < nbk; i++)
		most = bk[i].f.segments > most ? bk[i].f.segments : most;
	fprintf(out, "\n%-16s %8s %5s %9s %5s %9s %8s %9s %7s  (per %lld min)\n",
		"WHEN (UTC)", "SEGMENTS", "DUMPS", "BYTES", "HOSTS", "POLLS", "MAX POLL",
		"MAX DELAY", "FLAGGED", (long long)width / 60);
	for (size_t i = 0; i < nbk; i++) {
		int bar = (int)((bk[i].f.segments * 30 + most - 1) / most);

		fprintf(out, "%-16s %8llu %5llu %9s %5u ",
			when(bk[i].start, a, sizeof(a)),
			(unsigned long long)bk[i].f.segments,
			(unsigned long long)bk[i].f.dumps,
			text_size((double)bk[i].f.bytes, sz, sizeof(sz)), bk[i].hosts);
		put_tally(out, &bk[i].f.t, 1);
		fprintf(out, "  %.*s\n", bar, "##############################");
	}
	index_notes(c, out);
	if (c->o.flag_poll_ns || c->o.flag_delay_ns) {
		char p[32], d[32];

		fprintf(out,
			"(FLAGGED: segments with a poll of %s or more, or a task "
			"woken and not polled for %s or more)\n",
			text_duration(c->o.flag_poll_ns, p, sizeof(p)),
			text_duration(c->o.flag_delay_ns, d, sizeof(d)));
	}
	if (!c->ndump)
		return;
	fprintf(out, "\ndumps:\n");
	if (c->ndump > c->ndumps)
		fprintf(out, "  (the latest %zu; %llu earlier not listed)\n", c->ndumps,
			(unsigned long long)(c->ndump - c->ndumps));
	for (size_t i = 0; i < c->ndumps; i++) {
		const struct catalog_obj *e = &c->dumps[i];

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

int catalog__print(const struct catalog *c, const char *title, int json, FILE *out)
{
	struct bucket *bk;
	size_t nbk;
	time_t width = 60;
	int err = buckets(c, &bk, &nbk, &width);

	if (err)
		return err;
	if (json)
		print_json(c, title, bk, nbk, width, out);
	else
		print_text(c, title, bk, nbk, width, out);
	free(bk);
	return ferror(out) ? -EIO : 0;
}
