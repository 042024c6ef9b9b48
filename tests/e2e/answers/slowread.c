// SPDX-License-Identifier: MIT
/*
 * A blocking read through libc inside a named function
 * (tests/e2e/answers.sh): one worker thread "worker-0" runs two tasks in
 * turn.
 *   task 1 "reader"  each poll calls slow_read(), which blocks in libc's
 *                    read() on a pipe until the thread "feeder" writes a
 *                    byte (every 4 ms); then it yields
 *   task 2 "victim"  woken by "feeder" right after each byte, so it waits
 *                    behind the reader's next blocking poll
 *
 *   slowread SECONDS   prints "pid N", "task reader 1", "task victim 2" and
 *                      "ready", runs SECONDS, exits 0
 */
#include "../rt.h"

#include <stdlib.h>

#define READER 1
#define VICTIM 2

static int pipefd[2];
static volatile int done, victim_woken;

__attribute__((noinline)) ssize_t slow_read(int fd, void *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);

	__asm__ volatile("" ::: "memory");
	return n;
}

__attribute__((noinline)) void reader_poll(void)
{
	char c;

	if (slow_read(pipefd[0], &c, 1) != 1)
		done = 1;
}

static void *feeder(void *arg)
{
	struct timespec nap = {0, 4000000};

	(void)arg;
	pthread_setname_np(pthread_self(), "feeder");
	d9_thread_start("feeder");
	while (!done) {
		nanosleep(&nap, NULL);
		if (write(pipefd[1], "x", 1) != 1)
			break;
		__atomic_store_n(&victim_woken, 1, __ATOMIC_RELEASE);
		d9_task_wake(VICTIM);
	}
	d9_thread_stop();
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-0");
	d9_thread_start("worker-0");
	while (!done) {
		d9_poll_begin(READER);
		reader_poll();
		d9_poll_end(READER);
		d9_task_wake(READER); /* a yield: runnable again */
		if (__atomic_exchange_n(&victim_woken, 0, __ATOMIC_ACQ_REL)) {
			d9_poll_begin(VICTIM);
			d9_poll_end(VICTIM);
		}
	}
	d9_thread_stop();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t w, f;

	if (pipe(pipefd))
		return 1;
	if (d9_init())
		fprintf(stderr, "slowread: d9_init failed\n");
	d9_task_spawn(READER, "reader");
	d9_task_spawn(VICTIM, "victim");
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&f, NULL, feeder, NULL);
	rt_ready_begin();
	printf("task reader %d\ntask victim %d\n", READER, VICTIM);
	rt_ready();
	rt_sleep(secs);
	done = 1;
	pthread_join(f, NULL);
	close(pipefd[1]);
	pthread_join(w, NULL);
	d9_task_end(READER);
	d9_task_end(VICTIM);
	return 0;
}
