/* SPDX-License-Identifier: MIT */
/*
 * record.h - the recording engine behind `d9prof record`.
 *
 * Attaches to every thread of a process (threads created later are caught
 * through perf's inherit), samples callchains with perf_event on
 * CLOCK_MONOTONIC, drains the d9prof shim's rings from the process's shared
 * segment, and writes one trace (trace/trace.h) symbolized at the end.
 *
 * The engine never prints: it reports through opts->log and returns 0 or
 * -errno, with a one-line reason in stats->why for the caller to show.
 */
#ifndef D9_RECORD_H
#define D9_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

enum record_log_level {
	RECORD_INFO = 0, /* what the engine chose (event, sampler) */
	RECORD_WARN = 1, /* degraded but going on */
};

/* Who takes the CPU samples (record_opts.sampler). */
enum record_sampler {
	RECORD_SAMPLER_AUTO = 0, /* perf_event; ctimer if perf_event_open
				  * fails (EACCES, EPERM, ENOSYS,
				  * EOPNOTSUPP, ENOENT) or delivers no
				  * sample while the target uses CPU */
	RECORD_SAMPLER_PERF = 1,
	RECORD_SAMPLER_CTIMER = 2, /* the shim's per-thread CPU timers;
				    * needs the shim in the target */
	RECORD_SAMPLER_TICK = 3,   /* the scheduler's tick, read by BPF in
				    * the scheduler programs: no interrupt
				    * of its own, at the kernel's HZ
				    * (record_tick_hz()); needs those */
};

/* How CPU samples' user stacks are taken (record_opts.callgraph,
 * record/callgraph.c). */
enum record_callgraph_mode {
	RECORD_CALLGRAPH_AUTO = 0,  /* dwarf if the target's own code lacks
				     * frame pointers, else fp */
	RECORD_CALLGRAPH_FP = 1,    /* frame pointers, plus the leaf step */
	RECORD_CALLGRAPH_DWARF = 2, /* CFI over a copy of cpu_stack bytes */
};

#define RECORD_PROGRESS_NS 250000000ULL /* record_opts.progress period */

struct record_stats;

/* A flight recorder's trigger (record_opts.triggers): dump when ... */
enum record_trigger_kind {
	RECORD_TRIGGER_POLL = 1,  /* a poll runs longer than ns */
	RECORD_TRIGGER_DELAY = 2, /* a woken task waits longer than ns for
				   * its poll */
	RECORD_TRIGGER_RUNQ = 3,  /* a thread waits longer than ns on a run
				   * queue (needs wakeups recorded) */
	RECORD_TRIGGER_SPAN = 4,  /* a span of the application (named span,
				   * any if "") lasts longer than ns, from
				   * its creation to its close */
	/* what the caller's detectors find (record_opts.detect): no ns */
	RECORD_TRIGGER_LOST_WAKER = 5, /* a task pending, not woken since */
	RECORD_TRIGGER_SELF_WAKES = 6, /* a task woken mostly by itself */
	RECORD_TRIGGER_NO_YIELD = 7,   /* a task in one poll too long */
	RECORD_TRIGGER_LEAK = 8,       /* tasks of a name ever more */
};
struct record_trigger {
	enum record_trigger_kind kind;
	uint64_t ns;
	char span[64]; /* RECORD_TRIGGER_SPAN: the name, "" any */
};
#define RECORD_MAX_TRIGGERS 8
/* "poll>50ms", "span:request>100ms", "lost-waker": @t as --trigger
 * names it, into @buf */
const char *record_trigger_name(const struct record_trigger *t, char *buf, size_t len);

/* A detector's find (record_opts.detect): a trigger of @kind fires for
 * it, its dump centred on @at (CLOCK_MONOTONIC ns: the moment it holds),
 * @what its reason ("task 7 dropped pending, not woken for 2.1 s since
 * its last poll"). */
struct record_find {
	enum record_trigger_kind kind;
	uint64_t at;
	char what[192];
};
#define RECORD_MAX_HOOKS 4 /* on-segment commands running at once */

/* A dump written (record_opts.on_dump): the file, the time it covers
 * (CLOCK_MONOTONIC ns) and why. */
struct record_dump {
	const char *path;
	uint64_t from, to;
	unsigned int segments;
	uint64_t bytes;
	const char *why;
	const char *key; /* its object-store layout key (flight.h) */
	int fd;		 /* with record_opts.on_sealed: a read-only fd of
			  * it, valid during the call (dup it to keep); -1 */
};

/* A segment file sealed (rotate). */
struct record_sealed {
	const char *path;
	const char *key; /* its object-store layout key (flight.h) */
	int fd;		 /* a read-only fd of it, valid during the call (dup
			  * it to keep); -1 if it could not be opened */
	uint64_t bytes;
	uint64_t index;
	uint64_t from, to; /* CLOCK_MONOTONIC ns */
	/* what it holds: CPU samples, samples and runtime events lost, polls
	 * ended, the longest poll, the longest wake-to-poll delay */
	uint64_t samples, lost, polls, max_poll_ns, max_delay_ns;
};

/* Segmented recording (record_opts.segments). */
enum record_segments {
	RECORD_ONE_TRACE = 0, /* one segment into out_fd */
	RECORD_FLIGHT = 1,    /* in memory, the last window; dumps into dir */
	RECORD_ROTATE = 2,    /* a file per period into dir */
};

/* record_opts.wants's bits (analysis/live.h's LIVE_WANT_*) */
#define RECORD_WANT_NAMES 1u
#define RECORD_WANT_SUMS  2u

struct record_opts {
	pid_t pid; /* target process */
	enum record_sampler sampler;
	double duration;	     /* seconds, 0 = until stopped */
	unsigned int freq;	     /* samples per second per thread */
	const char *event;	     /* libpfm4 event name; NULL = default
				      * ("cycles", falling back to
				      * "cpu-clock" without a PMU) */
	int out_fd;		     /* trace output, not closed */
	volatile sig_atomic_t *stop; /* set non-zero to stop recording */
	int fresh_target;	     /* pid is a command forked for this
				      * recording that execs only once
				      * on_attached lets it: its shim can
				      * only appear later, so no early
				      * "no shim" verdict */
	pid_t until_pid;	     /* non-zero: also stop when this
				      * process exits (perf's `-p PID --
				      * CMD`: CMD only times the
				      * recording). Not reaped. */
	/* Called once all perf events are open, before the recording loop:
	 * e.g. to let a forked child exec and learn whether it could, then
	 * open the real output and move what out_fd holds so far (the
	 * trace's header and what the writer flushed) there, under the same
	 * fd number (dup3). Non-zero (-errno) ends record__run() at once
	 * with that value and an empty stats->why: the callback says what
	 * failed. May be NULL. */
	int (*on_attached)(void *ctx);
	void *ctx;
	void (*log)(void *ctx, enum record_log_level lvl, const char *msg);
	/* Called from the recording loop every RECORD_PROGRESS_NS or so
	 * with the counts so far (samples, events, threads and every loss:
	 * lost_samples, shim_drops, offcpu_lost, wake_lost, ctimer_drops)
	 * and the seconds recorded, e.g. for a status line on a terminal.
	 * It runs between two drains: it must be quick (no blocking I/O).
	 * Messages through log may come between two calls. May be NULL. */
	void (*progress)(void *ctx, const struct record_stats *st, double seconds);
	const char *cmdline; /* recorded in the trace meta; NULL =
			      * read /proc/PID/cmdline */
	/* Every record the trace writers queue, also handed here as it is
	 * queued (trace_writer__set_tap(), on each segment's writer): `d9prof
	 * top`'s live view. It runs in the recording loop's thread. NULL:
	 * none. */
	const struct trace_tap *tap;
	/* At each drain, per thread of the shim: the poll it has in
	 * progress and not yet in any record (the shim writes a poll at its
	 * end), @task 0 for none, @begin_ns its start, @now_ns when the
	 * header said so (CLOCK_MONOTONIC). In the recording loop's thread;
	 * NULL: not called. */
	void (*polling)(void *ctx, uint32_t tid, uint64_t task, uint64_t begin_ns,
			uint64_t now_ns);
	/* At each drain: what a viewer wants now, bits: RECORD_WANT_NAMES
	 * every task's and thread's name again, to the writer and so to the
	 * tap (a viewer came and its state starts from nothing);
	 * RECORD_WANT_SUMS a lean recording's sums every 100 ms, not once a
	 * second. NULL: not called. */
	unsigned int (*wants)(void *ctx);
	/* Flight, for the triggers of a detector's kind: every second, what
	 * the caller's detectors find now and did not find the time before,
	 * up to @max into @f; their number. In the recording loop's thread
	 * (quick: no blocking I/O). NULL: not called. */
	size_t (*detect)(void *ctx, uint64_t now, struct record_find *f, size_t max);
	void *polling_ctx; /* the ctx of the last three */
	/* Off-CPU collection (sched switches with stacks, record/offcpu.h):
	 * on by default, from the sched_switch tracepoint where tracefs is
	 * (mounted if missing and we are root), else the context-switch
	 * software event. Refused (perf_event_paranoid) is a warning. */
	enum record_offcpu {
		RECORD_OFFCPU_AUTO = 0,
		RECORD_OFFCPU_TRACEPOINT, /* only the tracepoint: fail
					   * without tracefs */
		RECORD_OFFCPU_SWITCH,	  /* only the software event */
		RECORD_OFFCPU_OFF,
	} offcpu;
	/* The scheduler events' path (record/offcpu.h): BPF where allowed
	 * (auto), else perf_event; a forced --offcpu-source means perf. */
	enum record_sched {
		RECORD_SCHED_AUTO = 0,
		RECORD_SCHED_BPF,
		RECORD_SCHED_PERF,
	} sched;
	unsigned int offcpu_stack; /* bytes of user stack copied per
				    * switch for CFI unwinding (multiple
				    * of 8, <= 32768); 0 = 8192 */
	int offcpu_fp_only;	   /* no stack copy: frame pointers only */
	uint64_t offcpu_min_ns;	   /* 0, or off-CPU intervals shorter keep
				    * no stack (on the BPF path the stacks
				    * never leave the kernel) */
	int children;		   /* keep the samples of forked children
				    * (inherited events follow them) */
	int no_shim;		   /* leave the shim detached: samples and
				    * switches only, no task ids (what
				    * task awareness costs, measured) */
	/* Lean mode (record --lean, d9_segment.h): the shim writes a poll
	 * only this long (ns; 0: every poll, lean off) or whose wake
	 * waited lean_delay_ns, and sums every poll per thread and task;
	 * samples and switch-outs carry the task their thread polls (read
	 * by BPF in its thread). */
	uint64_t lean_ns, lean_delay_ns;
	int no_wakeups; /* do not record wakeups: off-CPU time
			 * not split into blocked and
			 * run-queue time */
	/* Zero-code Tokio (record/tokio_rec.h): where the target's
	 * executable is a Tokio program (1.22+, with its symbols), read the
	 * task each thread runs at every CPU sample and switch-out (BPF),
	 * with no probe on its poll path: task ids with no shim. */
	enum record_tokio {
		RECORD_TOKIO_AUTO = 0, /* where found and BPF allows */
		RECORD_TOKIO_OFF,
		RECORD_TOKIO_PROBES, /* and uprobes on its polls and wakes
				      * (tier 1: microseconds a poll) */
	} tokio;
	uint64_t tokio_max_rate; /* probes: off once the target polls
				  * faster, polls a second (0: never) */
	/* CPU samples' user stacks (record/callgraph.c): auto (the
	 * target's own modules decide), fp (RECORD_LEAF_STACK bytes for the
	 * CFI step that finds a frameless function's caller, ustack.h) or
	 * dwarf (cpu_stack bytes CFI-unwound). */
	enum record_callgraph_mode callgraph;
	unsigned int cpu_stack; /* dwarf: bytes of user stack copied
				 * per CPU sample (multiple of 8, <=
				 * 32768); 0 = RECORD_DWARF_STACK */
	int cpu_fp_only;	/* no copy: frame pointers only */
	const char *exe;	/* the program a command not yet
				 * exec'd will run (its argv[0]):
				 * auto judges it, pid's maps being
				 * the recorder's until the exec */
	/* Segments (record/flight.h): out_fd is unused unless segments is
	 * RECORD_ONE_TRACE. Either mode records until stopped, the target's
	 * death or duration. */
	enum record_segments segments;
	const char *dir;	/* where dumps and segment files go */
	double window;		/* flight: seconds kept (> 0) */
	uint64_t max_size;	/* flight: bytes kept at most, 0 = none */
	double rotate;		/* rotate: seconds per segment file */
	uint64_t max_total;	/* rotate: bytes of files kept; flight:
				 * of this recording's dumps (the
				 * oldest deleted); 0 = all */
	const char *key_prefix; /* rotate: object-store layout */
	const char *service;	/* the layout's SERVICE: NULL, the target's
				 * comm */
	const char *host;	/* ... HOST: NULL, the host name */
	const char *on_segment; /* rotate: "CMD {}" per sealed file,
				 * RECORD_MAX_HOOKS at once */
	double hook_timeout;	/* rotate: seconds an on-segment command
				 * may run before it is killed; 0 =
				 * no limit */
	struct record_trigger triggers[RECORD_MAX_TRIGGERS];
	unsigned int ntriggers;
	double cooldown; /* flight: seconds between two dumps of
			  * one trigger; 0 = one window */
	/* Set non-zero (e.g. by SIGUSR1) to dump now (flight), or seal the
	 * segment now (rotate); the engine clears it. */
	volatile sig_atomic_t *dump_now;
	/* Each dump, as written (flight); may be NULL. */
	void (*on_dump)(void *ctx, const struct record_dump *d);
	/* Each segment file sealed (rotate); may be NULL. Set, dumps come
	 * with an fd too. */
	void (*on_sealed)(void *ctx, const struct record_sealed *s);
};

/* Why the poll probes (record --tokio probes) came off before the end */
enum {
	RECORD_PROBES_OFF_RATE = 1, /* hit over the rate cap a whole second */
	RECORD_PROBES_OFF_LAYOUT,   /* most polls' tasks not laid out as Tokio's */
};

struct record_stats {
	double seconds; /* wall time recorded */
	/* proc_self_run_delay_ns() where -d starts counting (every event
	 * open) and at the stop: what a busy machine added to the time
	 * taken to start and to finish is the rest */
	uint64_t start_run_delay_ns, stop_run_delay_ns;
	uint64_t samples;
	uint64_t lost_samples;	  /* perf ring overflows */
	uint64_t events;	  /* shim events */
	uint64_t shim_drops;	  /* records the shim dropped */
	uint64_t reattaches;	  /* the lease ran out: attached again */
	uint64_t gap_ns;	  /* the time the shim recorded nothing,
				   * from each lapse to its reattach or
				   * the end */
	uint64_t no_ring_threads; /* threads that found no free ring slot
				   * in the shim: their events are lost */
	uint64_t child_samples;	  /* samples of forked children, left
				   * out */
	uint64_t shim_records;	  /* ring records the shim wrote (a
				   * whole poll is one: fewer than
				   * events) */
	uint64_t spans;		  /* span records and application events
				   * written */
	uint64_t shim_garbage;	  /* records or ring counters from the
				   * target that could not be real:
				   * dropped, not written */
	uint64_t threads;	  /* threads seen */
	uint64_t frames;	  /* unique addresses symbolized */
	int shim;		  /* 1 if the shim segment was attached */
	int target_exited;
	uint64_t ctimer_drops;	 /* ctimer samples the shim dropped */
	uint64_t ctimer_garbage; /* ctimer samples that could not be real
				  * (ctimer_rec.h): dropped */
	uint64_t ctimer_refused; /* ctimer samples over the sampler's
				  * rate: dropped */
	char event_name[64];	 /* the event actually used */
	char sampler[16];	 /* "perf" or "ctimer" */
	char why[256];		 /* reason, on error */
	/* off-CPU */
	char offcpu[16];	    /* trace meta "offcpu": "bpf", "tracepoint",
				     * "context-switch", "off", "refused" */
	uint64_t switches;	    /* off-CPU intervals written */
	uint64_t switches_blocked;  /* ... blocked (the rest preempted) */
	uint64_t offcpu_lost;	    /* switch records lost (ring full) */
	uint64_t offcpu_unpaired;   /* switch-outs whose switch-in was lost:
				     * their interval is not written */
	uint64_t offcpu_unseen_in;  /* ... whose switch-in the kernel did not
				     * report to the BPF program (not in
				     * offcpu_unpaired) */
	uint64_t offcpu_cut_short;  /* ... whose stack copy was cut short:
				     * the BPF ring was half full */
	uint64_t offcpu_not_kept;   /* intervals under offcpu_min_ns: no stack */
	uint64_t offcpu_stacks;	    /* switch-outs with a user stack */
	uint64_t offcpu_complete;   /* ... whole: CFI reached the frame-
				     * pointer chain or the thread's first
				     * frame */
	uint64_t offcpu_stack_used; /* most stack copy bytes an unwind read */
	uint32_t offcpu_copy_min;   /* the fewest copied, adapting (BPF; 0:
				     * it did not adapt) */
	double offcpu_unwind_s;	    /* recorder CPU spent unwinding */
	/* wakeups: blocked vs run-queue time (record/offcpu.h) */
	char wakeups[288];  /* trace meta "wakeups": the source
			     * ("sched:sched_waking"), or "off: "
			     * / "refused: " and why */
	char holders[288];  /* trace meta "runq_holders": what ran
			     * on the CPUs ("sched:sched_switch"),
			     * or "refused: " and why */
	uint64_t held_ns;   /* run-queue ns charged to what ran */
	uint64_t runnable;  /* intervals with a run-queue part */
	uint64_t runq_ns;   /* ... its total */
	uint64_t wake_lost; /* wakeup records lost (ring full) */
	/* CPU samples' user stacks (CFI step over a stack copy, ustack.h) */
	char callgraph[16];	/* "fp" or "dwarf" (meta "call-graph":
				 * with the bytes), "fp-only" */
	unsigned int cpu_stack; /* bytes copied per CPU sample */
	int callgraph_auto;	/* chosen by auto: then the next two */
	char fp_missing[256];	/* modules without frame pointers,
				 * ", "-separated ("" if none) */
	char fp_unknown[256];	/* modules that could not be judged */
	uint64_t cpu_stacks;	/* samples with user registers */
	uint64_t cpu_recovered; /* ... with a caller the frame-pointer
				 * walk had skipped */
	double cpu_unwind_s;	/* recorder CPU spent on them */
	/* segments */
	uint64_t segments;			     /* sealed */
	uint64_t dumps;				     /* dump files written */
	uint64_t dump_failures;			     /* dumps that could not be written */
	uint64_t segments_dropped;		     /* flight: out of the window; rotate:
						      * files deleted for --max-total */
	uint64_t dumps_deleted;			     /* flight: older dumps deleted for
						      * max_total */
	uint64_t trigger_dumps[RECORD_MAX_TRIGGERS]; /* dumps per trigger */
	uint64_t trigger_cooled[RECORD_MAX_TRIGGERS]; /* ... times it held
						       * in its cooldown: no dump */
	uint64_t hook_failures;	   /* rotate: on-segment commands failed
				    * (or killed past hook_timeout) */
	uint64_t hooks_skipped;	   /* ... not run: their file was deleted
				    * for max_total while they waited for
				    * one of RECORD_MAX_HOOKS slots */
	uint64_t hooks_running;	   /* ... running or waiting at the end */
	uint64_t symbols_resolved; /* addresses symbolized (once each) */
	uint64_t held_max;	   /* flight: most bytes held in segments */
	char exit_how[96];	   /* the target's end, "exit 3", "signal
				    * 9 (SIGKILL)"; "" if it did not end */
	/* zero-code Tokio: the version read task ids (meta "tokio"), or
	 * "" and why not ("" too: no Tokio there, or off) */
	char tokio[32];
	char tokio_why[320];
	uint64_t tokio_tagged;	 /* CPU samples given a task */
	uint64_t tokio_no_task;	 /* ... tagged outside any task */
	uint64_t tokio_untagged; /* ... no tag was found for */
	uint64_t tokio_switches; /* off-CPU intervals given a task */
	int tokio_probes;	 /* the poll probes were on */
	uint64_t tokio_polls;	 /* ... polls and wakes they wrote */
	uint64_t tokio_wakes;
	uint64_t tokio_pair_ns;	   /* ... what one poll cost, calibrated */
	uint64_t tokio_sites;	   /* ... raw::poll instances probed */
	int tokio_off_why;	   /* ... off for (RECORD_PROBES_OFF_*; 0: on to the end,
				    * or the shim took over) */
	uint64_t tokio_off_rate;   /* ... at this rate (hits a second) */
	double tokio_off_s;	   /* ... at this second of the recording */
	uint64_t tokio_nested;	   /* ... polls not written: nested in another */
	uint64_t tokio_too_deep;   /* ... nested too deep */
	uint64_t tokio_bad_vtable; /* ... not Tokio's layout */
	uint64_t tokio_dropped;	   /* ... polls and wakes, ring full */
};

/* Record opts->pid until *opts->stop, opts->duration, the target's exit or
 * opts->until_pid's.
 * Returns 0 (a complete trace was written) or -errno:
 *   -ESRCH   no such process
 *   -EPERM/-EACCES  perf_event_open refused (stats->why says what to
 *            change), or the process is not ours to read (stats->why names
 *            its owner when that is another user)
 *   -ENOENT  the event does not exist on this machine, or the ctimer
 *            sampler was asked of a target without the shim
 *   -EIO     writing the trace failed
 *   or what opts->on_attached returned (stats->why empty)
 */
int record__run(const struct record_opts *opts, struct record_stats *stats);

/* The kernel's tick rate (CONFIG_HZ: a coarse clock's resolution is one
 * tick), the rate of --sampler tick per busy CPU; 0 if not known. */
unsigned int record_tick_hz(void);
/* 1 if --sampler tick looks possible here: the rate known, kernel BTF,
 * and the privileges of BPF tracing (CAP_SYS_ADMIN, or CAP_BPF and
 * CAP_PERFMON); a seccomp filter or lockdown may still refuse it. */
int record_tick_usable(void);

/* ---- CPU samples' stack copy: --call-graph (record/callgraph.c) ----- */

/* The leaf step of fp: a frameless function's return address sits within
 * its own small frame, just above the SP (a gcc leaf, libc's memcpy, a
 * prologue). dwarf's default copy is perf's. */
#define RECORD_LEAF_STACK  512
#define RECORD_DWARF_STACK 8192
#define RECORD_MAX_STACK   32768

/* What record_callgraph_choose() found. */
struct record_callgraph {
	enum record_callgraph_mode mode; /* FP or DWARF */
	unsigned int bytes;		 /* RECORD_LEAF_STACK or _DWARF_STACK */
	unsigned int modules;		 /* the target's own modules judged */
	unsigned int nwithout;		 /* ... without frame pointers */
	char without[256];		 /* their file names, ", "-separated */
	char unknown[256];		 /* those that could not be judged
					  * (counted as with: fp) */
};

/* --call-graph auto for @pid: its executable and its libraries outside
 * /lib, /usr/lib and the like (from /proc/PID/maps), or with @exe (a
 * command not yet exec'd; PATH-searched like execvp) that file alone,
 * judged by symbol_frame_pointers(); DWARF with RECORD_DWARF_STACK bytes
 * if one lacks frame pointers, else FP. 0, or -errno when the maps
 * cannot be read (@c then untouched). */
int record_callgraph_choose(pid_t pid, const char *exe, struct record_callgraph *c);

/* Parse --call-graph's MODE: "auto", "fp", "dwarf" or "dwarf,SIZE" (SIZE
 * bytes, a multiple of 8 from 8 up to RECORD_MAX_STACK). 0, or -EINVAL
 * with *@mode and *@bytes untouched. *@bytes is 0 except for dwarf,SIZE. */
int record_callgraph_parse(const char *s, enum record_callgraph_mode *mode,
			   unsigned int *bytes);

#endif /* D9_RECORD_H */
