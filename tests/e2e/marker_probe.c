// SPDX-License-Identifier: MIT
/*
 * marker_probe - a target for the end-to-end tests of what a recorder
 * leaves behind. Two worker threads poll task 1 (about 20 us of CPU each)
 * forever; every 0.5 s the main thread times 2M detached-or-not marker
 * pairs, spins 20 ms and prints
 *   t <seconds> attached <0|1> timers <POSIX timers of the process> pair_ns <ns>
 * Built by tests/e2e/run.sh against build/libd9prof.a (it reads the
 * segment's attached word through the shim's test hook).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_until(double end)
{
	while (now_s() < end)
		sink++;
}

static __attribute__((noinline)) void probe_work(void)
{
	spin_until(now_s() + 20e-6);
}

static void *worker(void *arg)
{
	d9_thread_start("probe-worker");
	for (;;) {
		d9_poll_begin(1);
		probe_work();
		d9_poll_end(1);
	}
	return NULL;
}

static int nr_timers(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/timers", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "ID:", 3);
	fclose(f);
	return n;
}

int main(void)
{
	struct d9_seg_hdr *h;
	pthread_t t[2];
	double t0;
	int i;

	if (d9_init())
		return 1;
	h = d9__segment();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	t0 = now_s();
	for (;;) {
		double a, b;
		int k;

		usleep(500000);
		a = now_s();
		for (k = 0; k < 2000000; k++) {
			d9_poll_begin(2);
			d9_poll_end(2);
		}
		b = now_s();
		/* CPU-time timers are checked at the scheduler tick while their
		 * thread runs: a burst of 1 ms every 0.5 s may go seconds
		 * without a tick landing in it, so its timer would stay armed
		 * (costing nothing) long after the lease. Run past a tick. */
		spin_until(b + 0.02);
		printf("t %.1f attached %u timers %d pair_ns %.2f\n", a - t0,
		       __atomic_load_n(&h->attached, __ATOMIC_RELAXED), nr_timers(),
		       (b - a) * 1e9 / 2000000);
	}
}
