// SPDX-License-Identifier: MIT
/*
 * record_drain.c - the engine's side of the shim (d9_segment.h): attach to
 * the target's segment, drain its rings into the trace every tick (each
 * record checked: its thread, its time, its task), renew the lease and
 * attach again after a stall, and write the polls still open from the
 * ring headers where a segment ends. Part of record__run() (record_int.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "record/command.h"
#include "record/proc.h"
#include "record/record_int.h"

/* ---- the shim ---------------------------------------------------------- */

void record_shim_names(struct rec *r)
{
	const struct d9_seg_layout *l = shim_seg__layout(r->seg);
	struct d9_name_slot *slots = d9_layout_names(shim_seg__base(r->seg), l);
	uint32_t i;

	for (i = 0; i < l->names_count; i++) {
		char name[sizeof(slots[i].name) + 1];
		uint64_t task;

		if (d9_name_slot_read(&slots[i], &task, name, sizeof(name)))
			continue;
		record_note_err(r, trace_writer__task(r->w, task, name));
	}
}

/* Meta "lean": the thresholds and the shim's clock unit, which its sums'
 * buckets are in */
static void lean_meta(struct rec *r)
{
	struct shim_clock c;
	char buf[96];

	shim_seg__clock(r->seg, &c);
	snprintf(buf, sizeof(buf), "poll=%llu delay=%llu unit=%.9g",
		 (unsigned long long)r->o->lean_ns,
		 (unsigned long long)r->o->lean_delay_ns,
		 c.ns_per_tick ? c.ns_per_tick : 1.0);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_LEAN, buf));
}

/* Attach (again), lean or not as the options say */
static void seg_attach(struct rec *r)
{
	shim_seg__attach(r->seg, &(struct shim_lean){r->o->lean_ns, r->o->lean_delay_ns});
}

void record_shim_try_attach(struct rec *r, int warn)
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
			record_log(r, RECORD_WARN,
				   "refusing the d9prof segment of pid %d: %s",
				   (int)r->o->pid, why);
		} else if (warn && !r->shim_warned && !r->st->tokio[0]) {
			r->shim_warned = 1;
			record_log(
				r, RECORD_WARN,
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
				record_log(
					r, RECORD_WARN,
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
		&((struct d9_seg_hdr *)shim_seg__base(r->seg))->rings_exhausted,
		__ATOMIC_RELAXED);
	r->rings = calloc(l->nrings, sizeof(*r->rings));
	r->evbuf_len = l->ring_events;
	r->evbuf = malloc(r->evbuf_len * sizeof(*r->evbuf));
	if (!r->rings || !r->evbuf) {
		record_note_err(r, -ENOMEM);
		shim_seg__close(r->seg);
		r->seg = NULL;
		return;
	}
	seg_attach(r);
	if (r->o->lean_ns) {
		lean_meta(r);
		record_lean_tags(r);
	}
	/* (after its store: the markers record from there) */
	record_source_live(r);
	/* Markers record from the attach's store of attached on: one that
	 * loaded 0 ran before it, so a poll whose end comes first on a thread
	 * began before this instant, taken after the store, and was running
	 * from here to its end. The analysis starts such a poll here, never
	 * earlier over what the thread ran before (command mode attaches the
	 * shim some 100 ms after sampling starts; the attach itself takes a
	 * few ms to calibrate the TSC before its store). */
	snprintf(when, sizeof(when), "%llu", (unsigned long long)record_now_ns());
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SHIM_ATTACHED, when));
	record_shim_names(r);
	r->st->shim = 1;
	record_log(r, RECORD_INFO,
		   "attached to the d9prof shim of pid %d (%u thread slots)",
		   (int)r->o->pid, l->nrings);
	if (r->ctimer)
		record_ctimer_begin(r);
}

/* The shim recorded nothing from the lapsed lease's deadline (the renew
 * that returned -ETIMEDOUT) to @to: meta "shim_gap" = "FROM-TO" (ns, one
 * per gap), where the analysis ends the polls open at FROM and starts
 * afresh at TO. Returns its length. */
uint64_t record_shim_gap(struct rec *r, uint64_t to)
{
	uint64_t from = shim_seg__lapsed_ns(r->seg);

	if (from > to)
		from = to;
	r->st->gap_ns += to - from;
	record_meta_gap(r, TRACE_META_SHIM_GAP, from, to);
	return to - from;
}

/* Threads of the target that found no ring slot while we were attached,
 * into st: their runtime events never came, whether they started before
 * the attach or after (each counts at its first marker; d9_segment.h).
 * The target writes the counter: a silly value is not one. */
void record_count_no_ring(struct rec *r)
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
void record_shim_reattach(struct rec *r)
{
	uint64_t to, gap;
	char buf[24];

	seg_attach(r);
	to = record_now_ns();
	gap = record_shim_gap(r, to);
	r->st->reattaches++;
	if (r->ct)
		ctimer_rec__request(r->ct);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)to);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SHIM_REATTACHED, buf));
	record_log(
		r, RECORD_WARN,
		"the recorder stalled past its %d ms lease and the shim let go: attached "
		"again; runtime events of the %.3f s gap are lost",
		(int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
}

/* More drops than this between two drains cannot be real (a ring of
 * D9_SEG_RING_EVENTS drained every tick): the counter was scribbled. */
#define DROPS_MAX (1ULL << 32)

/* The shim's ring record type @d9 as the trace's event type (enum
 * trace_event_type), the one place the two vocabularies meet; 0 for what
 * the trace has no event for (a whole poll, a text continuation). */
static uint32_t trace_type(uint32_t d9)
{
	switch (d9) {
	case D9_EV_THREAD_START:
		return TRACE_EV_THREAD_START;
	case D9_EV_THREAD_STOP:
		return TRACE_EV_THREAD_STOP;
	case D9_EV_SPAWN:
		return TRACE_EV_SPAWN;
	case D9_EV_WAKE:
		return TRACE_EV_WAKE;
	case D9_EV_POLL_BEGIN:
		return TRACE_EV_POLL_BEGIN;
	case D9_EV_POLL_END:
		return TRACE_EV_POLL_END;
	case D9_EV_TASK_END:
		return TRACE_EV_TASK_END;
	case D9_EV_PARK:
		return TRACE_EV_PARK;
	case D9_EV_UNPARK:
		return TRACE_EV_UNPARK;
	case D9_EV_WAKER_DROP:
		return TRACE_EV_WAKER_DROP;
	default:
		return 0;
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
	uint64_t lo, hi; /* the times a record may carry (batch_span) */
};

/* What the conversion of a segment time may be off by. */
#define TIME_SLACK_NS 10000000ULL

/* The times a record or sample drained now may carry, ns: from before
 * the sources were opened (the shim writes from the attach on, later) to
 * now. */
static void span_now(const struct rec *r, uint64_t *lo, uint64_t *hi)
{
	*lo = r->opening_ns > TIME_SLACK_NS ? r->opening_ns - TIME_SLACK_NS : 0;
	*hi = record_now_ns() + TIME_SLACK_NS;
}

static void batch_span(const struct rec *r, struct ev_batch *b)
{
	span_now(r, &b->lo, &b->hi);
}

/* Is @t (the segment's unit) within the batch's span? Then 1, and @t as
 * CLOCK_MONOTONIC ns in *@ns (the one conversion of a record's time). */
static int in_span(const struct ev_batch *b, uint64_t t, uint64_t *ns)
{
	return shim_clock__within(&b->clock, t, b->lo, b->hi, ns);
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
 * billions of seconds. If it could, its time in ns in *@t (a whole
 * poll's begin in *@t0). */
static int record_real(const struct ev_batch *b, const struct d9_event *ev, uint64_t *t,
		       uint64_t *t0)
{
	switch (ev->type) {
	case D9_EV_THREAD_START:
	case D9_EV_THREAD_STOP:
	case D9_EV_PARK:
	case D9_EV_UNPARK:
	case D9_EV_EVENT: /* task is its value */
		break;
	default:
		if (!task_real(ev->task))
			return 0;
	}
	if (!in_span(b, ev->time, t))
		return 0;
	return (ev->type != D9_EV_POLL && ev->type != D9_EV_POLL_WOKEN) ||
	       (ev->time >= ev->arg && in_span(b, ev->time - ev->arg, t0));
}

static void write_batch(struct rec *r, struct ev_batch *b)
{
	size_t i;

	if (!b->n)
		return;
	/* an open poll missed makes a later segment's STATE short of it */
	if (r->ls &&
	    (livestate__feed(r->ls, b->v, b->len, b->n) || livestate__refused(r->ls)) &&
	    !r->state_warned) {
		r->state_warned = 1;
		record_log(
			r, RECORD_WARN,
			"more open polls and tasks than the recorder keeps (%zu "
			"threads and tasks at most), or out of memory: segments read alone may "
			"miss a poll or a wake in progress at their start",
			r->state_max);
	}
	record_note_err(r, trace_writer__records(r->w, b->v, b->len, b->n));
	for (i = 0; i < b->n; i++)
		r->st->events += trace_rec_events(b->v[i].type);
	b->n = 0;
}

/* An event at @ns (converted already). */
static inline void batch_add(struct rec *r, struct ev_batch *b, uint64_t ns,
			     uint64_t task, uint32_t tid, uint32_t type)
{
	b->len[b->n] = 0;
	b->v[b->n++] =
		(struct trace_event){.time = ns, .task = task, .tid = tid, .type = type};
	if (b->n == EV_BATCH)
		write_batch(r, b);
}

/* A whole poll, begun at @t0, ended at @t (ns, converted already). */
static inline void batch_poll(struct rec *r, struct ev_batch *b, uint64_t t0, uint64_t t,
			      uint64_t task, uint32_t tid, int woken)
{
	b->len[b->n] = t >= t0 ? t - t0 : 0;
	b->v[b->n++] = (struct trace_event){.time = t,
					    .task = task,
					    .tid = tid,
					    .type = woken ? TRACE_REC_POLL_WOKEN
							  : TRACE_REC_POLL};
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

/* The poll sites of @ring not known yet (the target writes them: at most
 * RECORD_POLL_SITES are kept, and they are only ever symbolized). */
static void note_poll_sites(struct rec *r, const struct d9_ring_hdr *ring)
{
	unsigned int i;
	size_t k;

	for (i = 0; i < D9_POLL_SITES; i++) {
		uint64_t site = d9_ring_poll_site(ring, i);

		if (!site)
			return;
		for (k = 0; k < r->npoll_sites && r->poll_sites[k] != site; k++)
			;
		if (k == r->npoll_sites && k < RECORD_POLL_SITES)
			r->poll_sites[r->npoll_sites++] = site;
	}
}

void record_poll_sites(struct rec *r, trace_resolve_fn resolve, void *ctx)
{
	size_t k;

	for (k = 0; k < r->npoll_sites; k++) {
		struct trace_frame f = {0};
		char buf[1024];
		size_t n;
		uint32_t i;

		/* a return address: the call is the byte before */
		if (resolve(ctx, r->poll_sites[k] - 1, &f) || !f.sym || !f.module)
			continue;
		n = (size_t)snprintf(buf, sizeof(buf), "%s", f.module);
		for (i = 0; i < f.ninl && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\t%s", f.inl[i]);
		if (n < sizeof(buf))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\t%s", f.sym);
		if (n < sizeof(buf))
			record_note_err(
				r, trace_writer__meta(r->w, TRACE_META_POLL_SITE, buf));
	}
}

/* Is @type a record the recorder knows? */
static int type_known(uint32_t type)
{
	return (type >= D9_EV_THREAD_START && type <= D9_EV_WOKEN_BEFORE) ||
	       (type >= D9_EV_SPAN_NEW && type <= D9_EV_EVENT);
}

/* How many records after @ev are its text or payload (at most @left). */
static uint32_t continuations(const struct d9_event *ev, size_t left)
{
	uint32_t k = d9_group_more(ev);

	return k < left ? k : (uint32_t)left;
}

/* A span record or an application event (D9_EV_SPAN_*, D9_EV_EVENT) at
 * @t (ns) on @tid into the trace, its payload the @k records after @ev.
 * 0, -errno from the writer, or 1 if the payload cannot be one (the
 * target wrote it: garbage). */
static int span_record(struct rec *r, const struct d9_event *ev, uint32_t k, uint64_t t,
		       uint32_t tid)
{
	static const uint32_t type[] = {
		[D9_EV_SPAN_NEW - D9_EV_SPAN_NEW] = TRACE_SPAN_NEW,
		[D9_EV_SPAN_ENTER - D9_EV_SPAN_NEW] = TRACE_SPAN_ENTER,
		[D9_EV_SPAN_EXIT - D9_EV_SPAN_NEW] = TRACE_SPAN_EXIT,
		[D9_EV_SPAN_CLOSE - D9_EV_SPAN_NEW] = TRACE_SPAN_CLOSE,
		[D9_EV_SPAN_FIELD - D9_EV_SPAN_NEW] = TRACE_SPAN_FIELD,
		[D9_EV_EVENT - D9_EV_SPAN_NEW] = TRACE_SPAN_EVENT,
	};
	struct trace_span s = {.time = t, .id = ev->task, .tid = tid};
	char buf[D9_PAYLOAD_BYTES];
	uint64_t num;

	s.type = type[ev->type - D9_EV_SPAN_NEW];
	if (r->span_triggers && s.type == TRACE_SPAN_CLOSE)
		record_span_close(r, s.id, t);
	if (!continuations(ev, 1)) {
		/* ENTER, EXIT, CLOSE: what the next segment finds open */
		if (r->ss)
			record_note_err(r, spanstate__feed(r->ss, &s));
		return trace_writer__span(r->w, &s);
	}
	if (d9_payload(ev, k, buf, &num, &s.name, &s.text))
		return 1;
	s.value = (int64_t)num;
	if (ev->type == D9_EV_EVENT) {
		s.id = 0;
		s.value = (int64_t)ev->task;
	}
	if (r->span_triggers && s.type == TRACE_SPAN_NEW)
		record_span_new(r, s.id, s.name, t);
	if (r->ss)
		record_note_err(r, spanstate__feed(r->ss, &s));
	return trace_writer__span(r->w, &s);
}

/* A lean poll sum (D9_EV_SUMMARY and its @k records) of @tid at @t (ns)
 * into the trace, its times in ns. 1 if it cannot be one (garbage). */
static int sum_record(struct rec *r, const struct ev_batch *b, const struct d9_event *ev,
		      uint32_t k, uint64_t t, uint32_t tid)
{
	struct trace_sum_ent ent[D9_SUM_ENTRIES];
	const struct d9_sum_head *h = (const void *)(ev + 1);
	const uint64_t *e = (const void *)(ev + 3);
	double u = b->clock.ns_per_tick ? b->clock.ns_per_tick : 1.0;
	struct trace_sum s = {
		.time = t,
		.task = ev->task,
		.tid = tid,
		.polls = h->polls,
		.delays = h->delays,
		.poll_total = (uint64_t)((double)h->poll_total * u),
		.delay_total = (uint64_t)((double)h->delay_total * u),
		.poll_max = (uint64_t)((double)h->poll_max * u),
		.delay_max = (uint64_t)((double)h->delay_max * u),
	};
	uint32_t i;

	if (k < 2 || h->delays > h->polls)
		return 1;
	for (i = 0; i < (k - 2) * 3; i++) {
		uint32_t bucket = (uint32_t)(e[i] >> 32) & 0x7fffffffu;

		if (!e[i])
			continue;
		if (bucket >= D9_SUM_BUCKETS || !(uint32_t)e[i])
			return 1;
		ent[s.nent++] = (struct trace_sum_ent){.which = (uint8_t)(e[i] >> 63),
						       .bucket = (uint8_t)bucket,
						       .count = (uint32_t)e[i]};
	}
	record_note_err(r, trace_writer__sum(r->w, &s, ent));
	return 0;
}

/* Lean: a long wait (D9_EV_WOKEN_BEFORE) as a WAKE at its time, its waker
 * not known (thread 0) */
static void woken_before(struct rec *r, struct ev_batch *b, const struct d9_event *ev)
{
	uint64_t w;

	r->st->shim_records++;
	if (ev->time < ev->arg || !in_span(b, ev->time - ev->arg, &w)) {
		r->st->shim_garbage++;
		return;
	}
	batch_add(r, b, w, ev->task, 0, TRACE_EV_WAKE);
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
			record_log(
				r, RECORD_WARN,
				"ring slot %u of the d9prof shim names thread %u, "
				"which pid %d does not have (or no longer, unseen by perf): its "
				"records are dropped",
				idx, tid, (int)r->o->pid);
		}
		if (name[0] && seen->tid_ok)
			record_note_err(r, trace_writer__thread(r->w, tid, name));
	}
	if (seen->tid_ok)
		note_poll_sites(r, ring);
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
		uint64_t t, t0 = 0;
		uint32_t k = 0;

		/* the target wrote this: a record that cannot be one is
		 * dropped and counted, never written */
		if (!type_known(ev->type)) {
			r->st->shim_garbage++;
			continue;
		}
		if (!record_real(&b, ev, &t, &t0)) {
			/* with its text, if it has some */
			i += continuations(ev, n - i - 1);
			r->st->shim_garbage++;
			continue;
		}
		if (ev->type >= D9_EV_SPAN_NEW) {
			int err;

			k = continuations(ev, n - i - 1);
			err = span_record(r, ev, k, t, tid);
			if (err > 0)
				r->st->shim_garbage++;
			else
				record_note_err(r, err);
			r->st->shim_records++;
			r->st->spans += !err;
			i += k;
			continue;
		}
		switch (ev->type) {
		case D9_EV_WOKEN_BEFORE:
			woken_before(r, &b, ev);
			continue;
		case D9_EV_SUMMARY:
			k = continuations(ev, n - i - 1);
			r->st->shim_records++;
			if (sum_record(r, &b, ev, k, t, tid))
				r->st->shim_garbage++;
			i += k;
			continue;
		case D9_EV_POLL:
		case D9_EV_POLL_WOKEN: {
			/* one record for a whole poll: BEGIN, (WAKE,) END, but
			 * for what the ring header gave already */
			int done = from_header(seen, ev->time - ev->arg, ev->task);

			r->st->shim_records++;
			if (!done) {
				batch_poll(r, &b, t0, t, ev->task, tid,
					   ev->type == D9_EV_POLL_WOKEN);
				continue;
			}
			if (ev->type == D9_EV_POLL_WOKEN)
				batch_add(r, &b, t, ev->task, tid, TRACE_EV_WAKE);
			if (done < 2)
				batch_add(r, &b, t, ev->task, tid, TRACE_EV_POLL_END);
			continue;
		}
		case D9_EV_POLL_BEGIN:
			if (!from_header(seen, ev->time, ev->task))
				batch_add(r, &b, t, ev->task, tid, TRACE_EV_POLL_BEGIN);
			r->st->shim_records++;
			continue;
		case D9_EV_SPAWN:
		case D9_EV_THREAD_START: {
			char text[D9_NAME_MAX + 1];

			k = continuations(ev, n - i - 1);
			d9_event_text(ev + 1, k, text, sizeof(text));
			if (ev->type == D9_EV_SPAWN && text[0])
				record_note_err(r,
						trace_writer__task(r->w, ev->task, text));
			/* lean: a spawn is a wake the shim times (its first
			 * poll's wait, written if long), no event: the polls
			 * after it are not all written */
			if (ev->type == D9_EV_SPAWN && r->o->lean_ns) {
				r->st->shim_records++;
				i += k;
				continue;
			} else if (ev->type == D9_EV_THREAD_START && text[0])
				record_note_err(r, trace_writer__thread(r->w, tid, text));
			break;
		}
		}
		batch_add(r, &b, t, ev->task, tid, trace_type(ev->type));
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
		r->fill_max = ring_events; /* it overflowed: as full as can be */
	}
}

/* The polls not in the rings yet, from the ring headers: each thread's
 * poll in progress, or its last one, held until its next marker (the shim
 * writes a poll as one record, see d9_segment.h). Written now as BEGIN
 * (and END): where a segment ends, so that it has them and its successor's
 * STATE has the open ones, and at the end of the recording, so that a poll
 * stuck there shows. Each ring is drained first; its header is taken only
 * if no record came meanwhile, and only for a poll begun while recording. */
void record_drain_open_polls(struct rec *r)
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
	attach = __atomic_load_n(&((struct d9_seg_hdr *)base)->attach_count,
				 __ATOMIC_ACQUIRE);
	b.n = 0;
	shim_seg__clock(r->seg, &b.clock);
	for (i = 0; i < l->nrings; i++) {
		struct d9_ring_hdr *ring = d9_layout_ring(base, l, i);
		struct ring_seen *seen = &r->rings[i];
		uint64_t task, begin, end, tail, gen, t0, t = 0;
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
		if (!task_real(task) || !in_span(&b, begin, &t0) ||
		    (end && !in_span(&b, end, &t))) {
			r->st->shim_garbage++;
			continue;
		}
		if (t0 < r->opening_ns)
			continue;
		if (seen->open_task == task && seen->open_time == begin) {
			/* written at an earlier look: its end, if it came */
			if (end && !seen->open_ended) {
				batch_add(r, &b, t, task, tid, TRACE_EV_POLL_END);
				seen->open_ended = 1;
			}
			continue;
		}
		batch_add(r, &b, t0, task, tid, TRACE_EV_POLL_BEGIN);
		if (end)
			batch_add(r, &b, t, task, tid, TRACE_EV_POLL_END);
		seen->open_task = task;
		seen->open_time = begin;
		seen->open_ended = end != 0;
	}
	write_batch(r, &b);
}

/* record_opts.polling: the poll ring @i's thread has in progress and not
 * written yet (task 0 for none), from its header; only one that could be
 * real (the target writes the header). */
static void tell_polling(struct rec *r, uint32_t i, struct d9_ring_hdr *ring)
{
	const struct ring_seen *seen = &r->rings[i];
	uint64_t attach, task, begin, end, t0;
	struct ev_batch b;

	if (!seen->tid_ok || !seen->tid)
		return;
	attach = __atomic_load_n(
		&((struct d9_seg_hdr *)shim_seg__base(r->seg))->attach_count,
		__ATOMIC_ACQUIRE);
	shim_seg__clock(r->seg, &b.clock);
	batch_span(r, &b);
	if (!d9_ring_open_poll(ring, attach, &task, &begin, &end) || end ||
	    !task_real(task) || !in_span(&b, begin, &t0))
		task = t0 = 0;
	r->o->polling(r->o->polling_ctx, seen->tid, task, t0, record_now_ns());
}

void record_drain_shim(struct rec *r)
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
		record_note_err(r, ctimer_rec__drain(r->ct, r->w, lo, hi, &n));
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
		else if (r->o->polling)
			tell_polling(r, i, ring);
		record_bound_open(r);
	}
}
