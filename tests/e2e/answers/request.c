// SPDX-License-Identifier: MIT
/*
 * Requests as spans across two tasks (tests/e2e/answers.sh): every 30 ms a
 * client thread creates a span "request" (id 1, 2, ...; a field route =
 * "/slow" for every fourth, else "/fast") and wakes the handler.
 *   task 1 "handler" on thread "worker-0": enters the request, burns CPU
 *                    in burn_slow() (12 ms, /slow) or burn_fast() (2 ms),
 *                    exits, wakes the db task; when the db woke it again:
 *                    enters, exits and closes the request
 *   task 2 "db"      on thread "worker-1": enters the request, blocks 8 ms
 *                    in db_read() (a nanosleep), exits, wakes the handler
 * Each request also makes an event "queue" with the number of requests
 * created but not closed.
 *
 *   request SECONDS   prints "pid N", "task handler 1", "task db 2" and
 *                     "ready", then per request closed "req ID ROUTE NS
 *                     CREATED CLOSED" (NS: its creation to its close;
 *                     CREATED before its span's, CLOSED after the close:
 *                     CLOCK_MONOTONIC, measured here, the ground truth),
 *                     runs SECONDS, exits 0
 */
#include "../rt.h"

#include <stdlib.h>
#include <string.h>

#define HANDLER 1
#define DB	2
#define REQS	64 /* in flight at most */

static volatile int done;
static struct rt_queue q_handler = RT_QUEUE_INIT, q_db = RT_QUEUE_INIT;

/* the requests in flight, FIFO: the client adds, the handler closes */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct req {
	uint64_t id, created;
	int slow, phase;
} reqs[REQS];
static unsigned head, len;

__attribute__((noinline)) void burn_slow(void)
{
	RT_SPIN_NS(12000000);
}

__attribute__((noinline)) void burn_fast(void)
{
	RT_SPIN_NS(2000000);
}

__attribute__((noinline)) void db_read(void)
{
	struct timespec ts = {0, 8000000};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

static struct req *current(void)
{
	struct req *r;

	pthread_mutex_lock(&lock);
	r = len ? &reqs[head] : NULL;
	pthread_mutex_unlock(&lock);
	return r;
}

static void wake(struct rt_queue *q, uint64_t task)
{
	pthread_mutex_lock(&q->lock);
	if (!rt_queued_locked(q, task))
		rt_push_locked(q, task);
	d9_task_wake(task);
	pthread_mutex_unlock(&q->lock);
}

static void handler_poll(void)
{
	struct req *r = current();
	uint64_t now;

	if (!r)
		return;
	d9_span_enter(r->id);
	if (r->phase == 0) {
		if (r->slow)
			burn_slow();
		else
			burn_fast();
		r->phase = 1;
		d9_span_exit(r->id);
		wake(&q_db, DB);
		return;
	}
	d9_span_exit(r->id);
	d9_span_close(r->id);
	now = rt_now_ns();
	printf("req %llu %s %llu %llu %llu\n", (unsigned long long)r->id,
	       r->slow ? "/slow" : "/fast", (unsigned long long)(now - r->created),
	       (unsigned long long)r->created, (unsigned long long)now);
	fflush(stdout);
	pthread_mutex_lock(&lock);
	head = (head + 1) % REQS;
	len--;
	pthread_mutex_unlock(&lock);
	if (current())
		wake(&q_handler, HANDLER);
}

static void db_poll(void)
{
	struct req *r = current();

	if (!r)
		return;
	d9_span_enter(r->id);
	db_read();
	d9_span_exit(r->id);
	wake(&q_handler, HANDLER);
}

static void *worker(void *arg)
{
	int db = arg != NULL;
	uint64_t task;

	rt_thread_start(db ? "worker-1" : "worker-0");
	while ((task = rt_pop(db ? &q_db : &q_handler, &done))) {
		d9_poll_begin(task);
		if (db)
			db_poll();
		else
			handler_poll();
		d9_poll_end(task);
	}
	d9_thread_stop();
	return NULL;
}

static void *client(void *arg)
{
	struct timespec next;
	uint64_t id = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "client");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!done) {
		struct req *r;
		int idle;

		rt_tick(&next, 30000000);
		pthread_mutex_lock(&lock);
		if (len == REQS) {
			pthread_mutex_unlock(&lock);
			continue;
		}
		r = &reqs[(head + len) % REQS];
		memset(r, 0, sizeof(*r));
		r->id = ++id;
		r->slow = id % 4 == 0;
		r->created = rt_now_ns();
		d9_span_new(r->id, 0, "request");
		d9_span_field(r->id, "route", 0, r->slow ? "/slow" : "/fast");
		idle = len++ == 0;
		d9_event("queue", len, NULL);
		pthread_mutex_unlock(&lock);
		if (idle)
			wake(&q_handler, HANDLER);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t th[3];

	d9_init();
	rt_ready_begin();
	d9_task_spawn(HANDLER, "handler");
	d9_task_spawn(DB, "db");
	printf("task handler %d\ntask db %d\n", HANDLER, DB);
	pthread_create(&th[0], NULL, worker, NULL);
	pthread_create(&th[1], NULL, worker, (void *)1);
	pthread_create(&th[2], NULL, client, NULL);
	rt_ready();
	rt_sleep(secs);
	done = 1;
	rt_queue_close(&q_handler);
	rt_queue_close(&q_db);
	for (int i = 2; i >= 0; i--)
		pthread_join(th[i], NULL);
	return 0;
}
