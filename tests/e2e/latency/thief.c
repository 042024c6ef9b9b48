// SPDX-License-Identifier: MIT
/*
 * A plain CPU burner, no shim (tests/e2e/latency.sh): sets its comm to
 * "cputhief" and spins. The test starts it with `taskset -c 0` next to the
 * pinned worker, whose polls then wait on CPU 0's run queue behind it.
 *
 *   thief [SECONDS]   prints "pid N" and "ready", spins SECONDS (default:
 *                     forever), exits 0
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void thief_spin(void)
{
	unsigned long x = sink + 1;
	int i;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;

	if (prctl(PR_SET_NAME, "cputhief", 0, 0, 0))
		perror("thief: prctl(PR_SET_NAME)");
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		thief_spin();
		if (secs > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
		}
	}
	return 0;
}
