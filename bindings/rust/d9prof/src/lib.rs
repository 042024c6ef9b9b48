//! Task and poll markers for the d9prof profiler, over libd9prof's C ABI
//! (`include/d9prof.h`).
//!
//! A runtime calls these at task spawn, wake, poll begin/end, completion and
//! worker park/unpark; `d9prof record -p PID` then joins every CPU sample
//! and off-CPU interval of the process to the task being polled on that
//! thread. While no recorder (and no USDT tracer) is attached every
//! poll-path marker reads two words and branches, inline, and calls
//! nothing: the same gate as the C header's macros; attached, one record
//! in a per-thread lock-free ring. Markers never block, allocate or fail
//! visibly.
//!
//! Build the program with frame pointers (`-C force-frame-pointers=yes`,
//! e.g. in `.cargo/config.toml` under `[build] rustflags`): d9prof's
//! sampler walks them.
//!
//! With the `tokio` feature, [`tokio`](crate::tokio) instruments a Tokio
//! runtime: named workers, parks, and spawn wrappers that mark every poll.
//! With the `tracing` feature, [`D9Layer`](crate::tracing::D9Layer)
//! records the application's `tracing` spans and events (`d9prof spans`,
//! `d9prof events`, `flame --span`).
//!
//! Linking: `build.rs` compiles the shim (`libprof/*.c`, C on libc alone)
//! from the d9prof checkout the crate is in and links it statically, so
//! the program needs no library at run time; `D9PROF_LIB_DIR=DIR` links
//! the one `make` built in DIR instead (static with `D9PROF_STATIC=1` or
//! when only `libd9prof.a` is there), `D9PROF_PKG_CONFIG=1` the installed
//! one through pkg-config's `d9prof.pc` (`make install`).

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicPtr, AtomicU16, AtomicU32, AtomicU64, Ordering};

#[cfg(feature = "tokio")]
pub mod tokio;
#[cfg(feature = "tracing")]
pub mod tracing;

/// The raw C ABI of `d9prof.h`: its public calls, nothing internal.
///
/// The five poll-path calls and the six of spans and events are `#[cold]`:
/// the crate calls them only past its inline gate, whose closed side is the
/// hot path, so their calls are laid out off the detached path
/// (`__builtin_expect` in the C macros). Called directly, not through a
/// wrapper of ours: the shim sees its caller's return address.
///
/// Spans and events (`D9PROF_0.2`): a span id is the caller's, non-zero,
/// not `u64::MAX`, unique among the process's open spans (reusable once
/// closed); `parent` 0 is none. Strings are copied and cut: a span's name
/// to 87 bytes, a field's key to 47 and its text to 39 (`text` NULL or
/// empty: a numeric field, `value`), an event's name and text to 47.
pub mod ffi {
    use std::os::raw::{c_char, c_int};

    extern "C" {
        pub fn d9_init() -> c_int;
        pub fn d9_thread_start(name: *const c_char);
        pub fn d9_thread_stop();
        pub fn d9_task_spawn(task: u64, name: *const c_char);
        #[cold]
        pub fn d9_task_wake(task: u64);
        #[cold]
        pub fn d9_poll_begin(task: u64);
        #[cold]
        pub fn d9_poll_end(task: u64);
        pub fn d9_task_end(task: u64);
        pub fn d9_task_waker_drop(task: u64);
        #[cold]
        pub fn d9_park();
        #[cold]
        pub fn d9_unpark();
        #[cold]
        pub fn d9_span_new(span: u64, parent: u64, name: *const c_char);
        #[cold]
        pub fn d9_span_enter(span: u64);
        #[cold]
        pub fn d9_span_exit(span: u64);
        #[cold]
        pub fn d9_span_close(span: u64);
        #[cold]
        pub fn d9_span_field(span: u64, key: *const c_char, value: i64, text: *const c_char);
        #[cold]
        pub fn d9_event(name: *const c_char, value: i64, text: *const c_char);
    }
}

// Internal to the shim, not d9prof.h's API: the two words its inline gate
// (D9_GATE_OPEN_) reads, as gate_open does here; never written from Rust.
// - d9__gate, a `const uint32_t *` in C, points at the recorder's attached
//   word; the shim moves it (initialisation, fork), so it is loaded on
//   every check, relaxed, as the macro does;
// - d9__probed, a `const uint16_t *const` in C, points at the USDT
//   semaphore the kernel counts while a tracer is attached to one of the
//   shim's probes (libprof/usdt.h). The pointer is constant (initialised
//   at load time, never stored to), so it is read plainly and the compiler
//   may keep it in a register; the count it points at is loaded relaxed.
extern "C" {
    static d9__gate: AtomicPtr<u32>;
    static d9__probed: *const u16;
}

/// The longest task name the shim keeps whole however the task is
/// recorded, in bytes: one spawned while a recorder is attached keeps
/// `D9_NAME_MAX` (71) bytes, one spawned before waits in the segment's
/// name table (`struct d9_name_slot`, `libprof/d9_segment.h`), which keeps
/// 51. A longer name is cut there.
pub const NAME_MAX: usize = 51;

/// A task id: chosen by the runtime, unique, never 0.
pub type TaskId = u64;

static NEXT_TASK: AtomicU64 = AtomicU64::new(1);

/// A fresh task id (process-wide counter starting at 1).
#[inline]
pub fn next_task_id() -> TaskId {
    NEXT_TASK.fetch_add(1, Ordering::Relaxed)
}

/// True while a recorder is attached, while a tracer is attached to one of
/// the shim's USDT probes, or before the shim has set itself up (so that
/// the first call does): `*d9__gate | *d9__probed`, the inline fast path
/// of the C header's macros: two words read through two pointers, one
/// branch in the caller, no call.
#[inline(always)]
pub(crate) fn gate_open() -> bool {
    // SAFETY: d9__gate always points to a live u32 (the segment's
    // `attached` word, or a static one) and d9__probed to the shim's
    // static semaphore; the words are loaded with relaxed atomics, as the
    // C macro does (the recorder and the kernel store to them). d9__probed
    // itself is never written: a plain read.
    unsafe {
        let attached =
            (*d9__gate.load(Ordering::Relaxed).cast::<AtomicU32>()).load(Ordering::Relaxed);
        let probed = (*d9__probed.cast::<AtomicU16>()).load(Ordering::Relaxed);
        // one OR and one branch, not two (no short circuit), as in C
        (attached | u32::from(probed)) != 0
    }
}

/// True while a recorder is attached (or a tracer to one of the shim's
/// USDT probes): what the markers' gate reads, e.g. for a test program
/// that starts its known behaviour only once it is watched. Call
/// [`init`] first: before the shim has set itself up it says true.
pub fn recording() -> bool {
    gate_open()
}

fn cstring(s: &str) -> CString {
    // an interior NUL cuts the name there rather than losing it
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}

/// Set up the shim now (optional: every call does it lazily), so that the
/// process is discoverable before its first task runs. `Err(errno)` when
/// the segment could not be created; the markers are then no-ops.
pub fn init() -> Result<(), i32> {
    // SAFETY: no arguments; thread-safe and idempotent.
    match unsafe { ffi::d9_init() } {
        0 => Ok(()),
        e => Err(-e),
    }
}

/// The calling thread is a runtime worker named `name` (copied).
pub fn thread_start(name: &str) {
    let c = cstring(name);
    // SAFETY: a valid NUL-terminated string, copied by the shim.
    unsafe { ffi::d9_thread_start(c.as_ptr()) }
}

/// The calling thread stops running tasks.
pub fn thread_stop() {
    // SAFETY: no arguments.
    unsafe { ffi::d9_thread_stop() }
}

/// Task `id` is created, named `name` (a label or its spawn location;
/// keep it within [`NAME_MAX`] bytes).
pub fn task_spawn(id: TaskId, name: &str) {
    task_spawn_c(id, &cstring(name));
}

#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) fn task_spawn_c(id: TaskId, name: &CStr) {
    // SAFETY: a valid NUL-terminated string, copied by the shim.
    unsafe { ffi::d9_task_spawn(id, name.as_ptr()) }
}

/// Task `id` was woken.
#[inline(always)]
pub fn task_wake(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_task_wake(id) }
    }
}

/// Task `id` waits and no waker of it is left (the last one was dropped
/// without a wake): a lost waker for sure. The crate's [`tokio::Marked`]
/// counts its wakers and calls it.
#[inline(always)]
pub fn task_waker_drop(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_task_waker_drop(id) }
    }
}

/// The runtime starts polling `id` on this thread; prefer [`poll`].
#[inline(always)]
pub fn poll_begin(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_poll_begin(id) }
    }
}

/// The poll of `id` on this thread returned; prefer [`poll`].
#[inline(always)]
pub fn poll_end(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_poll_end(id) }
    }
}

/// Task `id` completed or was dropped.
pub fn task_end(id: TaskId) {
    // SAFETY: plain value argument.
    unsafe { ffi::d9_task_end(id) }
}

/// The calling worker goes idle.
#[inline(always)]
pub fn park() {
    if gate_open() {
        // SAFETY: no arguments.
        unsafe { ffi::d9_park() }
    }
}

/// The calling worker resumes.
#[inline(always)]
pub fn unpark() {
    if gate_open() {
        // SAFETY: no arguments.
        unsafe { ffi::d9_unpark() }
    }
}

/// A poll of one task on this thread: begun by [`poll`], ended on drop
/// (also when the poll panics).
#[must_use = "the poll ends when the guard is dropped"]
pub struct PollGuard {
    id: TaskId,
}

/// Begin polling `id`; the returned guard ends the poll.
#[inline(always)]
pub fn poll(id: TaskId) -> PollGuard {
    poll_begin(id);
    PollGuard { id }
}

impl Drop for PollGuard {
    #[inline(always)]
    fn drop(&mut self) {
        poll_end(self.id);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    static GATE: Mutex<()> = Mutex::new(());

    /// The gate is process-wide: the tests that look at it or open it take
    /// turns.
    pub(crate) fn gate_lock() -> MutexGuard<'static, ()> {
        GATE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the kernel does while a USDT tracer is attached to one of the
    /// shim's probes: the shared semaphore is raised, until dropped.
    pub(crate) struct Traced;

    impl Traced {
        pub(crate) fn attach() -> Traced {
            // SAFETY: d9__probed points at the shim's semaphore, a static
            // `volatile unsigned short` in writable memory (the kernel
            // writes it); a u16 atomic has its size and alignment.
            let sem = unsafe { &*d9__probed.cast::<AtomicU16>() };
            sem.fetch_add(1, Ordering::SeqCst);
            Traced
        }
    }

    impl Drop for Traced {
        fn drop(&mut self) {
            // SAFETY: as in attach
            let sem = unsafe { &*d9__probed.cast::<AtomicU16>() };
            sem.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// A record of the calling thread's ring, decoded.
    #[derive(Debug, PartialEq)]
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) enum Rec {
        New {
            span: u64,
            parent: u64,
            name: String,
        },
        Enter(u64),
        Exit(u64),
        Close(u64),
        Field {
            span: u64,
            key: String,
            value: i64,
            text: String,
        },
        Event {
            name: String,
            value: i64,
            text: String,
        },
        /// Another type of record (a marker's)
        Other(u32),
    }

    // d9_segment.h, version 3: the header's and a ring header's fields
    // the in-process recorder uses (their offsets; magic and version are
    // checked before any other is used)
    const SEG_MAGIC: u64 = 0x3167_6573_3964_3964;
    const SEG_VERSION: u32 = 4;
    const H_VERSION: usize = 8;
    const H_NRINGS: usize = 40;
    const H_RING_EVENTS: usize = 44;
    const H_RING_OFFSET: usize = 48;
    const H_RING_STRIDE: usize = 56;
    const H_ATTACHED: usize = 192;
    const H_RECORDER_PID: usize = 196;
    const H_LEASE: usize = 200;
    const H_ATTACH_COUNT: usize = 208;
    const H_REQUEST: usize = 216;
    const H_REQUEST_GEN: usize = 224;
    const R_STATE: usize = 0;
    const R_TID: usize = 4;
    const R_HEAD: usize = 64;
    const R_TAIL: usize = 128;
    const R_EVENTS: usize = 320; // sizeof(struct d9_ring_hdr)
    const RING_DEAD: u32 = 2;
    const EV_THREAD_START: u32 = 1;
    const EV_SPAWN: u32 = 3;
    const EV_SPAN_NEW: u32 = 16;
    const EV_SPAN_ENTER: u32 = 17;
    const EV_SPAN_EXIT: u32 = 18;
    const EV_SPAN_CLOSE: u32 = 19;
    const EV_SPAN_FIELD: u32 = 20;
    const EV_EVENT: u32 = 21;

    /// A recorder in the process, on the shim's own segment, as
    /// tests/unit/test_shim.c is in C (d9_segment.h's `d9_seg_attach` and
    /// `d9_ring_consume`): attached from [`Attached::attach`] to
    /// [`Attached::detach`] or its drop, with a lease that never runs
    /// out; [`Attached::records`] takes what the calling thread's ring
    /// holds. The segment is found as the recorder finds it, by its name
    /// in the maps. Hold [`gate_lock`] meanwhile: it opens the gate.
    pub(crate) struct Attached {
        base: usize,
    }

    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    impl Attached {
        pub(crate) fn attach() -> Attached {
            assert_eq!(init(), Ok(()));
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            let base = maps
                .lines()
                .find_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    let whole = f.len() >= 6 && f[2].chars().all(|c| c == '0');
                    (whole && f[5] == "/memfd:d9prof-seg").then(|| f[0])
                })
                .and_then(|r| usize::from_str_radix(r.split('-').next()?, 16).ok())
                .expect("the shim's segment in /proc/self/maps");
            let a = Attached { base };
            // SAFETY: the start of the shim's mapping, at least one page
            let magic = unsafe { (*(base as *const AtomicU64)).load(Ordering::Relaxed) };
            assert_eq!(magic, SEG_MAGIC, "not a d9prof segment");
            assert_eq!(
                a.u32(H_VERSION).load(Ordering::Relaxed),
                SEG_VERSION,
                "segment version: update the offsets here (d9_segment.h)"
            );
            for i in 0..a.u32(H_NRINGS).load(Ordering::Relaxed) {
                let r = a.ring(i);
                let head = a.u64(r + R_HEAD).load(Ordering::Acquire);
                a.u64(r + R_TAIL).store(head, Ordering::Release);
                let _ = a.u32(r + R_STATE).compare_exchange(
                    RING_DEAD,
                    0,
                    Ordering::Release,
                    Ordering::Relaxed,
                );
            }
            a.u32(H_RECORDER_PID)
                .store(std::process::id(), Ordering::Relaxed);
            a.u64(H_LEASE).store(u64::MAX, Ordering::Relaxed);
            a.u64(H_ATTACH_COUNT).fetch_add(1, Ordering::Relaxed);
            a.u32(H_REQUEST).store(0, Ordering::Relaxed);
            a.u32(H_REQUEST_GEN).fetch_add(1, Ordering::Release);
            a.u32(H_ATTACHED).store(1, Ordering::Release);
            assert!(gate_open());
            a
        }

        pub(crate) fn detach(&mut self) {
            self.u32(H_ATTACHED).store(0, Ordering::Release);
            self.u64(H_LEASE).store(0, Ordering::Relaxed);
            self.u32(H_RECORDER_PID).store(0, Ordering::Relaxed);
            self.u32(H_REQUEST).store(0, Ordering::Relaxed);
            self.u32(H_REQUEST_GEN).fetch_add(1, Ordering::Release);
        }

        fn u32(&self, off: usize) -> &AtomicU32 {
            // SAFETY: an offset inside the mapped segment (the header's
            // fields, or a ring's within nrings * ring_stride), aligned
            unsafe { &*((self.base + off) as *const AtomicU32) }
        }

        fn u64(&self, off: usize) -> &AtomicU64 {
            // SAFETY: as in u32
            unsafe { &*((self.base + off) as *const AtomicU64) }
        }

        /// The offset of ring `i`'s header.
        fn ring(&self, i: u32) -> usize {
            let off = self.u64(H_RING_OFFSET).load(Ordering::Relaxed) as usize;
            let stride = self.u64(H_RING_STRIDE).load(Ordering::Relaxed) as usize;
            off + i as usize * stride
        }

        /// The records of the calling thread's ring since the last call
        /// (or the attach), decoded; consumed.
        pub(crate) fn records(&self) -> Vec<Rec> {
            let link = std::fs::read_link("/proc/thread-self").unwrap();
            let tid: u32 = link
                .file_name()
                .and_then(|t| t.to_str()?.parse().ok())
                .unwrap();
            let mine = (0..self.u32(H_NRINGS).load(Ordering::Relaxed))
                .map(|i| self.ring(i))
                .find(|&r| {
                    self.u32(r + R_STATE).load(Ordering::Acquire) != 0
                        && self.u32(r + R_TID).load(Ordering::Relaxed) == tid
                });
            let Some(r) = mine else {
                return Vec::new(); // never claimed one: nothing recorded
            };
            let mask = self.u32(H_RING_EVENTS).load(Ordering::Relaxed) as u64 - 1;
            let tail = self.u64(r + R_TAIL).load(Ordering::Relaxed);
            let head = self.u64(r + R_HEAD).load(Ordering::Acquire);
            // the 24 bytes of record i
            let raw = |i: u64| -> [u8; 24] {
                let at = self.base + r + R_EVENTS + ((i & mask) as usize) * 24;
                // SAFETY: a record inside the ring, published by head
                unsafe { std::ptr::read(at as *const [u8; 24]) }
            };
            let word = |b: &[u8], at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap());
            let half = |b: &[u8], at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap());
            let mut out = Vec::new();
            let mut i = tail;
            while i < head {
                // struct d9_event: time, task, type, arg
                let ev = raw(i);
                let (task, ty, k) = (word(&ev, 8), half(&ev, 16), u64::from(half(&ev, 20)));
                let payload: Vec<u8> = (1..=k).flat_map(|j| raw(i + j)).collect();
                // the NUL-terminated string at `at` and where the next begins
                let string = |at: usize| {
                    let s = &payload[at.min(payload.len())..];
                    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
                    (String::from_utf8_lossy(&s[..n]).into_owned(), at + n + 1)
                };
                out.push(match ty {
                    EV_SPAN_NEW => Rec::New {
                        span: task,
                        parent: word(&payload, 0),
                        name: string(8).0,
                    },
                    EV_SPAN_ENTER => Rec::Enter(task),
                    EV_SPAN_EXIT => Rec::Exit(task),
                    EV_SPAN_CLOSE => Rec::Close(task),
                    EV_SPAN_FIELD => {
                        let (key, next) = string(8);
                        Rec::Field {
                            span: task,
                            key,
                            value: word(&payload, 0) as i64,
                            text: string(next).0,
                        }
                    }
                    EV_EVENT => {
                        let (name, next) = string(0);
                        Rec::Event {
                            name,
                            value: task as i64,
                            text: string(next).0,
                        }
                    }
                    t => Rec::Other(t),
                });
                let grouped = matches!(
                    ty,
                    EV_THREAD_START | EV_SPAWN | EV_SPAN_NEW | EV_SPAN_FIELD | EV_EVENT
                );
                i += 1 + if grouped { k } else { 0 };
            }
            self.u64(r + R_TAIL).store(head, Ordering::Release);
            out
        }
    }

    impl Drop for Attached {
        fn drop(&mut self) {
            self.detach();
        }
    }

    #[test]
    fn task_ids_are_unique_and_never_zero() {
        let a = next_task_id();
        let b = next_task_id();
        assert_ne!(a, 0);
        assert!(b > a);
    }

    /// Each marker once, on a new task named `name`.
    fn every_marker(name: &str) {
        let id = next_task_id();
        task_spawn(id, name);
        task_wake(id);
        {
            let _g = poll(id);
        }
        park();
        unpark();
        task_end(id);
    }

    #[test]
    fn markers_run_with_no_recorder() {
        let _g = gate_lock();
        assert_eq!(init(), Ok(()));
        thread_start("test\0cut");
        every_marker("a task");
        thread_stop();
        // detached once set up: the gate is shut while nobody records
        assert!(!gate_open());
    }

    /// A USDT tracer opens the gate as a recorder does (the C macros'
    /// `*d9__gate | *d9__probed`): the markers then call into the shim,
    /// where the probes are, with no recorder attached.
    #[test]
    fn a_usdt_tracer_opens_the_gate() {
        let _g = gate_lock();
        assert_eq!(init(), Ok(()));
        assert!(!gate_open());
        {
            let _t = Traced::attach();
            assert!(gate_open());
            every_marker("traced");
            let _t2 = Traced::attach(); // two probes enabled
            assert!(gate_open());
        }
        assert!(!gate_open());
    }
}
