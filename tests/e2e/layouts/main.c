/* SPDX-License-Identifier: MIT */
/*
 * main.c - spin in layout_caller -> layout_leaf until killed.
 *   main [SECS]   print "ready PID", then spin for SECS (default 30) seconds
 * Built with -DLAYOUT_SHIM it links the d9prof shim and runs each call of
 * layout_caller as a poll of task 1 (the ctimer sampler needs markers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"
#ifdef LAYOUT_SHIM
#include <d9prof.h>
#else
#define d9_poll_begin(t) ((void)0)
#define d9_poll_end(t)	 ((void)0)
#endif

volatile uint32_t layout_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30, end = now() + secs;
	uint32_t h = 1;

#ifdef LAYOUT_SHIM
	d9_thread_start("layout");
	d9_task_spawn(1, "hot");
#endif
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	do {
		d9_poll_begin(1);
		h = layout_caller(h, 10); /* ~1 ms */
		d9_poll_end(1);
		layout_sink = h;
	} while (now() < end);
	return 0;
}
