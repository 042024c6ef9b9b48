/* SPDX-License-Identifier: MIT */
/*
 * d9_segment.h - layout of the shared-memory segment between the shim
 * (writer, inside the target process) and the recorder (reader).
 *
 * This header is the ABI between the two sides and the only file of
 * libprof/ that code outside libprof/ may include. It uses libc types only.
 *
 * The shim creates the segment with memfd_create(D9_SEG_NAME), mode 0600,
 * and maps it shared; the recorder finds it through /proc/PID/maps (the
 * mapping shows as "/memfd:d9prof-seg (deleted)") and opens it through
 * /proc/PID/fd or /proc/PID/map_files. The recorder refuses a segment that
 * is not a regular file owned by the target's uid with mode 0600, whose
 * magic/version do not match, or whose sizes do not add up.
 *
 * Memory layout (all offsets from the segment start, all 64-byte aligned):
 *   struct d9_seg_hdr                      (D9_SEG_HDR_SIZE bytes)
 *   struct d9_name_slot[names_count]       at names_offset
 *   nrings x { struct d9_ring_hdr; struct d9_event[ring_events] }
 *                                          at ring_offset, ring_stride apart
 *   nrings x uint64_t[sample_words]        at sample_offset, sample_stride
 *                                          apart: ctimer sample areas
 *   nrings x struct d9_sum_area           at sum_offset, sum_stride
 *                                          apart: lean mode's poll sums
 *   uint64_t[wake_slots]                   at wake_offset: lean mode's
 *                                          pending wakes
 *
 * Rings are single-producer (the owning thread) single-consumer (the
 * recorder). The producer writes records at index head % ring_events, then
 * publishes with a release store of head; the consumer reads up to an
 * acquire load of head, then releases the space with a release store of
 * tail. A producer that finds no room drops the whole record group and
 * increments drops. Indices are free-running 64-bit counters.
 *
 * Attach protocol: the recorder sets lease_deadline to now + lease (in the
 * segment's clock unit, see D9_CLOCK_TSC), then
 * attached = 1, and renews the lease at least every D9_LEASE_NS / 4 while it
 * drains. A marker that finds now > lease_deadline clears attached itself,
 * so a recorder that dies (SIGKILL) leaves the target at the detached cost
 * within one lease. d9_seg_attach() first discards whatever the rings still
 * hold from earlier sessions, so a recorder sees only records written while
 * it is attached. One recorder at a time: the consumer side is not safe
 * against a second consumer.
 *
 * Ring ownership: a thread claims a slot by CAS on state, FREE -> LIVE (or
 * DEAD -> LIVE while no recorder is attached), then writes tid, name and
 * drops = 0, then bumps gen with a release store. A reader that loads gen
 * with acquire and sees a new value also sees the new owner's tid and name.
 * head and tail are never reset: tail belongs to the consumer. A thread that
 * claims a slot while a recorder is attached first writes a THREAD_START
 * record (arg 0 when it has no name), so the owner is also in the stream.
 * On release the owner sets FREE if no recorder is attached or the ring is
 * empty, else DEAD; the recorder drains a DEAD ring and frees it with
 * d9_ring_reap().
 *
 * ctimer sampling (the fallback when perf_event is refused): the recorder
 * asks with d9_seg_request(D9_REQ_CTIMER, Hz), which bumps request_gen.
 * Each thread that owns a ring compares its last seen request_gen with the
 * header's on the attached path of its markers, and on a change arms (or
 * disarms) a timer on its own CPU-time clock that signals that thread. The
 * handler writes samples into the sample area of the thread's ring slot:
 * same index as the ring, separate memory, so a signal that interrupts a
 * marker's append cannot corrupt it. A sample area is an SPSC ring of u64
 * words (sample_head/sample_tail in the ring header, free-running word
 * indices, masked by sample_words - 1); a sample is D9_SAMPLE_HDR_WORDS words
 * then nframes return addresses (leaf first: the interrupted IP, then the
 * return address of each frame), published by one release store of
 * sample_head, or dropped whole and counted in sample_drops. The handler
 * stops its own timer when it finds the shim detached, the lease run out, or
 * request_gen changed; d9_seg_attach() and d9_seg_detach() bump request_gen
 * and clear the request, so a recorder that dies leaves no timer running once
 * each thread has used at most one more interval of CPU time past the lease.
 * The shim reports what it did in ctimer_status (enum d9_ctimer_status),
 * ctimer_signal and ctimer_threads. A ring whose sample area is not empty is
 * released as DEAD while attached, like one with records, and
 * d9_ring_reap() frees it only once both are drained.
 *
 * The static inline functions at the end of this file are the consumer
 * (recorder) side of these protocols; the shim implements the producer side.
 */
#ifndef D9_SEGMENT_H
#define D9_SEGMENT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define D9_SEG_NAME "d9prof-seg"
/* Set by `d9prof record -- CMD` for CMD: "PID:MS", the started process
 * waits up to MS ms at initialisation for the recorder (shim.c). */
#define D9_ATTACH_WAIT_ENV "D9PROF_ATTACH_WAIT"
#define D9_SEG_MAGIC	   0x3167657339643964ULL /* "d9d9seg1" little-endian */
#define D9_SEG_VERSION	   4
#define D9_SEG_HDR_SIZE	   4096

/* What a recorder accepts at most (d9_seg_check()): the target chooses
 * the sizes, and the recorder's buffers follow them. */
#define D9_RING_EVENTS_MAX (1U << 20)
#define D9_SEG_MAP_MAX	   (1ULL << 30)
#define D9_SEG_RINGS	   256 /* thread slots */
/* records per ring, power of two: 1.5 MiB,
 * 36 ms of a worker writing 1.8M records/s
 * (resident once written; a recorder reads
 * ring_events from the header) */
#define D9_SEG_RING_EVENTS  65536
#define D9_SEG_NAMES	    4096  /* task-name table slots, power of two */
#define D9_SEG_SAMPLE_WORDS 16384 /* u64 words per sample area, power of two */
#define D9_LEASE_NS	    2000000000ULL

/*
 * Time unit of the segment (hdr->clock). Where the TSC is invariant and is
 * the kernel's clocksource, the shim stamps records with raw rdtsc ticks
 * (half the cost of clock_gettime in a VM) and the recorder converts them
 * to CLOCK_MONOTONIC ns from (tsc, CLOCK_MONOTONIC) pairs it takes on every
 * drain; elsewhere the shim stamps CLOCK_MONOTONIC ns itself. Every time in
 * the segment, lease_deadline included, is in this unit.
 */
#define D9_CLOCK_TSC 0x74736300u /* not a Linux clockid */

/* ring slot states */
enum d9_ring_state {
	D9_RING_FREE = 0, /* unowned, empty */
	D9_RING_LIVE = 1, /* owned by a live thread */
	D9_RING_DEAD = 2, /* owner gone; recorder frees it once drained */
};

/* requests (struct d9_seg_hdr.request, a bit mask) */
enum d9_request {
	D9_REQ_NONE = 0,
	D9_REQ_CTIMER = 1, /* arm per-thread CPU timers; request_arg = Hz */
	D9_REQ_STACK = 2,  /* with D9_REQ_CTIMER: samples carry the SP, the
			    * FP and the top of the stack (D9_SAMPLE_STACK);
			    * a shim that predates it ignores the bit */
};

/* what the shim made of a ctimer request (struct d9_seg_hdr.ctimer_status) */
enum d9_ctimer_status {
	D9_CTIMER_OFF = 0,    /* never asked (or no thread has run a marker since) */
	D9_CTIMER_ON = 1,     /* handler installed on ctimer_signal, threads arm */
	D9_CTIMER_NOSIG = 2,  /* the application handles every signal the shim
			       * may use (set D9PROF_SIGNAL to share one) */
	D9_CTIMER_FAILED = 3, /* sigaction or timer_create failed: ctimer_errno */
};

/* A ctimer sample in a sample area: D9_SAMPLE_HDR_WORDS words, then nframes
 * addresses. word 0: nframes (low 32 bits) | weight << 32 (1 + timer
 * overruns); word 1: time (ns, the clock of the header); word 2: the task
 * the thread was polling (0 = none); word 3: tid (low 32) | flags << 32.
 * With D9_SAMPLE_STACK in flags, the frames are followed by the interrupted
 * SP, the interrupted FP and D9_SAMPLE_NSTACK(flags) words of stack from
 * the SP up: enough for the recorder to find with CFI the caller of a
 * function that had not set up its frame, which the frame-pointer walk
 * skips. */
#define D9_SAMPLE_HDR_WORDS	4
#define D9_SAMPLE_MAX_FRAMES	127
#define D9_SAMPLE_MAX_STACK	32 /* stack words a sample may carry */
#define D9_SAMPLE_TRUNCATED	1U /* flags: the walk hit the depth limit */
#define D9_SAMPLE_STACK		2U /* flags: SP, FP and stack words follow */
#define D9_SAMPLE_NSTACK(flags) (((flags) >> 16) & 0xffU)
/* words after the frames */
#define D9_SAMPLE_EXTRA(flags)                                                           \
	((flags)&D9_SAMPLE_STACK ? 2U + D9_SAMPLE_NSTACK(flags) : 0U)

/* event types (struct d9_event.type) */
enum d9_event_type {
	D9_EV_THREAD_START = 1, /* task = tid; arg = number of D9_EV_TEXT after */
	D9_EV_THREAD_STOP = 2,	/* task = tid */
	D9_EV_SPAWN = 3,	/* task; arg = number of D9_EV_TEXT records after */
	D9_EV_WAKE = 4,		/* task */
	D9_EV_POLL_BEGIN = 5,	/* task */
	D9_EV_POLL_END = 6,	/* task */
	D9_EV_TASK_END = 7,	/* task */
	D9_EV_PARK = 8,
	D9_EV_UNPARK = 9,
	/* Ring only (the recorder writes them to traces as BEGIN, END and,
	 * for POLL_WOKEN, a WAKE at the end): a whole poll in one record,
	 * time = its end, arg = its length in the segment's clock unit. The
	 * shim writes one when nothing else was recorded on the thread during
	 * the poll and the length fits in 32 bits; else BEGIN ... END. */
	D9_EV_POLL = 10,       /* task */
	D9_EV_POLL_WOKEN = 11, /* task, woken during the poll (by its own
				* thread): runnable again at its end */
	D9_EV_WAKER_DROP = 12, /* task: pending, its last waker gone */
	/* Lean mode (struct d9_sum_slot): what @task's polls on this thread
	 * did since its last one, time = now, arg = the D9_EV_SUM records
	 * after it (2 + one per 3 buckets, at most D9_SUM_RECORDS): polls,
	 * delays, their totals and maxima, then the buckets not zero
	 * (d9_sum_entry). Additive: two of a task sum. */
	D9_EV_SUMMARY = 13,
	/* Lean mode: the poll of @task that begins now (time) was woken arg
	 * units before (at most UINT32_MAX), by a thread not known; written
	 * for a wait of lean_delay or more, its poll written too */
	D9_EV_WOKEN_BEFORE = 14,
	D9_EV_TEXT = 15, /* continuation: the record's 24 bytes are text */
	/* The application's spans and events (d9_span_*, d9_event): the
	 * record, then arg payload records (at most D9_PAYLOAD_RECORDS, 24
	 * raw bytes each, known like TEXT continuations by the arg before
	 * them only): for NEW and FIELD a u64 first, then, for all three, a
	 * NUL-terminated string and (FIELD, EVENT) a second one, possibly
	 * empty. The recorder takes a payload whose strings are not
	 * terminated inside it as garbage. */
	D9_EV_SPAN_NEW = 16,   /* task = span; payload: parent (0: none),
				* name */
	D9_EV_SPAN_ENTER = 17, /* task = span */
	D9_EV_SPAN_EXIT = 18,  /* task = span */
	D9_EV_SPAN_CLOSE = 19, /* task = span */
	D9_EV_SPAN_FIELD = 20, /* task = span; payload: value (int64), key,
				* text ("": none) */
	D9_EV_EVENT = 21,      /* task = value (int64); payload: name, text
				* ("": none) */
};
#define D9_PAYLOAD_RECORDS 4
#define D9_PAYLOAD_BYTES   (D9_PAYLOAD_RECORDS * 24)
#define D9_SUM_RECORDS	   10 /* continuations of a D9_EV_SUMMARY, at most */

/* One ring record, 24 bytes. A D9_EV_TEXT continuation reuses all 24 bytes
 * as NUL-padded text, type field included: continuations are known only by
 * the arg of the record before them, never by their type. A name spans at
 * most D9_TEXT_RECORDS of them and is
 * always NUL-terminated inside them (so at most D9_NAME_MAX characters). A
 * record and its continuations are published together (one head store) or
 * dropped together. */
struct d9_event {
	uint64_t time; /* CLOCK_MONOTONIC ns */
	uint64_t task;
	uint32_t type; /* enum d9_event_type */
	uint32_t arg;
};
#define D9_TEXT_RECORDS 3
#define D9_NAME_MAX	(D9_TEXT_RECORDS * 24 - 1)

/* Task-name table: names of tasks spawned while no recorder was attached,
 * so a recorder that attaches later can name long-lived tasks. Open
 * addressing, linear probing (D9_NAME_PROBE slots), keyed by task id;
 * task 0 = empty, D9_NAME_TOMB = deleted. The writer sets task, then the
 * name, then seq = (seq | 1) + 1 (even, non-zero = complete); a reader
 * accepts a slot whose seq is even and non-zero, same before and after
 * copying. Before a slot's name changes (update, or removal: seq odd, then
 * task = D9_NAME_TOMB) the writer makes seq odd, so a freed or reused slot
 * never shows an old name under a new task. The name is NUL-terminated
 * (longer names are truncated). Slot index: d9_name_hash(task) % names_count,
 * then the next D9_NAME_PROBE - 1 slots, wrapping. */
#define D9_NAME_PROBE 16
#define D9_NAME_TOMB  UINT64_MAX
struct d9_name_slot {
	uint64_t task;
	uint32_t seq;
	char name[52];
};

#define D9_POLL_SITES 4 /* struct d9_ring_hdr.poll_site */

/*
 * Lean mode (d9prof record --lean: lean_poll != 0 in the header). A poll
 * is timed (the clock at each end) and written only when it lasted at
 * least lean_poll or its wake waited at least lean_delay (clock units);
 * every poll, written or not, is summed per task in its thread's
 * struct d9_sum_area (D9_SUM_WAYS-way sets chosen by d9_lean_hash(), the
 * owner its only reader and writer) and the sums go into the ring as
 * D9_EV_SUMMARY groups: for a slot another task takes (a full set's,
 * round robin), for a bucket about to overflow, for all of them when the
 * recorder bumps sum_epoch (at the thread's next poll end) and when the
 * thread parks or stops. Durations and delays fall in d9_sum_bucket()'s
 * buckets: 8 exact, then 4 per power of two (each under 1/4 of its
 * value wide), the last one open.
 *
 * Wake-to-poll delays: a wake stores its time in the wake table (one u64
 * per slot: D9_WAKE_TAG(hash) << 48 | (time >> D9_WAKE_SHIFT) mod 2^48;
 * 0 is none) unless the slot holds a wake of that task already (the
 * first wake counts); the task's next poll begin takes it out (relaxed
 * loads and stores: a wake racing the poll that takes it belongs to
 * that poll). A task that ends clears its slot. Another task's wake in
 * the same slot replaces it: that task's poll has no delay (counted as
 * polls without one).
 *
 * What the sampler's BPF programs read: each thread's struct d9_tls at
 * tls_offset from its thread pointer (x86-64: fs base), the task it
 * polls now (0: none) and that poll's begin.
 */
#define D9_SUM_SETS    128
#define D9_SUM_WAYS    4
#define D9_SUM_BUCKETS 144
#define D9_WAKE_SLOTS  16384 /* power of two */
#define D9_WAKE_SHIFT  4

struct d9_tls {
	uint64_t task;
	uint64_t begin;
};

struct d9_sum_slot {
	uint64_t task; /* 0: empty */
	uint32_t polls;
	uint32_t delays; /* polls whose wake-to-poll delay is known */
	uint64_t poll_total, delay_total;
	uint64_t poll_max, delay_max;
	uint16_t hist[2][D9_SUM_BUCKETS]; /* [0] poll lengths, [1] delays */
};

struct d9_sum_area {
	uint64_t tag[D9_SUM_SETS][D9_SUM_WAYS]; /* each slot's task, 0: none */
	struct d9_sum_slot slot[D9_SUM_SETS][D9_SUM_WAYS];
};

/* A D9_EV_SUMMARY's first two continuations; the entries follow, three
 * to a record (0: none) */
struct d9_sum_head {
	uint32_t polls, delays;
	uint64_t poll_total, delay_total;
	uint64_t poll_max, delay_max;
	uint64_t pad;
};
#define D9_SUM_ENTRIES ((D9_SUM_RECORDS - 2) * 3) /* a group's, at most */

/* A poll's hash in lean mode: its sum slot is the top bits, its wake
 * slot the next ones, its wake tag bits below them. */
static inline uint64_t d9_lean_hash(uint64_t task)
{
	return task * 0x9e3779b97f4a7c15ULL;
}
#define D9_SUM_SET(h)	 ((uint32_t)((h) >> 57))
#define D9_WAKE_INDEX(h) ((uint32_t)((h) >> 43) & (D9_WAKE_SLOTS - 1))
#define D9_WAKE_TAG(h)	 ((((h) >> 20) & 0x7fffULL) | 0x8000ULL)
#define D9_WAKE_MASK	 ((1ULL << 48) - 1)
_Static_assert(D9_SUM_SETS == 128 && D9_WAKE_SLOTS <= (1 << 14), "hash bits");

static inline uint32_t d9_sum_bucket(uint64_t v)
{
	uint32_t msb, b;

	if (v < 8)
		return (uint32_t)v;
	msb = 63 - (uint32_t)__builtin_clzll(v);
	b = (msb - 1) * 4 + (uint32_t)((v >> (msb - 2)) & 3);
	return b < D9_SUM_BUCKETS ? b : D9_SUM_BUCKETS - 1;
}

/* A summary's bucket entry (a u64 of its continuation records): the
 * histogram (0 lengths, 1 delays), the bucket, the count */
static inline uint64_t d9_sum_entry(uint32_t which, uint32_t b, uint32_t count)
{
	return (uint64_t)which << 63 | (uint64_t)b << 32 | count;
}

struct d9_ring_hdr {
	/* owner-written, read by the recorder */
	uint32_t state; /* enum d9_ring_state */
	uint32_t tid;	/* kernel TID of the owner (gettid) */
	uint64_t gen;	/* bumped each time the slot changes owner */
	char name[48];	/* thread name given to d9_thread_start */
	/* producer cache line */
	uint64_t head __attribute__((aligned(64)));
	uint64_t drops; /* records dropped because the ring was full */
	/* The owner's poll not in the ring yet (it goes out as one
	 * D9_EV_POLL record, held after its end until the owner's next
	 * marker, or as BEGIN before the next other record): its task (0:
	 * none), begin, end (0: in progress) and the attach_count it began
	 * under. A seqlock: the owner makes open_seq odd, writes, makes it
	 * even (release); the record that writes the poll is published and
	 * open_task set to 0 inside one such section. d9_ring_open_poll()
	 * reads it. */
	uint64_t open_seq;
	uint64_t open_task;
	uint64_t open_time;
	uint64_t open_end;
	uint64_t open_gen;
	/* consumer cache line */
	uint64_t tail __attribute__((aligned(64)));
	/* Where the owner's polls begin: the return addresses of its calls
	 * to d9_poll_begin (in the runtime's function that calls into the
	 * task), the first D9_POLL_SITES distinct ones, 0 = none. Written
	 * by the owner (relaxed, each slot once per ownership; cleared when
	 * the slot changes owner, before gen), read with
	 * d9_ring_poll_site(). A shim that predates them leaves zeros. */
	uint64_t poll_site[D9_POLL_SITES];
	uint64_t pad_[3];
	/* the slot's ctimer sample area: producer (signal handler) line */
	uint64_t sample_head __attribute__((aligned(64)));
	uint64_t sample_drops; /* samples dropped because the area was full */
	uint64_t samples;      /* samples written by the current owner */
	/* consumer line */
	uint64_t sample_tail __attribute__((aligned(64)));
	uint64_t pad2_[7];
};

struct d9_seg_hdr {
	/* written once by the shim at creation */
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;    /* D9_SEG_HDR_SIZE */
	uint64_t seg_size;    /* total bytes */
	uint32_t pid;	      /* getpid() of the creator, in its namespace */
	uint32_t clock;	      /* unit of every time in the segment:
			       * D9_CLOCK_TSC or CLOCK_MONOTONIC (ns) */
	uint64_t create_time; /* ns, same clock */
	uint32_t nrings;
	uint32_t ring_events;
	uint64_t ring_offset;
	uint64_t ring_stride; /* bytes between ring headers */
	uint32_t names_count;
	uint32_t sample_words; /* u64 words per sample area, power of two */
	uint64_t names_offset;
	uint64_t sample_offset;
	uint64_t sample_stride; /* bytes between sample areas */
	uint64_t sum_offset;
	uint64_t sum_stride; /* bytes between threads' sum slots */
	uint64_t wake_offset;
	uint32_t wake_slots;
	uint32_t pad_;
	int64_t tls_offset; /* of a thread's struct d9_tls from its thread
			     * pointer; 0: not known */

	/* control, written by the recorder (and cleared by markers on lease
	 * expiry); on its own cache line */
	uint32_t attached __attribute__((aligned(64)));
	uint32_t recorder_pid;
	uint64_t lease_deadline; /* in the unit of clock */
	uint64_t attach_count;	 /* bumped by each recorder that attaches */
	uint32_t request;	 /* enum d9_request bits */
	uint32_t request_arg;	 /* D9_REQ_CTIMER: samples per CPU second */
	uint32_t request_gen;	 /* bumped after each change of request */
	uint32_t sum_epoch;	 /* lean: bumped to have the sums flushed */
	uint64_t lean_poll;	 /* lean mode: write polls this long, 0: off */
	uint64_t lean_delay;	 /* ... and polls whose wake waited this long */

	/* shim-written counters, on their own cache line */
	uint64_t names_dropped __attribute__((aligned(64)));
	uint64_t rings_exhausted; /* threads that found no free slot while
				   * a recorder was attached, each once
				   * per recorder_pid: one that found
				   * none earlier tries again at its
				   * first marker after an attach */
	uint32_t ctimer_status;	  /* enum d9_ctimer_status */
	uint32_t ctimer_signal;	  /* signal number the ctimer handler uses */
	int32_t ctimer_errno;	  /* D9_CTIMER_FAILED: the errno */
	uint32_t ctimer_threads;  /* threads with an armed timer now */
};

_Static_assert(sizeof(struct d9_event) == 24, "d9_event is 24 bytes");
_Static_assert(sizeof(struct d9_name_slot) == 64, "name slot is 64 bytes");
_Static_assert(sizeof(struct d9_seg_hdr) <= D9_SEG_HDR_SIZE, "header fits");
_Static_assert(sizeof(struct d9_ring_hdr) % 64 == 0, "ring header is whole lines");
_Static_assert(sizeof(struct d9_ring_hdr) == 320, "ring header keeps its layout");

/* The layout the shim creates, from the constants above. */
#define D9_SEG_ALIGN64(x)   (((x) + 63ULL) & ~63ULL)
#define D9_SEG_NAMES_OFFSET ((uint64_t)D9_SEG_HDR_SIZE)
#define D9_SEG_RING_OFFSET                                                               \
	D9_SEG_ALIGN64(D9_SEG_NAMES_OFFSET +                                             \
		       (uint64_t)D9_SEG_NAMES * sizeof(struct d9_name_slot))
#define D9_SEG_RING_STRIDE                                                               \
	D9_SEG_ALIGN64(sizeof(struct d9_ring_hdr) +                                      \
		       (uint64_t)D9_SEG_RING_EVENTS * sizeof(struct d9_event))
#define D9_SEG_SAMPLE_OFFSET                                                             \
	D9_SEG_ALIGN64(D9_SEG_RING_OFFSET + (uint64_t)D9_SEG_RINGS * D9_SEG_RING_STRIDE)
#define D9_SEG_SAMPLE_STRIDE ((uint64_t)D9_SEG_SAMPLE_WORDS * sizeof(uint64_t))
#define D9_SEG_SUM_OFFSET                                                                \
	D9_SEG_ALIGN64(D9_SEG_SAMPLE_OFFSET +                                            \
		       (uint64_t)D9_SEG_RINGS * D9_SEG_SAMPLE_STRIDE)
#define D9_SEG_SUM_STRIDE D9_SEG_ALIGN64(sizeof(struct d9_sum_area))
#define D9_SEG_WAKE_OFFSET                                                               \
	D9_SEG_ALIGN64(D9_SEG_SUM_OFFSET + (uint64_t)D9_SEG_RINGS * D9_SEG_SUM_STRIDE)
/* total size, rounded up to whole 4 KiB pages */
#define D9_SEG_SIZE                                                                      \
	((D9_SEG_WAKE_OFFSET + (uint64_t)D9_WAKE_SLOTS * sizeof(uint64_t) + 4095) &      \
	 ~4095ULL)

static inline struct d9_event *d9_ring_events(struct d9_ring_hdr *r)
{
	return (struct d9_event *)(r + 1);
}

/*
 * ---- consumer side --------------------------------------------------------
 *
 * Used by the recorder (and the shim's tests) on a mapped segment. All
 * shared words are accessed with __atomic builtins; the record contents are
 * ordered by the head (acquire) / tail (release) pair. Ring indices are
 * masked and counts clamped, so nonsense in a ring cannot push a reader out
 * of bounds; the geometry (nrings, offsets, sizes) is taken from the header,
 * so use these only on a segment d9_seg_check() accepted (a hostile target
 * could still rewrite its header later: a careful reader checks a private
 * copy of the header and passes its own @ring_events).
 */

/* The name table's slot hash, a 64-bit mix (task ids are often pointers or
 * counters): murmur3's finaliser but for its second multiplier (murmur3,
 * and lib_hash64(), have 0xc4ceb9fe1a85ec53), which mixes as well. Its
 * values are segment ABI (where the shim puts a name is where a recorder
 * looks): changing them is a D9_SEG_VERSION change. tests/unit/test_shim.c
 * pins them. */
static inline uint64_t d9_name_hash(uint64_t task)
{
	task ^= task >> 33;
	task *= 0xff51afd7ed558ccdULL;
	task ^= task >> 33;
	task *= 0xc4ceb3fe1a85ec53ULL;
	task ^= task >> 33;
	return task;
}

/*
 * The layout of a segment as a reader verified it. The recorder keeps this
 * private copy and never reads sizes or offsets from the shared header
 * again, so a target that rewrites its header later cannot steer the
 * recorder's reads outside the mapping.
 */
struct d9_seg_layout {
	uint32_t nrings;
	uint32_t ring_events;
	uint32_t names_count;
	uint64_t ring_offset;
	uint64_t ring_stride;
	uint64_t names_offset;
	uint32_t sample_words;
	uint64_t sample_offset;
	uint64_t sample_stride;
	uint64_t wake_offset;
	uint32_t wake_slots;
};

/*
 * Check that the header at @seg describes a segment of this version whose
 * parts fit in @map_size bytes, reading each header field once, and store
 * the verified layout in *@out (may be NULL). Returns 0, -EPROTO (magic or
 * version) or -EINVAL (sizes).
 */
static inline int d9_seg_check(const void *seg, uint64_t map_size,
			       struct d9_seg_layout *out)
{
	const struct d9_seg_hdr *h = (const struct d9_seg_hdr *)seg;
	struct d9_seg_layout l;
	uint64_t seg_size;

	if (map_size < D9_SEG_HDR_SIZE)
		return -EINVAL;
	if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != D9_SEG_MAGIC ||
	    __atomic_load_n(&h->version, __ATOMIC_RELAXED) != D9_SEG_VERSION ||
	    __atomic_load_n(&h->hdr_size, __ATOMIC_RELAXED) != D9_SEG_HDR_SIZE)
		return -EPROTO;
	seg_size = __atomic_load_n(&h->seg_size, __ATOMIC_RELAXED);
	l.nrings = __atomic_load_n(&h->nrings, __ATOMIC_RELAXED);
	l.ring_events = __atomic_load_n(&h->ring_events, __ATOMIC_RELAXED);
	l.names_count = __atomic_load_n(&h->names_count, __ATOMIC_RELAXED);
	l.ring_offset = __atomic_load_n(&h->ring_offset, __ATOMIC_RELAXED);
	l.ring_stride = __atomic_load_n(&h->ring_stride, __ATOMIC_RELAXED);
	l.names_offset = __atomic_load_n(&h->names_offset, __ATOMIC_RELAXED);
	l.sample_words = __atomic_load_n(&h->sample_words, __ATOMIC_RELAXED);
	l.sample_offset = __atomic_load_n(&h->sample_offset, __ATOMIC_RELAXED);
	l.sample_stride = __atomic_load_n(&h->sample_stride, __ATOMIC_RELAXED);
	l.wake_offset = __atomic_load_n(&h->wake_offset, __ATOMIC_RELAXED);
	l.wake_slots = __atomic_load_n(&h->wake_slots, __ATOMIC_RELAXED);
	if (seg_size != map_size || l.nrings == 0 || l.nrings > 65536 ||
	    l.ring_events == 0 || (l.ring_events & (l.ring_events - 1)) ||
	    l.ring_events > D9_RING_EVENTS_MAX || map_size > D9_SEG_MAP_MAX ||
	    l.names_count & (l.names_count - 1) || l.names_count > (1U << 24) ||
	    l.ring_offset % 64 || l.ring_stride % 64 || l.names_offset % 64 ||
	    l.ring_offset < D9_SEG_HDR_SIZE || l.names_offset < D9_SEG_HDR_SIZE ||
	    l.ring_stride < sizeof(struct d9_ring_hdr) +
				    (uint64_t)l.ring_events * sizeof(struct d9_event) ||
	    l.ring_stride > (1ULL << 32) || l.ring_offset > map_size ||
	    (uint64_t)l.nrings * l.ring_stride > map_size - l.ring_offset ||
	    l.names_offset > map_size ||
	    (uint64_t)l.names_count * sizeof(struct d9_name_slot) >
		    map_size - l.names_offset)
		return -EINVAL;
	if ((l.sample_words & (l.sample_words - 1)) ||
	    l.sample_words < D9_SAMPLE_HDR_WORDS + D9_SAMPLE_MAX_FRAMES + 2 +
				     D9_SAMPLE_MAX_STACK ||
	    l.sample_words > (1U << 24) || l.sample_offset % 64 || l.sample_stride % 64 ||
	    l.sample_offset < D9_SEG_HDR_SIZE ||
	    l.sample_stride < (uint64_t)l.sample_words * sizeof(uint64_t) ||
	    l.sample_stride > (1ULL << 32) || l.sample_offset > map_size ||
	    (uint64_t)l.nrings * l.sample_stride > map_size - l.sample_offset)
		return -EINVAL;
	/* the sum slots are the shim's alone: only the wake table's place
	 * matters to a reader (d9_seg_set_lean() clears it) */
	if (!l.wake_slots || (l.wake_slots & (l.wake_slots - 1)) ||
	    l.wake_slots > (1U << 24) || l.wake_offset % 64 ||
	    l.wake_offset < D9_SEG_HDR_SIZE || l.wake_offset > map_size ||
	    (uint64_t)l.wake_slots * sizeof(uint64_t) > map_size - l.wake_offset)
		return -EINVAL;
	if (out)
		*out = l;
	return 0;
}

/* Ring @i (< l->nrings) and the name table of @seg, by a verified layout. */
static inline struct d9_ring_hdr *d9_layout_ring(void *seg, const struct d9_seg_layout *l,
						 uint32_t i)
{
	return (struct d9_ring_hdr *)((char *)seg + l->ring_offset +
				      (uint64_t)i * l->ring_stride);
}

static inline struct d9_name_slot *d9_layout_names(void *seg,
						   const struct d9_seg_layout *l)
{
	return (struct d9_name_slot *)((char *)seg + l->names_offset);
}

/* The sample area of slot @i (< l->nrings): l->sample_words u64 words. */
static inline uint64_t *d9_layout_samples(void *seg, const struct d9_seg_layout *l,
					  uint32_t i)
{
	return (uint64_t *)((char *)seg + l->sample_offset +
			    (uint64_t)i * l->sample_stride);
}

/*
 * Attach a recorder: discard what the rings hold from earlier sessions
 * (tail = head), free drained DEAD rings, arm the lease until @deadline (in
 * the segment's clock unit, hdr->clock: now + D9_LEASE_NS converted), then
 * publish attached = 1. Markers start writing once they see attached. @l is
 * the layout d9_seg_check() verified.
 */
static inline void d9_seg_attach(void *seg, const struct d9_seg_layout *l,
				 uint32_t recorder_pid, uint64_t deadline)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;
	uint32_t i;

	for (i = 0; i < l->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(seg, l, i);
		uint32_t dead = D9_RING_DEAD;

		__atomic_store_n(&r->tail, __atomic_load_n(&r->head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&r->sample_tail,
				 __atomic_load_n(&r->sample_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_compare_exchange_n(&r->state, &dead, D9_RING_FREE, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&h->recorder_pid, recorder_pid, __ATOMIC_RELAXED);
	__atomic_store_n(&h->lease_deadline, deadline, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->attach_count, 1, __ATOMIC_RELAXED);
	/* an earlier session's request ends here: threads re-read it */
	__atomic_store_n(&h->request, D9_REQ_NONE, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->request_gen, 1, __ATOMIC_RELEASE);
	/* release: a marker that sees attached also sees the lease */
	__atomic_store_n(&h->attached, 1, __ATOMIC_RELEASE);
}

/*
 * Lean mode for the next attach (before d9_seg_attach()): polls written
 * past @poll, or whose wake waited past @delay (the segment's clock unit;
 * @poll 0: every poll written, lean off), the wake table emptied.
 */
static inline void d9_seg_set_lean(void *seg, const struct d9_seg_layout *l,
				   uint64_t poll, uint64_t delay)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;
	uint64_t *wake = (uint64_t *)((char *)seg + l->wake_offset);
	uint32_t i;

	if (poll)
		for (i = 0; i < l->wake_slots; i++)
			__atomic_store_n(&wake[i], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->lean_delay, poll ? delay : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->lean_poll, poll, __ATOMIC_RELAXED);
}

/* Lean mode: have every thread put its sums into its ring (at its next
 * poll's end) */
static inline void d9_seg_flush_sums(void *seg)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	__atomic_fetch_add(&h->sum_epoch, 1, __ATOMIC_RELAXED);
}

/*
 * Ask the shim for @req (enum d9_request bits) with @arg, e.g.
 * D9_REQ_CTIMER with the rate in Hz (1..100000). Each thread that owns a ring
 * applies it at its next attached marker; see ctimer_status for the outcome.
 */
static inline void d9_seg_request(void *seg, uint32_t req, uint32_t arg)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	__atomic_store_n(&h->request_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&h->request, req, __ATOMIC_RELAXED);
	/* release: a thread that sees the new gen sees the request */
	__atomic_fetch_add(&h->request_gen, 1, __ATOMIC_RELEASE);
}

/*
 * Extend the lease to @deadline (segment clock unit, as for
 * d9_seg_attach()). Call at least every D9_LEASE_NS / 4 with now +
 * D9_LEASE_NS. Returns 0, or -ETIMEDOUT when a marker found the lease
 * expired and detached the shim (the recorder was too slow): records were
 * lost; call d9_seg_attach() again to resume.
 */
static inline int d9_seg_renew(void *seg, uint64_t deadline)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	__atomic_store_n(&h->lease_deadline, deadline, __ATOMIC_RELEASE);
	return __atomic_load_n(&h->attached, __ATOMIC_ACQUIRE) ? 0 : -ETIMEDOUT;
}

/*
 * Detach: markers go back to the detached cost. Records already in the rings
 * stay there for a final d9_ring_consume(); a marker that read attached just
 * before may still add a record or two.
 */
static inline void d9_seg_detach(void *seg)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	__atomic_store_n(&h->attached, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->lease_deadline, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->recorder_pid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->lean_poll, 0, __ATOMIC_RELAXED);
	/* timers stop: their handlers and the next markers see the change */
	__atomic_store_n(&h->request, D9_REQ_NONE, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->request_gen, 1, __ATOMIC_RELEASE);
}

/*
 * Move up to @max records from ring @r (@ring_events records, a power of
 * two) to @out, oldest first, and free their space. A record group (a
 * THREAD_START or SPAWN and its text, a span or event record and its
 * payload) is never split when @max is at least D9_GROUP_MAX, so fewer
 * than @max records does not mean the ring
 * is empty (with @max >= @ring_events it does). Returns the number of
 * records copied, 0 once the ring is empty. A ring whose
 * indices make no sense (more than @ring_events records pending) is reset
 * to empty.
 */
/* The records that follow @ev in its group (a SPAWN's or THREAD_START's
 * text, a span's or event's payload), 0 for none or an @arg no writer of
 * ours would write (then they are records of their own). */
#define D9_GROUP_MAX (D9_SUM_RECORDS + 1)
_Static_assert(D9_SUM_RECORDS >= D9_PAYLOAD_RECORDS && D9_SUM_RECORDS >= D9_TEXT_RECORDS,
	       "a summary is the longest group");
static inline uint32_t d9_group_more(const struct d9_event *ev)
{
	switch (ev->type) {
	case D9_EV_SPAWN:
	case D9_EV_THREAD_START:
		return ev->arg <= D9_TEXT_RECORDS ? ev->arg : 0;
	case D9_EV_SPAN_NEW:
	case D9_EV_SPAN_FIELD:
	case D9_EV_EVENT:
		return ev->arg <= D9_PAYLOAD_RECORDS ? ev->arg : 0;
	case D9_EV_SUMMARY:
		return ev->arg >= 2 && ev->arg <= D9_SUM_RECORDS ? ev->arg : 0;
	default:
		return 0;
	}
}

static inline size_t d9_ring_consume(struct d9_ring_hdr *r, uint32_t ring_events,
				     struct d9_event *out, size_t max)
{
	const struct d9_event *ev = d9_ring_events(r);
	uint64_t mask = (uint64_t)ring_events - 1;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	size_t n, i;

	if (head - tail > ring_events) {
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	n = head - tail < max ? (size_t)(head - tail) : max;
	for (i = 0; i < n; i++)
		out[i] = ev[(tail + i) & mask];
	if (n < head - tail && max >= D9_GROUP_MAX) {
		/* @max cut the batch: walk it group by group (tail is always at
		 * a group start) and leave a cut group for next time */
		for (i = 0; i < n; i++) {
			uint32_t k = d9_group_more(&out[i]);

			if (i + 1 + k > n) {
				n = i;
				break;
			}
			i += k;
		}
	}
	__atomic_store_n(&r->tail, tail + n, __ATOMIC_RELEASE);
	return n;
}

/* Records dropped by the current owner of @r because the ring was full. */
static inline uint64_t d9_ring_drops(struct d9_ring_hdr *r)
{
	return __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
}

/* The poll on @r that is not in the ring yet: 1 with its task, begin and
 * end (0: in progress; the segment's unit), 0 if none, or if it was
 * begun for an earlier attach (@attach_count: the header's now), or if
 * the owner was changing it. Call after d9_ring_consume(): the poll is
 * then later than everything consumed (the owner takes it out of the
 * header before writing any record after it). */
/* Poll site @i (< D9_POLL_SITES) of ring @r, 0 if none. */
static inline uint64_t d9_ring_poll_site(const struct d9_ring_hdr *r, unsigned int i)
{
	return __atomic_load_n(&r->poll_site[i], __ATOMIC_RELAXED);
}

static inline int d9_ring_open_poll(struct d9_ring_hdr *r, uint64_t attach_count,
				    uint64_t *task, uint64_t *begin, uint64_t *end)
{
	uint64_t s = __atomic_load_n(&r->open_seq, __ATOMIC_ACQUIRE), t, gen;

	if (s & 1)
		return 0;
	t = __atomic_load_n(&r->open_task, __ATOMIC_RELAXED);
	*begin = __atomic_load_n(&r->open_time, __ATOMIC_RELAXED);
	*end = __atomic_load_n(&r->open_end, __ATOMIC_RELAXED);
	gen = __atomic_load_n(&r->open_gen, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->open_seq, __ATOMIC_RELAXED) != s || !t ||
	    gen != attach_count || (*end && *end < *begin))
		return 0;
	*task = t;
	return 1;
}

/*
 * Owner of @r: its tid, gen and name (NUL-terminated in @buf of @len bytes,
 * @buf may be NULL). Returns the ring state. A name being changed by
 * d9_thread_start() may read torn; the THREAD_START record carries it too.
 */
static inline uint32_t d9_ring_owner(struct d9_ring_hdr *r, uint32_t *tid, uint64_t *gen,
				     char *buf, size_t len)
{
	uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	size_t i;

	*gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
	*tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
	for (i = 0; buf && len && i < len - 1 && i < sizeof(r->name); i++) {
		buf[i] = __atomic_load_n(&r->name[i], __ATOMIC_RELAXED);
		if (!buf[i])
			break;
	}
	if (buf && len)
		buf[i < len ? i : len - 1] = '\0';
	return state;
}

/*
 * Free ring @r if its owner is gone (DEAD) and it is drained, its sample
 * area too. Returns 1 if it freed the ring, else 0.
 */
static inline int d9_ring_reap(struct d9_ring_hdr *r)
{
	uint32_t dead = D9_RING_DEAD;

	if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != D9_RING_DEAD ||
	    __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&r->tail, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&r->sample_head, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&r->sample_tail, __ATOMIC_RELAXED))
		return 0;
	return __atomic_compare_exchange_n(&r->state, &dead, D9_RING_FREE, 0,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* A ctimer sample as d9_sample_take() returns it. */
struct d9_sample {
	uint64_t time;
	uint64_t task; /* the task being polled, 0 = none */
	uint32_t tid;
	uint32_t weight; /* timer periods it stands for (1 + overruns) */
	uint32_t flags;	 /* D9_SAMPLE_TRUNCATED, D9_SAMPLE_STACK */
	uint32_t nframes;
	uint64_t ips[D9_SAMPLE_MAX_FRAMES]; /* leaf first */
	uint64_t sp, fp;		    /* with D9_SAMPLE_STACK */
	uint32_t nstack;		    /* words in @stack, from @sp up */
	uint64_t stack[D9_SAMPLE_MAX_STACK];
};

/*
 * Take the oldest sample from the sample area @words (@nwords u64 words, a
 * power of two, from d9_layout_samples) of ring @r into @out and free its
 * space. Returns 1, or 0 once the area is empty. An area whose indices or
 * sample sizes make no sense is reset to empty (returns 0).
 */
static inline int d9_sample_take(struct d9_ring_hdr *r, const uint64_t *words,
				 uint32_t nwords, struct d9_sample *out)
{
	uint64_t mask = (uint64_t)nwords - 1;
	uint64_t tail = __atomic_load_n(&r->sample_tail, __ATOMIC_RELAXED);
	uint64_t head = __atomic_load_n(&r->sample_head, __ATOMIC_ACQUIRE);
	uint64_t w0, w3, at;
	uint32_t i, n, flags, extra;

	if (head == tail)
		return 0;
	w0 = words[tail & mask];
	n = (uint32_t)w0;
	w3 = words[(tail + 3) & mask];
	flags = (uint32_t)(w3 >> 32);
	extra = D9_SAMPLE_EXTRA(flags);
	if (head - tail > nwords || head - tail < D9_SAMPLE_HDR_WORDS ||
	    n > D9_SAMPLE_MAX_FRAMES || D9_SAMPLE_NSTACK(flags) > D9_SAMPLE_MAX_STACK ||
	    head - tail < D9_SAMPLE_HDR_WORDS + (uint64_t)n + extra) {
		__atomic_store_n(&r->sample_tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	out->nframes = n;
	out->weight = (uint32_t)(w0 >> 32);
	out->time = words[(tail + 1) & mask];
	out->task = words[(tail + 2) & mask];
	out->tid = (uint32_t)w3;
	out->flags = flags;
	at = tail + D9_SAMPLE_HDR_WORDS;
	for (i = 0; i < n; i++)
		out->ips[i] = words[(at++) & mask];
	out->nstack = 0;
	if (flags & D9_SAMPLE_STACK) {
		out->sp = words[(at++) & mask];
		out->fp = words[(at++) & mask];
		out->nstack = D9_SAMPLE_NSTACK(flags);
		for (i = 0; i < out->nstack; i++)
			out->stack[i] = words[(at++) & mask];
	}
	__atomic_store_n(&r->sample_tail, at, __ATOMIC_RELEASE);
	return 1;
}

/* Samples dropped / written by the current owner of @r. */
static inline uint64_t d9_sample_drops(struct d9_ring_hdr *r)
{
	return __atomic_load_n(&r->sample_drops, __ATOMIC_RELAXED);
}

/*
 * Read name-table slot @s: on success store its task in @task and its name,
 * NUL-terminated, in @buf (@len bytes, at least 1) and return 0. Returns
 * -ENOENT for an empty or deleted slot, -EAGAIN for one being written.
 */
static inline int d9_name_slot_read(struct d9_name_slot *s, uint64_t *task, char *buf,
				    size_t len)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	uint64_t t = __atomic_load_n(&s->task, __ATOMIC_ACQUIRE);
	size_t i, n = len - 1 < sizeof(s->name) ? len - 1 : sizeof(s->name);

	if (!t || t == D9_NAME_TOMB)
		return -ENOENT;
	if (!seq || (seq & 1))
		return -EAGAIN;
	for (i = 0; i < n; i++)
		buf[i] = __atomic_load_n(&s->name[i], __ATOMIC_RELAXED);
	buf[n] = '\0';
	/* seqlock read side: the copy is good if nothing moved meanwhile */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->task, __ATOMIC_RELAXED) != t ||
	    __atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
		return -EAGAIN;
	*task = t;
	return 0;
}

/*
 * Look up the name of @task in the name table of @seg. Returns 0 with the
 * name in @buf, -ENOENT if absent, -EAGAIN if being written (retry).
 */
static inline int d9_name_table_get(void *seg, const struct d9_seg_layout *l,
				    uint64_t task, char *buf, size_t len)
{
	struct d9_name_slot *slots = d9_layout_names(seg, l);
	uint32_t mask = l->names_count - 1, i;
	uint64_t at = d9_name_hash(task);
	int err = -ENOENT;

	if (!l->names_count || !task || task == D9_NAME_TOMB)
		return -ENOENT;
	for (i = 0; i < D9_NAME_PROBE && i < l->names_count; i++) {
		struct d9_name_slot *s = &slots[(at + i) & mask];
		uint64_t t = __atomic_load_n(&s->task, __ATOMIC_ACQUIRE), got;

		if (!t)
			break;
		if (t != task)
			continue;
		err = d9_name_slot_read(s, &got, buf, len);
		if (!err && got != task)
			err = -EAGAIN;
		if (!err)
			return 0;
	}
	return err;
}

/*
 * Text of the @k D9_EV_TEXT records at @ev into @buf (@len bytes, at least
 * 1), NUL-terminated.
 */
static inline void d9_event_text(const struct d9_event *ev, uint32_t k, char *buf,
				 size_t len)
{
	size_t n = 0, j;
	uint32_t i;

	for (i = 0; i < k && i < D9_TEXT_RECORDS; i++) {
		const char *t = (const char *)&ev[i];

		for (j = 0; j < sizeof(*ev) && t[j] && n + 1 < len; j++)
			buf[n++] = t[j];
		if (j < sizeof(*ev))
			break;
	}
	buf[n] = '\0';
}

/* The payload of a span or event record @ev (D9_EV_SPAN_NEW, _FIELD,
 * D9_EV_EVENT; see their comments): its @k records after @ev copied into
 * @buf (D9_PAYLOAD_BYTES), its number in *@num (NEW, FIELD; 0 otherwise),
 * its first string in *@a and, for FIELD and EVENT, its second in *@b,
 * both pointing into @buf (NULL for an empty one). 0, or -1 if the
 * records cannot be such a payload: none or more than D9_PAYLOAD_RECORDS,
 * too short for the number, or a string that does not end inside it (the
 * target wrote them). */
static inline int d9_payload(const struct d9_event *ev, uint32_t k,
			     char buf[D9_PAYLOAD_BYTES], uint64_t *num, const char **a,
			     const char **b)
{
	size_t n = (size_t)k * sizeof(*ev), off = 0, l;
	int has_num = ev->type == D9_EV_SPAN_NEW || ev->type == D9_EV_SPAN_FIELD;
	int two = ev->type == D9_EV_SPAN_FIELD || ev->type == D9_EV_EVENT;

	*num = 0;
	*a = *b = NULL;
	if (!k || k > D9_PAYLOAD_RECORDS)
		return -1;
	memcpy(buf, ev + 1, n);
	if (has_num) {
		if (n < sizeof(*num))
			return -1;
		memcpy(num, buf, sizeof(*num));
		off = sizeof(*num);
	}
	l = strnlen(buf + off, n - off);
	if (off + l == n)
		return -1;
	*a = l ? buf + off : NULL;
	off += l + 1;
	if (two) {
		l = strnlen(buf + off, n - off);
		if (off + l == n)
			return -1;
		*b = l ? buf + off : NULL;
	}
	return 0;
}

#endif /* D9_SEGMENT_H */
