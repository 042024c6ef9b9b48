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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <d9prof.h>

#define TICKER 1
#define FORGOTTEN 2
#define TIMER_PERIOD_NS 2000000L

static volatile unsigned long sink;
static volatile int done;

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static uint64_t q[8];
static unsigned q_head, q_len;
static int ticker_queued;
/* 0: not spawned yet; 1: queued; 2: polled once; 3: woken (and lost) */
static int forgotten_state;

static void push_locked(uint64_t task)
{
	q[(q_head + q_len++) % 8] = task;
	pthread_cond_signal(&q_cond);
}

__attribute__((noinline)) void lost_ticker_poll(void)
{
	unsigned long x = sink + 1;
	int i;

	for (i = 0; i < 5000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void lost_forgotten_poll(void)
{
	unsigned long x = sink + 1;
	int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	__asm__ volatile("" ::: "memory");
}

/* is a recorder attached? (the markers' own inline gate) */
static int recorder_attached(void)
{
#ifdef D9_GATE_OPEN_
	return D9_GATE_OPEN_() != 0;
#else
	return 1;
#endif
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-0");
	d9_thread_start("worker-0");
	for (;;) {
		uint64_t task;

		pthread_mutex_lock(&q_lock);
		if (!q_len && !done) {
			d9_park();
			while (!q_len && !done)
				pthread_cond_wait(&q_cond, &q_lock);
			d9_unpark();
		}
		if (done) {
			pthread_mutex_unlock(&q_lock);
			break;
		}
		task = q[q_head];
		q_head = (q_head + 1) % 8;
		q_len--;
		if (task == TICKER)
			ticker_queued = 0;
		pthread_mutex_unlock(&q_lock);

		d9_poll_begin(task);
		if (task == TICKER)
			lost_ticker_poll();
		else
			lost_forgotten_poll();
		d9_poll_end(task);
		if (task == FORGOTTEN) {
			pthread_mutex_lock(&q_lock);
			forgotten_state = 2; /* pending: waits for its wake */
			pthread_mutex_unlock(&q_lock);
		}
	}
	d9_thread_stop();
	return NULL;
}

static void *timer(void *arg)
{
	struct timespec next;
	uint64_t ticks = 0, attached_at = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "timer");
	d9_thread_start("timer");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		int woke_forgotten = 0;

		next.tv_nsec += TIMER_PERIOD_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		ticks++;
		if (!attached_at && recorder_attached())
			attached_at = ticks;
		pthread_mutex_lock(&q_lock);
		if (!ticker_queued) {
			ticker_queued = 1;
			d9_task_wake(TICKER);
			push_locked(TICKER);
		}
		/* 300 ms after the recorder attached: spawn it and queue it */
		if (attached_at && ticks == attached_at + 150 && !forgotten_state) {
			d9_task_spawn(FORGOTTEN, "forgotten");
			forgotten_state = 1;
			d9_task_wake(FORGOTTEN);
			push_locked(FORGOTTEN);
		}
		/* once it was polled (and returned pending): wake it, queue
		 * nothing. The lost wakeup. */
		if (forgotten_state == 2) {
			forgotten_state = 3;
			d9_task_wake(FORGOTTEN);
			woke_forgotten = 1;
		}
		pthread_mutex_unlock(&q_lock);
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
	struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
	pthread_t w, t;

	if (d9_init())
		fprintf(stderr, "lost: d9_init failed\n");
	d9_task_spawn(TICKER, "ticker");
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&t, NULL, timer, NULL);
	printf("pid %d\ntask ticker %d\ntask forgotten %d\nready\n", (int)getpid(), TICKER,
	       FORGOTTEN);
	fflush(stdout);
	nanosleep(&ts, NULL);
	done = 1;
	pthread_mutex_lock(&q_lock);
	pthread_cond_broadcast(&q_cond);
	pthread_mutex_unlock(&q_lock);
	pthread_join(t, NULL);
	pthread_join(w, NULL);
	d9_task_end(TICKER);
	/* the forgotten task never ends */
	return 0;
}
