// SPDX-License-Identifier: MIT
/*
 * many_threads THREADS WORK_US SLEEP_US SECONDS - a load for the recorder,
 * for tests/e2e/load.sh and make bench: THREADS threads, each polling one
 * task of its own that spins about WORK_US of CPU time, then sleeping
 * SLEEP_US (usleep) between polls, for SECONDS. So the process context-
 * switches at about THREADS / (WORK_US + SLEEP_US) per microsecond, or as
 * fast as two cores let it. Prints "pid N" and "ready" once every thread
 * runs, and at exit "polls N" (polls completed by all threads).
 */
#include "rt.h"

#include <stdlib.h>

static unsigned int work_us, sleep_us;
static volatile int stop;
static uint64_t polls_done;
static pthread_barrier_t ready;

/* Spin for @us of this thread's CPU time. */
static __attribute__((noinline)) void load_spin(unsigned int us)
{
	uint64_t end = rt_clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)us * 1000;
	volatile uint64_t x = 0;

	while (rt_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200; i++)
			x += (uint64_t)i * 2654435761u;
}

static void *worker(void *arg)
{
	uint64_t task = (uint64_t)(uintptr_t)arg, n = 0;
	char name[16];

	snprintf(name, sizeof(name), "load-%u", (unsigned int)task);
	d9_thread_start(name);
	d9_task_spawn(task, "load");
	pthread_barrier_wait(&ready);
	while (!stop) {
		d9_poll_begin(task);
		load_spin(work_us);
		d9_poll_end(task);
		n++;
		usleep(sleep_us);
	}
	d9_task_end(task);
	d9_thread_stop();
	__atomic_fetch_add(&polls_done, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int i, n;
	double secs;
	pthread_t *t;

	if (argc != 5) {
		fprintf(stderr, "usage: many_threads THREADS WORK_US SLEEP_US SECONDS\n");
		return 2;
	}
	n = (unsigned int)atoi(argv[1]);
	work_us = (unsigned int)atoi(argv[2]);
	sleep_us = (unsigned int)atoi(argv[3]);
	secs = atof(argv[4]);
	t = calloc(n, sizeof(*t));
	if (!n || !t)
		return 2;
	d9_init();
	pthread_barrier_init(&ready, NULL, n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1))) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&ready);
	rt_ready_begin();
	rt_ready();
	usleep((useconds_t)(secs * 1e6));
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("polls %llu\n", (unsigned long long)polls_done);
	return 0;
}
