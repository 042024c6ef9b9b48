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
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "tokio_tag.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct thread_struct {
#if defined(__TARGET_ARCH_x86)
	unsigned long fsbase;
#endif
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_struct thread;
} __attribute__((preserve_access_index));

const volatile struct tokio_bpf_cfg cfg = {0};
/* tags the ring had no room for */
volatile __u64 lost = 0;

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
	t = bpf_ringbuf_reserve(&tags, sizeof(*t), 0);
	if (!t) {
		__sync_fetch_and_add(&lost, 1);
		return 1;
	}
#if defined(__TARGET_ARCH_x86)
	fs = bpf_get_current_task_btf()->thread.fsbase;
#endif
	t->tid = (__u32)id;
	t->pad = 0;
	t->time = bpf_ktime_get_ns();
	t->task = tokio_bpf_task(fs, &cfg.slot);
	bpf_ringbuf_submit(t, bpf_ringbuf_query(&tags, BPF_RB_AVAIL_DATA) >= cfg.wake_at
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 1;
}
