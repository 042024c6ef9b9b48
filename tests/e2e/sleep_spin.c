// SPDX-License-Identifier: MIT
/*
 * A runtime of one worker for run.sh's attach test: it alternates task 1
 * "A", whose every poll sleeps 3 ms in nanosleep(), and task 2 "B", whose
 * every poll spins ~2 ms on the CPU, from before any recorder attaches, so
 * that an attach lands inside a poll.
 *
 *   sleep_spin     prints "pid N" and "ready", runs until SIGTERM, then
 *                  prints one line per poll and exits 0:
 *                  "poll TASK BEGIN_NS END_NS A0 A1 E0 E1"
 *
 * BEGIN_NS is read just before d9_poll_begin(), END_NS just after
 * d9_poll_end() (CLOCK_MONOTONIC). A0/A1 are the shim's attached word
 * (what the markers' inline gate reads) just before and just after
 * d9_poll_begin(), E0/E1 the same around d9_poll_end(): a marker saw 1,
 * hence recorded, if the word was 1 before it; it saw 0 if the word was
 * still 0 after it. Read only, as a test may.
 */
#include "rt.h"

#include <signal.h>
#include <stdlib.h>

#define SLEEP_NS  3000000L
#define SPIN_NS	  2000000L
#define MAX_POLLS 100000

struct poll_log {
	uint64_t begin, end;
	uint8_t task, a0, a1, e0, e1;
};

static struct poll_log polls[MAX_POLLS];
static size_t npolls;
static int stop;

static uint8_t attached(void)
{
	return __atomic_load_n(__atomic_load_n(&d9__gate, __ATOMIC_RELAXED),
			       __ATOMIC_ACQUIRE) != 0;
}

__attribute__((noinline)) void task_a_sleep(void)
{
	struct timespec ts = {0, SLEEP_NS};

	while (nanosleep(&ts, &ts))
		;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void task_b_spin(void)
{
	volatile unsigned long x = 1;
	uint64_t end = rt_now_ns() + SPIN_NS;

	while (rt_now_ns() < end)
		for (int i = 0; i < 100; i++)
			x = x * 6364136223846793005UL + 1;
}

static void poll_once(uint8_t task)
{
	struct poll_log *p = &polls[npolls];

	p->task = task;
	p->begin = rt_now_ns();
	p->a0 = attached();
	d9_poll_begin(task);
	p->a1 = attached();
	if (task == 1)
		task_a_sleep();
	else
		task_b_spin();
	p->e0 = attached();
	d9_poll_end(task);
	p->e1 = attached();
	p->end = rt_now_ns();
	npolls++;
}

static void *worker(void *arg)
{
	(void)arg;
	d9_thread_start("sleep-spin-worker");
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && npolls + 2 <= MAX_POLLS) {
		poll_once(1);
		poll_once(2);
	}
	d9_thread_stop();
	return NULL;
}

int main(void)
{
	pthread_t th;
	sigset_t term;
	size_t i;
	int sig;

	/* SIGTERM for main's sigwait() alone: the worker inherits the mask */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	d9_init();
	d9_task_spawn(1, "A");
	d9_task_spawn(2, "B");
	rt_ready_begin();
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	rt_ready();
	sigwait(&term, &sig);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	for (i = 0; i < npolls; i++)
		printf("poll %u %llu %llu %u %u %u %u\n", polls[i].task,
		       (unsigned long long)polls[i].begin,
		       (unsigned long long)polls[i].end, polls[i].a0, polls[i].a1,
		       polls[i].e0, polls[i].e1);
	return 0;
}
