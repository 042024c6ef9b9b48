// SPDX-License-Identifier: MIT
/*
 * offcpu.c - sched-switch collector: off-CPU intervals with complete stacks.
 *
 * See offcpu.h for what is collected. The parts:
 *   - the sched_switch tracepoint's id and prev_state field (tracefs.c
 *     finds, or mounts, tracefs);
 *   - the perf_event attr for either source, opened through record/perf.c;
 *   - the stack of a switch-out: kernel frames from the callchain, then the
 *     user frames unwound with CFI over the stack copy, continued by the
 *     kernel's frame-pointer chain after the last return address both
 *     agree on;
 *   - pairing switch-outs with switch-ins per thread in time order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "kallsyms/kallsyms.h"
#include "lib/grow.h"
#include "lib/map.h"
#include "record/cputl.h"
#include "record/bpfload.h"
#include "record/offcpu.h"
#include "record/proc.h"
#include "record/perf.h"
#include "record/sched_bpf.h"
#include "record/tracefs.h"
#include "record/ustack.h"
#include "symbol/symbolize.h"
#include "trace/trace.h"

#define MAX_CHAIN 512
/* Data pages per CPU ring: 32 MiB with stack copies (4,000 switches with
 * 8 KiB each: 80 ms of a CPU switching 50,000 times a second, the most
 * two cores managed here under 400 threads; 16 MiB lost up to 2.6% of
 * them to a recorder held off its CPU for a few tens of ms), 2 MiB
 * without, at most RING_BYTES_ALL over all CPUs; halved where mlock
 * limits refuse. The recorder is woken at a quarter full
 * (perf_set__pollfds) and frees each eighth as it parses it. */
#define RING_PAGES_STACK 8192
#define RING_PAGES_FP	 512
#define RING_PAGES_WAKE	 512
#define RING_BYTES_ALL	 (256ULL << 20)
/* The BPF source's one ring (mapped twice: RSS counts it twice) */
#define RING_BYTES_BPF (16ULL << 20)
/* a record stamped this long before a
 * drain began is in its ring by then */
#define SETTLE_NS 2000000ULL

int offcpu_state_is_preempted(uint64_t state)
{
	return !(state & SCHED_STATE_BITS);
}

struct tp_info {
	uint64_t id;
	unsigned int state_off, state_size;
	unsigned int next_pid_off, next_comm_off; /* 0: not found */
	unsigned int prev_pid_off, prev_comm_off;
};

/* The sched_switch tracepoint under tracefs @dir. */
static int tp_info_read(const char *dir, struct tp_info *tp, char *why, size_t whylen)
{
	char buf[8192];
	int err;

	err = tracepoint_read(dir, "sched/sched_switch", &tp->id, buf, sizeof(buf), why,
			      whylen);
	if (err)
		return err;
	err = tracepoint_field(buf, "prev_state", &tp->state_off, &tp->state_size, NULL);
	if (err || (tp->state_size != 4 && tp->state_size != 8)) {
		snprintf(why, whylen,
			 "no usable prev_state field in sched_switch's format");
		return -ENOENT;
	}
	tp->next_pid_off = tracepoint_offset(buf, "next_pid", 4);
	tp->next_comm_off = tracepoint_offset(buf, "next_comm", 16);
	tp->prev_pid_off = tracepoint_offset(buf, "prev_pid", 4);
	tp->prev_comm_off = tracepoint_offset(buf, "prev_comm", 16);
	return 0;
}

/* Find (or mount) tracefs and read the tracepoint. 0 or -errno + @why. */
static int find_tracepoint(const struct offcpu_rec_opts *o, struct offcpu_rec_stats *st,
			   struct tp_info *tp, char *why, size_t whylen)
{
	int err = tracefs_find(o->may_mount, st->tracefs, sizeof(st->tracefs),
			       &st->mounted_tracefs, why, whylen);

	return err ? err : tp_info_read(st->tracefs, tp, why, whylen);
}

/* ---- per-thread pairing ------------------------------------------------- */

/* A thread's records, in time order: switched out (EV_OUT, with its
 * stack, and EV_OUT_REC, the PERF_RECORD_SWITCH), woken (EV_WAKE, from the
 * system-wide wakeup event), chosen to run after @holder (EV_PREV, from
 * the system-wide switch event), switched in (EV_IN). */
enum ev_kind { EV_OUT, EV_OUT_REC, EV_WAKE, EV_PREV, EV_IN };

struct ev {
	uint64_t time;
	uint32_t stack;
	uint32_t holder; /* EV_OUT: the thread that took the CPU; EV_PREV:
			  * the one that ran before; 0 unknown or idle */
	uint32_t cpu;	 /* EV_PREV: the CPU it is switched in on */
	uint8_t kind;
	uint8_t preempted;
	uint8_t known; /* EV_OUT: preempted is known (tracepoint) */
};

struct tstate {
	uint32_t tid;
	struct ev *ev; /* unprocessed, time order */
	uint32_t n;
	size_t cap;
	/* the switch-out waiting for its switch-in, its wakeup and the
	 * thread that ran before it */
	int open;
	struct ev out;
	uint64_t wake;
	uint64_t early_wake; /* a wakeup while on-CPU: it was going to sleep */
	uint32_t prev;
	int32_t prev_cpu; /* the CPU of its switch-in, -1 not seen */
	uint64_t task;	  /* the task it left (BPF, zero-code Tokio's
			   * id), 0: none */
};

/* The system-wide part: when target threads become runnable, and who ran
 * before them, from tracepoints filtered in the kernel on their tids. */
struct wake_rec {
	struct perf_set *wake_ps, *in_ps;
	struct perf_callbacks wake_cb, in_cb;
	unsigned int pid_off; /* sched_waking's pid */
	size_t filter_nts;    /* threads known when the filter was set */
	struct lib_map named; /* holders whose name is written: a set */
	struct cputl *cpus;   /* what ran on each CPU (the switch event) */
};

struct offcpu_rec {
	struct sched_bpf *bpf; /* the BPF source, else the perf sets */
	uint64_t bpf_run_ip;   /* its kernel chains' frame in bpf_trace_runN */
	uint64_t irq_ip;       /* a tick's frame in the interrupt's entry */
	void (*tick)(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		     unsigned int nk, const uint64_t *uips, unsigned int nu,
		     const void *stack);
	struct perf_set *ps;
	struct perf_callbacks cb;
	struct symbolizer *sym;
	struct trace_writer *w;
	struct offcpu_rec_stats *st;
	pid_t pid;
	int children; /* keep forked children's switches */
	int tracepoint;
	struct tp_info tp;
	struct tstate *ts; /* the threads, first seen first */
	size_t nts, capts;
	struct lib_map ts_of; /* tid -> index in ts */
	uint64_t watermark;   /* records before it are all read */
	struct wake_rec wk;
	int err;
	uint64_t runq_limit; /* a wait on a run queue longer is a hit */
	uint64_t min_ns;     /* shorter intervals keep no stack */
	/* zero-code Tokio: an interval's task (offcpu_rec_opts.task) */
	uint64_t (*task)(void *ctx, uint64_t raw, uint32_t stack);
	void *task_ctx;
	/* the BPF stack copy, adapted (bpf_copy_size()) */
	unsigned int stack_bytes, copy;
	uint64_t copy_from, cut_seen; /* the stacks counted at its last change */
	uint64_t copy_cut;	      /* stacks cut by an adapted copy's end */
	struct {
		uint32_t tid;
		uint64_t time, ns; /* time 0: none */
	} hit;
};

static struct tstate *tstate_find(struct offcpu_rec *oc, uint32_t tid)
{
	const uint64_t *ix = tid ? lib_map_find(&oc->ts_of, tid) : NULL;

	return ix ? &oc->ts[*ix] : NULL;
}

static struct tstate *tstate_get(struct offcpu_rec *oc, uint32_t tid)
{
	const uint64_t *ix = lib_map_find(&oc->ts_of, tid);

	if (ix)
		return &oc->ts[*ix];
	if (LIB_GROW(oc->ts, oc->capts, oc->nts + 1) ||
	    lib_map_set(&oc->ts_of, tid, oc->nts))
		return NULL;
	oc->ts[oc->nts] = (struct tstate){.tid = tid, .prev_cpu = -1};
	return &oc->ts[oc->nts++];
}

/* Insert in time order; equal times keep arrival order (same ring). */
static void push_ev(struct offcpu_rec *oc, uint32_t tid, const struct ev *e)
{
	struct tstate *t = tstate_get(oc, tid);
	uint32_t i;

	if (!t) {
		oc->err = oc->err ? oc->err : -ENOMEM;
		return;
	}
	if (LIB_GROW(t->ev, t->cap, (size_t)t->n + 1)) {
		oc->err = oc->err ? oc->err : -ENOMEM;
		return;
	}
	for (i = t->n; i > 0 && t->ev[i - 1].time > e->time; i--)
		;
	memmove(&t->ev[i + 1], &t->ev[i], (t->n - i) * sizeof(*e));
	t->ev[i] = *e;
	t->n++;
}

#define TL_KEEP_NS 2000000000ULL /* a wait longer is charged for 2 s at most */

static void name_holder(struct offcpu_rec *oc, uint32_t tid, const char *comm);
static void emit_interval(struct offcpu_rec *oc, const struct tstate *t,
			  struct trace_switch *s, const struct trace_hold *h, size_t nh);

/* The stack of an interval under min_ns: one frame, TRACE_ADDR_NOT_KEPT
 * (the writer names it). */
static void not_kept(struct offcpu_rec *oc, uint32_t *stack)
{
	const uint64_t ip = TRACE_ADDR_NOT_KEPT;
	int err = trace_writer__stack(oc->w, &ip, 1, stack);

	if (err && !oc->err)
		oc->err = err;
	oc->st->not_kept++;
}

static void write_interval(struct offcpu_rec *oc, struct tstate *t, uint64_t time_in)
{
	struct trace_hold h[TRACE_MAX_HOLDS];
	size_t nh = 0;
	const struct ev *out = &t->out;
	struct trace_switch s = {
		.time = out->time,
		.time_in = time_in,
		.tid = t->tid,
		.stack = out->stack,
		.preempted = out->preempted,
	};

	/* runnable from the preemption, or from the wakeup when one came
	 * between out and in; who had the CPU meanwhile: the thread that
	 * took it, else the one that ran last before this one */
	if (out->preempted && out->known) {
		s.runnable = out->time;
		s.holder = out->holder ? out->holder : t->prev;
	} else if (t->wake >= out->time && (!time_in || t->wake <= time_in)) {
		s.runnable = t->wake;
		s.holder = t->prev;
	}
	if (s.runnable && time_in && t->prev_cpu >= 0 && oc->wk.cpus)
		nh = cputl__holds(oc->wk.cpus, (uint32_t)t->prev_cpu, t->tid, s.runnable,
				  time_in, h);
	for (size_t k = 0; k < nh; k++) {
		const char *comm;

		if (h[k].tid != TRACE_HOLD_UNKNOWN && h[k].tid != TRACE_HOLD_IDLE &&
		    h[k].tid != TRACE_HOLD_OTHERS &&
		    (comm = cputl__comm(oc->wk.cpus, h[k].tid)))
			name_holder(oc, h[k].tid, comm);
	}
	if (oc->min_ns && time_in && time_in - s.time < oc->min_ns)
		not_kept(oc, &s.stack);
	emit_interval(oc, t, &s, h, nh);
}

/* Write @s with its holds @h (named already): the holder is the largest
 * that is a thread; the statistics and the run-queue hit follow. */
static void emit_interval(struct offcpu_rec *oc, const struct tstate *t,
			  struct trace_switch *s, const struct trace_hold *h, size_t nh)
{
	uint64_t time_in = s->time_in;
	int err;

	if (t->task && oc->task)
		s->task = oc->task(oc->task_ctx, t->task, s->stack);
	if (s->task)
		oc->st->tasked++;
	for (size_t k = 0, top = 0; k < nh; k++) {
		if (h[k].tid == TRACE_HOLD_UNKNOWN)
			continue;
		oc->st->held_ns += h[k].ns;
		if (h[k].tid == TRACE_HOLD_IDLE || h[k].tid == TRACE_HOLD_OTHERS)
			continue;
		if (!top++)
			s->holder = h[k].tid;
	}
	if (s->runnable && time_in) {
		oc->st->runnable++;
		oc->st->runq_ns += time_in - s->runnable;
		if (oc->runq_limit && time_in - s->runnable > oc->runq_limit &&
		    !oc->hit.time) {
			oc->hit.tid = s->tid;
			oc->hit.time = time_in;
			oc->hit.ns = time_in - s->runnable;
		}
	}
	err = trace_writer__switch_held(oc->w, s, h, nh);

	if (err && !oc->err)
		oc->err = err;
	oc->st->switches++;
	if (s->preempted)
		oc->st->preempted++;
	else
		oc->st->blocked++;
	if (!time_in)
		oc->st->open_at_end++;
}

/* Pair what is settled (before @until) of thread @t. */
static void settle(struct offcpu_rec *oc, struct tstate *t, uint64_t until)
{
	uint32_t i;

	for (i = 0; i < t->n && t->ev[i].time < until; i++) {
		const struct ev *e = &t->ev[i];

		switch (e->kind) {
		case EV_OUT:
			if (t->open)
				oc->st->unpaired++; /* its switch-in was lost */
			t->out = *e;
			t->open = 1;
			t->prev = 0;
			t->prev_cpu = -1;
			/* woken between setting its sleep state and switching
			 * out (the wakeup is traced before the switch): it
			 * was runnable all along */
			t->wake = t->early_wake && e->time - t->early_wake <=
							   SCHED_EARLY_WAKE_NS
					  ? e->time
					  : 0;
			t->early_wake = 0;
			break;
		case EV_WAKE:
			/* the first wakeup counts: it made the thread runnable */
			if (t->open && !t->wake)
				t->wake = e->time;
			else if (!t->open)
				t->early_wake = e->time;
			break;
		case EV_PREV:
			if (t->open) {
				t->prev = e->holder;
				t->prev_cpu = (int32_t)e->cpu;
			}
			break;
		case EV_OUT_REC:
			if (t->open && !t->out.known) {
				t->out.preempted = e->preempted;
				t->out.known = 1;
			}
			break;
		case EV_IN:
			/* a switch-in without a switch-out: the first one of a
			 * thread that was off-CPU at attach time */
			if (t->open)
				write_interval(oc, t, e->time);
			t->open = 0;
			t->early_wake = 0;
			break;
		}
	}
	memmove(t->ev, t->ev + i, (t->n - i) * sizeof(*t->ev));
	t->n -= i;
}

static void settle_all(struct offcpu_rec *oc, uint64_t until)
{
	size_t i;

	for (i = 0; i < oc->nts; i++)
		if (oc->ts[i].n)
			settle(oc, &oc->ts[i], until);
}

/* ---- who had the CPU: thread names and the system-wide events ---------- */

static void on_wake_lost(void *ctx, uint64_t lost)
{
	struct offcpu_rec *oc = ctx;

	oc->st->wake_lost += lost;
}

/* Write @tid's name (@comm, 16 bytes, maybe unterminated) once. */
static void name_holder(struct offcpu_rec *oc, uint32_t tid, const char *comm)
{
	struct wake_rec *wk = &oc->wk;
	char name[17];
	int err, created;

	if (!lib_map_get(&wk->named, tid, &created))
		return; /* a name less, not an error */
	if (!created)
		return;
	memcpy(name, comm, 16);
	name[16] = '\0';
	err = trace_writer__comm(oc->w, tid, name);
	if (err && !oc->err)
		oc->err = err;
}

/* The tid at @pid_off of a tracepoint record, its name at @comm_off
 * written once; 0 if absent or the idle task. */
static uint32_t raw_tid(struct offcpu_rec *oc, const struct perf_sample *s,
			unsigned int pid_off, unsigned int comm_off)
{
	int32_t pid;

	if (!pid_off || !s->raw || s->raw_size < pid_off + 4)
		return 0;
	memcpy(&pid, (const unsigned char *)s->raw + pid_off, 4);
	if (pid <= 0)
		return 0;
	if (comm_off && s->raw_size >= comm_off + 16)
		name_holder(oc, (uint32_t)pid, (const char *)s->raw + comm_off);
	return (uint32_t)pid;
}

/* sched_waking of a thread that is off-CPU: it is runnable from now. */
static void on_wake(void *ctx, const struct perf_sample *s)
{
	struct offcpu_rec *oc = ctx;
	struct ev e = {.time = s->time, .kind = EV_WAKE};
	int32_t pid;

	if (!s->raw || s->raw_size < oc->wk.pid_off + 4)
		return;
	memcpy(&pid, (const unsigned char *)s->raw + oc->wk.pid_off, 4);
	/* the kernel filter is by tid ranges: others can pass it */
	if (pid > 0 && tstate_find(oc, (uint32_t)pid))
		push_ev(oc, (uint32_t)pid, &e);
}

/* Every sched_switch on every CPU: what runs there from now on (the
 * CPU's timeline, its threads named once), and, for a target thread, who
 * ran before it and where. */
static void on_switch_in(void *ctx, const struct perf_sample *s)
{
	struct offcpu_rec *oc = ctx;
	struct ev e = {.time = s->time, .kind = EV_PREV, .cpu = s->cpu};
	uint32_t next = raw_tid(oc, s, oc->tp.next_pid_off, 0);
	const char *comm =
		oc->tp.next_comm_off && s->raw_size >= oc->tp.next_comm_off + 16
			? (const char *)s->raw + oc->tp.next_comm_off
			: NULL;

	if (oc->wk.cpus)
		cputl__add(oc->wk.cpus, s->cpu, s->time, next ? next : TRACE_HOLD_IDLE,
			   comm);
	if (!next || !tstate_find(oc, next))
		return;
	e.holder = raw_tid(oc, s, oc->tp.prev_pid_off, oc->tp.prev_comm_off);
	push_ev(oc, next, &e);
}

/* (Re)set both filters to the threads known now. */
static int wake_filter(struct offcpu_rec *oc)
{
	char buf[4000]; /* the kernel takes up to a page */
	uint32_t *tids;
	size_t i, n = 0;
	int err;

	tids = malloc((oc->nts ? oc->nts : 1) * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	for (i = 0; i < oc->nts; i++)
		tids[n++] = oc->ts[i].tid;
	err = n ? tracepoint_tid_filter("pid", tids, n, buf, sizeof(buf)) : -EINVAL;
	if (!err)
		err = perf_set__set_filter(oc->wk.wake_ps, buf);
	free(tids);
	oc->wk.filter_nts = oc->nts;
	return err;
}

/* A set on tracepoint @id in *@out, as perf_set__new_attr(). */
static int wake_set(uint64_t id, struct perf_set **out)
{
	struct perf_event_attr a;

	perf_attr_init(&a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type |= PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	/* 2 MiB per CPU: 80 bytes a record, 100 ms of 250,000 a second */
	return perf_set__new_attr(&a, RING_PAGES_WAKE, out);
}

/* The wakeup tracepoint on every CPU, filtered to the target's threads,
 * and the switch tracepoint for the thread that ran before each of them
 * (its absence only costs the holder of woken threads). 0, or -errno and
 * why in st->wake_why. */
static int wake_open(struct offcpu_rec *oc)
{
	struct offcpu_rec_stats *st = oc->st;
	static const char *const names[] = {"sched/sched_waking", "sched/sched_wakeup"};
	char fmt[8192], why[256] = "";
	uint64_t id = 0;
	int err = -ENOENT;
	size_t i;

	if (!oc->tracepoint) {
		snprintf(st->wake_why, sizeof(st->wake_why),
			 "needs tracefs (off-CPU fell back to the context-switch event)");
		return -ENOENT;
	}
	for (i = 0; i < 2 && err; i++) {
		err = tracepoint_read(st->tracefs, names[i], &id, fmt, sizeof(fmt), why,
				      sizeof(why));
		if (!err && !(oc->wk.pid_off = tracepoint_offset(fmt, "pid", 4)))
			err = -ENOENT;
	}
	if (err) {
		/* cut to what the line holds (the return value says by how much) */
		if (snprintf(st->wake_why, sizeof(st->wake_why),
			     "no wakeup tracepoint: %s", why) < 0)
			*st->wake_why = '\0';
		return err;
	}
	snprintf(st->wake_source, sizeof(st->wake_source), "sched:%s", names[i - 1] + 6);
	err = wake_set(id, &oc->wk.wake_ps);
	if (!err)
		err = perf_set__add_cpus(oc->wk.wake_ps);
	if (err) {
		snprintf(st->wake_why, sizeof(st->wake_why),
			 "cannot open %s on every CPU: %s%s", st->wake_source,
			 strerror(-err),
			 err == -EACCES || err == -EPERM
				 ? " (system-wide tracepoints need root or CAP_PERFMON)"
				 : "");
		return err;
	}
	oc->wk.wake_cb = (struct perf_callbacks){
		.ctx = oc, .sample = on_wake, .lost = on_wake_lost};
	if (oc->tp.next_pid_off && oc->tp.prev_pid_off) {
		err = wake_set(oc->tp.id, &oc->wk.in_ps);
		if (!err)
			err = perf_set__add_cpus(oc->wk.in_ps);
		if (err) {
			snprintf(st->holders_why, sizeof(st->holders_why),
				 "cannot open sched:sched_switch on every CPU: %s",
				 strerror(-err));
			perf_set__free(oc->wk.in_ps);
			oc->wk.in_ps = NULL;
		} else if (!(oc->wk.cpus = cputl__new())) {
			perf_set__free(oc->wk.in_ps);
			oc->wk.in_ps = NULL;
		} else {
			snprintf(st->holders, sizeof(st->holders), "sched:sched_switch");
		}
		oc->wk.in_cb = (struct perf_callbacks){
			.ctx = oc, .sample = on_switch_in, .lost = on_wake_lost};
	}
	err = wake_filter(oc);
	if (err) {
		snprintf(st->wake_why, sizeof(st->wake_why), "cannot filter %s: %s",
			 st->wake_source, strerror(-err));
		return err;
	}
	return 0;
}

static void wake_close(struct offcpu_rec *oc)
{
	perf_set__free(oc->wk.wake_ps);
	perf_set__free(oc->wk.in_ps);
	oc->wk.wake_ps = oc->wk.in_ps = NULL;
}

static void wake_drain(struct offcpu_rec *oc)
{
	if (!oc->wk.wake_ps)
		return;
	if (oc->nts != oc->wk.filter_nts)
		wake_filter(oc); /* new threads: a failure keeps the old one */
	perf_set__drain(oc->wk.wake_ps, &oc->wk.wake_cb);
	if (oc->wk.in_ps)
		perf_set__drain(oc->wk.in_ps, &oc->wk.in_cb);
}

static void on_sample(void *ctx, const struct perf_sample *s)
{
	struct offcpu_rec *oc = ctx;
	uint64_t ips[MAX_CHAIN];
	unsigned int n;
	struct ev e = {.time = s->time, .kind = EV_OUT};
	int err;

	/* inherited events follow forked children: not the target's */
	if (s->pid && s->pid != (uint32_t)oc->pid && !oc->children)
		return;
	if (oc->tracepoint) {
		uint64_t state = 0;

		if (!s->raw || s->raw_size < oc->tp.state_off + oc->tp.state_size)
			return;
		memcpy(&state, (const unsigned char *)s->raw + oc->tp.state_off,
		       oc->tp.state_size); /* little endian */
		if (oc->tp.state_size == 4)
			state = (uint32_t)state;
		e.preempted = (uint8_t)offcpu_state_is_preempted(state);
		e.known = 1;
		e.holder = raw_tid(oc, s, oc->tp.next_pid_off, oc->tp.next_comm_off);
	}
	n = ustack_chain(oc->sym, s, ips, MAX_CHAIN, &oc->st->ustack);
	err = trace_writer__stack(oc->w, ips, n, &e.stack);
	if (err) {
		if (!oc->err)
			oc->err = err;
		return;
	}
	push_ev(oc, s->tid, &e);
}

void offcpu_rec__set_runq_limit(struct offcpu_rec *oc, uint64_t ns)
{
	oc->runq_limit = ns;
}

int offcpu_rec__runq_hit(struct offcpu_rec *oc, uint32_t *tid, uint64_t *time,
			 uint64_t *ns)
{
	if (!oc->hit.time)
		return 0;
	*tid = oc->hit.tid;
	*time = oc->hit.time;
	*ns = oc->hit.ns;
	oc->hit.time = 0;
	return 1;
}

/* A thread that may still have a record to pair: alive, or with something
 * waiting. */
static int tstate_needed(const struct offcpu_rec *oc, const struct tstate *t)
{
	return t->n || t->open || !syscall(SYS_tgkill, oc->pid, t->tid, 0) ||
	       errno != ESRCH;
}

int offcpu_rec__set_shim(struct offcpu_rec *oc, int64_t off)
{
	if (!oc || !oc->bpf)
		return -EOPNOTSUPP;
	sched_bpf__set_shim(oc->bpf, off);
	return 0;
}

void offcpu_rec__prune(struct offcpu_rec *oc)
{
	size_t j, k = 0;

	/* the threads needed stay, in their order */
	for (j = 0; j < oc->nts; j++) {
		struct tstate *t = &oc->ts[j];

		if (!tstate_needed(oc, t)) {
			lib_map_del(&oc->ts_of, t->tid);
			free(t->ev);
			continue;
		}
		if (k != j) {
			*lib_map_find(&oc->ts_of, t->tid) = k;
			oc->ts[k] = *t;
		}
		k++;
	}
	oc->nts = k;
}

/* @id, a stack of @old, as a stack of @w. */
static int restack(struct trace_writer *old, struct trace_writer *w, uint32_t *id)
{
	const uint64_t *ips;
	unsigned int n = trace_writer__stack_ips(old, *id, &ips);

	return trace_writer__stack(w, ips, n, id);
}

int offcpu_rec__set_writer(struct offcpu_rec *oc, struct trace_writer *w)
{
	struct trace_writer *old = oc->w;
	int err = 0;

	/* switch-outs not yet paired keep their stacks, in @w's ids */
	for (size_t i = 0; i < oc->nts && !err; i++) {
		struct tstate *t = &oc->ts[i];

		for (uint32_t k = 0; k < t->n && !err; k++)
			if (t->ev[k].kind == EV_OUT)
				err = restack(old, w, &t->ev[k].stack);
		if (!err && t->open && t->out.kind == EV_OUT)
			err = restack(old, w, &t->out.stack);
	}
	oc->w = w;
	/* holders are named again in the new segment */
	lib_map_release(&oc->wk.named);
	return err;
}

static void on_ctxsw(void *ctx, uint32_t tid, uint64_t time, int out, int preempted)
{
	struct offcpu_rec *oc = ctx;
	struct ev e = {.time = time,
		       .kind = out ? EV_OUT_REC : EV_IN,
		       .preempted = (uint8_t)preempted};

	if (tid)
		push_ev(oc, tid, &e);
}

static void on_lost(void *ctx, uint64_t lost)
{
	struct offcpu_rec *oc = ctx;

	oc->st->lost += lost;
}

/* ---- the BPF source ----------------------------------------------------- */

/* The frames down to the first of @kips' first @max whose function's name
 * starts with @prefix, it included; 0 if none. That frame's address is
 * the same every time: named once (kallsyms) into *@ip, then compared. */
static unsigned int frames_to(struct offcpu_rec *oc, const uint64_t *kips,
			      unsigned int nk, unsigned int max, const char *prefix,
			      uint64_t *ip)
{
	for (unsigned int i = 0; i < nk && i < max; i++) {
		const char *name;
		uint64_t off;

		if (*ip) {
			if (kips[i] == *ip)
				return i + 1;
			continue;
		}
		name = kallsyms__lookup(symbolizer__kallsyms(oc->sym), kips[i], &off,
					NULL);
		if (name && !strncmp(name, prefix, strlen(prefix))) {
			*ip = kips[i];
			return i + 1;
		}
	}
	return 0;
}

/* Where a BPF switch-out's kernel chain meets perf's: it starts in the
 * program and in the kernel's bpf_trace_runN that called it, above the
 * tracepoint, where perf's starts; those frames are left out, so that both
 * paths give the same stacks. */
static unsigned int bpf_frames(struct offcpu_rec *oc, const uint64_t *kips,
			       unsigned int nk)
{
	return frames_to(oc, kips, nk, 4, "bpf_trace_run", &oc->bpf_run_ip);
}

/* The frames of a tick's kernel chain that are the tick's own, not the
 * interrupted code's: the program, the timer interrupt down to its entry
 * stub (asm_sysvec_apic_timer_interrupt on x86-64). None found: all (the
 * chain ends in the interrupt). */
static unsigned int irq_frames(struct offcpu_rec *oc, const uint64_t *kips,
			       unsigned int nk)
{
	unsigned int n = frames_to(oc, kips, nk, 24, "asm_", &oc->irq_ip);

	return n ? n : nk;
}

static void on_bpf_tick(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
			unsigned int nk, const uint64_t *uips, unsigned int nu,
			const void *stack)
{
	struct offcpu_rec *oc = ctx;
	unsigned int skip = irq_frames(oc, kips, nk);

	oc->tick(oc->task_ctx, o, kips + skip, nk - skip, uips, nu, stack);
}

/* A target thread left its CPU: its stack, the switch-out waiting for
 * its switch-in. */
static void on_bpf_out(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		       unsigned int nk, const uint64_t *uips, unsigned int nu,
		       const void *stack)
{
	struct offcpu_rec *oc = ctx;
	struct tstate *t = tstate_get(oc, o->tid);
	struct ev e = {.time = o->time,
		       .kind = EV_OUT,
		       .holder = o->holder,
		       .preempted = (uint8_t)o->preempted,
		       .known = 1};
	uint64_t ips[MAX_CHAIN], cut;
	unsigned int n, skip;
	int err;

	if (!t) {
		oc->err = oc->err ? oc->err : -ENOMEM;
		return;
	}
	skip = bpf_frames(oc, kips, nk);
	cut = oc->st->ustack.cut;
	n = ustack_split(oc->sym, kips + skip, nk - skip, o->sp, o->fp, stack,
			 o->stack_len, uips, nu, ips, MAX_CHAIN, &oc->st->ustack);
	/* cut by the adapted copy, not by the stack's end or the ring */
	if (oc->st->ustack.cut > cut && o->stack_len >= oc->copy &&
	    oc->copy < oc->stack_bytes)
		oc->copy_cut++;
	err = trace_writer__stack(oc->w, ips, n, &e.stack);
	if (err) {
		oc->err = oc->err ? oc->err : err;
		return;
	}
	/* the kernel's, not ours: the switch-out before had no switch-in
	 * (with min_ns only an OUT sent at the end says so, nothing open) */
	if (o->unseen_in && (t->open || oc->min_ns))
		oc->st->unseen_in++;
	else if (t->open)
		oc->st->unpaired++;
	if (o->preempted && o->holder)
		name_holder(oc, o->holder, o->holder_comm); /* who took the CPU */
	t->out = e;
	t->open = 1;
	t->wake = 0;
	t->prev = 0;
	t->prev_cpu = -1;
	t->task = o->task;
}

/* ... and got one again: the interval, its run-queue part and who held
 * the CPU meanwhile, as the kernel summed them. */
static void on_bpf_in(void *ctx, const struct sched_bpf_in *in)
{
	struct offcpu_rec *oc = ctx;
	struct tstate *t = in->flags & SCHED_BPF_IN_SHORT ? tstate_get(oc, in->tid)
							  : tstate_find(oc, in->tid);
	struct trace_hold v[SCHED_BPF_SLOTS + 1], h[TRACE_MAX_HOLDS];
	struct trace_switch s;
	size_t nv = 0, nh = 0;

	if (in->flags & SCHED_BPF_IN_UNSEEN)
		oc->st->unseen_in++;
	if (t && in->flags & SCHED_BPF_IN_SHORT) {
		/* under min_ns: its switch-out stayed in the kernel */
		if (t->open)
			oc->st->unpaired++;
		t->out = (struct ev){.time = in->out,
				     .kind = EV_OUT,
				     .holder = in->taker,
				     .preempted = !!(in->flags & SCHED_BPF_IN_PREEMPTED),
				     .known = 1};
		not_kept(oc, &t->out.stack);
		t->open = 1;
		t->task = in->task;
	}
	if (!t || !t->open)
		return; /* off-CPU since before the recording */
	if (in->out != t->out.time) {
		/* the switch-in of a switch-out that was lost (or of one
		 * before it): not this interval */
		oc->st->unpaired++;
		t->open = 0;
		return;
	}
	t->open = 0;
	s = (struct trace_switch){.time = t->out.time,
				  .time_in = in->time,
				  .tid = t->tid,
				  .stack = t->out.stack,
				  .preempted = t->out.preempted};
	if (in->runnable >= s.time && in->runnable <= s.time_in) {
		s.runnable = in->runnable;
		s.holder = s.preempted && t->out.holder ? t->out.holder : in->prev;
		if (in->unknown)
			v[nv++] = (struct trace_hold){TRACE_HOLD_UNKNOWN, in->unknown};
		for (unsigned int k = 0; k < in->nholds && k < SCHED_BPF_SLOTS; k++) {
			const struct sched_bpf_hold *b = &in->holds[k];

			v[nv++] = (struct trace_hold){b->tid, b->ns};
			if (b->tid != SCHED_BPF_IDLE)
				name_holder(oc, b->tid, b->comm);
		}
		nh = cputl__pick_holds(v, nv, in->others, h);
	}
	emit_interval(oc, t, &s, h, nh);
}

/* The tick's hrtimer function, named so since Linux 6.10 and before */
static uint64_t tick_fn(struct offcpu_rec *oc)
{
	const struct kallsyms *k = symbolizer__kallsyms(oc->sym);
	uint64_t a = kallsyms__find(k, "tick_nohz_handler");

	return a ? a : kallsyms__find(k, "tick_sched_timer");
}

/* The BPF source in place of the perf sets: 0, or -errno and @why. */
static int bpf_open(struct offcpu_rec *oc, const struct offcpu_rec_opts *o, char *why,
		    size_t whylen)
{
	const struct sched_bpf_opts bo = {
		.pid = oc->pid,
		.children = o->children,
		.stack_bytes = o->stack_bytes,
		.kernel = !o->exclude_kernel,
		.wakeups = o->wakeups,
		.ring_bytes = RING_BYTES_BPF,
		.min_ns = o->min_ns,
		.slot = o->slot,
		.tick_fn = o->tick ? tick_fn(oc) : 0,
		.tick_stack = o->tick_stack,
	};
	const struct sched_bpf_cb cb = {
		.ctx = oc, .out = on_bpf_out, .in = on_bpf_in, .tick = on_bpf_tick};
	struct offcpu_rec_stats *st = oc->st;
	int err;

	if (kill(oc->pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (o->tick && !bo.tick_fn) {
		snprintf(why, whylen,
			 "the scheduler's tick function (tick_nohz_handler, "
			 "tick_sched_timer) is not in /proc/kallsyms");
		return -ENOENT;
	}
	err = bpfload_pidns(why, whylen);
	if (err)
		return err;
	err = sched_bpf__open(&bo, &cb, &oc->bpf, why, whylen);
	if (err)
		return err;
	st->source = "bpf";
	snprintf(st->holders, sizeof(st->holders), "sched:sched_switch");
	if (o->wakeups)
		snprintf(st->wake_source, sizeof(st->wake_source), "sched:sched_waking");
	else
		snprintf(st->wake_why, sizeof(st->wake_why), "off (--no-wakeups)");
	return 0;
}

/* ---- opening ------------------------------------------------------------ */

static void make_attr(const struct offcpu_rec *oc, const struct offcpu_rec_opts *o,
		      struct perf_event_attr *a)
{
	perf_attr_init(a);
	if (oc->tracepoint) {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = oc->tp.id;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	}
	a->sample_period = 1;
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (oc->tracepoint)
		a->sample_type |= PERF_SAMPLE_RAW;
	ustack_attr(a, o->stack_bytes);
	a->inherit = 1;
	a->sample_id_all = 1;
	a->context_switch = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !!o->exclude_kernel;
}

/* Threads the events were opened on: the wakeup filter's first tids. */
static void known_thread(void *ctx, pid_t tid)
{
	struct offcpu_rec *oc = ctx;

	if (tid > 0 && !tstate_get(oc, (uint32_t)tid) && !oc->err)
		oc->err = -ENOMEM;
}

static int open_source(struct offcpu_rec *oc, const struct offcpu_rec_opts *o)
{
	struct perf_event_attr a;
	int err;

	long ncpus = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);
	unsigned int pages = o->stack_bytes ? RING_PAGES_STACK : RING_PAGES_FP;

	while (pages > 64 &&
	       (uint64_t)pages * (uint64_t)page * (uint64_t)ncpus > RING_BYTES_ALL)
		pages /= 2;
	make_attr(oc, o, &a);
	err = perf_set__new_attr(&a, pages, &oc->ps);
	if (err)
		return err;
	err = perf_set__add_process(oc->ps, oc->pid, known_thread, oc);
	if (err < 0) {
		perf_set__free(oc->ps);
		oc->ps = NULL;
		return err;
	}
	return 0;
}

int offcpu_rec__open(pid_t pid, const struct offcpu_rec_opts *o, struct symbolizer *sym,
		     struct trace_writer *w, struct offcpu_rec_stats *st,
		     struct offcpu_rec **out, char *why, size_t whylen)
{
	struct offcpu_rec *oc;
	int err = -ENOENT;

	*out = NULL;
	why[0] = '\0';
	if (o->stack_bytes % 8 || o->stack_bytes > OFFCPU_STACK_MAX) {
		snprintf(why, whylen, "bad stack copy size %u", o->stack_bytes);
		return -EINVAL;
	}
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	oc->pid = pid;
	oc->children = o->children;
	oc->min_ns = o->min_ns;
	oc->task = o->task;
	oc->task_ctx = o->task_ctx;
	oc->tick = o->tick;
	oc->stack_bytes = oc->copy = o->stack_bytes;
	oc->sym = sym;
	oc->w = w;
	oc->st = st;
	oc->cb = (struct perf_callbacks){
		.ctx = oc, .sample = on_sample, .ctxsw = on_ctxsw, .lost = on_lost};
	if (o->sched != OFFCPU_SCHED_PERF || o->tick) {
		char bwhy[256];

		err = bpf_open(oc, o, bwhy, sizeof(bwhy));
		if (!err) {
			*out = oc;
			return 0;
		}
		if (err == -ESRCH || o->sched == OFFCPU_SCHED_BPF || o->tick) {
			snprintf(why, whylen, "%s",
				 err == -ESRCH ? "no such process" : bwhy);
			goto fail;
		}
		snprintf(st->bpf_why, sizeof(st->bpf_why), "%s", bwhy);
	}
	if (o->source != OFFCPU_REC_SWITCH) {
		char tpwhy[256];

		err = find_tracepoint(o, st, &oc->tp, tpwhy, sizeof(tpwhy));
		if (!err) {
			oc->tracepoint = 1;
			err = open_source(oc, o);
			if (err)
				snprintf(tpwhy, sizeof(tpwhy),
					 "cannot open sched:sched_switch: %s",
					 strerror(-err));
		}
		if (err && o->source == OFFCPU_REC_TRACEPOINT) {
			snprintf(why, whylen, "%s", tpwhy);
			goto fail;
		}
		if (err)
			snprintf(st->fallback_why, sizeof(st->fallback_why), "%s", tpwhy);
		if (err == -ESRCH)
			goto fail;
	}
	if (err) {
		oc->tracepoint = 0;
		st->tracefs[0] = '\0';
		err = open_source(oc, o);
		if (err) {
			snprintf(why, whylen, "cannot open the context-switch event: %s",
				 strerror(-err));
			goto fail;
		}
	}
	st->source = oc->tracepoint ? "tracepoint" : "context-switch";
	if (o->wakeups && wake_open(oc))
		wake_close(oc); /* said in st->wake_why: blocked and run-queue
				 * time cannot be split */
	else if (!o->wakeups)
		snprintf(st->wake_why, sizeof(st->wake_why), "off (--no-wakeups)");
	oc->watermark = 0;
	*out = oc;
	return 0;
fail:
	offcpu_rec__free(oc);
	return err;
}

/* The BPF stack copy follows what the unwinding reads: twice the most
 * read over the last COPY_WINDOW stacks (a power of 2, COPY_MIN at
 * least), and the whole --offcpu-stack again as soon as one stack was cut
 * by the copy's end. A frame-pointer build needs the few hundred bytes
 * from the syscall to its first frame, not the 8 KiB default; a copy
 * (~0.2 us a KiB in the kernel, here) saved at every switch. */
#define COPY_WINDOW 512
#define COPY_MIN    1024

static void bpf_copy_size(struct offcpu_rec *oc)
{
	struct ustack_stats *u = &oc->st->ustack;
	unsigned int want = COPY_MIN;

	if (!oc->stack_bytes)
		return;
	if (oc->copy_cut > oc->cut_seen) {
		want = oc->stack_bytes;
	} else if (u->stacks - oc->copy_from >= COPY_WINDOW) {
		while (want < 2 * u->used_recent && want < oc->stack_bytes)
			want *= 2;
	} else {
		return;
	}
	if (want > oc->stack_bytes)
		want = oc->stack_bytes;
	oc->cut_seen = oc->copy_cut;
	oc->copy_from = u->stacks;
	u->used_recent = 0;
	if (want != oc->copy) {
		oc->copy = want;
		sched_bpf__set_copy(oc->bpf, want);
	}
	if (want < oc->stack_bytes && (want < oc->st->copy_min || !oc->st->copy_min))
		oc->st->copy_min = want;
}

/* The BPF programs' own counts, into the stats. */
static void bpf_counts(struct offcpu_rec *oc)
{
	struct sched_bpf_counts c;

	sched_bpf__counts(oc->bpf, &c);
	oc->st->lost = c.lost;
	oc->st->cut_short = c.cut_short;
}

int offcpu_rec__drain(struct offcpu_rec *oc)
{
	uint64_t start = record_now_ns();

	if (oc->bpf) {
		int err = sched_bpf__drain(oc->bpf);

		bpf_counts(oc);
		bpf_copy_size(oc);
		return oc->err ? oc->err : err < 0 ? err : 0;
	}
	perf_set__drain(oc->ps, &oc->cb);
	wake_drain(oc);
	/* everything stamped before the previous drain began (less a margin
	 * for records being written as it read) has been read by now */
	if (oc->watermark) {
		settle_all(oc, oc->watermark);
		if (oc->wk.cpus && oc->watermark > TL_KEEP_NS)
			cputl__prune(oc->wk.cpus, oc->watermark - TL_KEEP_NS);
	}
	oc->watermark = start > SETTLE_NS ? start - SETTLE_NS : 1;
	return oc->err;
}

unsigned int offcpu_rec__pollfds(const struct offcpu_rec *oc, struct pollfd *pfd,
				 unsigned int max)
{
	unsigned int n;

	if (!oc)
		return 0;
	if (oc->bpf) {
		if (!max)
			return 0;
		pfd[0] = (struct pollfd){.fd = sched_bpf__fd(oc->bpf), .events = POLLIN};
		return 1;
	}
	n = perf_set__pollfds(oc->ps, pfd, max);
	n += perf_set__pollfds(oc->wk.wake_ps, pfd + n, max - n);
	return n + perf_set__pollfds(oc->wk.in_ps, pfd + n, max - n);
}

/* @fn on each event set of @oc (if any): switches, wakeups, switch-ins */
static void each_set(struct offcpu_rec *oc, void (*fn)(struct perf_set *ps))
{
	if (!oc)
		return;
	fn(oc->ps);
	fn(oc->wk.wake_ps);
	fn(oc->wk.in_ps);
}

void offcpu_rec__enable(struct offcpu_rec *oc)
{
	if (oc && oc->bpf)
		sched_bpf__enable(oc->bpf, 1);
	else
		each_set(oc, perf_set__enable);
}

void offcpu_rec__disable(struct offcpu_rec *oc)
{
	if (oc && oc->bpf)
		sched_bpf__enable(oc->bpf, 0);
	else
		each_set(oc, perf_set__disable);
}

int offcpu_rec__finish(struct offcpu_rec *oc)
{
	size_t i;

	if (oc->bpf) {
		while (sched_bpf__drain(oc->bpf) == 1) /* all of it, at the end */
			;
		/* with min_ns, the switch-outs still waiting in the kernel
		 * (failing, those intervals are not written: not worth the
		 * recording) */
		(void)sched_bpf__send_open(oc->bpf);
		bpf_counts(oc);
	} else {
		perf_set__drain(oc->ps, &oc->cb);
		wake_drain(oc);
		settle_all(oc, UINT64_MAX);
	}
	for (i = 0; i < oc->nts; i++)
		if (oc->ts[i].open) {
			write_interval(oc, &oc->ts[i], 0);
			oc->ts[i].open = 0;
		}
	return oc->err;
}

void offcpu_rec__free(struct offcpu_rec *oc)
{
	size_t i;

	if (!oc)
		return;
	sched_bpf__free(oc->bpf);
	perf_set__free(oc->ps);
	wake_close(oc);
	lib_map_release(&oc->wk.named);
	cputl__free(oc->wk.cpus);
	for (i = 0; i < oc->nts; i++)
		free(oc->ts[i].ev);
	free(oc->ts);
	lib_map_release(&oc->ts_of);
	free(oc);
}
