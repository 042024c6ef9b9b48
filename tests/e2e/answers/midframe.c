// SPDX-License-Identifier: MIT
/*
 * A function without a frame pointer in the middle of a stack
 * (tests/e2e/answers.sh): built with frame pointers, except
 * midframe_middle(), so the kernel's frame-pointer walk from the leaf
 * skips its caller, midframe_caller(), and the first return address the
 * walk and CFI share is the one into midframe_middle(). No shim.
 *
 *   midframe SECONDS   prints "pid N" and "ready", spins SECONDS, exits 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void midframe_work(void)
{
	unsigned long x = sink + 1;

	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

/* not a leaf, so it keeps its frame pointer */
__attribute__((noinline)) void midframe_leaf(void)
{
	midframe_work();
	__asm__ volatile("" ::: "memory");
}

/* no frame pointer here, and a frame of its own (so that it is no tail
 * call): the walk goes from the leaf's frame to the caller's caller */
__attribute__((noinline, optimize("omit-frame-pointer"))) void midframe_middle(int n)
{
	volatile char pad[64];

	for (int i = 0; i < n; i++) {
		pad[i % 64] = (char)i;
		midframe_leaf();
	}
	__asm__ volatile("" : : "r"(pad) : "memory");
}

__attribute__((noinline)) void midframe_caller(void)
{
	midframe_middle(16);
	__asm__ volatile("" ::: "memory");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);

	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	while (now() < end)
		midframe_caller();
	return 0;
}
