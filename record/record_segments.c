// SPDX-License-Identifier: MIT
/*
 * record_segments.c - the engine's segments (record_int.h): every mode
 * writes at least one; --rotate seals one every period into its own file,
 * --flight keeps the last window in memory (record/flight.c) and dumps it
 * on a signal, a trigger or the target's end.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/command.h"
#include "record/proc.h"
#include "lib/text.h"
#include "record/record_int.h"

/* --max-size in flight mode bounds the segments held in memory, kept and
 * open together (flight__bytes()): the kept ones to 3/5 of it (flight
 * drops the oldest past that), the open one sealed past 1/5 (bound_open),
 * and a fifth left for what one ring's drain and a seal write past that
 * check. */
#define FLIGHT_KEPT(max) ((max) / 5 * 3)
#define FLIGHT_OPEN(max) ((max) / 5)

/* ---- segments ------------------------------------------------------------ */

/* Every task the shim names and every thread of the target by name,
 * from /proc (a new segment names its own; perf's COMM records came in
 * earlier ones). */
void record_name_all(struct rec *r)
{
	if (r->seg)
		record_shim_names(r);
	proc_for_each_tid(r->o->pid, record_thread_added, r);
}

static void seg_start_meta(struct rec *r, uint64_t now)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)now);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SEGMENT_START, buf));
}

/* The first chunk of a segment: which recording, which segment, from
 * when (trace.h; the first segment's when comes later,
 * record_seg_started()), and the clocks' offset for wall-clock times. */
static void seg_head(struct rec *r, uint64_t now)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->seg_index);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_RECORDING, r->recording));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SEGMENT, buf));
	if (r->seg_index)
		seg_start_meta(r, now);
	snprintf(buf, sizeof(buf), "%lld", (long long)record_realtime_offset_ns());
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_CLOCK_REALTIME, buf));
	record_note_err(r, trace_writer__flush(r->w));
	r->seg_start = now;
	record_seg_snapshot(r, &r->base);
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
	err = trace_writer__new(fd, w);
	if (!err)
		trace_writer__set_tap(*w, r->o->tap);
	/* the first, before the events start (a later one is made while
	 * they run: warming it would only add its cost); a writer that
	 * cannot warm up flushes all the same */
	if (!err && !r->seg_index)
		trace_writer__warm(*w);
	return err;
}

void record_seg_started(struct rec *r, uint64_t now)
{
	r->seg_start = now;
	seg_start_meta(r, now);
}

int record_seg_first(struct rec *r)
{
	const struct record_opts *o = r->o;
	uint64_t now = record_now_ns();
	unsigned char rnd[6] = {0};
	char tag[13];
	int err;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) < 0) {
		/* no entropy yet: the recorder's pid and the time still tell
		 * two recordings of one second apart (the files' tag) */
		uint64_t v = now ^ (uint64_t)getpid() << 40;

		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)(v >> (8 * i));
	}
	snprintf(r->recording, sizeof(r->recording), "%02x%02x%02x%02x%02x%02x-%d-%llu",
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], (int)getpid(),
		 (unsigned long long)now);
	/* its random part names its files */
	snprintf(tag, sizeof(tag), "%.12s", r->recording);
	if (o->segments != RECORD_ONE_TRACE) {
		char comm[64], path[64], why[256];
		struct flight_opts fo = {
			.mode = o->segments == RECORD_FLIGHT ? FLIGHT_MEMORY
							     : FLIGHT_ROTATE,
			.dir = o->dir,
			.pid = o->pid,
			.window_ns = (uint64_t)(o->window * 1e9),
			.max_bytes = FLIGHT_KEPT(o->max_size),
			.max_total = o->max_total,
			.key_prefix = o->key_prefix,
			.service = o->service ? o->service : comm,
			.host = o->host,
			.open_sealed = o->on_sealed != NULL,
			.on_segment = o->on_segment,
			.max_hooks = RECORD_MAX_HOOKS,
			.hook_timeout_ns = (uint64_t)(o->hook_timeout * 1e9),
			.owner = (uid_t)-1,
			.tag = tag,
		};
		struct stat sb;

		snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
		if (!stat(path, &sb))
			fo.owner = sb.st_uid;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pid);
		record_read_file(path, comm, sizeof(comm), 0);
		err = flight__new(&fo, &r->fl, why, sizeof(why));
		if (err) {
			snprintf(r->st->why, sizeof(r->st->why),
				 "cannot use '%.80s': %.160s", o->dir,
				 why[0] ? why : strerror(-err));
			return err;
		}
		if ((err = livestate__new(&r->ls)) || (err = spanstate__new(&r->ss)) ||
		    (err = symcache__new(symbolizer__resolve, r->sym, &r->sc)))
			return err;
		/* a flight recorder's last dump says how its target ended */
		err = exitwatch__open(o->pid, EXITWATCH_MAY_MOUNT, &r->ew, why,
				      sizeof(why));
		if (err)
			return err;
		if (!exitwatch__traced(r->ew))
			record_log(r, RECORD_INFO,
				   "how the target ends: from /proc and its pidfd "
				   "only (%s)",
				   why);
		/* a flight window is kept in about five segments: a dump
		 * holds between one window and a fifth more */
		r->seg_period = o->segments == RECORD_FLIGHT
					? (uint64_t)(o->window * 1e9 / 5)
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
void record_seg_seal(struct rec *r, uint64_t now)
{
	struct trace_counters c;
	struct seg_base b;
	struct livestate_summary sum;
	struct flight_sealed sealed;
	char sz[32];
	int err;

	record_drain_open_polls(r);
	memset(&sum, 0, sizeof(sum));
	if (r->ls)
		livestate__summary(r->ls, now, &sum);
	record_seg_snapshot(r, &b);
	record_seal_meta(r);
	record_write_build_ids(r);
	memset(&c, 0, sizeof(c));
	c.samples = b.samples - r->base.samples;
	c.events = b.events - r->base.events;
	c.lost_samples = b.lost_samples - r->base.lost_samples;
	c.shim_drops = b.shim_drops - r->base.shim_drops;
	c.start_time = r->seg_start;
	c.end_time = now;
	record_poll_sites(r, r->sc ? symcache__resolve : symbolizer__resolve,
			  r->sc ? (void *)r->sc : (void *)r->sym);
	if (!r->err)
		r->err = trace_writer__finish(
			r->w, r->sc ? symcache__resolve : symbolizer__resolve,
			r->sc ? (void *)r->sc : (void *)r->sym, &c);
	if (!r->sc)
		r->st->frames = trace_writer__nframes(r->w);
	r->st->segments++;
	if (!r->fl || r->err)
		return;
	err = flight__seal(r->fl, now, &sealed);
	if (err) {
		record_log(r, RECORD_WARN, "segment %llu lost: %s",
			   (unsigned long long)r->seg_index, strerror(-err));
		return;
	}
	r->st->segments_dropped += sealed.dropped;
	if (sealed.path[0])
		record_log(r, RECORD_INFO, "segment %s (%s)", sealed.path,
			   text_size((double)sealed.bytes, sz, sizeof(sz)));
	if (sealed.path[0] && r->o->on_sealed) {
		struct record_sealed rs = {.path = sealed.path,
					   .key = sealed.key,
					   .fd = sealed.fd,
					   .bytes = sealed.bytes,
					   .index = r->seg_index,
					   .from = r->seg_start,
					   .to = now,
					   .samples = c.samples,
					   .lost = c.lost_samples + c.shim_drops,
					   .polls = sum.polls,
					   .max_poll_ns = sum.max_poll_ns,
					   .max_delay_ns = sum.max_delay_ns};

		r->o->on_sealed(r->o->ctx, &rs);
	}
	if (sealed.fd >= 0)
		close(sealed.fd);
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
		record_note_err(r, err);
		return;
	}
	r->w = w;
	seg_head(r, now);
	record_write_meta(r);
	record_name_all(r);
	n = livestate__open(r->ls, &open);
	record_note_err(r, trace_writer__state(r->w, open, n));
	if (r->ss) {
		const struct trace_span *sp;

		n = spanstate__open(r->ss, &sp);
		record_note_err(r, trace_writer__span_state(r->w, sp, n));
		r->seg_left_out = spanstate__left_out(r->ss);
	}
	/* what the segment starts with does not count to seal it: a
	 * start state near the threshold would seal every segment at once */
	r->seg_base = 0;
	if (r->fl)
		flight__bytes(r->fl, &r->seg_base);
	/* switch-outs waiting for their switch-in move over with their
	 * stacks (the old writer still knows them) */
	if (r->oc) {
		record_note_err(r, offcpu_rec__set_writer(r->oc, r->w));
		offcpu_rec__prune(r->oc);
	}
	if (r->ct)
		ctimer_rec__forget_names(r->ct);
	record_tokio_writer(r);
	trace_writer__free(old);
	r->next_seal = now + r->seg_period;
}

/* Seal the open segment, and go on in the next one. */
static void seg_roll(struct rec *r, uint64_t now)
{
	record_seg_seal(r, now);
	seg_next(r, now);
}

/* A flight recorder's memory: the livestate and the open spans as large
 * as its segments allow (each segment's STATE and SPAN_STATE carry what
 * is open, 48 bytes an entry before compression, in under a tenth of
 * the open segment's share each). */
void record_bound_memory(struct rec *r)
{
	const struct record_opts *o = r->o;
	int bounded = o->segments == RECORD_FLIGHT && o->max_size;

	if (r->ss)
		spanstate__set_max_bytes(
			r->ss, bounded ? (size_t)(FLIGHT_OPEN(o->max_size) / 10) : 0);
	r->state_max = LIVESTATE_MAX;
	if (!r->ls)
		return;
	if (o->segments == RECORD_FLIGHT && o->max_size) {
		uint64_t n = FLIGHT_OPEN(o->max_size) / 10 / 48;

		r->state_max = n < 1024		   ? 1024
			       : n > LIVESTATE_MAX ? LIVESTATE_MAX
						   : (size_t)n;
	}
	livestate__set_max(r->ls, r->state_max);
}

/* After a ring is drained: a flight recorder's open segment past its
 * share of --max-size is sealed now, not at the tick's end (a drain adds
 * at most a ring's records, a chunk or two written to the segment). */
void record_bound_open(struct rec *r)
{
	uint64_t open, held;

	if (!r->fl || r->o->segments != RECORD_FLIGHT || !r->o->max_size)
		return;
	held = flight__bytes(r->fl, &open);
	if (held > r->st->held_max)
		r->st->held_max = held;
	if (open > r->seg_base + FLIGHT_OPEN(r->o->max_size))
		seg_roll(r, record_now_ns());
}

/* Seal the open segment and write the window ending @now (flight). */
void record_dump(struct rec *r, uint64_t now, const char *why, int last)
{
	struct flight_dump d;
	char both[sizeof(r->dump_why) + 64];
	int err;

	/* a trigger's dump still due: the last one holds it, and says so */
	if (last && r->dump_at) {
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_DUMP_REASON, r->dump_why));
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_DUMP_REASON, why));
		snprintf(both, sizeof(both), "%s; %s", why, r->dump_why);
		why = both;
		r->dump_at = 0;
	} else {
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_DUMP_REASON, why));
	}
	if (last)
		record_seg_seal(r, now);
	else
		seg_roll(r, now);
	if (r->err)
		return;
	err = flight__dump(r->fl, now, time(NULL), &d);
	if (err) {
		r->st->dump_failures++;
		record_log(r, RECORD_WARN, "cannot write the dump (%s) to %s: %s", why,
			   r->o->dir, strerror(-err));
		return;
	}
	r->st->dumps++;
	r->st->dumps_deleted += d.deleted;
	/* a window shorter than asked, said: what fits --max-size is less */
	if (r->o->segments == RECORD_FLIGHT && d.to > d.from && d.to > r->start_ns &&
	    (double)(d.to - r->start_ns) > r->o->window * 1e9 &&
	    (double)(d.to - d.from) < r->o->window * 0.8e9)
		record_log(
			r, RECORD_WARN,
			"the dump holds %.2f s, not the %.1f s of --flight: --max-size "
			"holds no more at this rate (raise it)",
			(double)(d.to - d.from) / 1e9, r->o->window);
	if (r->o->on_dump) {
		struct record_dump rd = {.path = d.path,
					 .from = d.from,
					 .to = d.to,
					 .segments = d.segments,
					 .bytes = d.bytes,
					 .why = why,
					 .key = d.key,
					 .fd = d.fd};

		r->o->on_dump(r->o->ctx, &rd);
	}
	if (d.fd >= 0)
		close(d.fd);
}

const char *record_trigger_name(const struct record_trigger *t, char *buf, size_t len)
{
	static const char *const names[] = {
		[RECORD_TRIGGER_POLL] = "poll",
		[RECORD_TRIGGER_DELAY] = "delay",
		[RECORD_TRIGGER_RUNQ] = "runq",
		[RECORD_TRIGGER_SPAN] = "span",
		[RECORD_TRIGGER_LOST_WAKER] = "lost-waker",
		[RECORD_TRIGGER_SELF_WAKES] = "self-wakes",
		[RECORD_TRIGGER_NO_YIELD] = "never-yielded",
		[RECORD_TRIGGER_LEAK] = "task-leak",
	};
	const char *name =
		(unsigned int)t->kind < sizeof(names) / sizeof(names[0]) && names[t->kind]
			? names[t->kind]
			: "?";

	if (t->kind >= RECORD_TRIGGER_LOST_WAKER)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s%s%s>%gms", name, t->span[0] ? ":" : "", t->span,
			 (double)t->ns / 1e6);
	return buf;
}

/* The wall-clock time of day of CLOCK_MONOTONIC @mono, "14:02:33.120"
 * (local time): what a dump's reason says, on no one recording's axis. */
static char *wall_time(uint64_t mono, char *buf, size_t len)
{
	int64_t ns = (int64_t)mono + record_realtime_offset_ns();
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;

	if (ns < 0 || !localtime_r(&secs, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + strlen(buf), len - strlen(buf), ".%03d",
			 (int)(ns % 1000000000 / 1000000));
	return buf;
}

/* "name[tid]" of thread @tid of the target, or "[tid]" (its comm, as the
 * kernel has it now). */
static char *thread_label(const struct rec *r, uint32_t tid, char *buf, size_t len)
{
	char path[64], comm[32] = "";
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)r->o->pid, tid);
	n = record_read_file(path, comm, sizeof(comm), 0);
	while (n && (comm[n - 1] == '\n' || comm[n - 1] == '\0'))
		comm[--n] = '\0';
	snprintf(buf, len, "%s[%u]", comm, tid);
	return buf;
}

/* "ID name" of task @task (its name from the shim's table), or "ID". */
static char *task_label(const struct rec *r, uint64_t task, char *buf, size_t len)
{
	char name[D9_NAME_MAX + 1];

	if (r->seg && !d9_name_table_get(shim_seg__base(r->seg), shim_seg__layout(r->seg),
					 task, name, sizeof(name)))
		snprintf(buf, len, "%llu %s", (unsigned long long)task, name);
	else
		snprintf(buf, len, "%llu", (unsigned long long)task);
	return buf;
}

/* The first trigger of @kind (among @mask's bits) that @ns is over (a
 * detector's: any): a dump half a window after @at, so that it holds as
 * much before the event as after, unless one is due or that trigger
 * cools down. @what and @ns (if a length) its reason. */
static void trigger(struct rec *r, enum record_trigger_kind kind, unsigned int mask,
		    uint64_t ns, uint64_t at, const char *what)
{
	const struct record_opts *o = r->o;
	uint64_t cool = (uint64_t)((o->cooldown > 0 ? o->cooldown : o->window) * 1e9);
	unsigned int i, hot = RECORD_MAX_TRIGGERS;
	char when[32], name[96], len[32] = "";

	if (r->dump_at)
		return; /* the dump due holds this one too */
	for (i = 0; i < o->ntriggers; i++) {
		if (o->triggers[i].kind != kind || !(mask & 1u << i) ||
		    (kind < RECORD_TRIGGER_LOST_WAKER && ns <= o->triggers[i].ns))
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
	if (kind < RECORD_TRIGGER_LOST_WAKER)
		snprintf(len, sizeof(len), " %.1f ms", (double)ns / 1e6);
	snprintf(r->dump_why, sizeof(r->dump_why), "trigger %s: %s%s at %s",
		 record_trigger_name(&o->triggers[i], name, sizeof(name)), what, len,
		 wall_time(at, when, sizeof(when)));
	r->dump_at = at + (uint64_t)(o->window * 1e9 / 2);
	r->cooldown_until[i] = at + cool;
	r->st->trigger_dumps[i]++;
	record_log(r, RECORD_INFO, "%s: dumping in %.1f s", r->dump_why,
		   r->dump_at > record_now_ns()
			   ? (double)(r->dump_at - record_now_ns()) / 1e9
			   : 0.0);
}

/* The detectors' finds, once a second */
#define DETECT_NS 1000000000ULL

static void check_triggers(struct rec *r, uint64_t now)
{
	struct livestate_hit h;
	struct record_find f[4];
	uint32_t tid;
	uint64_t at, ns;
	char what[192], task[96], thr[48];

	if (!r->o->ntriggers)
		return;
	if (livestate__hit(r->ls, &h)) {
		snprintf(what, sizeof(what), "task %s %s on thread %s",
			 task_label(r, h.task, task, sizeof(task)),
			 h.kind == LIVESTATE_POLL ? "polled" : "waited for its poll",
			 thread_label(r, h.tid, thr, sizeof(thr)));
		trigger(r,
			h.kind == LIVESTATE_POLL ? RECORD_TRIGGER_POLL
						 : RECORD_TRIGGER_DELAY,
			~0u, h.ns, h.time, what);
	}
	if (r->oc && offcpu_rec__runq_hit(r->oc, &tid, &at, &ns)) {
		snprintf(what, sizeof(what), "thread %s waited for a CPU",
			 thread_label(r, tid, thr, sizeof(thr)));
		trigger(r, RECORD_TRIGGER_RUNQ, ~0u, ns, at, what);
	}
	if (r->o->detect && now >= r->next_detect) {
		size_t n =
			r->o->detect(r->o->polling_ctx, now, f, sizeof(f) / sizeof(f[0]));

		r->next_detect = now + DETECT_NS;
		for (size_t i = 0; i < n; i++)
			trigger(r, f[i].kind, ~0u, 0, f[i].at, f[i].what);
	}
}

/* Open spans a span trigger watches at most: the rest are not watched
 * (a target that opens spans and never closes them costs no more). */
#define SPAN_OPEN_MAX 65536

void record_span_new(struct rec *r, uint64_t id, const char *name, uint64_t t0)
{
	unsigned int mask = 0;
	uint64_t *v;

	for (unsigned int i = 0; i < r->o->ntriggers; i++)
		if ((r->span_triggers & 1u << i) &&
		    (!r->o->triggers[i].span[0] ||
		     (name && !strcmp(name, r->o->triggers[i].span))))
			mask |= 1u << i;
	if (!mask) {
		/* an id created again: the span before it is not watched */
		if (lib_map_find(&r->span_open, id))
			lib_map_del(&r->span_open, id);
		return;
	}
	if (lib_map_count(&r->span_open) >= SPAN_OPEN_MAX &&
	    !lib_map_find(&r->span_open, id))
		return;
	v = lib_map_get(&r->span_open, id, NULL);
	if (v)
		*v = (t0 & ~0xffULL) | mask;
}

void record_span_close(struct rec *r, uint64_t id, uint64_t t)
{
	uint64_t *v = lib_map_find(&r->span_open, id), t0;
	unsigned int mask;
	char what[96];

	if (!v)
		return;
	t0 = *v & ~0xffULL;
	mask = (unsigned int)(*v & 0xff);
	lib_map_del(&r->span_open, id);
	if (t <= t0)
		return;
	snprintf(what, sizeof(what), "span %llu lasted", (unsigned long long)id);
	trigger(r, RECORD_TRIGGER_SPAN, mask, t - t0, t, what);
}

/* Limits for the triggers, where they are seen. */
void record_arm_triggers(struct rec *r)
{
	uint64_t lim[4] = {0};

	r->span_triggers = 0;
	for (unsigned int i = 0; i < r->o->ntriggers; i++) {
		const struct record_trigger *t = &r->o->triggers[i];

		if (t->kind == RECORD_TRIGGER_SPAN)
			r->span_triggers |= 1u << i;

		if (t->kind >= 1 && t->kind <= 3 &&
		    (!lim[t->kind] || t->ns < lim[t->kind]))
			lim[t->kind] = t->ns;
	}
	if (r->ls)
		livestate__set_limits(r->ls, lim[RECORD_TRIGGER_POLL],
				      lim[RECORD_TRIGGER_DELAY]);
	if (r->oc)
		offcpu_rec__set_runq_limit(r->oc, lim[RECORD_TRIGGER_RUNQ]);
}

/* Every tick of a segmented recording: dumps asked for or due, seals due,
 * commands ended. */
void record_segments_tick(struct rec *r, uint64_t now)
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
	check_triggers(r, now);
	if (o->dump_now && *o->dump_now) {
		*o->dump_now = 0;
		if (o->segments == RECORD_FLIGHT)
			record_dump(r, now, "SIGUSR1", 0);
		else
			seg_roll(r, now);
	} else if (r->dump_at && now >= r->dump_at) {
		r->dump_at = 0;
		record_dump(r, now, r->dump_why, 0);
	} else if (now >= r->next_seal ||
		   (o->max_size && open > r->seg_base + FLIGHT_OPEN(o->max_size))) {
		seg_roll(r, now);
	}
	if (flight__reap(r->fl, now, &h))
		record_log(r, RECORD_WARN, "--on-segment: %s", h.why);
	r->st->hook_failures += h.failed;
	r->st->hooks_skipped += h.skipped;
	r->st->hooks_running = h.running + h.waiting;
}
