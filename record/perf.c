// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "lib/grow.h"
#include "record/perf.h"

/* Data pages per CPU ring, sized by the sampling frequency (pages_for_freq()):
 * 1/RING_SECS_INV s of samples of a busy CPU with callchains of about
 * 40 frames (SAMPLE_BYTES each), a power of two from RING_PAGES (256 KiB:
 * half a second at 999 Hz) to RING_PAGES_MAX (4 MiB: 250 ms at 25 kHz),
 * and at most RING_BYTES_ALL over all CPUs. A ring covers many drain ticks,
 * so a recorder delayed by a busy machine does not lose samples. Halved on
 * EPERM/ENOMEM, which is what an unprivileged user over perf_event_mlock_kb
 * gets. */
#define RING_PAGES     64
#define RING_PAGES_MAX 1024
#define RING_BYTES_ALL (64ULL << 20)
#define RING_SECS_INV  4 /* 250 ms */
/* header, ip, tid, time, period, 40 ips;
 * plus the user stack copy and 20
 * registers when asked for */
#define SAMPLE_BYTES   384
#define MAX_EVENT_SIZE 65536

/*
 * The kernel refuses to mmap an inherited per-task event on "any CPU"
 * (cpu == -1), so, as perf does, each thread gets one event per CPU, and
 * all events of one CPU write into that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT
 * to the first). Inherited events of threads created later write into their
 * parent's ring.
 */
struct cpu_ring {
	int fd; /* the event that owns the mapping, -1 if none */
	void *base;
	size_t data_size; /* bytes of the data area (power of two) */
};

struct perf_set {
	struct perf_event_attr attr;
	int *fds; /* every event opened */
	unsigned int nfds;
	size_t capfds;
	pid_t *tids; /* threads with events of their own */
	unsigned int ntids;
	size_t captids;
	struct cpu_ring *rings; /* per CPU */
	unsigned int ncpus;
	size_t page;
	unsigned int pages;
	int enabled;		/* perf_set__enable() was called */
	int bpf_prog;		/* run on every event (perf_set__set_bpf), -1 */
	int bpf_err;		/* the first event it could not run on */
	unsigned char *scratch; /* records that wrap around the ring end */
};

/* sample_type bits parse_sample() understands */
#define SAMPLE_KNOWN                                                                     \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |         \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |                  \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* Data pages per CPU ring for sampling at @freq Hz on @ncpus CPUs. */
static unsigned int pages_for_freq(unsigned int freq, unsigned int sample_bytes,
				   unsigned int ncpus, size_t page)
{
	uint64_t want = (uint64_t)freq * sample_bytes / RING_SECS_INV;
	unsigned int pages = RING_PAGES;

	while (pages < RING_PAGES_MAX && (uint64_t)pages * page < want)
		pages *= 2;
	while (pages > RING_PAGES && (uint64_t)pages * page * ncpus > RING_BYTES_ALL)
		pages /= 2;
	return pages;
}

static struct perf_set *set_alloc(unsigned int ring_pages)
{
	struct perf_set *ps = calloc(1, sizeof(*ps));
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int i;

	if (!ps)
		return NULL;
	if (ncpus < 1)
		ncpus = 1;
	ps->ncpus = (unsigned int)ncpus;
	ps->scratch = malloc(MAX_EVENT_SIZE);
	ps->rings = calloc(ps->ncpus, sizeof(*ps->rings));
	if (!ps->scratch || !ps->rings) {
		perf_set__free(ps);
		return NULL;
	}
	for (i = 0; i < ps->ncpus; i++)
		ps->rings[i].fd = -1;
	ps->bpf_prog = -1;
	ps->page = (size_t)sysconf(_SC_PAGESIZE);
	ps->pages = ring_pages ? ring_pages : RING_PAGES;
	return ps;
}

int perf_set__new_attr(const struct perf_event_attr *attr, unsigned int ring_pages,
		       struct perf_set **out)
{
	struct perf_set *ps;

	*out = NULL;
	if ((attr->sample_type & ~(uint64_t)SAMPLE_KNOWN) ||
	    (ring_pages & (ring_pages - 1)))
		return -EINVAL;
	ps = set_alloc(ring_pages);
	if (!ps)
		return -ENOMEM;
	ps->attr = *attr;
	ps->attr.size = sizeof(ps->attr);
	if (!ring_pages && attr->freq)
		ps->pages = pages_for_freq(
			attr->sample_freq,
			SAMPLE_BYTES + (attr->sample_stack_user
						? attr->sample_stack_user + 176
						: 0),
			ps->ncpus, ps->page);
	*out = ps;
	return 0;
}

void perf_attr_init(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	/* every record is placed by thread and time, on the clock the shim
	 * stamps too: the trace has one clock (DESIGN.md) */
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

void perf_sampler_attr(const struct event_spec *ev, unsigned int freq, int exclude_kernel,
		       struct perf_event_attr *a)
{
	perf_attr_init(a);
	a->type = ev->type;
	a->config = ev->config;
	a->config1 = ev->config1;
	a->config2 = ev->config2;
	a->sample_freq = freq;
	a->freq = 1;
	a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->comm = 1;
	a->task = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->exclude_kernel = !!exclude_kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !!exclude_kernel;
}

static int push_fd(struct perf_set *ps, int fd)
{
	if (LIB_GROW(ps->fds, ps->capfds, ps->nfds + 1))
		return -ENOMEM;
	ps->fds[ps->nfds++] = fd;
	return 0;
}

static int map_ring(struct perf_set *ps, struct cpu_ring *r, int fd)
{
	unsigned int pages;
	void *base = MAP_FAILED;

	for (pages = ps->pages; pages >= 1; pages /= 2) {
		base = mmap(NULL, (pages + 1) * ps->page, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
		if (base != MAP_FAILED || (errno != EPERM && errno != ENOMEM))
			break;
	}
	if (base == MAP_FAILED)
		return -errno;
	ps->pages = pages; /* later rings need not retry larger sizes */
	r->fd = fd;
	r->base = base;
	r->data_size = pages * ps->page;
	return 0;
}

/* The set's event for @pid (-1: every task) on @cpu, writing into that
 * CPU's ring (mapped on the first event, else redirected to it). 1 if
 * opened, 0 for an offline CPU (nothing to sample), or -errno; the fd is
 * in ps->fds as soon as it exists, for the caller to undo. */
static int open_on_cpu(struct perf_set *ps, pid_t pid, unsigned int cpu)
{
	struct cpu_ring *r = &ps->rings[cpu];
	int fd, err;

	/* the ring's owner wakes a poller once a quarter of it is written
	 * (perf_set__pollfds) */
	ps->attr.watermark = 1;
	ps->attr.wakeup_watermark = (uint32_t)(ps->pages * ps->page / 4);
	/* nothing fires before the recorder drains: opening hundreds of
	 * threads' events takes longer than a ring lasts */
	ps->attr.disabled = !ps->enabled;
	fd = (int)syscall(SYS_perf_event_open, &ps->attr, pid, (int)cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno == ENODEV ? 0 : -errno;
	err = push_fd(ps, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (r->fd < 0)
		err = map_ring(ps, r, fd);
	else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd))
		err = -errno;
	if (!err && ps->bpf_prog >= 0 &&
	    ioctl(fd, PERF_EVENT_IOC_SET_BPF, ps->bpf_prog) && !ps->bpf_err)
		ps->bpf_err = -errno;
	return err ? err : 1;
}

int perf_set__set_bpf(struct perf_set *ps, int prog_fd)
{
	for (unsigned int i = 0; i < ps->nfds; i++)
		if (ioctl(ps->fds[i], PERF_EVENT_IOC_SET_BPF, prog_fd))
			return -errno;
	ps->bpf_prog = prog_fd;
	return 0;
}

int perf_set__bpf_err(const struct perf_set *ps)
{
	return ps->bpf_err;
}

/* Close the events from the @first-th on, and unmap a ring mapped on one of
 * them. */
static void close_from(struct perf_set *ps, unsigned int first)
{
	unsigned int i, cpu;

	for (i = first; i < ps->nfds; i++) {
		for (cpu = 0; cpu < ps->ncpus; cpu++)
			if (ps->rings[cpu].fd == ps->fds[i]) {
				munmap(ps->rings[cpu].base,
				       ps->page + ps->rings[cpu].data_size);
				ps->rings[cpu].fd = -1;
			}
		close(ps->fds[i]);
	}
	ps->nfds = first;
}

int perf_set__add_thread(struct perf_set *ps, pid_t tid)
{
	unsigned int i, cpu, first = ps->nfds, opened = 0;
	int err = 0;

	for (i = 0; i < ps->ntids; i++)
		if (ps->tids[i] == tid)
			return -EEXIST;
	if (LIB_GROW(ps->tids, ps->captids, ps->ntids + 1))
		return -ENOMEM;
	for (cpu = 0; cpu < ps->ncpus; cpu++) {
		err = open_on_cpu(ps, tid, cpu);
		if (err < 0)
			break;
		opened += (unsigned int)err;
		err = 0;
	}
	if (!err && !opened)
		err = -ENODEV;
	if (err) {
		/* undo this thread's events (a ring can be mapped on one of
		 * them only for the very first thread) */
		close_from(ps, first);
		return err;
	}
	ps->tids[ps->ntids++] = tid;
	return 0;
}

int perf_set__add_cpus(struct perf_set *ps)
{
	unsigned int cpu, opened = 0;
	int err;

	for (cpu = 0; cpu < ps->ncpus; cpu++) {
		err = open_on_cpu(ps, -1, cpu);
		if (err < 0)
			return err;
		opened += (unsigned int)err;
	}
	return opened ? 0 : -ENODEV;
}

int perf_set__add_cpus_config(struct perf_set *ps, uint64_t config, const char *filter)
{
	uint64_t own = ps->attr.config;
	unsigned int i, cpu, first = ps->nfds, opened = 0;
	int err = 0;

	ps->attr.config = config;
	for (cpu = 0; cpu < ps->ncpus && err >= 0; cpu++) {
		err = open_on_cpu(ps, -1, cpu);
		opened += err > 0;
	}
	ps->attr.config = own;
	err = err < 0 ? err : opened ? 0 : -ENODEV;
	/* opened disabled: nothing passes unfiltered */
	for (i = first; !err && filter && i < ps->nfds; i++)
		if (ioctl(ps->fds[i], PERF_EVENT_IOC_SET_FILTER, filter))
			err = -errno;
	if (err)
		close_from(ps, first);
	return err;
}

int perf_set__set_filter(struct perf_set *ps, const char *filter)
{
	for (unsigned int i = 0; i < ps->nfds; i++)
		if (ioctl(ps->fds[i], PERF_EVENT_IOC_SET_FILTER, filter))
			return -errno;
	return 0;
}

int perf_set__add_process(struct perf_set *ps, pid_t pid,
			  void (*added)(void *ctx, pid_t tid), void *ctx)
{
	char path[64];
	int n, total = 0, rounds = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d)
			return total ? total : -ESRCH;
		n = 0;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			int err;

			if (tid <= 0)
				continue;
			err = perf_set__add_thread(ps, tid);
			if (err == -EEXIST || err == -ESRCH)
				continue; /* known, or exited meanwhile */
			if (err) {
				closedir(d);
				return err;
			}
			if (added)
				added(ctx, tid);
			n++;
		}
		closedir(d);
		total += n;
	} while (n && ++rounds < 50);
	return total ? total : -ESRCH;
}

unsigned int perf_set__nthreads(const struct perf_set *ps)
{
	return ps->ntids;
}

/* The fields of a PERF_RECORD_SAMPLE in the order the ABI fixes, for the
 * bits of SAMPLE_KNOWN. Records that do not fit are skipped. */
static void parse_sample(const struct perf_set *ps, const unsigned char *p,
			 const unsigned char *end, const struct perf_callbacks *cb)
{
	uint64_t st = ps->attr.sample_type;
	const uint64_t *u = (const uint64_t *)p;
	const uint64_t *e = (const uint64_t *)end;
	struct perf_sample s;

	memset(&s, 0, sizeof(s));
#define NEED(n)                                                                          \
	do {                                                                             \
		if ((uint64_t)(e - u) < (uint64_t)(n))                                   \
			return;                                                          \
	} while (0)
	if (st & PERF_SAMPLE_IP) {
		NEED(1);
		u++;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(1);
		s.pid = (uint32_t)u[0];
		s.tid = (uint32_t)(u[0] >> 32);
		u++;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(1);
		s.time = *u++;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(1);
		s.cpu = (uint32_t)*u++;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(1);
		s.period = *u++;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(1);
		s.nr = *u++;
		NEED(s.nr);
		s.ips = u;
		u += s.nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size, then the data; padded to 8 bytes in all */
		uint32_t size;

		NEED(1);
		memcpy(&size, u, sizeof(size));
		if ((uint64_t)(end - (const unsigned char *)u) < 4 + (uint64_t)size)
			return;
		s.raw = (const unsigned char *)u + 4;
		s.raw_size = size;
		u = (const uint64_t *)((const unsigned char *)u + ((4 + size + 7) & ~7u));
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		NEED(1);
		s.regs_abi = *u++;
		if (s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			s.nregs = (unsigned int)__builtin_popcountll(
				ps->attr.sample_regs_user);
			NEED(s.nregs);
			s.regs = u;
			u += s.nregs;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		/* u64 size, size bytes, then u64 dyn_size if size != 0 */
		uint64_t size;

		NEED(1);
		size = *u++;
		if (size) {
			NEED(size / 8 + 1);
			s.stack = u;
			s.stack_size = u[size / 8];
			if (s.stack_size > size)
				s.stack_size = size;
			u += size / 8 + 1;
		}
	}
#undef NEED
	if (cb->sample)
		cb->sample(cb->ctx, &s);
}

/* The sample_id_all trailer of a non-sample record: TID and TIME come
 * first when present, and the trailer is the record's last bytes. */
static void sample_id(const struct perf_set *ps, const unsigned char *p,
		      const unsigned char *end, uint32_t *tid, uint64_t *time)
{
	uint64_t st = ps->attr.sample_type;
	size_t n = 0;
	const uint64_t *u;

	*tid = 0;
	*time = 0;
	if (!ps->attr.sample_id_all)
		return;
	n += !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
	     !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
	     !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER);
	if ((size_t)(end - p) < n * 8)
		return;
	u = (const uint64_t *)(end - n * 8);
	if (st & PERF_SAMPLE_TID)
		*tid = (uint32_t)(*u++ >> 32);
	if (st & PERF_SAMPLE_TIME)
		*time = *u;
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

		if (p + 9 <= end &&
		    memchr(comm, '\0', end - (const unsigned char *)comm) && cb->comm)
			cb->comm(cb->ctx, u[1], comm);
		break;
	}
	case PERF_RECORD_FORK: {
		const uint32_t *u = (const uint32_t *)p;

		if (p + 16 <= end && cb->fork)
			cb->fork(cb->ctx, u[0], u[2]); /* pid ppid tid ptid */
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
			uint32_t maj = *(const uint32_t *)(p + 32);
			uint32_t min = *(const uint32_t *)(p + 36);
			uint64_t ino = *(const uint64_t *)(p + 40);

			cb->mmap(cb->ctx, q[0], q[1], q[2], makedev(maj, min), ino, prot,
				 name);
		}
		break;
	}
	case PERF_RECORD_LOST: {
		const uint64_t *u = (const uint64_t *)p;

		if (p + 16 <= end && cb->lost)
			cb->lost(cb->ctx, u[1]);
		break;
	}
	case PERF_RECORD_SWITCH: {
		uint64_t time;
		uint32_t tid;

		if (!cb->ctxsw)
			break;
		sample_id(ps, p, end, &tid, &time);
		cb->ctxsw(cb->ctx, tid, time, !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT),
			  !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT));
		break;
	}
	default:
		break;
	}
}

static uint64_t drain_one(struct perf_set *ps, struct cpu_ring *t,
			  const struct perf_callbacks *cb)
{
	struct perf_event_mmap_page *pc = t->base;
	unsigned char *data = (unsigned char *)t->base + ps->page;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, published = tail;
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
			break; /* cannot happen with a sane kernel: resync */
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
		/* an eighth read: the kernel may write there again while the
		 * rest is parsed (a ring drained late, near full, would
		 * otherwise lose what comes during its drain) */
		if (tail - published >= t->data_size / 8) {
			__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
			published = tail;
		}
	}
	__atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

uint64_t perf_set__drain(struct perf_set *ps, const struct perf_callbacks *cb)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < ps->ncpus; i++)
		if (ps->rings[i].fd >= 0)
			n += drain_one(ps, &ps->rings[i], cb);
	return n;
}

unsigned int perf_set__pollfds(const struct perf_set *ps, struct pollfd *pfd,
			       unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; ps && i < ps->ncpus && n < max; i++)
		if (ps->rings[i].fd >= 0)
			pfd[n++] =
				(struct pollfd){.fd = ps->rings[i].fd, .events = POLLIN};
	return n;
}

void perf_set__enable(struct perf_set *ps)
{
	if (!ps)
		return;
	ps->enabled = 1;
	for (unsigned int i = 0; i < ps->nfds; i++)
		ioctl(ps->fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

void perf_set__disable(struct perf_set *ps)
{
	for (unsigned int i = 0; ps && i < ps->nfds; i++)
		ioctl(ps->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

int perf_close_later(struct perf_closer *c)
{
	int go[2];
	pid_t pid;

	c->go = -1;
	c->pid = 0;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	if (pid == 0) {
		char ch;

		/* a grandchild, reparented to init once this child exits:
		 * nobody has to reap it */
		if (fork())
			_exit(0);
		/* Whoever reads our output must not wait for the closer: its
		 * copies of stdin, stdout and stderr go first. Out of the
		 * terminal's process group, so that ^C there does not reach
		 * it; not a session of its own: with autogroups (the
		 * default) a new session is a new scheduling group, which
		 * EEVDF here left waiting 3.5 s for a CPU beside 400 busy
		 * threads, its parent waiting to reap it. */
		for (int fd = 0; fd < 3; fd++)
			close(fd);
		setpgid(0, 0);
		close(go[1]);
		/* until the recorder closed its copies: the last close of an
		 * event is the slow one, and it must be ours */
		while (read(go[0], &ch, 1) < 0 && errno == EINTR)
			;
		syscall(SYS_close_range, 3U, ~0U, 0U);
		_exit(0);
	}
	close(go[0]);
	c->go = go[1];
	c->pid = pid;
	return 0;
}

void perf_close_go(struct perf_closer *c)
{
	if (c->go >= 0)
		close(c->go);
	while (c->pid > 0 && waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	c->go = -1;
	c->pid = 0;
}

void perf_set__free(struct perf_set *ps)
{
	unsigned int i;

	if (!ps)
		return;
	for (i = 0; ps->rings && i < ps->ncpus; i++)
		if (ps->rings[i].fd >= 0)
			munmap(ps->rings[i].base, ps->page + ps->rings[i].data_size);
	for (i = 0; i < ps->nfds; i++)
		close(ps->fds[i]);
	free(ps->fds);
	free(ps->tids);
	free(ps->rings);
	free(ps->scratch);
	free(ps);
}
