// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tokio_tag.bpf.c - zero-code Tokio, the CPU sampler's side: a perf_event
 * program on each of the sampler's events that reads, as perf takes a
 * sample of a target thread, the Tokio task that thread runs (its
 * thread-local, record/bpf/tokio_tag.h) and writes one tag record, so that the
 * recorder can give the sample its task. Nothing runs per poll: only per
 * sample, the program's cost on top of perf's.
 *
 * It returns 1: perf writes its sample as it would without it.
 *
 * With `record --tokio probes`, uprobes on every raw::poll instance (and
 * uretprobes), and on the waker's wake functions, write each poll and
 * wake: microseconds of the target's time per poll (a trap each), capped
 * and measured by the recorder.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h> /* the user registers a uprobe sees */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "tokio_tag.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct task_struct {
	struct thread_struct thread;
} __attribute__((preserve_access_index));

const volatile struct tokio_bpf_cfg cfg = {0};
/* lean mode: where the shim's struct d9_tls is (tokio_tag.h) */
volatile long long shim_off = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load */
} tags SEC(".maps");

SEC("perf_event")
int d9_sample(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tokio_bpf_tag *t;
	unsigned long fs = 0;

	if ((__u32)(id >> 32) != cfg.tgid)
		return 1;
	/* no room: its sample goes untagged (the recorder counts it) */
	t = bpf_ringbuf_reserve(&tags, sizeof(*t), 0);
	if (!t)
		return 1;
#if defined(__TARGET_ARCH_x86)
	fs = bpf_get_current_task_btf()->thread.fsbase;
#endif
	t->tid = (__u32)id;
	t->type = TOKIO_BPF_TAG;
	t->time = bpf_ktime_get_ns();
	t->task = shim_bpf_task(fs, shim_off);
	if (!t->task)
		t->task = tokio_bpf_task(fs, &cfg.slot);
	t->len = 0;
	t->site = 0;
	t->pad = 0;
	bpf_ringbuf_submit(t, bpf_ringbuf_query(&tags, BPF_RB_AVAIL_DATA) >= cfg.wake_at
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 1;
}

/* ---- the poll probes ----------------------------------------------------- */

/* the probes' hits (what they cost the target: the recorder caps on
 * them); polls not written: nested past TOKIO_BPF_DEPTH, with a poll
 * nested inside (written: the inner one; the trace's polls of a thread
 * never overlap), of a task whose vtable was not Tokio's as known; polls
 * and wakes the ring had no room for. A return with no entry (a poll
 * open at the attach) writes nothing. */
volatile __u64 entries = 0, wakes = 0;
volatile __u64 too_deep = 0, nested = 0, bad_vtable = 0, dropped = 0, unread = 0;
/* set by the recorder: the probes are going (their links come off
 * slowly, on another thread), write nothing from now on */
volatile __u32 probes_off = 0;

struct open_poll {
	__u64 task, start;
	__u32 site;
	__u32 nested; /* a poll began inside it */
};

struct pstack {
	__u32 n, pad;
	struct open_poll p[TOKIO_BPF_DEPTH];
};

/* each thread's polls open now, innermost last */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct pstack);
} open_polls SEC(".maps");

/* Task @hdr's id: *(hdr + vtable->id_offset), the offsets checked for the
 * order Tokio's Cell keeps (the scheduler, then the id, before the
 * trailer); 0 where they are not */
static __always_inline __u64 task_of(__u64 hdr)
{
	__u64 vt = 0, off[3] = {0, 0, 0}, id = 0;

	if (!hdr || bpf_probe_read_user(&vt, 8, (void *)(hdr + TOKIO_HDR_VTABLE)) ||
	    !vt ||
	    bpf_probe_read_user(off, sizeof(off),
				(void *)(vt + 8 * TOKIO_VTABLE_OFFSETS)))
		return 0;
	/* trailer, scheduler, id: both before the trailer (a zero-sized
	 * scheduler, a blocking task's, can be anywhere up to it) */
	if (!(off[2] < off[0] && off[1] <= off[0] && off[0] < 65536 && !(off[2] & 7))) {
		__sync_fetch_and_add(&bad_vtable, 1);
		return 0;
	}
	if (bpf_probe_read_user(&id, 8, (void *)(hdr + off[2])))
		return 0;
	return id;
}

static __always_inline void put(__u32 tid, __u32 type, __u64 time, __u64 task, __u64 len,
				__u32 site)
{
	struct tokio_bpf_tag *t = bpf_ringbuf_reserve(&tags, sizeof(*t), 0);

	if (!t) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	t->tid = tid;
	t->type = type;
	t->time = time;
	t->task = task;
	t->len = len;
	t->site = site;
	t->pad = 0;
	bpf_ringbuf_submit(t, BPF_RB_NO_WAKEUP);
}

SEC("uprobe")
int BPF_KPROBE(d9_poll_enter, __u64 hdr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct pstack *ps, zero = {0};
	__u32 n, site;

	if ((__u32)(id >> 32) != cfg.tgid || probes_off)
		return 0;
	ps = bpf_map_lookup_elem(&open_polls, &tid);
	if (!ps) {
		bpf_map_update_elem(&open_polls, &tid, &zero, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&open_polls, &tid);
		if (!ps)
			return 0;
	}
	__sync_fetch_and_add(&entries, 1);
	n = ps->n;
	if (n > 0 && n - 1 < TOKIO_BPF_DEPTH)
		ps->p[n - 1].nested = 1;
	if (n < TOKIO_BPF_DEPTH) {
		site = (__u32)bpf_get_attach_cookie(ctx);
		ps->p[n].task = site & TOKIO_SITE_RUNTIME ? 0 : task_of(hdr);
		ps->p[n].start = bpf_ktime_get_ns();
		ps->p[n].site = site;
		ps->p[n].nested = 0;
	} else {
		__sync_fetch_and_add(&too_deep, 1);
	}
	if (n < 255)
		ps->n = n + 1;
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(d9_poll_ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct pstack *ps;
	__u32 n;

	if ((__u32)(id >> 32) != cfg.tgid || probes_off)
		return 0;
	ps = bpf_map_lookup_elem(&open_polls, &tid);
	if (!ps || !ps->n)
		return 0;
	n = --ps->n;
	if (n >= TOKIO_BPF_DEPTH || !ps->p[n].task)
		return 0;
	if (ps->p[n].nested)
		__sync_fetch_and_add(&nested, 1);
	else
		put(tid, TOKIO_BPF_POLL, now, ps->p[n].task, now - ps->p[n].start,
		    ps->p[n].site);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(d9_wake, __u64 hdr)
{
	__u64 id = bpf_get_current_pid_tgid(), task;

	if ((__u32)(id >> 32) != cfg.tgid || probes_off)
		return 0;
	__sync_fetch_and_add(&wakes, 1);
	task = task_of(hdr);
	if (task)
		put((__u32)id, TOKIO_BPF_WAKE, bpf_ktime_get_ns(), task, 0, 0);
	else
		__sync_fetch_and_add(&unread, 1);
	return 0;
}
