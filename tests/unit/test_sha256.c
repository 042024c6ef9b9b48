/* SPDX-License-Identifier: MIT */
/*
 * test_sha256.c - lib/sha256.c against FIPS 180-2's examples and against
 * coreutils' sha256sum on every length across the padding's edges, fed
 * whole and in pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lib/sha256.h"

static void hex_of(const void *p, size_t n, size_t piece, char out[65])
{
	struct sha256 c;
	uint8_t d[SHA256_LEN];
	const uint8_t *b = p;

	sha256_init(&c);
	for (size_t i = 0; i < n; i += piece)
		sha256_update(&c, b + i, n - i < piece ? n - i : piece);
	sha256_final(&c, d);
	sha256_hex(d, out);
}

Test(sha256, the_standards_examples)
{
	static char million[1000000];
	char h[65];

	hex_of("", 0, 1, h);
	cr_expect_str_eq(
		h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, 3, h);
	cr_expect_str_eq(
		h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 56, h);
	cr_expect_str_eq(
		h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', sizeof(million));
	hex_of(million, sizeof(million), 4093, h);
	cr_expect_str_eq(
		h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, agrees_with_sha256sum_at_every_length_whole_and_in_pieces)
{
	uint8_t data[300];
	char path[] = "/tmp/d9sha.XXXXXX", cmd[64], want[80], h[65];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	for (size_t n = 0; n <= 200; n++) {
		FILE *f = fopen(path, "w"), *p;

		cr_assert(f && fwrite(data, 1, n, f) == n && !fclose(f));
		snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
		p = popen(cmd, "r");
		cr_assert(p && fgets(want, sizeof(want), p));
		pclose(p);
		want[64] = '\0';
		hex_of(data, n, n ? n : 1, h);
		cr_expect_str_eq(h, want, "%zu bytes whole", n);
		hex_of(data, n, 7, h);
		cr_expect_str_eq(h, want, "%zu bytes in sevens", n);
	}
	unlink(path);
}
