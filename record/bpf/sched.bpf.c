// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sched.bpf.c - the scheduler events of `d9prof record --sched bpf`, in
 * the kernel: sched_switch and sched_waking kept to the target's threads,
 * blocked and run-queue time paired here, and who held a CPU while a
 * target thread waited for it summed here from the CPU's last switches.
 * What reaches user space is one record per switch-out (with its stacks)
 * and one per switch-in (record/bpf/sched.h), through one ring buffer;
 * the rest of the machine's switches and wakeups never leave the kernel.
 * With cfg.min_ns a switch-out waits in task storage for its switch-in,
 * and only the intervals at least that long send their stacks.
 *
 * CO-RE: the few kernel fields read are declared below with
 * preserve_access_index and relocated by libbpf against the running
 * kernel's BTF, so no vmlinux.h is needed to build. Needs a kernel with
 * BTF, tp_btf and sched_switch's prev_state argument (5.18 or later);
 * elsewhere the load fails and the recorder uses perf_event.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct task_struct *real_parent;
	struct thread_struct thread;
} __attribute__((preserve_access_index));

struct pt_regs {
#if defined(__TARGET_ARCH_x86)
	unsigned long bp;
	unsigned long sp;
#elif defined(__TARGET_ARCH_arm64)
	unsigned long regs[31];
	unsigned long sp;
#endif
} __attribute__((preserve_access_index));

#define TASK_DEAD 0x80 /* include/linux/sched.h */

const volatile struct sched_bpf_cfg cfg = {0};
/* set by the recorder: 1 from enable to disable */
volatile __u32 enabled = 0;
/* records the ring had no room for */
volatile __u64 lost = 0;
/* switch-outs whose stack copy was cut short (cfg.short_at) */
volatile __u64 cut_short = 0;
/* set by the recorder as it goes: the stack copy, at most cfg.stack_bytes
 * (0: cfg.stack_bytes) */
volatile __u32 copy_bytes = 0;
/* lean mode: where the shim's struct d9_tls is (tokio_tag.h) */
volatile long long shim_off = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24); /* resized before load */
} ring SEC(".maps");

/* the processes followed: the target's children, with cfg.children */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} children SEC(".maps");

struct tstate {
	__u64 out;	/* switched out at; 0: on a CPU */
	__u64 runnable; /* runnable since (0: still blocked) */
	__u64 early;	/* woken while still on its CPU, at */
	__u32 taker;	/* who took its CPU at the switch-out */
	__u16 preempted;
	__u16 unseen;	/* cfg.min_ns: the switch-out before had no switch-in */
	__u64 top;	/* where its stack ends, as a copy found (0: not
			 * known) ... */
	__u32 top_left; /* ... for this many more copies */
	__u32 pad;
	__u64 task; /* cfg.min_ns: the task it left, at the switch-out */
};

/* A copy that failed finds where the stack's mapping ends, page by page
 * (at most this many one-byte reads), and the thread's next TOP_USES
 * copies stop there: a failed copy of a few KiB costs as much as a good
 * one, and a shallow thread's stack ends well within 8 KiB. Found again
 * after that, so that a page out of memory once is not forever. */
#define TOP_PROBES 8
#define TOP_USES   64
#define PAGE	   4096ULL

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct tstate);
} threads SEC(".maps");

struct hist_ent {
	__u64 time;
	__u32 tid; /* SCHED_BPF_IDLE for the idle task */
	__u32 pad;
	char comm[16];
};

struct hist {
	__u32 head; /* next slot */
	__u32 n;
	struct hist_ent e[SCHED_BPF_HIST];
};

/* each CPU's last switches: what ran there, from when; indexed by the
 * CPU (too big for a per-CPU map's value), max_entries set to the
 * possible CPUs before load */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hists SEC(".maps");

/* scratch for a switch-out record, one per CPU (too big for the BPF
 * stack and for a per-CPU map's value): indexed by the CPU, max_entries
 * set to the possible CPUs before load */
#define CHAIN_BYTES (SCHED_BPF_FRAMES * 8)

struct out_buf {
	struct sched_bpf_out h;
	unsigned char data[2 * CHAIN_BYTES + SCHED_BPF_STACK_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct out_buf);
} outs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_bpf_in);
} ins SEC(".maps");

/* with cfg.min_ns: each target thread's last switch-out, until its
 * switch-in says whether it is sent */
struct pend_buf {
	struct sched_bpf_out h;
	unsigned char data[2 * CHAIN_BYTES + SCHED_BPF_PEND_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pend_buf);
} pend SEC(".maps");

/* Wake the recorder only once the ring is a quarter full: a wakeup per
 * record would have it preempt the target at every switch (and so make
 * more switches) */
static __always_inline __u64 wake_flag(void)
{
	return bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) >= cfg.wake_at
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

static __always_inline int is_target(struct task_struct *t)
{
	__u32 tgid = (__u32)t->tgid;

	if (!t->pid)
		return 0;
	if (tgid == cfg.tgid)
		return 1;
	return cfg.children && bpf_map_lookup_elem(&children, &tgid);
}

/* add @ns of @tid to the wait's holders */
static __always_inline void charge(struct sched_bpf_in *in, const struct hist_ent *e,
				   __u64 ns)
{
	__u32 k;

	for (k = 0; k < SCHED_BPF_SLOTS; k++) {
		if (k >= in->nholds)
			break;
		if (in->holds[k].tid == e->tid) {
			in->holds[k].ns += ns;
			return;
		}
	}
	if (k >= SCHED_BPF_SLOTS) {
		in->others += ns;
		return;
	}
	in->holds[k].tid = e->tid;
	in->holds[k].ns = ns;
	__builtin_memcpy(in->holds[k].comm, e->comm, 16);
	in->nholds = k + 1;
}

struct walk {
	struct sched_bpf_in *in;
	struct hist *h;
	__u32 self, n;
	__u64 from, end;
};

/* one switch of the walk, the @i-th newest: 1 to stop */
static long walk_one(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	const struct hist_ent *e;
	__u64 a;

	if (i >= w->n)
		return 1;
	e = &w->h->e[(w->h->head + SCHED_BPF_HIST - 1 - i) % SCHED_BPF_HIST];
	a = e->time > w->from ? e->time : w->from;
	if (w->end > a && e->tid != w->self)
		charge(w->in, e, w->end - a);
	if (e->time <= w->from) {
		w->end = w->from;
		return 1;
	}
	w->end = e->time;
	return 0;
}

/* Who ran on this CPU from @from to @to (its switches newest first),
 * @self left out; a bpf_loop, so that the verifier walks one switch. */
static __always_inline void holders(struct sched_bpf_in *in, struct hist *h, __u32 self,
				    __u64 from, __u64 to)
{
	struct walk w = {.in = in, .h = h, .self = self, .from = from, .end = to};

	w.n = h->n < SCHED_BPF_HIST ? h->n : SCHED_BPF_HIST;
	bpf_loop(SCHED_BPF_HIST, walk_one, &w, 0);
	/* the CPU's oldest switch kept is after @from */
	if (w.end > from)
		in->unknown = w.end - from;
}

/* Send a waiting switch-out (cfg.min_ns) whose interval turned out long,
 * or was still open at the end: its bytes, as switch_out() filled them. */
static __always_inline void send_pend(struct pend_buf *p)
{
	long at = p->h.kbytes + p->h.ubytes, len = p->h.stack_len;

	barrier_var(at);
	if (at < 0 || at > 2 * CHAIN_BYTES)
		at = 0;
	barrier_var(len);
	if (len < 0 || len > SCHED_BPF_PEND_STACK)
		len = 0;
	if (bpf_ringbuf_output(&ring, p, sizeof(p->h) + at + len, wake_flag()))
		__sync_fetch_and_add(&lost, 1);
}

static __always_inline void switch_in(struct task_struct *prev, struct task_struct *next,
				      struct hist *h, __u64 now)
{
	__u32 tid = (__u32)next->pid, zero = 0;
	struct tstate *ts = bpf_map_lookup_elem(&threads, &tid);
	struct sched_bpf_in *in;
	long n;

	if (!ts || !ts->out)
		return; /* off-CPU since before the recording */
	in = bpf_map_lookup_elem(&ins, &zero);
	if (!in)
		return;
	in->type = SCHED_BPF_IN;
	in->tid = tid;
	in->time = now;
	in->out = ts->out;
	in->runnable = ts->runnable;
	in->prev = (__u32)prev->pid;
	in->nholds = 0;
	in->flags = 0;
	in->taker = 0;
	in->others = 0;
	in->unknown = 0;
	in->task = 0;
	if (cfg.min_ns) {
		if (ts->unseen)
			in->flags |= SCHED_BPF_IN_UNSEEN;
		if (now - ts->out < cfg.min_ns) {
			/* short: its stacks stay here */
			in->flags |= SCHED_BPF_IN_SHORT;
			if (ts->preempted)
				in->flags |= SCHED_BPF_IN_PREEMPTED;
			in->taker = ts->taker;
			in->task = ts->task;
		} else {
			struct pend_buf *p = bpf_task_storage_get(&pend, next, 0, 0);

			if (p && p->h.time == ts->out)
				send_pend(p);
			else
				__sync_fetch_and_add(&lost, 1);
		}
		ts->unseen = 0;
	}
	if (ts->runnable && ts->runnable < now && h)
		holders(in, h, tid, ts->runnable, now);
	ts->out = 0;
	ts->runnable = 0;
	n = in->nholds;
	barrier_var(n);
	if (n < 0 || n > SCHED_BPF_SLOTS)
		n = SCHED_BPF_SLOTS;
	if (bpf_ringbuf_output(&ring, in, SCHED_BPF_IN_SIZE(n), wake_flag()))
		__sync_fetch_and_add(&lost, 1);
}

/* Fill the record at @o, a switch-out or a tick's sample of @type (its
 * chains, the kernel's if @kernel, and at most @want, @cap bytes of
 * stack at @data, right after it) for the current thread @tid; returns
 * its size. No holder: the switch-out's caller says who. */
static __always_inline long fill_out(void *ctx, struct sched_bpf_out *o,
				     unsigned char *data, long cap, __u32 type, __u32 tid,
				     __u64 now, struct tstate *ts, __u64 task, int kernel,
				     long want)
{
	struct pt_regs *regs;
	long kb = 0, ub, len, at;
	int err = -1;

	o->type = type;
	o->tid = tid;
	o->time = now;
	o->holder = 0;
	o->preempted = 0;
	o->unseen_in = 0;
	__builtin_memset(o->holder_comm, 0, 16);
	o->sp = 0;
	o->fp = 0;
	o->pad = 0;
	o->task = task;
	/* the two chains and the stack copy packed after the header; every
	 * length bounded where the verifier sees it */
	if (kernel)
		kb = bpf_get_stack(ctx, data, CHAIN_BYTES, 0);
	barrier_var(kb);
	if (kb < 0 || kb > CHAIN_BYTES)
		kb = 0;
	ub = bpf_get_stack(ctx, data + kb, CHAIN_BYTES, BPF_F_USER_STACK);
	barrier_var(ub);
	if (ub < 0 || ub > CHAIN_BYTES)
		ub = 0;
	o->kbytes = (int)kb;
	o->ubytes = (int)ub;
	at = kb + ub;
	regs = (struct pt_regs *)bpf_task_pt_regs(
		(struct task_struct *)bpf_get_current_task_btf());
	/* elsewhere no registers: no stack copy, frame pointers alone (the
	 * recorder's CFI step knows these two architectures only) */
	if (regs) {
#if defined(__TARGET_ARCH_x86)
		o->sp = BPF_CORE_READ(regs, sp);
		o->fp = BPF_CORE_READ(regs, bp);
#elif defined(__TARGET_ARCH_arm64)
		o->sp = BPF_CORE_READ(regs, sp);
		o->fp = BPF_CORE_READ(regs, regs[29]);
#endif
	}
	/* as much of the copy as is mapped (up to where this thread's stack
	 * ends); short while the recorder is behind (not a copy kept in
	 * task storage: most never reach the ring) */
	len = want;
	if (!cfg.min_ns && len > SCHED_BPF_STACK_SHORT &&
	    bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) >= cfg.short_at) {
		len = SCHED_BPF_STACK_SHORT;
		__sync_fetch_and_add(&cut_short, 1);
	}
	if (ts && ts->top_left) {
		ts->top_left--;
		if (ts->top > o->sp && ts->top - o->sp < (__u64)len)
			len = (long)((ts->top - o->sp) & ~7ULL);
	}
	barrier_var(len);
	if (len > cap)
		len = cap;
	barrier_var(at);
	if (at < 0 || at > 2 * CHAIN_BYTES)
		at = 0;
	if (o->sp && len >= 8 && len <= cap)
		err = bpf_probe_read_user(data + at, len, (void *)o->sp);
	if (err && o->sp && len >= 8) {
		/* the mapping ends before sp + len: at which page? (the end
		 * of sp's own page is readable if sp is) */
		__u64 end = (o->sp + PAGE) & ~(PAGE - 1);
		char c;

		for (int i = 0; i < TOP_PROBES && end < o->sp + len; i++) {
			if (bpf_probe_read_user(&c, 1, (void *)end))
				break;
			end += PAGE;
		}
		if (end < o->sp + len)
			len = (long)((end - o->sp) & ~7ULL);
		barrier_var(len);
		if (len > cap)
			len = cap;
		err = len >= 8 && len <= cap
			      ? bpf_probe_read_user(data + at, len, (void *)o->sp)
			      : -1;
		if (!err && ts) {
			ts->top = o->sp + len;
			ts->top_left = TOP_USES;
		}
	}
	if (err)
		len = 0;
	barrier_var(len);
	if (len < 0 || len > cap)
		len = 0;
	o->stack_len = (__u32)len;
	return (long)sizeof(*o) + at + len;
}

static __always_inline void set_holder(struct sched_bpf_out *o, struct task_struct *next,
				       int runnable, int unseen)
{
	o->holder = (__u32)next->pid;
	o->preempted = runnable;
	o->unseen_in = unseen;
	__builtin_memcpy(o->holder_comm, next->comm, 16);
}

/* The task @t polls (the shim's, lean mode) or runs (zero-code Tokio):
 * its thread-local, read while it is current; the target's own threads
 * only (a child may run another program, or hold its parent's ids) */
static __always_inline __u64 task_now(struct task_struct *t)
{
#if defined(__TARGET_ARCH_x86)
	__u64 task;

	if ((__u32)t->tgid != cfg.tgid)
		return 0;
	task = shim_bpf_task(t->thread.fsbase, shim_off);
	return task ? task : tokio_bpf_task(t->thread.fsbase, &cfg.slot);
#else
	return 0;
#endif
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       struct task_struct *next, int runnable, __u64 now)
{
	__u32 tid = (__u32)prev->pid, cpu = bpf_get_smp_processor_id();
	struct tstate *ts = bpf_map_lookup_elem(&threads, &tid);
	long want =
		copy_bytes && copy_bytes < cfg.stack_bytes ? copy_bytes : cfg.stack_bytes;
	struct out_buf *b;
	int unseen = 0;
	long size;
	__u64 task = task_now(prev);

	/* in place when the thread is known: an update of a hash map can
	 * fail (-EBUSY, no free element), a store cannot */
	if (ts) {
		/* woken on its way to sleep: blocked, but runnable from now */
		int woke = ts->early && now - ts->early <= SCHED_EARLY_WAKE_NS;

		/* switched out last, not in: the kernel did not run this
		 * program for a switch-in (each CPU's chain of prev -> next
		 * breaks at ~0.1% of its switches on this project's 6.18) */
		unseen = ts->out != 0;
		ts->early = 0;
		ts->out = now;
		ts->runnable = runnable || woke ? now : 0;
		ts->taker = (__u32)next->pid;
		ts->preempted = (__u16)runnable;
		ts->unseen = (__u16)(cfg.min_ns && unseen);
		ts->task = task;
	} else {
		struct tstate n = {.out = now,
				   .runnable = runnable ? now : 0,
				   .taker = (__u32)next->pid,
				   .preempted = (__u16)runnable,
				   .task = task};

		if (bpf_map_update_elem(&threads, &tid, &n, BPF_NOEXIST)) {
			__sync_fetch_and_add(&lost, 1);
			return;
		}
	}
	if (cfg.min_ns) {
		/* kept until the switch-in: the stacks can only be read now */
		struct pend_buf *p = bpf_task_storage_get(&pend, prev, 0,
							  BPF_LOCAL_STORAGE_GET_F_CREATE);

		if (p) {
			fill_out(ctx, &p->h, p->data, SCHED_BPF_PEND_STACK, SCHED_BPF_OUT,
				 tid, now, ts, task, cfg.kernel, want);
			set_holder(&p->h, next, runnable, 0);
		}
		return;
	}
	b = bpf_map_lookup_elem(&outs, &cpu);
	if (!b)
		return;
	size = fill_out(ctx, &b->h, b->data, SCHED_BPF_STACK_MAX, SCHED_BPF_OUT, tid, now,
			ts, task, cfg.kernel, want);
	set_holder(&b->h, next, runnable, unseen);
	if (bpf_ringbuf_output(&ring, b, size, wake_flag()))
		__sync_fetch_and_add(&lost, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(d9_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now;
	__u32 cpu = bpf_get_smp_processor_id();
	struct hist *h;

	if (!enabled)
		return 0;
	now = bpf_ktime_get_ns();
	h = bpf_map_lookup_elem(&hists, &cpu);
	if (is_target(next))
		switch_in(prev, next, h, now);
	/* still runnable: preempted, or yielded (no sleep state bit); a
	 * thread's last switch (TASK_DEAD) is forgotten, not an interval */
	if (is_target(prev) && (prev_state & TASK_DEAD)) {
		__u32 tid = (__u32)prev->pid;

		bpf_map_delete_elem(&threads, &tid);
	} else if (is_target(prev)) {
		switch_out(ctx, prev, next, preempt || !(prev_state & SCHED_STATE_BITS),
			   now);
	}
	if (h) {
		__u32 at = h->head % SCHED_BPF_HIST;

		h->e[at].time = now;
		h->e[at].tid = next->pid ? (__u32)next->pid : SCHED_BPF_IDLE;
		__builtin_memcpy(h->e[at].comm, next->comm, 16);
		h->head = (at + 1) % SCHED_BPF_HIST;
		if (h->n < SCHED_BPF_HIST)
			h->n++;
	}
	return 0;
}

/* a target thread off its CPU is runnable from its first wakeup */
SEC("tp_btf/sched_waking")
int BPF_PROG(d9_waking, struct task_struct *p)
{
	__u32 tid;
	struct tstate *ts;

	if (!enabled || !is_target(p))
		return 0;
	tid = (__u32)p->pid;
	ts = bpf_map_lookup_elem(&threads, &tid);
	if (ts && ts->out && !ts->runnable)
		ts->runnable = bpf_ktime_get_ns();
	else if (ts && !ts->out)
		ts->early = bpf_ktime_get_ns();
	return 0;
}

/* --sampler tick: a CPU sample of the target thread the scheduler's tick
 * found on this CPU, at the kernel's HZ, an interrupt already paid for
 * (perf's cpu-clock takes one of its own per sample). The tick is an
 * hrtimer (cfg.tick_fn its function): its expiry's tracepoint, in the
 * interrupt, the thread it interrupted current. Never inside d9_switch
 * (which runs with interrupts off): the CPU's out buffer is its own. */
struct hrtimer {
	void *function;
} __attribute__((preserve_access_index));

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(d9_tick, struct hrtimer *timer, __s64 *now)
{
	struct task_struct *cur;
	__u32 tid, cpu;
	struct out_buf *b;
	struct tstate *ts;
	long size;

	if (!enabled || !cfg.tick_fn || (__u64)timer->function != cfg.tick_fn)
		return 0;
	cur = (struct task_struct *)bpf_get_current_task_btf();
	if (!is_target(cur))
		return 0;
	cpu = bpf_get_smp_processor_id();
	b = bpf_map_lookup_elem(&outs, &cpu);
	if (!b)
		return 0;
	tid = (__u32)cur->pid;
	ts = bpf_map_lookup_elem(&threads, &tid);
	size = fill_out(ctx, &b->h, b->data, SCHED_BPF_STACK_MAX, SCHED_BPF_TICK, tid,
			bpf_ktime_get_ns(), ts, task_now(cur), cfg.kernel,
			cfg.tick_stack);
	if (bpf_ringbuf_output(&ring, b, size, wake_flag()))
		__sync_fetch_and_add(&lost, 1);
	return 0;
}

/* the target's children, when followed */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(d9_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = (__u32)child->tgid;
	__u8 one = 1;

	if (cfg.children && child->tgid != parent->tgid && is_target(parent))
		bpf_map_update_elem(&children, &tgid, &one, BPF_ANY);
	return 0;
}

/* ... and forgotten when gone: a process's leader is freed last, once its
 * pid is released (an RCU grace period before a new process could reuse
 * it, unlikely to have come by then), so the map holds the children alive,
 * never a stranger that got a dead one's pid, never full of the dead */
SEC("tp_btf/sched_process_free")
int BPF_PROG(d9_free, struct task_struct *p)
{
	__u32 tgid = (__u32)p->tgid;

	if (cfg.children && p->pid == p->tgid && tgid != cfg.tgid)
		bpf_map_delete_elem(&children, &tgid);
	return 0;
}

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* With cfg.min_ns, read once at the end: the switch-outs still waiting
 * (threads off-CPU as the recording stops), sent like a long interval's */
SEC("iter/task")
int d9_open(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct tstate *ts;
	struct pend_buf *p;
	__u32 tid;

	if (!t || !cfg.min_ns || !is_target(t))
		return 0;
	tid = (__u32)t->pid;
	ts = bpf_map_lookup_elem(&threads, &tid);
	if (!ts || !ts->out)
		return 0;
	p = bpf_task_storage_get(&pend, t, 0, 0);
	if (p && p->h.time == ts->out) {
		char c = 0;

		p->h.unseen_in = ts->unseen;
		send_pend(p);
		/* a byte read per record: the recorder drains the ring
		 * between reads, so that it does not fill */
		bpf_seq_write(ctx->meta->seq, &c, 1);
	}
	return 0;
}
