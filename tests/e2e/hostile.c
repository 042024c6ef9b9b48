// SPDX-License-Identifier: MIT
/*
 * hostile MODE SECONDS - a target that attacks the recorder, for
 * tests/e2e/hostile.sh. Prints "pid N" and "ready", then:
 *   scribble  runs markers; once a recorder attached, writes 0xff over
 *             every ring header and the records of its own segment, again
 *             and again
 *   fakefile  no shim: maps a regular file named ".../memfd:d9prof-seg"
 *             holding a copy of a real segment header, and truncates it
 *             while a recorder may have it mapped
 *   unsealed  no shim: maps an unsealed memfd named "d9prof-seg" holding
 *             a copy of a real segment header, and shrinks it
 *   flood     runs markers and floods the ctimer sample areas with
 *             plausible samples of thousands of made-up threads, and of
 *             its own thread with ever new frames, as fast as taken
 *   forge     runs markers; once a recorder attached, writes well-formed
 *             records that cannot be real into its ring (polls ending
 *             2^62 ticks from now or begun at time 1, task ids 0 and
 *             ~0), and a ring of a thread that does not exist (tid
 *             655736137) holding polls and a poll in its header that
 *             ends 2^62 ticks from now
 *   markers   floods poll, wake and spawn markers of ever new tasks from
 *             two threads: wakes and spawns never polled stay open
 *   threads   starts D9_SEG_RINGS + 16 threads that each start and poll
 *             before "ready", then poll every 5 ms: the last 16 found no
 *             ring slot before any recorder came
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <d9prof.h>

#include "libprof/d9_segment.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Our own segment's mapping, from /proc/self/maps. */
static void *own_segment(size_t *len)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	void *at = NULL;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (strstr(line, "/memfd:" D9_SEG_NAME) &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2) {
			at = (void *)a;
			*len = b - a;
			break;
		}
	}
	if (f)
		fclose(f);
	return at;
}

static void markers(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		d9_poll_begin(1);
		d9_poll_end(1);
	}
}

/* A file or memfd holding a copy of a real segment's first bytes, mapped
 * as a target would map its segment. */
static void fake(int fd, double secs)
{
	struct d9_seg_hdr h;
	void *p;

	memset(&h, 0, sizeof(h));
	h.magic = D9_SEG_MAGIC;
	h.version = D9_SEG_VERSION;
	h.hdr_size = D9_SEG_HDR_SIZE;
	h.seg_size = D9_SEG_SIZE;
	h.pid = (uint32_t)getpid();
	if (fchmod(fd, 0600) || ftruncate(fd, D9_SEG_SIZE) ||
	    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		exit(1);
	p = mmap(NULL, D9_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(1);
	printf("ready\n");
	usleep(500000);
	/* whoever mapped it now reads past its end */
	if (ftruncate(fd, 4096))
		exit(1);
	usleep((useconds_t)(secs * 1e6));
}

/* Now in the unit of the segment's clock. */
static uint64_t seg_now(const struct d9_seg_hdr *h)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (h->clock == D9_CLOCK_TSC)
		return __rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct d9_ring_hdr *ring_of(uint8_t *seg, uint32_t i)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	return (struct d9_ring_hdr *)(seg + h->ring_offset +
				      (uint64_t)i * h->ring_stride);
}

/* Records straight into ring @r, as its producer would (the caller is
 * its owner, or it has no other). */
static void put(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint64_t time, uint64_t task,
		uint32_t type, uint32_t arg)
{
	struct d9_event *ev = (struct d9_event *)(r + 1);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);

	if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= h->ring_events)
		return;
	ev[head & (h->ring_events - 1)] = (struct d9_event){time, task, type, arg};
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

#define FORGED_TID 655736137u /* above any pid_max: no thread has it */

/* forge: impossible values in well-formed records, every 20 ms */
static void forge(uint8_t *seg, struct d9_ring_hdr **fake)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;
	uint32_t me = (uint32_t)gettid(), i;
	struct d9_ring_hdr *own = NULL;
	uint64_t now = seg_now(h), far = 1ULL << 62;

	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = ring_of(seg, i);

		if (r->state == D9_RING_LIVE && r->tid == me)
			own = r;
		else if (!*fake && r->state == D9_RING_FREE)
			*fake = r;
	}
	if (own) {
		put(h, own, now, 7, D9_EV_POLL_BEGIN, 0);
		put(h, own, now + far, 7, D9_EV_POLL_END, 0); /* ends in 2^62 ticks */
		put(h, own, now + far, 8, D9_EV_POLL, 1000);  /* a whole poll, then */
		put(h, own, 1, 9, D9_EV_POLL_BEGIN, 0);	      /* begun at time 1 */
		put(h, own, now, 9, D9_EV_POLL_END, 0);
		put(h, own, now, UINT64_MAX, D9_EV_WAKE, 0); /* no task has these */
		put(h, own, now, 0, D9_EV_POLL, 100);
		put(h, own, now, UINT64_MAX, D9_EV_TASK_END, 0);
	}
	if (*fake) {
		struct d9_ring_hdr *r = *fake;

		if (r->state != D9_RING_LIVE) {
			r->tid = FORGED_TID;
			r->state = D9_RING_LIVE;
			__atomic_fetch_add(&r->gen, 1, __ATOMIC_RELEASE);
		}
		/* plausible polls of a thread that is not */
		put(h, r, now - 2000, 10, D9_EV_POLL, 1000);
		put(h, r, now - 500, 10, D9_EV_POLL_BEGIN, 0);
		put(h, r, now, 10, D9_EV_POLL_END, 0);
		/* and in its header, a poll that ends in 2^62 ticks */
		r->open_task = 11;
		r->open_time = now;
		r->open_end = now + far;
		r->open_gen = h->attach_count;
		__atomic_store_n(&r->open_seq, (r->open_seq + 2) & ~1ULL,
				 __ATOMIC_RELEASE);
	}
}

static double flood_until; /* markers, threads: until when */

/* markers: two threads of ever new tasks, woken and spawned, never polled */
static void *marker_flood(void *arg)
{
	uint64_t id = (uintptr_t)arg << 40;

	d9_thread_start(arg ? "flood-b" : "flood-a");
	while (now() < flood_until) {
		for (int i = 0; i < 1000; i++, id += 8) {
			d9_task_spawn(id, NULL);
			for (uint64_t k = 1; k < 8; k++)
				d9_task_wake(id + k);
			d9_poll_begin(id);
			d9_task_wake(id);
			d9_poll_end(id);
		}
	}
	return NULL;
}

/* threads: each starts, takes a ring slot if one is left, and polls */
static void *poller(void *arg)
{
	uint64_t task = 1000 + (uintptr_t)arg;

	d9_thread_start("poller");
	d9_task_spawn(task, "poller");
	while (now() < flood_until) {
		d9_poll_begin(task);
		d9_poll_end(task);
		usleep(5000);
	}
	return NULL;
}

static int many_threads(double secs)
{
	enum { N = D9_SEG_RINGS + 16 };
	static pthread_t t[N];

	flood_until = now() + secs;
	for (uintptr_t i = 0; i < N; i++)
		if (pthread_create(&t[i], NULL, poller, (void *)i))
			return 1;
	usleep(300000); /* every thread has started (and tried for a slot) */
	printf("ready\n");
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* 65536 spans, each named and with four text fields, opened once the
 * recorder is there and never closed (a server holding that many
 * websockets), then polls for @secs: every flight segment starts with
 * what is open. */
static int open_spans(double secs)
{
	char name[96], text[96];
	struct d9_seg_hdr *h;
	size_t len = 0;
	double t0;

	d9_thread_start("hostile");
	printf("ready\n");
	t0 = now();
	while (!(h = (struct d9_seg_hdr *)own_segment(&len)) ||
	       !__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE)) {
		if (now() - t0 > 10)
			return 1;
		usleep(10000);
	}
	for (uint64_t i = 1; i <= 65536; i++) {
		snprintf(name, sizeof(name),
			 "websocket %06llu of a server that holds them",
			 (unsigned long long)i);
		d9_span_new(i, 0, name);
		for (int f = 0; f < 4; f++) {
			snprintf(text, sizeof(text),
				 "peer 10.%d.%d.%d:%d, field %d of it", f,
				 (int)(i >> 8 & 255), (int)(i & 255), 40000 + f, f);
			d9_span_field(i, "peer", f, text);
		}
		if (!(i % 512))
			usleep(5000); /* (the recorder drains them) */
	}
	while (now() - t0 < secs) {
		markers(100);
		usleep(1000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "scribble";
	double secs = argc > 2 ? atof(argv[2]) : 3, t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	if (!strcmp(mode, "fakefile")) {
		char dir[] = "/tmp/d9hostile.XXXXXX", path[64];
		int fd;

		if (!mkdtemp(dir))
			return 1;
		snprintf(path, sizeof(path), "%s/memfd:%s", dir, D9_SEG_NAME);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0)
			return 1;
		fake(fd, secs);
		unlink(path);
		rmdir(dir);
		return 0;
	}
	if (!strcmp(mode, "unsealed")) {
		int fd = memfd_create(D9_SEG_NAME, MFD_CLOEXEC);

		if (fd < 0)
			return 1;
		fake(fd, secs);
		return 0;
	}
	d9_init();
	if (!strcmp(mode, "threads"))
		return many_threads(secs);
	if (!strcmp(mode, "markers")) {
		pthread_t a, b;

		flood_until = now() + secs;
		printf("ready\n");
		if (pthread_create(&a, NULL, marker_flood, (void *)0) ||
		    pthread_create(&b, NULL, marker_flood, (void *)1))
			return 1;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 0;
	}
	if (!strcmp(mode, "openspans"))
		return open_spans(secs);
	d9_thread_start("hostile");
	d9_task_spawn(1, "victim-of-the-scribble");
	printf("ready\n");
	t0 = now();
	struct d9_ring_hdr *fake = NULL;
	while (now() - t0 < secs) {
		size_t len = 0;
		uint8_t *seg = own_segment(&len);
		struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

		/* the flood is of samples, not of markers */
		markers(strcmp(mode, "flood") ? 1000 : 10);
		if (!strcmp(mode, "flood"))
			usleep(200);
		if (!seg || !__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE))
			continue;
		if (!strcmp(mode, "forge")) {
			forge(seg, &fake);
			usleep(20000);
		} else if (!strcmp(mode, "scribble")) {
			/* rings and records, not the header the shim needs */
			uint64_t off = h->ring_offset, stride = h->ring_stride;

			for (uint32_t r = 0; r < 4 && off + (r + 1) * stride <= len; r++)
				memset(seg + off + r * stride + 64, 0xff, 4096);
		} else if (!strcmp(mode, "flood")) {
			uint64_t *w = (uint64_t *)(seg + h->sample_offset);
			struct d9_ring_hdr *r =
				(struct d9_ring_hdr *)(seg + h->ring_offset);
			uint64_t words = h->sample_words, head;

			/* well-formed samples of ever new tids, as fast as the
			 * recorder takes them: a flow it could follow forever */
			uint64_t tail =
				__atomic_load_n(&r->sample_tail, __ATOMIC_ACQUIRE);
			uint64_t k, n, at, t = seg_now(h);
			static uint64_t pc = 0x400000;

			/* half of them of made-up threads, half of this one
			 * (the slot's owner) with 8 frames never seen before */
			head = __atomic_load_n(&r->sample_head, __ATOMIC_RELAXED);
			n = (words - (head - tail)) / (D9_SAMPLE_HDR_WORDS + 8);
			at = head;
			for (k = 0; k < n; k++) {
				uint32_t nf = k & 1 ? 8 : 0;

				w[at & (words - 1)] = (uint64_t)1 << 32 | nf;
				w[(at + 1) & (words - 1)] = t;
				w[(at + 2) & (words - 1)] = 1;
				w[(at + 3) & (words - 1)] =
					nf ? (uint64_t)r->tid
					   : 100000 + (head / 4 + k) % 1000003;
				for (uint32_t f = 0; f < nf; f++)
					w[(at + 4 + f) & (words - 1)] = pc += 16;
				at += D9_SAMPLE_HDR_WORDS + nf;
			}
			__atomic_store_n(&r->sample_head, at, __ATOMIC_RELEASE);
		}
	}
	return 0;
}
