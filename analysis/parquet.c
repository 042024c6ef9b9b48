/* SPDX-License-Identifier: MIT */
/*
 * parquet.c - the Parquet writer of parquet.h.
 *
 * A file is "PAR1", the row groups' column chunks one after another, then
 * the footer (FileMetaData, Thrift compact protocol), its length (u32 LE)
 * and "PAR1". Thrift's compact protocol, as written here: a field is a
 * byte (id delta << 4 | type) when the id is 1..15 past the last one of
 * its struct, else the type byte and the id as a zigzag varint; integers
 * are zigzag varints, binaries a varint length and the bytes, a struct
 * ends with a 0 byte, a list is (size << 4 | element type) with sizes
 * past 14 as 0xf? and a varint. Field numbers are parquet.thrift's
 * (apache/parquet-format).
 *
 * Levels and dictionary indices are the RLE / bit-packing hybrid: a run
 * of one value is varint(n << 1) and the value in ceil(width / 8) bytes;
 * other values go in groups of 8, varint(groups << 1 | 1) then the
 * groups' bits packed from the least significant bit. A bit-packed
 * stretch is padded to a whole group only at the end of a page, where
 * the reader stops at the page's value count.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "analysis/parquet.h"
#include "analysis/pbuf.h"
#include "lib/grow.h"
#include "lib/strset.h"

/* parquet.thrift's enums, as far as they are used */
enum { T_BOOLEAN = 0, T_INT64 = 2, T_BYTE_ARRAY = 6 };
enum { R_REQUIRED = 0, R_OPTIONAL = 1, R_REPEATED = 2 };
enum { CT_UTF8 = 0, CT_LIST = 3 };
enum { E_PLAIN = 0, E_RLE = 3, E_DELTA_BINARY_PACKED = 5, E_RLE_DICTIONARY = 8 };
enum { CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };

/* Thrift compact types */
enum { TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };

#define ZSTD_LEVEL   3
#define STAT_MAX_LEN 64
#define DELTA_BLOCK  128 /* values per block of DELTA_BINARY_PACKED */
#define DELTA_MINI   4	 /* ... in miniblocks of 32 */
#define THRIFT_DEPTH 8

struct col {
	struct pq_column def;
	uint32_t *def_lv, *rep_lv; /* per entry: nullable or list columns */
	size_t nlv, def_cap, rep_cap;
	int64_t *v; /* INT64 and BOOL values, non-null */
	size_t nv, vcap;
	uint32_t *ids; /* STRING and list items: ids in dict */
	size_t nids, idcap;
	struct lib_strset dict;
	uint64_t nulls;
	uint32_t given; /* values this row: 1 once set; items of a list */
};

/* where a column chunk of the current group went, for the footer */
struct chunk {
	uint64_t dict_off; /* 0: no dictionary page */
	uint64_t data_off;
	uint64_t values;
	uint64_t raw, packed; /* sizes with page headers */
	int dict;
	int enc; /* the data page's encoding */
	uint64_t nulls;
	int have_stats; /* min and max known */
	uint8_t min[STAT_MAX_LEN], max[STAT_MAX_LEN];
	size_t minlen, maxlen;
};

struct group {
	struct chunk *c; /* ncols of them */
	uint64_t rows, offset;
};

struct pq_table {
	FILE *out;
	uint64_t off;
	struct col *cols;
	size_t ncols;
	char *created_by;
	uint64_t rows;	     /* in the current group */
	uint64_t rows_total; /* written before it */
	size_t str_bytes;    /* strings in the current group */
	struct group *groups;
	size_t ngroups, gcap;
	struct pbuf page, body, hdr, zbuf;
	struct pbuf alt, zalt; /* INT64: the other encoding's page */
	ZSTD_CCtx *zc;
	int err;
};

/* ---- Thrift compact protocol ---------------------------------------- */

struct tc {
	struct pbuf *b;
	int16_t last[THRIFT_DEPTH];
	int depth;
};

static void put_byte(struct pbuf *b, uint8_t c)
{
	pbuf_put(b, &c, 1);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void tc_field(struct tc *t, int16_t id, uint8_t type)
{
	int d = id - t->last[t->depth];

	if (d > 0 && d <= 15) {
		put_byte(t->b, (uint8_t)(d << 4 | type));
	} else {
		put_byte(t->b, type);
		pbuf_varint(t->b, zigzag(id));
	}
	t->last[t->depth] = id;
}

static void tc_i32(struct tc *t, int16_t id, int32_t v)
{
	tc_field(t, id, TC_I32);
	pbuf_varint(t->b, zigzag(v));
}

static void tc_i64(struct tc *t, int16_t id, int64_t v)
{
	tc_field(t, id, TC_I64);
	pbuf_varint(t->b, zigzag(v));
}

static void tc_bin(struct tc *t, int16_t id, const void *p, size_t n)
{
	tc_field(t, id, TC_BINARY);
	pbuf_varint(t->b, n);
	pbuf_put(t->b, p, n);
}

static void tc_str(struct tc *t, int16_t id, const char *s)
{
	tc_bin(t, id, s, strlen(s));
}

/* a struct's fields follow (a field @id, or with @id 0 a list element or
 * the top level) until tc_end() */
static void tc_begin(struct tc *t, int16_t id)
{
	if (id)
		tc_field(t, id, TC_STRUCT);
	if (t->depth + 1 < THRIFT_DEPTH)
		t->last[++t->depth] = 0;
	else
		t->b->err = -EOVERFLOW;
}

static void tc_end(struct tc *t)
{
	put_byte(t->b, 0);
	if (t->depth)
		t->depth--;
}

static void tc_list(struct tc *t, int16_t id, uint8_t elem, size_t n)
{
	tc_field(t, id, TC_LIST);
	if (n < 15) {
		put_byte(t->b, (uint8_t)(n << 4 | elem));
	} else {
		put_byte(t->b, (uint8_t)(0xf0 | elem));
		pbuf_varint(t->b, n);
	}
}

/* ---- encodings ------------------------------------------------------ */

static void put_le(struct pbuf *b, uint64_t v, size_t n)
{
	uint8_t x[8];

	for (size_t i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	pbuf_put(b, x, n);
}

/* values @v[from, to) bit-packed in groups of 8, the last padded with 0 */
static void bitpack(struct pbuf *b, const uint32_t *v, size_t from, size_t to, int width)
{
	size_t groups = (to - from + 7) / 8;
	uint64_t acc = 0;
	int bits = 0;

	pbuf_varint(b, groups << 1 | 1);
	for (size_t i = from; i < from + groups * 8; i++) {
		acc |= (uint64_t)(i < to ? v[i] : 0) << bits;
		bits += width;
		while (bits >= 8) {
			put_byte(b, (uint8_t)acc);
			acc >>= 8;
			bits -= 8;
		}
	}
}

/* @n values @v of @width bits in the hybrid encoding (see the top) */
static void rle_hybrid(struct pbuf *b, const uint32_t *v, size_t n, int width)
{
	size_t i = 0, bp = SIZE_MAX; /* start of a pending bit-packed stretch */

	while (i < n) {
		size_t r = 1, pad;

		while (i + r < n && v[i + r] == v[i])
			r++;
		pad = bp == SIZE_MAX ? 0 : (8 - (i - bp) % 8) % 8;
		if (r < 8 + pad) {
			if (bp == SIZE_MAX)
				bp = i;
			i += r;
			continue;
		}
		if (bp != SIZE_MAX) {
			bitpack(b, v, bp, i + pad, width);
			i += pad;
			r -= pad;
			bp = SIZE_MAX;
		}
		pbuf_varint(b, (uint64_t)r << 1);
		put_le(b, v[i], ((size_t)width + 7) / 8);
		i += r;
	}
	if (bp != SIZE_MAX)
		bitpack(b, v, bp, n, width);
}

/* @n values of @width bits (0..64) at @v packed from the least
 * significant bit, the last group of 32 padded with 0 */
static void pack64(struct pbuf *b, const uint64_t *v, size_t n, int width)
{
	unsigned __int128 acc = 0;
	int bits = 0;

	for (size_t i = 0; i < (n + 31) / 32 * 32 && width; i++) {
		acc |= (unsigned __int128)(i < n ? v[i] : 0) << bits;
		bits += width;
		while (bits >= 8) {
			put_byte(b, (uint8_t)acc);
			acc >>= 8;
			bits -= 8;
		}
	}
}

/* @n INT64 values as DELTA_BINARY_PACKED: a header (block size, miniblocks
 * per block, the count, the first value), then per block of DELTA_BLOCK
 * deltas their minimum (zigzag), each miniblock's bit width, and the
 * miniblocks: the deltas less the minimum, bit-packed. Times, ids and
 * counts that grow cost a few bits a row where PLAIN costs 64. */
static void delta_binary_packed(struct pbuf *b, const int64_t *v, size_t n)
{
	pbuf_varint(b, DELTA_BLOCK);
	pbuf_varint(b, DELTA_MINI);
	pbuf_varint(b, n);
	pbuf_varint(b, zigzag(n ? v[0] : 0));
	for (size_t i = 1; i < n; i += DELTA_BLOCK) {
		size_t m = n - i < DELTA_BLOCK ? n - i : DELTA_BLOCK;
		uint64_t d[DELTA_BLOCK];
		uint8_t w[DELTA_MINI] = {0};
		int64_t min = INT64_MAX;

		for (size_t k = 0; k < m; k++) {
			d[k] = (uint64_t)v[i + k] - (uint64_t)v[i + k - 1];
			min = (int64_t)d[k] < min ? (int64_t)d[k] : min;
		}
		for (size_t k = 0; k < m; k++)
			d[k] -= (uint64_t)min;
		pbuf_varint(b, zigzag(min));
		for (size_t j = 0; j < DELTA_MINI; j++) {
			uint64_t any = 0;

			for (size_t k = j * 32; k < m && k < (j + 1) * 32; k++)
				any |= d[k];
			while (w[j] < 64 && any >> w[j])
				w[j]++;
		}
		pbuf_put(b, w, DELTA_MINI);
		for (size_t j = 0; j < DELTA_MINI && j * 32 < m; j++)
			pack64(b, d + j * 32, m - j * 32 < 32 ? m - j * 32 : 32, w[j]);
	}
}

static int bit_width(uint64_t max)
{
	int w = 1;

	while (w < 32 && (max >> w))
		w++;
	return w;
}

/* levels of max level 1 as a v1 page has them: a u32 length, then RLE */
static void levels(struct pbuf *b, const uint32_t *lv, size_t n, struct pbuf *tmp)
{
	tmp->len = 0;
	rle_hybrid(tmp, lv, n, 1);
	put_le(b, tmp->len, 4);
	pbuf_append(b, tmp);
}

/* ---- pages ---------------------------------------------------------- */

static int write_out(struct pq_table *t, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, t->out) != n)
		return t->err = -EIO;
	t->off += n;
	return 0;
}

/* t->page zstd-compressed into t->zbuf: its size, or 0 with t->err set */
static size_t compress_page(struct pq_table *t)
{
	size_t bound = ZSTD_compressBound(t->page.len), z;

	if (pbuf_error(&t->page) || t->page.len > INT32_MAX) {
		t->err = pbuf_error(&t->page) ? -ENOMEM : -EOVERFLOW;
		return 0;
	}
	t->zbuf.len = 0;
	if (LIB_GROW(t->zbuf.data, t->zbuf.cap, bound)) {
		t->err = -ENOMEM;
		return 0;
	}
	z = ZSTD_compressCCtx(t->zc, t->zbuf.data, bound, t->page.data, t->page.len,
			      ZSTD_LEVEL);
	if (ZSTD_isError(z)) {
		t->err = -ENOMEM;
		return 0;
	}
	return t->zbuf.len = z;
}

/* t->page, compressed in t->zbuf (compress_page()), as a page of @type
 * after its header; the page's place and sizes added to @c */
static int write_page(struct pq_table *t, struct chunk *c, int type, uint64_t nvalues,
		      int encoding)
{
	struct tc h = {.b = &t->hdr};
	size_t z = t->zbuf.len;

	if (t->err)
		return t->err;
	if (nvalues > INT32_MAX)
		return t->err = -EOVERFLOW;
	t->hdr.len = 0;
	tc_i32(&h, 1, type);
	tc_i32(&h, 2, (int32_t)t->page.len);
	tc_i32(&h, 3, (int32_t)z);
	if (type == PAGE_DATA) {
		tc_begin(&h, 5);
		tc_i32(&h, 1, (int32_t)nvalues);
		tc_i32(&h, 2, encoding);
		tc_i32(&h, 3, E_RLE);
		tc_i32(&h, 4, E_RLE);
		tc_end(&h);
	} else {
		tc_begin(&h, 7);
		tc_i32(&h, 1, (int32_t)nvalues);
		tc_i32(&h, 2, E_PLAIN);
		tc_end(&h);
	}
	put_byte(&t->hdr, 0);
	if (pbuf_error(&t->hdr))
		return t->err = -ENOMEM;
	if (type == PAGE_DICTIONARY)
		c->dict_off = t->off;
	else
		c->data_off = t->off;
	c->raw += t->hdr.len + t->page.len;
	c->packed += t->hdr.len + z;
	if (write_out(t, t->hdr.data, t->hdr.len) || write_out(t, t->zbuf.data, z))
		return t->err;
	return 0;
}

static void swap_pages(struct pq_table *t)
{
	struct pbuf p = t->page, z = t->zbuf;

	t->page = t->alt;
	t->zbuf = t->zalt;
	t->alt = p;
	t->zalt = z;
}

static void stat_set(uint8_t *dst, size_t *len, const void *p, size_t n)
{
	memcpy(dst, p, n);
	*len = n;
}

/* min and max of an INT64 or BOOL column's values */
static void int_stats(const struct col *k, struct chunk *c)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	uint8_t x[8];

	if (!k->nv || k->def.kind != PQ_INT64)
		return;
	for (size_t i = 0; i < k->nv; i++) {
		lo = k->v[i] < lo ? k->v[i] : lo;
		hi = k->v[i] > hi ? k->v[i] : hi;
	}
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)((uint64_t)lo >> (8 * i));
	stat_set(c->min, &c->minlen, x, 8);
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)((uint64_t)hi >> (8 * i));
	stat_set(c->max, &c->maxlen, x, 8);
	c->have_stats = 1;
}

/* bytewise order, a prefix first */
static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);

	return r ? r : (an > bn) - (an < bn);
}

/* min and max of a STRING column's distinct strings, if short enough */
static void str_stats(const struct col *k, struct chunk *c)
{
	const struct lib_strset *d = &k->dict;
	uint32_t lo = 0, hi = 0;

	if (!lib_strset_count(d) || k->def.kind != PQ_STRING)
		return;
	for (uint32_t i = 1; i < lib_strset_count(d); i++) {
		if (bytes_cmp(lib_strset_str(d, i), lib_strset_len(d, i),
			      lib_strset_str(d, lo), lib_strset_len(d, lo)) < 0)
			lo = i;
		if (bytes_cmp(lib_strset_str(d, i), lib_strset_len(d, i),
			      lib_strset_str(d, hi), lib_strset_len(d, hi)) > 0)
			hi = i;
	}
	if (lib_strset_len(d, lo) > STAT_MAX_LEN || lib_strset_len(d, hi) > STAT_MAX_LEN)
		return;
	stat_set(c->min, &c->minlen, lib_strset_str(d, lo), lib_strset_len(d, lo));
	stat_set(c->max, &c->maxlen, lib_strset_str(d, hi), lib_strset_len(d, hi));
	c->have_stats = 1;
}

static bool has_levels(const struct pq_column *d)
{
	return d->nullable || d->kind == PQ_STRINGS;
}

/* one column of the current group: its pages, and in @c where they went */
static int write_chunk(struct pq_table *t, struct col *k, struct chunk *c)
{
	const struct lib_strset *d = &k->dict;
	bool strings = k->def.kind == PQ_STRING || k->def.kind == PQ_STRINGS;
	size_t nd = lib_strset_count(d);
	uint64_t entries = has_levels(&k->def) ? k->nlv : t->rows;
	int enc = E_PLAIN;

	c->values = entries;
	c->nulls = k->nulls;
	int_stats(k, c);
	str_stats(k, c);
	c->dict = strings && nd && nd <= 65536 && nd * 2 <= k->nids + 1;
	if (c->dict) {
		t->page.len = 0;
		for (uint32_t i = 0; i < nd; i++) {
			put_le(&t->page, lib_strset_len(d, i), 4);
			pbuf_put(&t->page, lib_strset_str(d, i), lib_strset_len(d, i));
		}
		if (!compress_page(t) || write_page(t, c, PAGE_DICTIONARY, nd, E_PLAIN))
			return t->err;
		enc = E_RLE_DICTIONARY;
	}
	t->page.len = 0;
	if (k->def.kind == PQ_STRINGS)
		levels(&t->page, k->rep_lv, k->nlv, &t->body);
	if (has_levels(&k->def))
		levels(&t->page, k->def_lv, k->nlv, &t->body);
	if (c->dict) {
		int w = bit_width(nd - 1);

		put_byte(&t->page, (uint8_t)w);
		rle_hybrid(&t->page, k->ids, k->nids, w);
	} else if (strings) {
		for (size_t i = 0; i < k->nids; i++) {
			put_le(&t->page, lib_strset_len(d, k->ids[i]), 4);
			pbuf_put(&t->page, lib_strset_str(d, k->ids[i]),
				 lib_strset_len(d, k->ids[i]));
		}
	} else if (k->def.kind == PQ_BOOL) {
		uint8_t acc = 0;

		for (size_t i = 0; i < k->nv; i++) {
			acc |= (uint8_t)((k->v[i] ? 1 : 0) << (i % 8));
			if (i % 8 == 7 || i + 1 == k->nv) {
				put_byte(&t->page, acc);
				acc = 0;
			}
		}
	} else {
		/* PLAIN and DELTA_BINARY_PACKED both, the smaller kept: deltas
		 * win on times and ids that grow, zstd over PLAIN on values
		 * that come and go (durations) */
		size_t plain, delta;

		t->alt.len = 0;
		pbuf_append(&t->alt, &t->page);
		for (size_t i = 0; i < k->nv; i++)
			put_le(&t->page, (uint64_t)k->v[i], 8);
		plain = compress_page(t);
		swap_pages(t);
		delta_binary_packed(&t->page, k->v, k->nv);
		delta = compress_page(t);
		if (plain <= delta)
			swap_pages(t);
		else
			enc = E_DELTA_BINARY_PACKED;
	}
	c->enc = enc;
	if (k->def.kind != PQ_INT64 && !compress_page(t))
		return t->err;
	return write_page(t, c, PAGE_DATA, entries, enc);
}

static int flush_group(struct pq_table *t)
{
	struct group *g;

	if (t->err || !t->rows)
		return t->err;
	if (LIB_GROW(t->groups, t->gcap, t->ngroups + 1))
		return t->err = -ENOMEM;
	g = &t->groups[t->ngroups];
	g->c = calloc(t->ncols, sizeof(*g->c));
	if (!g->c)
		return t->err = -ENOMEM;
	t->ngroups++;
	g->rows = t->rows;
	g->offset = t->off;
	for (size_t i = 0; i < t->ncols; i++) {
		struct col *k = &t->cols[i];

		if (write_chunk(t, k, &g->c[i]))
			return t->err;
		k->nlv = k->nv = k->nids = 0;
		k->nulls = 0;
		lib_strset_clear(&k->dict);
	}
	t->rows_total += t->rows;
	t->rows = 0;
	t->str_bytes = 0;
	return 0;
}

/* ---- the footer ----------------------------------------------------- */

static void schema_string(struct tc *h)
{
	tc_i32(h, 6, CT_UTF8);
	tc_begin(h, 10); /* LogicalType */
	tc_begin(h, 1);	 /* STRING: StringType {} */
	tc_end(h);
	tc_end(h);
}

static void footer_schema(struct pq_table *t, struct tc *h)
{
	size_t n = 1;

	for (size_t i = 0; i < t->ncols; i++)
		n += t->cols[i].def.kind == PQ_STRINGS ? 3 : 1;
	tc_list(h, 2, TC_STRUCT, n);
	tc_begin(h, 0);
	tc_str(h, 4, "schema");
	tc_i32(h, 5, (int32_t)t->ncols);
	tc_end(h);
	for (size_t i = 0; i < t->ncols; i++) {
		const struct pq_column *d = &t->cols[i].def;

		tc_begin(h, 0);
		if (d->kind == PQ_STRINGS) {
			tc_i32(h, 3, R_REQUIRED);
			tc_str(h, 4, d->name);
			tc_i32(h, 5, 1);
			tc_i32(h, 6, CT_LIST);
			tc_begin(h, 10);
			tc_begin(h, 3); /* LIST: ListType {} */
			tc_end(h);
			tc_end(h);
			tc_end(h);
			tc_begin(h, 0);
			tc_i32(h, 3, R_REPEATED);
			tc_str(h, 4, "list");
			tc_i32(h, 5, 1);
			tc_end(h);
			tc_begin(h, 0);
			tc_i32(h, 1, T_BYTE_ARRAY);
			tc_i32(h, 3, R_REQUIRED);
			tc_str(h, 4, "element");
			schema_string(h);
			tc_end(h);
			continue;
		}
		tc_i32(h, 1,
		       d->kind == PQ_INT64  ? T_INT64
		       : d->kind == PQ_BOOL ? T_BOOLEAN
					    : T_BYTE_ARRAY);
		tc_i32(h, 3, d->nullable ? R_OPTIONAL : R_REQUIRED);
		tc_str(h, 4, d->name);
		if (d->kind == PQ_STRING)
			schema_string(h);
		tc_end(h);
	}
}

static void footer_chunk(struct pq_table *t, struct tc *h, size_t i,
			 const struct chunk *c)
{
	const struct pq_column *d = &t->cols[i].def;
	bool list = d->kind == PQ_STRINGS;

	tc_begin(h, 0);
	tc_i64(h, 2, (int64_t)(c->dict ? c->dict_off : c->data_off));
	tc_begin(h, 3); /* ColumnMetaData */
	tc_i32(h, 1,
	       d->kind == PQ_INT64  ? T_INT64
	       : d->kind == PQ_BOOL ? T_BOOLEAN
				    : T_BYTE_ARRAY);
	tc_list(h, 2, TC_I32, c->enc == E_PLAIN ? 2 : 3);
	pbuf_varint(h->b, zigzag(E_PLAIN));
	pbuf_varint(h->b, zigzag(E_RLE));
	if (c->enc != E_PLAIN)
		pbuf_varint(h->b, zigzag(c->enc));
	tc_list(h, 3, TC_BINARY, list ? 3 : 1);
	pbuf_varint(h->b, strlen(d->name));
	pbuf_put(h->b, d->name, strlen(d->name));
	if (list) {
		pbuf_varint(h->b, 4);
		pbuf_put(h->b, "list", 4);
		pbuf_varint(h->b, 7);
		pbuf_put(h->b, "element", 7);
	}
	tc_i32(h, 4, CODEC_ZSTD);
	tc_i64(h, 5, (int64_t)c->values);
	tc_i64(h, 6, (int64_t)c->raw);
	tc_i64(h, 7, (int64_t)c->packed);
	tc_i64(h, 9, (int64_t)c->data_off);
	if (c->dict)
		tc_i64(h, 11, (int64_t)c->dict_off);
	tc_begin(h, 12); /* Statistics */
	tc_i64(h, 3, (int64_t)c->nulls);
	if (c->have_stats) {
		tc_bin(h, 5, c->max, c->maxlen);
		tc_bin(h, 6, c->min, c->minlen);
	}
	tc_end(h);
	tc_end(h);
	tc_end(h);
}

static int write_footer(struct pq_table *t)
{
	struct tc h = {.b = &t->hdr};
	size_t leaves = t->ncols;

	t->hdr.len = 0;
	tc_i32(&h, 1, 1);
	footer_schema(t, &h);
	tc_i64(&h, 3, (int64_t)t->rows_total);
	tc_list(&h, 4, TC_STRUCT, t->ngroups);
	for (size_t g = 0; g < t->ngroups; g++) {
		const struct group *gr = &t->groups[g];
		uint64_t raw = 0, packed = 0;

		tc_begin(&h, 0);
		tc_list(&h, 1, TC_STRUCT, t->ncols);
		for (size_t i = 0; i < t->ncols; i++) {
			footer_chunk(t, &h, i, &gr->c[i]);
			raw += gr->c[i].raw;
			packed += gr->c[i].packed;
		}
		tc_i64(&h, 2, (int64_t)raw);
		tc_i64(&h, 3, (int64_t)gr->rows);
		tc_i64(&h, 5, (int64_t)gr->offset);
		tc_i64(&h, 6, (int64_t)packed);
		tc_end(&h);
	}
	tc_str(&h, 6, t->created_by);
	tc_list(&h, 7, TC_STRUCT, leaves);
	for (size_t i = 0; i < leaves; i++) {
		tc_begin(&h, 0);
		tc_begin(&h, 1); /* TYPE_ORDER: TypeDefinedOrder {} */
		tc_end(&h);
		tc_end(&h);
	}
	put_byte(&t->hdr, 0);
	if (pbuf_error(&t->hdr) || t->hdr.len > UINT32_MAX)
		return t->err = -ENOMEM;
	if (write_out(t, t->hdr.data, t->hdr.len))
		return t->err;
	t->body.len = 0;
	put_le(&t->body, t->hdr.len, 4);
	pbuf_put(&t->body, "PAR1", 4);
	if (pbuf_error(&t->body))
		return t->err = -ENOMEM;
	return write_out(t, t->body.data, t->body.len);
}

/* ---- the table ------------------------------------------------------ */

int pq__new(FILE *out, const struct pq_column *cols, size_t n, const char *created_by,
	    struct pq_table **out_table)
{
	struct pq_table *t;

	*out_table = NULL;
	if (!n || n > INT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned int)cols[i].kind > PQ_STRINGS || !cols[i].name ||
		    (cols[i].kind == PQ_STRINGS && cols[i].nullable))
			return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->out = out;
	t->ncols = n;
	t->cols = calloc(n, sizeof(*t->cols));
	t->created_by = strdup(created_by ? created_by : "d9prof");
	t->zc = ZSTD_createCCtx();
	if (!t->cols || !t->created_by || !t->zc)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		t->cols[i].def = cols[i];
		t->cols[i].def.name = strdup(cols[i].name);
		if (!t->cols[i].def.name)
			goto nomem;
	}
	if (write_out(t, "PAR1", 4)) {
		pq__free(t);
		return -EIO;
	}
	*out_table = t;
	return 0;
nomem:
	pq__free(t);
	return -ENOMEM;
}

static struct col *col_of(struct pq_table *t, size_t col, enum pq_kind kind)
{
	struct col *k;

	if (t->err)
		return NULL;
	if (col >= t->ncols || t->cols[col].def.kind != kind ||
	    (kind != PQ_STRINGS && t->cols[col].given)) {
		t->err = -EINVAL;
		return NULL;
	}
	k = &t->cols[col];
	k->given++;
	return k;
}

static void level(struct pq_table *t, struct col *k, uint32_t def, uint32_t rep)
{
	if (!has_levels(&k->def))
		return;
	if (k->nlv >= INT32_MAX) {
		t->err = -EOVERFLOW;
		return;
	}
	if (LIB_GROW(k->def_lv, k->def_cap, k->nlv + 1) ||
	    (k->def.kind == PQ_STRINGS && LIB_GROW(k->rep_lv, k->rep_cap, k->nlv + 1))) {
		t->err = -ENOMEM;
		return;
	}
	k->def_lv[k->nlv] = def;
	if (k->def.kind == PQ_STRINGS)
		k->rep_lv[k->nlv] = rep;
	k->nlv++;
}

static void value(struct pq_table *t, struct col *k, int64_t v)
{
	if (LIB_GROW(k->v, k->vcap, k->nv + 1)) {
		t->err = -ENOMEM;
		return;
	}
	k->v[k->nv++] = v;
	level(t, k, 1, 0);
}

void pq_i64(struct pq_table *t, size_t col, int64_t v)
{
	struct col *k = col_of(t, col, PQ_INT64);

	if (k)
		value(t, k, v);
}

void pq_bool(struct pq_table *t, size_t col, int v)
{
	struct col *k = col_of(t, col, PQ_BOOL);

	if (k)
		value(t, k, !!v);
}

static void add_str(struct pq_table *t, struct col *k, const char *s, size_t len)
{
	uint32_t id;
	int err = lib_strset_add(&k->dict, s, len, &id);

	if (err < 0 || LIB_GROW(k->ids, k->idcap, k->nids + 1)) {
		t->err = err < 0 ? err : -ENOMEM;
		return;
	}
	k->ids[k->nids++] = id;
	t->str_bytes += len;
}

void pq_str(struct pq_table *t, size_t col, const char *s, size_t len)
{
	struct col *k;

	if (!s) {
		pq_null(t, col);
		return;
	}
	k = col_of(t, col, PQ_STRING);
	if (!k)
		return;
	add_str(t, k, s, len);
	level(t, k, 1, 0);
}

void pq_null(struct pq_table *t, size_t col)
{
	struct col *k;

	if (t->err)
		return;
	if (col >= t->ncols || !t->cols[col].def.nullable || t->cols[col].given) {
		t->err = -EINVAL;
		return;
	}
	k = &t->cols[col];
	k->given++;
	k->nulls++;
	level(t, k, 0, 0);
}

void pq_item(struct pq_table *t, size_t col, const char *s, size_t len)
{
	struct col *k = col_of(t, col, PQ_STRINGS);

	if (!k)
		return;
	add_str(t, k, s, len);
	level(t, k, 1, k->given > 1);
}

int pq_row_end(struct pq_table *t)
{
	if (t->err)
		return t->err;
	for (size_t i = 0; i < t->ncols; i++) {
		struct col *k = &t->cols[i];

		if (k->def.kind == PQ_STRINGS && !k->given)
			level(t, k, 0, 0); /* an empty list */
		else if (k->given != 1 && k->def.kind != PQ_STRINGS)
			t->err = -EINVAL;
		k->given = 0;
	}
	if (t->err)
		return t->err;
	t->rows++;
	if (t->rows >= PQ_GROUP_ROWS || t->str_bytes >= PQ_GROUP_BYTES)
		flush_group(t);
	return t->err;
}

uint64_t pq_rows(const struct pq_table *t)
{
	return t->rows_total + t->rows;
}

int pq__finish(struct pq_table *t)
{
	if (flush_group(t) || write_footer(t))
		return t->err;
	return fflush(t->out) ? (t->err = -EIO) : 0;
}

void pq__free(struct pq_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncols && t->cols; i++) {
		struct col *k = &t->cols[i];

		free((char *)k->def.name);
		free(k->def_lv);
		free(k->rep_lv);
		free(k->v);
		free(k->ids);
		lib_strset_release(&k->dict);
	}
	for (size_t g = 0; g < t->ngroups; g++)
		free(t->groups[g].c);
	free(t->groups);
	free(t->cols);
	free(t->created_by);
	pbuf_release(&t->page);
	pbuf_release(&t->body);
	pbuf_release(&t->hdr);
	pbuf_release(&t->zbuf);
	pbuf_release(&t->alt);
	pbuf_release(&t->zalt);
	ZSTD_freeCCtx(t->zc);
	free(t);
}
