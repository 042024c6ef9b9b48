// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "record/perf.h"

/* Data pages per thread's ring: 128 KiB holds ~0.5 s of deep callchains at
 * 999 Hz, far more than one drain tick. Halved on EPERM/ENOMEM, which is
 * what an unprivileged user over perf_event_mlock_kb gets. */
#define RING_PAGES	32
#define MAX_EVENT_SIZE	65536

struct thread_ev {
	pid_t tid;
	int fd;
	void *base;
	size_t data_size;	/* bytes of the data area (power of two) */
};

struct perf_set {
	struct perf_event_attr attr;
	struct thread_ev *ev;
	unsigned int nev, cap;
	size_t page;
	unsigned int pages;
	unsigned char *scratch;	/* records that wrap around the ring end */
};

struct perf_set *perf_set__new(const struct event_spec *ev, unsigned int freq,
			       int exclude_kernel)
{
	struct perf_set *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->scratch = malloc(MAX_EVENT_SIZE);
	if (!ps->scratch) {
		free(ps);
		return NULL;
	}
	ps->page = (size_t)sysconf(_SC_PAGESIZE);
	ps->pages = RING_PAGES;
	ps->attr.size = sizeof(ps->attr);
	ps->attr.type = ev->type;
	ps->attr.config = ev->config;
	ps->attr.config1 = ev->config1;
	ps->attr.config2 = ev->config2;
	ps->attr.sample_freq = freq;
	ps->attr.freq = 1;
	ps->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	ps->attr.use_clockid = 1;
	ps->attr.clockid = CLOCK_MONOTONIC;
	ps->attr.inherit = 1;
	ps->attr.sample_id_all = 1;
	ps->attr.comm = 1;
	ps->attr.task = 1;
	ps->attr.mmap = 1;
	ps->attr.mmap2 = 1;
	ps->attr.exclude_kernel = !!exclude_kernel;
	ps->attr.exclude_hv = 1;
	ps->attr.exclude_callchain_kernel = !!exclude_kernel;
	return ps;
}

int perf_set__add_thread(struct perf_set *ps, pid_t tid)
{
	struct thread_ev *t;
	unsigned int i, pages;
	void *base = MAP_FAILED;
	int fd;

	for (i = 0; i < ps->nev; i++)
		if (ps->ev[i].tid == tid)
			return -EEXIST;
	if (ps->nev == ps->cap) {
		unsigned int cap = ps->cap ? ps->cap * 2 : 16;
		struct thread_ev *n = realloc(ps->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ps->ev = n;
		ps->cap = cap;
	}
	fd = (int)syscall(SYS_perf_event_open, &ps->attr, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (pages = ps->pages; pages >= 1; pages /= 2) {
		base = mmap(NULL, (pages + 1) * ps->page, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
		if (base != MAP_FAILED || (errno != EPERM && errno != ENOMEM))
			break;
	}
	if (base == MAP_FAILED) {
		int err = -errno;

		close(fd);
		return err;
	}
	ps->pages = pages;	/* later threads need not retry larger sizes */
	t = &ps->ev[ps->nev++];
	t->tid = tid;
	t->fd = fd;
	t->base = base;
	t->data_size = pages * ps->page;
	return 0;
}

unsigned int perf_set__nthreads(const struct perf_set *ps)
{
	return ps->nev;
}

static void parse_sample(const struct perf_set *ps, const unsigned char *p,
			 const unsigned char *end, const struct perf_callbacks *cb)
{
	struct perf_sample s;
	const uint64_t *u = (const uint64_t *)p;

	/* IP, PID/TID, TIME, PERIOD, CALLCHAIN: the order the ABI fixes */
	if ((const unsigned char *)(u + 5) > end)
		return;
	s.pid = (uint32_t)u[1];
	s.tid = (uint32_t)(u[1] >> 32);
	s.time = u[2];
	s.period = u[3];
	s.nr = u[4];
	s.ips = u + 5;
	if (s.nr > (uint64_t)(end - (const unsigned char *)s.ips) / 8)
		return;
	if (cb->sample)
		cb->sample(cb->ctx, &s);
}

static void parse_record(const struct perf_set *ps, const struct perf_event_header *h,
			 const struct perf_callbacks *cb)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	const unsigned char *end = (const unsigned char *)h + h->size;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		parse_sample(ps, p, end, cb);
		break;
	case PERF_RECORD_COMM: {
		const uint32_t *u = (const uint32_t *)p;
		const char *comm = (const char *)(u + 2);

		if (p + 9 <= end && memchr(comm, '\0', end - (const unsigned char *)comm) &&
		    cb->comm)
			cb->comm(cb->ctx, u[1], comm);
		break;
	}
	case PERF_RECORD_FORK: {
		const uint32_t *u = (const uint32_t *)p;

		if (p + 16 <= end && cb->fork)
			cb->fork(cb->ctx, u[2]);
		break;
	}
	case PERF_RECORD_MMAP2: {
		/* pid tid addr len pgoff maj min ino ino_gen prot flags name */
		const uint32_t *u = (const uint32_t *)p;
		const uint64_t *q = (const uint64_t *)(u + 2);
		const char *name = (const char *)p + 64;

		if ((const unsigned char *)name < end &&
		    memchr(name, '\0', end - (const unsigned char *)name) && cb->mmap) {
			uint32_t prot = *(const uint32_t *)(p + 56);

			cb->mmap(cb->ctx, q[0], q[1], q[2], prot, name);
		}
		break;
	}
	case PERF_RECORD_LOST: {
		const uint64_t *u = (const uint64_t *)p;

		if (p + 16 <= end && cb->lost)
			cb->lost(cb->ctx, u[1]);
		break;
	}
	default:
		break;
	}
}

static uint64_t drain_one(struct perf_set *ps, struct thread_ev *t,
			  const struct perf_callbacks *cb)
{
	struct perf_event_mmap_page *pc = t->base;
	unsigned char *data = (unsigned char *)t->base + ps->page;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail;
	uint64_t n = 0;
	size_t mask = t->data_size - 1;

	while (tail < head) {
		struct perf_event_header hdr, *h;
		size_t off = tail & mask;

		if (off + sizeof(hdr) <= t->data_size) {
			memcpy(&hdr, data + off, sizeof(hdr));
		} else {
			size_t first = t->data_size - off;

			memcpy(&hdr, data + off, first);
			memcpy((char *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;	/* cannot happen with a sane kernel: resync */
		if (off + hdr.size <= t->data_size && !(off & 7)) {
			h = (struct perf_event_header *)(data + off);
		} else {
			size_t first = t->data_size - off;

			if (first > hdr.size)
				first = hdr.size;
			memcpy(ps->scratch, data + off, first);
			memcpy(ps->scratch + first, data, hdr.size - first);
			h = (struct perf_event_header *)ps->scratch;
		}
		parse_record(ps, h, cb);
		tail += hdr.size;
		n++;
	}
	__atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

uint64_t perf_set__drain(struct perf_set *ps, const struct perf_callbacks *cb)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < ps->nev; i++)
		n += drain_one(ps, &ps->ev[i], cb);
	return n;
}

void perf_set__free(struct perf_set *ps)
{
	unsigned int i;

	if (!ps)
		return;
	for (i = 0; i < ps->nev; i++) {
		munmap(ps->ev[i].base, ps->page + ps->ev[i].data_size);
		close(ps->ev[i].fd);
	}
	free(ps->ev);
	free(ps->scratch);
	free(ps);
}
