// SPDX-License-Identifier: MIT
/*
 * bench_spin: a CPU-bound, poll-shaped workload with a knob for the poll
 * size, for scripts/bench.sh.
 *
 *   bench_spin [-t THREADS] [-d SECONDS] [-u US_PER_POLL] [-n TASKS]
 *
 * Each thread polls its own TASKS tasks round-robin; a poll is
 * d9_poll_begin, a descent through a call tree whose shape depends on the
 * task id (DEPTH_MIN..DEPTH_MAX frames of three mutually recursive
 * functions, so about TASKS distinct stacks per thread), US_PER_POLL
 * microseconds of integer hashing in the leaf, and d9_poll_end. Rates:
 * THREADS * 1e6 / US_PER_POLL polls per second while the threads have a
 * core each, e.g. -t 2 -u 10 for ~200k polls/s (the floor), -u 100
 * for a sampling workload with few shim records.
 *
 * -w: threads pair up (0 with 1, 2 with 3, ...) and pass a token through
 * pipes after every poll, waking the partner's next task (d9_task_wake):
 * every poll then blocks and is woken, for the cost of recording wakeups.
 *
 * stdout (line-buffered): "pid N" after d9_init, "ready" once the threads
 * run, and at exit "polls N" and "polls_per_sec N".
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"

/* A real frame in every callchain: not inlined, cloned or tail-called. */
#if defined(__clang__)
#define FRAME __attribute__((noinline, disable_tail_calls))
#else
#define FRAME __attribute__((noinline, noclone, optimize("no-optimize-sibling-calls")))
#endif
#define FORCE_FRAME() asm volatile("" : : "r"(__builtin_frame_address(0)))

#define DEPTH_MIN   6
#define DEPTH_MAX   22
#define MAX_THREADS 64

static atomic_bool stopping;
static uint64_t iters_per_poll;
static __thread volatile uint64_t sink;

struct spinner {
	pthread_t th;
	unsigned index;
	unsigned ntasks;
	uint64_t polls;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t hash_loop(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 29;
		x += i;
	}
	return x;
}

FRAME uint64_t spin_leaf(uint64_t seed)
{
	FORCE_FRAME();
	return hash_loop(seed | 1, iters_per_poll);
}

FRAME uint64_t spin_a(uint64_t path, unsigned depth);
FRAME uint64_t spin_b(uint64_t path, unsigned depth);
FRAME uint64_t spin_c(uint64_t path, unsigned depth);

/* One step of the descent: the next function is picked by two bits of
 * @path, so the task id spells the stack. */
static inline uint64_t step(uint64_t path, unsigned depth)
{
	if (!depth)
		return spin_leaf(path);
	switch (path & 3) {
	case 0:
	case 3:
		return spin_a(path >> 2 | path << 62, depth - 1) + 1;
	case 1:
		return spin_b(path >> 2 | path << 62, depth - 1) + 3;
	default:
		return spin_c(path >> 2 | path << 62, depth - 1) + 5;
	}
}

FRAME uint64_t spin_a(uint64_t path, unsigned depth)
{
	FORCE_FRAME();
	return step(path, depth);
}

FRAME uint64_t spin_b(uint64_t path, unsigned depth)
{
	FORCE_FRAME();
	return step(path, depth) ^ 7;
}

FRAME uint64_t spin_c(uint64_t path, unsigned depth)
{
	FORCE_FRAME();
	return step(path, depth) * 3;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

FRAME void spin_poll(uint64_t task)
{
	uint64_t h = mix(task);

	d9_poll_begin(task);
	sink = spin_a(h, DEPTH_MIN + (unsigned)(h >> 59) % (DEPTH_MAX - DEPTH_MIN + 1));
	d9_poll_end(task);
}

static bool pingpong;
static int pipes[MAX_THREADS][2];

/* -w: hand the token to the partner (waking its next task), wait for ours */
static void pass_token(const struct spinner *s, uint64_t partner_task)
{
	char b = 1;

	d9_task_wake(partner_task);
	if (write(pipes[s->index ^ 1][1], &b, 1) != 1 ||
	    read(pipes[s->index][0], &b, 1) != 1)
		atomic_store(&stopping, true);
}

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	uint64_t base = (uint64_t)(s->index + 1) << 20, polls = 0;
	char name[32];
	unsigned i;

	snprintf(name, sizeof(name), "spin-%u", s->index);
	pthread_setname_np(pthread_self(), name);
	d9_thread_start(name);
	for (i = 0; i < s->ntasks; i++) {
		snprintf(name, sizeof(name), "spin-task-%u-%u", s->index, i);
		d9_task_spawn(base + i, name);
	}
	if (pingpong && s->index % 2) {
		char b;

		if (read(pipes[s->index][0], &b, 1) != 1)
			atomic_store(&stopping, true);
	}
	for (i = 0; !atomic_load_explicit(&stopping, memory_order_relaxed);
	     i = i + 1 == s->ntasks ? 0 : i + 1) {
		spin_poll(base + i);
		polls++;
		if (pingpong)
			pass_token(s, ((uint64_t)((s->index ^ 1) + 1) << 20) +
					      (i + 1 == s->ntasks ? 0 : i + 1));
	}
	for (i = 0; i < s->ntasks; i++)
		d9_task_end(base + i);
	d9_thread_stop();
	s->polls = polls;
	return NULL;
}

static void calibrate(double us)
{
	const uint64_t n = 200000;
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = now_ns();

		sink = hash_loop(sink | 9, n);
		if (now_ns() - t0 < best)
			best = now_ns() - t0;
	}
	iters_per_poll = (uint64_t)(us * 1000.0 * (double)n / (double)(best ? best : 1));
	if (!iters_per_poll)
		iters_per_poll = 1;
}

static void usage(FILE *f)
{
	fputs("usage: bench_spin [-t THREADS] [-d SECONDS] [-u US_PER_POLL] [-n TASKS] [-w]\n",
	      f);
}

int main(int argc, char **argv)
{
	struct spinner sp[MAX_THREADS];
	unsigned nthreads = 2, ntasks = 64, i;
	double seconds = 5, us = 10, elapsed;
	uint64_t t0, total = 0;
	struct timespec ts;
	int c;

	while ((c = getopt(argc, argv, "t:d:u:n:wh")) != -1) {
		switch (c) {
		case 'w':
			pingpong = true;
			break;
		case 't':
			nthreads = (unsigned)atoi(optarg);
			break;
		case 'd':
			seconds = atof(optarg);
			break;
		case 'u':
			us = atof(optarg);
			break;
		case 'n':
			ntasks = (unsigned)atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !nthreads || nthreads > MAX_THREADS || !(seconds > 0) ||
	    !(us > 0) || !ntasks || ntasks > 65536 || (pingpong && nthreads % 2)) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (d9_init())
		fprintf(stderr, "bench_spin: no d9prof shim segment, running without\n");
	printf("pid %d\n", (int)getpid());
	calibrate(us);

	memset(sp, 0, sizeof(sp));
	for (i = 0; pingpong && i < nthreads; i++)
		if (pipe(pipes[i])) {
			fprintf(stderr, "bench_spin: pipe: %s\n", strerror(errno));
			return 1;
		}
	t0 = now_ns();
	for (i = 0; i < nthreads; i++) {
		sp[i].index = i;
		sp[i].ntasks = ntasks;
		if (pthread_create(&sp[i].th, NULL, spinner_main, &sp[i])) {
			fprintf(stderr, "bench_spin: cannot start a thread: %s\n",
				strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stopping, true);
	for (i = 0; pingpong && i < nthreads; i++) /* unblock the readers */
		if (write(pipes[i][1], "x", 1) != 1)
			break;
	for (i = 0; i < nthreads; i++) {
		pthread_join(sp[i].th, NULL);
		total += sp[i].polls;
	}
	elapsed = (double)(now_ns() - t0) / 1e9;
	printf("polls %llu\n", (unsigned long long)total);
	printf("polls_per_sec %.0f\n", (double)total / elapsed);
	return 0;
}
