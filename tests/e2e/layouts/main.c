/* SPDX-License-Identifier: MIT */
/*
 * main.c - spin in layout_caller -> layout_leaf until killed.
 *   main [SECS]   print "ready PID", then spin for SECS (default 30) seconds
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"

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

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	do {
		h = layout_caller(h, 10); /* ~1 ms */
		layout_sink = h;
	} while (now() < end);
	return 0;
}
