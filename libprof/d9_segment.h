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
 *
 * Rings are single-producer (the owning thread) single-consumer (the
 * recorder). The producer writes records at index head % ring_events, then
 * publishes with a release store of head; the consumer reads up to an
 * acquire load of head, then releases the space with a release store of
 * tail. A producer that finds no room drops the whole record group and
 * increments drops. Indices are free-running 64-bit counters.
 *
 * Attach protocol: the recorder sets lease_deadline to now + lease, then
 * attached = 1, and renews the lease at least every D9_LEASE_NS / 4 while it
 * drains. A marker that finds now > lease_deadline clears attached itself,
 * so a recorder that dies (SIGKILL) leaves the target at the detached cost
 * within one lease.
 */
#ifndef D9_SEGMENT_H
#define D9_SEGMENT_H

#include <stdint.h>

#define D9_SEG_NAME	"d9prof-seg"
#define D9_SEG_MAGIC	0x3167657339643964ULL	/* "d9d9seg1" little-endian */
#define D9_SEG_VERSION	1
#define D9_SEG_HDR_SIZE	4096

#define D9_SEG_RINGS		256	/* thread slots */
#define D9_SEG_RING_EVENTS	16384	/* records per ring, power of two */
#define D9_SEG_NAMES		4096	/* task-name table slots, power of two */
#define D9_LEASE_NS		2000000000ULL

/* ring slot states */
enum d9_ring_state {
	D9_RING_FREE = 0,	/* unowned, empty */
	D9_RING_LIVE = 1,	/* owned by a live thread */
	D9_RING_DEAD = 2,	/* owner gone; recorder frees it once drained */
};

/* event types (struct d9_event.type) */
enum d9_event_type {
	D9_EV_THREAD_START = 1,	/* arg = number of D9_EV_TEXT records after */
	D9_EV_THREAD_STOP = 2,
	D9_EV_SPAWN = 3,	/* task; arg = number of D9_EV_TEXT records after */
	D9_EV_WAKE = 4,		/* task */
	D9_EV_POLL_BEGIN = 5,	/* task */
	D9_EV_POLL_END = 6,	/* task */
	D9_EV_TASK_END = 7,	/* task */
	D9_EV_PARK = 8,
	D9_EV_UNPARK = 9,
	D9_EV_TEXT = 15,	/* continuation: the record's 24 bytes are text */
};

/* One ring record, 24 bytes. A D9_EV_TEXT continuation reuses all 24 bytes
 * as NUL-padded text; a name spans at most D9_TEXT_RECORDS of them. */
struct d9_event {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t task;
	uint32_t type;		/* enum d9_event_type */
	uint32_t arg;
};
#define D9_TEXT_RECORDS	3
#define D9_NAME_MAX	(D9_TEXT_RECORDS * 24 - 1)

/* Task-name table: names of tasks spawned while no recorder was attached,
 * so a recorder that attaches later can name long-lived tasks. Open
 * addressing, linear probing (D9_NAME_PROBE slots), keyed by task id;
 * task 0 = empty, D9_NAME_TOMB = deleted. The writer sets task, then the
 * name, then seq = (seq | 1) + 1 (even, non-zero = complete); a reader
 * accepts a slot whose seq is even and non-zero, same before and after
 * copying. */
#define D9_NAME_PROBE	16
#define D9_NAME_TOMB	UINT64_MAX
struct d9_name_slot {
	uint64_t task;
	uint32_t seq;
	char name[52];
};

struct d9_ring_hdr {
	/* owner-written, read by the recorder */
	uint32_t state;		/* enum d9_ring_state */
	uint32_t tid;		/* kernel TID of the owner (gettid) */
	uint64_t gen;		/* bumped each time the slot changes owner */
	char name[48];		/* thread name given to d9_thread_start */
	/* producer cache line */
	uint64_t head __attribute__((aligned(64)));
	uint64_t drops;		/* records dropped because the ring was full */
	/* consumer cache line */
	uint64_t tail __attribute__((aligned(64)));
	uint64_t pad_[7];
};

struct d9_seg_hdr {
	/* written once by the shim at creation */
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;	/* D9_SEG_HDR_SIZE */
	uint64_t seg_size;	/* total bytes */
	uint32_t pid;		/* getpid() of the creator, in its namespace */
	uint32_t clock;		/* clockid of all timestamps: CLOCK_MONOTONIC */
	uint64_t create_time;	/* ns, same clock */
	uint32_t nrings;
	uint32_t ring_events;
	uint64_t ring_offset;
	uint64_t ring_stride;	/* bytes between ring headers */
	uint32_t names_count;
	uint32_t pad0_;
	uint64_t names_offset;

	/* control, written by the recorder (and cleared by markers on lease
	 * expiry); on its own cache line */
	uint32_t attached __attribute__((aligned(64)));
	uint32_t recorder_pid;
	uint64_t lease_deadline;	/* ns, CLOCK_MONOTONIC */
	uint64_t attach_count;		/* bumped by each recorder that attaches */
	uint32_t request;		/* reserved: requests to the shim (ctimer) */
	uint32_t request_arg;

	/* shim-written counters, on their own cache line */
	uint64_t names_dropped __attribute__((aligned(64)));
	uint64_t rings_exhausted;	/* threads that found no free slot */
};

_Static_assert(sizeof(struct d9_event) == 24, "d9_event is 24 bytes");
_Static_assert(sizeof(struct d9_name_slot) == 64, "name slot is 64 bytes");
_Static_assert(sizeof(struct d9_seg_hdr) <= D9_SEG_HDR_SIZE, "header fits");

static inline struct d9_ring_hdr *d9_seg_ring(void *seg, uint32_t i)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	return (struct d9_ring_hdr *)((char *)seg + h->ring_offset +
				      (uint64_t)i * h->ring_stride);
}

static inline struct d9_event *d9_ring_events(struct d9_ring_hdr *r)
{
	return (struct d9_event *)(r + 1);
}

static inline struct d9_name_slot *d9_seg_names(void *seg)
{
	struct d9_seg_hdr *h = (struct d9_seg_hdr *)seg;

	return (struct d9_name_slot *)((char *)seg + h->names_offset);
}

#endif /* D9_SEGMENT_H */
