// SPDX-License-Identifier: MIT
/*
 * A process "of our own" for the end-to-end tests: a two-worker runtime
 * built against the *installed* shim (pkg-config d9prof), with one CPU-heavy
 * task whose polls run own_hot_function() and one light task.
 *   own_runtime SECONDS   prints "pid N" and "ready", runs, exits 0
 */
#include "rt.h"

#include <stdlib.h>

static volatile int done;

__attribute__((noinline)) void own_hot_function(void)
{
	RT_SPIN_ITERS(400000);
}

__attribute__((noinline)) void own_light_function(void)
{
	unsigned long x = rt_sink;
	int i;

	for (i = 0; i < 2000; i++)
		x ^= x << 13;
	rt_sink = x;
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	uint64_t task = (uint64_t)(uintptr_t)arg;
	struct timespec ts = {0, 200000};

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
	pthread_t th[2];
	int i;

	if (d9_init())
		fprintf(stderr, "own_runtime: d9_init failed\n");
	d9_task_spawn(1, "hot");
	d9_task_spawn(2, "light");
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	rt_ready_begin();
	rt_ready();
	rt_sleep(secs);
	done = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
