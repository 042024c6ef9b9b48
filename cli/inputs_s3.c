// SPDX-License-Identifier: MIT
/*
 * inputs_s3.c - `-i s3://BUCKET[/PREFIX]` for the analysis commands: the
 * keys of the window (--from/--to as wall-clock times, --service, --host)
 * listed from the time-ordered layout, fetched in parallel into the cache
 * (store/fetch.h) and read as one host's trace, as `-i DIR` is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/window.h"
#include "cli/cli.h"
#include "lib/text.h"
#include "store/catalog.h"
#include "store/fetch.h"
#include "store/s3.h"

#define FETCH_MAX 4096 /* objects one command fetches, at most */
#define CACHE_MAX_BYTES                                                                  \
	(2ULL << 30) /* the cache's bound unless                                         \
		      * D9PROF_CACHE_MAX says */

/* A bound as wall-clock seconds: 0 none, -1 (said) not a wall-clock time. */
static time_t wall_bound(const struct time_spec *ts, const char *opt, const char *url)
{
	if (ts->kind == TIME_NONE)
		return 0;
	if (ts->kind != TIME_WALL) {
		error("%s %s: with -i %s the store is chosen by the wall clock: give a UTC "
		      "date and time (2026-11-26T14:05) or a duration before now (-15m)",
		      opt, ts->text, url);
		return -1;
	}
	return (time_t)(ts->ns / 1000000000ULL);
}

/* "service/host" of the runs @keep keeps in @c, at most 4; their count. */
static size_t hosts_of(const struct catalog *c, const unsigned char *keep, char *buf,
		       size_t len)
{
	const struct catalog_entry *last = NULL;
	size_t n = 0, at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->n; i++) {
		const struct catalog_entry *e = &c->v[i];

		if (!keep[i] || (last && !strcmp(last->service, e->service) &&
				 !strcmp(last->host, e->host)))
			continue;
		last = e;
		if (n++ < 4 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s/%s",
					       n > 1 ? ", " : "", e->service, e->host);
	}
	if (n > 4 && at < len)
		snprintf(buf + at, len - at, ", ...");
	return n;
}

int inputs_catalog(struct inputs *in, const char *url, struct catalog *c,
		   unsigned char **keep, size_t *n)
{
	char bucket[64], prefix[512], why[400] = "";
	struct catalog_filter f = {.service = in->service, .host = in->host};
	struct s3_config cfg;
	struct s3 *s = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	*keep = NULL;
	*n = 0;
	if (s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix))) {
		error("bad input '%s': want s3://BUCKET[/PREFIX]", url);
		return -1;
	}
	if ((f.from = wall_bound(&in->win.from, "--from", url)) < 0 ||
	    (f.to = wall_bound(&in->win.to, "--to", url)) < 0)
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	err = s3_config__load(&cfg, NULL, why, sizeof(why));
	if (!err) {
		err = s3__new(&cfg, bucket, 0, &s);
		if (!err)
			err = catalog__add_s3(c, s, prefix, f.from, f.to, why,
					      sizeof(why));
		s3__free(s);
	}
	s3_config__clear(&cfg);
	if (err) {
		error("cannot list %s: %s", url, why[0] ? why : s3_strerror(err));
		catalog__release(c);
		return -1;
	}
	catalog__sort(c);
	*keep = calloc(c->n + 1, 1);
	if (!*keep) {
		error("out of memory");
		catalog__release(c);
		return -1;
	}
	*n = catalog__select(c, &f, *keep);
	if (!*n) {
		error("%s holds no segment%s%s%s%s%s: 'd9prof ls %s' shows what it holds",
		      url, in->service || in->host ? " of " : "",
		      in->service ? in->service : "", in->service && in->host ? "/" : "",
		      in->host ? in->host : "", f.from || f.to ? " in this window" : "",
		      url);
		free(*keep);
		*keep = NULL;
		catalog__release(c);
		return -1;
	}
	return 0;
}

int inputs_fetch(struct inputs *in, const char *url, char ***paths, size_t *npaths)
{
	char bucket[64], prefix[512], why[400] = "", cache[4096], hosts[300], sz[32];
	struct fetch_opts fo = {.cache = cache, .max_bytes = CACHE_MAX_BYTES};
	const char **keys = NULL, **etags = NULL;
	uint64_t *sizes = NULL;
	struct fetch_stats st;
	struct catalog c = {0};
	unsigned char *keep = NULL;
	struct s3_config cfg;
	const char *max = getenv("D9PROF_CACHE_MAX");
	size_t n = 0;
	int err, ret = -1;

	*paths = NULL;
	*npaths = 0;
	memset(&cfg, 0, sizeof(cfg));
	if (max && parse_size(max, &fo.max_bytes)) {
		error("bad D9PROF_CACHE_MAX '%s': " SIZE_WANT, max);
		return -1;
	}
	if (store_cache_dir(cache, sizeof(cache))) {
		error("no cache directory for -i %s: set D9PROF_CACHE or HOME", url);
		return -1;
	}
	if (inputs_catalog(in, url, &c, &keep, &n))
		return -1;
	s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix));
	if (hosts_of(&c, keep, hosts, sizeof(hosts)) > 1) {
		error("%s holds several hosts%s (%s): choose one with --service and --host "
		      "('d9prof ls %s' lists them)",
		      url, in->win.from.kind || in->win.to.kind ? " in this window" : "",
		      hosts, url);
		goto out;
	}
	if (n > FETCH_MAX) {
		error("%s holds %zu segments for this: more than %d; narrow it with --from "
		      "and --to",
		      url, n, FETCH_MAX);
		goto out;
	}
	keys = calloc(n, sizeof(*keys));
	sizes = calloc(n, sizeof(*sizes));
	etags = calloc(n, sizeof(*etags));
	if (!keys || !sizes || !etags)
		goto nomem;
	n = 0;
	for (size_t i = 0; i < c.n; i++)
		if (keep[i]) {
			keys[n] = c.v[i].key;
			etags[n] = c.v[i].etag;
			sizes[n++] = c.v[i].size;
		}
	err = s3_config__load(&cfg, NULL, why, sizeof(why));
	if (!err)
		err = store_fetch(&cfg, bucket, prefix, keys, sizes, etags, n, &fo, paths,
				  &st, why, sizeof(why));
	if (err) {
		error("cannot fetch from %s: %s", url, why[0] ? why : s3_strerror(err));
		goto out;
	}
	*npaths = n;
	if (!in->quiet)
		info("%s: %zu file%s of %s (%zu fetched, %s; %zu from the cache %s)", url,
		     n, n == 1 ? "" : "s", hosts, st.fetched,
		     text_size((double)st.bytes, sz, sizeof(sz)), st.reused, cache);
	ret = 0;
	goto out;
nomem:
	error("out of memory");
out:
	s3_config__clear(&cfg);
	free(keys);
	free(etags);
	free(sizes);
	free(keep);
	catalog__release(&c);
	return ret;
}
