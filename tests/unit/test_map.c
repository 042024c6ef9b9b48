// SPDX-License-Identifier: MIT
/* lib/map.h: the one u64-keyed map. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/hash.h"
#include "lib/map.h"

Test(map, a_zeroed_map_is_empty_and_usable)
{
	struct lib_map m = {0};
	size_t it = 0;
	uint64_t k, *v;
	int created = -1;

	cr_assert_null(lib_map_find(&m, 1));
	cr_assert_null(lib_map_find(&m, UINT64_MAX));
	cr_assert_eq(lib_map_del(&m, 1), 0);
	cr_assert_eq(lib_map_next(&m, &it, &k, &v), 0);
	v = lib_map_get(&m, 7, &created);
	cr_assert_not_null(v);
	cr_assert_eq(created, 1);
	cr_assert_eq(*v, 0, "a new key's value is 0");
	*v = 70;
	cr_assert_eq(*lib_map_get(&m, 7, &created), 70);
	cr_assert_eq(created, 0);
	cr_assert_eq(lib_map_count(&m), 1);
	lib_map_release(&m);
	cr_assert_eq(lib_map_count(&m), 0);
	cr_assert_null(lib_map_find(&m, 7), "released: empty again");
}

Test(map, grows_and_keeps_every_key)
{
	struct lib_map m;
	const uint64_t n = 100000;

	cr_assert_eq(lib_map_init(&m, 4), 0);
	cr_assert_eq(m.cap, 16);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(lib_map_set(&m, i * 4096, i), 0); /* aligned keys */
	cr_assert_eq(lib_map_count(&m), n);
	cr_assert_geq(m.cap, 2 * n, "at most half full");
	cr_assert_lt(m.cap, 4 * n, "doubled, not more");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *v = lib_map_find(&m, i * 4096);

		cr_assert_not_null(v);
		cr_assert_eq(*v, i);
	}
	cr_assert_null(lib_map_find(&m, 4095));
	lib_map_release(&m);
}

Test(map, init_sizes_ahead_so_that_nothing_moves)
{
	struct lib_map m;
	uint64_t *first;

	cr_assert_eq(lib_map_init(&m, 1000), 0);
	cr_assert_eq(m.cap, 2048);
	first = lib_map_get(&m, 0, NULL);
	for (uint64_t i = 1; i < 1000; i++)
		cr_assert_not_null(lib_map_get(&m, i, NULL));
	cr_assert_eq(m.cap, 2048);
	cr_assert_eq(lib_map_find(&m, 0), first, "no growth: the slot stayed");
	lib_map_release(&m);
}

/* Keys whose hashes share their low bits: one run of linear probing. */
static size_t colliding(uint64_t *keys, size_t want, size_t mask)
{
	size_t n = 0;

	for (uint64_t k = 1; n < want; k++)
		if ((lib_hash64(k) & mask) == 3)
			keys[n++] = k;
	return n;
}

Test(map, collisions_and_deletion_keep_runs_whole)
{
	struct lib_map m;
	uint64_t keys[6];
	size_t n = colliding(keys, 6, 15);

	cr_assert_eq(lib_map_init(&m, 6), 0);
	cr_assert_eq(m.cap, 16, "the keys collide in this table");
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lib_map_set(&m, keys[i], 100 + i), 0);
	cr_assert_eq(m.cap, 16);
	/* delete from the middle, the start, the end of the run */
	cr_assert_eq(lib_map_del(&m, keys[2]), 1);
	cr_assert_eq(lib_map_del(&m, keys[2]), 0, "already gone");
	cr_assert_eq(lib_map_del(&m, keys[0]), 1);
	cr_assert_eq(lib_map_del(&m, keys[5]), 1);
	cr_assert_eq(lib_map_count(&m), 3);
	for (size_t i = 0; i < n; i++) {
		uint64_t *v = lib_map_find(&m, keys[i]);

		if (i == 0 || i == 2 || i == 5) {
			cr_assert_null(v);
		} else {
			cr_assert_not_null(v, "key %zu found past the holes", i);
			cr_assert_eq(*v, 100 + i);
		}
	}
	lib_map_release(&m);
}

Test(map, deletion_across_the_table_end)
{
	struct lib_map m = {0};
	uint64_t keys[4];
	size_t n = 0;

	/* home in the last slot of 16: the run wraps to slot 0 and on */
	for (uint64_t k = 1; n < 4; k++)
		if ((lib_hash64(k) & 15) == 15)
			keys[n++] = k;
	cr_assert_eq(lib_map_init(&m, 4), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lib_map_set(&m, keys[i], i), 0);
	cr_assert_eq(lib_map_del(&m, keys[0]), 1);
	for (size_t i = 1; i < n; i++)
		cr_assert_eq(*lib_map_find(&m, keys[i]), i);
	cr_assert_eq(lib_map_del(&m, keys[1]), 1);
	cr_assert_eq(*lib_map_find(&m, keys[3]), 3);
	lib_map_release(&m);
}

Test(map, many_keys_come_and_go_in_a_table_that_stays_small)
{
	struct lib_map m = {0};

	for (uint64_t i = 1; i <= 200000; i++) {
		cr_assert_eq(lib_map_set(&m, i, i), 0);
		if (i > 50)
			cr_assert_eq(lib_map_del(&m, i - 50), 1);
	}
	cr_assert_eq(lib_map_count(&m), 50);
	cr_assert_leq(m.cap, 128);
	for (uint64_t i = 200000 - 49; i <= 200000; i++)
		cr_assert_eq(*lib_map_find(&m, i), i);
	lib_map_release(&m);
}

Test(map, the_free_slot_key_is_a_key_like_any_other)
{
	struct lib_map m = {0};
	int created;
	uint64_t *v;

	cr_assert_null(lib_map_find(&m, LIB_MAP_FREE));
	v = lib_map_get(&m, LIB_MAP_FREE, &created);
	cr_assert_not_null(v);
	cr_assert_eq(created, 1);
	*v = 5;
	cr_assert_eq(lib_map_set(&m, 0, 9), 0);
	cr_assert_eq(lib_map_count(&m), 2);
	cr_assert_eq(*lib_map_find(&m, LIB_MAP_FREE), 5);
	cr_assert_eq(*lib_map_find(&m, 0), 9);
	lib_map_get(&m, LIB_MAP_FREE, &created);
	cr_assert_eq(created, 0);
	cr_assert_eq(lib_map_del(&m, LIB_MAP_FREE), 1);
	cr_assert_null(lib_map_find(&m, LIB_MAP_FREE));
	cr_assert_eq(lib_map_count(&m), 1);
	lib_map_release(&m);
}

Test(map, a_walk_gives_every_key_once_and_may_change_values)
{
	struct lib_map m = {0};
	const uint64_t n = 1000;
	unsigned char *seen = calloc(n, 1);
	size_t it = 0, walked = 0;
	uint64_t k, *v;
	int free_key = 0;

	cr_assert_not_null(seen);
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(lib_map_set(&m, i, i * 3), 0);
	cr_assert_eq(lib_map_set(&m, LIB_MAP_FREE, 42), 0);
	while (lib_map_next(&m, &it, &k, &v)) {
		walked++;
		if (k == LIB_MAP_FREE) {
			cr_assert_eq(*v, 42);
			free_key++;
			continue;
		}
		cr_assert_lt(k, n);
		cr_assert_eq(seen[k], 0, "key %llu twice", (unsigned long long)k);
		seen[k] = 1;
		cr_assert_eq(*v, k * 3);
		*v = k + 1;
	}
	cr_assert_eq(walked, n + 1);
	cr_assert_eq(free_key, 1, "the free slot's key comes once, last");
	cr_assert_eq(lib_map_next(&m, &it, &k, &v), 0, "over stays over");
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(*lib_map_find(&m, i), i + 1);
	free(seen);
	lib_map_release(&m);
}

Test(map, the_walk_order_follows_the_insertions)
{
	struct lib_map a = {0}, b;
	size_t ia = 0, ib = 0;
	uint64_t ka, kb, *va, *vb;

	cr_assert_eq(lib_map_init(&b, 0), 0);
	for (uint64_t i = 0; i < 500; i++) {
		cr_assert_eq(lib_map_set(&a, lib_hash64(i), i), 0);
		cr_assert_eq(lib_map_set(&b, lib_hash64(i), i), 0);
	}
	while (lib_map_next(&a, &ia, &ka, &va)) {
		cr_assert(lib_map_next(&b, &ib, &kb, &vb));
		cr_assert_eq(ka, kb);
	}
	cr_assert_not(lib_map_next(&b, &ib, &kb, &vb));
	lib_map_release(&a);
	lib_map_release(&b);
}

Test(map, a_size_it_cannot_have_fails_and_leaves_it_empty)
{
	struct lib_map m;

	cr_assert_eq(lib_map_init(&m, SIZE_MAX / 2), -ENOMEM);
	cr_assert_eq(lib_map_count(&m), 0);
	cr_assert_null(lib_map_find(&m, 1));
	cr_assert_eq(lib_map_init(&m, SIZE_MAX / 64), -ENOMEM, "more than memory");
	cr_assert_eq(lib_map_set(&m, 1, 2), 0, "still usable");
	cr_assert_eq(*lib_map_find(&m, 1), 2);
	lib_map_release(&m);
}
