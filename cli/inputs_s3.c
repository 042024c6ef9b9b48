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

static int is_of(const struct catalog_run *r, const struct inputs *in)
{
	return (!in->service || !strcmp(r->service, in->service)) &&
	       (!in->host || !strcmp(r->host, in->host));
}

/* "service/host" of the runs of @c that @in picks, at most 4; their
 * count, and in *@one_host whether they are all of one host. */
static size_t hosts_of(const struct catalog *c, const struct inputs *in, char *buf,
		       size_t len, int *one_host)
{
	const struct catalog_run *v, *last = NULL;
	size_t nr = catalog__runs(c, &v), n = 0, at = 0;

	buf[0] = '\0';
	*one_host = 1;
	for (size_t i = 0; i < nr; i++) {
		const struct catalog_run *r = &v[i];

		if (!is_of(r, in) || (last && !strcmp(last->service, r->service) &&
				      !strcmp(last->host, r->host)))
			continue;
		*one_host &= !last || last->host_id == r->host_id;
		last = r;
		if (n++ < 4 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s/%s",
					       n > 1 ? ", " : "", r->service, r->host);
	}
	if (n > 4 && at < len)
		snprintf(buf + at, len - at, ", ...");
	return n;
}

int inputs_catalog(struct inputs *in, const char *url, size_t keys_max,
		   struct catalog **c)
{
	char bucket[64], prefix[512], why[400] = "";
	struct catalog_opts o = {.f = {.service = in->service, .host = in->host},
				 .keys_max = keys_max};
	struct catalog_counts n;
	struct s3_config cfg;
	struct s3 *s = NULL;
	int err;

	*c = NULL;
	if (s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix))) {
		error("bad input '%s': want s3://BUCKET[/PREFIX]", url);
		return -1;
	}
	if ((o.f.from = wall_bound(&in->win.from, "--from", url)) < 0 ||
	    (o.f.to = wall_bound(&in->win.to, "--to", url)) < 0)
		return -1;
	if (catalog__new(&o, c)) {
		error("out of memory");
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	err = s3_config__load(&cfg, NULL, why, sizeof(why));
	if (!err) {
		err = s3__new(&cfg, bucket, 0, &s);
		if (!err)
			err = catalog__add_s3(*c, s, prefix, why, sizeof(why));
		s3__free(s);
	}
	s3_config__clear(&cfg);
	if (!err && (err = catalog__finish(*c)))
		why[0] = '\0';
	if (err) {
		error("cannot list %s: %s", url, why[0] ? why : s3_strerror(err));
		goto fail;
	}
	catalog__counts(*c, &n);
	if (!n.objects) {
		error("%s holds no segment%s%s%s%s%s: 'd9prof ls %s' shows what it holds",
		      url, in->service || in->host ? " of " : "",
		      in->service ? in->service : "", in->service && in->host ? "/" : "",
		      in->host ? in->host : "",
		      o.f.from || o.f.to ? " in this window" : "", url);
		goto fail;
	}
	return 0;
fail:
	catalog__free(*c);
	*c = NULL;
	return -1;
}

int inputs_fetch(struct inputs *in, const char *url, char ***paths, size_t *npaths)
{
	char bucket[64], prefix[512], why[400] = "", cache[4096], hosts[300], sz[32];
	struct fetch_opts fo = {.cache = cache, .max_bytes = CACHE_MAX_BYTES};
	const char **keys = NULL, **etags = NULL;
	const struct catalog_obj *v;
	const struct catalog_run *runs;
	struct catalog *own = NULL, *c = in->listed;
	struct catalog_counts cn;
	uint64_t *sizes = NULL;
	struct fetch_stats st;
	struct s3_config cfg;
	const char *max = getenv("D9PROF_CACHE_MAX");
	size_t n = 0, nv;
	int err, ret = -1, one;

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
	if (!c && inputs_catalog(in, url, FETCH_MAX + 1, &own))
		return -1;
	c = c ? c : own;
	s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix));
	if (hosts_of(c, in, hosts, sizeof(hosts), &one) > 1) {
		/* (a host that runs two services is one host) */
		error("%s holds several %s%s (%s): choose one with --service%s "
		      "('d9prof ls %s' lists them)",
		      url, one ? "services of one host" : "hosts",
		      in->win.from.kind || in->win.to.kind ? " in this window" : "",
		      hosts, one ? "" : " and --host", url);
		goto out;
	}
	/* the objects of the host (all of them, of a catalog of its own) */
	catalog__counts(c, &cn);
	catalog__runs(c, &runs);
	v = catalog__objects(c, &nv);
	for (size_t i = 0; i < nv; i++)
		n += is_of(&runs[v[i].run], in);
	if (own)
		n = cn.objects;
	if (n > FETCH_MAX) {
		error("%s holds %zu segments for this: more than %d; narrow it with --from "
		      "and --to",
		      url, n, FETCH_MAX);
		goto out;
	}
	keys = calloc(n + 1, sizeof(*keys));
	sizes = calloc(n + 1, sizeof(*sizes));
	etags = calloc(n + 1, sizeof(*etags));
	if (!keys || !sizes || !etags)
		goto nomem;
	n = 0;
	for (size_t i = 0; i < nv; i++)
		if (is_of(&runs[v[i].run], in)) {
			keys[n] = v[i].key;
			etags[n] = v[i].etag;
			sizes[n++] = v[i].size;
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
	catalog__free(own);
	return ret;
}
