// SPDX-License-Identifier: MIT
/* record/symcache.h: each address symbolized once per recording. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record/symcache.h"

#define UNKNOWN 0xbeef /* a module not mapped yet: no sym, no module */
#define FAILS	0xdead /* -ENOENT */

/* The symbolizer behind the cache: names made of the address, in buffers
 * it writes again at every call (the cache must copy them). */
struct fake {
	unsigned calls;
	char sym[64], module[64], file[64], inl[2][64], call_file[2][64];
	const char *inlp[2];
	struct trace_inline_src src[2];
};

static int fake_resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct fake *z = ctx;

	z->calls++;
	if (addr == FAILS)
		return -ENOENT;
	if (addr == UNKNOWN)
		return 0;
	snprintf(z->sym, sizeof(z->sym), "fn_%llx", (unsigned long long)addr);
	snprintf(z->module, sizeof(z->module), "/lib/m%llu.so",
		 (unsigned long long)(addr % 3));
	out->sym = addr % 7 == 6 ? NULL : z->sym; /* a stripped module */
	out->module = z->module;
	out->offset = addr & 0xff;
	out->kernel = addr % 5 == 0;
	if (addr % 2) {
		snprintf(z->file, sizeof(z->file), "src/f%llu.rs",
			 (unsigned long long)(addr % 4));
		out->file = z->file;
		out->line = (uint32_t)addr % 100;
		out->start_line = 1;
	}
	if (addr % 4 == 0 || addr % 4 == 1) {
		for (int k = 0; k < 2; k++) {
			snprintf(z->inl[k], sizeof(z->inl[k]), "inl%d_%llx", k,
				 (unsigned long long)(addr % 11));
			snprintf(z->call_file[k], sizeof(z->call_file[k]), "src/c%d.rs",
				 k);
			z->inlp[k] = z->inl[k];
			z->src[k] =
				(struct trace_inline_src){.call_file = z->call_file[k],
							  .call_line = 10 + k,
							  .decl_line = 20 + k};
		}
		out->inl = z->inlp;
		out->ninl = 2;
		/* addr % 4 == 1: names without their sites */
		out->inl_src = addr % 4 == 0 ? z->src : NULL;
	}
	return 0;
}

static void expect_str(const char *a, const char *b, uint64_t addr, const char *what)
{
	if (!a || !b)
		cr_expect_eq(a, b, "%llx %s", (unsigned long long)addr, what);
	else
		cr_expect_str_eq(a, b, "%llx %s", (unsigned long long)addr, what);
}

/* @a (the cache's answer) says what @b (the symbolizer's) says. */
static void expect_same(const struct trace_frame *a, const struct trace_frame *b,
			uint64_t addr)
{
	expect_str(a->sym, b->sym, addr, "sym");
	expect_str(a->module, b->module, addr, "module");
	expect_str(a->file, b->file, addr, "file");
	cr_expect_eq(a->offset, b->offset);
	cr_expect_eq(a->kernel, b->kernel);
	cr_expect_eq(a->line, b->line);
	cr_expect_eq(a->start_line, b->start_line);
	cr_assert_eq(a->ninl, b->ninl, "%llx", (unsigned long long)addr);
	cr_expect_eq(!a->inl, !b->inl);
	cr_expect_eq(!a->inl_src, !b->inl_src, "%llx", (unsigned long long)addr);
	for (uint32_t k = 0; k < a->ninl; k++) {
		expect_str(a->inl[k], b->inl[k], addr, "inl");
		if (!a->inl_src || !b->inl_src)
			continue;
		expect_str(a->inl_src[k].call_file, b->inl_src[k].call_file, addr,
			   "call_file");
		cr_expect_eq(a->inl_src[k].call_line, b->inl_src[k].call_line);
		cr_expect_eq(a->inl_src[k].decl_line, b->inl_src[k].decl_line);
	}
}

/* What the symbolizer alone says of @addr, its strings copied. */
struct answer {
	struct trace_frame f;
	char sym[64], module[64], file[64], inl[2][64], call_file[2][64];
	const char *inlp[2];
	struct trace_inline_src src[2];
};

static void direct(uint64_t addr, struct answer *a)
{
	struct fake z = {0};

	memset(a, 0, sizeof(*a));
	a->f.addr = addr;
	fake_resolve(&z, addr, &a->f);
	memcpy(a->sym, z.sym, sizeof(a->sym));
	memcpy(a->module, z.module, sizeof(a->module));
	memcpy(a->file, z.file, sizeof(a->file));
	memcpy(a->inl, z.inl, sizeof(a->inl));
	memcpy(a->call_file, z.call_file, sizeof(a->call_file));
	if (a->f.sym)
		a->f.sym = a->sym;
	if (a->f.module)
		a->f.module = a->module;
	if (a->f.file)
		a->f.file = a->file;
	if (a->f.ninl) {
		for (int k = 0; k < 2; k++) {
			a->inlp[k] = a->inl[k];
			a->src[k] = z.src[k];
			a->src[k].call_file = a->call_file[k];
		}
		a->f.inl = a->inlp;
		if (a->f.inl_src)
			a->f.inl_src = a->src;
	}
}

Test(symcache, answers_as_the_symbolizer_and_asks_it_once)
{
	struct fake z = {0};
	struct symcache *c;
	const unsigned n = 3000;

	cr_assert_eq(symcache__new(fake_resolve, &z, &c), 0);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < n; i++) {
			/* the order changes between passes: hits and misses mix */
			uint64_t addr = 0x1000 + (pass ? (i * 7919) % n : i);
			struct trace_frame f = {.addr = addr};
			struct answer a;

			cr_assert_eq(symcache__resolve(c, addr, &f), 0);
			direct(addr, &a);
			expect_same(&f, &a.f, addr);
		}
	cr_expect_eq(z.calls, n, "the second pass all from the cache");
	{
		uint64_t resolved, lookups;

		symcache__stats(c, &resolved, &lookups);
		cr_expect_eq(lookups, 2 * n);
		cr_expect_eq(resolved, z.calls, "every call to the symbolizer counted");
	}
	symcache__free(c);
}

Test(symcache, a_cached_address_is_not_asked_again)
{
	struct fake z = {0};
	struct symcache *c;
	uint64_t resolved, lookups;

	cr_assert_eq(symcache__new(fake_resolve, &z, &c), 0);
	for (int k = 0; k < 3; k++) {
		struct trace_frame f = {.addr = 0x4000};

		cr_assert_eq(symcache__resolve(c, 0x4000, &f), 0);
		cr_expect_str_eq(f.sym, "fn_4000");
		cr_expect_eq(f.ninl, 2);
		cr_expect_str_eq(f.inl[1], "inl1_5"); /* 0x4000 % 11 */
		cr_expect_str_eq(f.inl_src[1].call_file, "src/c1.rs");
	}
	cr_expect_eq(z.calls, 1);
	symcache__stats(c, &resolved, &lookups);
	cr_expect_eq(resolved, 1);
	cr_expect_eq(lookups, 3);
	symcache__free(c);
}

Test(symcache, what_is_not_known_yet_is_asked_again)
{
	struct fake z = {0};
	struct symcache *c;

	cr_assert_eq(symcache__new(fake_resolve, &z, &c), 0);
	for (int k = 0; k < 2; k++) {
		struct trace_frame f = {.addr = UNKNOWN};

		cr_assert_eq(symcache__resolve(c, UNKNOWN, &f), 0);
		cr_expect_null(f.sym);
		cr_expect_null(f.module);
		f = (struct trace_frame){.addr = FAILS};
		cr_expect_eq(symcache__resolve(c, FAILS, &f), -ENOENT);
	}
	cr_expect_eq(z.calls, 4, "neither an unknown nor a failed address is kept");
	symcache__free(c);
	symcache__free(NULL);
}
