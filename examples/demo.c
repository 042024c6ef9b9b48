// SPDX-License-Identifier: MIT
/*
 * demo.c - a small multi-threaded async runtime instrumented with d9prof.
 *
 * It is the workload of `make demo` and of the end-to-end tests, so what it
 * prints and which task does what are a contract:
 *
 *   demo [-w WORKERS] [-d SECONDS] [-q]
 *   demo --bench-polls [--bench-work-ns NS] [-w WORKERS] [-d SECONDS] [-q]
 *
 * stdout (line-buffered, printed whether or not -q is given):
 *   pid <PID>                            after d9_init()
 *   task 1 cpu_hog demo_hot_spin         (not in --bench-polls)
 *   task 2 blocker demo_blocking_read
 *   task 3 ticker demo_tick_work
 *   task 4 spawner demo_short_work
 *   ready                                workers are running the tasks
 *   polls_per_sec <N>                    at exit, --bench-polls only
 * A task line is `task <id> <name> <function its CPU time is spent in>`.
 * Chatter and the exit summary go to stderr; -q silences them.
 *
 * Tasks (ids are sequential from 1 and never reused):
 *   1 cpu_hog  each poll burns ~2 ms of CPU in demo_hot_spin(), then yields
 *   2 blocker  each poll blocks ~3 ms in nanosleep() inside
 *              demo_blocking_read(), then sleeps 1 ms on the timer
 *   3 ticker   woken by the timer every 5 ms, ~5 us in demo_tick_work()
 *   4 spawner  each poll spawns SHORT_BATCH "short" tasks, then sleeps 2 ms
 *   5.. short  1-3 polls of 20-50 us in demo_short_work() each, then done
 * Spans (d9prof.h): each spawner poll makes a span "batch" (a field
 * tasks = SHORT_BATCH) that its short tasks enter around their work and
 * the last of them to end closes: one span across three tasks; each
 * blocker poll makes a span "read" (a field bytes = 4096) entered around
 * demo_blocking_read(). Events: "tick_late", the ticker's lateness in us
 * at each poll.
 * In --bench-polls mode tasks 1..N are "bench" tasks that yield after
 * ~1.5 us of work in demo_bench_work() per poll (--bench-work-ns NS: NS
 * nanoseconds, e.g. 8000 for about 200k polls/s on 2 idle workers); with
 * --bench-spans N each task's polls are requests of N polls: a span
 * "request" made at the first, entered around each and closed after the
 * last (what a traced service's spans look like to the views, at scale).
 *
 * Threads: workers "d9demo-worker-<K>", K from 0 (d9_thread_start() and
 * the thread name), and one "d9demo-timer" that runs no task. Markers:
 * d9_task_spawn at spawn; d9_poll_begin/d9_poll_end around each poll on a
 * worker; d9_task_wake when a task is made runnable again (on the worker
 * for a yield, on the timer thread for a sleep); d9_task_end when a poll
 * returned READY; d9_park/d9_unpark around a worker's idle wait.
 *
 * The call chain a frame-pointer unwinder sees for the hog is
 *   worker_main -> run_poll -> cpu_hog_poll -> demo_hot_spin
 * (the demo_* work functions are global, noinline and never tail-called).
 *
 * Scheduler: each worker owns a bounded FIFO run queue behind its own,
 * practically uncontended, mutex; the injector (a mutex-protected list
 * with a condvar) takes tasks from non-worker threads (main, timer) and
 * local overflow. An idle worker drains the injector, then steals half of
 * another worker's queue, then parks on the condvar. A task is always in
 * exactly one place - a run queue, the timer heap or a worker's hands -
 * because a poll only says how it wants to be rescheduled (yield, or sleep
 * until a deadline) and run_poll() applies that after the poll returned.
 *
 * Stop (SIGINT, SIGTERM, or -d elapsed): every long-lived task returns
 * READY at its next poll, the timer hands back every sleeping task at
 * once, short tasks run to completion, and workers exit when no task is
 * left. Exit status 0; 1 on a runtime failure; 2 on a usage error.
 */
#include <d9prof.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Keep a function a real frame in every callchain: never inlined, cloned,
 * or left through a tail call (a sibling call would replace its frame).
 */
#if defined(__clang__)
#define DEMO_FRAME __attribute__((noinline, disable_tail_calls))
#else
#define DEMO_FRAME                                                                       \
	__attribute__((noinline, noclone, optimize("no-optimize-sibling-calls")))
#endif

/*
 * GCC 12 on x86-64 sets up no frame in a leaf function that needs no stack,
 * -fno-omit-frame-pointer notwithstanding; a sample there would then lose
 * the leaf's caller. Taking the frame address forces the frame.
 */
#define FORCE_FRAME() asm volatile("" : : "r"(__builtin_frame_address(0)))

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

#define MAX_WORKERS  64
#define LQ_CAP	     512 /* per-worker run queue, power of two */
#define INJECT_BATCH 64	 /* most tasks taken from the injector at once */
#define STEAL_BATCH  64

#define HOG_POLL_US	       2000
#define BLOCK_NS	       (3 * NSEC_PER_MSEC)
#define BLOCKER_SLEEP_NS       (1 * NSEC_PER_MSEC)
#define TICK_NS		       (5 * NSEC_PER_MSEC)
#define TICK_WORK_US	       5
#define SPAWN_NS	       (2 * NSEC_PER_MSEC)
#define SHORT_BATCH	       3
#define BENCH_WORK_NS	       1500 /* per bench poll */
#define BENCH_TASKS_PER_WORKER 64
#define BENCH_DEFAULT_SECONDS  5.0

enum task_kind {
	KIND_CPU_HOG,
	KIND_BLOCKER,
	KIND_TICKER,
	KIND_SPAWNER,
	KIND_SHORT,
	KIND_BENCH,
	NR_KINDS,
};

static const char *const kind_name[NR_KINDS] = {
	[KIND_CPU_HOG] = "cpu_hog", [KIND_BLOCKER] = "blocker", [KIND_TICKER] = "ticker",
	[KIND_SPAWNER] = "spawner", [KIND_SHORT] = "short",	[KIND_BENCH] = "bench",
};

/* The span of one spawner poll's short tasks, closed by the last to end. */
struct batch {
	uint64_t span;
	atomic_uint left;
};

enum poll_result { POLL_READY, POLL_PENDING };
enum resched { RESCHED_YIELD, RESCHED_TIMER };

struct worker;

struct task {
	uint64_t id;
	enum task_kind kind;
	enum resched resched; /* set by a poll returning POLL_PENDING */
	uint64_t deadline;    /* CLOCK_MONOTONIC ns, for RESCHED_TIMER */
	unsigned polls_left;  /* short tasks */
	uint64_t work_iters;  /* short tasks: per poll */
	struct batch *batch;  /* short tasks: the spawner poll's span */
	uint64_t span;	      /* bench tasks with --bench-spans: the request's */
	struct task *next;    /* injector link */
};

struct local_queue {
	pthread_mutex_t lock;
	unsigned head, tail; /* free-running; under lock */
	atomic_uint len;     /* mirror of tail - head for lock-free peeks */
	struct task *slot[LQ_CAP];
};

struct worker {
	struct runtime *rt;
	unsigned index;
	pthread_t thread;
	struct local_queue lq;
	/* owner-written, read after join */
	uint64_t polls[NR_KINDS];
	uint64_t ended[NR_KINDS];
} __attribute__((aligned(64)));

struct timer_entry {
	uint64_t deadline;
	uint64_t seq; /* FIFO among equal deadlines */
	struct task *task;
};

struct timer {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct timer_entry *heap;
	size_t len, cap;
	uint64_t seq;
	bool stop_req; /* main asks the timer thread to flush, exit */
	bool stopped;  /* sleeping tasks now go straight to a queue */
	pthread_t thread;
};

struct runtime {
	unsigned nr_workers;
	bool bench;
	struct worker *workers;

	pthread_mutex_t inj_lock;
	pthread_cond_t inj_cond; /* parked workers */
	struct task *inj_head, *inj_tail;
	atomic_size_t inj_len;
	atomic_uint nr_idle;

	atomic_bool stopping;
	atomic_uint_fast64_t live; /* spawned, not yet ended */
	atomic_uint_fast64_t next_id;
	atomic_uint_fast64_t next_span; /* span ids, from 1, never reused */
	atomic_uint_fast64_t spawned[NR_KINDS];

	struct timer timer;
};

static struct env {
	unsigned workers;
	double seconds; /* 0: until a signal */
	bool quiet;
	bool bench;
	long bench_work_ns; /* -1: not given */
	long bench_iters;   /* hash iterations a poll, not calibrated (0: no) */
	long bench_spans;   /* polls a request span (0: none) */
} env = {
	.workers = 2,
	.bench_work_ns = -1,
};

/* Hash-loop iterations per microsecond, and per poll, set at startup. */
static double iters_per_us;
static uint64_t hog_iters, tick_iters, bench_iters;

/*
 * Results of the work functions land here so they cannot be elided; one
 * per thread, so workers do not bounce a shared cache line every poll.
 */
__thread volatile uint64_t demo_sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline uint64_t sink_seed(void)
{
	return demo_sink;
}

static inline void sink(uint64_t v)
{
	demo_sink = v;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (env.quiet)
		return;
	va_start(ap, fmt);
	fputs("demo: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static __attribute__((noreturn)) void die(const char *what, int err)
{
	fprintf(stderr, "demo: %s: %s\n", what, strerror(err));
	exit(1);
}

/* ---- work: pure integer hashing, one dependent chain ------------------ */

static inline __attribute__((always_inline)) uint64_t hash_loop(uint64_t x, uint64_t k,
								uint64_t iters)
{
	for (uint64_t i = 0; i < iters; i++) {
		x ^= x >> 31;
		x *= k;
		x ^= x >> 29;
		x += i;
	}
	return x;
}

static uint64_t us_to_iters(double us)
{
	uint64_t n = (uint64_t)(us * iters_per_us);

	return n ? n : 1;
}

/* The hog's whole poll: nothing but this loop. */
DEMO_FRAME void demo_hot_spin(void)
{
	FORCE_FRAME();
	sink(hash_loop(sink_seed() | 1, 0xff51afd7ed558ccdULL, hog_iters));
}

/*
 * libc's syscall wrappers keep no frame pointer, so a frame-pointer unwind
 * that starts inside one skips its caller. Entering the kernel from this
 * very function keeps demo_blocking_read in kernel and off-CPU callchains.
 */
static inline __attribute__((always_inline)) long sleep_syscall(struct timespec *ts)
{
#if defined(__x86_64__)
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_nanosleep), "D"(ts), "S"(ts)
		     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 asm("x8") = SYS_nanosleep;
	register long x0 asm("x0") = (long)ts;
	register long x1 asm("x1") = (long)ts;

	asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	return x0;
#else
	return nanosleep(ts, ts) ? -errno : 0;
#endif
}

DEMO_FRAME int demo_blocking_read(void)
{
	struct timespec ts = {.tv_nsec = BLOCK_NS};
	long ret;

	FORCE_FRAME();
	while ((ret = sleep_syscall(&ts)) == -EINTR)
		;
	return (int)ret;
}

DEMO_FRAME void demo_tick_work(void)
{
	FORCE_FRAME();
	sink(hash_loop(sink_seed() | 3, 0xc4ceb9fe1a85ec53ULL, tick_iters));
}

DEMO_FRAME void demo_short_work(uint64_t iters)
{
	FORCE_FRAME();
	sink(hash_loop(sink_seed() | 5, 0x9e3779b97f4a7c15ULL, iters));
}

DEMO_FRAME void demo_bench_work(void)
{
	FORCE_FRAME();
	sink(hash_loop(sink_seed() | 7, 0xbf58476d1ce4e5b9ULL, bench_iters));
}

static __attribute__((noinline)) void calibrate(void)
{
	const uint64_t n = 200000;
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns(), dt;

		sink(hash_loop(sink_seed() | 9, 0x94d049bb133111ebULL, n));
		dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	iters_per_us = (double)n * 1000.0 / (double)(best ? best : 1);
	hog_iters = us_to_iters(HOG_POLL_US);
	tick_iters = us_to_iters(TICK_WORK_US);
	bench_iters = env.bench_iters
			      ? (uint64_t)env.bench_iters
			      : us_to_iters((env.bench_work_ns >= 0 ? env.bench_work_ns
								    : BENCH_WORK_NS) /
					    1000.0);
}

/* ---- run queues ------------------------------------------------------- */

static void notify_one(struct runtime *rt)
{
	pthread_mutex_lock(&rt->inj_lock);
	pthread_cond_signal(&rt->inj_cond);
	pthread_mutex_unlock(&rt->inj_lock);
}

/* Append a chain of @n tasks to the injector and wake parked workers. */
static void inj_push(struct runtime *rt, struct task *head, struct task *tail, size_t n)
{
	if (!n)
		return;
	tail->next = NULL;
	pthread_mutex_lock(&rt->inj_lock);
	if (rt->inj_tail)
		rt->inj_tail->next = head;
	else
		rt->inj_head = head;
	rt->inj_tail = tail;
	atomic_fetch_add(&rt->inj_len, n);
	if (atomic_load(&rt->nr_idle)) {
		if (n > 1)
			pthread_cond_broadcast(&rt->inj_cond);
		else
			pthread_cond_signal(&rt->inj_cond);
	}
	pthread_mutex_unlock(&rt->inj_lock);
}

/* Pop up to @max tasks from the injector; caller holds inj_lock. */
static size_t inj_take_locked(struct runtime *rt, struct task **out, size_t max)
{
	size_t n = 0;

	while (n < max && rt->inj_head) {
		out[n++] = rt->inj_head;
		rt->inj_head = rt->inj_head->next;
	}
	if (!rt->inj_head)
		rt->inj_tail = NULL;
	atomic_fetch_sub(&rt->inj_len, n);
	return n;
}

/*
 * Push @n tasks on @w's own queue; what does not fit goes to the injector.
 * Wake a parked worker when there is more here than this worker is about
 * to run itself, so it can steal.
 */
static void lq_push(struct worker *w, struct task **t, size_t n)
{
	struct local_queue *q = &w->lq;
	struct runtime *rt = w->rt;
	unsigned len;
	size_t i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < n && q->tail - q->head < LQ_CAP; i++)
		q->slot[q->tail++ & (LQ_CAP - 1)] = t[i];
	len = q->tail - q->head;
	atomic_store(&q->len, len);
	pthread_mutex_unlock(&q->lock);

	if (i < n) {
		for (size_t j = i; j + 1 < n; j++)
			t[j]->next = t[j + 1];
		inj_push(rt, t[i], t[n - 1], n - i);
	}
	if (len > 1 && atomic_load(&rt->nr_idle))
		notify_one(rt);
}

/* Take up to @max tasks from the head of @q (own queue or a victim's). */
static size_t lq_take(struct local_queue *q, struct task **out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&q->lock);
	while (n < max && q->head != q->tail)
		out[n++] = q->slot[q->head++ & (LQ_CAP - 1)];
	atomic_store(&q->len, q->tail - q->head);
	pthread_mutex_unlock(&q->lock);
	return n;
}

static struct task *lq_pop(struct worker *w)
{
	struct task *t;

	if (!atomic_load_explicit(&w->lq.len, memory_order_relaxed))
		return NULL;
	return lq_take(&w->lq, &t, 1) ? t : NULL;
}

/* Move a share of the injector into @w's queue; return one task to run. */
static struct task *inj_grab(struct worker *w)
{
	struct runtime *rt = w->rt;
	struct task *batch[INJECT_BATCH];
	size_t n, max;

	if (!atomic_load_explicit(&rt->inj_len, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&rt->inj_lock);
	max = atomic_load(&rt->inj_len) / rt->nr_workers + 1;
	n = inj_take_locked(rt, batch, max < INJECT_BATCH ? max : INJECT_BATCH);
	pthread_mutex_unlock(&rt->inj_lock);
	if (!n)
		return NULL;
	if (n > 1)
		lq_push(w, batch + 1, n - 1);
	return batch[0];
}

static struct task *steal(struct worker *w)
{
	struct runtime *rt = w->rt;
	struct task *batch[STEAL_BATCH];

	for (unsigned i = 1; i < rt->nr_workers; i++) {
		struct worker *v = &rt->workers[(w->index + i) % rt->nr_workers];
		unsigned len = atomic_load(&v->lq.len);
		size_t n;

		if (!len)
			continue;
		len = (len + 1) / 2;
		n = lq_take(&v->lq, batch, len < STEAL_BATCH ? len : STEAL_BATCH);
		if (!n)
			continue;
		if (n > 1)
			lq_push(w, batch + 1, n - 1);
		return batch[0];
	}
	return NULL;
}

static bool others_have_work(struct worker *w)
{
	struct runtime *rt = w->rt;

	for (unsigned i = 0; i < rt->nr_workers; i++)
		if (atomic_load(&rt->workers[i].lq.len))
			return true;
	return false;
}

/*
 * The next task for @w, parking while there is none; NULL once the runtime
 * is stopping and every task has ended. A pusher stores the queue length
 * and then reads nr_idle; a parker bumps nr_idle and then reads the queue
 * lengths (all seq_cst), so one of them sees the other: no lost wakeup.
 */
static struct task *next_task(struct worker *w)
{
	struct runtime *rt = w->rt;
	struct task *t;
	bool parked = false;

	for (;;) {
		/* Injector first: timer wakeups must not queue behind the hog. */
		if ((t = inj_grab(w)) || (t = lq_pop(w)) || (t = steal(w)))
			break;

		pthread_mutex_lock(&rt->inj_lock);
		atomic_fetch_add(&rt->nr_idle, 1);
		for (;;) {
			if (rt->inj_head || others_have_work(w))
				break;
			if (atomic_load(&rt->stopping) && !atomic_load(&rt->live))
				break;
			if (!parked) {
				d9_park();
				parked = true;
			}
			pthread_cond_wait(&rt->inj_cond, &rt->inj_lock);
		}
		atomic_fetch_sub(&rt->nr_idle, 1);
		pthread_mutex_unlock(&rt->inj_lock);

		if (atomic_load(&rt->stopping) && !atomic_load(&rt->live))
			break;
	}
	if (parked)
		d9_unpark();
	return t;
}

/* ---- timer ------------------------------------------------------------ */

static bool entry_before(const struct timer_entry *a, const struct timer_entry *b)
{
	return a->deadline < b->deadline ||
	       (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_sift_up(struct timer *tm, size_t i)
{
	struct timer_entry e = tm->heap[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!entry_before(&e, &tm->heap[parent]))
			break;
		tm->heap[i] = tm->heap[parent];
		i = parent;
	}
	tm->heap[i] = e;
}

static void heap_pop(struct timer *tm)
{
	struct timer_entry e = tm->heap[--tm->len];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= tm->len)
			break;
		if (c + 1 < tm->len && entry_before(&tm->heap[c + 1], &tm->heap[c]))
			c++;
		if (!entry_before(&tm->heap[c], &e))
			break;
		tm->heap[i] = tm->heap[c];
		i = c;
	}
	if (tm->len)
		tm->heap[i] = e;
}

/* Make a chain of tasks runnable from a non-worker thread. */
static void wake_chain(struct runtime *rt, struct task *head, struct task *tail, size_t n)
{
	for (struct task *t = head; t; t = t == tail ? NULL : t->next)
		d9_task_wake(t->id);
	inj_push(rt, head, tail, n);
}

/* Put @t to sleep until its deadline; after stop, wake it at once. */
static void timer_add(struct runtime *rt, struct task *t)
{
	struct timer *tm = &rt->timer;

	pthread_mutex_lock(&tm->lock);
	if (!tm->stopped && tm->len == tm->cap) {
		size_t cap = tm->cap ? 2 * tm->cap : 64;
		struct timer_entry *h = realloc(tm->heap, cap * sizeof(*h));

		if (h) {
			tm->heap = h;
			tm->cap = cap;
		}
	}
	if (tm->stopped || tm->len == tm->cap) {
		/* no timer (stopping or out of memory): an early wakeup */
		pthread_mutex_unlock(&tm->lock);
		wake_chain(rt, t, t, 1);
		return;
	}
	tm->heap[tm->len] = (struct timer_entry){t->deadline, tm->seq++, t};
	heap_sift_up(tm, tm->len++);
	if (tm->heap[0].task == t)
		pthread_cond_signal(&tm->cond);
	pthread_mutex_unlock(&tm->lock);
}

static void *timer_main(void *arg)
{
	struct runtime *rt = arg;
	struct timer *tm = &rt->timer;

	pthread_setname_np(pthread_self(), "d9demo-timer");
	pthread_mutex_lock(&tm->lock);
	for (;;) {
		struct task *head = NULL, *tail = NULL;
		uint64_t now = now_ns();
		size_t n = 0;

		while (tm->len && (tm->stop_req || tm->heap[0].deadline <= now)) {
			struct task *t = tm->heap[0].task;

			heap_pop(tm);
			if (tail)
				tail->next = t;
			else
				head = t;
			tail = t;
			n++;
		}
		if (tm->stop_req)
			tm->stopped = true;
		if (n) {
			pthread_mutex_unlock(&tm->lock);
			wake_chain(rt, head, tail, n);
			pthread_mutex_lock(&tm->lock);
			continue;
		}
		if (tm->stopped)
			break;
		if (!tm->len) {
			pthread_cond_wait(&tm->cond, &tm->lock);
		} else {
			uint64_t d = tm->heap[0].deadline;
			struct timespec ts = {
				.tv_sec = d / NSEC_PER_SEC,
				.tv_nsec = d % NSEC_PER_SEC,
			};

			pthread_cond_timedwait(&tm->cond, &tm->lock, &ts);
		}
	}
	pthread_mutex_unlock(&tm->lock);
	return NULL;
}

/* ---- tasks ------------------------------------------------------------ */

static struct task *task_new(struct runtime *rt, enum task_kind kind)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->id = atomic_fetch_add(&rt->next_id, 1);
	t->kind = kind;
	atomic_fetch_add(&rt->live, 1);
	atomic_fetch_add_explicit(&rt->spawned[kind], 1, memory_order_relaxed);
	d9_task_spawn(t->id, kind_name[kind]);
	return t;
}

static void task_sleep_until(struct task *t, uint64_t deadline)
{
	t->resched = RESCHED_TIMER;
	t->deadline = deadline;
}

static bool is_stopping(struct worker *w)
{
	return atomic_load_explicit(&w->rt->stopping, memory_order_relaxed);
}

static DEMO_FRAME enum poll_result cpu_hog_poll(struct worker *w, struct task *t)
{
	if (is_stopping(w))
		return POLL_READY;
	demo_hot_spin();
	t->resched = RESCHED_YIELD;
	return POLL_PENDING;
}

static _Atomic uint64_t blocked_ns;

static DEMO_FRAME enum poll_result blocker_poll(struct worker *w, struct task *t)
{
	uint64_t span, t0;

	if (is_stopping(w))
		return POLL_READY;
	span = atomic_fetch_add(&w->rt->next_span, 1);
	t0 = now_ns();

	d9_span_new(span, 0, "read");
	d9_span_field(span, "bytes", 4096, NULL);
	d9_span_enter(span);
	demo_blocking_read();
	d9_span_exit(span);
	d9_span_close(span);
	/* wall time in the blocking call, wake-up latency included: what the
	 * task really lost, for checking off-CPU totals against */
	atomic_fetch_add(&blocked_ns, now_ns() - t0);
	task_sleep_until(t, now_ns() + BLOCKER_SLEEP_NS);
	return POLL_PENDING;
}

static DEMO_FRAME enum poll_result ticker_poll(struct worker *w, struct task *t)
{
	uint64_t now;

	if (is_stopping(w))
		return POLL_READY;
	demo_tick_work();
	/* a fixed 5 ms grid; skip ticks rather than burst after a stall */
	now = now_ns();
	if (t->deadline)
		d9_event("tick_late", (int64_t)(now - t->deadline) / 1000, NULL);
	if (!t->deadline || t->deadline + TICK_NS <= now)
		t->deadline = now;
	task_sleep_until(t, t->deadline + TICK_NS);
	return POLL_PENDING;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static DEMO_FRAME enum poll_result spawner_poll(struct worker *w, struct task *t)
{
	struct task *batch[SHORT_BATCH];
	struct batch *b;
	size_t n = 0;

	if (is_stopping(w))
		return POLL_READY;
	b = malloc(sizeof(*b));
	for (int i = 0; b && i < SHORT_BATCH; i++) {
		struct task *s = task_new(w->rt, KIND_SHORT);
		uint64_t h;

		if (!s)
			break;
		h = mix64(s->id);
		s->polls_left = 1 + h % 3;
		s->work_iters = us_to_iters(20 + (h >> 8) % 31);
		s->batch = b;
		batch[n++] = s;
	}
	if (n) {
		b->span = atomic_fetch_add(&w->rt->next_span, 1);
		atomic_init(&b->left, (unsigned)n);
		d9_span_new(b->span, 0, "batch");
		d9_span_field(b->span, "tasks", (int64_t)n, NULL);
	} else {
		free(b);
	}
	lq_push(w, batch, n);
	task_sleep_until(t, now_ns() + SPAWN_NS);
	return POLL_PENDING;
}

static DEMO_FRAME enum poll_result short_poll(struct worker *w, struct task *t)
{
	d9_span_enter(t->batch->span);
	demo_short_work(t->work_iters);
	d9_span_exit(t->batch->span);
	if (--t->polls_left == 0)
		return POLL_READY;
	t->resched = RESCHED_YIELD;
	return POLL_PENDING;
}

static DEMO_FRAME enum poll_result bench_poll(struct worker *w, struct task *t)
{
	if (is_stopping(w)) {
		if (t->span)
			d9_span_close(t->span);
		return POLL_READY;
	}
	if (env.bench_spans && !t->span) {
		t->span = atomic_fetch_add(&w->rt->next_span, 1);
		d9_span_new(t->span, 0, "request");
		t->polls_left = (unsigned)env.bench_spans;
	}
	if (t->span)
		d9_span_enter(t->span);
	demo_bench_work();
	if (t->span) {
		d9_span_exit(t->span);
		if (--t->polls_left == 0) {
			d9_span_close(t->span);
			t->span = 0;
		}
	}
	t->resched = RESCHED_YIELD;
	return POLL_PENDING;
}

static enum poll_result (*const poll_fn[NR_KINDS])(struct worker *, struct task *) = {
	[KIND_CPU_HOG] = cpu_hog_poll, [KIND_BLOCKER] = blocker_poll,
	[KIND_TICKER] = ticker_poll,   [KIND_SPAWNER] = spawner_poll,
	[KIND_SHORT] = short_poll,     [KIND_BENCH] = bench_poll,
};

/* ---- workers ---------------------------------------------------------- */

static void task_finish(struct worker *w, struct task *t)
{
	struct runtime *rt = w->rt;

	d9_task_end(t->id);
	w->ended[t->kind]++;
	if (t->batch && atomic_fetch_sub(&t->batch->left, 1) == 1) {
		d9_span_close(t->batch->span);
		free(t->batch);
	}
	free(t);
	if (atomic_fetch_sub(&rt->live, 1) == 1 && atomic_load(&rt->stopping)) {
		pthread_mutex_lock(&rt->inj_lock);
		pthread_cond_broadcast(&rt->inj_cond);
		pthread_mutex_unlock(&rt->inj_lock);
	}
}

static DEMO_FRAME void run_poll(struct worker *w, struct task *t)
{
	enum poll_result r;

	d9_poll_begin(t->id);
	r = poll_fn[t->kind](w, t);
	/* a yield: runnable again as its poll returns, a wake of the task
	 * this thread polls (the shim reads no clock for it, d9prof.h) */
	if (r == POLL_PENDING && t->resched == RESCHED_YIELD)
		d9_task_wake(t->id);
	d9_poll_end(t->id);
	w->polls[t->kind]++;

	if (r == POLL_READY) {
		task_finish(w, t);
	} else if (t->resched == RESCHED_YIELD) {
		lq_push(w, &t, 1);
	} else {
		timer_add(w->rt, t);
	}
}

static DEMO_FRAME void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct task *t;
	char name[32];

	snprintf(name, sizeof(name), "d9demo-worker-%u", w->index);
	d9_thread_start(name);
	name[15] = '\0'; /* the kernel's comm limit */
	pthread_setname_np(pthread_self(), name);

	while ((t = next_task(w)))
		run_poll(w, t);

	d9_thread_stop();
	return NULL;
}

/* ---- setup, stop, summary --------------------------------------------- */

static int runtime_init(struct runtime *rt, unsigned nr_workers, bool bench)
{
	pthread_condattr_t ca;
	int err;

	memset(rt, 0, sizeof(*rt));
	rt->nr_workers = nr_workers;
	rt->bench = bench;
	atomic_init(&rt->next_id, 1);
	atomic_init(&rt->next_span, 1);
	rt->workers = aligned_alloc(64, nr_workers * sizeof(*rt->workers));
	if (!rt->workers)
		return -ENOMEM;
	memset(rt->workers, 0, nr_workers * sizeof(*rt->workers));
	for (unsigned i = 0; i < nr_workers; i++) {
		rt->workers[i].rt = rt;
		rt->workers[i].index = i;
		pthread_mutex_init(&rt->workers[i].lq.lock, NULL);
	}
	pthread_mutex_init(&rt->inj_lock, NULL);
	pthread_cond_init(&rt->inj_cond, NULL);
	pthread_mutex_init(&rt->timer.lock, NULL);
	pthread_condattr_init(&ca);
	err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&rt->timer.cond, &ca);
	pthread_condattr_destroy(&ca);
	return -err;
}

static void runtime_release(struct runtime *rt)
{
	for (unsigned i = 0; i < rt->nr_workers; i++)
		pthread_mutex_destroy(&rt->workers[i].lq.lock);
	free(rt->workers);
	pthread_mutex_destroy(&rt->inj_lock);
	pthread_cond_destroy(&rt->inj_cond);
	pthread_mutex_destroy(&rt->timer.lock);
	pthread_cond_destroy(&rt->timer.cond);
	free(rt->timer.heap);
}

static void spawn_initial(struct runtime *rt)
{
	static const enum task_kind demo_kinds[] = {
		KIND_CPU_HOG,
		KIND_BLOCKER,
		KIND_TICKER,
		KIND_SPAWNER,
	};
	struct task *head = NULL, *tail = NULL;
	size_t n;

	n = rt->bench ? (size_t)rt->nr_workers * BENCH_TASKS_PER_WORKER
		      : sizeof(demo_kinds) / sizeof(demo_kinds[0]);
	for (size_t i = 0; i < n; i++) {
		struct task *t = task_new(rt, rt->bench ? KIND_BENCH : demo_kinds[i]);

		if (!t)
			die("cannot spawn tasks", ENOMEM);
		if (tail)
			tail->next = t;
		else
			head = t;
		tail = t;
	}
	inj_push(rt, head, tail, n);
}

/* Wait for SIGINT/SIGTERM (blocked in every thread) or @seconds. */
static void wait_for_stop(double seconds)
{
	uint64_t end = seconds > 0 ? now_ns() + (uint64_t)(seconds * 1e9) : 0;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	for (;;) {
		uint64_t now, left;
		struct timespec ts;

		if (!end) {
			if (sigwaitinfo(&set, NULL) >= 0)
				return;
			continue;
		}
		now = now_ns();
		if (now >= end)
			return;
		left = end - now;
		ts.tv_sec = left / NSEC_PER_SEC;
		ts.tv_nsec = left % NSEC_PER_SEC;
		if (sigtimedwait(&set, NULL, &ts) >= 0)
			return;
	}
}

static void summary(struct runtime *rt, double elapsed)
{
	uint64_t polls[NR_KINDS] = {0}, ended[NR_KINDS] = {0}, total = 0;

	for (unsigned i = 0; i < rt->nr_workers; i++) {
		for (int k = 0; k < NR_KINDS; k++) {
			polls[k] += rt->workers[i].polls[k];
			ended[k] += rt->workers[i].ended[k];
		}
	}
	for (int k = 0; k < NR_KINDS; k++)
		total += polls[k];

	if (rt->bench)
		printf("polls_per_sec %.0f\n", total / elapsed);
	if (env.quiet)
		return;
	fprintf(stderr, "demo: elapsed %.3f s, %u workers, %" PRIu64 " polls (%.0f/s)\n",
		elapsed, rt->nr_workers, total, total / elapsed);
	for (int k = 0; k < NR_KINDS; k++) {
		uint64_t spawned = atomic_load(&rt->spawned[k]);

		if (!spawned)
			continue;
		fprintf(stderr,
			"demo: %-8s tasks %8" PRIu64 " ended %8" PRIu64
			" polls %10" PRIu64 "\n",
			kind_name[k], spawned, ended[k], polls[k]);
	}
	fprintf(stderr, "demo: blocked_us %" PRIu64 "\n",
		atomic_load(&blocked_ns) / 1000);
	for (unsigned i = 0; i < rt->nr_workers; i++) {
		uint64_t n = 0;

		for (int k = 0; k < NR_KINDS; k++)
			n += rt->workers[i].polls[k];
		fprintf(stderr, "demo: worker %u polls %" PRIu64 "\n", i, n);
	}
}

static void usage(FILE *f)
{
	fputs("usage: demo [-w WORKERS] [-d SECONDS] [-q]\n"
	      "       demo --bench-polls [--bench-work-ns NS | --bench-iters N] [--bench-spans N]\n"
	      "                          [-w WORKERS]\n"
	      "                          [-d SECONDS] [-q]\n"
	      "\n"
	      "A small async runtime instrumented with the d9prof shim.\n"
	      "\n"
	      "  -w, --workers N     worker threads (default 2, at most 64)\n"
	      "  -d, --duration S    stop after S seconds (default: at SIGINT or\n"
	      "                      SIGTERM; 5 with --bench-polls)\n"
	      "  -q, --quiet         print only the protocol lines on stdout\n"
	      "      --bench-polls   poll-heavy benchmark; prints polls_per_sec\n"
	      "      --bench-work-ns NS\n"
	      "                      work per benchmark poll, ns (default 1500:\n"
	      "                      ~1M polls/s on 2 workers; 8000: ~200k)\n"
	      "      --bench-iters N work per benchmark poll, hash iterations (the\n"
	      "                      same work in every run: runs compared side by\n"
	      "                      side need no calibration of theirs to agree)\n"
	      "      --bench-spans N each task's polls as requests of N polls: a span\n"
	      "                      \"request\" entered around each, closed after the last\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "stdout: 'pid PID', then 'task ID NAME FUNCTION' for tasks 1-4,\n"
	      "then 'ready'; with --bench-polls 'pid PID', 'ready' and at exit\n"
	      "'polls_per_sec N'.\n"
	      "\n"
	      "EXAMPLES\n"
	      "  demo -d 10 &  d9prof record -p $! -- sleep 3\n"
	      "  demo --bench-polls -w 2 -d 5\n"
	      "  demo --bench-polls --bench-work-ns 8000 -w 2 -d 5\n",
	      f);
}

/* Option @s as a whole number in [@lo, @hi], else a line "demo: invalid
 * WHAT 's'" (and @why after it) and exit 2. */
static long long_arg(const char *s, long lo, long hi, const char *what, const char *why)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || end == s || n < lo || n > hi) {
		fprintf(stderr, "demo: invalid %s '%s'%s\n", what, s, why);
		exit(2);
	}
	return n;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"workers", required_argument, NULL, 'w'},
		{"duration", required_argument, NULL, 'd'},
		{"quiet", no_argument, NULL, 'q'},
		{"bench-polls", no_argument, NULL, 'B'},
		{"bench-work-ns", required_argument, NULL, 'W'},
		{"bench-spans", required_argument, NULL, 'S'},
		{"bench-iters", required_argument, NULL, 'I'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "w:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			env.workers = (unsigned)long_arg(optarg, 1, MAX_WORKERS,
							 "worker count", "");
			break;
		case 'd':
			errno = 0;
			env.seconds = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(env.seconds > 0) ||
			    !isfinite(env.seconds)) {
				fprintf(stderr, "demo: invalid duration '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'q':
			env.quiet = true;
			break;
		case 'B':
			env.bench = true;
			break;
		case 'W':
			env.bench_work_ns = long_arg(optarg, 0, 1000000000L,
						     "work per poll", " (ns, 0 to 1e9)");
			break;
		case 'I':
			env.bench_iters = long_arg(optarg, 1, 1000000000L,
						   "iterations a poll", " (1 to 1e9)");
			break;
		case 'S':
			env.bench_spans = long_arg(optarg, 1, 1000000L, "polls a span",
						   " (1 to 1000000)");
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "demo: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if ((env.bench_work_ns >= 0 || env.bench_iters || env.bench_spans) &&
	    !env.bench) {
		fprintf(stderr,
			"demo: --bench-work-ns, --bench-iters and --bench-spans need "
			"--bench-polls\n");
		usage(stderr);
		exit(2);
	}
	if (env.bench && !env.seconds)
		env.seconds = BENCH_DEFAULT_SECONDS;
}

int main(int argc, char **argv)
{
	struct runtime rt;
	uint64_t t0, t1;
	sigset_t set;
	int err;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);

	/* every thread inherits this mask; main takes the signals in sigwait */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	err = d9_init();
	if (err)
		note("cannot set up the d9prof shim, running without it: %s",
		     strerror(-err));
	printf("pid %d\n", (int)getpid());

	calibrate();
	err = runtime_init(&rt, env.workers, env.bench);
	if (err)
		die("cannot set up the runtime", -err);
	spawn_initial(&rt);

	err = pthread_create(&rt.timer.thread, NULL, timer_main, &rt);
	if (err)
		die("cannot start the timer thread", err);
	t0 = now_ns();
	for (unsigned i = 0; i < rt.nr_workers; i++) {
		err = pthread_create(&rt.workers[i].thread, NULL, worker_main,
				     &rt.workers[i]);
		if (err)
			die("cannot start a worker thread", err);
	}

	if (!env.bench) {
		printf("task 1 cpu_hog demo_hot_spin\n");
		printf("task 2 blocker demo_blocking_read\n");
		printf("task 3 ticker demo_tick_work\n");
		printf("task 4 spawner demo_short_work\n");
	}
	printf("ready\n");
	fflush(stdout);
	if (env.seconds > 0)
		note("%u workers, %.0f hash iterations/us, running for %g s", env.workers,
		     iters_per_us, env.seconds);
	else
		note("%u workers, %.0f hash iterations/us, stop with SIGINT or SIGTERM",
		     env.workers, iters_per_us);

	wait_for_stop(env.seconds);

	atomic_store(&rt.stopping, true);
	pthread_mutex_lock(&rt.timer.lock);
	rt.timer.stop_req = true;
	pthread_cond_signal(&rt.timer.cond);
	pthread_mutex_unlock(&rt.timer.lock);
	pthread_join(rt.timer.thread, NULL);
	pthread_mutex_lock(&rt.inj_lock);
	pthread_cond_broadcast(&rt.inj_cond);
	pthread_mutex_unlock(&rt.inj_lock);
	for (unsigned i = 0; i < rt.nr_workers; i++)
		pthread_join(rt.workers[i].thread, NULL);
	t1 = now_ns();

	summary(&rt, (double)(t1 - t0) / 1e9);
	runtime_release(&rt);
	fflush(stdout);
	return 0;
}
