// SPDX-License-Identifier: MIT
/*
 * test_framepointer.c - a module's frame pointers judged from its CFI
 * (symbol/framepointer.c), and --call-graph's choice made of it
 * (record/callgraph.c), on objects compiled here with and without
 * -fno-omit-frame-pointer.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/record.h"
#include "symbol/framepointer.h"

TestSuite(framepointer);

/* A few functions of some size that call each other: what -O2 keeps out
 * of line and gives an FDE each. */
static const char src[] =
	"volatile unsigned long sink;\n"
	"__attribute__((noinline)) unsigned long leafy(unsigned long x)\n"
	"{ for (int i = 0; i < 100; i++) sink += x * i; return sink; }\n"
	"__attribute__((noinline)) unsigned long mid(int d)\n"
	"{ unsigned long r = d ? mid(d - 1) : leafy(3); sink += r; return r + 1; }\n"
	"__attribute__((noinline)) unsigned long top(int n)\n"
	"{ unsigned long a = 0; for (int i = 0; i < n; i++) a += mid(i); return a; }\n"
	"__attribute__((noinline)) unsigned long other(int n)\n"
	"{ char buf[64]; for (int i = 0; i < 64; i++) buf[i] = (char)(n + i);\n"
	"  return top(buf[n & 63]) + leafy(buf[3]); }\n"
	"int main(int argc, char **argv) { (void)argv; return (int)other(argc); }\n";

static char dir[] = "/tmp/d9fp.XXXXXX";

static void build(const char *name, const char *flags)
{
	char cmd[PATH_MAX * 2];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/fp.c", dir);
	f = fopen(cmd, "w");
	cr_assert(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O2 -g %s -o %s/%s %s/fp.c", flags, dir, name,
		 dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void setup(void)
{
	cr_assert(mkdtemp(dir));
	build("with", "-fno-omit-frame-pointer");
	build("without", "-fomit-frame-pointer");
	build("libwith.so", "-shared -fPIC -fno-omit-frame-pointer");
	build("libwithout.so", "-shared -fPIC -fomit-frame-pointer");
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		cr_log_warn("could not remove %s", dir);
}

static int judge(const char *name, unsigned int *with, unsigned int *of)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return symbol_frame_pointers(path, with, of);
}

#if defined(__x86_64__) || defined(__aarch64__)
Test(framepointer, a_module_built_with_frame_pointers_keeps_them, .init = setup,
     .fini = teardown)
{
	unsigned int with, of;

	cr_assert_eq(judge("with", &with, &of), 1);
	cr_expect_geq(of, 3,
		      "other, top, mid (leafy sets up no frame, main is short): %u", of);
	cr_expect_geq(with * 10, of * 8, "%u of %u", with, of);
	cr_assert_eq(judge("libwith.so", &with, &of), 1);
}

Test(framepointer, a_module_built_without_them_is_told_apart, .init = setup,
     .fini = teardown)
{
	unsigned int with, of;

	cr_assert_eq(judge("without", &with, &of), 0);
	cr_expect_geq(of, 3);
	cr_expect_leq(with * 10, of * 2, "%u of %u", with, of);
	cr_assert_eq(judge("libwithout.so", &with, &of), 0);
}

Test(framepointer, auto_call_graph_takes_dwarf_for_a_program_without_them, .init = setup,
     .fini = teardown)
{
	struct record_callgraph c;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/without", dir);
	cr_assert_eq(record_callgraph_choose(getpid(), path, &c), 0);
	cr_expect_eq(c.mode, RECORD_CALLGRAPH_DWARF);
	cr_expect_eq(c.bytes, RECORD_DWARF_STACK);
	cr_expect_eq(c.nwithout, 1);
	cr_expect_str_eq(c.without, "without");
	snprintf(path, sizeof(path), "%s/with", dir);
	cr_assert_eq(record_callgraph_choose(getpid(), path, &c), 0);
	cr_expect_eq(c.mode, RECORD_CALLGRAPH_FP);
	cr_expect_eq(c.bytes, RECORD_LEAF_STACK);
	cr_expect_str_empty(c.without);
}
#endif

Test(framepointer, what_is_not_elf_is_unknown)
{
	unsigned int with = 7, of = 7;

	cr_expect_eq(symbol_frame_pointers("/nonexistent/x", &with, &of), -ENOENT);
	cr_expect_eq(with, 0);
	cr_expect_eq(of, 0);
	cr_expect_eq(symbol_frame_pointers("/proc/self/status", NULL, NULL), -ENOEXEC);
}

/* This test binary is built with frame pointers (the Makefile's CFLAGS);
 * its own maps hold it and libc, which is a system library. */
Test(framepointer, auto_reads_the_maps_of_a_running_process)
{
	struct record_callgraph c;

	cr_assert_eq(record_callgraph_choose(getpid(), NULL, &c), 0);
	cr_expect_geq(c.modules, 1);
	cr_expect_eq(c.mode, RECORD_CALLGRAPH_FP, "without: %s", c.without);
	cr_expect_eq(record_callgraph_choose(-1, NULL, &c), -ENOENT);
}

Test(framepointer, call_graph_modes_parse_as_perf_writes_them)
{
	enum record_callgraph_mode m;
	unsigned int b;
	static const char *const bad[] = {"",	       "lbr",	   "dwarf,",
					  "dwarf,0",   "dwarf,12", "dwarf,40000",
					  "dwarf8192", "fp,512",   "dwarf,8k"};

	cr_assert_eq(record_callgraph_parse("fp", &m, &b), 0);
	cr_expect_eq(m, RECORD_CALLGRAPH_FP);
	cr_assert_eq(record_callgraph_parse("auto", &m, &b), 0);
	cr_expect_eq(m, RECORD_CALLGRAPH_AUTO);
	cr_assert_eq(record_callgraph_parse("dwarf", &m, &b), 0);
	cr_expect_eq(m, RECORD_CALLGRAPH_DWARF);
	cr_expect_eq(b, 0, "0: the default size");
	cr_assert_eq(record_callgraph_parse("dwarf,16384", &m, &b), 0);
	cr_expect_eq(b, 16384);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = RECORD_CALLGRAPH_FP;
		b = 1;
		cr_expect_eq(record_callgraph_parse(bad[i], &m, &b), -EINVAL, "'%s'",
			     bad[i]);
		cr_expect_eq(m, RECORD_CALLGRAPH_FP);
		cr_expect_eq(b, 1);
	}
}
