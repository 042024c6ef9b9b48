// SPDX-License-Identifier: MIT
/*
 * One slow poll among quick ones (tests/e2e/flight.sh: a flight recorder's
 * trigger). One worker thread "worker-0":
 *   task 1 "quick"  polled every 2 ms: QUICK_US (default 50) us of work
 *                   (of CPU time at the start) in slowpoll_quick(), then
 *                   STEADY_US (default 0) in slowpoll_steady(), the
 *                   two in turn first (tests/e2e/diff.sh: a known change)
 *   task 2 "slow"   polled once, SLOW_AT seconds after a recorder attached,
 *                   for SLOW_MS ms spinning in slowpoll_spin() (never with
 *                   SLOW_MS 0)
 *
 *   slowpoll SECONDS SLOW_AT SLOW_MS [QUICK_US [STEADY_US]]   prints "pid
 *                   N" and "ready"; when the slow poll ends, "slow END_NS"
 *                   (CLOCK_MONOTONIC); runs SECONDS, exits 0
 */
#include "../rt.h"

#include <stdlib.h>

static void spin_until(uint64_t end)
{
	unsigned long x = rt_sink + 1;

	while (rt_now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = RT_LCG(x);
	rt_sink = x;
}

/* LCG rounds per us of this thread's CPU time, measured at the start:
 * quick and steady then do a fixed amount of work each, so that their
 * samples keep the ratio of their work on a busy machine, where a spin by
 * the clock gets whatever CPU the scheduler lends it. (A spin to a CPU
 * time read from the kernel did not: on a 2026-11 VM, perf itself gave
 * 300 us : 200 us of it 1.16, not 1.5.) */
static uint64_t rounds_per_us;

static void calibrate(void)
{
	struct timespec a, b;
	uint64_t ns, n = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		RT_SPIN_ITERS(10000);
		n += 10000;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
		     (uint64_t)a.tv_nsec;
	} while (ns < 50000000);
	rounds_per_us = n * 1000 / ns;
}

__attribute__((noinline)) void slowpoll_quick(uint64_t us)
{
	RT_SPIN_ITERS(us * rounds_per_us);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void slowpoll_steady(uint64_t us)
{
	RT_SPIN_ITERS(us * rounds_per_us);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void slowpoll_spin(uint64_t ms)
{
	spin_until(rt_now_ns() + ms * 1000000ULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10,
	       slow_at = argc > 2 ? atof(argv[2]) : 3;
	uint64_t slow_ms = argc > 3 ? strtoull(argv[3], NULL, 10) : 120;
	uint64_t quick_us = argc > 4 ? strtoull(argv[4], NULL, 10) : 50;
	uint64_t steady_us = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	uint64_t end, attached = 0, slow_time = 0, turn = 0;
	int slow_done = 0, steady_first;

	calibrate();
	d9_init();
	d9_thread_start("worker-0");
	d9_task_spawn(1, "quick");
	rt_ready_begin();
	rt_ready();
	end = rt_now_ns() + (uint64_t)(seconds * 1e9);
	while (rt_now_ns() < end) {
		if (!attached && rt_attached()) {
			attached = rt_now_ns();
			slow_time = attached + (uint64_t)(slow_at * 1e9);
		}
		/* quick and steady take turns going first: a poll's start, just
		 * after its thread's wakeup, gets fewer samples (base quick :
		 * steady measured 0.44-0.49 of 0.5 with quick always first,
		 * which tipped diff.sh's x3 over its bound of x4 now and then) */
		steady_first = steady_us && (turn++ & 1);
		d9_task_wake(1);
		d9_poll_begin(1);
		if (steady_first)
			slowpoll_steady(steady_us);
		slowpoll_quick(quick_us);
		if (steady_us && !steady_first)
			slowpoll_steady(steady_us);
		d9_poll_end(1);
		if (slow_ms && attached && !slow_done && rt_now_ns() >= slow_time) {
			d9_task_spawn(2, "slow");
			d9_task_wake(2);
			d9_poll_begin(2);
			slowpoll_spin(slow_ms);
			d9_poll_end(2);
			d9_task_end(2);
			slow_done = 1;
			printf("slow %llu\n", (unsigned long long)rt_now_ns());
			fflush(stdout);
		}
		d9_park();
		usleep(2000);
		d9_unpark();
	}
	d9_thread_stop();
	return 0;
}
