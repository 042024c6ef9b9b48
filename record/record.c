// SPDX-License-Identifier: MIT
/*
 * The recording loop: perf samples and shim events in, trace chunks out.
 *
 * Every tick (TICK_NS, shorter while a shim ring fills fast: next_tick())
 * the loop drains all perf rings and all shim rings, renews
 * the shim's lease and flushes the trace writer about once a second (so a
 * recorder killed mid-way leaves a readable file). Symbols are resolved
 * once per unique address at the end, while the target's files are still
 * known from its mappings.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/exitwatch.h"
#include "record/flight.h"
#include "record/livestate.h"
#include "record/offcpu.h"
#include "record/perf.h"
#include "record/ustack.h"
#include "record/pfm_event.h"
#include "record/command.h"
#include "record/proc.h"
#include "record/record.h"
#include "record/segment.h"
#include "record/symcache.h"
#include "record/tids.h"
#include "symbol/symbolize.h"
#include "trace/trace.h"

/* The drain period follows the shim's busiest ring (next_tick()): TICK_NS
 * while every ring is nearly empty when drained, down to TICK_MIN_NS while
 * one fills fast, e.g. a worker writing 2M records/s. */
#define TICK_NS		20000000ULL
#define TICK_MIN_NS	2000000ULL
#define EV_BATCH	256		/* events per call into the writer */
#define FLUSH_NS	1000000000ULL
#define SHIM_LOOK_NS	200000000ULL	/* how often to look for a late shim */
#define SHIM_EAGER_NS	2000000000ULL	/* ...except every tick at first: a
					 * command started by us creates its
					 * segment soon after exec */
#define SLOW_OPEN_NS	500000000ULL	/* opening events took long: say why */
#define MAPS_NS		1000000000ULL	/* how often to re-read maps */
#define MAX_CHAIN	512

struct ring_seen {
	uint64_t gen;
	uint64_t drops;
	/* its owner as of gen: the records' tid, and whether the kernel
	 * knows it as one of the target's threads (else its records are
	 * dropped) */
	uint32_t tid;
	int tid_ok;
	/* the poll last written from the ring header (drain_open_polls):
	 * its BEGIN, and its END if it had ended; its record then writes
	 * only what is left */
	uint64_t open_task, open_time;
	int open_ended;
};

/* The counts when the open segment began: each segment says its own part
 * of every loss (readers sum them, analysis/losses.c). */
struct seg_base {
	uint64_t samples, events, lost_samples, shim_drops, shim_garbage, no_ring;
	uint64_t state_refused;
	uint64_t child_samples, ctimer_drops, ctimer_refused;
	uint64_t oc_switches, oc_lost, oc_unpaired, oc_stacks, oc_complete, wake_lost;
	uint64_t leaf_stacks, leaf_recovered;
};

struct rec {
	const struct record_opts *o;
	struct record_stats *st;
	struct trace_writer *w;
	struct perf_set *ps;
	struct perf_callbacks cb;	/* perf_cb_tmpl with ctx = this */
	struct symbolizer *sym;
	struct offcpu_rec *oc;		/* off-CPU collector, NULL if off */
	struct offcpu_rec_stats ocst;
	struct ustack_stats leaf;	/* the CPU samples' user stacks */
	struct shim_seg *seg;
	struct tids *tids;		/* the target's threads, as the kernel says */
	int inner;			/* ... in a pid namespace of its own */
	int forged_said;		/* a ring of no thread of the target said */
	struct ring_seen *rings;	/* per shim ring slot */
	struct d9_event *evbuf;
	size_t evbuf_len;
	size_t fill_max;		/* most records one ring held at a drain
					 * since next_tick() last looked */
	uint64_t start_ns;
	int err;			/* first write error */
	int ctimer;			/* sampling with the shim's timers */
	struct ctimer_rec *ct;		/* ...once its segment is attached */
	int ct_said, perf_checked;
	int shim_warned;		/* "no shim" said once already */
	char refused_why[160];		/* the last refusal said, not said again */
	uint64_t rings_exhausted0;	/* the shim's count at the attach */
	int busy;			/* another recorder holds the shim */
	int sampler_err;		/* the sampler failed: stop, why in st */
	uint64_t cpu0;			/* target's CPU time at start, ns */
	/* segments (all modes write at least one) */
	struct flight *fl;		/* NULL: one trace into out_fd */
	struct livestate *ls;		/* what is open: each segment's STATE */
	struct symcache *sc;		/* symbols once per recording */
	struct exitwatch *ew;		/* how the target ends (segmented) */
	struct seg_base base;
	uint64_t seg_index, seg_start, seg_period, next_seal;
	char recording[64];
	/* flight triggers: a dump due at dump_at for dump_why; each trigger
	 * cools down on its own */
	uint64_t dump_at, cooldown_until[RECORD_MAX_TRIGGERS];
	char dump_why[256];
	int state_warned;
	/* record__run()'s loop: what it polls, when it ends, how */
	int pidfd, until_fd;		/* the target's, until_pid's; -1 */
	struct pollfd *pfd;
	unsigned int maxpfd;
	uint64_t end_ns, exit_ns;	/* -d's end; when the target exited */
	int until_ended;		/* until_pid ended the recording */
	int close_go;			/* perf_close_later()'s; -1 */
	size_t state_max;		/* livestate__set_max() */
};

static void ctimer_begin(struct rec *r);
static void bound_open(struct rec *r);

static void logf_(struct rec *r, enum record_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(struct rec *r, enum record_log_level lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!r->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o->log(r->o->ctx, lvl, msg);
}

static void note_err(struct rec *r, int err)
{
	if (err && !r->err)
		r->err = err;
}

/* ---- perf records ---------------------------------------------------- */

static void on_sample(void *ctx, const struct perf_sample *s)
{
	struct rec *r = ctx;
	uint64_t ips[MAX_CHAIN];
	struct trace_sample ts;
	unsigned int n;

	/* inherited events follow forked children too: their samples are
	 * not the target's */
	if (s->pid && s->pid != (uint32_t)r->o->pid && !r->o->children) {
		r->st->child_samples++;
		return;
	}
	n = ustack_chain(r->sym, s, ips, MAX_CHAIN, &r->leaf);
	memset(&ts, 0, sizeof(ts));
	ts.time = s->time;
	ts.tid = s->tid;
	ts.weight = 1;
	ts.sampler = TRACE_SAMPLER_PERF;
	note_err(r, trace_writer__stack(r->w, ips, n, &ts.stack));
	note_err(r, trace_writer__sample(r->w, &ts));
	r->st->samples++;
}

static void on_comm(void *ctx, uint32_t tid, const char *comm)
{
	struct rec *r = ctx;

	note_err(r, trace_writer__thread(r->w, tid, comm));
}

static void on_fork(void *ctx, uint32_t pid, uint32_t tid)
{
	struct rec *r = ctx;

	r->st->threads++;
	/* (a namespaced target's rings say its own ids, not these) */
	if (pid == (uint32_t)r->o->pid && r->tids && !r->inner)
		tids__add(r->tids, tid);
}

static void on_mmap(void *ctx, uint64_t start, uint64_t len, uint64_t pgoff,
		    uint64_t dev, uint64_t ino, uint32_t prot, const char *path)
{
	struct rec *r = ctx;

	if ((prot & 4 /* PROT_EXEC */) && path[0] == '/')
		symbolizer__add_mapping(r->sym, start, start + len, pgoff, dev, ino, path);
}

static void on_lost(void *ctx, uint64_t lost)
{
	struct rec *r = ctx;

	r->st->lost_samples += lost;
}

static const struct perf_callbacks perf_cb_tmpl = {
	.sample = on_sample,
	.comm = on_comm,
	.fork = on_fork,
	.mmap = on_mmap,
	.lost = on_lost,
};

/* ---- threads ----------------------------------------------------------- */

static void thread_name(struct rec *r, pid_t tid)
{
	char path[64], comm[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)r->o->pid, (int)tid);
	if (record_read_file(path, comm, sizeof(comm), 0))
		note_err(r, trace_writer__thread(r->w, (uint32_t)tid, comm));
}

static void thread_added(void *ctx, pid_t tid)
{
	struct rec *r = ctx;

	thread_name(r, tid);
	if (r->tids && !r->inner)
		tids__add(r->tids, (uint32_t)tid);
}

/* ---- the shim ---------------------------------------------------------- */

static void shim_names(struct rec *r)
{
	const struct d9_seg_layout *l = shim_seg__layout(r->seg);
	struct d9_name_slot *slots = d9_layout_names(shim_seg__base(r->seg), l);
	uint32_t i;

	for (i = 0; i < l->names_count; i++) {
		char name[sizeof(slots[i].name) + 1];
		uint64_t task;

		if (d9_name_slot_read(&slots[i], &task, name, sizeof(name)))
			continue;
		note_err(r, trace_writer__task(r->w, task, name));
	}
}

static void shim_try_attach(struct rec *r, int warn)
{
	const struct d9_seg_layout *l;
	char why[160], when[24];
	int err;

	if (r->o->no_shim)
		return;
	err = shim_seg__open(r->o->pid, &r->seg, why, sizeof(why));
	if (err) {
		if ((err == -EPERM || (err != -ENOENT && err != -ESRCH)) &&
		    strcmp(why, r->refused_why)) {
			snprintf(r->refused_why, sizeof(r->refused_why), "%s", why);
			logf_(r, RECORD_WARN, "refusing the d9prof segment of pid %d: %s",
			      (int)r->o->pid, why);
		}
		else if (warn && !r->shim_warned) {
			r->shim_warned = 1;
			logf_(r, RECORD_WARN,
			      "pid %d has no d9prof shim: samples will carry no task ids "
			      "(link libd9prof and call d9_init() in the target)",
			      (int)r->o->pid);
		}
		return;
	}
	{
		/* One recorder at a time: a second one would split the events
		 * and its detach would cut the first one off. The segment is
		 * claimed by a compare-and-swap of recorder_pid (0 or a dead
		 * recorder's) to ours, so two recorders started in the same
		 * instant cannot both attach; a live claimant, attached yet or
		 * not, holds it. */
		struct d9_seg_hdr *h = shim_seg__base(r->seg);
		uint32_t me = (uint32_t)getpid();
		uint32_t other = __atomic_load_n(&h->recorder_pid, __ATOMIC_ACQUIRE);

		if (other != me &&
		    ((other && !kill((pid_t)other, 0)) ||
		     !__atomic_compare_exchange_n(&h->recorder_pid, &other, me, 0,
						  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
			/* said once; looked at again later: it may leave */
			if (!r->busy)
				logf_(r, RECORD_WARN,
				      "another recorder (pid %u) is attached to the d9prof shim "
				      "of pid %d: no task ids until it leaves",
				      other, (int)r->o->pid);
			r->shim_warned = 1;
			r->busy = 1;
			shim_seg__close(r->seg);
			r->seg = NULL;
			return;
		}
	}
	l = shim_seg__layout(r->seg);
	r->rings_exhausted0 = __atomic_load_n(
	    &((struct d9_seg_hdr *)shim_seg__base(r->seg))->rings_exhausted, __ATOMIC_RELAXED);
	r->rings = calloc(l->nrings, sizeof(*r->rings));
	r->evbuf_len = l->ring_events;
	r->evbuf = malloc(r->evbuf_len * sizeof(*r->evbuf));
	if (!r->rings || !r->evbuf) {
		note_err(r, -ENOMEM);
		shim_seg__close(r->seg);
		r->seg = NULL;
		return;
	}
	shim_seg__attach(r->seg);
	/* Markers record from the attach's store of attached on: one that
	 * loaded 0 ran before it, so a poll whose end comes first on a thread
	 * began before this instant, taken after the store, and was running
	 * from here to its end. The analysis starts such a poll here, never
	 * earlier over what the thread ran before (command mode attaches the
	 * shim some 100 ms after sampling starts; the attach itself takes a
	 * few ms to calibrate the TSC before its store). */
	snprintf(when, sizeof(when), "%llu", (unsigned long long)record_now_ns());
	note_err(r, trace_writer__meta(r->w, TRACE_META_SHIM_ATTACHED, when));
	shim_names(r);
	r->st->shim = 1;
	logf_(r, RECORD_INFO, "attached to the d9prof shim of pid %d (%u thread slots)",
	      (int)r->o->pid, l->nrings);
	if (r->ctimer)
		ctimer_begin(r);
}

/* The shim recorded nothing from the lapsed lease's deadline (the renew
 * that returned -ETIMEDOUT) to @to: meta "shim_gap" = "FROM-TO" (ns, one
 * per gap), where the analysis ends the polls open at FROM and starts
 * afresh at TO. Returns its length. */
static uint64_t shim_gap(struct rec *r, uint64_t to)
{
	uint64_t from = shim_seg__lapsed_ns(r->seg);
	char buf[48];

	if (from > to)
		from = to;
	r->st->gap_ns += to - from;
	snprintf(buf, sizeof(buf), "%llu-%llu", (unsigned long long)from,
		 (unsigned long long)to);
	note_err(r, trace_writer__meta(r->w, TRACE_META_SHIM_GAP, buf));
	return to - from;
}

/* Threads of the target that found no ring slot while we were attached,
 * into st: their runtime events never came, whether they started before
 * the attach or after (each counts at its first marker; d9_segment.h).
 * The target writes the counter: a silly value is not one. */
static void count_no_ring(struct rec *r)
{
	struct d9_seg_hdr *h;
	uint64_t x;

	if (!r->seg)
		return;
	h = shim_seg__base(r->seg);
	x = __atomic_load_n(&h->rings_exhausted, __ATOMIC_RELAXED);
	if (x > r->rings_exhausted0 && x - r->rings_exhausted0 < (1ULL << 32) &&
	    x - r->rings_exhausted0 > r->st->no_ring_threads)
		r->st->no_ring_threads = x - r->rings_exhausted0;
}

/* The recorder stalled past the lease and the shim let go: what the rings
 * held is drained, attach again. The gap ends at a time read after the new
 * attach's store, as "shim_attached" is; "shim_reattached" = that time
 * stays for readers that know only that. */
static void shim_reattach(struct rec *r)
{
	uint64_t to, gap;
	char buf[24];

	shim_seg__attach(r->seg);
	to = record_now_ns();
	gap = shim_gap(r, to);
	r->st->reattaches++;
	if (r->ct)
		ctimer_rec__request(r->ct);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)to);
	note_err(r, trace_writer__meta(r->w, TRACE_META_SHIM_REATTACHED, buf));
	logf_(r, RECORD_WARN,
	      "the recorder stalled past its %d ms lease and the shim let go: attached "
	      "again; runtime events of the %.3f s gap are lost",
	      (int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
}

/* --max-size in flight mode bounds the segments held in memory, kept and
 * open together (flight__bytes()): the kept ones to 3/5 of it (flight
 * drops the oldest past that), the open one sealed past 1/5 (bound_open),
 * and a fifth left for what one ring's drain and a seal write past that
 * check. */
#define FLIGHT_KEPT(max)	((max) / 5 * 3)
#define FLIGHT_OPEN(max)	((max) / 5)

/* More drops than this between two drains cannot be real (a ring of
 * D9_SEG_RING_EVENTS drained every tick): the counter was scribbled. */
#define DROPS_MAX (1ULL << 32)

/* The shim's ring record type @d9 as the trace's event type (enum
 * trace_event_type), the one place the two vocabularies meet; 0 for what
 * the trace has no event for (a whole poll, a text continuation). */
static uint32_t trace_type(uint32_t d9)
{
	switch (d9) {
	case D9_EV_THREAD_START: return TRACE_EV_THREAD_START;
	case D9_EV_THREAD_STOP: return TRACE_EV_THREAD_STOP;
	case D9_EV_SPAWN: return TRACE_EV_SPAWN;
	case D9_EV_WAKE: return TRACE_EV_WAKE;
	case D9_EV_POLL_BEGIN: return TRACE_EV_POLL_BEGIN;
	case D9_EV_POLL_END: return TRACE_EV_POLL_END;
	case D9_EV_TASK_END: return TRACE_EV_TASK_END;
	case D9_EV_PARK: return TRACE_EV_PARK;
	case D9_EV_UNPARK: return TRACE_EV_UNPARK;
	default: return 0;
	}
}

/* Records of the shim's rings on their way into the trace: events, and
 * whole polls as one record (TRACE_REC_POLL, _WOKEN: time its end, len
 * its length), as the trace stores them; written when the batch is full,
 * times converted on the way in. */
struct ev_batch {
	struct trace_event v[EV_BATCH];
	uint64_t len[EV_BATCH];
	size_t n;
	struct shim_clock clock;
	uint64_t lo, hi;	/* the times a record may carry (batch_span) */
};

/* What the conversion of a segment time may be off by. */
#define TIME_SLACK_NS 10000000ULL

/* The times a record or sample drained now may carry, ns: from the
 * recording's start (the shim writes from the attach on, later) to now. */
static void span_now(const struct rec *r, uint64_t *lo, uint64_t *hi)
{
	*lo = r->start_ns > TIME_SLACK_NS ? r->start_ns - TIME_SLACK_NS : 0;
	*hi = record_now_ns() + TIME_SLACK_NS;
}

static void batch_span(const struct rec *r, struct ev_batch *b)
{
	span_now(r, &b->lo, &b->hi);
}

/* Is @t (the segment's unit) within the batch's span? */
static int in_span(const struct ev_batch *b, uint64_t t)
{
	uint64_t ns;

	return shim_clock__within(&b->clock, t, b->lo, b->hi, &ns);
}

/* Task ids are the runtime's, non-zero; ~0 is the name table's mark. */
static int task_real(uint64_t task)
{
	return task && task != UINT64_MAX;
}

/* Could the shim have written @ev (a known type)? Its times within the
 * recording so far (a whole poll's begin too), a task for a task's
 * record. The target writes the rings: what could not be real is
 * dropped and counted, never written, so that no view shows a poll of
 * billions of seconds. */
static int record_real(const struct ev_batch *b, const struct d9_event *ev)
{
	switch (ev->type) {
	case D9_EV_THREAD_START:
	case D9_EV_THREAD_STOP:
	case D9_EV_PARK:
	case D9_EV_UNPARK:
		break;
	default:
		if (!task_real(ev->task))
			return 0;
	}
	if (!in_span(b, ev->time))
		return 0;
	return (ev->type != D9_EV_POLL && ev->type != D9_EV_POLL_WOKEN) ||
	       (ev->time >= ev->arg && in_span(b, ev->time - ev->arg));
}

static void write_batch(struct rec *r, struct ev_batch *b)
{
	size_t i;

	if (!b->n)
		return;
	/* an open poll missed makes a later segment's STATE short of it */
	if (r->ls && (livestate__feed(r->ls, b->v, b->len, b->n) ||
		      livestate__refused(r->ls)) && !r->state_warned) {
		r->state_warned = 1;
		logf_(r, RECORD_WARN, "more open polls and tasks than the recorder keeps (%zu "
		      "threads and tasks at most), or out of memory: segments read alone may "
		      "miss a poll or a wake in progress at their start", r->state_max);
	}
	note_err(r, trace_writer__records(r->w, b->v, b->len, b->n));
	for (i = 0; i < b->n; i++)
		r->st->events += trace_rec_events(b->v[i].type);
	b->n = 0;
}

static inline void batch_add(struct rec *r, struct ev_batch *b, uint64_t time,
			     uint64_t task, uint32_t tid, uint32_t type)
{
	b->len[b->n] = 0;
	b->v[b->n++] = (struct trace_event){
	    .time = shim_clock__ns(&b->clock, time), .task = task, .tid = tid, .type = type};
	if (b->n == EV_BATCH)
		write_batch(r, b);
}

/* A whole poll, begun at @begin, ended at @end (the segment's unit). */
static inline void batch_poll(struct rec *r, struct ev_batch *b, uint64_t begin,
			      uint64_t end, uint64_t task, uint32_t tid, int woken)
{
	uint64_t t = shim_clock__ns(&b->clock, end), t0 = shim_clock__ns(&b->clock, begin);

	b->len[b->n] = t >= t0 ? t - t0 : 0;
	b->v[b->n++] = (struct trace_event){
	    .time = t, .task = task, .tid = tid,
	    .type = woken ? TRACE_REC_POLL_WOKEN : TRACE_REC_POLL};
	if (b->n == EV_BATCH)
		write_batch(r, b);
}

/* Is the poll of @task begun at @time (the segment's unit) the one
 * written from the ring header? Then 1 for its BEGIN only, 2 if its END
 * was written too; 0 otherwise. Forgets it. */
static int from_header(struct ring_seen *seen, uint64_t time, uint64_t task)
{
	if (seen->open_task != task || seen->open_time != time)
		return 0;
	seen->open_task = 0;
	return seen->open_ended ? 2 : 1;
}

static void drain_ring(struct rec *r, uint32_t idx, struct d9_ring_hdr *ring,
		       uint32_t ring_events)
{
	struct ring_seen *seen = &r->rings[idx];
	char name[sizeof(ring->name) + 1];
	struct ev_batch b;
	uint64_t gen, drops;
	uint32_t tid;
	size_t n, i;

	b.n = 0;
	shim_seg__clock(r->seg, &b.clock);
	d9_ring_owner(ring, &tid, &gen, name, sizeof(name));
	if (gen != seen->gen || !seen->tid) {
		seen->gen = gen;
		seen->drops = 0;
		seen->open_task = 0;
		/* the owner's tid as of this gen, checked once: the target
		 * may write another over it, or one that is no thread */
		seen->tid = tid;
		seen->tid_ok = !r->tids || tids__is_target(r->tids, tid);
		if (!seen->tid_ok && !r->forged_said) {
			r->forged_said = 1;
			logf_(r, RECORD_WARN, "ring slot %u of the d9prof shim names thread %u, "
			      "which pid %d does not have (or no longer, unseen by perf): its "
			      "records are dropped", idx, tid, (int)r->o->pid);
		}
		if (name[0] && seen->tid_ok)
			note_err(r, trace_writer__thread(r->w, tid, name));
	}
	tid = seen->tid;
	n = d9_ring_consume(ring, ring_events, r->evbuf, r->evbuf_len);
	if (n > r->fill_max)
		r->fill_max = n;
	if (!seen->tid_ok) {
		r->st->shim_garbage += n;
		return;
	}
	batch_span(r, &b);
	for (i = 0; i < n; i++) {
		const struct d9_event *ev = &r->evbuf[i];
		uint32_t k = 0;

		/* the target wrote this: a record that cannot be one is
		 * dropped and counted, never written */
		if (ev->type < D9_EV_THREAD_START || ev->type > D9_EV_POLL_WOKEN) {
			r->st->shim_garbage++;
			continue;
		}
		if (!record_real(&b, ev)) {
			/* with its text, if it has some */
			if (ev->type == D9_EV_SPAWN || ev->type == D9_EV_THREAD_START)
				i += ev->arg < n - i - 1 ? ev->arg : n - i - 1;
			r->st->shim_garbage++;
			continue;
		}
		switch (ev->type) {
		case D9_EV_POLL:
		case D9_EV_POLL_WOKEN: {
			/* one record for a whole poll: BEGIN, (WAKE,) END, but
			 * for what the ring header gave already */
			int done = from_header(seen, ev->time - ev->arg, ev->task);

			r->st->shim_records++;
			if (!done) {
				batch_poll(r, &b, ev->time - ev->arg, ev->time, ev->task, tid,
					   ev->type == D9_EV_POLL_WOKEN);
				continue;
			}
			if (ev->type == D9_EV_POLL_WOKEN)
				batch_add(r, &b, ev->time, ev->task, tid, TRACE_EV_WAKE);
			if (done < 2)
				batch_add(r, &b, ev->time, ev->task, tid, TRACE_EV_POLL_END);
			continue;
		}
		case D9_EV_POLL_BEGIN:
			if (!from_header(seen, ev->time, ev->task))
				batch_add(r, &b, ev->time, ev->task, tid, TRACE_EV_POLL_BEGIN);
			r->st->shim_records++;
			continue;
		case D9_EV_SPAWN:
		case D9_EV_THREAD_START: {
			char text[D9_NAME_MAX + 1];

			k = ev->arg;
			if (k > n - i - 1)
				k = (uint32_t)(n - i - 1);
			d9_event_text(ev + 1, k, text, sizeof(text));
			if (ev->type == D9_EV_SPAWN && text[0])
				note_err(r, trace_writer__task(r->w, ev->task, text));
			else if (ev->type == D9_EV_THREAD_START && text[0])
				note_err(r, trace_writer__thread(r->w, tid, text));
			break;
		}
		}
		batch_add(r, &b, ev->time, ev->task, tid, trace_type(ev->type));
		r->st->shim_records++;
		i += k;
	}
	write_batch(r, &b);
	drops = d9_ring_drops(ring);
	if (drops > seen->drops && drops - seen->drops > DROPS_MAX) {
		/* no ring drops billions between two drains: a scribbled
		 * counter, not drops */
		r->st->shim_garbage++;
		seen->drops = drops;
	} else if (drops > seen->drops) {
		r->st->shim_drops += drops - seen->drops;
		seen->drops = drops;
		r->fill_max = ring_events;	/* it overflowed: as full as can be */
	}
}

/* The polls not in the rings yet, from the ring headers: each thread's
 * poll in progress, or its last one, held until its next marker (the shim
 * writes a poll as one record, see d9_segment.h). Written now as BEGIN
 * (and END): where a segment ends, so that it has them and its successor's
 * STATE has the open ones, and at the end of the recording, so that a poll
 * stuck there shows. Each ring is drained first; its header is taken only
 * if no record came meanwhile, and only for a poll begun while recording. */
static void drain_open_polls(struct rec *r)
{
	const struct d9_seg_layout *l;
	struct ev_batch b;
	uint64_t attach;
	void *base;
	uint32_t i;

	if (!r->seg)
		return;
	base = shim_seg__base(r->seg);
	l = shim_seg__layout(r->seg);
	attach = __atomic_load_n(&((struct d9_seg_hdr *)base)->attach_count, __ATOMIC_ACQUIRE);
	b.n = 0;
	shim_seg__clock(r->seg, &b.clock);
	for (i = 0; i < l->nrings; i++) {
		struct d9_ring_hdr *ring = d9_layout_ring(base, l, i);
		struct ring_seen *seen = &r->rings[i];
		uint64_t task, begin, end, tail, gen;
		uint32_t tid;

		if (__atomic_load_n(&ring->state, __ATOMIC_ACQUIRE) != D9_RING_LIVE)
			continue;
		drain_ring(r, i, ring, l->ring_events);
		tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);
		if (!d9_ring_open_poll(ring, attach, &task, &begin, &end) ||
		    __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) != tail)
			continue;
		d9_ring_owner(ring, &tid, &gen, NULL, 0);
		if (gen != seen->gen || !seen->tid_ok)
			continue;
		tid = seen->tid;
		/* the target writes the header too: a poll that could be */
		batch_span(r, &b);
		if (!task_real(task) || !in_span(&b, begin) || (end && !in_span(&b, end))) {
			r->st->shim_garbage++;
			continue;
		}
		if (shim_clock__ns(&b.clock, begin) < r->start_ns)
			continue;
		if (seen->open_task == task && seen->open_time == begin) {
			/* written at an earlier look: its end, if it came */
			if (end && !seen->open_ended) {
				batch_add(r, &b, end, task, tid, TRACE_EV_POLL_END);
				seen->open_ended = 1;
			}
			continue;
		}
		batch_add(r, &b, begin, task, tid, TRACE_EV_POLL_BEGIN);
		if (end)
			batch_add(r, &b, end, task, tid, TRACE_EV_POLL_END);
		seen->open_task = task;
		seen->open_time = begin;
		seen->open_ended = end != 0;
	}
	write_batch(r, &b);
}

static void drain_shim(struct rec *r)
{
	const struct d9_seg_layout *l;
	void *base;
	uint32_t i;

	if (!r->seg)
		return;
	/* samples first: a ring is reaped only once its samples are out too */
	if (r->ct) {
		struct ctimer_counts n = {0};
		uint64_t lo, hi;

		span_now(r, &lo, &hi);
		note_err(r, ctimer_rec__drain(r->ct, r->w, lo, hi, &n));
		r->st->samples += n.samples;
		r->st->ctimer_drops += n.drops;
		r->st->ctimer_garbage += n.garbage;
		r->st->ctimer_refused += n.refused;
	}
	base = shim_seg__base(r->seg);
	l = shim_seg__layout(r->seg);
	for (i = 0; i < l->nrings; i++) {
		struct d9_ring_hdr *ring = d9_layout_ring(base, l, i);
		uint32_t state = __atomic_load_n(&ring->state, __ATOMIC_ACQUIRE);

		if (state == D9_RING_FREE)
			continue;
		drain_ring(r, i, ring, l->ring_events);
		if (state == D9_RING_DEAD)
			d9_ring_reap(ring);
		bound_open(r);
	}
}

/* ---- meta -------------------------------------------------------------- */

static void write_meta(struct rec *r)
{
	struct utsname u;
	char path[64], buf[1024];

	snprintf(buf, sizeof(buf), "%d", (int)r->o->pid);
	note_err(r, trace_writer__meta(r->w, TRACE_META_PID, buf));
	if (r->o->cmdline) {
		note_err(r, trace_writer__meta(r->w, TRACE_META_CMDLINE, r->o->cmdline));
	} else {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)r->o->pid);
		record_read_file(path, buf, sizeof(buf), 1);
		note_err(r, trace_writer__meta(r->w, TRACE_META_CMDLINE, buf));
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)r->o->pid);
	record_read_file(path, buf, sizeof(buf), 0);
	note_err(r, trace_writer__meta(r->w, TRACE_META_COMM, buf));
	if (uname(&u) == 0) {
		note_err(r, trace_writer__meta(r->w, TRACE_META_HOSTNAME, u.nodename));
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		note_err(r, trace_writer__meta(r->w, TRACE_META_KERNEL, buf));
	}
	note_err(r, trace_writer__meta(r->w, TRACE_META_EVENT, r->st->event_name));
	note_err(r, trace_writer__meta(r->w, TRACE_META_SAMPLER, r->st->sampler));
	if (r->ps && r->st->callgraph[0]) {
		snprintf(buf, sizeof(buf), "%s,%u", r->st->callgraph, r->st->cpu_stack);
		note_err(r, trace_writer__meta(r->w, TRACE_META_CALL_GRAPH, buf));
	}
	snprintf(buf, sizeof(buf), "%u", r->o->freq);
	note_err(r, trace_writer__meta(r->w, TRACE_META_FREQUENCY, buf));
	note_err(r, trace_writer__meta(r->w, TRACE_META_CLOCK, "CLOCK_MONOTONIC"));
	note_err(r, trace_writer__meta(r->w, TRACE_META_OFFCPU, r->st->offcpu));
	if (r->st->wakeups[0])
		note_err(r, trace_writer__meta(r->w, TRACE_META_WAKEUPS, r->st->wakeups));
	if (r->st->holders[0])
		note_err(r, trace_writer__meta(r->w, TRACE_META_RUNQ_HOLDERS, r->st->holders));
	note_err(r, trace_writer__meta(r->w, TRACE_META_RECORDER, "d9prof " D9_VERSION));
}

static void write_build_ids(struct rec *r)
{
	size_t i, n = symbolizer__nmodules(r->sym);

	for (i = 0; i < n; i++) {
		const char *path, *id;
		char key[512];

		if (symbolizer__module(r->sym, i, &path, &id) || !id[0])
			continue;
		snprintf(key, sizeof(key), "buildid %s", path);
		note_err(r, trace_writer__meta(r->w, key, id));
	}
}

/* ---- opening the sampler ----------------------------------------------- */

static int is_no_pmu(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ||
	       err == -EINVAL;
}

static int paranoid_level(void)
{
	char buf[16];

	record_read_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf), 0);
	return buf[0] ? atoi(buf) : -1;
}

/* How many bytes of user stack each CPU sample copies: --call-graph, and
 * for auto what the target's own modules say (record/callgraph.c), into
 * the stats and said once. */
static unsigned int cpu_stack_bytes(struct rec *r)
{
	const struct record_opts *o = r->o;
	struct record_stats *st = r->st;
	struct record_callgraph c;

	st->callgraph_auto = 0;
	if (o->cpu_fp_only) {
		snprintf(st->callgraph, sizeof(st->callgraph), "fp-only");
		st->cpu_stack = 0;
	} else if (o->callgraph == RECORD_CALLGRAPH_DWARF) {
		snprintf(st->callgraph, sizeof(st->callgraph), "dwarf");
		st->cpu_stack = o->cpu_stack ? o->cpu_stack : RECORD_DWARF_STACK;
	} else if (o->callgraph == RECORD_CALLGRAPH_FP ||
		   record_callgraph_choose(o->pid, o->fresh_target ? o->exe : NULL, &c)) {
		snprintf(st->callgraph, sizeof(st->callgraph), "fp");
		st->cpu_stack = RECORD_LEAF_STACK;
	} else {
		st->callgraph_auto = 1;
		snprintf(st->callgraph, sizeof(st->callgraph), "%s",
			 c.mode == RECORD_CALLGRAPH_DWARF ? "dwarf" : "fp");
		st->cpu_stack = c.bytes;
		snprintf(st->fp_missing, sizeof(st->fp_missing), "%s", c.without);
		snprintf(st->fp_unknown, sizeof(st->fp_unknown), "%s", c.unknown);
	}
	return st->cpu_stack;
}

/* Open the sampling events on every thread: the requested event, or
 * "cycles" falling back to "cpu-clock" without a PMU; kernel callchains
 * unless refused. */
static int open_sampler(struct rec *r)
{
	const char *name = r->o->event ? r->o->event : "cycles";
	unsigned int stack = cpu_stack_bytes(r);
	struct event_spec ev;
	int err, exclude_kernel = 0;

	err = pfm_event_encode(name, &ev);
	if (err) {
		snprintf(r->st->why, sizeof(r->st->why),
			 "unknown event '%s' (see 'perf list' for names)", name);
		/* a name the user typed wrong is an error, never a reason to
		 * fall back to another sampler */
		return r->o->event ? -EINVAL : err;
	}
	for (;;) {
		r->ps = perf_set__new(&ev, r->o->freq, exclude_kernel, stack);
		if (!r->ps)
			return -ENOMEM;
		err = perf_set__add_process(r->ps, r->o->pid, thread_added, r);
		if (err > 0)
			break;
		perf_set__free(r->ps);
		r->ps = NULL;
		if (err == 0)
			err = -ESRCH;
		if (!r->o->event && is_no_pmu(err) && strcmp(name, "cpu-clock")) {
			logf_(r, RECORD_INFO,
			      "no hardware PMU here ('%s': %s): sampling cpu-clock", name,
			      strerror(-err));
			name = "cpu-clock";
			if (pfm_event_encode(name, &ev))
				return -ENOENT;
			continue;
		}
		if ((err == -EACCES || err == -EPERM) && !exclude_kernel) {
			exclude_kernel = 1;
			continue;
		}
		break;
	}
	if (err < 0) {
		if (err == -EACCES || err == -EPERM)
			snprintf(r->st->why, sizeof(r->st->why),
				 "perf_event_open refused (%s; kernel.perf_event_paranoid=%d): "
				 "run as root or the target's owner with "
				 "'sysctl kernel.perf_event_paranoid=1'",
				 strerror(-err), paranoid_level());
		else if (err == -ESRCH)
			snprintf(r->st->why, sizeof(r->st->why), "no such process");
		else
			snprintf(r->st->why, sizeof(r->st->why),
				 "cannot sample '%s': %s", name, strerror(-err));
		return err;
	}
	if (exclude_kernel)
		logf_(r, RECORD_WARN,
		      "kernel stacks unavailable (kernel.perf_event_paranoid=%d): "
		      "user stacks only; set it to 1 or run as root for kernel frames",
		      paranoid_level());
	snprintf(r->st->event_name, sizeof(r->st->event_name), "%s", name);
	r->st->threads = (uint64_t)err;
	return 0;
}

/* ---- the sampler: perf_event, or the shim's ctimer (record/ctimer_rec.c) -- */

static void ctimer_begin(struct rec *r)
{
	if (!r->ct)
		note_err(r, ctimer_rec__new(r->seg, r->o->pid, r->o->freq,
					    r->o->cpu_fp_only ? NULL : r->sym, &r->leaf, r->tids,
					    &r->ct));
}

static void use_ctimer(struct rec *r, const char *why)
{
	r->ctimer = 1;
	snprintf(r->st->sampler, sizeof(r->st->sampler), "ctimer");
	snprintf(r->st->event_name, sizeof(r->st->event_name), "thread-cpu-clock");
	logf_(r, RECORD_INFO, "sampler: ctimer, the shim's per-thread CPU timers (%s)", why);
	logf_(r, RECORD_INFO, "ctimer samples user stacks only: no kernel frames");
	if (r->seg)
		ctimer_begin(r);
}

/* --sampler: perf, ctimer, or perf falling back to ctimer (auto) */
static int choose_sampler(struct rec *r)
{
	char why[320];
	int err;

	if (r->o->sampler == RECORD_SAMPLER_CTIMER) {
		use_ctimer(r, "--sampler ctimer");
		return 0;
	}
	err = open_sampler(r);
	if (!err) {
		snprintf(r->st->sampler, sizeof(r->st->sampler), "perf");
		logf_(r, RECORD_INFO, "sampler: perf_event%s",
		      r->o->sampler == RECORD_SAMPLER_AUTO ? " (available)" : "");
		return 0;
	}
	if (r->o->sampler == RECORD_SAMPLER_PERF ||
	    (err != -EACCES && err != -EPERM && err != -ENOSYS && err != -EOPNOTSUPP &&
	     err != -ENOENT))
		return err;
	snprintf(why, sizeof(why),
		 "perf_event_open failed: %s; kernel.perf_event_paranoid=%d, "
		 "'sysctl kernel.perf_event_paranoid=1' lets the target's owner use perf, "
		 "unless a seccomp filter (e.g. a container's) refuses it",
		 strerror(-err), paranoid_level());
	r->st->why[0] = '\0';
	use_ctimer(r, why);
	return 0;
}

/* Every tick: the shim's answer to the ctimer request; a shim that never
 * shows up; in auto mode, perf_event that opened but delivers nothing. */
static int sampler_tick(struct rec *r, uint64_t now)
{
	char why[320];
	unsigned int threads;
	uint64_t cpu;
	int err;

	if (r->ct) {
		err = ctimer_rec__status(r->ct, &threads, why, sizeof(why));
		if (err) {
			snprintf(r->st->why, sizeof(r->st->why), "ctimer sampler: %.200s", why);
			return err;
		}
		if (threads && !r->ct_said) {
			r->ct_said = 1;
			logf_(r, RECORD_INFO, "ctimer: the shim samples on signal %d",
			      ctimer_rec__signal(r->ct));
		}
		return 0;
	}
	if (r->ctimer) {
		if (now - r->start_ns < SHIM_EAGER_NS)
			return 0;
		snprintf(r->st->why, sizeof(r->st->why),
			 "pid %d has no d9prof shim: the ctimer sampler samples from inside "
			 "the target; link libd9prof into it, or use perf_event",
			 (int)r->o->pid);
		return -ENOENT;
	}
	if (r->o->sampler != RECORD_SAMPLER_AUTO || r->perf_checked ||
	    now - r->start_ns < 1000000000ULL)
		return 0;
	r->perf_checked = 1;
	cpu = proc_cpu_ns(r->o->pid) - r->cpu0;
	if (r->st->samples || cpu < 50000000ULL)
		return 0;
	snprintf(why, sizeof(why),
		 "perf_event delivered no sample in 1 s while pid %d used %.0f ms of CPU",
		 (int)r->o->pid, (double)cpu / 1e6);
	if (!r->seg) {
		logf_(r, RECORD_WARN, "%s, and it has no d9prof shim for the ctimer sampler",
		      why);
		return 0;
	}
	perf_set__free(r->ps);
	r->ps = NULL;
	use_ctimer(r, why);
	note_err(r, trace_writer__meta(r->w, TRACE_META_SAMPLER, r->st->sampler));
	note_err(r, trace_writer__meta(r->w, TRACE_META_EVENT, r->st->event_name));
	return 0;
}

/* ---- off-CPU ------------------------------------------------------------ */

/* Open the off-CPU collector unless it is off. Refused is a warning (CPU
 * samples go on); so is a tracepoint failure in auto mode (the software
 * event takes over). Only a forced source that cannot work is an error. */
static int open_offcpu(struct rec *r)
{
	struct offcpu_rec_opts oo = {
	    .source = r->o->offcpu == RECORD_OFFCPU_TRACEPOINT ? OFFCPU_REC_TRACEPOINT
		      : r->o->offcpu == RECORD_OFFCPU_SWITCH   ? OFFCPU_REC_SWITCH
							       : OFFCPU_REC_AUTO,
	    .stack_bytes = r->o->offcpu_fp_only ? 0
			   : r->o->offcpu_stack ? r->o->offcpu_stack
						: OFFCPU_STACK_DEFAULT,
	    .may_mount = 1,
	    .wakeups = !r->o->no_wakeups,
	    .children = r->o->children,
	};
	char why[256];
	int err;

	if (r->o->offcpu == RECORD_OFFCPU_OFF) {
		snprintf(r->st->offcpu, sizeof(r->st->offcpu), "off");
		return 0;
	}
	err = offcpu_rec__open(r->o->pid, &oo, r->sym, r->w, &r->ocst, &r->oc, why,
			   sizeof(why));
	if (r->ocst.mounted_tracefs)
		logf_(r, RECORD_INFO, "mounted tracefs at %s for sched:sched_switch",
		      r->ocst.tracefs);
	if (err == -EACCES || err == -EPERM) {
		snprintf(r->st->offcpu, sizeof(r->st->offcpu), "refused");
		logf_(r, RECORD_WARN,
		      "off-CPU collection refused (kernel.perf_event_paranoid=%d): "
		      "recording CPU samples only; set it to -1 (sched_switch "
		      "tracepoint) or 1 (context-switch event), or run as root",
		      paranoid_level());
		return 0;
	}
	if (err == -ESRCH) {
		snprintf(r->st->why, sizeof(r->st->why), "no such process");
		return err;
	}
	if (err) {
		snprintf(r->st->why, sizeof(r->st->why), "off-CPU: %.200s", why);
		return err;
	}
	snprintf(r->st->offcpu, sizeof(r->st->offcpu), "%s", r->ocst.source);
	if (r->ocst.wake_why[0] && r->o->no_wakeups) {
		snprintf(r->st->wakeups, sizeof(r->st->wakeups), "off: --no-wakeups");
	} else if (r->ocst.wake_why[0]) {
		snprintf(r->st->wakeups, sizeof(r->st->wakeups), "refused: %s",
			 r->ocst.wake_why);
		logf_(r, RECORD_WARN,
		      "wakeups not recorded, so off-CPU time cannot be split into "
		      "blocked and run-queue time: %s",
		      r->ocst.wake_why);
	} else {
		snprintf(r->st->wakeups, sizeof(r->st->wakeups), "%s", r->ocst.wake_source);
	}
	if (r->ocst.holders[0])
		snprintf(r->st->holders, sizeof(r->st->holders), "%s", r->ocst.holders);
	else if (r->ocst.holders_why[0])
		snprintf(r->st->holders, sizeof(r->st->holders), "refused: %s",
			 r->ocst.holders_why);
	if (r->ocst.fallback_why[0])
		logf_(r, RECORD_INFO, "off-CPU from the context-switch event: %s",
		      r->ocst.fallback_why);
	else if (r->ocst.tracefs[0])
		logf_(r, RECORD_INFO, "off-CPU from sched:sched_switch (tracefs at %s)",
		      r->ocst.tracefs);
	else
		logf_(r, RECORD_INFO, "off-CPU from the context-switch event");
	return 0;
}

/* A loss or exclusion counted in the trace (analysis/losses.c reads it);
 * no key when there was none. */
static void meta_count(struct rec *r, const char *key, uint64_t n)
{
	char buf[32];

	if (!n)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n);
	note_err(r, trace_writer__meta(r->w, key, buf));
}

/* The recording's totals of what the collectors counted. */
static void totals(struct rec *r)
{
	const struct offcpu_rec_stats *c = &r->ocst;
	const struct ustack_stats *u = &r->leaf;

	r->st->switches = c->switches;
	r->st->switches_blocked = c->blocked;
	r->st->offcpu_lost = c->lost;
	r->st->offcpu_unpaired = c->unpaired;
	r->st->offcpu_stacks = c->ustack.stacks;
	r->st->offcpu_complete = c->ustack.complete;
	r->st->offcpu_stack_used = c->ustack.stack_used_max;
	r->st->offcpu_unwind_s = (double)c->ustack.unwind_ns / 1e9;
	r->st->runnable = c->runnable;
	r->st->runq_ns = c->runq_ns;
	r->st->held_ns = c->held_ns;
	r->st->wake_lost = c->wake_lost;
	r->st->cpu_stacks = u->stacks;
	r->st->cpu_recovered = u->recovered;
	r->st->cpu_unwind_s = (double)u->unwind_ns / 1e9;
}

static void seg_snapshot(struct rec *r, struct seg_base *b)
{
	const struct record_stats *st = r->st;

	*b = (struct seg_base){
	    .samples = st->samples,
	    .events = st->events,
	    .lost_samples = st->lost_samples,
	    .shim_drops = st->shim_drops,
	    .shim_garbage = st->shim_garbage,
	    .no_ring = st->no_ring_threads,
	    .state_refused = r->ls ? livestate__refused(r->ls) : 0,
	    .child_samples = st->child_samples,
	    .ctimer_drops = st->ctimer_drops,
	    .ctimer_refused = st->ctimer_garbage + st->ctimer_refused,
	    .oc_switches = r->ocst.switches,
	    .oc_lost = r->ocst.lost,
	    .oc_unpaired = r->ocst.unpaired,
	    .oc_stacks = r->ocst.ustack.stacks,
	    .oc_complete = r->ocst.ustack.complete,
	    .wake_lost = r->ocst.wake_lost,
	    .leaf_stacks = r->leaf.stacks,
	    .leaf_recovered = r->leaf.recovered,
	};
}

/* The open segment's part of every count, as meta (one segment: all). */
static void seal_meta(struct rec *r)
{
	struct seg_base now, *b = &r->base;
	char buf[64];

	count_no_ring(r);
	seg_snapshot(r, &now);
	meta_count(r, TRACE_META_SHIM_GARBAGE, now.shim_garbage - b->shim_garbage);
	meta_count(r, TRACE_META_THREADS_WITHOUT_A_RING, now.no_ring - b->no_ring);
	meta_count(r, TRACE_META_OPEN_STATE_REFUSED, now.state_refused - b->state_refused);
	meta_count(r, TRACE_META_CHILD_SAMPLES_LEFT_OUT, now.child_samples - b->child_samples);
	meta_count(r, TRACE_META_CTIMER_SAMPLES_DROPPED, now.ctimer_drops - b->ctimer_drops);
	meta_count(r, TRACE_META_CTIMER_SAMPLES_REFUSED, now.ctimer_refused - b->ctimer_refused);
	if (r->oc) {
		meta_count(r, TRACE_META_WAKEUPS_LOST, now.wake_lost - b->wake_lost);
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)(now.oc_switches - b->oc_switches));
		note_err(r, trace_writer__meta(r->w, TRACE_META_OFFCPU_SWITCHES, buf));
		snprintf(buf, sizeof(buf), "%llu/%llu",
			 (unsigned long long)(now.oc_complete - b->oc_complete),
			 (unsigned long long)(now.oc_stacks - b->oc_stacks));
		note_err(r, trace_writer__meta(r->w, TRACE_META_OFFCPU_STACKS_COMPLETE, buf));
		meta_count(r, TRACE_META_OFFCPU_LOST, now.oc_lost - b->oc_lost);
		meta_count(r, TRACE_META_OFFCPU_UNPAIRED, now.oc_unpaired - b->oc_unpaired);
	}
	if (now.leaf_stacks > b->leaf_stacks) {
		snprintf(buf, sizeof(buf), "%llu/%llu",
			 (unsigned long long)(now.leaf_recovered - b->leaf_recovered),
			 (unsigned long long)(now.leaf_stacks - b->leaf_stacks));
		note_err(r, trace_writer__meta(r->w, TRACE_META_CPU_CALLERS_RECOVERED_BY_CFI, buf));
	}
}

/* Modules whose files could not be read name their frames by file offset:
 * say why, once each (a binary replaced or deleted under the target). */
static void unreadable_modules(struct rec *r)
{
	size_t i, n = symbolizer__nmodules(r->sym);

	for (i = 0; i < n; i++) {
		const char *why = symbolizer__module_unreadable(r->sym, i), *path;

		if (!why || symbolizer__module(r->sym, i, &path, NULL))
			continue;
		logf_(r, RECORD_WARN, "%s: %s; its frames are named by file offset", path, why);
	}
}

/* ---- the target's end ---------------------------------------------------- */

/* How the target ended, into st->exit_how and the trace (meta target_exit,
 * and target_exit_time: its death as the kernel traced it, else when the
 * recorder saw it gone, @seen). A command of ours tells waitid without
 * being reaped; else the exit watch (record/exitwatch.h) of the segmented
 * modes answers. */
static void target_end(struct rec *r, uint64_t seen)
{
	char *how = r->st->exit_how, buf[64];
	size_t len = sizeof(r->st->exit_how);
	struct exitwatch_result res;

	memset(&res, 0, sizeof(res));
	if (r->ew && exitwatch__result(r->ew, &res))
		res.how = EXITWATCH_UNKNOWN;
	if (res.how == EXITWATCH_UNKNOWN && r->o->fresh_target) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (!waitid(P_PID, (id_t)r->o->pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid == r->o->pid) {
			res.how = si.si_code == CLD_EXITED ? EXITWATCH_EXITED : EXITWATCH_SIGNALED;
			res.status = si.si_status;
			res.core = si.si_code == CLD_DUMPED;
		}
	}
	if (res.how == EXITWATCH_EXITED)
		snprintf(how, len, "exited with status %d", res.status);
	else if (res.how == EXITWATCH_SIGNALED)
		snprintf(how, len, "killed by %s", exitwatch_describe(&res, buf, sizeof(buf)));
	else if (r->ew || r->o->fresh_target)
		snprintf(how, len, "exited (how is not known: its parent reaped it first, "
			 "and no tracepoint saw it)");
	else
		return; /* not watched: say nothing */
	note_err(r, trace_writer__meta(r->w, TRACE_META_TARGET_EXIT, how));
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(res.time ? res.time : seen));
	note_err(r, trace_writer__meta(r->w, TRACE_META_TARGET_EXIT_TIME, buf));
}

/* ---- segments ------------------------------------------------------------ */

/* Every thread of the target by name, from /proc (a new segment names
 * its own threads; perf's COMM records came in earlier ones). */
static void name_threads(struct rec *r)
{
	proc_for_each_tid(r->o->pid, thread_added, r);
}

/* The first chunk of a segment: which recording, which segment, from
 * when (trace.h), and the clocks' offset for wall-clock times. */
static void seg_head(struct rec *r, uint64_t now)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->seg_index);
	note_err(r, trace_writer__meta(r->w, TRACE_META_RECORDING, r->recording));
	note_err(r, trace_writer__meta(r->w, TRACE_META_SEGMENT, buf));
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)now);
	note_err(r, trace_writer__meta(r->w, TRACE_META_SEGMENT_START, buf));
	snprintf(buf, sizeof(buf), "%lld", (long long)record_realtime_offset_ns());
	note_err(r, trace_writer__meta(r->w, TRACE_META_CLOCK_REALTIME, buf));
	note_err(r, trace_writer__flush(r->w));
	r->seg_start = now;
	seg_snapshot(r, &r->base);
}

/* A writer for segment r->seg_index: into out_fd for one trace, else into
 * what flight gives. */
static int seg_writer(struct rec *r, uint64_t now, struct trace_writer **w)
{
	int fd = r->o->out_fd, err;

	if (r->fl) {
		err = flight__open(r->fl, r->seg_index, now, time(NULL), &fd);
		if (err)
			return err;
	}
	*w = trace_writer__new(fd);
	return *w ? 0 : -errno;
}

static int seg_first(struct rec *r)
{
	const struct record_opts *o = r->o;
	uint64_t now = record_now_ns();
	unsigned char rnd[6] = {0};
	int err;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) < 0)
		memset(rnd, 0, sizeof(rnd));
	snprintf(r->recording, sizeof(r->recording), "%02x%02x%02x%02x%02x%02x-%d-%llu", rnd[0],
		 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], (int)getpid(), (unsigned long long)now);
	if (o->segments != RECORD_ONE_TRACE) {
		char comm[64], path[64], why[256];
		struct flight_opts fo = {
		    .mode = o->segments == RECORD_FLIGHT ? FLIGHT_MEMORY : FLIGHT_ROTATE,
		    .dir = o->dir,
		    .pid = o->pid,
		    .window_ns = (uint64_t)(o->window * 1e9),
		    .max_bytes = FLIGHT_KEPT(o->max_size),
		    .max_total = o->max_total,
		    .key_prefix = o->key_prefix,
		    .service = comm,
		    .on_segment = o->on_segment,
		    .max_hooks = RECORD_MAX_HOOKS,
		    .hook_timeout_ns = (uint64_t)(o->hook_timeout * 1e9),
		    .owner = (uid_t)-1,
		};
		struct stat sb;

		snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
		if (!stat(path, &sb))
			fo.owner = sb.st_uid;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pid);
		record_read_file(path, comm, sizeof(comm), 0);
		err = flight__new(&fo, &r->fl, why, sizeof(why));
		if (err) {
			snprintf(r->st->why, sizeof(r->st->why), "cannot use '%.80s': %.160s", o->dir,
				 why[0] ? why : strerror(-err));
			return err;
		}
		if ((err = livestate__new(&r->ls)) ||
		    (err = symcache__new(symbolizer__resolve, r->sym, &r->sc)))
			return err;
		/* a flight recorder's last dump says how its target ended */
		err = exitwatch__open(o->pid, EXITWATCH_MAY_MOUNT, &r->ew, why, sizeof(why));
		if (err)
			return err;
		if (!exitwatch__traced(r->ew))
			logf_(r, RECORD_INFO, "how the target ends: from /proc and its pidfd "
			      "only (%s)", why);
		/* a flight window is kept in about five segments: a dump
		 * holds between one window and a fifth more */
		r->seg_period = o->segments == RECORD_FLIGHT ? (uint64_t)(o->window * 1e9 / 5)
							     : (uint64_t)(o->rotate * 1e9);
		if (r->seg_period < 100000000ULL)
			r->seg_period = 100000000ULL;
		r->next_seal = now + r->seg_period;
	}
	err = seg_writer(r, now, &r->w);
	if (err) {
		snprintf(r->st->why, sizeof(r->st->why), "cannot start the trace: %s",
			 strerror(-err));
		return err;
	}
	seg_head(r, now);
	return 0;
}

/* Close the open segment at @now: its part of the counts, its symbols,
 * its END; then keep it (flight) or seal its file (rotate). */
static void seg_seal(struct rec *r, uint64_t now)
{
	struct trace_counters c;
	struct seg_base b;
	struct flight_sealed sealed;
	int err;

	drain_open_polls(r);
	seg_snapshot(r, &b);
	seal_meta(r);
	write_build_ids(r);
	memset(&c, 0, sizeof(c));
	c.samples = b.samples - r->base.samples;
	c.events = b.events - r->base.events;
	c.lost_samples = b.lost_samples - r->base.lost_samples;
	c.shim_drops = b.shim_drops - r->base.shim_drops;
	c.start_time = r->seg_start;
	c.end_time = now;
	if (!r->err)
		r->err = trace_writer__finish(r->w, r->sc ? symcache__resolve : symbolizer__resolve,
					      r->sc ? (void *)r->sc : (void *)r->sym, &c);
	if (!r->sc)
		r->st->frames = trace_writer__nframes(r->w);
	r->st->segments++;
	if (!r->fl || r->err)
		return;
	err = flight__seal(r->fl, now, &sealed);
	if (err) {
		logf_(r, RECORD_WARN, "segment %llu lost: %s", (unsigned long long)r->seg_index,
		      strerror(-err));
		return;
	}
	r->st->segments_dropped += sealed.dropped;
	if (sealed.path[0])
		logf_(r, RECORD_INFO, "segment %s (%.1f MiB)", sealed.path,
		      (double)sealed.bytes / (1 << 20));
}

/* The next segment, from @now: its own head, names and what is open. */
static void seg_next(struct rec *r, uint64_t now)
{
	struct trace_writer *old = r->w, *w;
	const struct trace_event *open;
	size_t n;
	int err;

	r->seg_index++;
	/* tasks quiet for a second: a late event of theirs is long drained */
	livestate__purge(r->ls, now > 1000000000ULL ? now - 1000000000ULL : 0);
	err = seg_writer(r, now, &w);
	if (err) {
		note_err(r, err);
		return;
	}
	r->w = w;
	seg_head(r, now);
	write_meta(r);
	if (r->seg)
		shim_names(r);
	name_threads(r);
	n = livestate__open(r->ls, &open);
	note_err(r, trace_writer__state(r->w, open, n));
	/* switch-outs waiting for their switch-in move over with their
	 * stacks (the old writer still knows them) */
	if (r->oc) {
		note_err(r, offcpu_rec__set_writer(r->oc, r->w));
		offcpu_rec__prune(r->oc);
	}
	if (r->ct)
		ctimer_rec__forget_names(r->ct);
	trace_writer__free(old);
	r->next_seal = now + r->seg_period;
}

/* Seal the open segment, and go on in the next one. */
static void seg_roll(struct rec *r, uint64_t now)
{
	seg_seal(r, now);
	seg_next(r, now);
}

/* A flight recorder's memory: the livestate as large as its segments
 * allow (each segment's STATE carries what is open, 48 bytes an entry
 * before compression, in under a tenth of the open segment's share). */
static void bound_memory(struct rec *r)
{
	const struct record_opts *o = r->o;

	r->state_max = LIVESTATE_MAX;
	if (!r->ls)
		return;
	if (o->segments == RECORD_FLIGHT && o->max_size) {
		uint64_t n = FLIGHT_OPEN(o->max_size) / 10 / 48;

		r->state_max = n < 1024 ? 1024 : n > LIVESTATE_MAX ? LIVESTATE_MAX : (size_t)n;
	}
	livestate__set_max(r->ls, r->state_max);
}

/* After a ring is drained: a flight recorder's open segment past its
 * share of --max-size is sealed now, not at the tick's end (a drain adds
 * at most a ring's records, a chunk or two written to the segment). */
static void bound_open(struct rec *r)
{
	uint64_t open, held;

	if (!r->fl || r->o->segments != RECORD_FLIGHT || !r->o->max_size)
		return;
	held = flight__bytes(r->fl, &open);
	if (held > r->st->held_max)
		r->st->held_max = held;
	if (open > FLIGHT_OPEN(r->o->max_size))
		seg_roll(r, record_now_ns());
}

/* Seal the open segment and write the window ending @now (flight). */
static void dump(struct rec *r, uint64_t now, const char *why, int last)
{
	struct flight_dump d;
	int err;

	note_err(r, trace_writer__meta(r->w, TRACE_META_DUMP_REASON, why));
	if (last)
		seg_seal(r, now);
	else
		seg_roll(r, now);
	if (r->err)
		return;
	err = flight__dump(r->fl, now, time(NULL), &d);
	if (err) {
		r->st->dump_failures++;
		logf_(r, RECORD_WARN, "cannot write the dump (%s) to %s: %s", why, r->o->dir,
		      strerror(-err));
		return;
	}
	r->st->dumps++;
	r->st->dumps_deleted += d.deleted;
	if (r->o->on_dump) {
		struct record_dump rd = {.path = d.path, .from = d.from, .to = d.to,
					 .segments = d.segments, .bytes = d.bytes, .why = why};

		r->o->on_dump(r->o->ctx, &rd);
	}
}

static const char *trigger_name(enum record_trigger_kind k)
{
	return k == RECORD_TRIGGER_POLL ? "poll" : k == RECORD_TRIGGER_DELAY ? "delay" : "runq";
}

/* The first trigger of @kind over @ns: schedule a dump half a window
 * later, so that it holds as much before the event as after. */
static void trigger(struct rec *r, enum record_trigger_kind kind, uint64_t ns, uint64_t at,
		    const char *what)
{
	const struct record_opts *o = r->o;
	uint64_t cool = (uint64_t)((o->cooldown > 0 ? o->cooldown : o->window) * 1e9);
	unsigned int i, hot = RECORD_MAX_TRIGGERS;

	if (r->dump_at)
		return;	/* the dump due holds this one too */
	for (i = 0; i < o->ntriggers; i++) {
		if (o->triggers[i].kind != kind || ns <= o->triggers[i].ns)
			continue;
		if (hot == RECORD_MAX_TRIGGERS)
			hot = i;
		if (at >= r->cooldown_until[i])
			break;
	}
	if (i == o->ntriggers) {
		if (hot < RECORD_MAX_TRIGGERS)
			r->st->trigger_cooled[hot]++;
		return;
	}
	snprintf(r->dump_why, sizeof(r->dump_why), "trigger %s>%.3gms: %s %.1f ms at %.3f s",
		 trigger_name(kind), (double)o->triggers[i].ns / 1e6, what, (double)ns / 1e6,
		 (double)(at - r->start_ns) / 1e9);
	r->dump_at = at + (uint64_t)(o->window * 1e9 / 2);
	r->cooldown_until[i] = at + cool;
	r->st->trigger_dumps[i]++;
	logf_(r, RECORD_INFO, "%s: dumping in %.1f s", r->dump_why, o->window / 2);
}

static void check_triggers(struct rec *r)
{
	struct livestate_hit h;
	uint32_t tid;
	uint64_t at, ns;
	char what[96];

	if (!r->o->ntriggers)
		return;
	if (livestate__hit(r->ls, &h)) {
		snprintf(what, sizeof(what), "task %llu %s on thread %u",
			 (unsigned long long)h.task,
			 h.kind == LIVESTATE_POLL ? "polled" : "waited for its poll", h.tid);
		trigger(r, h.kind == LIVESTATE_POLL ? RECORD_TRIGGER_POLL : RECORD_TRIGGER_DELAY,
			h.ns, h.time, what);
	}
	if (r->oc && offcpu_rec__runq_hit(r->oc, &tid, &at, &ns)) {
		snprintf(what, sizeof(what), "thread %u waited for a CPU", tid);
		trigger(r, RECORD_TRIGGER_RUNQ, ns, at, what);
	}
}

/* Limits for the triggers, where they are seen. */
static void arm_triggers(struct rec *r)
{
	uint64_t lim[4] = {0};

	for (unsigned int i = 0; i < r->o->ntriggers; i++) {
		const struct record_trigger *t = &r->o->triggers[i];

		if (t->kind >= 1 && t->kind <= 3 && (!lim[t->kind] || t->ns < lim[t->kind]))
			lim[t->kind] = t->ns;
	}
	if (r->ls)
		livestate__set_limits(r->ls, lim[RECORD_TRIGGER_POLL], lim[RECORD_TRIGGER_DELAY]);
	if (r->oc)
		offcpu_rec__set_runq_limit(r->oc, lim[RECORD_TRIGGER_RUNQ]);
}

/* Every tick of a segmented recording: dumps asked for or due, seals due,
 * commands ended. */
static void segments_tick(struct rec *r, uint64_t now)
{
	const struct record_opts *o = r->o;
	uint64_t open, held;
	struct flight_hooks h;

	if (!r->fl)
		return;
	/* (the most held is just before a seal may drop segments) */
	held = flight__bytes(r->fl, &open);
	if (held > r->st->held_max)
		r->st->held_max = held;
	check_triggers(r);
	if (o->dump_now && *o->dump_now) {
		*o->dump_now = 0;
		if (o->segments == RECORD_FLIGHT)
			dump(r, now, "SIGUSR1", 0);
		else
			seg_roll(r, now);
	} else if (r->dump_at && now >= r->dump_at) {
		r->dump_at = 0;
		dump(r, now, r->dump_why, 0);
	} else if (now >= r->next_seal || (o->max_size && open > o->max_size / 5)) {
		seg_roll(r, now);
	}
	if (flight__reap(r->fl, now, &h))
		logf_(r, RECORD_WARN, "--on-segment: %s", h.why);
	r->st->hook_failures += h.failed;
	r->st->hooks_skipped += h.skipped;
	r->st->hooks_running = h.running + h.waiting;
}

/* ---- the loop ------------------------------------------------------------ */

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Refused (@err) a process of another user: say so and what to do, in
 * @why; 1 if that was it. */
static int not_ours(pid_t pid, int err, char *why, size_t len)
{
	char path[32];
	struct stat sb;

	if (err != -EACCES && err != -EPERM)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &sb) || sb.st_uid == geteuid())
		return 0;
	snprintf(why, len, "it belongs to another user (uid %u); run d9prof as root or as "
		 "its owner", (unsigned int)sb.st_uid);
	return 1;
}

/* The counts so far, for opts->progress. */
static void progress(struct rec *r, uint64_t now)
{
	r->st->offcpu_lost = r->ocst.lost;
	r->st->wake_lost = r->ocst.wake_lost;
	r->o->progress(r->o->ctx, r->st, (double)(now - r->start_ns) / 1e9);
}

/*
 * The period until the next drain, given the last one (@tick) and the time
 * the last drain covered (@elapsed). A ring found over 1/4 full (or one
 * that overflowed) is drained sooner: at the rate it filled, about 1/8 full
 * next time, which leaves room for 8 periods of scheduling delay. Once
 * every ring is under 1/20, the period doubles back towards TICK_NS. In
 * between it stays, so that a steady rate settles instead of flapping.
 * Scanning the rings costs a few microseconds; a dropped record is lost.
 */
static uint64_t next_tick(struct rec *r, uint64_t tick, uint64_t elapsed)
{
	uint64_t cap = r->seg ? shim_seg__layout(r->seg)->ring_events : 0;
	uint64_t fill = r->fill_max, t;

	r->fill_max = 0;
	if (!cap)
		return TICK_NS;
	if (fill * 4 > cap) {
		t = elapsed / 8 * cap / fill;
		if (t > tick)
			t = tick;
		return t > TICK_MIN_NS ? t : TICK_MIN_NS;
	}
	if (fill * 20 < cap)
		return tick * 2 < TICK_NS ? tick * 2 : TICK_NS;
	return tick;
}

/* One event per (thread, CPU) and kind: 300 threads on 2 CPUs with
 * off-CPU and wakeups take over 1,200 fds. Take what the hard limit
 * allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* One event per (thread, CPU) and kind, plus the system-wide ones: say
 * before opening anything when the fd limit cannot hold them. 0 or
 * -EMFILE with why in st. */
static int fd_budget(struct rec *r)
{
	const struct record_opts *o = r->o;
	uint64_t threads, per = 0, need;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct rlimit rl;
	int n = proc_for_each_tid(o->pid, NULL, NULL);

	if (n < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	threads = (uint64_t)n;
	per += o->sampler != RECORD_SAMPLER_CTIMER;
	per += o->offcpu != RECORD_OFFCPU_OFF;
	need = threads * per * (uint64_t)ncpus + 2 * (uint64_t)ncpus + 64;
	if (rl.rlim_cur == RLIM_INFINITY || need <= rl.rlim_cur)
		return 0;
	snprintf(r->st->why, sizeof(r->st->why),
		 "pid %d has %llu threads: %llu x %ld CPUs x %llu events needs about %llu open "
		 "files, over the limit of %llu (hard limit %llu); raise it (ulimit -n as "
		 "root) or record less (--no-offcpu)",
		 (int)o->pid, (unsigned long long)threads, (unsigned long long)threads, ncpus,
		 (unsigned long long)per, (unsigned long long)need,
		 (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	return -EMFILE;
}

/* Everything before the loop: the target's mappings and threads, the
 * first segment, the sampler, off-CPU, the shim; the events enabled
 * together, the command let go (on_attached), the meta written. 0 or
 * -errno (st->why says why, or on_attached did). */
static int run_start(struct rec *r)
{
	const struct record_opts *o = r->o;
	struct record_stats *st = r->st;
	uint64_t t0, now;
	int err;

	r->maxpfd = 3 + 5 * (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	raise_fd_limit();
	if (kill(o->pid, 0) && errno == ESRCH) {
		snprintf(st->why, sizeof(st->why), "no such process");
		return -ESRCH;
	}
	err = fd_budget(r);
	if (err)
		return err;
	err = symbolizer__new(o->pid, &r->sym);
	if (err) {
		if (!not_ours(o->pid, err, st->why, sizeof(st->why)))
			snprintf(st->why, sizeof(st->why), "cannot read its mappings: %s",
				 err == -ESRCH ? "no such process" : strerror(-err));
		return err;
	}
	r->inner = symbol_inner_pid(o->pid) != o->pid;
	r->pfd = calloc(r->maxpfd, sizeof(*r->pfd));
	if (!r->pfd || tids__new(o->pid, r->inner, &r->tids))
		return -ENOMEM;
	err = seg_first(r);
	if (err)
		return err;
	bound_memory(r);
	r->pidfd = pidfd_of(o->pid);
	if (o->until_pid > 0) {
		r->until_fd = pidfd_of(o->until_pid);
		if (r->until_fd < 0) {
			err = -errno;
			snprintf(st->why, sizeof(st->why), "cannot watch pid %d: %s",
				 (int)o->until_pid, strerror(errno));
			return err;
		}
	}
	t0 = record_now_ns();
	err = choose_sampler(r);
	if (err)
		return err;
	r->start_ns = r->seg_start = record_now_ns();
	st->start_run_delay_ns = proc_self_run_delay_ns();
	r->cpu0 = proc_cpu_ns(o->pid);
	if (r->ps)
		logf_(r, RECORD_INFO, "sampling %s at %u Hz, %u thread%s of pid %d",
		      st->event_name, o->freq, perf_set__nthreads(r->ps),
		      perf_set__nthreads(r->ps) == 1 ? "" : "s", (int)o->pid);
	else
		logf_(r, RECORD_INFO, "sampling thread CPU time at %u Hz per thread of pid %d",
		      o->freq, (int)o->pid);
	err = open_offcpu(r);
	if (err)
		return err;
	arm_triggers(r);
	shim_try_attach(r, !o->fresh_target && !r->ctimer);
	if (r->ctimer && !r->seg && !o->fresh_target)
		return sampler_tick(r, r->start_ns + SHIM_EAGER_NS); /* says why */
	/* every event was opened disabled: start them together, now that
	 * the loop is about to drain them */
	perf_set__enable(r->ps);
	offcpu_rec__enable(r->oc);
	exitwatch__enable(r->ew);
	now = record_now_ns();
	if ((r->ps || r->oc) && now - t0 > SLOW_OPEN_NS)
		logf_(r, RECORD_INFO,
		      "opening the events took %.1f s: the kernel waits for RCU grace periods "
		      "at the first per-thread event and the first of a tracepoint, slow "
		      "while the target keeps every CPU busy", (double)(now - t0) / 1e9);
	if (o->on_attached && (err = o->on_attached(o->ctx)))
		return err;
	write_meta(r);
	/* -d counts from here: every event is open and enabled (opening
	 * them can take seconds on a busy machine) */
	if (o->duration > 0)
		r->end_ns = record_now_ns() + (uint64_t)(o->duration * 1e9);
	return 0;
}

/* Drain, tick and renew until stopped, -d, the target's exit or
 * until_pid's, or an error (in r->err or r->sampler_err). */
static void run_loop(struct rec *r)
{
	const struct record_opts *o = r->o;
	struct record_stats *st = r->st;
	uint64_t now, tick = TICK_NS;
	uint64_t last_flush, last_look, last_maps, last_drain, last_progress;

	last_flush = last_look = last_maps = last_drain = last_progress = r->start_ns;
	while (!*o->stop) {
		/* the target's pidfd (or none: kill(0) below), until's, and
		 * the perf rings, which wake us once a quarter full */
		struct timespec ts = { .tv_sec = (time_t)(tick / 1000000000ULL),
				       .tv_nsec = (long)(tick % 1000000000ULL) };
		int exited = 0, until = 0, lapsed;
		unsigned int npfd = 0;

		if (r->pidfd >= 0)
			r->pfd[npfd++] = (struct pollfd){.fd = r->pidfd, .events = POLLIN};
		if (r->until_fd >= 0)
			r->pfd[npfd++] = (struct pollfd){.fd = r->until_fd, .events = POLLIN};
		npfd += perf_set__pollfds(r->ps, r->pfd + npfd, r->maxpfd - npfd);
		npfd += offcpu_rec__pollfds(r->oc, r->pfd + npfd, r->maxpfd - npfd);
		npfd += exitwatch__pollfds(r->ew, r->pfd + npfd, r->maxpfd - npfd);
		if (ppoll(r->pfd, npfd, &ts, NULL) > 0) {
			exited = r->pidfd >= 0 && r->pfd[0].revents;
			until = r->until_fd >= 0 && r->pfd[r->pidfd >= 0].revents;
		}
		if (r->pidfd < 0 && kill(o->pid, 0) && errno == ESRCH)
			exited = 1;
		if (r->ps)
			perf_set__drain(r->ps, &r->cb);
		if (r->oc)
			note_err(r, offcpu_rec__drain(r->oc));
		exitwatch__drain(r->ew);
		/* renew first: it also takes the clock pair that what is
		 * drained next is converted against */
		lapsed = r->seg && shim_seg__renew(r->seg) == -ETIMEDOUT;
		drain_shim(r);
		if (lapsed) {
			/* the shim let go: the polls it kept from before are
			 * not ours once we attach again */
			drain_open_polls(r);
			shim_reattach(r);
		}
		now = record_now_ns();
		tick = next_tick(r, tick, now - last_drain);
		last_drain = now;
		if (!exited && (r->sampler_err = sampler_tick(r, now)))
			break;
		if (!r->seg && !exited && (now - r->start_ns < SHIM_EAGER_NS ||
				     now - last_look >= SHIM_LOOK_NS)) {
			last_look = now;
			shim_try_attach(r, 0);
		}
		if (!exited && now - last_maps >= MAPS_NS) {
			last_maps = now;
			symbolizer__refresh(r->sym);
		}
		if (now - last_flush >= FLUSH_NS) {
			last_flush = now;
			note_err(r, trace_writer__flush(r->w));
		}
		if (!exited && !until)
			segments_tick(r, now);
		if (o->progress && now - last_progress >= RECORD_PROGRESS_NS) {
			last_progress = now;
			progress(r, now);
		}
		if (r->err)
			break;
		if (exited) {
			st->target_exited = 1;
			r->exit_ns = now;
			break;
		}
		if (until || (r->end_ns && now >= r->end_ns)) {
			r->until_ended = until;
			break;
		}
	}
}

/* Last words: what the rings still hold, the shim detached, the last
 * segment sealed or dumped, the counts. 0 or -errno (st->why). */
static int run_finish(struct rec *r)
{
	const struct record_opts *o = r->o;
	struct record_stats *st = r->st;
	uint64_t now;
	int err;

	st->stop_run_delay_ns = proc_self_run_delay_ns();
	/* Last words: what is still in the rings belongs in the trace; the
	 * events stop first, and are closed in the background
	 * (perf_close_later) */
	perf_set__disable(r->ps);
	offcpu_rec__disable(r->oc);
	if (r->ps)
		perf_set__drain(r->ps, &r->cb);
	if (r->oc)
		note_err(r, offcpu_rec__finish(r->oc));
	totals(r);
	/* a last clock pair for the last drains; a lease that lapsed since the
	 * loop's last renew (stalled then, -d ran out meanwhile) leaves a gap
	 * to the end */
	if (r->seg && shim_seg__renew(r->seg) == -ETIMEDOUT) {
		uint64_t gap = shim_gap(r, record_now_ns());

		logf_(r, RECORD_WARN,
		      "the recorder stalled past its %d ms lease and the shim let go before "
		      "the end: runtime events of its last %.3f s are lost",
		      (int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
	}
	drain_shim(r);
	if (r->seg) {
		count_no_ring(r);
		shim_seg__detach(r->seg);
	}
	drain_shim(r);
	/* detached now: what is open stays so */
	drain_open_polls(r);
	now = record_now_ns();
	st->seconds = (double)(now - r->start_ns) / 1e9;
	if (!st->shim && !r->shim_warned)
		logf_(r, RECORD_WARN, "no d9prof shim found in pid %d: no task ids in "
		      "this trace (link libd9prof and call d9_init() in the target)",
		      (int)o->pid);
	if (r->ps || r->oc || r->ew)
		r->close_go = perf_close_later();
	if (st->target_exited)
		target_end(r, r->exit_ns);
	if (o->segments == RECORD_FLIGHT) {
		char why[160];

		if (st->exit_how[0])
			snprintf(why, sizeof(why), "target %s", st->exit_how);
		else
			snprintf(why, sizeof(why), "%s",
				 st->target_exited ? "target exited" : *o->stop ? "recorder stopped"
							   : r->until_ended ? "command ended"
								   : "duration ended");
		dump(r, now, why, 1);
	} else {
		seg_seal(r, now);
	}
	if (r->sc) {
		uint64_t lookups;

		symcache__stats(r->sc, &st->symbols_resolved, &lookups);
		st->frames = st->symbols_resolved;
	} else {
		st->symbols_resolved = st->frames;
	}
	unreadable_modules(r);
	err = r->err;
	if (err)
		snprintf(st->why, sizeof(st->why), "cannot write the trace: %s",
			 strerror(-err));
	else
		err = r->sampler_err;
	return err;
}

static void run_free(struct rec *r)
{
	if (r->pidfd >= 0)
		close(r->pidfd);
	if (r->until_fd >= 0)
		close(r->until_fd);
	ctimer_rec__free(r->ct);
	shim_seg__close(r->seg);
	free(r->rings);
	free(r->evbuf);
	offcpu_rec__free(r->oc);
	perf_set__free(r->ps);
	exitwatch__free(r->ew);
	if (r->close_go >= 0)
		close(r->close_go);	/* our copies are closed: go */
	free(r->pfd);
	trace_writer__free(r->w);
	flight__free(r->fl);
	livestate__free(r->ls);
	symcache__free(r->sc);
	symbolizer__free(r->sym);
	tids__free(r->tids);
}

int record__run(const struct record_opts *o, struct record_stats *st)
{
	struct rec r = { .o = o, .st = st, .pidfd = -1, .until_fd = -1, .close_go = -1 };
	int err;

	memset(st, 0, sizeof(*st));
	r.cb = perf_cb_tmpl;
	r.cb.ctx = &r;
	err = run_start(&r);
	if (!err) {
		run_loop(&r);
		err = run_finish(&r);
	}
	run_free(&r);
	return err;
}
