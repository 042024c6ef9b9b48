// SPDX-License-Identifier: MIT
/*
 * Kernel run-queue time inside polls (tests/e2e/latency.sh): one worker
 * thread "worker-0", pinned to CPU 0, runs task 1 "busy", which is always
 * runnable: every poll does ~1 ms of CPU work in pinned_work() (a fixed
 * amount of work, calibrated at start, so a poll that is preempted lasts
 * longer, by the time it waited for the CPU), then wakes itself and is
 * polled again; every 50 polls the worker parks for 200 us.
 * The test starts thief (comm "cputhief") on CPU 0 too: the polls are
 * preempted and wait on the run queue behind it.
 *
 *   pinned SECONDS   prints "pid N", "task busy 1" and "ready", runs
 *                    SECONDS, prints "polls N" and exits 0
 */
#include "../rt.h"

#include <sched.h>
#include <stdlib.h>

#define BUSY	1
#define WORK_NS 1000000L

static volatile int done;
static unsigned long work_iters = 100000, n_polls;

__attribute__((noinline)) void pinned_work(unsigned long iters)
{
	RT_SPIN_ITERS(iters);
}

/* iterations of pinned_work() per WORK_NS: the best of a few tries, so a
 * try that was preempted does not count */
static void calibrate(void)
{
	unsigned long best = 0;
	int k;

	for (k = 0; k < 20; k++) {
		uint64_t t0 = rt_now_ns(), dt;

		pinned_work(100000);
		dt = rt_now_ns() - t0;
		if (dt && 100000UL * WORK_NS / dt > best)
			best = 100000UL * WORK_NS / dt;
	}
	if (best)
		work_iters = best;
}

static void *worker(void *arg)
{
	struct timespec nap = {0, 200000};
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("pinned: sched_setaffinity(CPU 0)");
	rt_thread_start("worker-0");
	calibrate();
	while (!done) {
		d9_poll_begin(BUSY);
		pinned_work(work_iters);
		d9_poll_end(BUSY);
		n_polls++;
		d9_task_wake(BUSY); /* pending, runnable again: a yield */
		if (n_polls % 50 == 0) {
			d9_park();
			nanosleep(&nap, NULL);
			d9_unpark();
		}
	}
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t w;

	if (d9_init())
		fprintf(stderr, "pinned: d9_init failed\n");
	d9_task_spawn(BUSY, "busy");
	pthread_create(&w, NULL, worker, NULL);
	rt_ready_begin();
	printf("task busy %d\n", BUSY);
	rt_run(secs, &done, NULL, &w, 1);
	d9_task_end(BUSY);
	printf("polls %lu iters %lu\n", n_polls, work_iters);
	return 0;
}
