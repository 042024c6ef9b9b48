// SPDX-License-Identifier: MIT
/* lib/strset.h: the one set of strings. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strset.h"

static uint32_t add(struct lib_strset *ss, const char *s, int added)
{
	uint32_t id = UINT32_MAX;

	cr_assert_eq(lib_strset_add(ss, s, strlen(s), &id), added, "\"%s\"", s);
	return id;
}

Test(strset, a_zeroed_set_is_empty_and_usable)
{
	struct lib_strset ss = {0};
	uint32_t id = 7;

	cr_assert_eq(lib_strset_count(&ss), 0);
	cr_assert_eq(lib_strset_size(&ss), 0);
	cr_assert_eq(lib_strset_find(&ss, "a", 1, &id), -ENOENT);
	cr_assert_eq(id, 7, "not found: *id untouched");
	cr_assert_eq(add(&ss, "a", 1), 0);
	lib_strset_release(&ss);
	cr_assert_eq(lib_strset_count(&ss), 0, "released: empty again");
	cr_assert_eq(lib_strset_find(&ss, "a", 1, &id), -ENOENT);
	lib_strset_release(&ss);
}

Test(strset, the_same_string_has_the_same_id)
{
	struct lib_strset ss = {0};
	uint32_t id;

	cr_assert_eq(add(&ss, "poll", 1), 0);
	cr_assert_eq(add(&ss, "wake", 1), 1);
	cr_assert_eq(add(&ss, "poll", 0), 0, "found, not added");
	cr_assert_eq(add(&ss, "wake", 0), 1);
	cr_assert_eq(lib_strset_find(&ss, "wake", 4, &id), 0);
	cr_assert_eq(id, 1);
	/* bytes, not C strings: a prefix is another string */
	cr_assert_eq(lib_strset_add(&ss, "polling", 4, &id), 0);
	cr_assert_eq(id, 0);
	cr_assert_eq(add(&ss, "pol", 1), 2);
	cr_assert_eq(lib_strset_count(&ss), 3);
	lib_strset_release(&ss);
}

Test(strset, the_empty_string_is_a_string)
{
	struct lib_strset ss = {0};
	uint32_t id;

	cr_assert_eq(lib_strset_find(&ss, "", 0, &id), -ENOENT);
	cr_assert_eq(add(&ss, "x", 1), 0);
	cr_assert_eq(add(&ss, "", 1), 1);
	cr_assert_eq(add(&ss, "", 0), 1);
	cr_assert_eq(lib_strset_len(&ss, 1), 0);
	cr_assert_str_eq(lib_strset_str(&ss, 1), "");
	cr_assert_eq(lib_strset_size(&ss), 3, "\"x\\0\" then \"\\0\"");
	lib_strset_release(&ss);
}

Test(strset, embedded_nuls_are_bytes_of_the_string)
{
	struct lib_strset ss = {0};
	uint32_t a, b, c;

	cr_assert_eq(lib_strset_add(&ss, "a\0b", 3, &a), 1);
	cr_assert_eq(lib_strset_add(&ss, "a\0c", 3, &b), 1);
	cr_assert_eq(lib_strset_add(&ss, "a", 1, &c), 1);
	cr_assert_neq(a, b);
	cr_assert_neq(a, c);
	cr_assert_eq(lib_strset_len(&ss, a), 3);
	cr_assert_eq(memcmp(lib_strset_str(&ss, b), "a\0c", 4), 0);
	lib_strset_release(&ss);
}

Test(strset, a_long_string_is_kept_whole)
{
	struct lib_strset ss = {0};
	size_t n = 1 << 20;
	char *s = malloc(n + 1);
	uint32_t id;

	cr_assert_not_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	s[n] = '\0';
	cr_assert_eq(add(&ss, "short", 1), 0);
	cr_assert_eq(add(&ss, s, 1), 1);
	s[n - 1] = '!'; /* the last byte alone tells it from the first */
	cr_assert_eq(add(&ss, s, 1), 2);
	cr_assert_eq(lib_strset_len(&ss, 2), n);
	cr_assert_str_eq(lib_strset_str(&ss, 2), s);
	s[n - 1] = (char)('a' + (n - 1) % 26);
	cr_assert_eq(lib_strset_find(&ss, s, n, &id), 0);
	cr_assert_eq(id, 1);
	cr_assert_eq(lib_strset_size(&ss), 6 + 2 * (n + 1));
	free(s);
	lib_strset_release(&ss);
}

Test(strset, many_strings_keep_their_ids_across_growth)
{
	struct lib_strset ss = {0};
	const uint32_t n = 100000;
	const char *first;
	char buf[32];
	uint32_t id;

	for (uint32_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "frame_%u", i);
		cr_assert_eq(add(&ss, buf, 1), i);
	}
	first = lib_strset_str(&ss, 0);
	cr_assert_str_eq(first, "frame_0");
	for (uint32_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "frame_%u", i);
		cr_assert_eq(add(&ss, buf, 0), i, "the same id after growing");
		cr_assert_str_eq(lib_strset_str(&ss, i), buf);
	}
	cr_assert_eq(lib_strset_count(&ss), n);
	cr_assert_eq(lib_strset_find(&ss, "frame_", 6, &id), -ENOENT);
	lib_strset_release(&ss);
}

Test(strset, the_data_holds_the_strings_in_insertion_order)
{
	static const char *const s[] = {"tokio", "", "poll", "tokio::runtime", "x"};
	struct lib_strset ss = {0};
	const char *d;
	size_t off = 0;

	for (size_t i = 0; i < 5; i++)
		add(&ss, s[i], 1);
	add(&ss, "poll", 0);
	d = lib_strset_data(&ss);
	for (uint32_t i = 0; i < 5; i++) {
		cr_assert_eq(lib_strset_str(&ss, i), d + off, "offsets are in order");
		cr_assert_str_eq(d + off, s[i]);
		off += strlen(s[i]) + 1;
	}
	cr_assert_eq(lib_strset_size(&ss), off, "every string and its NUL, nothing else");
	lib_strset_release(&ss);
}

Test(strset, clear_starts_the_ids_again)
{
	struct lib_strset ss = {0};
	uint32_t id;

	add(&ss, "a", 1);
	add(&ss, "b", 1);
	lib_strset_clear(&ss);
	cr_assert_eq(lib_strset_count(&ss), 0);
	cr_assert_eq(lib_strset_size(&ss), 0);
	cr_assert_eq(lib_strset_find(&ss, "a", 1, &id), -ENOENT);
	cr_assert_eq(add(&ss, "b", 1), 0, "ids start from 0 again");
	cr_assert_eq(add(&ss, "a", 1), 1);
	cr_assert_str_eq(lib_strset_data(&ss), "b");
	lib_strset_release(&ss);
}
