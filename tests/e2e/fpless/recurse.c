// SPDX-License-Identifier: MIT
/*
 * recurse.c - 40 calls deep, then spin, for SECS seconds (argv[1]): the
 * e2e target of tests/e2e/fpless.sh, built with -O2 -g and explicitly
 * -fomit-frame-pointer, so that a frame-pointer walk from the spin is cut
 * at its first frame and only CFI reaches main.
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) unsigned long rec(int depth)
{
	unsigned long r;

	if (depth == 0) {
		unsigned long x = 0;

		for (int i = 0; i < 200000; i++)
			x += (unsigned long)i * 2654435761u;
		sink += x;
		return x;
	}
	r = rec(depth - 1);
	sink += r; /* work after the call: no tail call */
	return r + 1;
}

__attribute__((noinline)) unsigned long top_caller(void)
{
	unsigned long r = rec(40);

	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		top_caller();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 <
		 secs);
	return 0;
}
