// SPDX-License-Identifier: MIT
/*
 * hot.c - the known program of export.sh's `go tool pprof` checks: one
 * worker polls two tasks in turn, "crunch", whose polls spend their time in
 * crunch_numbers() on the line marked HOT, and "nap", whose polls sleep
 * 2 ms in take_a_nap() (off-CPU). Runs until killed. The script finds the
 * lines by their markers, never by number.
 */
#include "../rt.h"

static __attribute__((noinline)) unsigned long crunch_numbers(unsigned long n)
{
	unsigned long x = rt_sink + 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + (x >> 17) + i; /* HOT */
	return x;
}

static __attribute__((noinline)) void take_a_nap(void)
{
	rt_sleep(0.002); /* NAP */
}

int main(void)
{
	rt_ready_begin();
	d9_thread_start("hot-worker");
	d9_task_spawn(1, "crunch");
	d9_task_spawn(2, "nap");
	rt_ready();
	for (;;) {
		d9_poll_begin(1);
		rt_sink = crunch_numbers(2000000);
		d9_poll_end(1);
		d9_poll_begin(2);
		take_a_nap();
		d9_poll_end(2);
	}
}
