/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the d9prof trace file: writer and reader.
 *
 * File layout:
 *   file header: 8-byte magic "D9PROF\0\n", u32 format version, u32 flags
 *   chunks, each: struct trace_chunk_hdr + a zstd frame of raw_size bytes
 *
 * Every chunk is self-contained (its own zstd frame, its own checksum), so a
 * file cut anywhere reads up to its last whole chunk.
 *
 * Segments: a file is one or more segments, each a file header and chunks
 * up to its END chunk, readable alone (its own ids, names, symbols, and in
 * a STATE chunk what was open at its start). A plain recording is one
 * segment; a flight recorder's dump is several back to back, and so is
 * `cat` of segment files. Meta "recording" (one id per recording),
 * "segment" (0, 1, ... within it) and "segment_start" (ns) come in the
 * segment's first chunk. Chunks refer to ids
 * defined in earlier chunks only (a STACKS chunk comes before the SAMPLES
 * chunks that use its ids; FRAMES may come last: until they are read,
 * frames are bare addresses). An END chunk closes a complete trace.
 *
 * Ids: frames are numbered 0.. in order of first appearance (one frame per
 * unique instruction address); stacks likewise. A stack lists frame ids
 * leaf first.
 *
 * All times are CLOCK_MONOTONIC nanoseconds of the recording machine.
 *
 * The byte-level layout and the encoding of each chunk (column-wise varints,
 * delta-coded times, per-chunk string tables) are described in
 * trace/trace_format.h, private to trace/.
 */
#ifndef D9_TRACE_H
#define D9_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAGIC	  "D9PROF\0\n"
#define TRACE_VERSION	  2 /* written; files of 1 (no POLLS chunks) read too */
#define TRACE_VERSION_MIN 1

enum trace_chunk_type {
	TRACE_CHUNK_META = 1,	 /* key=value strings */
	TRACE_CHUNK_THREADS = 2, /* tid, name */
	TRACE_CHUNK_TASKS = 3,	 /* task id, name */
	TRACE_CHUNK_STACKS = 4,	 /* new stacks: frame ids (new frames: addrs) */
	TRACE_CHUNK_SAMPLES = 5,
	TRACE_CHUNK_EVENTS = 6,	     /* shim events */
	TRACE_CHUNK_FRAMES = 7,	     /* symbols for frames */
	TRACE_CHUNK_END = 8,	     /* counters; marks a complete trace */
	TRACE_CHUNK_SWITCHES = 9,    /* off-CPU intervals (sched switches) */
	TRACE_CHUNK_INLINES = 10,    /* functions inlined at frames' addresses */
	TRACE_CHUNK_COMMS = 11,	     /* tid, name of threads outside the target */
	TRACE_CHUNK_STATE = 12,	     /* events as EVENTS: what was open at the
				      * segment's start (the BEGIN of a poll in
				      * progress, a park, a pending wake, a live
				      * task's spawn), at their own earlier times */
	TRACE_CHUNK_POLLS = 13,	     /* shim events as EVENTS, a whole poll one
				      * record (version 2; read as its events) */
	TRACE_CHUNK_LINES = 14,	     /* source file and line of frames, and of
				      * their inline chains' call sites */
	TRACE_CHUNK_SPANS = 15,	     /* the application's spans and events */
	TRACE_CHUNK_SPAN_STATE = 16, /* spans as SPANS: those open at the
				      * segment's start, at their own
				      * earlier times (as STATE) */
	TRACE_CHUNK_INDEX = 17,	     /* the times of the samples and events
				      * chunks before it: a window skips the
				      * chunks outside it */
	TRACE_CHUNK_SUMS = 18,	     /* lean mode: polls summed, per thread
				      * and task (struct trace_sum) */
};

/* where a sample came from (struct trace_sample.sampler) */
enum trace_sampler {
	TRACE_SAMPLER_PERF = 1,	  /* perf_event, kernel-unwound callchain */
	TRACE_SAMPLER_CTIMER = 2, /* in-process CPU timer (reserved) */
	TRACE_SAMPLER_TICK = 3,	  /* the scheduler's tick, BPF */
};

struct trace_sample {
	uint64_t time;
	uint32_t tid;
	uint32_t stack;	  /* stack id */
	uint32_t weight;  /* number of sampling periods it stands for */
	uint16_t sampler; /* enum trace_sampler */
	uint16_t flags;	  /* reserved, 0 */
	uint64_t task;	  /* the task the thread ran then, as the
			   * recorder read it in the thread itself (a
			   * TRACE_TASK_TOKIO id); 0: not read */
};

/* A task id the recorder read from the target's own memory at a sample or
 * a switch-out, with no shim (zero-code Tokio: the runtime's thread-local
 * current task id, tokio::task::Id), kept apart from the ids the shim's
 * events carry by this bit: the two count from 1 each. Views show the
 * runtime's number (trace_task_number()). */
#define TRACE_TASK_TOKIO (1ULL << 62)

/* The number a task id stands for: the runtime's own for a
 * TRACE_TASK_TOKIO id, else the id. */
static inline uint64_t trace_task_number(uint64_t task)
{
	return task & ~TRACE_TASK_TOKIO;
}

/* What a runtime did, as a trace records it (struct trace_event's type).
 * The trace owns this vocabulary: the shim's ring records are mapped onto
 * it by the recorder (record/record.c), and analysis/ knows no other. */
enum trace_event_type {
	TRACE_EV_THREAD_START = 1, /* a worker thread came; task = tid */
	TRACE_EV_THREAD_STOP = 2,  /* ... went; task = tid */
	TRACE_EV_SPAWN = 3,	   /* a task was spawned */
	TRACE_EV_WAKE = 4,	   /* ... woken */
	TRACE_EV_POLL_BEGIN = 5,   /* ... polled, from here */
	TRACE_EV_POLL_END = 6,	   /* ... to here */
	TRACE_EV_TASK_END = 7,	   /* ... ended */
	TRACE_EV_PARK = 8,	   /* the thread parked (idle) */
	TRACE_EV_UNPARK = 9,	   /* ... and unparked */
	/* (10, 11: TRACE_REC_POLL, _WOKEN below) */
	TRACE_EV_WAKER_DROP = 12, /* a task pending with no waker left (the
				   * runtime counts them:
				   * d9_task_waker_drop()): lost for sure */
};

/* A runtime event: type is enum trace_event_type; names (the shim's TEXT
 * continuations) are folded into task/thread names, never stored. */
struct trace_event {
	uint64_t time;
	uint64_t task;
	uint32_t tid;
	uint32_t type;
};

/*
 * Lean mode (record --lean, meta TRACE_META_LEAN "poll=NS delay=NS
 * unit=NS_PER_UNIT"): a poll is written only past a length or a wait
 * (poll=, delay=); every poll is summed, per thread and task, and the
 * sums come as these, each what the thread's polls of the task did since
 * its previous one (several of a task add up). Lengths and waits fall in
 * buckets of the shim's clock unit (one unit is unit= ns): 8 exact, then
 * 4 per power of two, trace_sum_bucket_low() the least value of each.
 */
#define TRACE_SUM_BUCKETS 144
struct trace_sum {
	uint64_t time; /* ns: when they were flushed */
	uint64_t task;
	uint32_t tid;
	uint32_t polls;
	uint32_t delays; /* polls whose wake-to-poll delay is known */
	uint32_t nent;	 /* its entries, at trace.sum_ents[ent] */
	uint64_t ent;
	uint64_t poll_total, delay_total; /* ns */
	uint64_t poll_max, delay_max;	  /* ns */
};
struct trace_sum_ent {
	uint8_t which; /* 0 poll lengths, 1 wake-to-poll delays */
	uint8_t bucket;
	uint16_t pad;
	uint32_t count;
};
static inline uint64_t trace_sum_bucket_low(uint32_t b)
{
	return b < 8 ? b : (uint64_t)(4 + (b & 3)) << (b / 4 - 1);
}

/* Records (trace_writer__records(), and the POLLS encoding): an event of
 * enum trace_event_type, or a whole poll as one of these two at its end
 * (the shim's D9_EV_POLL and _WOKEN, which record/ maps). */
#define TRACE_REC_POLL	     10
#define TRACE_REC_POLL_WOKEN 11

/* How many events a POLLS record stands for: 2 (BEGIN, END) for a whole
 * poll, 3 (BEGIN, WAKE, END) for a woken one, else 1 (itself). */
static inline size_t trace_rec_events(uint32_t type)
{
	return type == TRACE_REC_POLL ? 2 : type == TRACE_REC_POLL_WOKEN ? 3 : 1;
}

/* Record @x (a whole poll of length @len at its end, or an event) as its
 * events at @out (room for trace_rec_events(x.type)); how many. @x is a
 * copy, so @out may overlap where it came from. */
static inline size_t trace_rec_spread(struct trace_event x, uint64_t len,
				      struct trace_event *out)
{
	size_t k = trace_rec_events(x.type);

	if (k == 1) {
		out[0] = x;
		return 1;
	}
	out[0] = x;
	out[0].type = TRACE_EV_POLL_BEGIN;
	out[0].time = x.time - len;
	if (k == 3) {
		out[1] = x;
		out[1].type = TRACE_EV_WAKE;
	}
	out[k - 1] = x;
	out[k - 1].type = TRACE_EV_POLL_END;
	return k;
}

/* What the application said through the shim (d9_span_*, d9_event):
 * spans, tracing's model (created with a name and a parent, entered and
 * exited on threads, maybe many times, on several threads and inside
 * polls of several tasks, then closed), and events (a named instant with
 * a value). A span id is the application's, unique among its open spans:
 * a NEW for an id seen before starts another span (ids are reused). */
enum trace_span_type {
	TRACE_SPAN_NEW = 1,   /* span id created: name; value = its parent's
			       * id (0: none) */
	TRACE_SPAN_ENTER = 2, /* span id entered on tid */
	TRACE_SPAN_EXIT = 3,  /* ... exited on tid */
	TRACE_SPAN_CLOSE = 4, /* span id closed: it ends */
	TRACE_SPAN_FIELD = 5, /* a field of span id: name = value, or = text
			       * where text is not NULL */
	TRACE_SPAN_EVENT = 6, /* an event on tid: name, value, text (NULL:
			       * none); id 0 */
};
#define TRACE_SPAN_TYPE_MAX TRACE_SPAN_EVENT

struct trace_span {
	uint64_t time;
	uint64_t id;	  /* the span; 0 for an event */
	int64_t value;	  /* NEW: the parent's id (as u64); FIELD, EVENT */
	const char *name; /* NEW: the span's name; FIELD: the key; EVENT:
			   * its name. NULL if none */
	const char *text; /* FIELD, EVENT: a text value; NULL if none */
	uint32_t tid;	  /* the thread that said it */
	uint32_t type;	  /* enum trace_span_type */
};

/* One off-CPU interval of a thread of the target: it was switched out at
 * @time with callchain @stack (taken at switch-out: the kernel path into
 * schedule() and the user path that made the blocking call) and ran again
 * at @time_in. From @runnable to @time_in it was on a run queue, waiting
 * for a CPU (all of it for a preempted interval); before @runnable it was
 * blocked. */
struct trace_switch {
	uint64_t time;	   /* switch-out, ns */
	uint64_t time_in;  /* switch-in, ns; 0 if still off-CPU at the end */
	uint64_t runnable; /* when it became runnable again: @time if
			    * preempted, its wakeup if blocked; 0 if not
			    * known (wakeups not recorded, or lost) */
	uint32_t tid;
	uint32_t stack;	   /* stack id (trace_writer__stack) */
	uint32_t holder;   /* tid of the thread that had the CPU while it
			    * was runnable: the one that held it
			    * longest (holds below), else, without
			    * them, the one that took it at a
			    * preemption or ran last before it; 0 if
			    * not known. Its name: trace__comm() */
	uint32_t hold;	   /* reader: its first entry in trace.holds */
	uint8_t nhold;	   /* entries there (0: no split recorded) */
	uint8_t preempted; /* 1: preempted while runnable; 0: blocked */
	uint64_t task;	   /* the task it left, read in the thread at
			    * switch-out (trace_sample.task); 0: not read */
};

/* The one frame of a switch's stack when the recorder kept none (an
 * interval under `record --offcpu-min`, TRACE_META_OFFCPU_MIN): an address
 * no code has (not canonical: not even a garbage frame-pointer word minus
 * one is likely to be it), which trace_writer__finish() names
 * TRACE_SYM_NOT_KEPT itself, so that every view shows it as a frame. */
#define TRACE_ADDR_NOT_KEPT 0x7fffd9d9d9d9d901ULL
#define TRACE_SYM_NOT_KEPT  "[stack not kept: off-CPU under --offcpu-min]"

/* Who held the CPU while a switch's thread waited on its run queue: the
 * threads that ran on the CPU it then ran on, from @runnable to @time_in,
 * and how long each (largest first; their sum is at most time_in -
 * runnable). */
struct trace_hold {
	uint32_t tid; /* or one of TRACE_HOLD_* */
	uint64_t ns;
};
#define TRACE_MAX_HOLDS	   8		    /* per switch; the rest is OTHERS */
#define TRACE_HOLD_UNKNOWN 0		    /* time the recorder did not see */
#define TRACE_HOLD_IDLE	   UINT32_MAX	    /* the CPU was idle */
#define TRACE_HOLD_OTHERS  (UINT32_MAX - 1) /* beyond the first 7 */

/* A frame: one unique address of the stacks. The first address of a
 * stack's kernel part and of its user part is the interrupted pc; the
 * others are return addresses minus one (inside the call instruction), so
 * that a call that ends its function names that function. */
struct trace_frame {
	uint64_t addr;	    /* instruction address in the target */
	const char *sym;    /* demangled symbol, NULL if unresolved */
	const char *module; /* file name of the object ("[kernel]" for
			     * kernel frames), NULL if unknown */
	uint64_t offset;    /* addr - symbol start (sym != NULL), else
			     * the file offset of addr in module */
	uint8_t kernel;	    /* 1 for a kernel address */
	uint8_t inlined;    /* 1: a function inlined at addr into the
			     * frame that follows it in its stacks (the
			     * reader makes these; sym is its name) */
	const char *full;   /* sym as the views show it: NULL where that
			     * is sym, else an inlined Rust function's full
			     * name where DWARF gave its last segment alone
			     * ("{async_fn#0}" -> "app::handle::{{closure}}",
			     * the reader makes these: trace_rust.c) */
	/* What a resolve callback may add: the functions inlined at addr,
	 * innermost first, up to (not including) sym, the function the code
	 * is in, display-ready (demangled); @inl and its strings owned by the
	 * callback, valid until it is next called (the writer copies them).
	 * At most TRACE_MAX_INLINE are kept (the innermost). The reader
	 * leaves them NULL/0 and turns them into frames. */
	const char *const *inl;
	uint32_t ninl;
	/* Source (LINES chunks; NULL/0 where unknown, and in traces from
	 * before them). A resolve callback gives the file and line of the
	 * code at addr itself (the innermost inlined function's, if any),
	 * start_line where sym's function begins (DW_AT_decl_line), and in
	 * @inl_src (NULL, or one per @inl) where each inlined function was
	 * called from and where it begins. The reader gives each frame the
	 * line in its own function: an inlined frame the address's line (the
	 * innermost) or the call site of the function inlined into it, the
	 * recorded frame the call site of its outermost inlined function
	 * (NULL/0 if that was not recorded); with TRACE_READ_NO_INLINE the
	 * recorded frame keeps the address's own (innermost) line. */
	const char *file; /* as the DWARF line table names it */
	uint32_t line;
	uint32_t start_line;
	const struct trace_inline_src *inl_src;
};

/* Where one inlined function of a chain was called from (a line of the
 * function it was inlined into) and where it begins; NULL/0 if unknown. */
struct trace_inline_src {
	const char *call_file;
	uint32_t call_line;
	uint32_t decl_line;
};

/* Functions in one frame's inline chain, at most (a format limit). */
#define TRACE_MAX_INLINE 256

struct trace_task {
	uint64_t id;
	const char *name; /* NULL if never named */
};

struct trace_thread {
	uint32_t tid;
	const char *name; /* NULL if unknown */
};

/* The meta keys a recording writes (struct trace_meta): one name each,
 * for the writer (record/) and every reader. Some are counts of what was
 * lost (analysis/losses.c), "segment_gap" the reader's own. */
#define TRACE_META_CALL_GRAPH			"call-graph"
#define TRACE_META_CHILD_SAMPLES_LEFT_OUT	"child samples left out"
#define TRACE_META_CLOCK			"clock"
#define TRACE_META_CLOCK_REALTIME		"clock_realtime"
#define TRACE_META_CMDLINE			"cmdline"
#define TRACE_META_COMM				"comm"
#define TRACE_META_COMMAND			"command"
#define TRACE_META_CPU_CALLERS_RECOVERED_BY_CFI "cpu callers recovered by CFI"
#define TRACE_META_CTIMER_SAMPLES_DROPPED	"ctimer samples dropped"
#define TRACE_META_CTIMER_SAMPLES_REFUSED	"ctimer samples refused"
#define TRACE_META_DUMP_REASON			"dump_reason"
#define TRACE_META_EVENT			"event"
#define TRACE_META_EXE				"exe"
#define TRACE_META_FREQUENCY			"frequency"
#define TRACE_META_HOSTNAME			"hostname"
#define TRACE_META_KERNEL			"kernel"
#define TRACE_META_LEAN				"lean"
#define TRACE_META_OFFCPU			"offcpu"
#define TRACE_META_OFFCPU_LOST			"offcpu lost"
#define TRACE_META_OFFCPU_MIN			"offcpu_min"
#define TRACE_META_OFFCPU_NOT_KEPT		"offcpu stacks not kept"
#define TRACE_META_OFFCPU_STACKS_COMPLETE	"offcpu stacks complete"
#define TRACE_META_OFFCPU_SWITCHES		"offcpu switches"
#define TRACE_META_OFFCPU_UNPAIRED		"offcpu unpaired"
#define TRACE_META_OFFCPU_UNREPORTED		"offcpu unreported"
#define TRACE_META_OPEN_STATE_REFUSED		"open state refused"
#define TRACE_META_SPANS_LEFT_OUT		"open spans left out"
#define TRACE_META_PID				"pid"
#define TRACE_META_PROCESS			"process"
#define TRACE_META_RECORDER			"recorder"
#define TRACE_META_RECORDING			"recording"
#define TRACE_META_RUNQ_HOLDERS			"runq_holders"
#define TRACE_META_SAMPLER			"sampler"
#define TRACE_META_SEGMENT			"segment"
#define TRACE_META_SEGMENT_GAP			"segment_gap"
#define TRACE_META_SEGMENT_START		"segment_start"
/* the store layout's SERVICE and, given --host, HOST (record --rotate,
 * --flight): what the Parquet tables say */
#define TRACE_META_SERVICE		  "service"
#define TRACE_META_SHIM_GARBAGE		  "shim garbage"
#define TRACE_META_SHIM_ATTACHED	  "shim_attached"
#define TRACE_META_SHIM_GAP		  "shim_gap"
#define TRACE_META_SHIM_REATTACHED	  "shim_reattached"
#define TRACE_META_STORE_HOST		  "store_host"
#define TRACE_META_TARGET_EXIT		  "target_exit"
#define TRACE_META_TARGET_EXIT_TIME	  "target_exit_time"
#define TRACE_META_THREADS_WITHOUT_A_RING "threads without a ring"
/* zero-code Tokio: its version (or "unknown"), where the recorder read
 * task ids in the target's threads (trace_sample.task, trace_switch.task);
 * and the CPU samples it found no task tag for */
#define TRACE_META_TOKIO	  "tokio"
#define TRACE_META_TOKIO_UNTAGGED "tokio samples untagged"
/* polls the poll probes saw but did not write (nested in another, past
 * their depth, not Tokio's layout), in this segment */
#define TRACE_META_TOKIO_POLLS_UNWRITTEN "tokio polls not written"
/* ... with its polls and wakes from uprobes (record --tokio probes): "on";
 * and the stretch of a segment after they went off ("START-END" ns, as
 * "shim_gap": no runtime events there) */
#define TRACE_META_TOKIO_PROBES	    "tokio probes"
#define TRACE_META_TOKIO_PROBES_OFF "tokio probes off"
#define TRACE_META_WAKEUPS	    "wakeups"
#define TRACE_META_WAKEUPS_LOST	    "wakeups lost"
/* One per place the runtime begins polls from (the shim's poll sites):
 * "MODULE\tNAME..." tab-separated, the functions at the call to
 * d9_poll_begin, innermost (inlined) first, the symbol last. Per-task
 * views cut a poll's stacks there (join__cut_stacks()). */
#define TRACE_META_POLL_SITE "poll site"
/* Per module (key prefix, then the module's path as the maps name it):
 * its build id (lowercase hex), and its executable mappings when the
 * segment was sealed, "START END PGOFF" in hex each, space-separated. */
#define TRACE_META_BUILDID_PFX "buildid "
#define TRACE_META_MAP_PFX     "map "

struct trace_meta {
	const char *key;
	const char *value;
};

/* Counters carried in the END chunk (absent, all zero, for a truncated
 * trace). The writer fills samples and events itself (what it wrote), and
 * start_time/end_time when the caller leaves them 0 (the earliest and latest
 * record time written). */
struct trace_counters {
	uint64_t samples;      /* samples written */
	uint64_t events;       /* shim events written */
	uint64_t lost_samples; /* perf ring overflows (PERF_RECORD_LOST) */
	uint64_t shim_drops;   /* records the shim dropped (rings full) */
	uint64_t start_time;   /* recording start, ns */
	uint64_t end_time;     /* recording end, ns */
	uint64_t switches;     /* off-CPU intervals written (filled by the
				* writer, like samples) */
};

/* ---- writer -------------------------------------------------------- */

/*
 * A writer is single-threaded: one thread at a time may call it. All calls
 * return 0 or -errno: -EINVAL for a bad argument or after finish, -ENOMEM,
 * -E2BIG for a string over 16 MiB or a callchain over 1M addresses, or the
 * error of a failed write(2) (-ENOSPC, -EIO, ...). A write error is sticky:
 * every later call returns it (the file then reads as cut short).
 * Records are buffered and written in chunks of up to 64k records, so a
 * call that fills a buffer may write.
 */
struct trace_writer;

/* Start a trace on @fd (which the writer does not close): writes the file
 * header. 0 and the writer in *@out, or -errno (-EBADF, -ENOMEM, the
 * write's error) and NULL. */
int trace_writer__new(int fd, struct trace_writer **out);

/* Queue a meta key/value (strings copied); flushed with the next chunk. */
int trace_writer__meta(struct trace_writer *w, const char *key, const char *value);
/* Name a thread or a task (@name copied; NULL registers the id without
 * forgetting an earlier name). Readers keep the last name per id. */
int trace_writer__thread(struct trace_writer *w, uint32_t tid, const char *name);
/* Name a thread outside the target (a switch's holder), the same way. */
int trace_writer__comm(struct trace_writer *w, uint32_t tid, const char *name);
/* Lean mode's sums of @s->tid's polls of @s->task (@s->nent entries at
 * @ent; s->ent is the reader's) */
int trace_writer__sum(struct trace_writer *w, const struct trace_sum *s,
		      const struct trace_sum_ent *ent);
int trace_writer__task(struct trace_writer *w, uint64_t id, const char *name);

/* Intern a callchain of @n addresses (leaf first) and return its stack id
 * in *@stack. Identical callchains get the same id. New stacks and frames
 * are written before any sample chunk that follows. @n may be 0. */
int trace_writer__stack(struct trace_writer *w, const uint64_t *ips, unsigned int n,
			uint32_t *stack);
/* The callchain of stack id @stack (leaf first) in *@ips, valid until the
 * writer's next call; its length (0 and NULL for an unknown id). To carry
 * a stack over into the next segment's writer. */
unsigned int trace_writer__stack_ips(const struct trace_writer *w, uint32_t stack,
				     const uint64_t **ips);
/* Queue a sample; s->stack must be an id returned by trace_writer__stack
 * (else -EINVAL). */
int trace_writer__sample(struct trace_writer *w, const struct trace_sample *s);
int trace_writer__event(struct trace_writer *w, const struct trace_event *e);
/* Queue @n events at once (the recorder's path: no per-record call or
 * growth; they are encoded on arrival). On an error some of them may have
 * been queued. */
int trace_writer__events(struct trace_writer *w, const struct trace_event *e, size_t n);
/* Queue @n records as the POLLS encoding has them (trace_rec_events()): an
 * event, or a whole poll as one record of type TRACE_REC_POLL (or
 * TRACE_REC_POLL_WOKEN) at its end with its length in @len[i] (@len is
 * read for those only). What trace_writer__events() makes of a BEGIN
 * directly followed by its END, for a caller that has the polls whole
 * (the recorder). A length over the record's time is -EINVAL. */
int trace_writer__records(struct trace_writer *w, const struct trace_event *rec,
			  const uint64_t *len, size_t n);
/* Queue a span record (strings copied; type within enum
 * trace_span_type, else -EINVAL). Written in time order per thread. */
int trace_writer__span(struct trace_writer *w, const struct trace_span *s);
/* Write @n span records as a SPAN_STATE chunk now: the spans open when
 * this segment started (their NEW and FIELD records, and the enters not
 * exited), at their own times. Once, before the segment's first span
 * record; a reader uses them only when it did not read the segment
 * before (as STATE). */
int trace_writer__span_state(struct trace_writer *w, const struct trace_span *s,
			     size_t n);
/* An off-CPU interval; its stack must come from trace_writer__stack(), its
 * time_in must be 0 or at least its time, and its runnable 0 or between
 * the two (else -EINVAL). Switch chunks
 * follow the STACKS chunk that defines their stacks, as samples do.
 * (s->hold and s->nhold are ignored: no split.) */
int trace_writer__switch(struct trace_writer *w, const struct trace_switch *s);
/* The same with who held the CPU while it was runnable: @n (at most
 * TRACE_MAX_HOLDS) entries of @h summing to at most time_in - runnable
 * (a known runnable and time_in; else -EINVAL). */
int trace_writer__switch_held(struct trace_writer *w, const struct trace_switch *s,
			      const struct trace_hold *h, size_t n);

/* Write @n events as STATE chunks now (after whatever is queued is
 * flushed): what was open when this segment started, at their own times.
 * Once, before the segment's first event; they count neither as events
 * nor for the segment's start and end times. */
int trace_writer__state(struct trace_writer *w, const struct trace_event *e, size_t n);

/* A tap: what a writer queues, handed over as it is queued (before any
 * of it is written), for a consumer that wants the records live (`d9prof
 * top`). Each callback may be NULL; they run in the writer's thread and
 * must not call the writer. A sample comes with its callchain (leaf
 * first, @n addresses); records as trace_writer__records() takes them
 * (@len NULL when none is a whole poll). */
struct trace_tap {
	void (*sample)(void *ctx, const struct trace_sample *s, const uint64_t *ips,
		       unsigned int n);
	void (*records)(void *ctx, const struct trace_event *rec, const uint64_t *len,
			size_t n);
	void (*sw)(void *ctx, const struct trace_switch *s);
	void (*span)(void *ctx, const struct trace_span *s);
	/* a task (@task 1) or a thread of the target (@task 0) named */
	void (*name)(void *ctx, int task, uint64_t id, const char *name);
	/* a lean recording's sums of a thread's polls of a task (@ent: its
	 * s->nent bucket counts), and the recording's meta data */
	void (*sum)(void *ctx, const struct trace_sum *s,
		    const struct trace_sum_ent *ent);
	void (*meta)(void *ctx, const char *key, const char *value);
	void *ctx;
	const struct trace_tap *next; /* handed the same after (NULL: none) */
};
/* Hand what @w queues from now on to @tap too (copied; NULL: no tap). */
void trace_writer__set_tap(struct trace_writer *w, const struct trace_tap *tap);

/* Fault in what @w's first flush would touch (zstd's workspace at both
 * levels, the output buffer) by compressing made-up data: a recorder
 * calls it before its events start, not in the middle of them. 0 or
 * -ENOMEM. */
int trace_writer__warm(struct trace_writer *w);

/* Write everything queued as chunks (called periodically by the recorder
 * so that a killed recorder leaves a readable file). 0 or -errno. */
int trace_writer__flush(struct trace_writer *w);

/* Callback that symbolizes one address: fills sym/module/offset and, if
 * code is inlined there, inl/ninl (strings are copied by the writer; may
 * be left NULL). Returns 0, or -errno to leave the frame unresolved. */
typedef int (*trace_resolve_fn)(void *ctx, uint64_t addr, struct trace_frame *out);

/* Number of unique frames interned so far, and frame @i's address. */
size_t trace_writer__nframes(const struct trace_writer *w);
uint64_t trace_writer__frame_addr(const struct trace_writer *w, size_t i);

/* Symbolize every interned frame through @resolve (once per unique
 * address, in frame id order), write the FRAMES chunk(s), each followed by
 * an INLINES chunk if any of its frames has an inline chain and a LINES
 * chunk if any has a source file or line, then the END
 * chunk with @c, and flush. The callback gets @out with addr set, kernel
 * preset from the address (it may change it) and the rest zero. A NULL
 * @resolve writes no FRAMES chunk; a NULL @c means all-zero counters (see
 * struct trace_counters for what the writer fills in itself).
 * After this only trace_writer__free() may be called. */
int trace_writer__finish(struct trace_writer *w, trace_resolve_fn resolve, void *ctx,
			 const struct trace_counters *c);
/* Free the writer (NULL is a no-op). Does not write: call flush or finish
 * first, or what is still queued is lost. */
void trace_writer__free(struct trace_writer *w);

/* ---- reader -------------------------------------------------------- */

struct trace_arena;
struct trace_src;

/* One segment as read (see the top of this file). */
struct trace_segment {
	const char *file;      /* the path it was read from */
	uint64_t offset;       /* where in that file it starts */
	const char *recording; /* meta "recording"; NULL in files without */
	uint64_t index;	       /* meta "segment" (0 without) */
	uint64_t start;	       /* meta "segment_start", else its END's
				* start_time; 0 if neither */
	uint64_t end;	       /* its END's end_time; 0 if cut short */
	int64_t wall_offset;   /* meta "clock_realtime": CLOCK_REALTIME -
				* CLOCK_MONOTONIC ns when it started; 0 if
				* absent */
	const char *process;   /* which process it recorded: meta "process"
				* ("BOOT PID TICKS UNIX", record/proc.h)
				* but its Unix start, else "HOST PID";
				* NULL if neither is in it */
	uint32_t pid;	       /* meta "pid"; 0 if unknown */
	const char *host;      /* meta "hostname"; NULL if unknown */
	const char *comm;      /* meta "comm"; NULL if unknown */
	int64_t started;       /* when that process started, in Unix
				* seconds; 0 if unknown */
	int complete;	       /* its END chunk was read */
	int state_used;	       /* its STATE chunk was applied: the segment
				* before it in its recording was not read */
	size_t meta_from;      /* its own meta: trace.meta[meta_from ..
				* meta_to), e.g. the dump_reason of the dump
				* it ends (a later dump holding it holds
				* that too) */
	size_t meta_to;
};

/* A whole trace in memory. Arrays and strings are owned by the trace. */
struct trace {
	struct trace_meta *meta;
	size_t nmeta;
	struct trace_thread *threads; /* last name per tid wins; sorted by
				       * tid */
	size_t nthreads;
	struct trace_task *tasks; /* last name per id wins; sorted by
				   * id */
	size_t ntasks;
	struct trace_frame *frames; /* index = frame id; sym/module NULL
				     * without a FRAMES chunk */
	size_t nframes;
	uint32_t *stack_off; /* stack i = stack_frames[stack_off[i] ..
			      * stack_off[i+1]); nstacks + 1
			      * entries, never NULL */
	uint32_t *stack_frames;
	size_t nstacks;
	struct trace_sample *samples;  /* in file order; NULL if read with
					* TRACE_READ_NO_SAMPLES */
	size_t nsamples;	       /* samples in the trace, loaded or not */
	struct trace_event *events;    /* in file order; NULL if read with
					* TRACE_READ_NO_EVENTS */
	size_t nevents;		       /* events in the trace, loaded or not */
	struct trace_switch *switches; /* in file order */
	size_t nswitches;
	struct trace_hold *holds; /* switch.hold indexes these */
	size_t nholds;
	struct trace_thread *comms; /* threads outside the target named by
				     * switches; sorted by tid */
	size_t ncomms;
	struct trace_sum *sums; /* lean mode's, in file order */
	size_t nsums;
	struct trace_sum_ent *sum_ents;
	size_t nsum_ents;
	struct trace_span *spans; /* in file order, always loaded; with a
				   * window, the spans' records before it
				   * are kept too (NEW, FIELD, ENTER, EXIT,
				   * CLOSE: what was open at its start, and
				   * what closed before it), not events */
	size_t nspans;
	struct trace_counters counters;
	int complete;  /* 1 if every segment's END chunk
			* was read */
	size_t chunks; /* whole chunks read */
	/* Segments in time order, each read once: a copy of one already
	 * read (same recording and index, e.g. in two overlapping dumps) is
	 * skipped and counted in dup_segments. Time between two segments
	 * that is in neither (a segment missing, or two recordings) is meta
	 * "segment_gap" = "START-END" (ns), like "shim_gap" for analysis.
	 * Counters are the sums over the segments (start_time the earliest,
	 * end_time the latest). */
	struct trace_segment *segments;
	size_t nsegments;
	size_t dup_segments;
	size_t other_segments; /* of the processes not read
				* (trace_read_opts.pid, .last) */
	/* Of several files, those that could not be read (corrupt, not a
	 * trace, or cut before their first chunk: a dump half written), left
	 * out, each with why; the read fails only where none is left */
	struct trace_skipped {
		const char *file, *why;
	} * skipped;
	size_t nskipped;
	uint64_t from, to;	   /* the window read (see
				    * trace__read_paths), 0 = none */
	struct trace_arena *arena; /* private: the strings; NULL in a
				    * trace built by hand */
	struct trace_src *src;	   /* private: the file and where its
				    * unloaded chunks are; NULL if all is
				    * in memory */
};

/* Read the trace at @path. Returns 0 and a trace in *@out, or -errno:
 *   -ENOENT/-EACCES/...  the file cannot be opened
 *   -EBADMSG             not a d9prof trace, or a corrupt chunk (bad
 *                        checksum, undecodable frame, bad ids)
 *   -EPROTONOSUPPORT     a format version this build does not read
 * A file cut short is not an error: *@out holds every whole chunk and
 * complete == 0. On error *@errmsg (if non-NULL) points to a static string
 * saying what is wrong, e.g. "chunk 12 at offset 40960: checksum mismatch"
 * (a per-thread buffer, valid until this thread's next trace__read()).
 * Memory is bounded by the file's size (each chunk's raw size <= 1 GiB;
 * inline frames make a stack at most 257 times as long). */
int trace__read(const char *path, struct trace **out, const char **errmsg);

/* What trace__read_opts() leaves on disk, to be walked in passes instead:
 * memory then grows with distinct stacks, frames, threads and tasks (and
 * switches), not with the recording's length. Ignored for a file that is
 * not a regular file (a pipe cannot be read twice): all is loaded. */
#define TRACE_READ_NO_SAMPLES 0x1u
#define TRACE_READ_NO_EVENTS  0x2u
/* Inline frames: by default each frame with functions inlined at its
 * address becomes, in every stack, those functions as frames of their own
 * (innermost first; appended to frames[] after the recorded ones, with the
 * frame's addr, module and kernel, sym the inlined function's name, offset
 * 0 and inlined = 1) followed by the frame itself; stack ids and the ids
 * of recorded frames do not change. This flag leaves stacks as recorded
 * (the INLINES chunks are still checked). Readers older than INLINES
 * chunks skip them and read the file as with this flag. */
#define TRACE_READ_NO_INLINE 0x4u
/* The application's spans and events (SPANS and SPAN_STATE chunks) are
 * checked and left out (spans NULL; nspans counts the SPANS chunks'
 * records, unfiltered by a window): what a reader that shows none, or
 * only counts them, reads in memory bounded by its answer, however many
 * the service made. */
#define TRACE_READ_NO_SPANS 0x8u
/* ... or left on disk (spans NULL, nspans counted as above), to be walked
 * by trace__for_each_span(): what a reader of the spans does in memory
 * bounded by what it keeps of them, not by their records. */
#define TRACE_READ_SPANS_LATER 0x10u

/* trace__read() with @flags (TRACE_READ_*). The chunks left out are still
 * checked (header and payload checksums, one zstd frame of the declared
 * size); their records are decoded, and checked like trace__read() does,
 * by each pass of trace__for_each_sample()/_event(). The trace keeps the
 * file open until trace__free(). */
int trace__read_opts(const char *path, unsigned int flags, struct trace **out,
		     const char **errmsg);

/* Read several files, or directories (their *.d9 and *.data files), as
 * one trace: every segment of every file in time order (by its start),
 * copies skipped, gaps noted (struct trace). @o may be NULL. With
 * @o->window, only records in [from, to] are kept (samples and events by
 * time, off-CPU intervals by switch-out time; 0 = no bound), where the
 * callback sets the bounds once the segments are known (their times and
 * clock offsets, to turn a wall-clock time or one relative to the start
 * into CLOCK_MONOTONIC); counters.start_time/end_time become the window's
 * (so analysis starts a poll open at @from there, as after an attach).
 * The callback returns 0 or -errno (the read fails with it, *@errmsg =
 * its message from @o->why if set); it is not called when there is no
 * segment. Errors as trace__read_opts(), the
 * message naming the file. */
struct trace_read_opts {
	unsigned int flags; /* TRACE_READ_* */
	/* Several processes are never one trace (task and thread ids would
	 * collide): inputs that recorded more than one (two pids, or one pid
	 * on two boots; trace_segment.process) fail with -ENOTUNIQ and a
	 * message naming each (pid, command, start, files), unless @pid
	 * picks the one of that pid or @last the one recorded last (a
	 * service restarted); the others' segments are left out */
	uint32_t pid;
	int last;
	int (*window)(void *ctx, const struct trace_segment *seg, size_t n,
		      uint64_t *from, uint64_t *to);
	void *ctx;
	const char *why; /* set by @window on error */
};
int trace__read_paths(const char *const *paths, size_t npaths,
		      const struct trace_read_opts *o, struct trace **out,
		      const char **errmsg);

/* Called with the records of one chunk at a time (@n >= 1), in file order;
 * the array is valid during the call only. Return 0 to go on, anything
 * else to stop the walk and have it returned. */
typedef int (*trace_sample_fn)(void *ctx, const struct trace_sample *s, size_t n);
typedef int (*trace_event_fn)(void *ctx, const struct trace_event *e, size_t n);

/* Walk every sample (event) of @t in file order, from memory if loaded
 * (also a trace built by hand), else by decoding its chunks from the file
 * one at a time (memory: one chunk). Sample stack ids are checked against
 * the stacks defined before their chunk, as trace__read() does. Returns 0,
 * @fn's nonzero return, or -errno: -EBADMSG for a corrupt chunk (see
 * trace__error()), -ENOMEM, -EIO or another read error. Not thread-safe
 * on one trace (the walk reuses the trace's buffers). */
int trace__for_each_sample(const struct trace *t, trace_sample_fn fn, void *ctx);
int trace__for_each_event(const struct trace *t, trace_event_fn fn, void *ctx);
/* Walk every sample and every event of @t, one chunk at a time as the
 * two walks above do, in the order the chunks are in the file: as the
 * recorder wrote them, so records of any time come at about the same
 * point of the walk (a second or so apart in a recording), which lets a
 * join of the two keep only that much. Records in memory come first, all
 * of them (events, then samples). Returns as the walks above. */
int trace__for_each_record(const struct trace *t, trace_sample_fn sfn, trace_event_fn efn,
			   void *ctx);
/* The same, the records before @from left out where they are read from
 * the file (those in memory all come), and the chunks whose index says
 * they end before it not read at all: a walk from a point of the trace. */
int trace__for_each_record_from(const struct trace *t, uint64_t from, trace_sample_fn sfn,
				trace_event_fn efn, void *ctx);
/* 1 if such a walk skips what lies before @from: the records are left on
 * disk (a TRACE_READ_NO_* read) and the file indexes every chunk of them
 * (a trace written before the INDEX chunk has none): else 0. */
int trace__seekable(const struct trace *t);
/* The application's span records (struct trace_span), as trace.spans
 * holds them when loaded (file order; with a window, those about the
 * life of a span from before it too), in batches: from memory, or from
 * the file one chunk at a time (TRACE_READ_SPANS_LATER). Their strings
 * live as long as the trace. Returns as the walks above. */
typedef int (*trace_span_fn)(void *ctx, const struct trace_span *s, size_t n);
int trace__for_each_span(const struct trace *t, trace_span_fn fn, void *ctx);
/* Why the last walk of @t failed, like trace__read()'s *errmsg (e.g.
 * "chunk 12 at offset 40960: sample refers to an undefined stack"); NULL
 * if it did not fail. Valid until the next walk or trace__free(). */
const char *trace__error(const struct trace *t);

/* Free a trace from trace__read() (NULL is a no-op). */
void trace__free(struct trace *t);

/* Helpers on a read trace: the last value of meta @key, a task's or a
 * thread's name; NULL if absent. Also work on a trace built by hand. */
const char *trace__meta(const struct trace *t, const char *key);
const char *trace__task_name(const struct trace *t, uint64_t task);
const char *trace__thread_name(const struct trace *t, uint32_t tid);
/* The name of @tid among the threads outside the target, else among the
 * target's; NULL if neither names it. */
const char *trace__comm(const struct trace *t, uint32_t tid);

#endif /* D9_TRACE_H */
