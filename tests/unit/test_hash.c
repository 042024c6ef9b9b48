// SPDX-License-Identifier: MIT
/* lib/hash.h: the tree's hashes. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lib/hash.h"

Test(hash, every_byte_and_the_length_count_in_a_string)
{
	unsigned char buf[80];
	uint64_t seen[80 * 2 + 1];
	size_t n = 0;

	memset(buf, 'a', sizeof(buf));
	/* a prefix of each length, and each with its last byte changed:
	 * overlapping tail reads must not lose a byte */
	for (size_t len = 0; len < 80; len++) {
		seen[n++] = lib_hash_mem(buf, len);
		if (len) {
			buf[len - 1] = 'b';
			seen[n++] = lib_hash_mem(buf, len);
			buf[len - 1] = 'a';
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			cr_assert_neq(seen[i], seen[j], "%zu and %zu", i, j);
	for (size_t len = 1; len < 40; len++)
		for (size_t k = 0; k < len; k++) {
			uint64_t h = lib_hash_mem(buf, len);

			buf[k] ^= 1;
			cr_assert_neq(lib_hash_mem(buf, len), h, "len %zu byte %zu", len,
				      k);
			buf[k] ^= 1;
		}
}

Test(hash, a_c_string_hashes_as_its_bytes)
{
	cr_assert_eq(lib_hash_str("tokio::runtime::task"),
		     lib_hash_mem("tokio::runtime::task", 20));
	cr_assert_eq(lib_hash_str(""), lib_hash_mem("", 0));
}

Test(hash, the_colours_hash_is_fnv1a_32)
{
	/* FNV-1a 32's published values: the SVG colours are made of them */
	cr_assert_eq(lib_hash_fnv1a32(""), 0x811c9dc5u);
	cr_assert_eq(lib_hash_fnv1a32("a"), 0xe40c292cu);
	cr_assert_eq(lib_hash_fnv1a32("foobar"), 0xbf9cf968u);
}

Test(hash, the_chunk_checksum_is_xxh32)
{
	/* XXH32's published values: every trace file holds them */
	const char *s = "Nobody inspects the spammish repetition";

	cr_assert_eq(lib_xxh32("", 0, 0), 0x02cc5d05u);
	cr_assert_eq(lib_xxh32("a", 1, 0), 0x550d7456u);
	cr_assert_eq(lib_xxh32("abc", 3, 0), 0x32d153ffu);
	cr_assert_eq(lib_xxh32(s, strlen(s), 0), 0xe2293b2fu, "16 bytes a round");
}
