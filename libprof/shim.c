// SPDX-License-Identifier: MIT
/*
 * The runtime shim: the producer side of the segment protocols described in
 * d9_segment.h.
 *
 * Cost model. Every marker loads `seg` and `seg->attached` and returns while
 * no recorder is attached; `seg` points at a static dummy header whose
 * attached word is always 0 when the segment could not be made, so failure
 * costs no more than success and is never retried. Everything past that
 * branch (clock, lease check, ring slot, append) is out of line. Each
 * marker starts with its USDT probe (usdt.h), a nop until a tracer
 * attaches to it.
 *
 * Trust. The recorder can write anything into the shared segment. The shim
 * therefore computes every address from its own compile-time layout, never
 * from header fields, masks every ring index, and seals the memfd against
 * shrinking so no access can fault. A recorder that stops renewing its lease
 * is detached by the next marker that notices.
 *
 * Threads. Each thread appends only to the ring slot it owns (single
 * producer); its slot pointer lives in a thread-local. Slots are claimed
 * with a CAS on the slot state and given back by d9_thread_stop() or, for
 * threads that just exit, by a pthread key destructor.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* this file defines the functions the header's gate macros call */
#define D9PROF_NO_INLINE
#include "d9prof.h"
#include "libprof/ctimer.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "libprof/shim_clock.h"
#include "libprof/usdt.h"

#define API	    __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* an exhausted thread looks for a free slot again after this many records */
#define RETRY_EVERY 4096

enum { INIT_NONE, INIT_RUNNING, INIT_DONE };

/*
 * The inline gate of <d9prof.h>: the poll-path markers call in only while
 * *d9__gate is non-zero. It points at `gate_open` (1: call in, to initialise
 * lazily) until initialisation, then at the segment's attached word (the
 * dummy's, always 0, if it failed). Set before seg is published.
 */
static const uint32_t gate_open = 1;
API const uint32_t *d9__gate = &gate_open;

/*
 * The USDT semaphore every probe shares (usdt.h): the kernel adds one per
 * probe a tracer enables in this process and takes it off again. It sits
 * in .probes, where the tools look for it, and the inline gate reads it
 * through d9__probed: a program built as PIE may hold a copy of a shim
 * variable it names (a copy relocation), and the kernel counts in ours.
 */
__attribute__((section(".probes"), used)) volatile unsigned short d9__probe_sem;
API const uint16_t *const d9__probed = (const uint16_t *)&d9__probe_sem;
#ifdef D9_USDT
#define SEM(name)                                                                        \
	extern volatile unsigned short d9prof_##name##_semaphore                         \
		__attribute__((alias("d9__probe_sem")))
SEM(task_spawn);
SEM(task_poll_start);
SEM(task_poll_end);
SEM(task_terminate);
SEM(task_wake);
SEM(task_waker_drop);
SEM(worker_thread_start);
SEM(worker_thread_stop);
SEM(worker_thread_park);
SEM(worker_thread_unpark);
#endif

/* NULL until the first call; then the segment, or &dummy if it failed */
static struct d9_seg_hdr *seg;
static struct d9_seg_hdr dummy;
static int init_state;
static int init_err;
/* what a fork child must unmap and close (set before seg is published) */
static void *seg_map;
static int seg_fd = -1;
static dev_t seg_dev;
static ino_t seg_ino;

/* process-wide setup, once per process image (fork children inherit it) */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_err;
static pthread_key_t exit_key;
static bool exit_key_ok;

enum { T_NONE, T_OWNER, T_EXHAUSTED, T_GONE };

/* what a thread keeps of its poll (thread_slot.poll) */
enum {
	P_POLL = 1,  /* in a poll of @task */
	P_PEND = 2,  /* ... whose begin is not in the ring yet */
	P_HELD = 4,  /* @task's poll ended (@end) and is not in the ring yet */
	P_WOKEN = 8, /* @task was woken by this thread during or right after it */
	P_LEAN = 16, /* begun in lean mode: written at its end if long enough */
};

/* lean mode: a poll whose wake is not known (thread_slot.delay) */
#define NO_DELAY UINT64_MAX

struct thread_slot {
	struct d9_ring_hdr *ring; /* valid in T_OWNER */
	/* The poll this thread runs or has just run (P_* in @poll). A poll
	 * goes out as one D9_EV_POLL record, held after its end until the
	 * thread's next marker, so that the runtime waking it again at once
	 * (a yield, a requeue) makes it D9_EV_POLL_WOKEN instead of one more
	 * record. A poll with other records inside goes out as BEGIN (before
	 * the first of them) ... END. The pending or held poll is also in the
	 * ring header, for the recorder. @gen: the attach_count it began
	 * under (a poll begun for another recorder is not ours). */
	uint64_t task;
	uint64_t begin;
	uint64_t end;
	uint64_t gen;
	uint64_t site; /* the poll site last seen in the ring's poll_site */
	uint32_t tid;
	uint16_t retry; /* records until an exhausted thread retries */
	uint8_t mode;
	uint8_t poll;
	bool key_set; /* exit_key holds a value for this thread */
	/* An exhausted thread: the attach_count of its last failed claim
	 * (it tries again at once under a new attach), and the recorder it
	 * was counted for in rings_exhausted (0: none), once per recorder,
	 * so that one that attaches to threads which found no slot before it
	 * came learns of them at their first marker. */
	uint64_t tried;
	uint32_t counted_for;
	/* lean mode (d9_segment.h): the poll's d9_lean_hash() and its
	 * wake-to-poll delay (NO_DELAY: not known); the thread's sum slots
	 * (its ring's: NULL until the first lean poll, when their tasks of a
	 * previous owner are cleared), those not flushed (a bit per slot),
	 * the sum_epoch they were last flushed at */
	uint64_t hash;
	uint64_t delay;
	struct d9_sum_area *sums;
	uint64_t dirty[D9_SUM_SETS / 64]; /* a bit per set */
	uint32_t epoch;
	uint32_t victim; /* the way a full set gives up next */
};
/* initial-exec: a plain %fs-relative access even in libd9prof.so, no
 * __tls_get_addr() call on the poll path (the shim's TLS is small) */
static __thread struct thread_slot self __attribute__((tls_model("initial-exec")));
/* What the recorder's BPF programs read in a thread, at the segment's
 * tls_offset from its thread pointer: written by the thread, read in its
 * context (an interrupt, a switch-out), so plain stores in program order
 * (signal fences) suffice. */
static __thread struct d9_tls pub __attribute__((tls_model("initial-exec")));

static void atfork_child(void);
static void thread_exit(void *arg);

/* the shim's one clock, shared with the ctimer handler: in the segment's
 * unit (raw TSC ticks or CLOCK_MONOTONIC ns, see shim_clock.h) */
static inline uint64_t stamp(void)
{
	return d9__clock_now();
}

static inline struct d9_ring_hdr *ring_at(struct d9_seg_hdr *h, uint32_t i)
{
	return (struct d9_ring_hdr *)((char *)h + D9_SEG_RING_OFFSET +
				      (uint64_t)i * D9_SEG_RING_STRIDE);
}

static inline struct d9_name_slot *names_at(struct d9_seg_hdr *h)
{
	return (struct d9_name_slot *)((char *)h + D9_SEG_NAMES_OFFSET);
}

static inline uint64_t *wakes_at(struct d9_seg_hdr *h)
{
	return (uint64_t *)((char *)h + D9_SEG_WAKE_OFFSET);
}

static inline struct d9_sum_area *sums_at(struct d9_seg_hdr *h, uint32_t i)
{
	return (struct d9_sum_area *)((char *)h + D9_SEG_SUM_OFFSET +
				      (uint64_t)i * D9_SEG_SUM_STRIDE);
}

/* Where this thread's struct d9_tls is from its thread pointer (the same
 * for every thread: initial-exec TLS), 0 where not known */
static int64_t tls_offset(void)
{
#if defined(__x86_64__)
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp)); /* the TCB's pointer to itself */
	return (int64_t)((uintptr_t)&pub - tp);
#else
	return 0;
#endif
}

/* ---- setup ---------------------------------------------------------------- */

static void setup(void)
{
	/* Without the child handler a fork child would write into its parent's
	 * rings: no segment at all is better. */
	setup_err = -pthread_atfork(NULL, NULL, atfork_child);
	/* Without the key, threads that exit without d9_thread_stop() keep
	 * their slot; that costs slots, not correctness. */
	exit_key_ok = !pthread_key_create(&exit_key, thread_exit);
}

static int create_segment(struct d9_seg_hdr **out)
{
	struct d9_seg_hdr *h;
	struct stat st;
	void *p;
	int fd, err;

	fd = memfd_create(D9_SEG_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* Sparse: ftruncate allocates nothing, pages fill in as rings are
	 * used. The seals stop anyone holding the fd (the recorder) from
	 * shrinking the file under our mapping, which would SIGBUS us. */
	if (fchmod(fd, 0600) || ftruncate(fd, D9_SEG_SIZE) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    fstat(fd, &st))
		goto fail;
	p = mmap(NULL, D9_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	seg_dev = st.st_dev;
	seg_ino = st.st_ino;
	__atomic_store_n(&seg_fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&seg_map, p, __ATOMIC_RELAXED);

	h = p;
	h->magic = D9_SEG_MAGIC;
	h->version = D9_SEG_VERSION;
	h->hdr_size = D9_SEG_HDR_SIZE;
	h->seg_size = D9_SEG_SIZE;
	h->pid = (uint32_t)getpid();
	h->clock = d9__clock_setup();
	h->create_time = stamp();
	h->nrings = D9_SEG_RINGS;
	h->ring_events = D9_SEG_RING_EVENTS;
	h->ring_offset = D9_SEG_RING_OFFSET;
	h->ring_stride = D9_SEG_RING_STRIDE;
	h->names_count = D9_SEG_NAMES;
	h->names_offset = D9_SEG_NAMES_OFFSET;
	h->sample_words = D9_SEG_SAMPLE_WORDS;
	h->sample_offset = D9_SEG_SAMPLE_OFFSET;
	h->sample_stride = D9_SEG_SAMPLE_STRIDE;
	h->sum_offset = D9_SEG_SUM_OFFSET;
	h->sum_stride = D9_SEG_SUM_STRIDE;
	h->wake_offset = D9_SEG_WAKE_OFFSET;
	h->wake_slots = D9_WAKE_SLOTS;
	h->tls_offset = tls_offset();
	*out = h;
	return 0;
fail:
	err = -errno;
	close(fd);
	return err;
}

/*
 * Command mode: `d9prof record -- CMD` puts D9_ATTACH_WAIT_ENV=PID:MS in the
 * environment of the process it starts. That process (PID: not its
 * children, which inherit the variable) waits, once, for at most MS
 * milliseconds after making its segment until a recorder attaches, so
 * that its first markers are recorded. Only the initialising thread
 * waits, with nanosleep: no locks; other threads' markers go on detached.
 */
static void wait_for_recorder(struct d9_seg_hdr *h)
{
	const char *v = getenv(D9_ATTACH_WAIT_ENV);
	struct timespec ts = {0, 200000};
	long pid = 0, ms = 0;
	char *end;

	if (!v)
		return;
	pid = strtol(v, &end, 10);
	if (*end != ':' || pid != (long)getpid())
		return;
	ms = strtol(end + 1, &end, 10);
	if (*end || ms <= 0 || ms > 10000)
		return;
	for (long i = 0; i < ms * 5 && !__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE);
	     i++)
		nanosleep(&ts, NULL);
}

/* One thread wins the right to initialise; the others carry on detached
 * meanwhile (markers) or wait for it (d9_init). */
static void try_init(void)
{
	struct d9_seg_hdr *h = &dummy;
	int none = INIT_NONE, err;

	if (!__atomic_compare_exchange_n(&init_state, &none, INIT_RUNNING, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	pthread_once(&setup_once, setup);
	err = setup_err;
	if (!err)
		err = create_segment(&h);
	if (err)
		h = &dummy;
	__atomic_store_n(&init_err, err, __ATOMIC_RELAXED);
	if (!err)
		wait_for_recorder(h);
	__atomic_store_n(&d9__gate, &h->attached, __ATOMIC_RELEASE);
	__atomic_store_n(&seg, h, __ATOMIC_RELEASE);
	__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
}

static __attribute__((cold, noinline)) struct d9_seg_hdr *lazy_init(void)
{
	struct d9_seg_hdr *h;

	try_init();
	h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);
	return h ? h : &dummy; /* another thread is still at it */
}

/* The segment, for the markers: never waits. */
static inline struct d9_seg_hdr *segment(void)
{
	struct d9_seg_hdr *h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);

	if (unlikely(!h))
		h = lazy_init();
	return h;
}

/* The segment, for calls off the poll path that must not lose a name to an
 * initialisation running in another thread. */
static struct d9_seg_hdr *segment_ready(void)
{
	struct d9_seg_hdr *h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);

	if (unlikely(!h)) {
		d9_init();
		h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);
	}
	return h ? h : &dummy;
}

API int d9_init(void)
{
	if (!__atomic_load_n(&seg, __ATOMIC_ACQUIRE)) {
		try_init();
		/* not the poll path: wait out an initialisation elsewhere */
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE)
			sched_yield();
	}
	return __atomic_load_n(&init_err, __ATOMIC_RELAXED);
}

/*
 * The child has one thread and a copy of the parent's mapping: writing to it
 * would corrupt the parent's rings. Drop it; the child makes its own segment
 * on first use. An initialisation that was running in another parent thread
 * at fork time may leak one fd or mapping in the child; nothing worse.
 */
static void atfork_child(void)
{
	void *map = __atomic_load_n(&seg_map, __ATOMIC_RELAXED);
	int fd = __atomic_load_n(&seg_fd, __ATOMIC_RELAXED);
	struct stat st;

	if (map)
		munmap(map, D9_SEG_SIZE);
	/* the host may have closed our fd and reused the number */
	if (fd >= 0 && !fstat(fd, &st) && st.st_dev == seg_dev && st.st_ino == seg_ino)
		close(fd);
	__atomic_store_n(&seg_map, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&seg_fd, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&init_err, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&d9__gate, &gate_open, __ATOMIC_RELEASE);
	__atomic_store_n(&seg, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&init_state, INIT_NONE, __ATOMIC_RELEASE);
	self = (struct thread_slot){.key_set = self.key_set};
	d9__ctimer_atfork_child();
}

/* ---- rings ---------------------------------------------------------------- */

/* Attached with a live lease? Clears attached if the lease ran out: the
 * recorder died or stalled, and we must not keep paying for it. */
static bool lease_ok(struct d9_seg_hdr *h, uint64_t now)
{
	uint32_t one = 1;

	if (likely(now <= __atomic_load_n(&h->lease_deadline, __ATOMIC_RELAXED)))
		return true;
	__atomic_compare_exchange_n(&h->attached, &one, 0, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	return false;
}

static inline bool attached(struct d9_seg_hdr *h)
{
	return __atomic_load_n(&h->attached, __ATOMIC_ACQUIRE);
}

/* Append @k records as one group, or drop them all and count them. The
 * unsigned difference also reads a tail beyond head (a confused recorder)
 * as "full". */
static void append(struct d9_ring_hdr *r, const struct d9_event *ev, uint32_t k)
{
	struct d9_event *slots = d9_ring_events(r);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t i;

	if (unlikely(head - tail > D9_SEG_RING_EVENTS - k)) {
		/* single writer: no read-modify-write needed */
		__atomic_store_n(&r->drops,
				 __atomic_load_n(&r->drops, __ATOMIC_RELAXED) + k,
				 __ATOMIC_RELAXED);
		return;
	}
	for (i = 0; i < k; i++)
		slots[(head + i) & (D9_SEG_RING_EVENTS - 1)] = ev[i];
	__atomic_store_n(&r->head, head + k, __ATOMIC_RELEASE);
}

static void set_ring_name(struct d9_ring_hdr *r, const char *name)
{
	size_t i, n = name ? strnlen(name, sizeof(r->name) - 1) : 0;

	for (i = 0; i < sizeof(r->name); i++)
		__atomic_store_n(&r->name[i], i < n ? name[i] : '\0', __ATOMIC_RELAXED);
}

/* Make ring @r, just claimed, ours. gen goes last (release): a reader that
 * sees the new gen sees the new owner's fields. */
static void take(struct d9_ring_hdr *r)
{
	int i;

	if (!self.tid)
		self.tid = (uint32_t)gettid();
	__atomic_store_n(&r->tid, self.tid, __ATOMIC_RELAXED);
	__atomic_store_n(&r->drops, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->sample_drops, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->samples, 0, __ATOMIC_RELAXED);
	for (i = 0; i < D9_POLL_SITES; i++)
		__atomic_store_n(&r->poll_site[i], 0, __ATOMIC_RELAXED);
	self.site = 0;
	set_ring_name(r, NULL);
	__atomic_store_n(&r->gen, __atomic_load_n(&r->gen, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELEASE);
	self.ring = r;
	self.mode = T_OWNER;
	/* Arms the exit destructor. glibc allocates nothing here for the first
	 * 32 keys of a process, and this runs once per thread. */
	if (exit_key_ok && !self.key_set) {
		pthread_setspecific(exit_key, &self);
		self.key_set = true;
	}
}

static struct d9_ring_hdr *claim(struct d9_seg_hdr *h)
{
	uint32_t i;

	for (i = 0; i < D9_SEG_RINGS; i++) {
		struct d9_ring_hdr *r = ring_at(h, i);
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_RELAXED);

		/* a DEAD ring still holds records for an attached recorder */
		if (st != D9_RING_FREE && (st != D9_RING_DEAD || attached(h)))
			continue;
		if (__atomic_compare_exchange_n(&r->state, &st, D9_RING_LIVE, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			take(r);
			self.sums = NULL;
			return r;
		}
	}
	return NULL;
}

/*
 * The calling thread's ring, claiming one if it has none. @announce: write
 * THREAD_START so an attached recorder learns the new owner in-stream.
 * After a claim *now is read again: the previous owner's last record may be
 * later than the time our caller took before the claim, and times in a
 * ring must not go backwards.
 */
static __attribute__((noinline)) struct d9_ring_hdr *
claim_slow(struct d9_seg_hdr *h, uint64_t *now, bool announce)
{
	struct d9_ring_hdr *r;

	uint64_t gen = __atomic_load_n(&h->attach_count, __ATOMIC_RELAXED);

	if (self.mode == T_GONE || h == &dummy)
		return NULL;
	if (self.mode == T_EXHAUSTED && self.tried == gen && --self.retry)
		return NULL;
	r = claim(h);
	if (!r) {
		uint32_t rec = __atomic_load_n(&h->recorder_pid, __ATOMIC_RELAXED);

		if (attached(h) && rec && self.counted_for != rec) {
			__atomic_fetch_add(&h->rings_exhausted, 1, __ATOMIC_RELAXED);
			self.counted_for = rec;
		}
		self.tried = gen;
		self.mode = T_EXHAUSTED;
		self.retry = RETRY_EVERY;
		return NULL;
	}
	*now = stamp();
	if (announce) {
		struct d9_event ev = {
			.time = *now, .task = self.tid, .type = D9_EV_THREAD_START};

		append(r, &ev, 1);
	}
	return r;
}

static inline struct d9_ring_hdr *own_ring(struct d9_seg_hdr *h, uint64_t *now,
					   bool announce)
{
	if (likely(self.mode == T_OWNER))
		return self.ring;
	return claim_slow(h, now, announce);
}

/* One record straight into the ring: the common case of append(), without
 * the copy through a stack struct and the loop. */
static inline void append1(struct d9_ring_hdr *r, uint64_t time, uint64_t task,
			   uint32_t type, uint32_t arg)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	struct d9_event *e;

	if (unlikely(head - tail > D9_SEG_RING_EVENTS - 1)) {
		__atomic_store_n(&r->drops,
				 __atomic_load_n(&r->drops, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		return;
	}
	e = &d9_ring_events(r)[head & (D9_SEG_RING_EVENTS - 1)];
	e->time = time;
	e->task = task;
	e->type = type;
	e->arg = arg;
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

/* The ring header's poll (d9_segment.h), a seqlock of one writer: odd
 * while it changes. */
static inline uint64_t hdr_lock(struct d9_ring_hdr *r)
{
	uint64_t s = __atomic_load_n(&r->open_seq, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&r->open_seq, s, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return s;
}

static inline void hdr_unlock(struct d9_ring_hdr *r, uint64_t s)
{
	__atomic_store_n(&r->open_seq, s + 1, __ATOMIC_RELEASE);
}

static inline bool ours(struct d9_seg_hdr *h)
{
	return self.gen == __atomic_load_n(&h->attach_count, __ATOMIC_RELAXED);
}

/* The kept (pending or held) poll into the ring, if it was begun for the
 * recorder attached now: whole when held, its BEGIN when pending. Call
 * inside hdr_lock(), in the section that takes it out of the header. */
static inline void write_kept(struct d9_seg_hdr *h, struct d9_ring_hdr *r)
{
	uint8_t p = self.poll;

	if (ours(h)) {
		if (p & P_HELD)
			append1(r, self.end, self.task,
				p & P_WOKEN ? D9_EV_POLL_WOKEN : D9_EV_POLL,
				(uint32_t)(self.end - self.begin));
		else
			append1(r, self.begin, self.task, D9_EV_POLL_BEGIN, 0);
	}
	/* a poll whose begin is written goes on, as BEGIN ... END */
	self.poll = p & P_POLL ? p & (P_POLL | P_WOKEN | P_LEAN) : 0;
}

/* Before any other record: the kept poll goes into the ring, and leaves
 * the header in the same seqlock section. */
static inline void flush_poll(struct d9_seg_hdr *h, struct d9_ring_hdr *r)
{
	uint64_t s;

	if (likely(!(self.poll & (P_PEND | P_HELD))))
		return;
	s = hdr_lock(r);
	write_kept(h, r);
	__atomic_store_n(&r->open_task, 0, __ATOMIC_RELAXED);
	hdr_unlock(r, s);
}

/* A poll begins: kept in the thread and the ring header, not written; the
 * poll kept before it is written in the same seqlock section. */
static inline void poll_begin(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint64_t now,
			      uint64_t task)
{
	uint64_t gen = __atomic_load_n(&h->attach_count, __ATOMIC_RELAXED);
	uint64_t s = hdr_lock(r);

	if (self.poll & (P_PEND | P_HELD))
		write_kept(h, r); /* the poll before, or a begin without an end */
	__atomic_store_n(&r->open_task, task, __ATOMIC_RELAXED);
	__atomic_store_n(&r->open_time, now, __ATOMIC_RELAXED);
	__atomic_store_n(&r->open_end, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->open_gen, gen, __ATOMIC_RELAXED);
	hdr_unlock(r, s);
	self.task = task;
	self.begin = now;
	self.gen = gen;
	self.poll = P_POLL | P_PEND;
}

/* A poll ends: held as one record when its begin is still pending and its
 * length fits, else BEGIN (if pending), WAKE (if woken), END now. */
static inline void poll_end(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint64_t now,
			    uint64_t task)
{
	uint8_t p = self.poll;
	bool mine = (p & P_POLL) && task == self.task;

	if (likely(mine && (p & P_PEND) && now - self.begin <= UINT32_MAX && ours(h))) {
		uint64_t s = hdr_lock(r);

		__atomic_store_n(&r->open_end, now, __ATOMIC_RELAXED);
		hdr_unlock(r, s);
		self.end = now;
		self.poll = P_HELD | (p & P_WOKEN);
		return;
	}
	flush_poll(h, r);
	if (mine && (p & P_WOKEN))
		append1(r, now, task, D9_EV_WAKE, 0);
	append1(r, now, task, D9_EV_POLL_END, 0);
	self.poll = 0;
}

/* A wake folded into the poll just held must come this soon after its end
 * (clock units: ~1.5 us of TSC, 4 us of ns), else it is a wake of its own:
 * work between the end and the wake would count as the task waiting. */
#define WAKE_FOLD 4096

/* A wake by this thread of the task it polls (no clock), or of the one
 * whose poll it holds, right after that poll's end: that task could not
 * run again before that end, which is when the poll's record says it
 * became runnable. True if it was one of those (one record at most, the
 * held poll's). */
static inline bool own_wake(struct d9_seg_hdr *h, uint64_t task)
{
	uint8_t p = self.poll;

	if (!task || task != self.task || !(p & (P_POLL | P_HELD)) || !ours(h))
		return false;
	if (p & P_POLL) {
		self.poll = p | P_WOKEN;
		return true;
	}
	if (self.mode == T_OWNER && stamp() - self.end <= WAKE_FOLD) {
		self.poll = p | P_WOKEN;
		flush_poll(h, self.ring);
		return true;
	}
	return false;
}

/* The recorder's lease ran out: what this thread kept of a poll is not
 * written (the next recorder will not want it). */
static __attribute__((cold, noinline)) void lapsed(void)
{
	if ((self.poll & (P_PEND | P_HELD)) && self.mode == T_OWNER) {
		uint64_t s = hdr_lock(self.ring);

		__atomic_store_n(&self.ring->open_task, 0, __ATOMIC_RELAXED);
		hdr_unlock(self.ring, s);
	}
	self.poll = 0;
}

/* ---- lean mode (d9_segment.h) ------------------------------------------------ */

static inline uint64_t lean_poll(struct d9_seg_hdr *h)
{
	return __atomic_load_n(&h->lean_poll, __ATOMIC_RELAXED);
}

/* What BPF reads of this thread: the task it polls (0: none) and since */
static inline void publish(uint64_t task, uint64_t begin)
{
	if (task) {
		pub.begin = begin;
		__atomic_signal_fence(__ATOMIC_RELEASE);
	}
	pub.task = task;
	__atomic_signal_fence(__ATOMIC_RELEASE);
}

/* Task @hash's wake at @now into the wake table, unless one is there */
static inline void wake_put(struct d9_seg_hdr *h, uint64_t hash, uint64_t now)
{
	uint64_t *w = &wakes_at(h)[D9_WAKE_INDEX(hash)];
	uint64_t tag = D9_WAKE_TAG(hash);

	if (__atomic_load_n(w, __ATOMIC_RELAXED) >> 48 != tag)
		__atomic_store_n(w, tag << 48 | ((now >> D9_WAKE_SHIFT) & D9_WAKE_MASK),
				 __ATOMIC_RELAXED);
}

/* Task @hash's wake out of the table: its delay to @now, or NO_DELAY */
static inline uint64_t wake_take(struct d9_seg_hdr *h, uint64_t hash, uint64_t now)
{
	uint64_t *w = &wakes_at(h)[D9_WAKE_INDEX(hash)];
	uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);

	if (likely(v >> 48 != D9_WAKE_TAG(hash)))
		return NO_DELAY;
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	return (((now >> D9_WAKE_SHIFT) - v) & D9_WAKE_MASK) << D9_WAKE_SHIFT;
}

static void wake_clear(struct d9_seg_hdr *h, uint64_t task)
{
	uint64_t hash = d9_lean_hash(task);
	uint64_t *w = &wakes_at(h)[D9_WAKE_INDEX(hash)];

	if (__atomic_load_n(w, __ATOMIC_RELAXED) >> 48 == D9_WAKE_TAG(hash))
		__atomic_store_n(w, 0, __ATOMIC_RELAXED);
}

/* Slot @s's sums into ring @r as D9_EV_SUMMARY groups at @now, the slot
 * emptied for its task to go on. A group the ring has no room for is
 * dropped and counted, like any record. */
static __attribute__((noinline)) void flush_slot(struct d9_ring_hdr *r,
						 struct d9_sum_slot *s, uint64_t now)
{
	struct d9_event ev[1 + D9_SUM_RECORDS];
	struct d9_sum_head *head = (struct d9_sum_head *)&ev[1];
	uint64_t *entry = (uint64_t *)&ev[3];
	uint32_t which, b, n = 0;

	memset(ev, 0, sizeof(ev));
	*head = (struct d9_sum_head){
		.polls = s->polls,
		.delays = s->delays,
		.poll_total = s->poll_total,
		.delay_total = s->delay_total,
		.poll_max = s->poll_max,
		.delay_max = s->delay_max,
	};
	for (which = 0; which < 2; which++)
		for (b = 0; b < D9_SUM_BUCKETS; b++) {
			/* four buckets at once: most are zero */
			if (!(b & 3)) {
				uint64_t four;

				memcpy(&four, &s->hist[which][b], sizeof(four));
				if (!four) {
					b += 3;
					continue;
				}
			}
			if (!s->hist[which][b])
				continue;
			entry[n++] = d9_sum_entry(which, b, s->hist[which][b]);
			s->hist[which][b] = 0;
			if (n < D9_SUM_ENTRIES)
				continue;
			/* a full group: the next one sums on it */
			ev[0] = (struct d9_event){.time = now,
						  .task = s->task,
						  .type = D9_EV_SUMMARY,
						  .arg = D9_SUM_RECORDS};
			append(r, ev, 1 + D9_SUM_RECORDS);
			memset(&ev[1], 0, sizeof(ev) - sizeof(ev[0]));
			n = 0;
		}
	if (n || head->polls || head->delays) {
		ev[0] = (struct d9_event){.time = now,
					  .task = s->task,
					  .type = D9_EV_SUMMARY,
					  .arg = 2 + (n + 2) / 3};
		append(r, ev, 1 + ev[0].arg);
	}
	s->polls = s->delays = 0;
	s->poll_total = s->delay_total = s->poll_max = s->delay_max = 0;
}

/* Every slot with sums into ring @r */
static __attribute__((noinline)) void flush_sums(struct d9_seg_hdr *h,
						 struct d9_ring_hdr *r, uint64_t now)
{
	self.epoch = __atomic_load_n(&h->sum_epoch, __ATOMIC_RELAXED);
	for (uint32_t k = 0; k < D9_SUM_SETS / 64; k++)
		while (self.dirty[k]) {
			uint32_t set = k * 64 + (uint32_t)__builtin_ctzll(self.dirty[k]);

			self.dirty[k] &= self.dirty[k] - 1;
			for (uint32_t w = 0; w < D9_SUM_WAYS; w++)
				if (self.sums->slot[set][w].polls)
					flush_slot(r, &self.sums->slot[set][w], now);
		}
}

static inline bool sums_dirty(void)
{
	uint64_t any = 0;

	for (uint32_t k = 0; k < D9_SUM_SETS / 64; k++)
		any |= self.dirty[k];
	return any != 0;
}

/* The thread's sum slots, the first time: a previous owner's are not its */
static __attribute__((cold, noinline)) void sums_init(struct d9_seg_hdr *h,
						      struct d9_ring_hdr *r)
{
	uint32_t i = (uint32_t)(((char *)r - (char *)h - D9_SEG_RING_OFFSET) /
				D9_SEG_RING_STRIDE);

	self.sums = sums_at(h, i);
	memset(self.sums->tag, 0, sizeof(self.sums->tag));
	memset(self.dirty, 0, sizeof(self.dirty));
	self.epoch = __atomic_load_n(&h->sum_epoch, __ATOMIC_RELAXED);
}

/* A slot of set @set for @task, not in it: a free one, else the one the
 * set gives up next, its sums flushed first */
static __attribute__((noinline)) struct d9_sum_slot *
sum_take(struct d9_ring_hdr *r, uint32_t set, uint64_t task, uint64_t now)
{
	uint64_t *tag = self.sums->tag[set];
	struct d9_sum_slot *s;
	uint32_t w;

	for (w = 0; w < D9_SUM_WAYS && tag[w]; w++)
		;
	if (w == D9_SUM_WAYS)
		w = self.victim++ % D9_SUM_WAYS;
	s = &self.sums->slot[set][w];
	if (tag[w] && s->polls)
		flush_slot(r, s, now);
	else if (!tag[w])
		memset(s, 0, sizeof(*s));
	tag[w] = task;
	s->task = task;
	return s;
}

/* Value @v (in bucket @b) into slot @s's histogram @which (0 lengths, 1
 * waits) and its count, total and maximum */
static inline void sum_in(struct d9_sum_slot *s, uint32_t which, uint32_t b, uint64_t v,
			  uint32_t *n, uint64_t *total, uint64_t *max)
{
	++*n;
	*total += v;
	if (v > *max)
		*max = v;
	s->hist[which][b]++;
}

/* A poll of @task lasting @len, waited @delay for (NO_DELAY: unknown),
 * into its sums */
static inline void sum_add(struct d9_ring_hdr *r, uint64_t task, uint64_t len,
			   uint64_t delay, uint64_t now)
{
	uint32_t set = D9_SUM_SET(self.hash), w;
	uint32_t bl = d9_sum_bucket(len),
		 bd = delay != NO_DELAY ? d9_sum_bucket(delay) : 0;
	const uint64_t *tag = self.sums->tag[set];
	struct d9_sum_slot *s;

	for (w = 0; w < D9_SUM_WAYS && tag[w] != task; w++)
		;
	s = likely(w < D9_SUM_WAYS) ? &self.sums->slot[set][w]
				    : sum_take(r, set, task, now);
	/* a count about to overflow: the sums go first, before any of this
	 * poll goes in (one sent between its length and its wait would
	 * leave the slot more waits than polls) */
	if (unlikely(s->hist[0][bl] == UINT16_MAX ||
		     (delay != NO_DELAY && s->hist[1][bd] == UINT16_MAX)))
		flush_slot(r, s, now);
	sum_in(s, 0, bl, len, &s->polls, &s->poll_total, &s->poll_max);
	if (delay != NO_DELAY)
		sum_in(s, 1, bd, delay, &s->delays, &s->delay_total, &s->delay_max);
	self.dirty[set / 64] |= 1ULL << (set % 64);
}

/* A lean poll begins: timed, its wake taken, published, nothing written */
static inline void lean_begin(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint64_t now,
			      uint64_t task)
{
	uint64_t hash = d9_lean_hash(task);

	if (unlikely(self.poll & (P_PEND | P_HELD)))
		flush_poll(h, r); /* a poll of before the mode changed */
	if (unlikely(!self.sums))
		sums_init(h, r);
	self.delay = wake_take(h, hash, now);
	self.hash = hash;
	self.task = task;
	self.begin = now;
	self.gen = __atomic_load_n(&h->attach_count, __ATOMIC_RELAXED);
	self.poll = P_POLL | P_PEND | P_LEAN;
	publish(task, now);
	/* a long wait is written with its poll (lean_end() writes it) */
	if (unlikely(self.delay != NO_DELAY &&
		     self.delay >= __atomic_load_n(&h->lean_delay, __ATOMIC_RELAXED)))
		append1(r, now, task, D9_EV_WOKEN_BEFORE,
			self.delay < UINT32_MAX ? (uint32_t)self.delay : UINT32_MAX);
}

/* A lean poll ends: written if long, or waited long for, or begun in
 * the ring already (another record came during it); summed either way;
 * the sums flushed if the recorder asked. */
static inline void lean_end(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint64_t now,
			    uint64_t task)
{
	uint8_t p = self.poll;
	uint64_t len = now - self.begin, delay = self.delay;

	publish(0, 0);
	self.poll = 0;
	if (unlikely(len >= lean_poll(h) ||
		     (delay != NO_DELAY &&
		      delay >= __atomic_load_n(&h->lean_delay, __ATOMIC_RELAXED)) ||
		     !(p & P_PEND)) &&
	    ours(h)) {
		/* no wake of its own: the wake table has it, and the next
		 * poll's wait is written if long (D9_EV_WOKEN_BEFORE) */
		if (!(p & P_PEND)) {
			append1(r, now, task, D9_EV_POLL_END, 0);
		} else if (len <= UINT32_MAX) {
			append1(r, now, task, D9_EV_POLL, (uint32_t)len);
		} else {
			append1(r, self.begin, task, D9_EV_POLL_BEGIN, 0);
			append1(r, now, task, D9_EV_POLL_END, 0);
		}
	}
	sum_add(r, task, len, delay, now);
	/* runnable again at its end */
	if (p & P_WOKEN)
		wake_put(h, self.hash, now);
	if (unlikely(self.epoch != __atomic_load_n(&h->sum_epoch, __ATOMIC_RELAXED)))
		flush_sums(h, r, now);
}

/* The start of every attached marker: the clock, the lease, the calling
 * thread's ring (NULL: record nothing). */
static inline struct d9_ring_hdr *attached_ring(struct d9_seg_hdr *h, uint64_t *now)
{
	struct d9_ring_hdr *r;

	*now = stamp();
	if (unlikely(!lease_ok(h, *now))) {
		lapsed();
		return NULL;
	}
	r = own_ring(h, now, true);
	if (likely(r))
		d9__ctimer_check(h, r);
	return r;
}

/* Before a record of @type: the kept poll into the ring, but for a lean
 * poll under a span's or an event's record (spans are entered inside
 * nearly every poll of a traced service: writing the poll for them would
 * write every poll; the trace orders spans apart from the polls) */
static inline void flush_for(struct d9_seg_hdr *h, struct d9_ring_hdr *r, uint32_t type)
{
	if ((self.poll & P_LEAN) && type >= D9_EV_SPAN_NEW)
		return;
	flush_poll(h, r);
}

/* The attached path of the markers other than the poll's. */
static __attribute__((noinline)) void record(struct d9_seg_hdr *h, uint32_t type,
					     uint64_t task)
{
	struct d9_ring_hdr *r;
	uint64_t now;

	r = attached_ring(h, &now);
	if (!r)
		return;
	flush_for(h, r, type);
	append1(r, now, task, type, 0);
}

/* Text records for @name (NULL or "" for none) at @ev; returns how many. The
 * text is NUL-terminated inside them. */
static uint32_t fill_text(struct d9_event *ev, const char *name)
{
	size_t n;
	uint32_t k;

	if (!name || !name[0])
		return 0;
	n = strnlen(name, D9_NAME_MAX);
	k = (uint32_t)(n / sizeof(*ev) + 1);
	memset(ev, 0, k * sizeof(*ev));
	memcpy(ev, name, n);
	return k;
}

/* A record followed by the text of @name, all or nothing. */
static __attribute__((cold, noinline)) void
record_named(struct d9_seg_hdr *h, uint32_t type, uint64_t task, const char *name)
{
	struct d9_event ev[1 + D9_TEXT_RECORDS];
	uint64_t now = stamp();
	struct d9_ring_hdr *r;

	if (!lease_ok(h, now)) {
		lapsed();
		return;
	}
	r = own_ring(h, &now, type != D9_EV_THREAD_START);
	if (!r)
		return;
	d9__ctimer_check(h, r);
	flush_poll(h, r);
	if (type == D9_EV_THREAD_START || type == D9_EV_THREAD_STOP)
		task = self.tid;
	ev[0].time = now;
	ev[0].task = task;
	ev[0].type = type;
	ev[0].arg = fill_text(&ev[1], name);
	append(r, ev, 1 + ev[0].arg);
}

/* Give the calling thread's ring back. */
static void release(struct d9_seg_hdr *h)
{
	struct d9_ring_hdr *r = self.ring;
	uint32_t state = D9_RING_FREE;

	if (self.mode != T_OWNER) {
		if (self.mode == T_EXHAUSTED)
			self.mode = T_NONE;
		return;
	}
	if (attached(h) && self.sums && sums_dirty())
		flush_sums(h, r, stamp());
	if (attached(h))
		record_named(h, D9_EV_THREAD_STOP, 0, NULL);
	/* a poll not written (detached) stays with this ring, not the next */
	lapsed();
	/* no sample may land in the slot once it is given back */
	d9__ctimer_thread_stop(h);
	/* records or samples left for the recorder: it frees the ring once
	 * drained */
	if (attached(h) && (__atomic_load_n(&r->head, __ATOMIC_RELAXED) !=
				    __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) ||
			    __atomic_load_n(&r->sample_head, __ATOMIC_RELAXED) !=
				    __atomic_load_n(&r->sample_tail, __ATOMIC_ACQUIRE)))
		state = D9_RING_DEAD;
	/* Detached, leftover records are stale: the next d9_seg_attach()
	 * discards them, so the ring can go straight back to FREE. */
	__atomic_store_n(&r->state, state, __ATOMIC_RELEASE);
	self.ring = NULL;
	self.mode = T_NONE;
}

/* Key destructor: the thread exits without d9_thread_stop(). Markers called
 * from later destructors of the same thread stay no-ops (T_GONE) so the
 * slot cannot be claimed again and leaked. */
static void thread_exit(void *arg)
{
	struct d9_seg_hdr *h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);

	if (h && self.mode == T_OWNER)
		release(h);
	self.mode = T_GONE;
}

/* ---- task names ----------------------------------------------------------- */

/* Seqlock write of a slot's name: seq odd, name, seq even (see d9_segment.h). */
static void slot_set_name(struct d9_name_slot *s, const char *name)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED) | 1;
	size_t i, n = strnlen(name, sizeof(s->name) - 1);

	__atomic_store_n(&s->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* seq odd before any name byte */
	for (i = 0; i < sizeof(s->name); i++)
		__atomic_store_n(&s->name[i], i < n ? name[i] : '\0', __ATOMIC_RELAXED);
	seq++;
	__atomic_store_n(&s->seq, seq ? seq : 2, __ATOMIC_RELEASE);
}

static inline struct d9_name_slot *probe(struct d9_seg_hdr *h, uint64_t at, uint32_t i)
{
	return &names_at(h)[(at + i) & (D9_SEG_NAMES - 1)];
}

static void name_put(struct d9_seg_hdr *h, uint64_t task, const char *name)
{
	uint64_t at = d9_name_hash(task);
	uint32_t i;

	/* a task id spawned again keeps its slot */
	for (i = 0; i < D9_NAME_PROBE; i++) {
		struct d9_name_slot *s = probe(h, at, i);
		uint64_t t = __atomic_load_n(&s->task, __ATOMIC_ACQUIRE);

		if (t == task) {
			slot_set_name(s, name);
			return;
		}
		if (!t)
			break;
	}
	for (i = 0; i < D9_NAME_PROBE; i++) {
		struct d9_name_slot *s = probe(h, at, i);
		uint64_t t = __atomic_load_n(&s->task, __ATOMIC_RELAXED);

		/* a free slot's seq is 0 or odd, so it shows no name until
		 * slot_set_name() completes */
		while (!t || t == D9_NAME_TOMB) {
			if (__atomic_compare_exchange_n(&s->task, &t, task, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				slot_set_name(s, name);
				return;
			}
		}
	}
	__atomic_fetch_add(&h->names_dropped, 1, __ATOMIC_RELAXED);
}

static void name_del(struct d9_seg_hdr *h, uint64_t task)
{
	uint64_t at = d9_name_hash(task);
	uint32_t i;

	for (i = 0; i < D9_NAME_PROBE; i++) {
		struct d9_name_slot *s = probe(h, at, i);
		uint64_t t = __atomic_load_n(&s->task, __ATOMIC_ACQUIRE);

		if (!t)
			return;
		if (t != task)
			continue;
		/* seq odd first, released by the CAS: whoever reuses the slot
		 * finds it marked incomplete */
		__atomic_store_n(&s->seq, __atomic_load_n(&s->seq, __ATOMIC_RELAXED) | 1,
				 __ATOMIC_RELAXED);
		__atomic_compare_exchange_n(&s->task, &t, D9_NAME_TOMB, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		return;
	}
}

/* ---- the API -------------------------------------------------------------- */

/* The detached fast path: a load, a load, a branch. */
#define MARK(call)                                                                       \
	do {                                                                             \
		struct d9_seg_hdr *h_ = segment();                                       \
		if (likely(!__atomic_load_n(&h_->attached, __ATOMIC_ACQUIRE)))           \
			return;                                                          \
		call;                                                                    \
	} while (0)

/* A poll begun from @site (a return address in the runtime's code): in
 * the ring's poll sites unless there already, or they are full. One
 * compare while the thread polls from one place. */
static inline void note_site(struct d9_ring_hdr *r, uint64_t site)
{
	int i;

	if (likely(site == self.site))
		return;
	self.site = site;
	for (i = 0; i < D9_POLL_SITES; i++) {
		uint64_t v = __atomic_load_n(&r->poll_site[i], __ATOMIC_RELAXED);

		if (v == site)
			return;
		if (!v) {
			__atomic_store_n(&r->poll_site[i], site, __ATOMIC_RELAXED);
			return;
		}
	}
}

/* The poll markers' attached paths (out of line, as record()). The task
 * polled is also the ctimer handler's. */
static __attribute__((noinline)) void begin_attached(struct d9_seg_hdr *h, uint64_t task,
						     uint64_t site)
{
	struct d9_ring_hdr *r;
	uint64_t now;

	r = attached_ring(h, &now);
	if (!r)
		return;
	d9__ctimer_task(task);
	note_site(r, site);
	if (lean_poll(h))
		lean_begin(h, r, now, task);
	else
		poll_begin(h, r, now, task);
}

static __attribute__((noinline)) void end_attached(struct d9_seg_hdr *h, uint64_t task)
{
	struct d9_ring_hdr *r;
	uint64_t now;

	r = attached_ring(h, &now);
	if (!r)
		return;
	d9__ctimer_task(0);
	if ((self.poll & P_LEAN) && task == self.task)
		lean_end(h, r, now, task);
	else
		poll_end(h, r, now, task);
}

/* Lean: a wake by this thread of the task it polls makes it runnable at
 * the poll's end; any other is the wake table's */
static void lean_wake(struct d9_seg_hdr *h, uint64_t task)
{
	uint64_t now;

	if (task && task == self.task && (self.poll & P_POLL) && ours(h)) {
		self.poll |= P_WOKEN;
		return;
	}
	now = stamp();
	if (unlikely(!lease_ok(h, now))) {
		lapsed();
		return;
	}
	wake_put(h, d9_lean_hash(task), now);
}

static __attribute__((noinline)) void wake_attached(struct d9_seg_hdr *h, uint64_t task)
{
	if (lean_poll(h))
		lean_wake(h, task);
	else if (!own_wake(h, task))
		record(h, D9_EV_WAKE, task);
}

/* A parked thread may not poll again for long: its sums go now */
static __attribute__((noinline)) void park_attached(struct d9_seg_hdr *h)
{
	record(h, D9_EV_PARK, 0);
	if (self.sums && self.mode == T_OWNER && attached(h) && sums_dirty())
		flush_sums(h, self.ring, stamp());
}

API void d9_poll_begin(uint64_t task)
{
	D9_PROBE1(task_poll_start, task);
	MARK(begin_attached(h_, task, (uint64_t)__builtin_return_address(0)));
}

API void d9_poll_end(uint64_t task)
{
	D9_PROBE1(task_poll_end, task);
	MARK(end_attached(h_, task));
}

API void d9_task_wake(uint64_t task)
{
	D9_PROBE1(task_wake, task);
	MARK(wake_attached(h_, task));
}

API void d9_task_waker_drop(uint64_t task)
{
	D9_PROBE1(task_waker_drop, task);
	MARK(record(h_, D9_EV_WAKER_DROP, task));
}

API void d9_park(void)
{
	D9_PROBE0(worker_thread_park);
	MARK(park_attached(h_));
}

API void d9_unpark(void)
{
	D9_PROBE0(worker_thread_unpark);
	MARK(record(h_, D9_EV_UNPARK, 0));
}

API void d9_task_spawn(uint64_t task, const char *name)
{
	struct d9_seg_hdr *h;

	D9_PROBE2(task_spawn, task, name);
	h = segment_ready();

	if (h == &dummy)
		return;
	/* always, so a recorder that attaches later can name the task */
	if (name && task && task != D9_NAME_TOMB)
		name_put(h, task, name);
	if (attached(h) && lean_poll(h))
		wake_put(h, d9_lean_hash(task), stamp()); /* waits for its first poll */
	if (attached(h))
		record_named(h, D9_EV_SPAWN, task, name);
}

API void d9_task_end(uint64_t task)
{
	struct d9_seg_hdr *h;

	D9_PROBE1(task_terminate, task);
	h = segment();

	if (h == &dummy)
		return;
	if (task && task != D9_NAME_TOMB)
		name_del(h, task);
	if (attached(h) && lean_poll(h))
		wake_clear(h, task);
	if (attached(h))
		record(h, D9_EV_TASK_END, task);
}

API void d9_thread_start(const char *name)
{
	struct d9_seg_hdr *h;
	struct d9_ring_hdr *r;
	uint64_t now = 0;

	D9_PROBE1(worker_thread_start, name);
	h = segment_ready();
	if (h == &dummy)
		return;
	if (self.mode == T_EXHAUSTED)
		self.mode = T_NONE; /* an explicit start may retry at once */
	r = own_ring(h, &now, false);
	if (!r)
		return;
	/* even detached: a recorder attaching later reads it from the ring */
	set_ring_name(r, name);
	d9__ctimer_thread_start();
	if (attached(h))
		record_named(h, D9_EV_THREAD_START, 0, name);
}

API void d9_thread_stop(void)
{
	struct d9_seg_hdr *h;

	D9_PROBE0(worker_thread_stop);
	h = __atomic_load_n(&seg, __ATOMIC_ACQUIRE);
	if (h)
		release(h);
}

/* ---- spans and events ----------------------------------------------------- */

/* The longest first string of a payload followed by a second one. */
#define PAYLOAD_KEY_MAX 47

/* A record and its payload (d9_segment.h), all or nothing: @num's 8
 * bytes if not NULL, then @a and, if not NULL, @b, each NUL-terminated
 * and cut to fit. */
static __attribute__((noinline)) void record_payload(struct d9_seg_hdr *h, uint32_t type,
						     uint64_t task, const uint64_t *num,
						     const char *a, const char *b)
{
	struct d9_event ev[1 + D9_PAYLOAD_RECORDS];
	char *p = (char *)&ev[1];
	size_t n = num ? sizeof(*num) : 0, la, lb;
	struct d9_ring_hdr *r;
	uint64_t now;

	r = attached_ring(h, &now);
	if (!r)
		return;
	flush_for(h, r, type);
	memset(p, 0, D9_PAYLOAD_BYTES);
	if (num)
		memcpy(p, num, sizeof(*num));
	la = strnlen(a, b ? PAYLOAD_KEY_MAX : D9_PAYLOAD_BYTES - n - 1);
	memcpy(p + n, a, la);
	n += la + 1;
	if (b) {
		lb = strnlen(b, D9_PAYLOAD_BYTES - n - 1);
		memcpy(p + n, b, lb);
		n += lb + 1;
	}
	ev[0].time = now;
	ev[0].task = task;
	ev[0].type = type;
	ev[0].arg = (uint32_t)((n + sizeof(*ev) - 1) / sizeof(*ev));
	append(r, ev, 1 + ev[0].arg);
}

API void d9_span_new(uint64_t span, uint64_t parent, const char *name)
{
	MARK(record_payload(h_, D9_EV_SPAN_NEW, span, &parent, name ? name : "", NULL));
}

API void d9_span_enter(uint64_t span)
{
	MARK(record(h_, D9_EV_SPAN_ENTER, span));
}

API void d9_span_exit(uint64_t span)
{
	MARK(record(h_, D9_EV_SPAN_EXIT, span));
}

API void d9_span_close(uint64_t span)
{
	MARK(record(h_, D9_EV_SPAN_CLOSE, span));
}

API void d9_span_field(uint64_t span, const char *key, int64_t value, const char *text)
{
	uint64_t v = (uint64_t)value;

	MARK(record_payload(h_, D9_EV_SPAN_FIELD, span, &v, key ? key : "",
			    text ? text : ""));
}

API void d9_event(const char *name, int64_t value, const char *text)
{
	MARK(record_payload(h_, D9_EV_EVENT, (uint64_t)value, NULL, name ? name : "",
			    text ? text : ""));
}

/* ---- for tests ------------------------------------------------------------ */

void *d9__segment(void)
{
	struct d9_seg_hdr *h = segment_ready();

	return h == &dummy ? NULL : h;
}

size_t d9__segment_size(void)
{
	return d9__segment() ? D9_SEG_SIZE : 0;
}

int d9__segment_fd(void)
{
	return d9__segment() ? __atomic_load_n(&seg_fd, __ATOMIC_RELAXED) : -1;
}
