/* SPDX-License-Identifier: MIT */
/*
 * rt.h: the mini runtime the e2e scenario programs share (tests/e2e/, its
 * latency/, answers/), so that each program holds only its scenario: its
 * tasks, its poll functions, its timing and its output lines.
 *
 *   RT_SPIN_ITERS(n)   n rounds of an LCG on rt_sink, in the function
 *                      that uses it (a macro: no "[inlined]" frame above
 *                      the function the tests name)
 *   RT_SPIN_NS(ns)     the same until ns of wall time have passed
 *   rt_clock_ns(clock) that clock (clock_gettime()) in ns
 *   rt_now_ns()        CLOCK_MONOTONIC in ns
 *   rt_sleep(secs)     nanosleep() of a double
 *   rt_attached()      is a recorder attached? (the markers' own inline
 *                      gate; 1 where the shim has none)
 *   rt_thread_start(name)
 *                      a thread of the runtime: its name, for the
 *                      system (pthread_setname_np()) and the shim
 *   rt_ready_begin(), rt_ready()
 *                      the "pid N" line, then (after the lines a program
 *                      prints between them, such as "task NAME ID") the
 *                      "ready" line, flushed: what the scripts wait for
 *   rt_run(secs, done, q, th, n)
 *                      rt_ready(), secs of the scenario, then its end:
 *                      *done set, q closed (if not NULL), the n threads
 *                      th joined, the last started first
 *   struct rt_queue    a run queue: a FIFO ring of task ids under a mutex;
 *                      rt_push_locked() queues a task and signals the
 *                      worker, rt_pop_locked() takes the next one, parked
 *                      (d9_park()/d9_unpark() around the wait) while the
 *                      queue is empty, or 0 once *done is set;
 *                      rt_pop() the same, taking the lock itself;
 *                      rt_queued_locked() says if a task is queued;
 *                      rt_queue_close() wakes the worker to see *done
 *   rt_wake_locked(q, task)
 *                      with q->lock held: the task woken and queued,
 *                      unless it is queued already (1 if it was woken)
 *   rt_worker(q, done, poll, polled)
 *                      the body of the thread "worker-0": each task it
 *                      pops is polled, poll(task) between d9_poll_begin()
 *                      and d9_poll_end(), then polled(task) (pending:
 *                      what becomes of it), until the queue is closed
 *   rt_tick(next, ns)  sleep until *next + ns (CLOCK_MONOTONIC, absolute:
 *                      a timer thread's period without drift)
 *
 * Everything is static inline: a program that uses one piece carries only
 * that one, and one without the shim (thief) refers to nothing of it.
 */
#ifndef D9_E2E_RT_H
#define D9_E2E_RT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <d9prof.h>

static volatile unsigned long rt_sink;

#define RT_LCG(x) ((x)*6364136223846793005UL + 1442695040888963407UL)

#define RT_SPIN_ITERS(n)                                                                 \
	do {                                                                             \
		unsigned long x_ = rt_sink + 1, i_;                                      \
		for (i_ = 0; i_ < (unsigned long)(n); i_++)                              \
			x_ = RT_LCG(x_);                                                 \
		rt_sink = x_;                                                            \
		__asm__ volatile("" ::: "memory");                                       \
	} while (0)

#define RT_SPIN_NS(ns)                                                                   \
	do {                                                                             \
		struct timespec t0_, t_;                                                 \
		unsigned long x_ = rt_sink + 1;                                          \
		int i_;                                                                  \
		clock_gettime(CLOCK_MONOTONIC, &t0_);                                    \
		do {                                                                     \
			for (i_ = 0; i_ < 2000; i_++)                                    \
				x_ = RT_LCG(x_);                                         \
			rt_sink = x_;                                                    \
			clock_gettime(CLOCK_MONOTONIC, &t_);                             \
		} while ((t_.tv_sec - t0_.tv_sec) * 1000000000L +                        \
				 (t_.tv_nsec - t0_.tv_nsec) <                            \
			 (ns));                                                          \
		__asm__ volatile("" ::: "memory");                                       \
	} while (0)

static inline uint64_t rt_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rt_now_ns(void)
{
	return rt_clock_ns(CLOCK_MONOTONIC);
}

static inline void rt_sleep(double secs)
{
	struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};

	nanosleep(&ts, NULL);
}

static inline int rt_attached(void)
{
#ifdef D9_GATE_OPEN_
	return D9_GATE_OPEN_() != 0;
#else
	return 1;
#endif
}

static inline void rt_thread_start(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	d9_thread_start(name);
}

static inline void rt_ready_begin(void)
{
	printf("pid %d\n", (int)getpid());
}

static inline void rt_ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

#define RT_QUEUE_LEN 8
struct rt_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t task[RT_QUEUE_LEN];
	unsigned head, len;
};
#define RT_QUEUE_INIT                                                                    \
	{                                                                                \
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0           \
	}

static inline void rt_push_locked(struct rt_queue *q, uint64_t task)
{
	q->task[(q->head + q->len++) % RT_QUEUE_LEN] = task;
	pthread_cond_signal(&q->cond);
}

/* with q->lock held, which it still is on return */
static inline uint64_t rt_pop_locked(struct rt_queue *q, volatile int *done)
{
	uint64_t task;

	if (!q->len && !*done) {
		d9_park();
		while (!q->len && !*done)
			pthread_cond_wait(&q->cond, &q->lock);
		d9_unpark();
	}
	if (*done)
		return 0;
	task = q->task[q->head];
	q->head = (q->head + 1) % RT_QUEUE_LEN;
	q->len--;
	return task;
}

static inline uint64_t rt_pop(struct rt_queue *q, volatile int *done)
{
	uint64_t task;

	pthread_mutex_lock(&q->lock);
	task = rt_pop_locked(q, done);
	pthread_mutex_unlock(&q->lock);
	return task;
}

/* with q->lock held */
static inline int rt_queued_locked(const struct rt_queue *q, uint64_t task)
{
	for (unsigned i = 0; i < q->len; i++)
		if (q->task[(q->head + i) % RT_QUEUE_LEN] == task)
			return 1;
	return 0;
}

/* with q->lock held */
static inline int rt_wake_locked(struct rt_queue *q, uint64_t task)
{
	if (rt_queued_locked(q, task))
		return 0;
	d9_task_wake(task);
	rt_push_locked(q, task);
	return 1;
}

static inline void rt_worker(struct rt_queue *q, volatile int *done,
			     void (*poll)(uint64_t task), void (*polled)(uint64_t task))
{
	uint64_t task;

	rt_thread_start("worker-0");
	while ((task = rt_pop(q, done))) {
		d9_poll_begin(task);
		poll(task);
		d9_poll_end(task);
		polled(task);
	}
	d9_thread_stop();
}

/* wake every waiter, once *done is set */
static inline void rt_queue_close(struct rt_queue *q)
{
	pthread_mutex_lock(&q->lock);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static inline void rt_run(double secs, volatile int *done, struct rt_queue *q,
			  const pthread_t *th, int n)
{
	rt_ready();
	rt_sleep(secs);
	*done = 1;
	if (q)
		rt_queue_close(q);
	while (n--)
		pthread_join(th[n], NULL);
}

static inline void rt_tick(struct timespec *next, long ns)
{
	next->tv_nsec += ns;
	if (next->tv_nsec >= 1000000000L) {
		next->tv_nsec -= 1000000000L;
		next->tv_sec++;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

#endif
