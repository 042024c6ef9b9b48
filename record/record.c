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
#include <dirent.h>
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
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/offcpu.h"
#include "record/perf.h"
#include "record/ustack.h"
#include "record/pfm_event.h"
#include "record/record.h"
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
#define RECORD_NICE	(-20)		/* the recorder's priority, where it may */
#define SLOW_OPEN_NS	500000000ULL	/* opening events took long: say why */
#define MAPS_NS		1000000000ULL	/* how often to re-read maps */
#define MAX_CHAIN	512
/* Bytes of user stack copied with each CPU sample, for the CFI step that
 * finds the caller of a function without its frame set up (a frameless
 * leaf, libc's memcpy, a prologue): its return address sits within its
 * own small frame, just above the SP (ustack.h). */
#define RECORD_LEAF_STACK 512

struct ring_seen {
	uint64_t gen;
	uint64_t drops;
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
};

static void ctimer_begin(struct rec *r);

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

static void on_fork(void *ctx, uint32_t tid)
{
	struct rec *r = ctx;

	r->st->threads++;
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
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)r->o->pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, sizeof(comm), f)) {
		comm[strcspn(comm, "\n")] = '\0';
		note_err(r, trace_writer__thread(r->w, (uint32_t)tid, comm));
	}
	fclose(f);
}

static void thread_added(void *ctx, pid_t tid)
{
	thread_name(ctx, tid);
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
	note_err(r, trace_writer__meta(r->w, "shim_attached", when));
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
	note_err(r, trace_writer__meta(r->w, "shim_gap", buf));
	return to - from;
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
	note_err(r, trace_writer__meta(r->w, "shim_reattached", buf));
	logf_(r, RECORD_WARN,
	      "the recorder stalled past its %d ms lease and the shim let go: attached "
	      "again; runtime events of the %.3f s gap are lost",
	      (int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
}

/* More drops than this between two drains cannot be real (a ring of
 * D9_SEG_RING_EVENTS drained every tick): the counter was scribbled. */
#define DROPS_MAX (1ULL << 32)

static void drain_ring(struct rec *r, uint32_t idx, struct d9_ring_hdr *ring,
		       uint32_t ring_events)
{
	struct ring_seen *seen = &r->rings[idx];
	char name[sizeof(ring->name) + 1];
	struct trace_event batch[EV_BATCH];
	uint64_t gen, drops;
	uint32_t tid;
	size_t n, i, nb = 0;

	d9_ring_owner(ring, &tid, &gen, name, sizeof(name));
	if (gen != seen->gen) {
		seen->gen = gen;
		seen->drops = 0;
		if (name[0])
			note_err(r, trace_writer__thread(r->w, tid, name));
	}
	n = d9_ring_consume(ring, ring_events, r->evbuf, r->evbuf_len);
	if (n > r->fill_max)
		r->fill_max = n;
	for (i = 0; i < n; i++) {
		const struct d9_event *ev = &r->evbuf[i];
		struct trace_event *te = &batch[nb];
		uint32_t k = 0;

		/* the target wrote this: a record that cannot be one is
		 * dropped and counted, never written */
		if (ev->type < D9_EV_THREAD_START || ev->type > D9_EV_UNPARK) {
			r->st->shim_garbage++;
			continue;
		}
		if (ev->type == D9_EV_SPAWN || ev->type == D9_EV_THREAD_START) {
			char text[D9_NAME_MAX + 1];

			k = ev->arg;
			if (k > n - i - 1)
				k = (uint32_t)(n - i - 1);
			d9_event_text(ev + 1, k, text, sizeof(text));
			if (ev->type == D9_EV_SPAWN && text[0])
				note_err(r, trace_writer__task(r->w, ev->task, text));
			else if (ev->type == D9_EV_THREAD_START && text[0])
				note_err(r, trace_writer__thread(r->w, tid, text));
		}
		te->time = shim_seg__ns(r->seg, ev->time);
		te->task = ev->task;
		te->tid = tid;
		te->type = ev->type;
		i += k;
		if (++nb == EV_BATCH) {
			note_err(r, trace_writer__events(r->w, batch, nb));
			r->st->events += nb;
			nb = 0;
		}
	}
	note_err(r, trace_writer__events(r->w, batch, nb));
	r->st->events += nb;
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

static void drain_shim(struct rec *r)
{
	const struct d9_seg_layout *l;
	void *base;
	uint32_t i;

	if (!r->seg)
		return;
	/* samples first: a ring is reaped only once its samples are out too */
	if (r->ct)
		note_err(r, ctimer_rec__drain(r->ct, r->w, &r->st->samples,
					      &r->st->ctimer_drops));
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
	}
}

/* ---- meta -------------------------------------------------------------- */

static void read_small(const char *path, char *buf, size_t len, int nul_to_space)
{
	FILE *f = fopen(path, "re");
	size_t n = 0, i;

	buf[0] = '\0';
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (i = 0; nul_to_space && i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[strcspn(buf, "\n")] = '\0';
}

static void write_meta(struct rec *r)
{
	struct utsname u;
	char path[64], buf[1024];

	snprintf(buf, sizeof(buf), "%d", (int)r->o->pid);
	note_err(r, trace_writer__meta(r->w, "pid", buf));
	if (r->o->cmdline) {
		note_err(r, trace_writer__meta(r->w, "cmdline", r->o->cmdline));
	} else {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)r->o->pid);
		read_small(path, buf, sizeof(buf), 1);
		note_err(r, trace_writer__meta(r->w, "cmdline", buf));
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)r->o->pid);
	read_small(path, buf, sizeof(buf), 0);
	note_err(r, trace_writer__meta(r->w, "comm", buf));
	if (uname(&u) == 0) {
		note_err(r, trace_writer__meta(r->w, "hostname", u.nodename));
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		note_err(r, trace_writer__meta(r->w, "kernel", buf));
	}
	note_err(r, trace_writer__meta(r->w, "event", r->st->event_name));
	note_err(r, trace_writer__meta(r->w, "sampler", r->st->sampler));
	snprintf(buf, sizeof(buf), "%u", r->o->freq);
	note_err(r, trace_writer__meta(r->w, "frequency", buf));
	note_err(r, trace_writer__meta(r->w, "clock", "CLOCK_MONOTONIC"));
	note_err(r, trace_writer__meta(r->w, "offcpu", r->st->offcpu));
	if (r->st->wakeups[0])
		note_err(r, trace_writer__meta(r->w, "wakeups", r->st->wakeups));
	note_err(r, trace_writer__meta(r->w, "recorder", "d9prof " "0.1.0"));
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

	read_small("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf), 0);
	return buf[0] ? atoi(buf) : -1;
}

/* Open the sampling events on every thread: the requested event, or
 * "cycles" falling back to "cpu-clock" without a PMU; kernel callchains
 * unless refused. */
static int open_sampler(struct rec *r)
{
	const char *name = r->o->event ? r->o->event : "cycles";
	struct event_spec ev;
	int err, exclude_kernel = 0;

	err = event_encode(name, &ev);
	if (err) {
		snprintf(r->st->why, sizeof(r->st->why),
			 "unknown event '%s' (see 'perf list' for names)", name);
		/* a name the user typed wrong is an error, never a reason to
		 * fall back to another sampler */
		return r->o->event ? -EINVAL : err;
	}
	for (;;) {
		r->ps = perf_set__new(&ev, r->o->freq, exclude_kernel,
				      r->o->cpu_fp_only ? 0
				      : r->o->cpu_stack ? r->o->cpu_stack
							: RECORD_LEAF_STACK);
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
			if (event_encode(name, &ev))
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
					    r->o->cpu_fp_only ? NULL : r->sym, &r->leaf, &r->ct));
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
	note_err(r, trace_writer__meta(r->w, "sampler", r->st->sampler));
	note_err(r, trace_writer__meta(r->w, "event", r->st->event_name));
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

static void offcpu_summary(struct rec *r)
{
	const struct offcpu_rec_stats *c = &r->ocst;
	char buf[64];

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
	r->st->wake_lost = c->wake_lost;
	meta_count(r, "wakeups lost", c->wake_lost);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->switches);
	note_err(r, trace_writer__meta(r->w, "offcpu switches", buf));
	snprintf(buf, sizeof(buf), "%llu/%llu", (unsigned long long)c->ustack.complete,
		 (unsigned long long)c->ustack.stacks);
	note_err(r, trace_writer__meta(r->w, "offcpu stacks complete", buf));
	meta_count(r, "offcpu lost", c->lost);
	meta_count(r, "offcpu unpaired", c->unpaired);
}

/* How the CPU samples' user stacks were put together (ustack.h). */
static void leaf_summary(struct rec *r)
{
	const struct ustack_stats *u = &r->leaf;
	char buf[64];

	r->st->cpu_stacks = u->stacks;
	r->st->cpu_recovered = u->recovered;
	r->st->cpu_unwind_s = (double)u->unwind_ns / 1e9;
	if (!u->stacks)
		return;
	snprintf(buf, sizeof(buf), "%llu/%llu", (unsigned long long)u->recovered,
		 (unsigned long long)u->stacks);
	note_err(r, trace_writer__meta(r->w, "cpu callers recovered by CFI", buf));
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

static int nice_before = INT_MIN;	/* record_boost() changed it from this */

void record_boost(void)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, 0);
	if (!errno && n > RECORD_NICE && !setpriority(PRIO_PROCESS, 0, RECORD_NICE))
		nice_before = n;
}

void record_unboost(void)
{
	if (nice_before != INT_MIN)
		setpriority(PRIO_PROCESS, 0, nice_before);
	nice_before = INT_MIN;
}

/* One event per (thread, CPU) and kind, plus the system-wide ones: say
 * before opening anything when the fd limit cannot hold them. 0 or
 * -EMFILE with why in st. */
static int fd_budget(struct rec *r)
{
	const struct record_opts *o = r->o;
	uint64_t threads = 0, per = 0, need;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct rlimit rl;
	struct dirent *de;
	char path[64];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)o->pid);
	d = opendir(path);
	if (!d || getrlimit(RLIMIT_NOFILE, &rl))
		return d ? closedir(d), 0 : 0;
	while ((de = readdir(d)))
		threads += de->d_name[0] != '.';
	closedir(d);
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

int record__run(const struct record_opts *o, struct record_stats *st)
{
	struct rec r = { .o = o, .st = st };
	struct trace_counters c;
	uint64_t now, end_ns = 0, last_flush, last_look, last_maps, last_drain;
	uint64_t last_progress, tick = TICK_NS, t0;
	int pidfd = -1, until_fd = -1, close_go = -1, err;
	unsigned int maxpfd = 2 + 4 * (unsigned int)sysconf(_SC_NPROCESSORS_CONF);
	struct pollfd *pfd;

	memset(st, 0, sizeof(*st));
	r.cb = perf_cb_tmpl;
	r.cb.ctx = &r;
	raise_fd_limit();
	if (kill(o->pid, 0) && errno == ESRCH) {
		snprintf(st->why, sizeof(st->why), "no such process");
		return -ESRCH;
	}
	err = fd_budget(&r);
	if (err)
		return err;
	err = symbolizer__new(o->pid, &r.sym);
	if (err) {
		if (!not_ours(o->pid, err, st->why, sizeof(st->why)))
			snprintf(st->why, sizeof(st->why), "cannot read its mappings: %s",
				 err == -ESRCH ? "no such process" : strerror(-err));
		return err;
	}
	pfd = calloc(maxpfd, sizeof(*pfd));
	if (!pfd) {
		symbolizer__free(r.sym);
		return -ENOMEM;
	}
	r.w = trace_writer__new(o->out_fd);
	if (!r.w) {
		err = -errno;
		snprintf(st->why, sizeof(st->why), "cannot start the trace: %s",
			 strerror(errno));
		goto out;
	}
	pidfd = pidfd_of(o->pid);
	if (o->until_pid > 0) {
		until_fd = pidfd_of(o->until_pid);
		if (until_fd < 0) {
			err = -errno;
			snprintf(st->why, sizeof(st->why), "cannot watch pid %d: %s",
				 (int)o->until_pid, strerror(errno));
			goto out;
		}
	}
	t0 = record_now_ns();
	err = choose_sampler(&r);
	if (err)
		goto out;
	r.start_ns = record_now_ns();
	r.cpu0 = proc_cpu_ns(o->pid);
	if (r.ps)
		logf_(&r, RECORD_INFO, "sampling %s at %u Hz, %u thread%s of pid %d",
		      st->event_name, o->freq, perf_set__nthreads(r.ps),
		      perf_set__nthreads(r.ps) == 1 ? "" : "s", (int)o->pid);
	else
		logf_(&r, RECORD_INFO, "sampling thread CPU time at %u Hz per thread of pid %d",
		      o->freq, (int)o->pid);
	err = open_offcpu(&r);
	if (err)
		goto out;
	shim_try_attach(&r, !o->fresh_target && !r.ctimer);
	if (r.ctimer && !r.seg && !o->fresh_target) {
		err = sampler_tick(&r, r.start_ns + SHIM_EAGER_NS);
		goto out;
	}
	/* every event was opened disabled: start them together, now that
	 * the loop is about to drain them */
	perf_set__enable(r.ps);
	offcpu_rec__enable(r.oc);
	now = record_now_ns();
	if ((r.ps || r.oc) && now - t0 > SLOW_OPEN_NS)
		logf_(&r, RECORD_INFO,
		      "opening the events took %.1f s: the kernel waits for RCU grace periods "
		      "at the first per-thread event and the first of a tracepoint, slow "
		      "while the target keeps every CPU busy", (double)(now - t0) / 1e9);
	if (o->on_attached && (err = o->on_attached(o->ctx)))
		goto out;
	write_meta(&r);
	/* -d counts from here: every event is open and enabled (opening
	 * them can take seconds on a busy machine) */
	if (o->duration > 0)
		end_ns = record_now_ns() + (uint64_t)(o->duration * 1e9);
	last_flush = last_look = last_maps = last_drain = last_progress = r.start_ns;

	while (!*o->stop) {
		/* the target's pidfd (or none: kill(0) below), until's, and
		 * the perf rings, which wake us once a quarter full */
		struct timespec ts = { .tv_sec = (time_t)(tick / 1000000000ULL),
				       .tv_nsec = (long)(tick % 1000000000ULL) };
		int exited = 0, until = 0, lapsed;
		unsigned int npfd = 0;

		if (pidfd >= 0)
			pfd[npfd++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		if (until_fd >= 0)
			pfd[npfd++] = (struct pollfd){.fd = until_fd, .events = POLLIN};
		npfd += perf_set__pollfds(r.ps, pfd + npfd, maxpfd - npfd);
		npfd += offcpu_rec__pollfds(r.oc, pfd + npfd, maxpfd - npfd);
		if (ppoll(pfd, npfd, &ts, NULL) > 0) {
			exited = pidfd >= 0 && pfd[0].revents;
			until = until_fd >= 0 && pfd[pidfd >= 0].revents;
		}
		if (pidfd < 0 && kill(o->pid, 0) && errno == ESRCH)
			exited = 1;
		if (r.ps)
			perf_set__drain(r.ps, &r.cb);
		if (r.oc)
			note_err(&r, offcpu_rec__drain(r.oc));
		/* renew first: it also takes the clock pair that what is
		 * drained next is converted against */
		lapsed = r.seg && shim_seg__renew(r.seg) == -ETIMEDOUT;
		drain_shim(&r);
		if (lapsed)
			shim_reattach(&r);
		now = record_now_ns();
		tick = next_tick(&r, tick, now - last_drain);
		last_drain = now;
		if (!exited && (r.sampler_err = sampler_tick(&r, now)))
			break;
		if (!r.seg && !exited && (now - r.start_ns < SHIM_EAGER_NS ||
				     now - last_look >= SHIM_LOOK_NS)) {
			last_look = now;
			shim_try_attach(&r, 0);
		}
		if (!exited && now - last_maps >= MAPS_NS) {
			last_maps = now;
			symbolizer__refresh(r.sym);
		}
		if (now - last_flush >= FLUSH_NS) {
			last_flush = now;
			note_err(&r, trace_writer__flush(r.w));
		}
		if (o->progress && now - last_progress >= RECORD_PROGRESS_NS) {
			last_progress = now;
			progress(&r, now);
		}
		if (r.err)
			break;
		if (exited) {
			st->target_exited = 1;
			break;
		}
		if (until || (end_ns && now >= end_ns))
			break;
	}
	/* Last words: what is still in the rings belongs in the trace; the
	 * events stop first, and are closed in the background
	 * (perf_close_later) */
	perf_set__disable(r.ps);
	offcpu_rec__disable(r.oc);
	if (r.ps)
		perf_set__drain(r.ps, &r.cb);
	if (r.oc) {
		note_err(&r, offcpu_rec__finish(r.oc));
		offcpu_summary(&r);
	}
	/* a last clock pair for the last drains; a lease that lapsed since the
	 * loop's last renew (stalled then, -d ran out meanwhile) leaves a gap
	 * to the end */
	if (r.seg && shim_seg__renew(r.seg) == -ETIMEDOUT) {
		uint64_t gap = shim_gap(&r, record_now_ns());

		logf_(&r, RECORD_WARN,
		      "the recorder stalled past its %d ms lease and the shim let go before "
		      "the end: runtime events of its last %.3f s are lost",
		      (int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
	}
	drain_shim(&r);
	if (r.seg) {
		struct d9_seg_hdr *h = shim_seg__base(r.seg);
		uint64_t x = __atomic_load_n(&h->rings_exhausted, __ATOMIC_RELAXED);

		/* threads that found no ring slot: their events never came
		 * (the target writes this counter: a silly value is not one) */
		if (x > r.rings_exhausted0 && x - r.rings_exhausted0 < (1ULL << 32)) {
			st->no_ring_threads = x - r.rings_exhausted0;
			meta_count(&r, "threads without a ring", st->no_ring_threads);
		}
		shim_seg__detach(r.seg);
	}
	drain_shim(&r);
	now = record_now_ns();
	st->seconds = (double)(now - r.start_ns) / 1e9;
	if (!st->shim && !r.shim_warned)
		logf_(&r, RECORD_WARN, "no d9prof shim found in pid %d: no task ids in "
		      "this trace (link libd9prof and call d9_init() in the target)",
		      (int)o->pid);
	if (r.ps || r.oc)
		close_go = perf_close_later();
	write_build_ids(&r);
	meta_count(&r, "shim garbage", st->shim_garbage);
	meta_count(&r, "child samples left out", st->child_samples);
	meta_count(&r, "ctimer samples dropped", st->ctimer_drops);
	memset(&c, 0, sizeof(c));
	c.samples = st->samples;
	c.events = st->events;
	c.lost_samples = st->lost_samples;
	c.shim_drops = st->shim_drops;
	c.start_time = r.start_ns;
	c.end_time = now;
	leaf_summary(&r);
	if (!r.err)
		r.err = trace_writer__finish(r.w, symbolizer__resolve, r.sym, &c);
	st->frames = trace_writer__nframes(r.w);
	unreadable_modules(&r);
	err = r.err;
	if (err)
		snprintf(st->why, sizeof(st->why), "cannot write the trace: %s",
			 strerror(-err));
	else
		err = r.sampler_err;
out:
	if (pidfd >= 0)
		close(pidfd);
	if (until_fd >= 0)
		close(until_fd);
	ctimer_rec__free(r.ct);
	shim_seg__close(r.seg);
	free(r.rings);
	free(r.evbuf);
	offcpu_rec__free(r.oc);
	perf_set__free(r.ps);
	if (close_go >= 0)
		close(close_go);	/* our copies are closed: go */
	free(pfd);
	trace_writer__free(r.w);
	symbolizer__free(r.sym);
	return err;
}
