/* SPDX-License-Identifier: MIT */
/*
 * main.c - spin in layout_caller -> layout_leaf until killed.
 *   main [SECS]   print "ready PID", then spin for SECS (default 30) seconds
 * Built with -DLAYOUT_SHIM it links the d9prof shim and runs each call of
 * layout_caller as a poll of task 1 (the ctimer sampler needs markers).
 */
#include <stdlib.h>

#include "hot.h"
#include "run.h"
#ifdef LAYOUT_SHIM
#include <d9prof.h>
#else
#define d9_poll_begin(t) ((void)0)
#define d9_poll_end(t)	 ((void)0)
#endif

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30, end = now() + secs;
	uint32_t h = 1;

#ifdef LAYOUT_SHIM
	d9_thread_start("layout");
	d9_task_spawn(1, "hot");
#endif
	say_ready();
	do {
		d9_poll_begin(1);
		h = layout_caller(h, 10); /* ~1 ms */
		d9_poll_end(1);
		layout_sink = h;
	} while (now() < end);
	return 0;
}
