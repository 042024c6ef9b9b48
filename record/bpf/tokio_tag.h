/* SPDX-License-Identifier: MIT */
/*
 * tokio_tag.h - zero-code Tokio in the kernel: how the BPF programs read the
 * task a thread of an unmodified Tokio program runs, and what the sampler's
 * program (record/bpf/tokio_tag.bpf.c) hands the recorder (record/tokio_rec.c).
 * Shared by both sides and by record/bpf/sched.bpf.c, which reads the same
 * slot at each switch-out: plain fixed-size C types only.
 *
 * Tokio (1.22 and later) keeps the id of the task being polled on a thread
 * in its thread-local CONTEXT.current_task_id, set around each poll and put
 * back after it (a worker outside any task's poll holds its own launch
 * task's id there). symbol/tokio.c finds where from the executable; a
 * program reads it at fs_base + off of the thread (x86-64: its thread
 * pointer, task->thread.fsbase, set once by clone() or arch_prctl()).
 */
#ifndef D9_TOKIO_TAG_H
#define D9_TOKIO_TAG_H

/* struct tokio_bpf_slot.kind: Option<Id> as 16 bytes, a u64 tag (1:
 * Some) then the id; or as 8 bytes, the id, 0 for None */
#define TOKIO_BPF_TAGGED  1
#define TOKIO_BPF_NONZERO 2

/* Where a thread keeps its task's id; kind 0: nowhere (read nothing) */
struct tokio_bpf_slot {
	long long off;
	unsigned int kind;
	unsigned int pad;
};

/* What the programs write, one ring for all (struct tokio_bpf_tag.type):
 *   TAG   a CPU sample's tag, written as perf takes the sample (in the
 *         same overflow, before perf writes it): the thread, when, and
 *         its task (0: none)
 *   POLL  with the poll probes (record --tokio probes): a poll of task
 *         @task on thread @tid, that ended at @time and lasted @len ns
 *         (uprobe and uretprobe on raw::poll)
 *   WAKE  ... task @task woken by thread @tid at @time (the waker's
 *         wake_by_val and wake_by_ref) */
#define TOKIO_BPF_TAG  0
#define TOKIO_BPF_POLL 1
#define TOKIO_BPF_WAKE 2

struct tokio_bpf_tag {
	unsigned int tid, type;
	unsigned long long time;
	unsigned long long task;
	unsigned long long len;
	unsigned int site; /* POLL: the raw::poll instance (its probes'
			    * cookie: 1 + its index), 0 unknown */
	unsigned int pad;
};

/* A probe's cookie: the raw::poll instance's 1 + index, with this bit for
 * an instance of a worker's launch task (the runtime, polled once for the
 * worker's life: its poll is neither written nor a loss) */
#define TOKIO_SITE_RUNTIME 0x80000000u

/* Polls open per thread the poll probes keep (a poll nests in another
 * where a task blocks on a runtime, block_on, or in a blocking task):
 * deeper ones are counted, not written */
#define TOKIO_BPF_DEPTH 8

/* Tokio's task Header: its vtable pointer's offset (#[repr(C)] {state,
 * queue_next, vtable, ...}), and the vtable's words holding the trailer's,
 * the scheduler's and the id's offsets from the Header (7 function
 * pointers, then the three: Tokio 1.24's raw.rs) */
#define TOKIO_HDR_VTABLE     16
#define TOKIO_VTABLE_OFFSETS 7

/* The sampler program's settings (.rodata, set before load) */
struct tokio_bpf_cfg {
	unsigned int tgid; /* the target (a child is another program) */
	unsigned int pad;
	struct tokio_bpf_slot slot;
	unsigned long long wake_at; /* bytes in the ring that wake the
				     * recorder */
};

/* Lean mode (record --lean): the d9prof shim's threads keep the task they
 * poll (0: none) at shim_off from their thread pointer (libprof/
 * d9_segment.h's struct d9_tls, the segment's tls_offset, set in each
 * program's .bss once the shim attaches: 0 until then). What the
 * programs hand over for a task read there carries this bit (a shim task
 * id with it set is not read). */
#define TOKIO_BPF_SHIM_TASK (1ULL << 63)

#ifdef __bpf__
/* Where the kernel keeps a thread's thread pointer (CO-RE: the running
 * kernel's offset); each program's task_struct holds it as `thread` */
struct thread_struct {
#if defined(__TARGET_ARCH_x86)
	unsigned long fsbase;
#endif
} __attribute__((preserve_access_index));

/* The task a thread whose thread pointer is @fsbase runs, per @s: 0 for
 * none, or where its memory cannot be read now (paged out) */
static __always_inline __u64 tokio_bpf_task(unsigned long fsbase,
					    const volatile struct tokio_bpf_slot *s)
{
	__u64 v[2] = {0, 0};

	if (!s->kind || !fsbase)
		return 0;
	if (bpf_probe_read_user(v, s->kind == TOKIO_BPF_TAGGED ? 16 : 8,
				(void *)(fsbase + s->off)))
		return 0;
	if (s->kind == TOKIO_BPF_TAGGED)
		return v[0] == 1 ? v[1] : 0;
	return v[0];
}

/* The shim's task a thread whose thread pointer is @fsbase polls, with
 * TOKIO_BPF_SHIM_TASK; 0 for none */
static __always_inline __u64 shim_bpf_task(unsigned long fsbase, long long off)
{
	__u64 v = 0;

	if (!off || !fsbase || bpf_probe_read_user(&v, 8, (void *)(fsbase + off)))
		return 0;
	return v && !(v & TOKIO_BPF_SHIM_TASK) ? v | TOKIO_BPF_SHIM_TASK : 0;
}
#endif

#endif /* D9_TOKIO_TAG_H */
