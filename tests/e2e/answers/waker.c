// SPDX-License-Identifier: MIT
/*
 * A kworker-like short waker, no shim (tests/e2e/answers.sh): sets its comm
 * to "shortwaker", then sleeps 500 us and spins about 30 us, over and over.
 * Pinned next to a busy worker, it preempts the worker at almost every
 * wakeup, yet holds the CPU only a small part of the time.
 *
 *   waker SECONDS   prints "pid N" and "ready", runs SECONDS, exits 0
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	uint64_t end = now_ns(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);
	struct timespec nap = {0, 500000};
	volatile unsigned long sink = 0;

	prctl(PR_SET_NAME, "shortwaker");
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	while (now_ns(CLOCK_MONOTONIC) < end) {
		uint64_t until;

		nanosleep(&nap, NULL);
		/* 30 us of its own CPU time, however often it is preempted */
		until = now_ns(CLOCK_THREAD_CPUTIME_ID) + 30000;
		while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
			sink++;
	}
	return 0;
}
