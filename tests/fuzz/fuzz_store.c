// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what a bucket, an endpoint or a config file says. The
 * first byte picks the reader: a listing page (S3's XML, its continuation
 * token and keys), an error answer's XML, an AWS config or credentials
 * file (its profile's keys), S3's timestamps, keys and index metadata as
 * ls and fleet read them (the catalog, drawn as ls draws it), the JSON
 * of a credential_process or a metadata endpoint, or STS's XML. The
 * readers are static in store/s3_config.c (the files), store/s3_creds.c
 * (the credential answers) and store/s3.c (the answers, the timestamps):
 * the three are included whole, and the archive's s3_config.o,
 * s3_creds.o and s3.o are not linked (every symbol they have is this
 * file's); the XML reader under the answers (store/xml.c) is the
 * archive's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* (pipe2(), which the make of the tree defines it for) */
#endif
#include "store/s3_config.c"
#include "store/s3_creds.c"
#include "store/s3.c"

#include <stdio.h>

#include "store/catalog.h"

static void list_page(const char *p, size_t n)
{
	struct list_ctx c = {0};
	char why[256];
	struct xml x = {.fn = list_fn, .ctx = &c, .why = why, .len = sizeof(why)};

	xml_walk(&x, p, n);
	page_clear(&c);
	free(c.v);
	free(c.cur.key);
	free(c.next);
	free(x.text);
}

static void catalog_keys(const char *p, size_t n)
{
	/* small bounds, to reach the heaps' and the buckets' limits */
	struct catalog_opts o = {.index_max = 3, .keys_max = 4, .dumps_max = 2};
	struct catalog *c;
	char line[1200];
	FILE *out = fopen("/dev/null", "w");

	/* input starting with 'w': a window of ten minutes from
	 * 2026-11-26 21:40 */
	if (n && p[0] == 'w') {
		o.f.from = 1795729200;
		o.f.to = o.f.from + 600;
	}
	if (!out || catalog__new(&o, &c)) {
		if (out)
			fclose(out);
		return;
	}
	/* a key per line; a line with a tab: its index metadata after it */
	for (const char *s = p, *e = p + n; s < e;) {
		const char *nl = memchr(s, '\n', (size_t)(e - s)), *tab;
		size_t k = (size_t)((nl ? nl : e) - s);

		if (k < sizeof(line)) {
			struct catalog_index ix;
			int indexed = 0;

			memcpy(line, s, k);
			line[k] = '\0';
			if ((tab = strchr(line, '\t'))) {
				indexed = !catalog_index_parse(tab + 1, &ix);
				line[tab - line] = '\0';
			}
			catalog__add(c, line, k, "e", indexed ? &ix : NULL);
		}
		s = nl ? nl + 1 : e;
	}
	if (!catalog__finish(c)) {
		catalog__print(c, "s3://b", 0, out);
		catalog__print(c, "s3://b", 1, out);
	}
	fclose(out);
	catalog__free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p, code[64], msg[256], why[256];
	struct s3_profile pv;
	struct s3_config c;
	struct keys k;
	int64_t t;

	if (!size)
		return 0;
	p = malloc(size);
	if (!p)
		return 0;
	memcpy(p, data + 1, size - 1);
	p[size - 1] = '\0';
	switch (data[0] % 7) {
	case 0:
		list_page(p, size - 1);
		break;
	case 1:
		error_body(p, size - 1, code, sizeof(code), msg, sizeof(msg));
		break;
	case 2:
		memset(&pv, 0, sizeof(pv));
		parse_ini(p, size - 1, "config", "default", data[0] & 8, &pv, why,
			  sizeof(why));
		break;
	case 3:
		s3_parse_time(p, &t);
		break;
	case 5:
		memset(&k, 0, sizeof(k));
		if (!json_keys(p, size - 1, &k, why, sizeof(why)))
			keys_give(&c, &k, "fuzz", why, sizeof(why));
		break;
	case 6:
		memset(&k, 0, sizeof(k));
		if (!sts_read(p, size - 1, &k, why, sizeof(why)))
			keys_give(&c, &k, "fuzz", why, sizeof(why));
		break;
	default:
		catalog_keys(p, size - 1);
		break;
	}
	free(p);
	return 0;
}
