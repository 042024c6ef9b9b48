// SPDX-License-Identifier: MIT
/*
 * A lost wakeup (tests/e2e/latency.sh): one worker thread "worker-0" runs a
 * FIFO run queue and parks when it is empty.
 *   task 1 "ticker"     woken every 2 ms by the thread "timer" (never polls)
 *                       and polled at once: a few us in lost_ticker_poll()
 *   task 2 "forgotten"  spawned once a recorder is attached (the markers
 *                       record nothing before), polled once
 *                       (lost_forgotten_poll(), returns pending), then woken
 *                       once by the timer, which "forgets" to queue it: it is
 *                       never polled again and never ends
 *
 *   lost SECONDS   prints "pid N", "task ticker 1", "task forgotten 2" and
 *                  "ready"; once the forgotten task has been woken,
 *                  "forgotten woken"; runs SECONDS, exits 0
 */
#include "../rt.h"

#include <stdlib.h>

#define TICKER		1
#define FORGOTTEN	2
#define TIMER_PERIOD_NS 2000000L

static volatile int done;

static struct rt_queue q = RT_QUEUE_INIT;
/* 0: not spawned yet; 1: queued; 2: polled once; 3: woken (and lost) */
static int forgotten_state;

__attribute__((noinline)) void lost_ticker_poll(void)
{
	RT_SPIN_ITERS(5000);
}

__attribute__((noinline)) void lost_forgotten_poll(void)
{
	RT_SPIN_ITERS(20000);
}

static void poll_task(uint64_t task)
{
	if (task == TICKER)
		lost_ticker_poll();
	else
		lost_forgotten_poll();
}

static void after_poll(uint64_t task)
{
	if (task == FORGOTTEN) {
		pthread_mutex_lock(&q.lock);
		forgotten_state = 2; /* pending: waits for its wake */
		pthread_mutex_unlock(&q.lock);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	rt_worker(&q, &done, poll_task, after_poll);
	return NULL;
}

static void *timer(void *arg)
{
	struct timespec next;
	uint64_t ticks = 0, attached_at = 0;

	(void)arg;
	rt_thread_start("timer");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		int woke_forgotten = 0;

		rt_tick(&next, TIMER_PERIOD_NS);
		ticks++;
		if (!attached_at && rt_attached())
			attached_at = ticks;
		pthread_mutex_lock(&q.lock);
		rt_wake_locked(&q, TICKER);
		/* 300 ms after the recorder attached: spawn it and queue it */
		if (attached_at && ticks == attached_at + 150 && !forgotten_state) {
			d9_task_spawn(FORGOTTEN, "forgotten");
			forgotten_state = 1;
			d9_task_wake(FORGOTTEN);
			rt_push_locked(&q, FORGOTTEN);
		}
		/* once it was polled (and returned pending): wake it, queue
		 * nothing. The lost wakeup. */
		if (forgotten_state == 2) {
			forgotten_state = 3;
			d9_task_wake(FORGOTTEN);
			woke_forgotten = 1;
		}
		pthread_mutex_unlock(&q.lock);
		if (woke_forgotten) {
			printf("forgotten woken\n");
			fflush(stdout);
		}
	}
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t th[2]; /* the worker, the timer */

	if (d9_init())
		fprintf(stderr, "lost: d9_init failed\n");
	d9_task_spawn(TICKER, "ticker");
	pthread_create(&th[0], NULL, worker, NULL);
	pthread_create(&th[1], NULL, timer, NULL);
	rt_ready_begin();
	printf("task ticker %d\ntask forgotten %d\n", TICKER, FORGOTTEN);
	rt_run(secs, &done, &q, th, 2);
	d9_task_end(TICKER);
	/* the forgotten task never ends */
	return 0;
}
