/* SPDX-License-Identifier: MIT */
/*
 * pbuf.h - a protobuf writer into a growable buffer, and gzip of a
 * buffer, for the exports (pbuf.c).
 */
#ifndef D9_ANALYSIS_PBUF_H
#define D9_ANALYSIS_PBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growable buffer of protobuf bytes; all zero is empty. After a failed
 * growth (err = -ENOMEM) every call leaves it as it is. */
struct pbuf {
	uint8_t *data;
	size_t len, cap;
	int err;
};

/* A base-128 varint (protobuf's), least significant group first. */
void pbuf_varint(struct pbuf *b, uint64_t v);
/* Field @field as a varint (wire type 0); nothing for 0, proto3's
 * default. int64 fields of values >= 0 encode the same. */
void pbuf_uint(struct pbuf *b, uint32_t field, uint64_t v);
/* Field @field length-delimited (wire type 2): a string or bytes. */
void pbuf_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n);
/* Field @field holding the message @m, which is emptied for reuse. */
void pbuf_msg(struct pbuf *b, uint32_t field, struct pbuf *m);
/* Field @field as packed varints (repeated scalars), built in @tmp. */
void pbuf_packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n,
		 struct pbuf *tmp);
/* @n raw bytes at @p after those of @b (no field header). */
void pbuf_put(struct pbuf *b, const void *p, size_t n);
/* The bytes of @m (whole fields) after those of @b. */
void pbuf_append(struct pbuf *b, const struct pbuf *m);
/* 0, or -ENOMEM if a growth failed. */
int pbuf_error(const struct pbuf *b);
void pbuf_release(struct pbuf *b);
/* @n bytes at @p gzipped (RFC 1952, zlib's deflate) onto @out. 0, -ENOMEM
 * or -EIO. */
int analysis_gzip_write(const void *p, size_t n, FILE *out);

#endif /* D9_ANALYSIS_PBUF_H */
