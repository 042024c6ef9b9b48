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
 *
 * This file is the loop, the sampler, off-CPU and the meta; the shim's
 * side is record_drain.c and the segments record_segments.c, all on one
 * struct rec (record_int.h).
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
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/exitwatch.h"
#include "record/flight.h"
#include "record/livestate.h"
#include "record/offcpu.h"
#include "record/perf.h"
#include "record/bpf/sched.h"
#include "record/ustack.h"
#include "record/pfm_event.h"
#include "record/command.h"
#include "record/proc.h"
#include "record/record_int.h"
#include "record/tokio_rec.h"
#include "symbol/tokio.h"
#include "record/segment.h"
#include "record/symcache.h"
#include "record/tids.h"
#include "symbol/symbolize.h"
#include "trace/trace.h"

void record_log(struct rec *r, enum record_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void record_log(struct rec *r, enum record_log_level lvl, const char *fmt, ...)
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

void record_note_err(struct rec *r, int err)
{
	if (err && !r->err)
		r->err = err;
}

/* ---- perf records ---------------------------------------------------- */

/* A CPU sample of thread @tid at @time, its stack @ips (@n); @raw: the
 * task the sampler's BPF read in the thread (a tag of tokio_rec, or the
 * tick's; TOKIO_BPF_SHIM_TASK: the shim's, lean mode), 0 none */
static void put_sample(struct rec *r, uint32_t tid, uint64_t time, const uint64_t *ips,
		       unsigned int n, uint16_t sampler, uint64_t raw)
{
	struct trace_sample ts = {
		.time = time, .tid = tid, .weight = 1, .sampler = sampler};
	int err = 0;

	record_note_err(r, trace_writer__stack(r->w, ips, n, &ts.stack));
	if (raw & TOKIO_BPF_SHIM_TASK)
		ts.task = raw & ~TOKIO_BPF_SHIM_TASK;
	else if (r->tr)
		ts.task = tokio_rec__task(r->tr, raw, ts.stack, &err);
	record_note_err(r, err);
	record_note_err(r, trace_writer__sample(r->w, &ts));
	r->st->samples++;
}

static void on_sample(void *ctx, const struct perf_sample *s)
{
	struct rec *r = ctx;
	uint64_t ips[MAX_CHAIN];
	unsigned int n;

	/* inherited events follow forked children too: their samples are
	 * not the target's */
	if (s->pid && s->pid != (uint32_t)r->o->pid && !r->o->children) {
		r->st->child_samples++;
		return;
	}
	n = ustack_chain(r->sym, s, ips, MAX_CHAIN, &r->leaf);
	/* the target's own threads carry tags (its children may run
	 * another program) */
	put_sample(r, s->tid, s->time, ips, n, TRACE_SAMPLER_PERF,
		   r->tr && (!s->pid || s->pid == (uint32_t)r->o->pid)
			   ? tokio_rec__tag(r->tr, s->tid, s->time)
			   : 0);
}

static void on_comm(void *ctx, uint32_t tid, const char *comm)
{
	struct rec *r = ctx;

	record_note_err(r, trace_writer__thread(r->w, tid, comm));
}

static void on_fork(void *ctx, uint32_t pid, uint32_t tid)
{
	struct rec *r = ctx;

	r->st->threads++;
	/* (a namespaced target's rings say its own ids, not these) */
	if (pid == (uint32_t)r->o->pid && r->tids && !r->inner)
		tids__add(r->tids, tid);
}

static void on_mmap(void *ctx, uint64_t start, uint64_t len, uint64_t pgoff, uint64_t dev,
		    uint64_t ino, uint32_t prot, const char *path)
{
	struct rec *r = ctx;

	/* the symbolizer keeps what it can name (files, the vDSO: an
	 * exec's is known from here alone once the command has exited) */
	if (prot & 4 /* PROT_EXEC */)
		symbolizer__add_mapping(r->sym, start, start + len, pgoff, dev, ino,
					path);
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
		record_note_err(r, trace_writer__thread(r->w, (uint32_t)tid, comm));
}

void record_thread_added(void *ctx, pid_t tid)
{
	struct rec *r = ctx;

	thread_name(r, tid);
	if (r->tids && !r->inner)
		tids__add(r->tids, (uint32_t)tid);
}

void record_source_live(struct rec *r)
{
	if (!r->live_ns)
		r->live_ns = record_now_ns();
}

/* ---- meta -------------------------------------------------------------- */

/* A number in the trace's meta, no key when it is 0: a loss or exclusion
 * counted (analysis/losses.c reads those), or a setting that is off by
 * default. */
static void meta_count(struct rec *r, const char *key, uint64_t n)
{
	char buf[32];

	if (!n)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n);
	record_note_err(r, trace_writer__meta(r->w, key, buf));
}

void record_meta_gap(struct rec *r, const char *key, uint64_t from, uint64_t to)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%llu-%llu", (unsigned long long)from,
		 (unsigned long long)to);
	record_note_err(r, trace_writer__meta(r->w, key, buf));
}

void record_write_meta(struct rec *r)
{
	struct utsname u;
	char path[64], buf[1024];

	snprintf(buf, sizeof(buf), "%d", (int)r->o->pid);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_PID, buf));
	if (!proc_identity(r->o->pid, buf, sizeof(buf)))
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_PROCESS, buf));
	if (r->o->cmdline) {
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_CMDLINE, r->o->cmdline));
	} else {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)r->o->pid);
		record_read_file(path, buf, sizeof(buf), 1);
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_CMDLINE, buf));
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)r->o->pid);
	record_read_file(path, buf, sizeof(buf), 0);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_COMM, buf));
	if (uname(&u) == 0) {
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_HOSTNAME, u.nodename));
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_KERNEL, buf));
	}
	/* the store layout's names, for the tables exported from the trace */
	if (r->o->service)
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_SERVICE, r->o->service));
	if (r->o->host)
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_STORE_HOST, r->o->host));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_EVENT, r->st->event_name));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SAMPLER, r->st->sampler));
	if (r->ps && r->st->callgraph[0]) {
		snprintf(buf, sizeof(buf), "%s,%u", r->st->callgraph, r->st->cpu_stack);
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_CALL_GRAPH, buf));
	}
	snprintf(buf, sizeof(buf), "%u", r->o->freq);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_FREQUENCY, buf));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_CLOCK, "CLOCK_MONOTONIC"));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_OFFCPU, r->st->offcpu));
	if (r->oc)
		meta_count(r, TRACE_META_OFFCPU_MIN, r->o->offcpu_min_ns);
	if (r->st->wakeups[0])
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_WAKEUPS, r->st->wakeups));
	if (r->st->holders[0])
		record_note_err(r, trace_writer__meta(r->w, TRACE_META_RUNQ_HOLDERS,
						      r->st->holders));
	if (r->st->tokio[0])
		record_note_err(r,
				trace_writer__meta(r->w, TRACE_META_TOKIO, r->st->tokio));
	if (r->st->tokio_probes)
		record_note_err(r,
				trace_writer__meta(r->w, TRACE_META_TOKIO_PROBES, "on"));
	record_note_err(
		r, trace_writer__meta(r->w, TRACE_META_RECORDER, "d9prof " D9_VERSION));
}

/* Executable mappings of a module named in its meta, at most */
#define MAPS_PER_MODULE 8

void record_write_build_ids(struct rec *r)
{
	size_t i, k, n = symbolizer__nmodules(r->sym);

	for (i = 0; i < n; i++) {
		const char *path, *id;
		uint64_t start, end, pgoff;
		char key[512], val[MAPS_PER_MODULE * 52];
		size_t len = 0;

		if (symbolizer__module(r->sym, i, &path, &id))
			continue;
		if (id[0]) {
			snprintf(key, sizeof(key), TRACE_META_BUILDID_PFX "%s", path);
			record_note_err(r, trace_writer__meta(r->w, key, id));
		}
		for (k = 0; k < MAPS_PER_MODULE &&
			    !symbolizer__module_map(r->sym, i, k, &start, &end, &pgoff);
		     k++)
			len += (size_t)snprintf(val + len, sizeof(val) - len,
						"%s%" PRIx64 " %" PRIx64 " %" PRIx64,
						k ? " " : "", start, end, pgoff);
		if (k) {
			snprintf(key, sizeof(key), TRACE_META_MAP_PFX "%s", path);
			record_note_err(r, trace_writer__meta(r->w, key, val));
		}
	}
}

/* ---- opening the sampler ----------------------------------------------- */

static int is_no_pmu(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL;
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
	struct perf_event_attr a;
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
		perf_sampler_attr(&ev, r->o->freq, exclude_kernel, &a);
		ustack_attr(&a, stack);
		err = perf_set__new_attr(&a, 0, &r->ps);
		if (err)
			return err;
		/* no event open yet: each gets the program as it opens */
		if (r->tr)
			perf_set__set_bpf(r->ps, tokio_rec__prog_fd(r->tr));
		err = perf_set__add_process(r->ps, r->o->pid, record_thread_added, r);
		if (err > 0)
			break;
		perf_set__free(r->ps);
		r->ps = NULL;
		if (err == 0)
			err = -ESRCH;
		if (!r->o->event && is_no_pmu(err) && strcmp(name, "cpu-clock")) {
			record_log(r, RECORD_INFO,
				   "no hardware PMU here ('%s': %s): sampling cpu-clock",
				   name, strerror(-err));
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
			snprintf(
				r->st->why, sizeof(r->st->why),
				"perf_event_open refused (%s; kernel.perf_event_paranoid=%d): "
				"run as root or the target's owner with "
				"'sysctl kernel.perf_event_paranoid=1'",
				strerror(-err), paranoid_level());
		else if (err == -ESRCH)
			snprintf(r->st->why, sizeof(r->st->why), "no such process");
		else
			snprintf(r->st->why, sizeof(r->st->why), "cannot sample '%s': %s",
				 name, strerror(-err));
		return err;
	}
	if (exclude_kernel)
		record_log(
			r, RECORD_WARN,
			"kernel stacks unavailable (kernel.perf_event_paranoid=%d): "
			"user stacks only; set it to 1 or run as root for kernel frames",
			paranoid_level());
	snprintf(r->st->event_name, sizeof(r->st->event_name), "%s", name);
	r->st->threads = (uint64_t)err;
	return 0;
}

/* ---- the sampler: perf_event, or the shim's ctimer (record/ctimer_rec.c) -- */

void record_ctimer_begin(struct rec *r)
{
	if (!r->ct)
		record_note_err(r, ctimer_rec__new(r->seg, r->o->pid, r->o->freq,
						   r->o->cpu_fp_only ? NULL : r->sym,
						   &r->leaf, r->tids, &r->ct));
}

static void use_ctimer(struct rec *r, const char *why)
{
	r->ctimer = 1;
	snprintf(r->st->sampler, sizeof(r->st->sampler), "ctimer");
	snprintf(r->st->event_name, sizeof(r->st->event_name), "thread-cpu-clock");
	record_log(r, RECORD_INFO,
		   "sampler: ctimer, the shim's per-thread CPU timers (%s)", why);
	record_log(r, RECORD_INFO, "ctimer samples user stacks only: no kernel frames");
	if (r->seg)
		record_ctimer_begin(r);
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
	if (r->o->sampler == RECORD_SAMPLER_TICK) {
		char cpus[128];

		/* taken by the scheduler's programs (open_offcpu) */
		cpu_stack_bytes(r);
		snprintf(r->st->sampler, sizeof(r->st->sampler), "tick");
		snprintf(r->st->event_name, sizeof(r->st->event_name), "tick");
		if (record_read_file("/sys/devices/system/cpu/nohz_full", cpus,
				     sizeof(cpus), 0) &&
		    cpus[0] && cpus[0] != '(')
			record_log(
				r, RECORD_WARN,
				"CPUs %s stop their tick while one thread runs there "
				"(nohz_full): that thread goes unsampled; --sampler perf "
				"samples it",
				cpus);
		return 0;
	}
	err = open_sampler(r);
	if (!err) {
		snprintf(r->st->sampler, sizeof(r->st->sampler), "perf");
		record_log(r, RECORD_INFO, "sampler: perf_event%s",
			   r->o->sampler == RECORD_SAMPLER_AUTO ? " (available)" : "");
		return 0;
	}
	if (r->o->sampler == RECORD_SAMPLER_PERF ||
	    (err != -EACCES && err != -EPERM && err != -ENOSYS && err != -EOPNOTSUPP &&
	     err != -ENOENT))
		return err;
	snprintf(
		why, sizeof(why),
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
			snprintf(r->st->why, sizeof(r->st->why), "ctimer sampler: %.200s",
				 why);
			return err;
		}
		if (threads && !r->ct_said) {
			r->ct_said = 1;
			record_log(r, RECORD_INFO,
				   "ctimer: the shim samples on signal %d",
				   ctimer_rec__signal(r->ct));
		}
		return 0;
	}
	if (r->ctimer) {
		if (now - r->start_ns < SHIM_EAGER_NS)
			return 0;
		snprintf(
			r->st->why, sizeof(r->st->why),
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
		record_log(r, RECORD_WARN,
			   "%s, and it has no d9prof shim for the ctimer sampler", why);
		return 0;
	}
	perf_set__free(r->ps);
	r->ps = NULL;
	use_ctimer(r, why);
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_SAMPLER, r->st->sampler));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_EVENT, r->st->event_name));
	return 0;
}

/* ---- zero-code Tokio ---------------------------------------------------- */

/* The poll probes' cap: off for good past the rate or on a layout not
 * Tokio's (a gap from then on), or where the shim (the d9prof crate) came
 * to mark the polls itself (its records take over: no gap) */
static void tokio_tick(struct rec *r, uint64_t now)
{
	struct tokio_probe_counts pc;
	int why;

	if (r->st->shim && !r->shim_probes_off) {
		r->shim_probes_off = 1;
		tokio_rec__off(r->tr, now, 0);
		record_log(
			r, RECORD_WARN,
			"the d9prof shim marks this target's polls: poll probes off (they "
			"would count its polls twice)");
		return;
	}
	if (!tokio_rec__tick(r->tr, now, &why))
		return;
	tokio_rec__probe_counts(r->tr, &pc);
	r->st->tokio_off_why = why;
	if (why == RECORD_PROBES_OFF_LAYOUT)
		record_log(
			r, RECORD_WARN,
			"poll probes off at %.1f s: most polls' tasks are not laid out "
			"as Tokio %s's; its polls from then on are not recorded",
			(double)(now - r->start_ns) / 1e9, r->st->tokio);
	else
		record_log(
			r, RECORD_WARN,
			"poll probes off at %.1f s: hit %llu times a second (polls and "
			"wakes), over the cap of %llu (--tokio probes=RATE); its polls "
			"from then on are not recorded",
			(double)(now - r->start_ns) / 1e9, (unsigned long long)pc.rate,
			(unsigned long long)r->o->tokio_max_rate);
}

/* --tokio probes: uprobes on Tokio's polls and wakes, records as the
 * shim's; what is in the way is a warning (the tasks stay zero-code's) */
static void open_probes(struct rec *r, const char *path)
{
	struct tokio_sites sites;
	struct tokio_probe_counts pc;
	char why[320];
	int err;

	err = tokio_sites_find(path, &sites, why, sizeof(why));
	if (!err) {
		err = tokio_rec__probe(r->tr, path, &sites, r->o->tokio_max_rate, why,
				       sizeof(why));
		tokio_sites_release(&sites);
	}
	if (err) {
		record_log(r, RECORD_WARN, "no poll probes: %s", why);
		return;
	}
	record_source_live(r);
	tokio_rec__probe_counts(r->tr, &pc);
	r->st->tokio_probes = 1;
	record_log(
		r, RECORD_INFO,
		"poll probes on %llu raw::poll instances and the wakers: about %.1f us "
		"of the target's time a poll here%s",
		(unsigned long long)pc.sites, (double)pc.pair_ns / 1e3,
		r->o->tokio_max_rate ? ", off past the rate cap" : "");
}

/* Lean mode without the sampler's tags: samples fall in the polls
 * written only */
static void lean_untagged(struct rec *r, const char *why)
{
	tokio_rec__free(r->tr);
	r->tr = NULL;
	record_log(r, RECORD_WARN,
		   "--lean: CPU samples cannot carry the task their thread polls (%s): "
		   "those in polls under the threshold count outside polls",
		   why);
}

/* Zero-code Tokio is off: why, said once */
static void tokio_drop(struct rec *r, const char *why)
{
	if (!r->slot.kind && r->o->lean_ns) {
		lean_untagged(r, why);
		return;
	}
	memset(&r->slot, 0, sizeof(r->slot));
	tokio_rec__free(r->tr);
	r->tr = NULL;
	snprintf(r->st->tokio_why, sizeof(r->st->tokio_why), "%s", why);
	record_log(r, RECORD_WARN,
		   "Tokio's task ids cannot be read from outside: %s; recording a "
		   "plain CPU profile",
		   why);
}

/* Where the target is an unmodified Tokio program: its task ids read in
 * its threads at each CPU sample (the sampler's events run
 * record/bpf/tokio_tag.bpf.c, given to each as it opens: open_sampler())
 * and each switch-out (r->slot, for the off-CPU collector). Loaded before
 * the sampler: an event opened without the program would pass it on to
 * the threads the target starts. Anything in the way is a warning: the
 * recording goes on as a plain CPU profile. */
static void load_tokio(struct rec *r)
{
	const struct record_opts *o = r->o;
	char why[256];
	int err;

	err = o->tokio == RECORD_TOKIO_OFF
		      ? -ENOENT
		      : tokio_rec_find(o->pid, o->fresh_target ? o->exe : NULL, &r->slot,
				       r->tokio_version, sizeof(r->tokio_version),
				       r->tokio_path, sizeof(r->tokio_path), why,
				       sizeof(why));
	if (err == -ENOENT) {
		/* not a Tokio program: nothing to say; lean mode's tags
		 * carry the shim's tasks alone */
		memset(&r->slot, 0, sizeof(r->slot));
		if (o->lean_ns && o->sampler != RECORD_SAMPLER_CTIMER &&
		    o->sampler != RECORD_SAMPLER_TICK &&
		    tokio_rec__open(o->pid, &r->slot, 0, &r->tr, why, sizeof(why)))
			lean_untagged(r, why);
		return;
	}
	if (!err && o->sampler == RECORD_SAMPLER_CTIMER) {
		err = -EOPNOTSUPP;
		snprintf(why, sizeof(why), "the ctimer sampler cannot read them");
	}
	if (!err)
		err = tokio_rec__open(o->pid, &r->slot, o->tokio == RECORD_TOKIO_PROBES,
				      &r->tr, why, sizeof(why));
	if (err)
		tokio_drop(r, why);
}

/* With the sampler open: the tags on, or off where it is ctimer; the
 * names, the poll probes */
static void open_tokio(struct rec *r)
{
	struct record_stats *st = r->st;
	int err;

	if (!r->tr)
		return;
	if (!r->ps && !r->slot.kind) {
		/* lean: ctimer samples carry their task themselves */
		tokio_rec__free(r->tr);
		r->tr = NULL;
		return;
	}
	if (!r->ps && r->o->sampler != RECORD_SAMPLER_TICK) {
		tokio_drop(r, "the ctimer sampler cannot read them");
		return;
	}
	/* (the tick's samples carry their task as switch-outs do) */
	err = r->ps ? perf_set__bpf_err(r->ps) : 0;
	if (err) {
		char why[128];

		snprintf(why, sizeof(why), "BPF: cannot run on the sampler's events: %s",
			 strerror(-err));
		tokio_drop(r, why);
		return;
	}
	if (!r->slot.kind)
		return; /* lean mode's tags alone */
	/* its tasks are named from their stacks as they come: each address
	 * resolved once, and once only for the seal too */
	if (!r->sc && (err = symcache__new(symbolizer__resolve, r->sym, &r->sc)))
		record_note_err(r, err);
	record_tokio_writer(r);
	snprintf(st->tokio, sizeof(st->tokio), "%s",
		 r->tokio_version[0] ? r->tokio_version : "unknown");
	record_log(r, RECORD_INFO,
		   "Tokio %s found: task ids read in its threads at each sample and "
		   "switch-out (zero-code)",
		   st->tokio);
	if (r->o->tokio == RECORD_TOKIO_PROBES)
		open_probes(r, r->tokio_path);
}

/* Lean mode, the shim attached: samples and switch-outs carry the task
 * each thread polls, read by BPF where the shim says it keeps it */
void record_lean_tags(struct rec *r)
{
	const struct d9_seg_hdr *h = shim_seg__base(r->seg);
	int64_t off = __atomic_load_n(&h->tls_offset, __ATOMIC_RELAXED);

	/* the target's word: a wrong one reads nothing of ours */
	if (!off || off < -(1LL << 30) || off > (1LL << 30)) {
		record_log(
			r, RECORD_WARN,
			"--lean: the shim does not say where its threads keep their task "
			"(not x86-64?): samples and switches in polls under the threshold "
			"count outside polls");
		return;
	}
	if (r->tr)
		tokio_rec__set_shim(r->tr, off);
	if (r->oc && offcpu_rec__set_shim(r->oc, off))
		record_log(
			r, RECORD_WARN,
			"--lean: off-CPU intervals carry their task only with --sched bpf: "
			"those in polls under the threshold count outside polls");
}

void record_tokio_writer(struct rec *r)
{
	if (r->tr)
		tokio_rec__set_writer(r->tr, r->w,
				      r->sc ? symcache__resolve : symbolizer__resolve,
				      r->sc ? (void *)r->sc : (void *)r->sym);
}

/* An off-CPU interval's task: offcpu_rec_opts.task */
static uint64_t switch_task(void *ctx, uint64_t raw, uint32_t stack)
{
	struct rec *r = ctx;
	int err;
	uint64_t task;

	if (raw & TOKIO_BPF_SHIM_TASK)
		return raw & ~TOKIO_BPF_SHIM_TASK; /* lean: the shim's */
	task = tokio_rec__task(r->tr, raw, stack, &err);
	record_note_err(r, err);
	return task;
}

/* ---- off-CPU ------------------------------------------------------------ */

unsigned int record_tick_hz(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec ||
	    res.tv_nsec <= 0 || res.tv_nsec > 100000000)
		return 0;
	return (unsigned int)((1000000000L + res.tv_nsec / 2) / res.tv_nsec);
}

/* capability @cap in this process's effective set */
static int cap_effective(unsigned int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

int record_tick_usable(void)
{
	return record_tick_hz() && !access("/sys/kernel/btf/vmlinux", R_OK) &&
	       (cap_effective(CAP_SYS_ADMIN) ||
		(cap_effective(CAP_BPF) && cap_effective(CAP_PERFMON)));
}

/* --sampler tick: a sample the scheduler's tick took (offcpu_rec_opts.tick);
 * a thread seen first is named */
static void on_tick(void *ctx, const struct sched_bpf_out *o, const uint64_t *kips,
		    unsigned int nk, const uint64_t *uips, unsigned int nu,
		    const void *stack)
{
	struct rec *r = ctx;
	uint64_t ips[MAX_CHAIN];
	unsigned int n;
	int created = 0;

	if (!lib_map_get(&r->tick_named, o->tid, &created))
		record_note_err(r, -ENOMEM);
	else if (created)
		thread_name(r, (pid_t)o->tid);
	n = ustack_split(r->sym, kips, nk, o->sp, o->fp, stack, o->stack_len, uips, nu,
			 ips, MAX_CHAIN, &r->leaf);
	put_sample(r, o->tid, o->time, ips, n, TRACE_SAMPLER_TICK, o->task);
}

/* Open the off-CPU collector unless it is off. Refused is a warning (CPU
 * samples go on); so is a tracepoint failure in auto mode (the software
 * event takes over). Only a forced source that cannot work is an error. */
static int open_offcpu(struct rec *r)
{
	struct offcpu_rec_opts oo = {
		.sched = r->o->sched == RECORD_SCHED_BPF || r->perf_fds_why[0]
				 ? OFFCPU_SCHED_BPF
			 : r->o->sched == RECORD_SCHED_PERF ||
					 r->o->offcpu != RECORD_OFFCPU_AUTO
				 ? OFFCPU_SCHED_PERF
				 : OFFCPU_SCHED_AUTO,
		.source = r->o->offcpu == RECORD_OFFCPU_TRACEPOINT ? OFFCPU_REC_TRACEPOINT
			  : r->o->offcpu == RECORD_OFFCPU_SWITCH   ? OFFCPU_REC_SWITCH
								   : OFFCPU_REC_AUTO,
		.stack_bytes = r->o->offcpu_fp_only ? 0
			       : r->o->offcpu_stack ? r->o->offcpu_stack
						    : OFFCPU_STACK_DEFAULT,
		.may_mount = 1,
		.wakeups = !r->o->no_wakeups,
		.children = r->o->children,
		.min_ns = r->o->offcpu_min_ns,
		.slot = r->slot,
		.task = r->tr ? switch_task : NULL,
		.task_ctx = r,
		.tick = r->o->sampler == RECORD_SAMPLER_TICK ? on_tick : NULL,
		.tick_stack = r->st->cpu_stack,
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
		record_log(r, RECORD_INFO, "mounted tracefs at %s for sched:sched_switch",
			   r->ocst.tracefs);
	if (err && err != -ESRCH && oo.tick) {
		snprintf(r->st->why, sizeof(r->st->why),
			 "--sampler tick samples in the scheduler's BPF programs: %.180s",
			 why);
		return err;
	}
	if ((err == -EACCES || err == -EPERM) && r->o->sched == RECORD_SCHED_BPF) {
		snprintf(r->st->why, sizeof(r->st->why), "%.250s", why);
		return err;
	}
	if (err && err != -ESRCH && r->perf_fds_why[0]) {
		snprintf(r->st->why, sizeof(r->st->why),
			 "%.100s; %.110s: raise it (ulimit -n) or use --no-offcpu", why,
			 r->perf_fds_why);
		return -EMFILE;
	}
	if (err == -EACCES || err == -EPERM) {
		snprintf(r->st->offcpu, sizeof(r->st->offcpu), "refused");
		record_log(
			r, RECORD_WARN,
			"off-CPU collection refused (kernel.perf_event_paranoid=%d%s%s): "
			"recording CPU samples only; set it to -1 (sched_switch "
			"tracepoint) or 1 (context-switch event), or run as root",
			paranoid_level(), r->ocst.bpf_why[0] ? "; " : "",
			r->ocst.bpf_why);
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
		record_log(r, RECORD_WARN,
			   "wakeups not recorded, so off-CPU time cannot be split into "
			   "blocked and run-queue time: %s",
			   r->ocst.wake_why);
	} else {
		snprintf(r->st->wakeups, sizeof(r->st->wakeups), "%s",
			 r->ocst.wake_source);
	}
	if (r->ocst.holders[0])
		snprintf(r->st->holders, sizeof(r->st->holders), "%s", r->ocst.holders);
	else if (r->ocst.holders_why[0])
		snprintf(r->st->holders, sizeof(r->st->holders), "refused: %s",
			 r->ocst.holders_why);
	if (r->ocst.bpf_why[0])
		record_log(r, RECORD_INFO,
			   "scheduler events from perf_event, not BPF: %s",
			   r->ocst.bpf_why);
	if (!strcmp(r->ocst.source, "bpf"))
		record_log(r, RECORD_INFO,
			   "off-CPU from BPF on sched_switch%s, paired in the kernel",
			   r->o->no_wakeups ? "" : " and sched_waking");
	else if (r->ocst.fallback_why[0])
		record_log(r, RECORD_INFO, "off-CPU from the context-switch event: %s",
			   r->ocst.fallback_why);
	else if (r->ocst.tracefs[0])
		record_log(r, RECORD_INFO,
			   "off-CPU from sched:sched_switch (tracefs at %s)",
			   r->ocst.tracefs);
	else
		record_log(r, RECORD_INFO, "off-CPU from the context-switch event");
	return 0;
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
	r->st->offcpu_unseen_in = c->unseen_in;
	r->st->offcpu_cut_short = c->cut_short;
	r->st->offcpu_not_kept = c->not_kept;
	r->st->offcpu_stacks = c->ustack.stacks;
	r->st->offcpu_complete = c->ustack.complete;
	r->st->offcpu_stack_used = c->ustack.stack_used_max;
	r->st->offcpu_copy_min = c->copy_min;
	r->st->offcpu_unwind_s = (double)c->ustack.unwind_ns / 1e9;
	r->st->runnable = c->runnable;
	r->st->runq_ns = c->runq_ns;
	r->st->held_ns = c->held_ns;
	r->st->wake_lost = c->wake_lost;
	r->st->cpu_stacks = u->stacks;
	r->st->cpu_recovered = u->recovered;
	r->st->cpu_unwind_s = (double)u->unwind_ns / 1e9;
	r->st->tokio_switches = c->tasked;
	if (r->tr) {
		struct tokio_rec_counts k;

		tokio_rec__counts(r->tr, &k);
		r->st->tokio_tagged = k.in_task;
		r->st->tokio_no_task = k.no_task;
		r->st->tokio_untagged = k.untagged;
	}
	if (r->tr && r->st->tokio_probes) {
		struct tokio_probe_counts pc;

		tokio_rec__probe_counts(r->tr, &pc);
		r->st->tokio_polls = pc.polls;
		r->st->tokio_wakes = pc.wakes;
		r->st->tokio_pair_ns = pc.pair_ns;
		r->st->tokio_sites = pc.sites;
		r->st->tokio_off_rate = pc.off_at ? pc.rate : 0;
		r->st->tokio_off_s = pc.off_at > r->start_ns
					     ? (double)(pc.off_at - r->start_ns) / 1e9
					     : 0;
		r->st->tokio_nested = pc.nested;
		r->st->tokio_too_deep = pc.too_deep;
		r->st->tokio_bad_vtable = pc.bad_vtable;
		r->st->tokio_dropped = pc.dropped;
	}
}

/* CPU samples zero-code Tokio found no task tag for so far, and polls its
 * probes did not write, into @b */
static void tokio_losses(const struct rec *r, struct seg_base *b)
{
	struct tokio_rec_counts k = {0};
	struct tokio_probe_counts pc = {0};

	if (r->tr)
		tokio_rec__counts(r->tr, &k);
	if (r->tr && r->st->tokio_probes)
		tokio_rec__probe_counts(r->tr, &pc);
	b->tokio_untagged = k.untagged;
	b->tokio_unwritten =
		pc.nested + pc.too_deep + pc.bad_vtable + pc.dropped + pc.unread;
}

void record_seg_snapshot(struct rec *r, struct seg_base *b)
{
	const struct record_stats *st = r->st;

	*b = (struct seg_base){
		.samples = st->samples,
		.events = st->events,
		.lost_samples = st->lost_samples,
		.shim_drops = st->shim_drops,
		.shim_garbage = st->shim_garbage,
		.no_ring = st->no_ring_threads,
		.state_refused = (r->ls ? livestate__refused(r->ls) : 0) +
				 (r->ss ? spanstate__refused(r->ss) : 0),
		.child_samples = st->child_samples,
		.ctimer_drops = st->ctimer_drops,
		.ctimer_refused = st->ctimer_garbage + st->ctimer_refused,
		.oc_switches = r->ocst.switches,
		.oc_lost = r->ocst.lost,
		.oc_unpaired = r->ocst.unpaired,
		.oc_unseen = r->ocst.unseen_in,
		.oc_not_kept = r->ocst.not_kept,
		.oc_stacks = r->ocst.ustack.stacks,
		.oc_complete = r->ocst.ustack.complete,
		.wake_lost = r->ocst.wake_lost,
		.leaf_stacks = r->leaf.stacks,
		.leaf_recovered = r->leaf.recovered,
	};
	tokio_losses(r, b);
}

/* The open segment's part of every count, as meta (one segment: all). */
void record_seal_meta(struct rec *r)
{
	struct seg_base now, *b = &r->base;
	char buf[64];

	record_count_no_ring(r);
	record_seg_snapshot(r, &now);
	meta_count(r, TRACE_META_SHIM_GARBAGE, now.shim_garbage - b->shim_garbage);
	meta_count(r, TRACE_META_THREADS_WITHOUT_A_RING, now.no_ring - b->no_ring);
	meta_count(r, TRACE_META_OPEN_STATE_REFUSED,
		   now.state_refused - b->state_refused);
	/* the open spans its start lacks, 0 too: a reader takes the first
	 * segment's, the one whose start it uses */
	if (r->ss && r->fl) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->seg_left_out);
		record_note_err(r,
				trace_writer__meta(r->w, TRACE_META_SPANS_LEFT_OUT, buf));
	}
	meta_count(r, TRACE_META_CHILD_SAMPLES_LEFT_OUT,
		   now.child_samples - b->child_samples);
	meta_count(r, TRACE_META_CTIMER_SAMPLES_DROPPED,
		   now.ctimer_drops - b->ctimer_drops);
	meta_count(r, TRACE_META_CTIMER_SAMPLES_REFUSED,
		   now.ctimer_refused - b->ctimer_refused);
	meta_count(r, TRACE_META_TOKIO_UNTAGGED, now.tokio_untagged - b->tokio_untagged);
	meta_count(r, TRACE_META_TOKIO_POLLS_UNWRITTEN,
		   now.tokio_unwritten - b->tokio_unwritten);
	if (r->tr && r->st->tokio_probes) {
		struct tokio_probe_counts pc;

		tokio_rec__probe_counts(r->tr, &pc);
		if (pc.off_at)
			record_meta_gap(r, TRACE_META_TOKIO_PROBES_OFF,
					pc.off_at > r->seg_start ? pc.off_at
								 : r->seg_start,
					record_now_ns());
		record_note_err(r, tokio_rec__writer_err(r->tr));
	}
	if (r->oc) {
		meta_count(r, TRACE_META_WAKEUPS_LOST, now.wake_lost - b->wake_lost);
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)(now.oc_switches - b->oc_switches));
		record_note_err(
			r, trace_writer__meta(r->w, TRACE_META_OFFCPU_SWITCHES, buf));
		snprintf(buf, sizeof(buf), "%llu/%llu",
			 (unsigned long long)(now.oc_complete - b->oc_complete),
			 (unsigned long long)(now.oc_stacks - b->oc_stacks));
		record_note_err(r, trace_writer__meta(
					   r->w, TRACE_META_OFFCPU_STACKS_COMPLETE, buf));
		meta_count(r, TRACE_META_OFFCPU_LOST, now.oc_lost - b->oc_lost);
		meta_count(r, TRACE_META_OFFCPU_UNPAIRED,
			   now.oc_unpaired - b->oc_unpaired);
		meta_count(r, TRACE_META_OFFCPU_UNREPORTED, now.oc_unseen - b->oc_unseen);
		meta_count(r, TRACE_META_OFFCPU_NOT_KEPT,
			   now.oc_not_kept - b->oc_not_kept);
	}
	if (now.leaf_stacks > b->leaf_stacks) {
		snprintf(buf, sizeof(buf), "%llu/%llu",
			 (unsigned long long)(now.leaf_recovered - b->leaf_recovered),
			 (unsigned long long)(now.leaf_stacks - b->leaf_stacks));
		record_note_err(
			r, trace_writer__meta(
				   r->w, TRACE_META_CPU_CALLERS_RECOVERED_BY_CFI, buf));
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
		record_log(r, RECORD_WARN, "%s: %s; its frames are named by file offset",
			   path, why);
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
			res.how = si.si_code == CLD_EXITED ? EXITWATCH_EXITED
							   : EXITWATCH_SIGNALED;
			res.status = si.si_status;
			res.core = si.si_code == CLD_DUMPED;
		}
	}
	if (res.how == EXITWATCH_EXITED)
		snprintf(how, len, "exited with status %d", res.status);
	else if (res.how == EXITWATCH_SIGNALED)
		snprintf(how, len, "killed by %s",
			 exitwatch_describe(&res, buf, sizeof(buf)));
	else if (r->ew || r->o->fresh_target)
		snprintf(how, len,
			 "exited (how is not known: its parent reaped it first, "
			 "and no tracepoint saw it)");
	else
		return; /* not watched: say nothing */
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_TARGET_EXIT, how));
	snprintf(buf, sizeof(buf), "%llu",
		 (unsigned long long)(res.time ? res.time : seen));
	record_note_err(r, trace_writer__meta(r->w, TRACE_META_TARGET_EXIT_TIME, buf));
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
	snprintf(why, len,
		 "it belongs to another user (uid %u); run d9prof as root or as "
		 "its owner",
		 (unsigned int)sb.st_uid);
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
	uint64_t threads, per = 0, perf_oc, base, need;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct rlimit rl;
	int n = proc_for_each_tid(o->pid, NULL, NULL);

	if (n < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	threads = (uint64_t)n;
	per += o->sampler != RECORD_SAMPLER_CTIMER;
	/* off-CPU by perf_event: one more per thread and CPU; by BPF, none */
	perf_oc = o->offcpu != RECORD_OFFCPU_OFF && o->sched != RECORD_SCHED_BPF;
	base = 2 * (uint64_t)ncpus + 64;
	need = threads * (per + perf_oc) * (uint64_t)ncpus + base;
	if (rl.rlim_cur == RLIM_INFINITY || need <= rl.rlim_cur)
		return 0;
	/* auto: BPF needs none of them; perf_event, should BPF be refused,
	 * would not fit (open_offcpu says so then) */
	if (perf_oc && o->sched == RECORD_SCHED_AUTO && o->offcpu == RECORD_OFFCPU_AUTO &&
	    threads * per * (uint64_t)ncpus + base <= rl.rlim_cur) {
		snprintf(
			r->perf_fds_why, sizeof(r->perf_fds_why),
			"perf_event would need about %llu open files for %llu threads, over the "
			"limit of %llu",
			(unsigned long long)need, (unsigned long long)threads,
			(unsigned long long)rl.rlim_cur);
		return 0;
	}
	per += perf_oc;
	snprintf(
		r->st->why, sizeof(r->st->why),
		"pid %d has %llu threads: %llu x %ld CPUs x %llu events needs about %llu open "
		"files, over the limit of %llu (hard limit %llu); raise it (ulimit -n as "
		"root) or record less (--no-offcpu)",
		(int)o->pid, (unsigned long long)threads, (unsigned long long)threads,
		ncpus, (unsigned long long)per, (unsigned long long)need,
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
	uint64_t t0, rd0, now;
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
	err = record_seg_first(r);
	if (err)
		return err;
	record_bound_memory(r);
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
	rd0 = proc_self_run_delay_ns();
	record_boost_if_waiting();
	load_tokio(r);
	record_boost_if_waiting();
	err = choose_sampler(r);
	if (err)
		return err;
	r->opening_ns = r->start_ns = r->seg_start = record_now_ns();
	r->cpu0 = proc_cpu_ns(o->pid);
	if (r->ps)
		record_log(r, RECORD_INFO, "sampling %s at %u Hz, %u thread%s of pid %d",
			   st->event_name, o->freq, perf_set__nthreads(r->ps),
			   perf_set__nthreads(r->ps) == 1 ? "" : "s", (int)o->pid);
	else if (o->sampler == RECORD_SAMPLER_TICK)
		record_log(
			r, RECORD_INFO,
			"sampling at the scheduler's tick (%u Hz) the threads of pid %d "
			"on a CPU (BPF)",
			o->freq, (int)o->pid);
	else
		record_log(r, RECORD_INFO,
			   "sampling thread CPU time at %u Hz per thread of pid %d",
			   o->freq, (int)o->pid);
	record_boost_if_waiting();
	open_tokio(r);
	record_boost_if_waiting();
	err = open_offcpu(r);
	if (err)
		return err;
	now = record_now_ns();
	if ((r->ps || r->oc) && now - t0 > SLOW_OPEN_NS) {
		uint64_t rd = proc_self_run_delay_ns();

		record_log(
			r, RECORD_INFO,
			"opening the events took %.1f s (%.1f s of it waiting for a CPU): "
			"the kernel waits for RCU grace periods at the first per-thread "
			"event and the first of a tracepoint, slow while the target keeps "
			"every CPU busy",
			(double)(now - t0) / 1e9,
			rd > rd0 ? (double)(rd - rd0) / 1e9 : 0.0);
	}
	/* the kernel's symbols, read meanwhile (symbolizer__new), before the
	 * shim attaches and the events start: a drain that waited for them
	 * would let the rings fill, and polls would begin before samples */
	record_boost_if_waiting();
	symbolizer__kallsyms(r->sym);
	/* from the shim's attach on, the rings fill: drained at nice -20
	 * (proc.h says why, and why only now) */
	record_boost();
	record_arm_triggers(r);
	record_shim_try_attach(r, !o->fresh_target && !r->ctimer);
	if (r->ctimer && !r->seg && !o->fresh_target)
		return sampler_tick(r, r->start_ns + SHIM_EAGER_NS); /* says why */
	/* every event was opened disabled: start them together, now that
	 * the loop is about to drain them */
	record_source_live(r);
	perf_set__enable(r->ps);
	offcpu_rec__enable(r->oc);
	exitwatch__enable(r->ew);
	if (o->on_attached && (err = o->on_attached(o->ctx)))
		return err;
	/* -d counts from here: every event is open and enabled (opening
	 * them can take seconds on a busy machine); waits for a CPU before
	 * this were starting's. The window the trace states starts where
	 * the first source went live (the shim's attach, just before; the
	 * poll probes, earlier), not before opening them: tens of ms with no
	 * record, whose requests a user would look for in vain */
	st->start_run_delay_ns = proc_self_run_delay_ns();
	r->start_ns = record_now_ns();
	record_seg_started(r, r->live_ns ? r->live_ns : r->start_ns);
	record_write_meta(r);
	if (o->duration > 0)
		r->end_ns = r->start_ns + (uint64_t)(o->duration * 1e9);
	return 0;
}

/* Drain, tick and renew until stopped, -d, the target's exit or
 * until_pid's, or an error (in r->err or r->sampler_err). */
static void run_loop(struct rec *r)
{
	const struct record_opts *o = r->o;
	struct record_stats *st = r->st;
	uint64_t now, tick = TICK_NS;
	uint64_t last_flush, last_look, last_maps, last_drain, last_progress, last_sums;

	last_flush = last_look = last_maps = last_drain = last_progress = last_sums =
		r->start_ns;
	while (!__atomic_load_n(o->stop, __ATOMIC_RELAXED)) {
		/* the target's pidfd (or none: kill(0) below), until's, and
		 * the perf rings, which wake us once a quarter full */
		struct timespec ts = {.tv_sec = (time_t)(tick / 1000000000ULL),
				      .tv_nsec = (long)(tick % 1000000000ULL)};
		int exited = 0, until = 0, lapsed;
		unsigned int want;
		unsigned int npfd = 0;

		if (r->pidfd >= 0)
			r->pfd[npfd++] =
				(struct pollfd){.fd = r->pidfd, .events = POLLIN};
		if (r->until_fd >= 0)
			r->pfd[npfd++] =
				(struct pollfd){.fd = r->until_fd, .events = POLLIN};
		npfd += perf_set__pollfds(r->ps, r->pfd + npfd, r->maxpfd - npfd);
		npfd += offcpu_rec__pollfds(r->oc, r->pfd + npfd, r->maxpfd - npfd);
		npfd += exitwatch__pollfds(r->ew, r->pfd + npfd, r->maxpfd - npfd);
		if (ppoll(r->pfd, npfd, &ts, NULL) > 0) {
			exited = r->pidfd >= 0 && r->pfd[0].revents;
			until = r->until_fd >= 0 && r->pfd[r->pidfd >= 0].revents;
		}
		if (r->pidfd < 0 && kill(o->pid, 0) && errno == ESRCH)
			exited = 1;
		/* the sampler's ring first: its FORK records tell the shim's
		 * drain which threads are the target's; the samples' tags
		 * before the samples */
		if (r->tr)
			tokio_rec__drain(r->tr);
		if (r->ps)
			perf_set__drain(r->ps, &r->cb);
		exitwatch__drain(r->ew);
		/* renew first: it also takes the clock pair that what is
		 * drained next is converted against */
		lapsed = r->seg && shim_seg__renew(r->seg) == -ETIMEDOUT;
		want = o->wants ? o->wants(o->polling_ctx) : 0;
		if (want & RECORD_WANT_NAMES)
			record_name_all(r);
		record_drain_shim(r);
		if (lapsed) {
			/* the shim let go: the polls it kept from before are
			 * not ours once we attach again */
			record_drain_open_polls(r);
			record_shim_reattach(r);
		}
		/* the switches last: after a stall their rings hold tens of
		 * MiB to unwind, and the shim is attached again meanwhile */
		if (r->oc)
			record_note_err(r, offcpu_rec__drain(r->oc));
		now = record_now_ns();
		if (r->tr && r->st->tokio_probes)
			tokio_tick(r, now);
		tick = next_tick(r, tick, now - last_drain);
		last_drain = now;
		if (!exited && (r->sampler_err = sampler_tick(r, now)))
			break;
		if (!r->seg && !exited &&
		    now - last_look >= (now - r->start_ns < SHIM_EAGER_NS
						? SHIM_EAGER_LOOK_NS
						: SHIM_LOOK_NS)) {
			last_look = now;
			record_shim_try_attach(r, 0);
		}
		if (!exited && now - last_maps >= MAPS_NS) {
			last_maps = now;
			symbolizer__refresh(r->sym);
		}
		if (now - last_flush >= FLUSH_NS) {
			last_flush = now;
			record_note_err(r, trace_writer__flush(r->w));
		}
		/* lean: the threads' sums come at their next poll, once a
		 * second, or at a viewer's pace while one watches */
		if (r->seg && o->lean_ns &&
		    (now - last_sums >= FLUSH_NS ||
		     (now - last_sums >= LIVE_SUMS_NS && (want & RECORD_WANT_SUMS)))) {
			last_sums = now;
			d9_seg_flush_sums(shim_seg__base(r->seg));
		}
		if (!exited && !until)
			record_segments_tick(r, now);
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

/* Lean: the threads' sums since their last flush, before the detach.
 * A thread flushes at its next poll's end (one that parked did already):
 * LEAN_LAST_NS is long enough for a busy one; one blocked in a poll or
 * gone quiet without parking keeps its last second's sums. */
#define LEAN_LAST_NS 50000000ULL
static void lean_last_sums(struct rec *r)
{
	struct timespec d = {0, 5000000};
	uint64_t until = record_now_ns() + LEAN_LAST_NS;

	d9_seg_flush_sums(shim_seg__base(r->seg));
	while (record_now_ns() < until)
		nanosleep(&d, NULL);
	record_drain_shim(r);
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
	if (r->tr)
		tokio_rec__drain(r->tr);
	if (r->ps)
		perf_set__drain(r->ps, &r->cb);
	if (r->oc)
		record_note_err(r, offcpu_rec__finish(r->oc));
	totals(r);
	/* a last clock pair for the last drains; a lease that lapsed since the
	 * loop's last renew (stalled then, -d ran out meanwhile) leaves a gap
	 * to the end */
	if (r->seg && shim_seg__renew(r->seg) == -ETIMEDOUT) {
		uint64_t gap = record_shim_gap(r, record_now_ns());

		record_log(
			r, RECORD_WARN,
			"the recorder stalled past its %d ms lease and the shim let go before "
			"the end: runtime events of its last %.3f s are lost",
			(int)(D9_LEASE_NS / 1000000), (double)gap / 1e9);
	}
	record_drain_shim(r);
	if (r->seg && o->lean_ns)
		lean_last_sums(r);
	if (r->seg) {
		record_count_no_ring(r);
		shim_seg__detach(r->seg);
	}
	record_drain_shim(r);
	/* detached now: what is open stays so */
	record_drain_open_polls(r);
	/* the rings are read: the seal's symbols and writes at the user's
	 * priority again (proc.h), unless the recorder waited for a CPU 1%
	 * of the time while recording: a busy machine, where it would wait
	 * long to finish (400 busy threads: 40 s for -d 3) */
	if ((proc_self_run_delay_ns() - st->start_run_delay_ns) * 100 <
	    record_now_ns() - r->start_ns)
		record_unboost();
	now = record_now_ns();
	st->seconds = (double)(now - r->start_ns) / 1e9;
	if (!st->shim && !r->shim_warned && !st->tokio[0])
		record_log(r, RECORD_WARN,
			   "no d9prof shim found in pid %d: no task ids in "
			   "this trace (link libd9prof and call d9_init() in the target)",
			   (int)o->pid);
	if (r->ps || r->oc || r->ew)
		perf_close_later(&r->closer);
	if (st->target_exited)
		target_end(r, r->exit_ns);
	if (o->segments == RECORD_FLIGHT) {
		char why[160];

		if (st->exit_how[0])
			snprintf(why, sizeof(why), "target %s", st->exit_how);
		else
			snprintf(why, sizeof(why), "%s",
				 st->target_exited ? "target exited"
				 : *o->stop	   ? "recorder stopped"
				 : r->until_ended  ? "command ended"
						   : "duration ended");
		record_dump(r, now, why, 1);
	} else {
		record_seg_seal(r, now);
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
	tokio_rec__free(r->tr); /* after the events that run its program */
	exitwatch__free(r->ew);
	perf_close_go(&r->closer); /* our copies are closed: go */
	free(r->pfd);
	trace_writer__free(r->w);
	flight__free(r->fl);
	livestate__free(r->ls);
	spanstate__free(r->ss);
	lib_map_release(&r->span_open);
	lib_map_release(&r->tick_named);
	symcache__free(r->sc);
	symbolizer__free(r->sym);
	tids__free(r->tids);
}

int record__run(const struct record_opts *o, struct record_stats *st)
{
	struct rec r = {
		.o = o, .st = st, .pidfd = -1, .until_fd = -1, .closer = {.go = -1}};
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
