// SPDX-License-Identifier: MIT
/*
 * The ctimer sampler of the shim: the frame-pointer walker on crafted
 * stacks, and the timers and their signal against a recorder played
 * in-process with the d9_segment.h consumer functions. Criterion runs each
 * test in its own process, so each starts with a fresh shim and signal
 * dispositions.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"
#include "libprof/ctimer.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "tests/shim_recorder.h"

TestSuite(fpwalk);
TestSuite(ctimer);

/* ---- the walker on crafted stacks ------------------------------------------ */

#define WORDS 1024
static uint64_t stk[WORDS] __attribute__((aligned(16)));

static uintptr_t at(unsigned int i)
{
	return (uintptr_t)&stk[i];
}

/* A frame at word @i: saved fp -> @next (an address), return address @ret. */
static void frame(unsigned int i, uintptr_t next, uint64_t ret)
{
	stk[i] = next;
	stk[i + 1] = ret;
}

static unsigned int walk(uintptr_t fp, uintptr_t sp, uint64_t *ips, unsigned int max,
			 uint32_t *flags)
{
	struct d9_fp_regs regs = {.ip = 0x1000, .fp = fp, .sp = sp};

	*flags = 0;
	return d9__fp_walk(&regs, at(0), at(WORDS), ips, max, flags);
}

Test(fpwalk, follows_a_good_chain_to_its_end)
{
	uint64_t ips[16];
	uint32_t flags;
	unsigned int n;

	memset(stk, 0, sizeof(stk));
	frame(4, at(10), 0x2001);
	frame(10, at(20), 0x3001);
	frame(20, 0, 0x4001); /* outermost: saved fp 0 */
	n = walk(at(4), at(2), ips, 16, &flags);
	cr_assert_eq(n, 4);
	cr_assert_eq(ips[0], 0x1000);
	cr_assert_eq(ips[1], 0x2001);
	cr_assert_eq(ips[2], 0x3001);
	cr_assert_eq(ips[3], 0x4001);
	cr_assert_eq(flags, 0);
}

Test(fpwalk, stops_at_a_misaligned_frame)
{
	uint64_t ips[16];
	uint32_t flags;

	memset(stk, 0, sizeof(stk));
	frame(4, at(10) + 4, 0x2001);
	frame(10, at(20), 0x3001);
	cr_assert_eq(walk(at(4), at(2), ips, 16, &flags), 2);
	cr_assert_eq(walk(at(4) + 1, at(2), ips, 16, &flags), 1);
}

Test(fpwalk, stops_when_frames_do_not_go_up)
{
	uint64_t ips[16];
	uint32_t flags;

	memset(stk, 0, sizeof(stk));
	frame(10, at(20), 0x2001);
	frame(20, at(10), 0x3001); /* a loop back down */
	frame(30, at(30), 0x4001); /* a frame pointing at itself */
	cr_assert_eq(walk(at(10), at(2), ips, 16, &flags), 3);
	cr_assert_eq(walk(at(30), at(2), ips, 16, &flags), 2);
}

Test(fpwalk, stays_inside_the_stack)
{
	uint64_t ips[16];
	uint32_t flags;

	memset(stk, 0, sizeof(stk));
	frame(10, at(WORDS), 0x2001);	   /* next frame just past the top */
	frame(20, at(WORDS - 1), 0x3001);  /* a pair that would straddle it */
	frame(30, (uintptr_t)-64, 0x4001); /* far away */
	cr_assert_eq(walk(at(10), at(2), ips, 16, &flags), 2);
	cr_assert_eq(walk(at(20), at(2), ips, 16, &flags), 2);
	cr_assert_eq(walk(at(30), at(2), ips, 16, &flags), 2);
	/* a frame pointer below the interrupted stack pointer is not read */
	cr_assert_eq(walk(at(10), at(12), ips, 16, &flags), 1);
}

Test(fpwalk, stops_at_the_depth_limit)
{
	uint64_t ips[D9_SAMPLE_MAX_FRAMES];
	uint32_t flags;
	unsigned int i, n;

	memset(stk, 0, sizeof(stk));
	for (i = 0; i + 4 < WORDS; i += 4)
		frame(i, at(i + 4), 0x5000 + i);
	n = walk(at(0), at(0), ips, D9_SAMPLE_MAX_FRAMES, &flags);
	cr_assert_eq(n, D9_SAMPLE_MAX_FRAMES);
	cr_assert_eq(flags & D9_SAMPLE_TRUNCATED, D9_SAMPLE_TRUNCATED);
	cr_assert_eq(ips[1], 0x5000);
	cr_assert_eq(ips[n - 1], 0x5000 + 4 * (n - 2));
}

Test(fpwalk, off_the_known_stack_reads_cannot_fault)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *w, ips[16];
	struct d9_fp_regs regs;
	uint32_t flags = 0;

	cr_assert_neq(p, MAP_FAILED);
	w = (uint64_t *)p;
	/* a chain on a "coroutine stack" that runs into an unmapped page */
	w[0] = (uintptr_t)&w[8];
	w[1] = 0x2001;
	w[8] = (uintptr_t)(p + page); /* the next page, unmapped below */
	w[9] = 0x3001;
	cr_assert_eq(munmap(p + page, page), 0);
	regs = (struct d9_fp_regs){.ip = 0x1000, .fp = (uintptr_t)w, .sp = (uintptr_t)w};
	/* sp outside [lo, hi): probed reads */
	cr_assert_eq(d9__fp_walk(&regs, at(0), at(WORDS), ips, 16, &flags), 3);
	cr_assert_eq(ips[2], 0x3001);
	/* and no known stack at all */
	cr_assert_eq(d9__fp_walk(&regs, 0, 0, ips, 16, &flags), 3);
	munmap(p, page);
}

/* ---- timers and signals -------------------------------------------------- */

static struct d9_seg_hdr *start(unsigned int hz)
{
	struct d9_seg_hdr *h;

	cr_assert_eq(d9_init(), 0);
	h = d9__segment();
	cr_assert_not_null(h);
	d9_thread_start("ct-test");
	d9_seg_attach(h, lay(h), (uint32_t)getpid(), lease());
	d9_seg_request(h, D9_REQ_CTIMER, hz);
	return h;
}

static volatile uint64_t sink;

/* Burn @ms of this thread's CPU time inside a poll of @task. */
/* the last burn()'s poll, on the segment's clock: from just after its
 * begin marker to just before its end marker */
static uint64_t poll_from, poll_to;

static __attribute__((noinline)) void burn(uint64_t task, unsigned int ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	d9_poll_begin(task);
	poll_from = seg_now();
	do {
		for (int i = 0; i < 10000; i++)
			sink = sink * 6364136223846793005ULL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) <
		 (long long)ms * 1000000);
	poll_to = seg_now();
	d9_poll_end(task);
}

static struct d9_ring_hdr *my_ring(struct d9_seg_hdr *h, uint32_t *idx)
{
	uint32_t i, tid = (uint32_t)gettid();

	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(h, lay(h), i);

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == D9_RING_LIVE &&
		    __atomic_load_n(&r->tid, __ATOMIC_RELAXED) == tid) {
			*idx = i;
			return r;
		}
	}
	cr_assert_fail("no ring");
	return NULL;
}

/* Take every pending sample of our slot; check them (those taken inside
 * the last burn()'s poll carry its @task; outside it, between markers,
 * none); return the weight. */
static uint64_t take_all(struct d9_seg_hdr *h, uint64_t task, uint64_t t0, uint64_t *n)
{
	uint32_t idx;
	struct d9_ring_hdr *r = my_ring(h, &idx);
	uint64_t *words = d9_layout_samples(h, lay(h), idx), w = 0, inside = 0;
	static struct d9_sample s;

	*n = 0;
	while (d9_sample_take(r, words, lay(h)->sample_words, &s)) {
		cr_assert_eq(s.tid, (uint32_t)gettid());
		cr_assert_geq(s.time, t0);
		cr_assert_leq(s.time, seg_now());
		cr_assert_geq(s.nframes, 2, "only %u frames", s.nframes);
		if (task && s.time >= poll_from && s.time <= poll_to) {
			cr_assert_eq(s.task, task, "task %llu inside the poll",
				     (unsigned long long)s.task);
			inside++;
		} else if (task) {
			cr_assert(s.task == task || s.task == 0,
				  "task %llu outside the poll",
				  (unsigned long long)s.task);
		}
		w += s.weight;
		(*n)++;
	}
	if (task)
		cr_assert_gt(inside, 0, "no sample inside the poll");
	return w;
}

Test(ctimer, samples_carry_thread_time_task_and_weight)
{
	struct d9_seg_hdr *h = start(1000);
	uint64_t t0 = seg_now(), n, w;

	burn(42, 1); /* the first marker arms */
	take_all(h, 0, t0, &n);
	cr_assert_eq(h->ctimer_status, D9_CTIMER_ON);
	cr_assert_eq(h->ctimer_threads, 1);
	burn(42, 200);
	w = take_all(h, 42, t0, &n);
	/* a CPU-clock timer fires on the scheduler tick: overruns carry the
	 * rest, so the weight is the CPU time whatever the tick */
	cr_assert(w >= 120 && w <= 260, "weight %llu for 200 ms at 1 kHz",
		  (unsigned long long)w);
	cr_assert_gt(n, 10);
}

Test(ctimer, stack_request_adds_sp_fp_and_the_top_of_the_stack)
{
	struct d9_seg_hdr *h = start(1000);
	uint64_t t0 = seg_now(), n;
	uint32_t idx, with = 0, i;
	volatile int here = 0;
	struct d9_ring_hdr *r;
	uint64_t *words;
	static struct d9_sample s;

	burn(5, 1);
	take_all(h, 0, t0, &n);
	/* without D9_REQ_STACK: the old format, no stack words */
	burn(5, 50);
	r = my_ring(h, &idx);
	words = d9_layout_samples(h, lay(h), idx);
	while (d9_sample_take(r, words, lay(h)->sample_words, &s))
		cr_assert_eq(s.flags & D9_SAMPLE_STACK, 0);
	d9_seg_request(h, D9_REQ_CTIMER | D9_REQ_STACK, 1000);
	burn(5, 100);
	while (d9_sample_take(r, words, lay(h)->sample_words, &s)) {
		if (!(s.flags & D9_SAMPLE_STACK))
			continue;
		with++;
		cr_assert_eq(s.nstack, D9_SAMPLE_MAX_STACK);
		/* the copy is of this thread's stack, from the interrupted SP
		 * (which lies below this frame, inside burn()) */
		cr_assert_lt(s.sp, (uint64_t)(uintptr_t)&here);
		cr_assert_gt(s.sp, (uint64_t)(uintptr_t)&here - (1u << 20));
		cr_assert_leq(s.sp, s.fp, "sp %llx fp %llx", (unsigned long long)s.sp,
			      (unsigned long long)s.fp);
		/* burn() has its frame: the walk's first return address is
		 * stored at fp + 8, inside the copy when fp is near sp */
		if (s.fp - s.sp + 16 <= 8u * D9_SAMPLE_MAX_STACK) {
			i = (uint32_t)((s.fp - s.sp) / 8);
			cr_assert_eq(s.stack[i + 1], s.ips[1]);
		}
	}
	cr_assert_gt(with, 10, "%u samples with a stack", with);
}

/* POSIX timers of this process, from /proc/self/timers */
static int nr_timers(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/timers", "re");
	int n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "ID:", 3);
	fclose(f);
	return n;
}

Test(ctimer, detach_and_lapsed_lease_stop_the_timer)
{
	struct d9_seg_hdr *h = start(1000);
	uint64_t t0 = seg_now(), n;

	burn(7, 50);
	take_all(h, 0, t0, &n);
	cr_assert_gt(n, 0);
	d9_seg_detach(h);
	burn(7, 50); /* detached markers do not look: the handler stops it */
	cr_assert_eq(h->ctimer_threads, 0);
	take_all(h, 0, t0, &n);
	cr_assert_leq(n, 1);
	burn(7, 50);
	take_all(h, 0, t0, &n);
	cr_assert_eq(n, 0);
	/* the timer is gone, not only disarmed */
	cr_assert_eq(nr_timers(), 0);

	/* attach again: re-armed; then let the lease lapse */
	d9_seg_attach(h, lay(h), (uint32_t)getpid(), lease());
	d9_seg_request(h, D9_REQ_CTIMER, 1000);
	burn(7, 50);
	cr_assert_eq(h->ctimer_threads, 1);
	__atomic_store_n(&h->lease_deadline, seg_now() - 1, __ATOMIC_RELEASE);
	burn(7, 50);
	cr_assert_eq(h->attached, 0);
	cr_assert_eq(h->ctimer_threads, 0);
	cr_assert_eq(nr_timers(), 0);
}

Test(ctimer, thread_stop_disarms_and_keeps_samples_for_the_recorder)
{
	struct d9_seg_hdr *h = start(1000);
	uint32_t idx;
	struct d9_ring_hdr *r;

	burn(3, 50);
	r = my_ring(h, &idx);
	cr_assert_neq(r->sample_head, r->sample_tail);
	d9_thread_stop();
	cr_assert_eq(h->ctimer_threads, 0);
	cr_assert_eq(r->state, D9_RING_DEAD,
		     "samples pending: the ring waits for the recorder");
	cr_assert_eq(d9_ring_reap(r), 0);
	r->tail = r->head;
	cr_assert_eq(d9_ring_reap(r), 0, "reaped with samples pending");
	r->sample_tail = r->sample_head;
	cr_assert_eq(d9_ring_reap(r), 1);
}

static volatile sig_atomic_t app_calls, app_siginfo_ok;

static void app_handler(int sig, siginfo_t *si, void *uc)
{
	app_calls++;
	if (si && si->si_code == SI_QUEUE && si->si_value.sival_int == 77)
		app_siginfo_ok = 1;
}

static void install_app_handler(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = app_handler;
	sa.sa_flags = SA_SIGINFO;
	cr_assert_eq(sigaction(sig, &sa, NULL), 0);
}

Test(ctimer, avoids_a_signal_the_application_handles)
{
	int cand[16], n = d9__ctimer_candidates(cand, 16);
	struct d9_seg_hdr *h;

	cr_assert_geq(n, 2);
	install_app_handler(cand[0]);
	h = start(1000);
	burn(1, 20);
	cr_assert_eq(h->ctimer_status, D9_CTIMER_ON);
	cr_assert_eq(h->ctimer_signal, (uint32_t)cand[1]);
	cr_assert_eq(app_calls, 0);
}

Test(ctimer, no_free_signal_is_reported_not_forced)
{
	int cand[16], n = d9__ctimer_candidates(cand, 16), i;
	struct d9_seg_hdr *h;

	for (i = 0; i < n; i++)
		install_app_handler(cand[i]);
	h = start(1000);
	burn(1, 20);
	cr_assert_eq(h->ctimer_status, D9_CTIMER_NOSIG);
	cr_assert_eq(h->ctimer_threads, 0);
}

Test(ctimer, chains_other_signals_to_the_application_handler)
{
	union sigval v = {.sival_int = 77};
	struct d9_seg_hdr *h;
	uint64_t n, t0 = seg_now();

	install_app_handler(SIGPROF);
	setenv("D9PROF_SIGNAL", "SIGPROF", 1);
	h = start(1000);
	burn(5, 100);
	cr_assert_eq(h->ctimer_status, D9_CTIMER_ON);
	cr_assert_eq(h->ctimer_signal, SIGPROF);
	/* our timer's signals are ours: the application saw none */
	cr_assert_eq(app_calls, 0);
	take_all(h, 5, t0, &n);
	cr_assert_gt(n, 0);
	/* anyone else's go to the application's handler, siginfo intact */
	cr_assert_eq(sigqueue(getpid(), SIGPROF, v), 0);
	cr_assert_eq(app_calls, 1);
	cr_assert_eq(app_siginfo_ok, 1);
}
