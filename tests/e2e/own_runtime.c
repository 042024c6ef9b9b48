// SPDX-License-Identifier: MIT
/*
 * A process "of our own" for the end-to-end tests: a two-worker runtime
 * built against the *installed* shim (pkg-config d9prof), with one CPU-heavy
 * task whose polls run own_hot_function() and one light task.
 *   own_runtime SECONDS   prints "pid N" and "ready", runs, exits 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <d9prof.h>

static volatile unsigned long sink;
static volatile int done;

__attribute__((noinline)) void own_hot_function(void)
{
	unsigned long x = sink + 1;
	int i;

	for (i = 0; i < 400000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void own_light_function(void)
{
	unsigned long x = sink;
	int i;

	for (i = 0; i < 2000; i++)
		x ^= x << 13;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	uint64_t task = (uint64_t)(uintptr_t)arg;
	struct timespec ts = { 0, 200000 };

	d9_thread_start(task == 1 ? "own-hot-worker" : "own-light-worker");
	while (!done) {
		d9_task_wake(task);
		d9_poll_begin(task);
		if (task == 1)
			own_hot_function();
		else
			own_light_function();
		d9_poll_end(task);
		if (task != 1) {
			d9_park();
			nanosleep(&ts, NULL);
			d9_unpark();
		}
	}
	d9_task_end(task);
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	pthread_t th[2];
	int i;

	if (d9_init())
		fprintf(stderr, "own_runtime: d9_init failed\n");
	d9_task_spawn(1, "hot");
	d9_task_spawn(2, "light");
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	nanosleep(&ts, NULL);
	done = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
