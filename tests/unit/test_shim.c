#include <stdlib.h>
// SPDX-License-Identifier: MIT
/*
 * The runtime shim, with each test acting as the recorder in-process through
 * the consumer functions of d9_segment.h. Criterion runs every test in its
 * own process, so each starts with a fresh shim.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "tests/shim_recorder.h"
#include "trace/trace.h"

TestSuite(shim);
TestSuite(ring);
TestSuite(names);
TestSuite(thread);
TestSuite(fork);

static struct d9_seg_hdr *seg(void)
{
	struct d9_seg_hdr *h;

	cr_assert_eq(d9_init(), 0);
	h = d9__segment();
	cr_assert_not_null(h);
	return h;
}

static void attach(struct d9_seg_hdr *h)
{
	d9_seg_attach(h, lay(h), (uint32_t)getpid(), lease());
}

/* The ring owned by thread @tid, or NULL. */
static struct d9_ring_hdr *ring_of(struct d9_seg_hdr *h, pid_t tid)
{
	uint32_t i;

	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(h, lay(h), i);

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != D9_RING_FREE &&
		    __atomic_load_n(&r->tid, __ATOMIC_RELAXED) == (uint32_t)tid)
			return r;
	}
	return NULL;
}

static struct d9_ring_hdr *my_ring(struct d9_seg_hdr *h)
{
	struct d9_ring_hdr *r = ring_of(h, gettid());

	cr_assert_not_null(r, "the calling thread owns no ring");
	return r;
}

static size_t drain(struct d9_seg_hdr *h, struct d9_ring_hdr *r, struct d9_event *out,
		    size_t max)
{
	return d9_ring_consume(r, h->ring_events, out, max);
}

static uint64_t pending_everywhere(struct d9_seg_hdr *h)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(h, lay(h), i);

		n += __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) -
		     __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	}
	return n;
}

static void set_lease(struct d9_seg_hdr *h, uint64_t deadline)
{
	__atomic_store_n(&h->lease_deadline, deadline, __ATOMIC_RELEASE);
}

static struct d9_event *events(size_t n)
{
	struct d9_event *ev = calloc(n, sizeof(*ev));

	cr_assert_not_null(ev);
	return ev;
}

/* ---- shim ---------------------------------------------------------------- */

Test(shim, detached_markers_write_nothing)
{
	struct d9_seg_hdr *h = seg();
	uint32_t i;

	d9_thread_start("worker");
	d9_task_spawn(1, "task");
	d9_task_wake(1);
	d9_poll_begin(1);
	d9_poll_end(1);
	d9_park();
	d9_unpark();
	d9_task_end(1);
	d9_span_new(3, 0, "span");
	d9_span_enter(3);
	d9_span_field(3, "k", 1, NULL);
	d9_event("e", 1, "t");
	d9_span_exit(3);
	d9_span_close(3);
	d9_thread_stop();
	d9_poll_begin(2); /* a thread that never called d9_thread_start */

	cr_expect_eq(h->attached, 0);
	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(h, lay(h), i);

		cr_expect_eq(r->head, 0, "ring %u has records", i);
		cr_expect_eq(r->drops, 0);
	}
}

static void *init_thread(void *arg)
{
	*(int *)arg = d9_init();
	return d9__segment();
}

Test(shim, init_is_idempotent_and_thread_safe)
{
	pthread_t th[8];
	int err[8], i;
	void *first = NULL;

	for (i = 0; i < 8; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, init_thread, &err[i]), 0);
	for (i = 0; i < 8; i++) {
		void *got;

		pthread_join(th[i], &got);
		cr_expect_eq(err[i], 0);
		cr_expect_not_null(got);
		if (!first)
			first = got;
		cr_expect_eq(got, first, "two segments");
	}
	cr_expect_eq(d9_init(), 0);
	cr_expect_eq(d9__segment(), first);
}

Test(shim, segment_is_memfd_0600)
{
	struct d9_seg_hdr *h = seg();
	int fd = d9__segment_fd(), seals, n = 0;
	char line[512];
	struct stat st;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:" D9_SEG_NAME) != NULL;
	fclose(f);
	cr_expect_eq(n, 1, "%d segment mappings", n);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_expect_eq(st.st_uid, getuid());
	cr_expect_eq((uint64_t)st.st_size, h->seg_size);
	cr_expect_eq((size_t)st.st_size, d9__segment_size());
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);

	/* nobody holding the fd can shrink it under the shim's mapping */
	seals = fcntl(fd, F_GET_SEALS);
	cr_expect((seals & (F_SEAL_SHRINK | F_SEAL_GROW)) ==
		  (F_SEAL_SHRINK | F_SEAL_GROW));
	cr_expect_neq(ftruncate(fd, 4096), 0);
}

Test(shim, header_describes_its_layout)
{
	struct d9_seg_hdr *h = seg();

	cr_expect_eq(h->magic, D9_SEG_MAGIC);
	cr_expect_eq(h->version, D9_SEG_VERSION);
	cr_expect_eq(h->pid, (uint32_t)getpid());
	cr_expect_eq(h->clock, d9__clock_tsc ? D9_CLOCK_TSC : CLOCK_MONOTONIC);
	cr_expect_leq(h->create_time, seg_now());
	cr_expect_eq(h->nrings, D9_SEG_RINGS);
	cr_expect_eq(h->ring_events, D9_SEG_RING_EVENTS);
	cr_expect_eq(h->names_count, D9_SEG_NAMES);
	cr_expect_eq(h->ring_offset % 64, 0);
	cr_expect_eq(h->ring_stride % 64, 0);
	cr_expect_eq(h->names_offset % 64, 0);
	cr_expect_eq(d9_seg_check(h, d9__segment_size(), NULL), 0);
	cr_expect_eq(d9_seg_check(h, d9__segment_size() - 4096, NULL), -EINVAL);
}

Test(shim, clock_is_the_tsc_where_the_kernel_trusts_it)
{
	struct d9_seg_hdr *h = seg();
	char src[32] = "";
	FILE *f = fopen(
		"/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	uint64_t t0, t1;

	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = '\0';
		fclose(f);
	}
	/* rdtsc only where CLOCK_MONOTONIC itself runs off the TSC */
	if (h->clock == D9_CLOCK_TSC)
		cr_expect_str_eq(src, "tsc\n");
	else
		cr_expect_eq(h->clock, CLOCK_MONOTONIC);
	t0 = seg_now();
	usleep(1000);
	t1 = seg_now();
	cr_expect_gt(t1, t0);
}

Test(shim, d9prof_clock_monotonic_forces_clock_gettime)
{
	struct d9_seg_hdr *h;

	setenv("D9PROF_CLOCK", "monotonic", 1);
	h = seg();
	cr_expect_eq(h->clock, CLOCK_MONOTONIC);
	cr_expect_eq(d9__clock_tsc, 0);
}

Test(shim, attached_markers_record_in_order)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[16];
	uint64_t t0, t1;
	size_t n, i;
	static const struct {
		uint32_t type;
		uint64_t task;
	} want[] = {
		{D9_EV_THREAD_START, 0},		  /* implicit claim; task = tid */
		{D9_EV_WAKE, 7},	 {D9_EV_POLL, 7}, /* the whole poll, one record */
		{D9_EV_WAKER_DROP, 7},	 {D9_EV_PARK, 0},
		{D9_EV_UNPARK, 0},	 {D9_EV_TASK_END, 7},
	};

	attach(h);
	t0 = seg_now();
	d9_task_wake(7);
	d9_poll_begin(7);
	d9_poll_end(7);
	d9_task_waker_drop(7);
	d9_park();
	d9_unpark();
	d9_task_end(7);
	t1 = seg_now();

	n = drain(h, my_ring(h), ev, 16);
	cr_assert_eq(n, sizeof(want) / sizeof(want[0]), "%zu records", n);
	for (i = 0; i < n; i++) {
		cr_expect_eq(ev[i].type, want[i].type, "record %zu", i);
		cr_expect_eq(ev[i].task, i ? want[i].task : (uint64_t)gettid());
		if (ev[i].type == D9_EV_POLL) /* its length; it began after the wake */
			cr_expect(ev[i].time - ev[i].arg >= ev[i - 1].time);
		else
			cr_expect_eq(ev[i].arg, 0);
		cr_expect(ev[i].time >= t0 && ev[i].time <= t1);
		if (i)
			cr_expect_geq(ev[i].time, ev[i - 1].time);
	}
	cr_expect_eq(drain(h, my_ring(h), ev, 16), 0);
}

/* A payload's bytes as the recorder reads them: @k records after @ev. */
static const char *payload(const struct d9_event *ev, uint32_t k, size_t off)
{
	cr_assert_leq(k, D9_PAYLOAD_RECORDS);
	return (const char *)&ev[1] + off;
}

Test(shim, spans_and_events_are_records_with_payloads)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[32];
	char longname[200];
	uint64_t u;
	size_t n;

	attach(h);
	d9_park(); /* claim */
	drain(h, my_ring(h), ev, 32);
	d9_span_new(5, 4, "request");
	d9_span_enter(5);
	d9_span_field(5, "route", 0, "/slow");
	d9_span_field(5, "id", -42, NULL);
	d9_event("retry", 3, NULL);
	d9_span_exit(5);
	d9_span_close(5);
	n = drain(h, my_ring(h), ev, 32);
	/* NEW + 1 payload (8 + "request\0"), ENTER, FIELD + 1 (8 + "route\0"
	 * + "/slow\0"), FIELD + 1, EVENT + 1 ("retry\0\0"), EXIT, CLOSE */
	cr_assert_eq(n, 11, "%zu records", n);
	cr_expect_eq(ev[0].type, D9_EV_SPAN_NEW);
	cr_expect_eq(ev[0].task, 5);
	cr_expect_eq(ev[0].arg, 1);
	memcpy(&u, payload(ev, 1, 0), 8);
	cr_expect_eq(u, 4);
	cr_expect_str_eq(payload(ev, 1, 8), "request");
	cr_expect_eq(ev[2].type, D9_EV_SPAN_ENTER);
	cr_expect_eq(ev[2].task, 5);
	cr_expect_eq(ev[3].type, D9_EV_SPAN_FIELD);
	cr_expect_str_eq(payload(&ev[3], 1, 8), "route");
	cr_expect_str_eq(payload(&ev[3], 1, 14), "/slow");
	cr_expect_eq(ev[5].type, D9_EV_SPAN_FIELD);
	memcpy(&u, payload(&ev[5], 1, 0), 8);
	cr_expect_eq((int64_t)u, -42);
	cr_expect_str_eq(payload(&ev[5], 1, 8), "id");
	cr_expect_str_eq(payload(&ev[5], 1, 11), "");
	cr_expect_eq(ev[7].type, D9_EV_EVENT);
	cr_expect_eq(ev[7].task, 3);
	cr_expect_str_eq(payload(&ev[7], 1, 0), "retry");
	cr_expect_eq(ev[9].type, D9_EV_SPAN_EXIT);
	cr_expect_eq(ev[10].type, D9_EV_SPAN_CLOSE);

	/* long strings are cut to fit D9_PAYLOAD_RECORDS, NUL-terminated */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	d9_span_new(6, 0, longname);
	d9_event(longname, 1, longname);
	n = drain(h, my_ring(h), ev, 32);
	cr_assert_eq(n, 2 + 2 * D9_PAYLOAD_RECORDS);
	cr_expect_eq(ev[0].arg, D9_PAYLOAD_RECORDS);
	cr_expect_eq(strlen(payload(ev, 4, 8)), D9_PAYLOAD_BYTES - 9);
	cr_expect_eq(strlen(payload(&ev[5], 4, 0)), 47);
	cr_expect_eq(strlen(payload(&ev[5], 4, 48)), 47);
}

Test(shim, lease_expiry_detaches)
{
	struct d9_seg_hdr *h = seg();

	attach(h);
	cr_assert_eq(h->attached, 1);
	set_lease(h, 1); /* the recorder stopped renewing long ago */
	d9_poll_begin(1);
	cr_expect_eq(__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE), 0);
	d9_poll_end(1);
	cr_expect_eq(pending_everywhere(h), 0);
}

Test(shim, renew_reports_a_lapsed_lease)
{
	struct d9_seg_hdr *h = seg();

	attach(h);
	cr_expect_eq(d9_seg_renew(h, lease()), 0);
	cr_expect_gt(h->lease_deadline, seg_now());
	set_lease(h, 1);
	d9_park();
	cr_expect_eq(d9_seg_renew(h, lease()), -ETIMEDOUT);
	attach(h);
	d9_park();
	cr_expect_eq(pending_everywhere(h), 2); /* THREAD_START, PARK */
}

Test(shim, detach_stops_records)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];

	d9_thread_start(NULL);
	attach(h);
	cr_expect_eq(h->attach_count, 1);
	cr_expect_eq(h->recorder_pid, (uint32_t)getpid());
	d9_task_wake(2);
	d9_poll_begin(3);
	d9_seg_detach(h);
	d9_poll_end(3);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_WAKE);
	/* the poll in progress at the detach stays in the ring header */
	{
		uint64_t task, time, end;

		cr_assert_eq(d9_ring_open_poll(my_ring(h), h->attach_count, &task, &time,
					       &end),
			     1);
		cr_expect_eq(task, 3);
		cr_expect_geq(time, ev[0].time);
		cr_expect_eq(end, 0, "still in progress");
	}
}

Test(shim, attach_discards_stale_records)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];

	attach(h);
	d9_poll_begin(3);
	d9_poll_end(3);
	d9_seg_detach(h); /* without draining */
	attach(h);
	cr_expect_eq(drain(h, my_ring(h), ev, 8), 0);
	d9_park();
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_PARK);
}

/* Two places a runtime begins polls from (poll sites: return addresses
 * into these functions). */
static __attribute__((noinline)) void poll_from_a(uint64_t task)
{
	d9_poll_begin(task);
	d9_poll_end(task);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void poll_from_b(uint64_t task)
{
	/* (not the same code as poll_from_a: the compiler would fold them) */
	d9_poll_begin(task);
	d9_task_wake(task);
	d9_poll_end(task);
	__asm__ volatile("" ::: "memory");
}

/* Is @site a return address inside @fn (within @len bytes of its start)? */
static int site_in(uint64_t site, void (*fn)(uint64_t), uint64_t len)
{
	return site > (uint64_t)(uintptr_t)fn && site < (uint64_t)(uintptr_t)fn + len;
}

Test(shim, the_ring_names_where_polls_begin_once_each)
{
	struct d9_seg_hdr *h = seg();
	struct d9_ring_hdr *r;
	int i;

	d9_thread_start(NULL);
	poll_from_a(1); /* detached: nothing */
	r = my_ring(h);
	cr_assert_eq(d9_ring_poll_site(r, 0), 0);
	attach(h);
	for (i = 0; i < 3; i++) {
		poll_from_a(1);
		poll_from_b(2);
	}
	cr_expect(site_in(d9_ring_poll_site(r, 0), poll_from_a, 200));
	cr_expect_neq(d9_ring_poll_site(r, 0), d9_ring_poll_site(r, 1));
	cr_expect(site_in(d9_ring_poll_site(r, 1), poll_from_b, 200));
	cr_expect_eq(d9_ring_poll_site(r, 2), 0);
	/* a new owner of the slot starts with none */
	d9_seg_detach(h);
	d9_thread_stop();
	cr_assert_eq(__atomic_load_n(&r->state, __ATOMIC_RELAXED), D9_RING_FREE);
	d9_thread_start(NULL);
	cr_assert_eq(my_ring(h), r);
	cr_expect_eq(d9_ring_poll_site(r, 0), 0);
}

Test(shim, a_poll_woken_by_its_own_thread_is_one_record)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];
	uint64_t task, begin, end;

	d9_thread_start(NULL);
	attach(h);
	d9_poll_begin(4);
	d9_task_wake(4); /* a yield: runnable again when the poll ends */
	d9_poll_end(4);
	/* held until the thread's next marker, and in the ring header */
	cr_expect_eq(drain(h, my_ring(h), ev, 8), 0);
	cr_assert_eq(d9_ring_open_poll(my_ring(h), h->attach_count, &task, &begin, &end),
		     1);
	cr_expect_eq(task, 4);
	cr_expect_gt(end, 0);
	d9_park();
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 2);
	cr_expect_eq(ev[0].type, D9_EV_POLL_WOKEN);
	cr_expect_eq(ev[0].task, 4);
	cr_expect_eq(ev[0].time, end);
	cr_expect_eq(ev[0].time - ev[0].arg, begin);
	cr_expect_eq(ev[1].type, D9_EV_PARK);
	cr_expect_eq(d9_ring_open_poll(my_ring(h), h->attach_count, &task, &begin, &end),
		     0);
}

Test(shim, a_requeue_right_after_the_poll_is_one_record)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];

	d9_thread_start(NULL);
	attach(h);
	d9_poll_begin(5);
	d9_poll_end(5);
	d9_task_wake(5); /* the runtime requeues it: written at once, woken */
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_POLL_WOKEN);
	cr_expect_eq(ev[0].task, 5);
	/* that poll is out: a wake of it is a record again */
	d9_task_wake(5);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_WAKE);
	/* a requeue well after the poll's end is a wake of its own: the time
	 * between was not the task's to wait */
	d9_poll_begin(5);
	d9_poll_end(5);
	{
		struct timespec ts = {0, 200000};

		nanosleep(&ts, NULL);
	}
	d9_task_wake(5);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 2);
	cr_expect_eq(ev[0].type, D9_EV_POLL);
	cr_expect_eq(ev[1].type, D9_EV_WAKE);
	cr_expect_gt(ev[1].time, ev[0].time);
	/* a poll followed by anything else: POLL, then that */
	d9_poll_begin(6);
	d9_poll_end(6);
	d9_task_wake(7);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 2);
	cr_expect_eq(ev[0].type, D9_EV_POLL);
	cr_expect_eq(ev[1].type, D9_EV_WAKE);
	cr_expect_eq(ev[1].task, 7);
}

Test(shim, a_record_inside_a_poll_writes_its_begin_first)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];
	uint64_t task, time, end;

	d9_thread_start(NULL);
	attach(h);
	d9_poll_begin(4);
	cr_assert_eq(d9_ring_open_poll(my_ring(h), h->attach_count, &task, &time, &end),
		     1);
	cr_expect_eq(task, 4);
	d9_task_wake(9); /* another task: a record, after the poll's BEGIN */
	cr_expect_eq(d9_ring_open_poll(my_ring(h), h->attach_count, &task, &time, &end),
		     0);
	d9_task_wake(4);
	d9_poll_end(4);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 4);
	cr_expect_eq(ev[0].type, D9_EV_POLL_BEGIN);
	cr_expect_eq(ev[0].task, 4);
	cr_expect_eq(ev[0].time, time);
	cr_expect_eq(ev[1].type, D9_EV_WAKE);
	cr_expect_eq(ev[1].task, 9);
	cr_expect_eq(ev[2].type, D9_EV_WAKE); /* its own, at the end */
	cr_expect_eq(ev[2].task, 4);
	cr_expect_eq(ev[3].type, D9_EV_POLL_END);
	cr_expect_eq(ev[2].time, ev[3].time);
	cr_expect_geq(ev[1].time, ev[0].time);
}

Test(shim, a_poll_begun_for_another_recorder_is_not_written)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];

	d9_thread_start(NULL);
	attach(h);
	d9_poll_begin(4);
	d9_seg_detach(h);
	attach(h); /* a new recorder: the open poll began before it came */
	d9_task_wake(4);
	d9_poll_end(4);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 2);
	cr_expect_eq(ev[0].type, D9_EV_WAKE); /* not swallowed as a yield */
	cr_expect_eq(ev[1].type, D9_EV_POLL_END);
}

/* ---- ring ---------------------------------------------------------------- */

Test(ring, drops_and_counts_when_full)
{
	struct d9_seg_hdr *h = seg();
	uint32_t cap = h->ring_events, i;
	struct d9_event *ev = events(cap + 8);
	struct d9_ring_hdr *r;
	size_t n;

	d9_thread_start(NULL); /* claim detached: no THREAD_START record */
	attach(h);
	for (i = 0; i < cap + 100; i++)
		d9_task_wake(i + 1);
	r = my_ring(h);
	cr_expect_eq(d9_ring_drops(r), 100);
	n = drain(h, r, ev, cap + 8);
	cr_assert_eq(n, cap);
	for (i = 0; i < cap; i++)
		cr_assert_eq(ev[i].task, i + 1, "record %u", i);
	/* room again */
	d9_task_wake(1);
	cr_expect_eq(drain(h, r, ev, 8), 1);
	cr_expect_eq(d9_ring_drops(r), 100);
	free(ev);
}

Test(ring, text_group_is_all_or_nothing)
{
	struct d9_seg_hdr *h = seg();
	uint32_t cap = h->ring_events, i;
	struct d9_event *ev = events(cap);
	char name[D9_NAME_MAX + 1];
	struct d9_ring_hdr *r;
	size_t n;

	d9_thread_start(NULL);
	attach(h);
	for (i = 0; i < cap - 2; i++)
		d9_task_wake(1);
	/* 50 characters: SPAWN + 3 TEXT = 4 records, only 2 free */
	d9_task_spawn(9, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN");
	r = my_ring(h);
	cr_expect_eq(d9_ring_drops(r), 4);
	d9_poll_end(1);
	d9_poll_end(1);
	d9_poll_end(1); /* full */
	cr_expect_eq(d9_ring_drops(r), 5);
	n = drain(h, r, ev, cap);
	cr_assert_eq(n, cap);
	for (i = 0; i < n; i++)
		cr_assert(ev[i].type == D9_EV_WAKE || ev[i].type == D9_EV_POLL_END);

	d9_task_spawn(9, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN");
	n = drain(h, r, ev, cap);
	cr_assert_eq(n, 4);
	cr_expect_eq(ev[0].type, D9_EV_SPAWN);
	cr_expect_eq(ev[0].task, 9);
	cr_expect_eq(ev[0].arg, 3);
	d9_event_text(&ev[1], 3, name, sizeof(name));
	cr_expect_str_eq(name, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN");
	free(ev);
}

Test(ring, names_are_nul_terminated_and_truncated)
{
	struct d9_seg_hdr *h = seg();
	char name[128], got[128];
	struct d9_event ev[16];
	static const struct {
		size_t len;
		uint32_t k;
	} cases[] = {{1, 1}, {23, 1}, {24, 2}, {47, 2}, {48, 3}, {71, 3}, {100, 3}};
	size_t c;

	attach(h);
	d9_park(); /* claim */
	drain(h, my_ring(h), ev, 16);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memset(name, 'a' + (int)c, cases[c].len);
		name[cases[c].len] = '\0';
		d9_task_spawn(100 + c, name);
		cr_assert_eq(drain(h, my_ring(h), ev, 16), 1 + cases[c].k, "len %zu",
			     cases[c].len);
		cr_expect_eq(ev[0].arg, cases[c].k, "len %zu", cases[c].len);
		/* the last text record always holds the terminating NUL */
		cr_expect_eq(((char *)&ev[cases[c].k])[23], '\0');
		d9_event_text(&ev[1], ev[0].arg, got, sizeof(got));
		name[cases[c].len < D9_NAME_MAX ? cases[c].len : D9_NAME_MAX] = '\0';
		cr_expect_str_eq(got, name);
	}
	d9_task_spawn(200, NULL);
	d9_task_spawn(201, "");
	cr_assert_eq(drain(h, my_ring(h), ev, 16), 2);
	cr_expect_eq(ev[0].arg, 0);
	cr_expect_eq(ev[1].arg, 0);
}

Test(ring, consume_never_splits_a_group)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[D9_GROUP_MAX];
	char longname[80];
	int i;

	d9_thread_start(NULL);
	attach(h);
	/* wakes up to two records short of a drain's D9_GROUP_MAX, then a
	 * group of three that the drain's end would split */
	for (i = 0; i < D9_GROUP_MAX - 2; i++)
		d9_task_wake(5 + (uint64_t)i);
	d9_task_spawn(2, "thirty characters long, really");
	cr_expect_eq(drain(h, my_ring(h), ev, D9_GROUP_MAX), D9_GROUP_MAX - 2);
	cr_assert_eq(drain(h, my_ring(h), ev, D9_GROUP_MAX), 3);
	cr_expect_eq(ev[0].type, D9_EV_SPAWN);
	cr_expect_eq(ev[0].arg, 2);
	/* a span's payload is a group too: 8 bytes of parent and a name
	 * that takes the rest of four records */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (i = 0; i < D9_GROUP_MAX - 1; i++)
		d9_task_wake(8);
	d9_span_new(9, 0, longname);
	cr_expect_eq(drain(h, my_ring(h), ev, D9_GROUP_MAX), D9_GROUP_MAX - 1);
	cr_assert_eq(drain(h, my_ring(h), ev, D9_GROUP_MAX), 1 + D9_PAYLOAD_RECORDS);
	cr_expect_eq(ev[0].type, D9_EV_SPAN_NEW);
	cr_expect_eq(ev[0].arg, D9_PAYLOAD_RECORDS);
}

Test(ring, nonsense_indices_do_not_hurt_the_producer)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];
	struct d9_ring_hdr *r;

	d9_thread_start(NULL);
	attach(h);
	r = my_ring(h);
	/* a confused recorder: tail beyond head */
	__atomic_store_n(&r->tail, 1000, __ATOMIC_RELEASE);
	d9_task_wake(1);
	cr_expect_eq(d9_ring_drops(r), 1);
	cr_expect_eq(r->head, 0);
	/* the consumer resynchronises */
	cr_expect_eq(drain(h, r, ev, 8), 0);
	cr_expect_eq(r->tail, r->head);
	/* a head far from tail: writes stay inside the ring */
	__atomic_store_n(&r->head, 0x7fffffffffffULL, __ATOMIC_RELEASE);
	__atomic_store_n(&r->tail, 0x7fffffffffffULL, __ATOMIC_RELEASE);
	d9_poll_end(1);
	cr_assert_eq(drain(h, r, ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_POLL_END);
}

/* ---- names --------------------------------------------------------------- */

/* The name table of @h gives @task the name @want. */
static void expect_name(struct d9_seg_hdr *h, uint64_t task, const char *want)
{
	char buf[64];

	cr_assert_eq(d9_name_table_get(h, lay(h), task, buf, sizeof(buf)), 0,
		     "task %" PRIu64, task);
	cr_expect_str_eq(buf, want);
}

/* What a recorder does at attach: read every slot of the name table of
 * @h. The number of named slots; the last one's task and name in @task
 * and @buf. */
static uint32_t walk_slots(struct d9_seg_hdr *h, uint64_t *task, char *buf, size_t len)
{
	struct d9_name_slot *slots = d9_layout_names(h, lay(h));
	char got[64];
	uint32_t i, n = 0;
	uint64_t t;

	for (i = 0; i < h->names_count; i++) {
		if (d9_name_slot_read(&slots[i], &t, got, sizeof(got)))
			continue;
		*task = t;
		snprintf(buf, len, "%s", got);
		n++;
	}
	return n;
}

/* Where a name goes is segment ABI: a recorder of another build looks for
 * it at d9_name_hash(task), so these values only change with
 * D9_SEG_VERSION. (Not lib_hash64(), whose values are nobody's ABI.) */
Test(names, slot_hash_is_the_segment_abi)
{
	static const uint64_t want[][2] = {
		{1, 0xc433d8fc0cf0792cULL},
		{2, 0x5a795c205565b8e7ULL},
		{42, 0x224a0160dfe365ccULL},
		{0x7f3a5c001000ULL, 0x87fe8842817eead5ULL},
		{0xffffffffULL, 0xc6c236da2ff151c6ULL},
		{1ULL << 63, 0x8f4e7210af2a9993ULL},
		{UINT64_MAX - 1, 0x10b2d588794e032bULL},
	};
	uint64_t acc = 0, i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(d9_name_hash(want[i][0]), want[i][1],
			     "d9_name_hash(%#" PRIx64 ")", want[i][0]);
	/* and over many: a digest of 100000 spread keys */
	for (i = 0; i < 100000; i++)
		acc = acc * 31 + d9_name_hash(i * 0x9e3779b97f4a7c15ULL);
	cr_expect_eq(acc, 0x043653615dfd1a21ULL, "digest %#" PRIx64, acc);
}

/* ... and the shim puts a name there, the first probe of an empty table. */
Test(names, spawn_puts_the_name_at_its_slot_hash)
{
	struct d9_seg_hdr *h = seg();
	struct d9_name_slot *slots = d9_layout_names(h, lay(h));
	uint64_t task = 0x7f3a5c001000ULL;

	d9_task_spawn(task, "at-its-slot");
	cr_expect_eq(slots[d9_name_hash(task) & (h->names_count - 1)].task, task);
	expect_name(h, task, "at-its-slot");
}

Test(names, spawn_before_attach_is_visible_in_table)
{
	struct d9_seg_hdr *h = seg();
	char buf[64];
	uint64_t task;

	d9_task_spawn(42, "conn-handler");
	d9_task_spawn(43, NULL);
	expect_name(h, 42, "conn-handler");
	cr_expect_eq(d9_name_table_get(h, lay(h), 43, buf, sizeof(buf)), -ENOENT);
	cr_expect_eq(d9_name_table_get(h, lay(h), 44, buf, sizeof(buf)), -ENOENT);
	cr_assert_eq(walk_slots(h, &task, buf, sizeof(buf)), 1);
	cr_expect_eq(task, 42);
	cr_expect_str_eq(buf, "conn-handler");
	cr_expect_eq(pending_everywhere(h), 0);
}

Test(names, task_end_removes_the_name)
{
	struct d9_seg_hdr *h = seg();
	char buf[64];

	d9_task_spawn(42, "short-lived");
	d9_task_end(42);
	cr_expect_eq(d9_name_table_get(h, lay(h), 42, buf, sizeof(buf)), -ENOENT);
	d9_task_spawn(42, "again");
	expect_name(h, 42, "again");
}

Test(names, respawned_task_keeps_one_slot)
{
	struct d9_seg_hdr *h = seg();
	char buf[64];
	uint64_t task;

	d9_task_spawn(7, "first");
	d9_task_spawn(7, "second");
	cr_expect_eq(walk_slots(h, &task, buf, sizeof(buf)), 1);
	expect_name(h, 7, "second");
}

Test(names, long_names_are_truncated)
{
	struct d9_seg_hdr *h = seg();
	char name[200], buf[200];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	d9_task_spawn(5, name);
	cr_assert_eq(d9_name_table_get(h, lay(h), 5, buf, sizeof(buf)), 0);
	cr_expect_eq(strlen(buf), sizeof(((struct d9_name_slot *)0)->name) - 1);
	/* a small buffer gets a terminated prefix */
	cr_assert_eq(d9_name_table_get(h, lay(h), 5, buf, 4), 0);
	cr_expect_str_eq(buf, "xxx");
}

Test(names, full_table_counts_drops)
{
	struct d9_seg_hdr *h = seg();
	uint64_t n = h->names_count + 500, task, found = 0;
	char buf[64];

	for (task = 1; task <= n; task++)
		d9_task_spawn(task, "t");
	for (task = 1; task <= n; task++)
		found += !d9_name_table_get(h, lay(h), task, buf, sizeof(buf));
	cr_expect_leq(found, h->names_count);
	cr_expect_geq(h->names_dropped, 500);
	cr_expect_eq(h->names_dropped, n - found);
	/* ending tasks makes room */
	for (task = 1; task <= n; task++)
		d9_task_end(task);
	d9_task_spawn(n + 1, "late");
	cr_expect_eq(d9_name_table_get(h, lay(h), n + 1, buf, sizeof(buf)), 0);
}

Test(names, spawn_while_attached_records_the_name_too)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];
	char buf[64];

	d9_thread_start(NULL);
	attach(h);
	d9_task_spawn(11, "acceptor");
	d9_task_end(11);
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 3);
	cr_expect_eq(ev[0].type, D9_EV_SPAWN);
	cr_expect_eq(ev[0].arg, 1);
	d9_event_text(&ev[1], 1, buf, sizeof(buf));
	cr_expect_str_eq(buf, "acceptor");
	cr_expect_eq(ev[2].type, D9_EV_TASK_END);
	cr_expect_eq(ev[2].task, 11);
}

/* ---- thread -------------------------------------------------------------- */

Test(thread, thread_start_names_the_ring_even_detached)
{
	struct d9_seg_hdr *h = seg();
	struct d9_ring_hdr *r;
	char name[64];
	uint64_t gen;
	uint32_t tid;

	d9_thread_start("worker-1");
	r = my_ring(h);
	cr_expect_eq(d9_ring_owner(r, &tid, &gen, name, sizeof(name)), D9_RING_LIVE);
	cr_expect_eq(tid, (uint32_t)gettid());
	cr_expect_geq(gen, 1);
	cr_expect_str_eq(name, "worker-1");
	cr_expect_eq(r->head, 0);
}

Test(thread, thread_start_while_attached_records_the_name)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event ev[8];
	char buf[64];

	attach(h);
	d9_thread_start("io-0");
	cr_assert_eq(drain(h, my_ring(h), ev, 8), 2);
	cr_expect_eq(ev[0].type, D9_EV_THREAD_START);
	cr_expect_eq(ev[0].task, (uint64_t)gettid());
	cr_expect_eq(ev[0].arg, 1);
	d9_event_text(&ev[1], 1, buf, sizeof(buf));
	cr_expect_str_eq(buf, "io-0");
	d9_thread_stop();
	/* THREAD_STOP left a record: DEAD until drained and reaped */
	cr_assert_eq(drain(h, ring_of(h, gettid()), ev, 8), 1);
	cr_expect_eq(ev[0].type, D9_EV_THREAD_STOP);
	cr_expect_eq(ev[0].task, (uint64_t)gettid());
}

struct worker {
	const char *name;
	int stop;    /* call d9_thread_stop before exiting */
	int markers; /* call markers */
	pid_t tid;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	w->tid = gettid();
	if (w->name)
		d9_thread_start(w->name);
	if (w->markers) {
		d9_poll_begin(1);
		d9_poll_end(1);
	}
	if (w->stop)
		d9_thread_stop();
	return NULL;
}

static void run_worker(struct worker *w)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, worker, w), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

Test(thread, thread_stop_frees_the_slot_for_reuse)
{
	struct d9_seg_hdr *h = seg();
	struct d9_ring_hdr *r0 = d9_layout_ring(h, lay(h), 0);
	struct worker a = {.name = "a", .stop = 1}, b = {.name = "b", .stop = 0};
	uint64_t gen;
	uint32_t tid;
	char name[64];

	run_worker(&a);
	cr_expect_eq(r0->state, D9_RING_FREE);
	cr_expect_eq(r0->tid, (uint32_t)a.tid);
	gen = r0->gen;
	/* b exits without d9_thread_stop: the key destructor frees it */
	run_worker(&b);
	cr_expect_eq(d9_ring_owner(r0, &tid, &gen, name, sizeof(name)), D9_RING_FREE);
	cr_expect_eq(tid, (uint32_t)b.tid, "the slot was not reused");
	cr_expect_str_eq(name, "b");
	cr_expect_eq(gen, 2);
}

Test(thread, exiting_thread_leaves_records_for_the_recorder)
{
	struct d9_seg_hdr *h = seg();
	struct worker w = {.name = NULL, .markers = 1};
	struct d9_event ev[8];
	struct d9_ring_hdr *r;

	attach(h);
	run_worker(&w); /* no d9_thread_start, no d9_thread_stop */
	r = ring_of(h, w.tid);
	cr_assert_not_null(r);
	cr_expect_eq(r->state, D9_RING_DEAD);
	cr_expect_eq(d9_ring_reap(r), 0, "reaped before drained");
	cr_assert_eq(drain(h, r, ev, 8), 3);
	cr_expect_eq(ev[0].type, D9_EV_THREAD_START);
	cr_expect_eq(ev[0].task, (uint64_t)w.tid);
	cr_expect_eq(ev[1].type, D9_EV_POLL);
	cr_expect_eq(ev[2].type, D9_EV_THREAD_STOP);
	cr_expect_eq(d9_ring_reap(r), 1);
	cr_expect_eq(r->state, D9_RING_FREE);
}

Test(thread, dead_rings_are_reused_only_while_detached)
{
	struct d9_seg_hdr *h = seg();
	struct worker a = {.markers = 1}, b = {.markers = 1};
	struct d9_ring_hdr *r0 = d9_layout_ring(h, lay(h), 0);

	attach(h);
	run_worker(&a);
	cr_assert_eq(r0->state, D9_RING_DEAD);
	run_worker(&b); /* attached: must not take the undrained ring */
	cr_expect_eq(r0->tid, (uint32_t)a.tid);
	d9_seg_detach(h);
	d9_thread_start("c");
	cr_expect_eq(my_ring(h), r0);
}

struct crowd {
	pthread_barrier_t claimed, done;
};

static void *crowd_member(void *arg)
{
	struct crowd *c = arg;

	d9_thread_start("crowd");
	pthread_barrier_wait(&c->claimed);
	pthread_barrier_wait(&c->done);
	d9_thread_stop();
	return NULL;
}

Test(thread, exhausted_slots_are_counted_and_markers_become_noops)
{
	struct d9_seg_hdr *h = seg();
	uint32_t n = h->nrings, i;
	pthread_t *th = calloc(n, sizeof(*th));
	pthread_attr_t attr;
	struct crowd c;
	uint64_t before;

	cr_assert_not_null(th);
	pthread_barrier_init(&c.claimed, NULL, n + 1);
	pthread_barrier_init(&c.done, NULL, n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&th[i], &attr, crowd_member, &c), 0);
	pthread_barrier_wait(&c.claimed);

	attach(h);
	before = pending_everywhere(h);
	d9_thread_start("one too many");
	cr_expect_eq(h->rings_exhausted, 1);
	for (i = 0; i < 100; i++)
		d9_task_wake(1);
	cr_expect_eq(pending_everywhere(h), before);
	cr_expect_eq(h->rings_exhausted, 1, "counted once per thread");
	cr_expect_null(ring_of(h, gettid()));

	d9_seg_detach(h);
	pthread_barrier_wait(&c.done);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	/* slots are back: an explicit start retries at once */
	d9_thread_start("late");
	cr_expect_not_null(ring_of(h, gettid()));
	free(th);
}

/* ---- fork ---------------------------------------------------------------- */

static int child_checks(struct d9_seg_hdr *parent, ino_t parent_ino)
{
	struct d9_seg_hdr *h;
	char line[512];
	struct stat st;
	int n = 0;
	FILE *f;

	d9_poll_begin(5); /* first call: creates the child's own segment */
	d9_thread_start("child");
	if (d9_init())
		return 1;
	h = d9__segment();
	if (!h || h->pid != (uint32_t)getpid() || h->attached)
		return 2;
	if (fstat(d9__segment_fd(), &st) || st.st_ino == parent_ino)
		return 3;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 4;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:" D9_SEG_NAME) != NULL;
	fclose(f);
	if (n != 1)
		return 5;
	/* the parent's fd is closed */
	if (parent != h && fcntl(d9__segment_fd(), F_GETFD) < 0)
		return 6;
	return 0;
}

Test(fork, child_gets_its_own_segment)
{
	struct d9_seg_hdr *h = seg();
	struct d9_ring_hdr *r;
	struct stat st;
	uint64_t head;
	int status;
	pid_t pid;

	cr_assert_eq(fstat(d9__segment_fd(), &st), 0);
	d9_thread_start("parent");
	attach(h);
	d9_poll_begin(1);
	r = my_ring(h);
	head = r->head;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid)
		_exit(child_checks(h, st.st_ino));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status));
	cr_expect_eq(WEXITSTATUS(status), 0, "child check %d failed",
		     WEXITSTATUS(status));
	/* the child never wrote into the parent's ring */
	cr_expect_eq(r->head, head);
	cr_expect_eq(h->attached, 1);
	d9_poll_end(1);
	d9_park();
	cr_expect_eq(r->head, head + 2); /* the poll, then the park */
}

/* ---- lean mode ------------------------------------------------------------ */

TestSuite(lean);

/* What the D9_EV_SUMMARY groups among @ev (@n records) say of @task,
 * summed: polls, delays, and the entries' counts per histogram */
struct sum_seen {
	uint64_t polls, delays, hist[2], groups;
};

static struct sum_seen sums_of(const struct d9_event *ev, size_t n, uint64_t task)
{
	struct sum_seen s = {0};

	for (size_t i = 0; i < n; i++) {
		uint32_t k = d9_group_more(&ev[i]);

		if (ev[i].type == D9_EV_SUMMARY && ev[i].task == task) {
			const struct d9_sum_head *hd = (const void *)&ev[i + 1];
			const uint64_t *e = (const void *)&ev[i + 3];

			cr_assert_geq(k, 2);
			s.groups++;
			s.polls += hd->polls;
			s.delays += hd->delays;
			for (uint32_t j = 0; j < (k - 2) * 3; j++)
				s.hist[e[j] >> 63] += (uint32_t)e[j];
		}
		i += k;
	}
	return s;
}

static size_t count_type(const struct d9_event *ev, size_t n, uint32_t type)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++) {
		c += ev[i].type == type;
		i += d9_group_more(&ev[i]);
	}
	return c;
}

static void attach_lean(struct d9_seg_hdr *h, uint64_t poll, uint64_t delay)
{
	d9_seg_set_lean(h, lay(h), poll, delay);
	attach(h);
}

Test(lean, short_polls_are_summed_not_written)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(4096);
	struct sum_seen a, b;
	size_t n;

	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	for (int i = 0; i < 1000; i++) {
		d9_poll_begin(7 + (uint64_t)(i % 3 == 0));
		d9_poll_end(7 + (uint64_t)(i % 3 == 0));
	}
	/* nothing written until the recorder asks for the sums */
	cr_expect_eq(drain(h, my_ring(h), ev, 4096), 0);
	d9_seg_flush_sums(h);
	d9_poll_begin(7);
	d9_poll_end(7);
	n = drain(h, my_ring(h), ev, 4096);
	a = sums_of(ev, n, 7);
	b = sums_of(ev, n, 8);
	cr_expect_eq(count_type(ev, n, D9_EV_POLL), 0);
	cr_expect_eq(a.polls, 666 + 1);
	cr_expect_eq(b.polls, 334);
	/* every poll in one bucket of lengths, no delays (no wakes) */
	cr_expect_eq(a.hist[0], a.polls);
	cr_expect_eq(b.hist[0], b.polls);
	cr_expect_eq(a.delays + b.delays + a.hist[1] + b.hist[1], 0);
	free(ev);
}

Test(lean, long_polls_are_written_and_summed)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(4096);
	size_t n;

	d9_thread_start(NULL);
	/* every poll lasts at least a unit of the clock */
	attach_lean(h, 1, UINT64_MAX / 2);
	for (int i = 0; i < 10; i++) {
		d9_poll_begin(3);
		sleep_us(10);
		d9_poll_end(3);
	}
	d9_park(); /* a parked thread's sums go at once */
	n = drain(h, my_ring(h), ev, 4096);
	cr_expect_eq(count_type(ev, n, D9_EV_POLL), 10);
	cr_expect_eq(count_type(ev, n, D9_EV_PARK), 1);
	cr_expect_eq(sums_of(ev, n, 3).polls, 10);
	free(ev);
}

Test(lean, a_wake_gives_the_next_poll_its_delay)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(4096);
	struct sum_seen s;
	size_t n;

	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	d9_task_wake(5); /* one delay */
	d9_task_wake(5); /* the first wake counts */
	d9_poll_begin(5);
	d9_poll_end(5);
	d9_poll_begin(5); /* no wake: no delay */
	d9_task_wake(5);  /* its own, during its poll: runnable at its end */
	d9_poll_end(5);
	d9_poll_begin(5); /* that delay */
	d9_poll_end(5);
	d9_task_wake(6);
	d9_task_end(6); /* ended: its wake goes */
	d9_poll_begin(6);
	d9_poll_end(6);
	d9_park();
	n = drain(h, my_ring(h), ev, 4096);
	s = sums_of(ev, n, 5);
	cr_expect_eq(s.polls, 3);
	cr_expect_eq(s.delays, 2);
	cr_expect_eq(s.hist[1], 2);
	s = sums_of(ev, n, 6);
	cr_expect_eq(s.polls, 1);
	cr_expect_eq(s.delays, 0);
	/* and no wake was written */
	cr_expect_eq(count_type(ev, n, D9_EV_WAKE), 0);
	free(ev);
}

Test(lean, a_task_taking_a_full_sets_slot_flushes_the_one_before)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(65536);
	uint64_t polls = 0;
	size_t n;

	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	/* four times as many tasks as there are slots: every poll counted */
	for (uint64_t t = 1; t <= 4 * D9_SUM_SETS * D9_SUM_WAYS; t++) {
		d9_poll_begin(t);
		d9_poll_end(t);
	}
	d9_park();
	n = drain(h, my_ring(h), ev, 65536);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type == D9_EV_SUMMARY)
			polls += ((const struct d9_sum_head *)&ev[i + 1])->polls;
		i += d9_group_more(&ev[i]);
	}
	cr_expect_eq(polls, 4 * D9_SUM_SETS * D9_SUM_WAYS);
	free(ev);
}

/* A bucket's count about to pass 65535 sends the sums first, of the
 * lengths or of the waits, and the slot goes on consistent: every group
 * no more waits than polls (the recorder drops one with more), and all
 * counted (CI lost 12% of a busy task's polls to that). */
Test(lean, a_full_bucket_sends_the_sums_and_counts_on)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(65536);
	uint64_t polls = 0, delays = 0, groups = 0, bad = 0;
	const uint64_t n_polls = 300000; /* several buckets pass 65535 */
	size_t n;

	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	/* polls of four lengths, waits of one: the waits' bucket fills first */
	for (uint64_t i = 0; i < n_polls; i++) {
		d9_task_wake(9);
		d9_poll_begin(9);
		for (volatile unsigned int k = 0; k < (1u << (i % 4)) * 64; k++)
			;
		d9_poll_end(9);
	}
	d9_park();
	n = drain(h, my_ring(h), ev, 65536);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type == D9_EV_SUMMARY) {
			const struct d9_sum_head *hd = (const void *)&ev[i + 1];

			groups++;
			polls += hd->polls;
			delays += hd->delays;
			bad += hd->delays > hd->polls;
		}
		i += d9_group_more(&ev[i]);
	}
	cr_expect_gt(groups, 2, "sent early, more than once");
	cr_expect_eq(bad, 0, "%llu groups of more waits than polls",
		     (unsigned long long)bad);
	cr_expect_eq(polls, n_polls);
	cr_expect_eq(delays, n_polls);
	free(ev);
}

Test(lean, the_thread_publishes_its_task_for_bpf)
{
	struct d9_seg_hdr *h = seg();
	const volatile struct d9_tls *pub;
	uintptr_t tp;

	cr_assert_neq(h->tls_offset, 0);
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	pub = (const volatile struct d9_tls *)(tp + (uintptr_t)h->tls_offset);
	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	cr_expect_eq(pub->task, 0);
	d9_poll_begin(42);
	cr_expect_eq(pub->task, 42);
	cr_expect_neq(pub->begin, 0);
	d9_poll_end(42);
	cr_expect_eq(pub->task, 0);
}

/* the shim's buckets as the trace reads them (trace.h: the trace's own
 * word for them, the bucket's least value) */
Test(lean, buckets_hold_their_values)
{
	uint64_t v;

	cr_assert_eq(D9_SUM_BUCKETS, TRACE_SUM_BUCKETS);

	for (v = 0; v < (1ULL << 36); v = v < 64 ? v + 1 : v + v / 7) {
		uint32_t b = d9_sum_bucket(v);

		cr_assert_leq(trace_sum_bucket_low(b), v);
		cr_assert_gt(trace_sum_bucket_low(b + 1), v, "v %" PRIu64 " bucket %u", v,
			     b);
		/* under a quarter of its value wide */
		cr_assert_leq((trace_sum_bucket_low(b + 1) - trace_sum_bucket_low(b)) * 4,
			      trace_sum_bucket_low(b) >= 8 ? trace_sum_bucket_low(b) : 4);
	}
}

Test(lean, spans_inside_a_short_poll_do_not_write_it)
{
	struct d9_seg_hdr *h = seg();
	struct d9_event *ev = events(4096);
	size_t n;

	d9_thread_start(NULL);
	attach_lean(h, UINT64_MAX / 2, UINT64_MAX / 2);
	for (int i = 0; i < 100; i++) {
		d9_poll_begin(4);
		d9_span_enter(9);
		d9_span_exit(9);
		d9_poll_end(4);
	}
	/* a park does write a short poll it interrupts (the join orders
	 * events per thread), not one that ended */
	n = drain(h, my_ring(h), ev, 4096);
	cr_expect_eq(count_type(ev, n, D9_EV_SPAN_ENTER), 100);
	cr_expect_eq(count_type(ev, n, D9_EV_POLL_BEGIN) + count_type(ev, n, D9_EV_POLL),
		     0);
	d9_park();
	n = drain(h, my_ring(h), ev, 4096);
	cr_expect_eq(sums_of(ev, n, 4).polls, 100);
	free(ev);
}

/* bindings/rust/d9prof's in-process recorder (its tests) reads the header
 * at these offsets: a change here is a change there */
Test(shim, header_offsets_the_rust_crate_reads)
{
	cr_expect_eq(D9_SEG_VERSION, 4);
	cr_expect_eq(offsetof(struct d9_seg_hdr, version), 8);
	cr_expect_eq(offsetof(struct d9_seg_hdr, nrings), 40);
	cr_expect_eq(offsetof(struct d9_seg_hdr, ring_offset), 48);
	cr_expect_eq(offsetof(struct d9_seg_hdr, attached), 192);
	cr_expect_eq(offsetof(struct d9_seg_hdr, recorder_pid), 196);
	cr_expect_eq(offsetof(struct d9_seg_hdr, lease_deadline), 200);
	cr_expect_eq(offsetof(struct d9_seg_hdr, attach_count), 208);
	cr_expect_eq(offsetof(struct d9_seg_hdr, request), 216);
	cr_expect_eq(offsetof(struct d9_seg_hdr, request_gen), 224);
	cr_expect_eq(offsetof(struct d9_ring_hdr, head), 64);
	cr_expect_eq(offsetof(struct d9_ring_hdr, tail), 128);
}
