// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the Parquet tables (`export --format parquet`) of what
 * the trace reader accepts, joined as the export joins it, each table
 * written to memory and read back by a small reader of the file's
 * structure: "PAR1" at both ends, a footer that is well-formed Thrift
 * compact (every field, list and struct), and at each column chunk's
 * data page offset a page header whose page fits before the footer. A
 * file that fails it aborts (a finding). DuckDB reads the real tables in
 * tests/e2e/tables.sh. The first byte picks what the command line would
 * (seeds: a flags byte and a trace):
 *
 *   bit  0    read as analysis does (samples and events left on disk)
 *   bits 4-5  --task: none, a task's id, its name, an id no task has
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include <errno.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"

FUZZ_ONE_FILE("fuzz-parquet")

/* ---- a reader of the structure: Thrift compact, skipped ------------ */

struct rd {
	const uint8_t *p, *end;
	int bad;
	/* ColumnMetaData.data_page_offset (field 9 at struct depth 3 of the
	 * footer), PageHeader.compressed_page_size (field 3, depth 0) */
	int64_t found[4096];
	size_t nfound;
	int want_id, want_depth;
};

static uint64_t varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t zigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void skip(struct rd *r, int type, int depth, int id);

static void skip_struct(struct rd *r, int depth)
{
	int16_t last = 0;

	if (depth > 16) {
		r->bad = 1;
		return;
	}
	while (!r->bad) {
		uint8_t b;

		if (r->p >= r->end) {
			r->bad = 1;
			return;
		}
		b = *r->p++;
		if (!b)
			return;
		last = b >> 4 ? (int16_t)(last + (b >> 4)) : (int16_t)zigzag(varint(r));
		skip(r, b & 0xf, depth, last);
	}
}

static void skip(struct rd *r, int type, int depth, int id)
{
	uint64_t n;

	switch (type) {
	case 1: /* a boolean field: in its type */
	case 2:
		return;
	case 3:
		r->p++;
		break;
	case 4:
	case 5:
	case 6: {
		int64_t v = zigzag(varint(r));

		if (type != 4 && id == r->want_id && depth == r->want_depth &&
		    r->nfound < sizeof(r->found) / sizeof(r->found[0]))
			r->found[r->nfound++] = v;
		break;
	}
	case 7:
		r->p += 8;
		break;
	case 8:
		n = varint(r);
		if (n > (uint64_t)(r->end - r->p))
			r->bad = 1;
		else
			r->p += n;
		break;
	case 9:
	case 10: {
		uint8_t h;
		int et;

		if (r->p >= r->end) {
			r->bad = 1;
			return;
		}
		h = *r->p++;
		et = h & 0xf;
		n = h >> 4 == 15 ? varint(r) : (uint64_t)(h >> 4);
		for (uint64_t i = 0; i < n && !r->bad; i++) {
			if (et == 1 || et == 2)
				r->p++;
			else if (et == 12)
				skip_struct(r, depth + 1);
			else
				skip(r, et, depth, 0);
		}
		break;
	}
	case 12:
		skip_struct(r, depth + 1);
		break;
	default:
		r->bad = 1;
	}
	if (r->p > r->end)
		r->bad = 1;
}

/* the file is a Parquet file in structure, or abort */
static void check_file(const uint8_t *f, size_t n)
{
	struct rd r = {0};
	uint32_t flen;
	size_t footer;

	if (n < 12 || memcmp(f, "PAR1", 4) || memcmp(f + n - 4, "PAR1", 4))
		abort();
	memcpy(&flen, f + n - 8, 4);
	if (flen > n - 12)
		abort();
	footer = n - 8 - flen;
	r = (struct rd){.p = f + footer, .end = f + n - 8, .want_id = 9, .want_depth = 3};
	skip_struct(&r, 0);
	if (r.bad || r.p != r.end)
		abort();
	for (size_t i = 0; i < r.nfound; i++) {
		int64_t off = r.found[i];
		struct rd h;

		if (off < 4 || (size_t)off >= footer)
			abort();
		h = (struct rd){
			.p = f + off, .end = f + footer, .want_id = 3, .want_depth = 0};
		skip_struct(&h, 0);
		if (h.bad || h.nfound != 1 || h.found[0] < 0 ||
		    (size_t)h.found[0] > (size_t)(h.end - h.p))
			abort();
	}
}

/* ---- the tables, in memory ------------------------------------------ */

/* the files open at once (the polls and delays tables are written
 * together) */
struct mem {
	struct slot {
		FILE *f;
		char *buf;
		size_t len;
	} v[2];
};

static FILE *mem_open(void *ctx, const char *rel)
{
	struct mem *m = ctx;
	struct slot *s = !m->v[0].f ? &m->v[0] : !m->v[1].f ? &m->v[1] : NULL;

	(void)rel;
	if (!s)
		abort(); /* a third file open at once */
	s->f = open_memstream(&s->buf, &s->len);
	return s->f;
}

static int mem_close(void *ctx, FILE *f, int err)
{
	struct mem *m = ctx;
	struct slot *s = m->v[0].f == f ? &m->v[0] : &m->v[1];
	int bad = fclose(f);

	if (!bad && !err)
		check_file((const uint8_t *)s->buf, s->len);
	free(s->buf);
	*s = (struct slot){0};
	return bad ? -EIO : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t = NULL;
	struct join *j = NULL;
	struct offcpu *oc = NULL;
	struct delays *d = NULL;
	struct mem m = {0};
	struct parquet_opts po = {.open = mem_open, .close = mem_close, .ctx = &m};
	const char *msg;
	unsigned int b;
	int err;

	if (!size || fuzz_memfd_set(fd, data + 1, size - 1))
		return 0;
	b = data[0];
	struct trace_read_opts ro = {
		.flags = b & 1 ? TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS : 0,
	};
	const char *paths[] = {path};

	if (trace__read_paths(paths, 1, &ro, &t, &msg))
		return 0;
	/* as cmd_export.c makes them for the export */
	err = join__new_keep(
		t, 0,
		&(struct join_keep){.min_ns = UINT64_MAX, .sampled = 1, .switches = 1},
		&j);
	if (!err)
		err = offcpu__new(j, 0, &oc);
	if (!err) {
		fuzz_pick_task(j, (b >> 4) & 3, size);
		analysis__export_parquet(oc, &po);
	}
	fuzz_views_free(t, j, oc, d, out);
	return 0;
}
