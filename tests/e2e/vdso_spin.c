// SPDX-License-Identifier: MIT
/*
 * vdso_spin.c - a command that spends its short life in the vDSO: spin()
 * calls clock_gettime() for MS milliseconds (argv[1], default 30), then
 * the process exits, before `d9prof record -- CMD` symbolizes anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static __attribute__((noinline)) unsigned long spin(long ns)
{
	struct timespec ts, t0;
	unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n++;
	} while ((ts.tv_sec - t0.tv_sec) * 1000000000L + (ts.tv_nsec - t0.tv_nsec) < ns);
	return n;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 30;

	printf("%lu\n", spin(ms * 1000000L));
	return 0;
}
