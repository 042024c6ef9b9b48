// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kallsyms/kallsyms.h"
#include "tests/unit/proc_kallsyms.h"

TestSuite(kallsyms);

/* Unsorted on purpose: a module first, kernel symbols out of order, data
 * symbols and section markers in between. */
static const char synthetic[] = "ffffffffc0002000 t ext4_read\t[ext4]\n"
				"ffffffffc0002100 T ext4_write\t[ext4]\n"
				"ffffffff81000000 T _stext\n"
				"ffffffff81000000 T _text\n"
				"ffffffff81000100 t do_thing\n"
				"ffffffff81000000 T startup_64\n"
				"ffffffff81000200 D some_data\n"
				"ffffffff81000300 W weak_fn\n"
				"ffffffff81000280 R ro_data\n"
				"ffffffff81000400 T alias_local\n"
				"ffffffff81000400 t alias_global_is_not_this\n"
				"ffffffff81000500 T last_fn\n"
				"ffffffff81000600 T _etext\n"
				"ffffffff81000700 b bss_thing\n"
				"ffffffffc0100000 t xfs_fn\t[xfs]\n"
				"not a line at all\n"
				"ffffffff81000080 w weak_local\n";

/* The table of @synthetic, for the tests with SYNTHETIC as their fixture. */
static struct kallsyms *syms;

static void parse_synthetic(void)
{
	cr_assert_eq(kallsyms__parse(synthetic, strlen(synthetic), &syms), 0);
	cr_assert_not_null(syms);
}

static void free_synthetic(void)
{
	kallsyms__free(syms);
	syms = NULL;
}

#define SYNTHETIC .init = parse_synthetic, .fini = free_synthetic

static void expect(const struct kallsyms *k, uint64_t addr, const char *name,
		   uint64_t off, const char *mod)
{
	const char *m = NULL;
	uint64_t o = ~0ull;
	const char *n = kallsyms__lookup(k, addr, &o, &m);

	if (!name) {
		cr_expect_null(n, "0x%" PRIx64 " resolved to %s", addr, n);
		return;
	}
	cr_assert_not_null(n, "0x%" PRIx64 " not resolved", addr);
	cr_expect_str_eq(n, name, "0x%" PRIx64, addr);
	cr_expect_eq(o, off, "0x%" PRIx64 ": offset %" PRIu64, addr, o);
	cr_expect_str_eq(m, mod, "0x%" PRIx64, addr);
}

Test(kallsyms, keeps_only_text_symbols, SYNTHETIC)
{
	/* startup_64 do_thing weak_fn weak_local alias_local
	 * alias_global_is_not_this last_fn ext4_read ext4_write xfs_fn */
	cr_expect_eq(kallsyms__count(syms), 10);
	expect(syms, 0xffffffff81000200, "do_thing", 0x100, "[kernel]");
	expect(syms, 0xffffffff81000280, "do_thing", 0x180, "[kernel]");
}

Test(kallsyms, sorts_unsorted_input, SYNTHETIC)
{
	expect(syms, 0xffffffff81000000, "startup_64", 0, "[kernel]");
	expect(syms, 0xffffffff81000090, "weak_local", 0x10, "[kernel]");
	expect(syms, 0xffffffff81000101, "do_thing", 1, "[kernel]");
	expect(syms, 0xffffffff81000300, "weak_fn", 0, "[kernel]");
}

Test(kallsyms, section_markers_are_not_symbols, SYNTHETIC)
{
	/* _stext and _text share startup_64's address */
	expect(syms, 0xffffffff81000010, "startup_64", 0x10, "[kernel]");
}

Test(kallsyms, prefers_global_alias, SYNTHETIC)
{
	expect(syms, 0xffffffff81000404, "alias_local", 4, "[kernel]");
}

Test(kallsyms, lookup_boundaries, SYNTHETIC)
{
	/* below the first symbol, and user space */
	expect(syms, 0xffffffff80ffffff, NULL, 0, NULL);
	expect(syms, 0x400000, NULL, 0, NULL);
	/* the last kernel symbol ends at _etext */
	expect(syms, 0xffffffff810005ff, "last_fn", 0xff, "[kernel]");
	expect(syms, 0xffffffff81000600, NULL, 0, NULL);
	expect(syms, 0xffffffffbfffffff, NULL, 0, NULL);
	/* modules: a symbol ends at the next one of its module */
	expect(syms, 0xffffffffc0002000, "ext4_read", 0, "[ext4]");
	expect(syms, 0xffffffffc00020ff, "ext4_read", 0xff, "[ext4]");
	expect(syms, 0xffffffffc0002100, "ext4_write", 0, "[ext4]");
	/* the last symbol of a module is capped, not extended to the next
	 * module */
	expect(syms, 0xffffffffc0002100 + 0x1000, "ext4_write", 0x1000, "[ext4]");
	expect(syms, 0xffffffffc0002100 + 64 * 1024, NULL, 0, NULL);
	expect(syms, 0xffffffffc0100010, "xfs_fn", 0x10, "[xfs]");
	expect(syms, 0xffffffffc0100000 + 64 * 1024, NULL, 0, NULL);
	expect(syms, 0xffffffffc00fffff, NULL, 0, NULL);
	expect(syms, UINT64_MAX, NULL, 0, NULL);
}

Test(kallsyms, module_out_param_is_optional, SYNTHETIC)
{
	cr_expect_str_eq(kallsyms__lookup(syms, 0xffffffff81000101, NULL, NULL),
			 "do_thing");
}

Test(kallsyms, all_zero_addresses_is_eperm)
{
	static const char hidden[] = "0000000000000000 T _stext\n"
				     "0000000000000000 t do_thing\n"
				     "0000000000000000 t ext4_read\t[ext4]\n";
	struct kallsyms *k = (void *)1;

	cr_expect_eq(kallsyms__parse(hidden, sizeof(hidden) - 1, &k), -EPERM);
	cr_expect_null(k);
}

Test(kallsyms, garbage_is_einval)
{
	static const char junk[] = "hello\nworld\n";
	struct kallsyms *k = (void *)1;

	cr_expect_eq(kallsyms__parse(junk, sizeof(junk) - 1, &k), -EINVAL);
	cr_expect_null(k);
	cr_expect_eq(kallsyms__parse("", 0, &k), -EINVAL);
}

Test(kallsyms, last_line_without_newline)
{
	static const char t[] = "ffffffff81000000 T a\nffffffff81000010 T b";
	struct kallsyms *k = NULL;

	cr_assert_eq(kallsyms__parse(t, sizeof(t) - 1, &k), 0);
	expect(k, 0xffffffff81000011, "b", 1, "[kernel]");
	kallsyms__free(k);
}

Test(kallsyms, missing_file_is_enoent)
{
	struct kallsyms *k = NULL;

	cr_expect_eq(kallsyms__load("/nonexistent/kallsyms", &k), -ENOENT);
	cr_expect_null(k);
}

Test(kallsyms, resolves_real_kernel_symbols)
{
	static const char *const names[] = {"schedule", "do_syscall_64", "vfs_read"};
	struct kallsyms *k = NULL;
	size_t i;
	int err = kallsyms__load(NULL, &k);

	if (err == -EPERM || err == -EACCES || err == -ENOENT)
		cr_skip_test("/proc/kallsyms unusable (%s): need root or "
			     "kernel.kptr_restrict=0",
			     strerror(-err));
	cr_assert_eq(err, 0, "kallsyms__load: %s", strerror(-err));
	cr_expect_gt(kallsyms__count(k), 1000);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t addr = scan_kallsyms(names[i]);

		if (!addr)
			continue;
		expect(k, addr, names[i], 0, "[kernel]");
		expect(k, addr + 1, names[i], 1, "[kernel]");
	}
	kallsyms__free(k);
}

Test(kallsyms, find_names_the_core_kernel_only, SYNTHETIC)
{
	cr_expect_eq(kallsyms__find(syms, "do_thing"), 0xffffffff81000100);
	cr_expect_eq(kallsyms__find(syms, "alias_global_is_not_this"),
		     0xffffffff81000400);
	/* a module's, a data symbol, a marker, none */
	cr_expect_eq(kallsyms__find(syms, "ext4_read"), 0);
	cr_expect_eq(kallsyms__find(syms, "some_data"), 0);
	cr_expect_eq(kallsyms__find(syms, "_etext"), 0);
	cr_expect_eq(kallsyms__find(syms, "nothing"), 0);
	cr_expect_eq(kallsyms__find(NULL, "do_thing"), 0);
}
