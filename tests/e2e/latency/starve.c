// SPDX-License-Identifier: MIT
/*
 * Wake-to-poll delay behind another task (tests/e2e/latency.sh): one worker
 * thread "worker-0" runs a FIFO run queue holding two tasks.
 *   task 1 "hog"     always runnable: every poll spins ~20 ms of wall time
 *                    in starve_hog_spin(), reached through
 *                    starve_hog_poll() -> starve_hog_inner(), then wakes
 *                    itself (a yield) and goes to the back of the queue
 *   task 2 "victim"  its poll does a few us in starve_victim_poll(); it is
 *                    woken every 5 ms by the thread "timer" (which never
 *                    polls), unless it is already queued
 * The worker polls the victim only once the hog poll in progress has ended,
 * so every victim wake waits ~15-20 ms, behind task hog.
 *
 *   starve SECONDS   prints "pid N", "task hog 1", "task victim 2" and
 *                    "ready", runs SECONDS, prints "polls hog N victim N
 *                    wakes N" and exits 0
 */
#include "../rt.h"

#include <stdlib.h>

#define HOG		1
#define VICTIM		2
#define HOG_POLL_NS	20000000L
#define VICTIM_POLL_NS	3000L
#define TIMER_PERIOD_NS 5000000L

static volatile int done;

/* the run queue, outside the markers */
static struct rt_queue q = RT_QUEUE_INIT;
static unsigned long n_hog, n_victim, n_wakes;

/* (RT_SPIN_NS spins in the function that uses it: a macro, not an inline
 * function, so that no "[inlined]" frame sits above the caller) */
__attribute__((noinline)) void starve_hog_spin(void)
{
	RT_SPIN_NS(HOG_POLL_NS);
}

__attribute__((noinline)) void starve_hog_inner(void)
{
	starve_hog_spin();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void starve_hog_poll(void)
{
	starve_hog_inner();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void starve_victim_poll(void)
{
	RT_SPIN_NS(VICTIM_POLL_NS);
}

static void poll_task(uint64_t task)
{
	if (task == HOG)
		starve_hog_poll();
	else
		starve_victim_poll();
}

static void after_poll(uint64_t task)
{
	if (task == HOG) {
		n_hog++;
		/* pending, and runnable again at once: a yield */
		d9_task_wake(HOG);
		pthread_mutex_lock(&q.lock);
		rt_push_locked(&q, HOG);
		pthread_mutex_unlock(&q.lock);
	} else {
		n_victim++; /* pending: the timer wakes it */
	}
}

static void *worker(void *arg)
{
	(void)arg;
	rt_worker(&q, &done, poll_task, after_poll);
	return NULL;
}

/* not a worker: never polls, only wakes the victim every 5 ms */
static void *timer(void *arg)
{
	struct timespec next;

	(void)arg;
	rt_thread_start("timer");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		rt_tick(&next, TIMER_PERIOD_NS);
		pthread_mutex_lock(&q.lock);
		n_wakes += rt_wake_locked(&q, VICTIM);
		pthread_mutex_unlock(&q.lock);
	}
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t th[2]; /* the worker, the timer */

	if (d9_init())
		fprintf(stderr, "starve: d9_init failed\n");
	d9_task_spawn(HOG, "hog");
	d9_task_spawn(VICTIM, "victim");
	pthread_mutex_lock(&q.lock);
	rt_push_locked(&q, HOG); /* the hog first */
	pthread_mutex_unlock(&q.lock);
	pthread_create(&th[0], NULL, worker, NULL);
	pthread_create(&th[1], NULL, timer, NULL);
	rt_ready_begin();
	printf("task hog %d\ntask victim %d\n", HOG, VICTIM);
	rt_run(secs, &done, &q, th, 2);
	d9_task_end(HOG);
	d9_task_end(VICTIM);
	printf("polls hog %lu victim %lu wakes %lu\n", n_hog, n_victim, n_wakes);
	return 0;
}
