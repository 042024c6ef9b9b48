// SPDX-License-Identifier: MIT
/*
 * symbol__inline_chain() against small programs compiled here, at test
 * time, so that what is inlined where does not depend on how the tests
 * themselves were built.
 */
#include <criterion/criterion.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/inline.h"

/* Code inlined twice deep into an out-of-line function: some instruction
 * of host is inner's (in outer), some outer's alone. */
static const char c_src[] =
	"volatile unsigned long sink;\n"
	"static inline __attribute__((always_inline)) void inner(int i)\n"
	"{ sink = sink * 31 + (unsigned long)i; }\n"
	"static inline __attribute__((always_inline)) void outer(int n)\n"
	"{ for (int i = 0; i < n; i++) { int j = i * 3; inner(j); } sink ^= 7; }\n"
	"__attribute__((noinline)) void host(int n) { outer(n); sink += 3; }\n"
	"int main(int argc, char **argv) { host(argc); return 0; }\n";

/* The same in C++, in a namespace: names come out mangled (the linkage
 * name), for the caller to demangle. */
static const char cxx_src[] =
	"volatile unsigned long sink;\n"
	"namespace ns {\n"
	"inline __attribute__((always_inline)) void inner(int i)\n"
	"{ sink = sink * 31 + (unsigned long)i; }\n"
	"}\n"
	"__attribute__((noinline)) void host(int n)\n"
	"{ for (int i = 0; i < n; i++) ns::inner(i); sink += 3; }\n"
	"int main(int argc, char **argv) { host(argc); return 0; }\n";

/* rustc's DWARF: crates are units of namespaces, some of whose DIEs
 * libdw's dwarf_getscopes() cannot read. */
static const char rust_src[] =
	"use std::hint::black_box;\n"
	"#[inline(always)]\n"
	"fn inner(x: u64) -> u64 { x.wrapping_mul(31).wrapping_add(7) }\n"
	"#[inline(always)]\n"
	"fn outer(n: u64) -> u64 { let mut s = 0; for i in 0..n { s = inner(s ^ i); } s }\n"
	"#[no_mangle]\n"
	"#[inline(never)]\n"
	"pub fn host(n: u64) -> u64 { outer(n) }\n"
	"fn main() { println!(\"{}\", host(black_box(100))); }\n";

/* Inlined across files by LTO: the abstract origin is in another unit. */
static const char lto_a_src[] =
	"void other(int n);\n"
	"extern volatile unsigned long sink;\n"
	"__attribute__((noinline)) void host(int n) { other(n); sink += 3; }\n"
	"int main(int argc, char **argv) { host(argc); return 0; }\n";
static const char lto_b_src[] =
	"volatile unsigned long sink;\n"
	"void other(int n)\n"
	"{ for (int i = 0; i < n; i++) sink = sink * 31 + (unsigned long)i; }\n";

static char dir[] = "/tmp/d9-inline-XXXXXX";
static Dwfl *dwfl;
static struct inline_index *idx;

static void setup(void)
{
	/* no debuginfod lookups from a unit test */
	unsetenv("DEBUGINFOD_URLS");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];

	inline_index__free(idx);
	if (dwfl)
		dwfl_end(dwfl);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		cr_log_warn("cannot remove %s", dir);
}

TestSuite(inline, .init = setup, .fini = teardown);

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fputs(text, f) < 0, 0);
	cr_assert_eq(fclose(f), 0);
}

/* Build @dir/prog from @srcs with @cc and @flags (in @dir, so split DWARF
 * files land there) and open it as libdwfl's one module at its link-time
 * addresses; skips the test without a working compiler. */
static Dwfl_Module *build(const char *cc, const char *flags, const char *srcs)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	char cmd[512], path[128];
	Dwfl_Module *mod;

	snprintf(cmd, sizeof(cmd), "cd %s && %s %s -o prog %s 2>/dev/null", dir, cc,
		 flags, srcs);
	if (system(cmd))
		cr_skip_test("cannot build a test program: %s", cmd);
	snprintf(path, sizeof(path), "%s/prog", dir);
	dwfl = dwfl_begin(&cb);
	cr_assert_not_null(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "prog", path, -1, 0, true);
	cr_assert_not_null(mod, "dwfl_report_elf: %s", dwfl_errmsg(-1));
	cr_assert_eq(dwfl_report_end(dwfl, NULL, NULL), 0);
	return mod;
}

/* c_src built with @flags by cc, opened as with build(). */
static Dwfl_Module *build_c(const char *flags)
{
	put("t.c", c_src);
	return build("cc", flags, "t.c");
}

/* The link-time address and size of function @name. */
static void find_fn(Dwfl_Module *mod, const char *name, GElf_Addr *addr, GElf_Xword *size)
{
	int i, n = dwfl_module_getsymtab(mod);

	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s =
			dwfl_module_getsym_info(mod, i, &sym, addr, NULL, NULL, NULL);

		if (s && !strcmp(s, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
			*size = sym.st_size;
			cr_assert_gt(*size, 0);
			return;
		}
	}
	cr_assert_fail("no function %s in the test program", name);
}

/* The names of the chain at @addr (through the module's index), joined
 * by '<', innermost first, after checking that the walk without an index
 * finds the same. */
static void chain_at(Dwfl_Module *mod, uint64_t addr, char *line, size_t len)
{
	const char *names[8], *walked[8];
	int n = symbol__inline_chain(mod, &idx, addr, names, 8), k;
	int nw = symbol__inline_chain(mod, NULL, addr, walked, 8);

	cr_assert_geq(n, 0, "0x%llx: %s", (unsigned long long)addr, strerror(-n));
	cr_assert_eq(nw, n, "0x%llx: %d names walked, %d through the index",
		     (unsigned long long)addr, nw, n);
	line[0] = '\0';
	for (k = 0; k < n; k++) {
		cr_assert_not_null(names[k]);
		cr_assert_str_eq(names[k], walked[k]);
		snprintf(line + strlen(line), len - strlen(line), "%s%s", k ? "<" : "",
			 names[k]);
	}
}

/* What the addresses of function @fn show: chains seen, one per line, each
 * once. */
static void chains_of(Dwfl_Module *mod, const char *fn, char *out, size_t len)
{
	GElf_Addr a;
	GElf_Xword size, i;

	find_fn(mod, fn, &a, &size);
	out[0] = '\0';
	for (i = 0; i < size; i++) {
		char line[256];

		chain_at(mod, a + i, line, sizeof(line) - 1);
		if (!line[0])
			continue;
		strcat(line, "\n");
		if (!strstr(out, line)) {
			cr_assert_lt(strlen(out) + strlen(line), len);
			strcat(out, line);
		}
	}
}

/* Chain @chain is among the chains @seen. */
static void expect_chain(const char *seen, const char *chain)
{
	cr_expect(strstr(seen, chain), "no %s in the chains seen: %s", chain, seen);
}

Test(inline, inlined_code_names_its_chain_innermost_first)
{
	char seen[1024];

	chains_of(build_c("-O2 -g"), "host", seen, sizeof(seen));
	expect_chain(seen, "inner<outer\n");
	/* outer's own code, the loop, is outer alone; host never is in the
	 * chain (its symbol names it) */
	cr_expect(strstr(seen, "\nouter\n") || !strncmp(seen, "outer\n", 6),
		  "chains seen: %s", seen);
	cr_expect_null(strstr(seen, "host"), "chains seen: %s", seen);
}

Test(inline, deeper_chains_keep_their_innermost)
{
	Dwfl_Module *mod;
	GElf_Addr a;
	GElf_Xword size, i;
	const char *names[2] = {NULL, NULL};
	int found = 0;

	mod = build_c("-O2 -g");
	find_fn(mod, "host", &a, &size);
	for (i = 0; i < size && !found; i++) {
		const char *all[8];

		if (symbol__inline_chain(mod, &idx, a + i, all, 8) != 2)
			continue;
		cr_assert_eq(symbol__inline_chain(mod, &idx, a + i, names, 1), 1);
		cr_expect_str_eq(names[0], "inner");
		cr_expect_null(names[1], "wrote past max");
		cr_assert_eq(symbol__inline_chain(mod, NULL, a + i, names, 1), 1);
		cr_expect_str_eq(names[0], "inner");
		cr_expect_eq(symbol__inline_chain(mod, &idx, a + i, names, 0), 0);
		found = 1;
	}
	cr_assert(found, "no address of host is inner in outer");
}

Test(inline, cxx_names_are_linkage_names_for_the_caller_to_demangle)
{
	char seen[1024];

	put("t.cc", cxx_src);
	chains_of(build("c++", "-O2 -g", "t.cc"), "_Z4hosti", seen, sizeof(seen));
	expect_chain(seen, "_ZN2ns5innerEi\n");
}

Test(inline, split_dwarf_is_read_from_its_dwo)
{
	char seen[1024];

	chains_of(build_c("-O2 -g -gsplit-dwarf"), "host", seen, sizeof(seen));
	expect_chain(seen, "inner<outer\n");
}

Test(inline, lto_names_functions_inlined_from_another_unit)
{
	char seen[1024];

	put("a.c", lto_a_src);
	put("b.c", lto_b_src);
	chains_of(build("cc", "-O2 -g -flto", "a.c b.c"), "host", seen, sizeof(seen));
	expect_chain(seen, "other\n");
}

Test(inline, rust_chains_name_rust_functions)
{
	char seen[8192];

	put("r.rs", rust_src);
	chains_of(build("rustc", "-O -g", "r.rs"), "host", seen, sizeof(seen));
	/* mangled: _ZN1r5inner17h<hash>E inside _ZN1r5outer17h<hash>E */
	expect_chain(seen, "5inner");
	expect_chain(seen, "5outer");
}

Test(inline, module_without_dwarf_has_no_chains)
{
	char seen[1024];

	chains_of(build_c("-O2 -g0"), "host", seen, sizeof(seen));
	cr_expect_str_empty(seen);
}

Test(inline, bad_arguments_are_einval)
{
	const char *names[1];
	Dwfl_Module *mod;

	cr_expect_eq(symbol__inline_chain(NULL, &idx, 0x1000, names, 1), -EINVAL);
	mod = build_c("-O2 -g");
	cr_expect_eq(symbol__inline_chain(mod, &idx, 0x1000, NULL, 1), -EINVAL);
	cr_expect_eq(symbol__inline_chain(mod, NULL, 0x1000, NULL, 0), 0);
	inline_index__free(NULL);
}
