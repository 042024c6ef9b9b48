/* SPDX-License-Identifier: MIT */
/*
 * d9prof.h - the d9prof runtime shim.
 *
 * An async runtime calls these at task and poll boundaries. While no
 * recorder and no tracer is attached each call costs two loads and a
 * branch. While
 * `d9prof record -p PID` is attached, each call appends at most one
 * fixed-size record (time on the segment's clock: the TSC where usable,
 * else CLOCK_MONOTONIC nanoseconds; task id; event type) to a lock-free
 * ring owned by the calling thread, in a shared-memory segment the recorder
 * maps; a whole poll is usually one record.
 *
 * Contracts, for every function below:
 *   - safe to call from any thread, including threads that never called
 *     d9_thread_start();
 *   - never blocks, never takes a lock and never allocates on the poll path
 *     (d9_poll_begin/end, d9_task_wake, d9_park/unpark); a full ring drops
 *     the record and counts the drop, it never waits;
 *   - never fails visibly: whatever the recorder does (attaches, detaches,
 *     dies), the host process runs on; a shim that cannot set itself up
 *     turns every call into a no-op;
 *   - depends on libc only.
 * The markers are not async-signal-safe: do not call them from a signal
 * handler.
 * When a recorder samples with `--sampler ctimer`, the shim installs a
 * handler for one real-time signal the application leaves at SIG_DFL
 * (SIGRTMAX-2 down to SIGRTMAX-9; D9PROF_SIGNAL=N picks N and chains to the
 * application's handler) and gives each marker-running thread a CPU-time
 * timer for as long as the recorder is attached; see d9prof(3).
 * Each call is also a USDT probe of provider d9prof (task_spawn,
 * task_poll_start, task_poll_end, task_terminate, task_wake,
 * worker_thread_start/_stop/_park/_unpark) that perf, bpftrace or
 * systemtap can attach to, recorder or not; see USDT PROBES in d9prof(3).
 */
#ifndef D9PROF_H
#define D9PROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define D9PROF_VERSION_MAJOR 0
#define D9PROF_VERSION_MINOR 2

/*
 * Set up the shim: create the shared segment the recorder looks for.
 * Idempotent and thread-safe; every other call initialises lazily, so
 * calling it is optional (do it early to make the process discoverable
 * before its first task runs). Returns 0, or -errno when the segment could
 * not be created (the shim then stays a no-op).
 */
int d9_init(void);

/* A runtime worker thread starts; @name (may be NULL) is copied. */
void d9_thread_start(const char *name);
/* The calling thread stops running tasks; frees its ring slot. */
void d9_thread_stop(void);

/* Task @task is created; @name (a label or spawn location) is copied and
 * may be NULL. Task ids are chosen by the runtime and must be non-zero and
 * not ~0 (UINT64_MAX: reserved; a recorder drops records of either). */
void d9_task_spawn(uint64_t task, const char *name);
/* Task @task was woken (made runnable). The cheapest place for a wake of
 * the task this thread is polling is between its d9_poll_begin and
 * d9_poll_end (a waker fired during the poll, or a yield the runtime marks
 * before the poll's end): it reads no clock, and the poll's record carries
 * it (a record of its own only when the poll wrote its begin separately,
 * e.g. another record came during it). Within ~1.5 us after d9_poll_end it
 * costs a clock read and is folded the same way; any other wake is a
 * clock read and a record. */
void d9_task_wake(uint64_t task);
/* The runtime starts polling @task on this thread. */
void d9_poll_begin(uint64_t task);
/* The poll of @task on this thread returned. */
void d9_poll_end(uint64_t task);
/* Task @task completed or was dropped. */
void d9_task_end(uint64_t task);
/* Task @task is pending and no waker of it is left: the last one was
 * dropped without waking it, or its poll returned pending keeping none.
 * Nothing can wake it again: a lost waker, unless it is cancelled. For a
 * runtime (or binding) that counts a task's wakers: call it when the
 * count falls to zero while the task waits (d9prof's Rust crate does, for
 * the wakers its futures see); then the lost waker is known at once, not
 * guessed after 2 s without a wake. */
void d9_task_waker_drop(uint64_t task);
/* The calling worker goes idle / resumes. */
void d9_park(void);
void d9_unpark(void);

/*
 * Spans and application events: what the application does, beside what the
 * runtime does, with tracing's model of a span (so that a tracing layer is a
 * thin mapping). A span (a request, a database call) is created with a name
 * and maybe a parent, entered and exited on threads (possibly many times, on
 * several threads, inside polls of several tasks), and closed. Its time
 * splits by where it was while alive: entered and on CPU, entered and
 * blocked or waiting for a CPU, or not entered (waiting to be polled, or for
 * I/O): `d9prof spans`, `flame --span`. Each call is one record (NEW, FIELD
 * and d9_event: plus at most four for its numbers and strings) on the
 * calling thread's ring, dropped and counted like any other when the ring
 * is full. Spans created while no recorder is attached are not named in a
 * recording (they are shown as "[span created before the recording]").
 */
/* Span @span is created, a child of @parent (0: none). @span is chosen by
 * the caller: non-zero, not ~0, and unique among the process's open spans
 * (it may be reused once closed). @name is copied (at most 87 bytes). */
void d9_span_new(uint64_t span, uint64_t parent, const char *name);
/* The calling thread enters span @span / leaves it (nesting allowed: enter
 * A, enter B, exit B, exit A). */
void d9_span_enter(uint64_t span);
void d9_span_exit(uint64_t span);
/* Span @span is closed: its life ends here (the application's last handle
 * to it is gone). */
void d9_span_close(uint64_t span);
/* A field of span @span (a route, a request id): @key = @value, or = @text
 * where @text is not NULL or "". Strings copied, @key to at most 47 bytes,
 * @text to what the 88 bytes left hold after it (at least 39). */
void d9_span_field(uint64_t span, const char *key, int64_t value, const char *text);
/* An application event: @name (at most 47 bytes) with @value and, where not
 * NULL or "", @text (what the 96 bytes left hold after the name, at least
 * 47), at the calling thread now (inside whatever poll and span it is in). */
void d9_event(const char *name, int64_t value, const char *text);

/*
 * The detached fast path, inline: the poll-path markers are also
 * function-like macros that read two words and call the function only while
 * a recorder is attached, a tracer is attached to one of the shim's USDT
 * probes (they sit in the function), or before the shim has initialised
 * (so that the first call sets it up). The functions above stay the ABI:
 * taking their address, other languages' bindings, and code built with
 * -DD9PROF_NO_INLINE call them directly, at the cost of a call.
 * d9__gate (the recorder's attached word) and d9__probed (the probes' USDT
 * semaphore, counted by the kernel) are internal: never write them.
 */
extern const uint32_t *d9__gate;
extern const uint16_t *const d9__probed;

#ifndef D9PROF_NO_INLINE
/* relaxed atomic loads: a plain mov on x86-64 and arm64, and no data race
 * with the recorder's or the kernel's store */
#define D9_GATE_OPEN_()                                                                  \
	(__atomic_load_n(__atomic_load_n(&d9__gate, __ATOMIC_RELAXED),                   \
			 __ATOMIC_RELAXED) |                                             \
	 __atomic_load_n(d9__probed, __ATOMIC_RELAXED))
#define D9_GATED_(call)			(__builtin_expect(D9_GATE_OPEN_() != 0, 0) ? (call) : (void)0)
#define d9_task_wake(task)		D9_GATED_(d9_task_wake(task))
#define d9_poll_begin(task)		D9_GATED_(d9_poll_begin(task))
#define d9_poll_end(task)		D9_GATED_(d9_poll_end(task))
#define d9_park()			D9_GATED_(d9_park())
#define d9_unpark()			D9_GATED_(d9_unpark())
#define d9_span_new(span, parent, name) D9_GATED_(d9_span_new(span, parent, name))
#define d9_span_enter(span)		D9_GATED_(d9_span_enter(span))
#define d9_span_exit(span)		D9_GATED_(d9_span_exit(span))
#define d9_span_close(span)		D9_GATED_(d9_span_close(span))
#define d9_span_field(span, key, value, text)                                            \
	D9_GATED_(d9_span_field(span, key, value, text))
#define d9_event(name, value, text) D9_GATED_(d9_event(name, value, text))
#endif

#ifdef __cplusplus
}
#endif
#endif /* D9PROF_H */
