// SPDX-License-Identifier: MIT
/*
 * record_upload.c - `record --upload s3://BUCKET[/PREFIX]`: each sealed
 * segment (--rotate) and dump (--flight) goes to the store under the
 * object-store layout, PREFIX/DATE/HHMM/SERVICE/HOST/BOOT/NAME, by the
 * background uploader (store/upload.h), with what `d9prof ls` shows in the
 * object's metadata (x-amz-meta-d9prof-*: kind, from, to, a dump's reason,
 * a segment's index: store/catalog.h).
 * Failures are said as they come (at the next file), and counted in the
 * summary; recording goes on locally whatever the store does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/text.h"
#include "record/proc.h"
#include "record/record.h"
#include "store/catalog.h"
#include "store/upload.h"

/* How long the stop waits for what is still queued. */
#define FINISH_WAIT_S 30

struct record_upload {
	struct uploader *u;
	char url[600];
};

int record_upload__start(const char *url, const char *endpoint,
			 struct record_upload **out)
{
	struct record_upload *ru;
	struct s3_config c;
	char bucket[64], prefix[512], why[320];
	int err;

	*out = NULL;
	if (s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix))) {
		usage_error("record ",
			    "bad --upload '%s': want s3://BUCKET or s3://BUCKET/PREFIX",
			    url);
		return EXIT_USAGE;
	}
	why[0] = '\0';
	err = s3_config__load(&c, endpoint, why, sizeof(why));
	if (err) {
		error("--upload %s: %s", url, why[0] ? why : strerror(-err));
		return EXIT_FAIL;
	}
	ru = calloc(1, sizeof(*ru));
	if (!ru || (err = upload__new(&c, bucket, prefix, &ru->u))) {
		s3_config__clear(&c);
		free(ru);
		error("--upload %s: %s", url, s3_strerror(err ? err : -ENOMEM));
		return EXIT_FAIL;
	}
	snprintf(ru->url, sizeof(ru->url), "%s", url);
	info("uploading to %s (%s, %s, credentials from %s)", url, c.endpoint, c.region,
	     c.source);
	s3_config__clear(&c);
	*out = ru;
	return 0;
}

/* The failures since the last look, in one line. */
static void report(struct record_upload *ru)
{
	struct upload_stats st;
	uint64_t fresh;

	upload__poll(ru->u, &st, &fresh);
	if (fresh)
		warning("upload: %llu failure%s (%s)%s", (unsigned long long)fresh,
			fresh == 1 ? "" : "s", st.last_error,
			st.broken ? "; no more uploads: recording goes on locally"
				  : "; tried again");
}

/* A metadata value S3 takes: printable ASCII, '?' for the rest. */
static void ascii(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; s && *s && n + 1 < len; s++)
		buf[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	buf[n] = '\0';
}

static void put(struct record_upload *ru, int fd, const char *key, const char *kind,
		uint64_t from, uint64_t to, const char *why, const char *index)
{
	int64_t off = record_realtime_offset_ns();
	char f[24], t[24], reason[257];
	struct s3_meta meta[5] = {
		{"d9prof-kind", kind}, {"d9prof-from", f}, {"d9prof-to", t}};
	size_t n = 3;
	int err;

	report(ru);
	if (fd < 0 || !key || !*key) {
		warning("upload: %s not uploaded: it could not be opened again", kind);
		return;
	}
	/* unix ns, the wall clock */
	snprintf(f, sizeof(f), "%lld", (long long)((int64_t)from + off));
	snprintf(t, sizeof(t), "%lld", (long long)((int64_t)to + off));
	if (why) {
		ascii(why, reason, sizeof(reason));
		meta[n++] = (struct s3_meta){"d9prof-reason", reason};
	}
	if (index)
		meta[n++] = (struct s3_meta){CATALOG_INDEX_META, index};
	err = upload__put(ru->u, fd, key, meta, n);
	if (err)
		warning("upload: %s not queued: %s", key, strerror(-err));
}

void record_upload__sealed(struct record_upload *ru, const struct record_sealed *s)
{
	char index[CATALOG_INDEX_LEN];

	catalog_index_format(&(struct catalog_index){.polls = s->polls,
						     .samples = s->samples,
						     .lost = s->lost,
						     .max_poll_ns = s->max_poll_ns,
						     .max_delay_ns = s->max_delay_ns},
			     index, sizeof(index));
	put(ru, s->fd, s->key, "segment", s->from, s->to, NULL, index);
}

void record_upload__dump(struct record_upload *ru, const struct record_dump *d)
{
	put(ru, d->fd, d->key, "dump", d->from, d->to, d->why, NULL);
}

void record_upload__finish(struct record_upload *ru)
{
	struct upload_stats st;
	char sz[32];

	if (!ru)
		return;
	report(ru);
	upload__poll(ru->u, &st, NULL);
	if (st.waiting)
		info("upload: waiting up to %d s for %u file%s", FINISH_WAIT_S,
		     st.waiting, st.waiting == 1 ? "" : "s");
	upload__finish(ru->u, FINISH_WAIT_S, &st);
	report(ru);
	info("upload to %s: %llu uploaded (%s), %llu retried, %llu given up", ru->url,
	     (unsigned long long)st.uploaded, text_size((double)st.bytes, sz, sizeof(sz)),
	     (unsigned long long)st.retried, (unsigned long long)st.given_up);
	upload__free(ru->u);
	free(ru);
}
