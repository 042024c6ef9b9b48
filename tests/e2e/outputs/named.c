// SPDX-License-Identifier: MIT
/*
 * named NAME SECONDS [jit] [recorder=PID] - a target that names itself,
 * for tests/e2e/outputs.sh. Its comm becomes NAME (a path to climb out of
 * the output directory, a shell command, terminal escapes); it runs poll
 * markers (it links the shim) and spins. Prints "pid N" and "ready".
 *   jit           spins in an anonymous executable page, as JIT code
 *                 does (printed as "jit ADDRESS"), for a perf map
 *   recorder=PID  writes PID into its segment's recorder_pid, again and
 *                 again: 'd9prof dump' must not believe it
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <d9prof.h>

#include "libprof/d9_segment.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct d9_seg_hdr *own_segment(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long a = 0, b;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/memfd:" D9_SEG_NAME) &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2)
			break;
	if (f)
		fclose(f);
	return (struct d9_seg_hdr *)a;
}

static void *jit_spin(void *code)
{
	((void (*)(void))code)();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 5, end;
	uint32_t recorder = 0;
	int jit = 0;
	pthread_t th;
	volatile uint64_t x = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: named NAME SECONDS [jit] [recorder=PID]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "jit"))
			jit = 1;
		else if (!strncmp(argv[i], "recorder=", 9))
			recorder = (uint32_t)atoi(argv[i] + 9);
	}
	prctl(PR_SET_NAME, argv[1]);
	d9_poll_begin(1);
	d9_poll_end(1);
	printf("pid %d\n", (int)getpid());
	if (jit) {
		/* jmp . */
		uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (code == MAP_FAILED)
			return 1;
		code[0] = 0xeb;
		code[1] = 0xfe;
		printf("jit %lx\n", (unsigned long)(uintptr_t)code);
		if (pthread_create(&th, NULL, jit_spin, code))
			return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (end = now() + secs; now() < end;) {
		struct d9_seg_hdr *h = recorder ? own_segment() : NULL;

		if (h)
			__atomic_store_n(&h->recorder_pid, recorder, __ATOMIC_RELAXED);
		d9_poll_begin(1);
		for (int i = 0; i < 200000; i++)
			x += (uint64_t)i;
		d9_poll_end(1);
		usleep(1000);
	}
	return 0;
}
