// SPDX-License-Identifier: MIT
/*
 * bench_shim: the cost of the shim's markers, next to the cost of one
 * clock_gettime(CLOCK_MONOTONIC) measured in the same run.
 *
 *   bench_shim            detached figures only
 *   bench_shim --attach   then prints "pid N", waits up to 20 s for a
 *                         recorder (d9prof record -p N) to attach, and
 *                         measures attached, on 1 and 2 threads
 *
 * Output: "key value" lines, for scripts/bench.sh.
 *
 * Attached, the markers run in bursts of BURST pairs every GAP_US: a
 * recorder drains every 20 ms, so an unpaced loop (tens of millions of
 * records per second) measures ring overflow, not the marker. The pacing
 * is 400k records/s per thread, twice the poll rate of a busy runtime.
 * A round's figure is its median burst, so that a burst preempted by the
 * recorder or anything else on a shared machine does not skew it; ROUNDS
 * rounds alternate 1 and 2 threads after one of each not counted (the
 * first touch of the rings' pages), and each figure is the median round,
 * printed with every round's ("..._rounds", comma-separated).
 *
 * Spans (d9prof.h) the same way, on 1 thread, in the same rounds: an
 * enter+exit pair alone ("span_pair"), a poll pair with an enter+exit pair
 * inside it ("poll_span", the four markers), and an application event
 * with a name and a value ("event", per call); detached, an enter+exit
 * pair.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "libprof/shim_clock.h"
#include "tests/shim_recorder.h"

#define BURST  2048
#define GAP_US 10000
#define BURSTS 30 /* per round */
#define ROUNDS 5

/* ns per call of @read, best of 5 rounds (inlined: @read is a constant) */
static inline __attribute__((always_inline)) double read_cost(uint64_t (*read)(void))
{
	double best = 1e9;
	int r, i;

	for (r = 0; r < 5; r++) {
		uint64_t t0 = now_ns(), sink = 0;

		for (i = 0; i < 2000000; i++)
			sink += read();
		__asm__ volatile("" : : "r"(sink));
		double ns = (double)(now_ns() - t0) / 2000000;
		if (ns < best)
			best = ns;
	}
	return best;
}

static double clock_cost(void)
{
	return read_cost(now_ns);
}

/* One rdtsc, the clock the attached markers read where the TSC is
 * usable (shim_clock.h): the floor of a marker that stamps its record;
 * 0 where the shim reads clock_gettime instead. */
static double rdtsc_cost(void)
{
	return d9__clock_tsc ? read_cost(d9__clock_now) : 0;
}

/* What a worker's loop calls: the markers measured. */
enum mode {
	MODE_POLL,	/* d9_poll_begin, d9_poll_end */
	MODE_SPAN,	/* d9_span_enter, d9_span_exit */
	MODE_POLL_SPAN, /* a span entered and exited inside a poll */
	MODE_EVENT,	/* d9_event with a name and a value */
};

static inline __attribute__((always_inline)) void markers(enum mode m, uint64_t i)
{
	switch (m) {
	case MODE_POLL:
		/* a runtime polls its tasks again and again: 64 of them (a
		 * lean recording sums per task; a new task each poll would
		 * measure its tables' turnover) */
		d9_poll_begin((i & 63) + 1);
		d9_poll_end((i & 63) + 1);
		break;
	case MODE_SPAN:
		d9_span_enter(i);
		d9_span_exit(i);
		break;
	case MODE_POLL_SPAN:
		d9_poll_begin((i & 63) + 1);
		d9_span_enter(i);
		d9_span_exit(i);
		d9_poll_end((i & 63) + 1);
		break;
	case MODE_EVENT:
		d9_event("bench", (int64_t)i, NULL);
		break;
	}
}

static double detached_cost(enum mode m)
{
	double best = 1e9;
	uint64_t i, n = 50000000;
	int r;

	for (r = 0; r < 5; r++) {
		uint64_t t0 = now_ns();

		for (i = 1; i <= n; i++)
			markers(m, i);
		double ns = (double)(now_ns() - t0) / (double)n;
		if (ns < best)
			best = ns;
	}
	return best;
}

struct worker {
	pthread_t th;
	uint64_t base;
	enum mode mode;
	uint64_t burst_ns[BURSTS]; /* time of each burst */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *attached_worker(void *arg)
{
	struct worker *w = arg;
	struct timespec gap = {0, GAP_US * 1000};
	int b, i;

	d9_thread_start("bench");
	for (b = 0; b < BURSTS; b++) {
		uint64_t t0 = now_ns();

		for (i = 0; i < BURST; i++)
			markers(w->mode, w->base + i + 1);
		w->burst_ns[b] = now_ns() - t0;
		nanosleep(&gap, NULL);
	}
	d9_thread_stop();
	return NULL;
}

/* Each ring's owner generation and drop count, into @v; with @since, the
 * drops since then (a thread that takes a ring starts its count at 0). */
struct ring_count {
	uint64_t gen, drops;
};

static uint64_t ring_drops(void *seg, struct ring_count *v,
			   const struct ring_count *since)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < D9_SEG_RINGS; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(seg, lay(seg), i);

		v[i].gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
		v[i].drops = d9_ring_drops(r);
		if (since)
			total += v[i].gen == since[i].gen ? v[i].drops - since[i].drops
							  : v[i].drops;
	}
	return total;
}

/* ns per pair (or per call of @m) on @n threads at once (the slowest
 * thread's figure). */
static double attached_cost(int n, enum mode m, uint64_t *drops, void *seg)
{
	struct worker w[2];
	static struct ring_count d0[D9_SEG_RINGS], d1[D9_SEG_RINGS];
	double worst = 0;
	int i;

	ring_drops(seg, d0, NULL);
	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w[i].base = (uint64_t)(i + 1) << 32;
		w[i].mode = m;
		pthread_create(&w[i].th, NULL, attached_worker, &w[i]);
	}
	for (i = 0; i < n; i++) {
		double ns;

		pthread_join(w[i].th, NULL);
		/* the median burst: on a shared machine a burst that was
		 * preempted says nothing about the marker */
		qsort(w[i].burst_ns, BURSTS, sizeof(w[i].burst_ns[0]), cmp_u64);
		ns = (double)w[i].burst_ns[BURSTS / 2] / BURST;
		if (ns > worst)
			worst = ns;
	}
	*drops = ring_drops(seg, d1, d0);
	return worst;
}

/* "KEY median" and "KEY_rounds v1,v2,..." of @v (sorted here) */
static void print_rounds(const char *key, double *v)
{
	int i;

	printf("%s_rounds", key);
	for (i = 0; i < ROUNDS; i++)
		printf("%c%.2f", i ? ',' : ' ', v[i]);
	printf("\n");
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	printf("%s %.2f\n", key, v[ROUNDS / 2]);
}

int main(int argc, char **argv)
{
	int attach = argc > 1 && !strcmp(argv[1], "--attach");
	struct d9_seg_hdr *h;
	uint64_t drops = 0, d;
	double a1[ROUNDS], a2[ROUNDS], s1[ROUNDS], ps[ROUNDS], e1[ROUNDS];
	int i;

	if (d9_init() || !(h = d9__segment())) {
		fprintf(stderr, "bench_shim: d9_init failed\n");
		return 1;
	}
	printf("clock_gettime_ns %.2f\n", clock_cost());
	printf("rdtsc_ns %.2f\n", rdtsc_cost()); /* 0: the shim does not use the TSC */
	printf("detached_pair_ns %.2f\n", detached_cost(MODE_POLL));
	printf("detached_span_pair_ns %.2f\n", detached_cost(MODE_SPAN));
	fflush(stdout);
	if (!attach)
		return 0;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < 2000 && !__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	if (!h->attached) {
		fprintf(stderr, "bench_shim: no recorder attached within 20 s\n");
		return 1;
	}
	/* the recorder's start-up (its kallsyms snapshot) is over */
	usleep(500000);
	/* a round not counted: it faults in the pages of the rings the
	 * rounds' threads take (a thread that ends leaves its ring to the
	 * recorder to free: the next one may take a fresh one), what a
	 * runtime's threads pay once in the segment's life */
	attached_cost(1, MODE_POLL, &d, h);
	drops += d;
	attached_cost(2, MODE_POLL, &d, h);
	drops += d;
	for (i = 0; i < ROUNDS; i++) {
		a1[i] = attached_cost(1, MODE_POLL, &d, h);
		drops += d;
		a2[i] = attached_cost(2, MODE_POLL, &d, h);
		drops += d;
		s1[i] = attached_cost(1, MODE_SPAN, &d, h);
		drops += d;
		ps[i] = attached_cost(1, MODE_POLL_SPAN, &d, h);
		drops += d;
		e1[i] = attached_cost(1, MODE_EVENT, &d, h);
		drops += d;
	}
	print_rounds("attached_pair_ns_1t", a1);
	print_rounds("attached_pair_ns_2t", a2);
	print_rounds("attached_span_pair_ns", s1);
	print_rounds("attached_poll_span_ns", ps);
	print_rounds("attached_event_ns", e1);
	printf("attached_drops %llu\n", (unsigned long long)drops);
	printf("attached_clock_gettime_ns %.2f\n", clock_cost());
	return 0;
}
