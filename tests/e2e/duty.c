// SPDX-License-Identifier: MIT
/*
 * A workload of known per-thread CPU for lean.sh's tick sampler test:
 * one thread per argument, each busy for that percent of its time, in
 * bursts of random length (0.5 to 1.5 ms of CPU, then as long again in
 * proportion asleep), so that no thread runs in step with the kernel's
 * tick; its CPU clock (a system call) read every ~0.1 ms of the spin, so
 * that it is almost all in user mode. No shim: the sampler is checked on
 * its own, against the kernel's count of each thread's CPU
 * (/proc/PID/task/TID/schedstat).
 *
 *   duty PCT...   prints "pid N" and "ready", runs until SIGTERM
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void *run(void *arg)
{
	unsigned int pct = (unsigned int)(uintptr_t)arg, seed = pct * 2654435761u;
	volatile uint64_t sink = 0;

	for (;;) {
		uint64_t burst = 500000 + (uint64_t)(rand_r(&seed) % 1000000);
		uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + burst;
		uint64_t rest = burst * (100 - pct) / pct;

		while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
			for (int i = 0; i < 100000; i++)
				sink += (uint64_t)i * sink + 1;
		if (rest) {
			struct timespec ts = {(time_t)(rest / 1000000000ULL),
					      (long)(rest % 1000000000ULL)};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || argc > 1 + MAX_THREADS) {
		fprintf(stderr, "usage: duty PCT... (1 to %d threads, 1 to 100 each)\n",
			MAX_THREADS);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int pct = atoi(argv[i]);

		if (pct < 1 || pct > 100 ||
		    pthread_create(&t, NULL, run, (void *)(uintptr_t)pct)) {
			fprintf(stderr, "duty: bad percent '%s' or no thread\n", argv[i]);
			return 2;
		}
	}
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	pause();
	return 0;
}
