/* SPDX-License-Identifier: MIT */
/*
 * run.h - what every layouts program's main() shares (C and C++):
 * layout_sink, where the spin's hash goes so that no compiler drops it;
 * now(), CLOCK_MONOTONIC in seconds, for the spin's deadline; say_ready(),
 * the "ready PID" line layouts.sh waits for. Included once per program,
 * by the file that holds main().
 */
#ifndef LAYOUTS_RUN_H
#define LAYOUTS_RUN_H
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

volatile uint32_t layout_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say_ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

#endif
