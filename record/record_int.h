/* SPDX-License-Identifier: MIT */
/*
 * record_int.h - private to the recording engine, the files of record__run():
 * record.c (the loop, the sampler, off-CPU, meta), record_drain.c (the
 * shim: attach, drain, lease) and record_segments.c (segments, flight
 * dumps, triggers). Their state is one struct rec; what one file calls in
 * another is declared here, prefixed record_. No other module includes it.
 */
#ifndef D9_RECORD_INT_H
#define D9_RECORD_INT_H

#include <limits.h>
#include <poll.h>
#include <sys/types.h>
#include <stdint.h>

#include "lib/map.h"
#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/exitwatch.h"
#include "record/flight.h"
#include "record/livestate.h"
#include "record/spanstate.h"
#include "record/offcpu.h"
#include "record/perf.h"
#include "record/record.h"
#include "record/segment.h"
#include "record/symcache.h"
#include "record/tids.h"
#include "record/ustack.h"
#include "symbol/symbolize.h"
#include "trace/trace.h"

/* The drain period follows the shim's busiest ring (next_tick()): TICK_NS
 * while every ring is nearly empty when drained, down to TICK_MIN_NS while
 * one fills fast, e.g. a worker writing 2M records/s. */
#define TICK_NS	     20000000ULL
#define TICK_MIN_NS  2000000ULL
#define EV_BATCH     256 /* events per call into the writer */
#define FLUSH_NS     1000000000ULL
#define LIVE_SUMS_NS 100000000ULL /* lean sums for a viewer (top: 500 ms frames) */
#define SHIM_LOOK_NS 200000000ULL /* how often to look for a late shim */
/* ...except every SHIM_EAGER_LOOK_NS for the first SHIM_EAGER_NS: a
 * command started by us creates its segment soon after exec (a look reads
 * the target's maps: not at every turn of a loop that a busy ring keeps
 * turning) */
#define SHIM_EAGER_NS	   2000000000ULL
#define SHIM_EAGER_LOOK_NS 5000000ULL
#define SLOW_OPEN_NS	   500000000ULL	 /* opening events took long: say why */
#define MAPS_NS		   1000000000ULL /* how often to re-read maps */
#define MAX_CHAIN	   512

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
	uint64_t oc_switches, oc_lost, oc_unpaired, oc_unseen, oc_not_kept, oc_stacks,
		oc_complete;
	uint64_t wake_lost;
	uint64_t leaf_stacks, leaf_recovered;
	uint64_t tokio_untagged, tokio_unwritten;
};

#define RECORD_POLL_SITES 32

struct rec {
	const struct record_opts *o;
	struct record_stats *st;
	struct trace_writer *w;
	struct perf_set *ps;
	struct perf_callbacks cb; /* perf_cb_tmpl with ctx = this */
	struct symbolizer *sym;
	struct offcpu_rec *oc;	    /* off-CPU collector, NULL if off */
	struct tokio_rec *tr;	    /* zero-code Tokio's sample tags, NULL if none */
	struct tokio_bpf_slot slot; /* ... where its threads keep their task */
	char tokio_version[24];	    /* ... Tokio's, "" not said */
	char tokio_path[PATH_MAX];  /* ... the executable, for the probes */
	int shim_probes_off;	    /* ... the shim came: its probes went */
	struct offcpu_rec_stats ocst;
	struct ustack_stats leaf;  /* the CPU samples' user stacks */
	struct lib_map tick_named; /* --sampler tick: the threads named */
	struct shim_seg *seg;
	struct tids *tids;	 /* the target's threads, as the kernel says */
	int inner;		 /* ... in a pid namespace of its own */
	int forged_said;	 /* a ring of no thread of the target said */
	struct ring_seen *rings; /* per shim ring slot */
	/* the rings' poll sites (return addresses into the runtime), the
	 * first RECORD_POLL_SITES distinct ones: each segment names them */
	uint64_t poll_sites[RECORD_POLL_SITES];
	size_t npoll_sites;
	struct d9_event *evbuf;
	size_t evbuf_len;
	size_t fill_max;       /* most records one ring held at a drain
				* since next_tick() last looked */
	uint64_t start_ns;     /* every source live: -d and the trace's
				* window count from here */
	uint64_t opening_ns;   /* before opening them: records from here on
				* may be real (the shim attaches before
				* start_ns) */
	uint64_t live_ns;      /* the first source that writes records went
				* live (record_source_live()); 0: none yet */
	int err;	       /* first write error */
	int ctimer;	       /* sampling with the shim's timers */
	struct ctimer_rec *ct; /* ...once its segment is attached */
	int ct_said, perf_checked;
	int shim_warned;	   /* "no shim" said once already */
	char refused_why[160];	   /* the last refusal said, not said again */
	uint64_t rings_exhausted0; /* the shim's count at the attach */
	int busy;		   /* another recorder holds the shim */
	int sampler_err;	   /* the sampler failed: stop, why in st */
	uint64_t cpu0;		   /* target's CPU time at start, ns */
	/* segments (all modes write at least one) */
	struct flight *fl;    /* NULL: one trace into out_fd */
	struct livestate *ls; /* what is open: each segment's STATE */
	struct spanstate *ss; /* ... of the application's spans */
	struct symcache *sc;  /* symbols once per recording */
	struct exitwatch *ew; /* how the target ends (segmented) */
	struct seg_base base;
	uint64_t seg_index, seg_start, seg_period, next_seal;
	char recording[64];
	/* flight triggers: a dump due at dump_at for dump_why; each trigger
	 * cools down on its own */
	uint64_t dump_at, cooldown_until[RECORD_MAX_TRIGGERS];
	uint64_t next_detect; /* record_opts.detect: asked again then */
	char dump_why[256];
	/* span triggers: each open span one of them may fire for, id ->
	 * its creation (ns, low 8 bits cleared) | the triggers' bits */
	struct lib_map span_open;
	unsigned int span_triggers; /* bits of the span triggers */
	int state_warned;
	/* record__run()'s loop: what it polls, when it ends, how */
	int pidfd, until_fd; /* the target's, until_pid's; -1 */
	struct pollfd *pfd;
	unsigned int maxpfd;
	uint64_t end_ns, exit_ns;  /* -d's end; when the target exited */
	int until_ended;	   /* until_pid ended the recording */
	struct perf_closer closer; /* perf_close_later()'s */
	size_t state_max;	   /* livestate__set_max() */
	uint64_t seg_left_out;	   /* open spans its start state lacks */
	uint64_t seg_base;	   /* the open segment's bytes when it began:
				    * its start state, not counted against the
				    * seal threshold */
	char perf_fds_why[160];	   /* off-CPU must be BPF: perf_event's per-thread
				    * events would pass the fd limit (fd_budget) */
};

/* ---- record.c ------------------------------------------------------------ */

/* A message through the caller's log (record_opts.log; none: dropped). */
void record_log(struct rec *r, enum record_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Keep @err as the recording's first write error (0: nothing). */
void record_note_err(struct rec *r, int err);
/* A thread of the target seen (proc_for_each_tid(), the perf set's
 * callback): named in the trace, added to the tids. */
void record_thread_added(void *ctx, pid_t tid);
/* The recording's meta: target, host, sampler, sources, recorder. */
void record_write_meta(struct rec *r);
/* Each module's build id, as meta. */
void record_write_build_ids(struct rec *r);
/* Zero-code Tokio names its tasks in r->w from now on (a new segment). */
void record_tokio_writer(struct rec *r);
void record_lean_tags(struct rec *r);
/* Sampling with the shim's timers starts, once its segment is attached. */
void record_ctimer_begin(struct rec *r);
/* The counts now, where a segment begins (struct seg_base). */
void record_seg_snapshot(struct rec *r, struct seg_base *b);
/* The open segment's part of every count, as meta (one segment: all). */
void record_seal_meta(struct rec *r);
/* Meta @key = "FROM-TO" (ns): a gap of the runtime events (shim_gap,
 * tokio probes off), which the analysis joins around. */
void record_meta_gap(struct rec *r, const char *key, uint64_t from, uint64_t to);

/* ---- record_drain.c: the shim -------------------------------------------- */

/* The shim's task names into the trace (each segment has them all). */
void record_shim_names(struct rec *r);
/* Name every task the shim knows and every thread of the target again. */
void record_name_all(struct rec *r);
/* Name the poll sites the rings gave so far in the open segment's meta
 * (TRACE_META_POLL_SITE), symbolized with @resolve(@ctx). */
void record_poll_sites(struct rec *r, trace_resolve_fn resolve, void *ctx);
/* Look for the target's shim segment and attach to it (@warn: say once
 * when there is none). */
void record_shim_try_attach(struct rec *r, int warn);
/* The shim recorded nothing from the lapsed lease's deadline (the renew
 * that returned -ETIMEDOUT) to @to: meta "shim_gap" = "FROM-TO" (ns, one
 * per gap), where the analysis ends the polls open at FROM and starts
 * afresh at TO. Returns its length. */
uint64_t record_shim_gap(struct rec *r, uint64_t to);
/* Threads of the target that found no ring slot while we were attached,
 * into st: their runtime events never came, whether they started before
 * the attach or after (each counts at its first marker; d9_segment.h).
 * The target writes the counter: a silly value is not one. */
void record_count_no_ring(struct rec *r);
/* The recorder stalled past the lease and the shim let go: what the rings
 * held is drained, attach again. The gap ends at a time read after the new
 * attach's store, as "shim_attached" is; "shim_reattached" = that time
 * stays for readers that know only that. */
void record_shim_reattach(struct rec *r);
/* The polls not in the rings yet, from the ring headers: each thread's
 * poll in progress, or its last one, held until its next marker (the shim
 * writes a poll as one record, see d9_segment.h). Written now as BEGIN
 * (and END): where a segment ends, so that it has them and its successor's
 * STATE has the open ones, and at the end of the recording, so that a poll
 * stuck there shows. Each ring is drained first; its header is taken only
 * if no record came meanwhile, and only for a poll begun while recording. */
void record_drain_open_polls(struct rec *r);
/* Every shim ring drained into the trace, the lease renewed. */
void record_drain_shim(struct rec *r);

/* ---- record_segments.c: segments and the flight recorder ----------------- */

/* A source that writes records (Tokio's poll probes, the shim's rings,
 * the perf and scheduler events) goes live now: the trace's window starts
 * at the first, so that none of its records comes before it. */
void record_source_live(struct rec *r);

/* Open the first segment (all modes write at least one). 0 or -errno. */
int record_seg_first(struct rec *r);
/* The first segment starts at @now, when every source is live (opening
 * them takes tens of ms, which the trace must not state as recorded): its
 * meta "segment_start", in the META chunk that names the target. */
void record_seg_started(struct rec *r, uint64_t now);
/* Close the open segment at @now: its part of the counts, its symbols,
 * its END; then keep it (flight) or seal its file (rotate). */
void record_seg_seal(struct rec *r, uint64_t now);
/* A flight recorder's memory: the livestate as large as its segments
 * allow (each segment's STATE carries what is open, 48 bytes an entry
 * before compression, in under a tenth of the open segment's share). */
void record_bound_memory(struct rec *r);
/* After a ring is drained: a flight recorder's open segment past its
 * share of --max-size is sealed now, not at the tick's end (a drain adds
 * at most a ring's records, a chunk or two written to the segment). */
void record_bound_open(struct rec *r);
/* Seal the open segment and write the window ending @now (flight). */
void record_dump(struct rec *r, uint64_t now, const char *why, int last);
/* Limits for the triggers, where they are seen. */
void record_arm_triggers(struct rec *r);
/* A span of the application created at @t0 (ns) named @name, or closed at
 * @t: its triggers (RECORD_TRIGGER_SPAN) looked at. */
void record_span_new(struct rec *r, uint64_t id, const char *name, uint64_t t0);
void record_span_close(struct rec *r, uint64_t id, uint64_t t);
/* Every tick of a segmented recording: dumps asked for or due, seals due,
 * commands ended. */
void record_segments_tick(struct rec *r, uint64_t now);

#endif
