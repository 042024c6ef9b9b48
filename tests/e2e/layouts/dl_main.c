/* SPDX-License-Identifier: MIT */
/*
 * dl_main.c - a library loaded while the recorder watches.
 *   dl_main LIB [SECS]   print "ready PID", sleep until SIGUSR1, then
 *                        dlopen LIB and spin in its layout_caller
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "hot.h"
#include "run.h"

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 30, end = now() + secs;
	uint32_t (*caller)(uint32_t, unsigned);
	uint32_t h = 1;
	sigset_t set;
	void *lib;
	int sig;

	if (argc < 2) {
		fprintf(stderr, "usage: dl_main LIB [SECS]\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	say_ready();
	if (sigwait(&set, &sig))
		return 1;
	if (!(lib = dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "dl_main: %s\n", dlerror());
		return 1;
	}
	if (!(caller = (uint32_t(*)(uint32_t, unsigned))dlsym(lib, "layout_caller"))) {
		fprintf(stderr, "dl_main: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	do {
		h = caller(h, 10);
		layout_sink = h;
	} while (now() < end);
	return 0;
}
