// SPDX-License-Identifier: MIT
/*
 * A plain CPU burner, no shim (tests/e2e/latency.sh): sets its comm to
 * "cputhief" and spins. The test starts it with `taskset -c 0` next to the
 * pinned worker, whose polls then wait on CPU 0's run queue behind it.
 *
 *   thief [SECONDS]   prints "pid N" and "ready", spins SECONDS (default:
 *                     forever), exits 0
 */
#include "../rt.h"

#include <stdlib.h>
#include <sys/prctl.h>

__attribute__((noinline)) void thief_spin(void)
{
	RT_SPIN_ITERS(100000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;

	if (prctl(PR_SET_NAME, "cputhief", 0, 0, 0))
		perror("thief: prctl(PR_SET_NAME)");
	rt_ready_begin();
	rt_ready();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		thief_spin();
		if (secs > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >=
			    secs)
				break;
		}
	}
	return 0;
}
