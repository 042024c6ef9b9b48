// SPDX-License-Identifier: MIT
/*
 * A process "of our own" for the off-CPU end-to-end tests: one worker runs
 * task 1 "sleeper", whose every poll blocks ~3 ms in libc (nanosleep(),
 * or usleep() every other poll, which goes through nanosleep too) called
 * from sleeper_wait_for_io(), a named noinline function. libc has no frame
 * pointers, so only a CFI unwind of the switch-out stack keeps that frame.
 *
 *   sleeper SECONDS [SHORT_US [FINAL_MS]]
 *                     prints "pid N" and "ready", runs SECONDS, then prints
 *                     "polls N" and "slept_us N" (time spent in the sleeping
 *                     calls, measured around them) and exits 0
 *
 * With SHORT_US, every poll also sleeps SHORT_US in sleeper_short_wait(),
 * measured apart: "shorts N" and "short_us N". With FINAL_MS, the worker
 * then sleeps FINAL_MS more in sleeper_final_wait() before it exits (a
 * thread off-CPU when a recording with -d ends).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <d9prof.h>

#define SLEEP_NS 3000000L

static uint64_t polls, slept_ns, short_us, shorts, short_ns, final_ms;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void sleeper_wait_for_io(uint64_t n)
{
	struct timespec ts = {0, SLEEP_NS};
	uint64_t t0 = now_ns();

	if (n & 1)
		usleep(SLEEP_NS / 1000);
	else
		while (nanosleep(&ts, &ts))
			;
	slept_ns += now_ns() - t0;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sleeper_short_wait(void)
{
	uint64_t t0 = now_ns();

	usleep((useconds_t)short_us);
	short_ns += now_ns() - t0;
	shorts++;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sleeper_final_wait(void)
{
	usleep((useconds_t)(final_ms * 1000));
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sleeper_work(void)
{
	volatile unsigned long x = 1;
	int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1;
}

static void *worker(void *arg)
{
	uint64_t end = *(uint64_t *)arg;

	d9_thread_start("sleeper-worker");
	while (now_ns() < end) {
		d9_poll_begin(1);
		sleeper_work();
		sleeper_wait_for_io(polls);
		if (short_us)
			sleeper_short_wait();
		d9_poll_end(1);
		polls++;
		d9_task_wake(1);
	}
	if (final_ms)
		sleeper_final_wait();
	d9_task_end(1);
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	uint64_t end;
	pthread_t th;

	if (d9_init())
		fprintf(stderr, "sleeper: d9_init failed\n");
	short_us = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	final_ms = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
	d9_task_spawn(1, "sleeper");
	end = now_ns() + (uint64_t)(secs * 1e9);
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	if (pthread_create(&th, NULL, worker, &end))
		return 1;
	pthread_join(th, NULL);
	printf("polls %llu\nslept_us %llu\n", (unsigned long long)polls,
	       (unsigned long long)(slept_ns / 1000));
	if (short_us)
		printf("shorts %llu\nshort_us %llu\n", (unsigned long long)shorts,
		       (unsigned long long)(short_ns / 1000));
	return 0;
}
