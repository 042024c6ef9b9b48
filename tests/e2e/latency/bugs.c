// SPDX-License-Identifier: MIT
/*
 * Programs with one bug each, for the detectors (tests/e2e/latency.sh): one
 * worker thread "worker-0" runs a FIFO run queue and parks when it is
 * empty; the thread "timer" wakes task 1 "ticker" every 2 ms (polled at
 * once, a few us). Then, by MODE, once a recorder is attached:
 *   dropwaker  task 2 "dropped" is spawned and polled once (pending); its
 *              waker is dropped: nothing wakes it again, it never ends
 *   selfwake   task 2 "spinner": each poll (a few us) finds nothing to
 *              do, wakes itself and returns pending (a busy loop; the
 *              worker naps 200 us after each, so that it takes no core
 *              from the programs beside it)
 *   spin       task 2 "stuck": one poll of 2 s without yielding, then it
 *              ends (the ticker waits behind it)
 *   leak       task 2 "acceptor", woken every 10 ms (a request), spawns a
 *              task "handler" a poll, polled once and pending, woken by
 *              the timer now and then (a keepalive) and never ended: a
 *              task leaks per request
 *
 *   bugs MODE SECONDS  prints "pid N", "task ticker 1", "task NAME 2",
 *                      "ready"; runs SECONDS, exits 0
 */
#include "../rt.h"

#include <stdlib.h>
#include <string.h>

#define TICKER		1
#define BUGGY		2
#define HANDLER0	1000 /* the leak's handlers: HANDLER0 + k */
#define HANDLERS	4096
#define TIMER_PERIOD_NS 2000000L

enum mode { DROPWAKER, SELFWAKE, SPIN, LEAK };
static const char *const modes[] = {"dropwaker", "selfwake", "spin", "leak"};
static const char *const names[] = {"dropped", "spinner", "stuck", "acceptor"};

static enum mode mode;
static volatile int done;
static struct rt_queue q = RT_QUEUE_INIT;
static int spawned;	   /* task 2, once a recorder is attached */
static unsigned nhandlers; /* the leak's, spawned so far */

__attribute__((noinline)) void bugs_ticker_poll(void)
{
	RT_SPIN_ITERS(5000);
}

__attribute__((noinline)) void bugs_dropped_poll(void)
{
	RT_SPIN_ITERS(20000);
}

__attribute__((noinline)) void bugs_spinner_poll(void)
{
	RT_SPIN_ITERS(2000);
	d9_task_wake(BUGGY); /* nothing to do: again, at once */
}

__attribute__((noinline)) void bugs_stuck_poll(void)
{
	RT_SPIN_NS(2000000000L);
}

__attribute__((noinline)) void bugs_handler_poll(void)
{
	RT_SPIN_ITERS(3000);
}

/* with q.lock held: @task queued if there is room (the queue is short)
 * and it is not queued already; 1 if it was */
static int queue(uint64_t task)
{
	if (q.len == RT_QUEUE_LEN || rt_queued_locked(&q, task))
		return 0;
	rt_push_locked(&q, task);
	return 1;
}

/* with q.lock held: @task woken, if it could be queued */
static void wake(uint64_t task)
{
	if (q.len < RT_QUEUE_LEN && !rt_queued_locked(&q, task)) {
		d9_task_wake(task);
		rt_push_locked(&q, task);
	}
}

__attribute__((noinline)) void bugs_acceptor_poll(void)
{
	uint64_t id;

	RT_SPIN_ITERS(2000);
	pthread_mutex_lock(&q.lock);
	if (nhandlers < HANDLERS) {
		id = HANDLER0 + nhandlers++;
		d9_task_spawn(id, "handler");
		wake(id);
	}
	pthread_mutex_unlock(&q.lock);
}

static void poll_task(uint64_t task)
{
	if (task == TICKER)
		bugs_ticker_poll();
	else if (task >= HANDLER0)
		bugs_handler_poll();
	else if (mode == DROPWAKER)
		bugs_dropped_poll();
	else if (mode == SELFWAKE)
		bugs_spinner_poll();
	else if (mode == SPIN)
		bugs_stuck_poll();
	else
		bugs_acceptor_poll();
}

static void after_poll(uint64_t task)
{
	if (task != BUGGY)
		return;
	if (mode == SELFWAKE)
		rt_sleep(200e-6);
	pthread_mutex_lock(&q.lock);
	if (mode == SELFWAKE)
		queue(BUGGY);
	else if (mode == SPIN)
		d9_task_end(BUGGY);
	pthread_mutex_unlock(&q.lock);
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
	unsigned keepalive = 0;

	(void)arg;
	rt_thread_start("timer");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		rt_tick(&next, TIMER_PERIOD_NS);
		ticks++;
		if (!attached_at && rt_attached())
			attached_at = ticks;
		pthread_mutex_lock(&q.lock);
		wake(TICKER);
		/* 20 ms after the recorder attached: the buggy task */
		if (attached_at && ticks == attached_at + 10 && !spawned) {
			spawned = 1;
			d9_task_spawn(BUGGY, names[mode]);
			wake(BUGGY);
		}
		if (spawned && mode == LEAK) {
			/* a request every 10 ms; two handlers kept alive a tick */
			if (ticks % 5 == 0)
				wake(BUGGY);
			for (int k = 0; k < 2 && nhandlers; k++) {
				keepalive = keepalive + 1 < nhandlers ? keepalive + 1 : 0;
				wake(HANDLER0 + keepalive);
			}
		}
		pthread_mutex_unlock(&q.lock);
	}
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 10;
	pthread_t th[2]; /* the worker, the timer */
	size_t m;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		if (argc > 1 && !strcmp(argv[1], modes[m]))
			break;
	if (m == sizeof(modes) / sizeof(modes[0])) {
		fprintf(stderr, "usage: bugs dropwaker|selfwake|spin|leak [SECONDS]\n");
		return 2;
	}
	mode = (enum mode)m;
	if (d9_init())
		fprintf(stderr, "bugs: d9_init failed\n");
	d9_task_spawn(TICKER, "ticker");
	pthread_create(&th[0], NULL, worker, NULL);
	pthread_create(&th[1], NULL, timer, NULL);
	rt_ready_begin();
	printf("task ticker %d\ntask %s %d\n", TICKER, names[mode], BUGGY);
	rt_run(secs, &done, &q, th, 2);
	d9_task_end(TICKER);
	return 0;
}
