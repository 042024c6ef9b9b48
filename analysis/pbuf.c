/* SPDX-License-Identifier: MIT */
/*
 * pbuf.c - a protobuf writer into a growable buffer, and gzip of a buffer,
 * for the pprof export (export_pprof.c).
 *
 * Only what profile.proto needs: varints (wire type 0) and length-delimited
 * fields (wire type 2: strings, nested messages, packed varints). A nested
 * message is written into a buffer of its own and copied in with its
 * length, so nothing is patched after the fact. Errors are sticky: after a
 * failed growth every call is a no-op and pbuf_error() says -ENOMEM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/pbuf.h"
#include "lib/grow.h"

static int reserve(struct pbuf *b, size_t more)
{
	if (b->err)
		return b->err;
	if (b->len + more > b->cap && LIB_GROW(b->data, b->cap, b->len + more))
		return b->err = -ENOMEM;
	return 0;
}

void pbuf_varint(struct pbuf *b, uint64_t v)
{
	if (reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->data[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

void pbuf_uint(struct pbuf *b, uint32_t field, uint64_t v)
{
	/* proto3: a field at its default is not written */
	if (!v)
		return;
	pbuf_varint(b, (uint64_t)field << 3);
	pbuf_varint(b, v);
}

void pbuf_put(struct pbuf *b, const void *p, size_t n)
{
	if (!n || reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pbuf_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n)
{
	pbuf_varint(b, (uint64_t)field << 3 | 2);
	pbuf_varint(b, n);
	pbuf_put(b, p, n);
}

void pbuf_msg(struct pbuf *b, uint32_t field, struct pbuf *m)
{
	if (m->err && !b->err)
		b->err = m->err;
	pbuf_bytes(b, field, m->data, m->len);
	m->len = 0;
}

void pbuf_packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n,
		 struct pbuf *tmp)
{
	if (!n)
		return;
	tmp->len = 0;
	for (size_t i = 0; i < n; i++)
		pbuf_varint(tmp, v[i]);
	pbuf_msg(b, field, tmp);
}

void pbuf_append(struct pbuf *b, const struct pbuf *m)
{
	if (m->err && !b->err)
		b->err = m->err;
	pbuf_put(b, m->data, m->len);
}

int pbuf_error(const struct pbuf *b)
{
	return b->err;
}

void pbuf_release(struct pbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int analysis_gzip_write(const void *p, size_t n, FILE *out)
{
	unsigned char buf[65536];
	z_stream z;
	int ret, err = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)p;
	do {
		/* avail_in is 32 bits: feed a larger buffer in parts */
		size_t part = n > (1u << 30) ? 1u << 30 : n;

		z.avail_in = (uInt)part;
		n -= part;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			ret = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			if (ret == Z_STREAM_ERROR) {
				err = -EIO;
				break;
			}
			if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) !=
			    sizeof(buf) - z.avail_out)
				err = -EIO;
		} while (!err && z.avail_out == 0);
	} while (!err && n);
	deflateEnd(&z);
	return err;
}
