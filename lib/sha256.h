/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4), for the S3 store's signed payloads:
 * SigV4 signs a request's body through its hash (x-amz-content-sha256),
 * and libcurl, which computes the signature, does not hash a body it
 * reads through a callback. Nothing else of d9prof needs a digest, so no
 * crypto library is linked for it.
 *
 * sha256_init(), sha256_update() any number of times, sha256_final() for
 * the 32-byte digest; sha256_hex() writes a digest as 64 lowercase hex
 * digits and a NUL.
 */
#ifndef D9_LIB_SHA256_H
#define D9_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed */
	uint8_t block[64];
	size_t used; /* of block */
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, uint8_t out[SHA256_LEN]);
void sha256_hex(const uint8_t d[SHA256_LEN], char out[2 * SHA256_LEN + 1]);

#endif /* D9_LIB_SHA256_H */
