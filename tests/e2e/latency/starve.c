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

#define HOG 1
#define VICTIM 2
#define HOG_POLL_NS 20000000L
#define VICTIM_POLL_NS 3000L
#define TIMER_PERIOD_NS 5000000L

static volatile unsigned long sink;
static volatile int done;

/* the run queue: a mutex-protected ring of task ids, outside the markers */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static uint64_t q[8];
static unsigned q_head, q_len;
static int victim_queued;
static unsigned long n_hog, n_victim, n_wakes;

static void push_locked(uint64_t task)
{
	q[(q_head + q_len++) % 8] = task;
	pthread_cond_signal(&q_cond);
}

/*
 * Spin @ns of wall time, in the function that uses it: a macro, not an
 * inline function, so that no "[inlined]" frame sits above the caller.
 */
#define SPIN_NS(ns)                                                              \
	do {                                                                     \
		struct timespec t0_, t_;                                         \
		unsigned long x_ = sink + 1;                                     \
		int i_;                                                          \
		clock_gettime(CLOCK_MONOTONIC, &t0_);                            \
		do {                                                             \
			for (i_ = 0; i_ < 2000; i_++)                            \
				x_ = x_ * 6364136223846793005UL + 1442695040888963407UL; \
			sink = x_;                                               \
			clock_gettime(CLOCK_MONOTONIC, &t_);                     \
		} while ((t_.tv_sec - t0_.tv_sec) * 1000000000L +                \
				 (t_.tv_nsec - t0_.tv_nsec) < (ns));                      \
	} while (0)

__attribute__((noinline)) void starve_hog_spin(void)
{
	SPIN_NS(HOG_POLL_NS);
	__asm__ volatile("" ::: "memory");
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
	SPIN_NS(VICTIM_POLL_NS);
	__asm__ volatile("" ::: "memory");
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
		if (task == VICTIM)
			victim_queued = 0; /* a wake from now on queues it again */
		pthread_mutex_unlock(&q_lock);

		d9_poll_begin(task);
		if (task == HOG)
			starve_hog_poll();
		else
			starve_victim_poll();
		d9_poll_end(task);

		if (task == HOG) {
			n_hog++;
			/* pending, and runnable again at once: a yield */
			d9_task_wake(HOG);
			pthread_mutex_lock(&q_lock);
			push_locked(HOG);
			pthread_mutex_unlock(&q_lock);
		} else {
			n_victim++; /* pending: the timer wakes it */
		}
	}
	d9_thread_stop();
	return NULL;
}

/* not a worker: never polls, only wakes the victim every 5 ms */
static void *timer(void *arg)
{
	struct timespec next;

	(void)arg;
	pthread_setname_np(pthread_self(), "timer");
	d9_thread_start("timer");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		next.tv_nsec += TIMER_PERIOD_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		pthread_mutex_lock(&q_lock);
		if (!victim_queued) {
			victim_queued = 1;
			n_wakes++;
			d9_task_wake(VICTIM);
			push_locked(VICTIM);
		}
		pthread_mutex_unlock(&q_lock);
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
		fprintf(stderr, "starve: d9_init failed\n");
	d9_task_spawn(HOG, "hog");
	d9_task_spawn(VICTIM, "victim");
	pthread_mutex_lock(&q_lock);
	push_locked(HOG); /* the hog first */
	pthread_mutex_unlock(&q_lock);
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&t, NULL, timer, NULL);
	printf("pid %d\ntask hog %d\ntask victim %d\nready\n", (int)getpid(), HOG, VICTIM);
	fflush(stdout);
	nanosleep(&ts, NULL);
	done = 1;
	pthread_mutex_lock(&q_lock);
	pthread_cond_broadcast(&q_cond);
	pthread_mutex_unlock(&q_lock);
	pthread_join(t, NULL);
	pthread_join(w, NULL);
	d9_task_end(HOG);
	d9_task_end(VICTIM);
	printf("polls hog %lu victim %lu wakes %lu\n", n_hog, n_victim, n_wakes);
	return 0;
}
