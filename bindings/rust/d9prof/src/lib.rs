//! Task and poll markers for the d9prof profiler, over libd9prof's C ABI
//! (`include/d9prof.h`).
//!
//! A runtime calls these at task spawn, wake, poll begin/end, completion and
//! worker park/unpark; `d9prof record -p PID` then joins every CPU sample
//! and off-CPU interval of the process to the task being polled on that
//! thread. While no recorder is attached every marker costs one load and a
//! branch (the same inline gate as the C header's macros); attached, one
//! record in a per-thread lock-free ring. Markers never block, allocate or
//! fail visibly.
//!
//! Build the program with frame pointers (`-C force-frame-pointers=yes`,
//! e.g. in `.cargo/config.toml` under `[build] rustflags`): d9prof's
//! sampler walks them.
//!
//! With the `tokio` feature, [`tokio`](crate::tokio) instruments a Tokio
//! runtime: named workers, parks, and spawn wrappers that mark every poll.
//!
//! Linking: `build.rs` compiles the shim (`libprof/*.c`, C on libc alone)
//! from the d9prof checkout the crate is in and links it statically, so
//! the program needs no library at run time; `D9PROF_LIB_DIR=DIR` links
//! the one `make` built in DIR instead (static with `D9PROF_STATIC=1` or
//! when only `libd9prof.a` is there), `D9PROF_PKG_CONFIG=1` the installed
//! one through pkg-config's `d9prof.pc` (`make install`).

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

#[cfg(feature = "tokio")]
pub mod tokio;

/// The raw C ABI of `d9prof.h`: its public calls, nothing internal.
pub mod ffi {
    use std::os::raw::{c_char, c_int};

    extern "C" {
        pub fn d9_init() -> c_int;
        pub fn d9_thread_start(name: *const c_char);
        pub fn d9_thread_stop();
        pub fn d9_task_spawn(task: u64, name: *const c_char);
        pub fn d9_task_wake(task: u64);
        pub fn d9_poll_begin(task: u64);
        pub fn d9_poll_end(task: u64);
        pub fn d9_task_end(task: u64);
        pub fn d9_park();
        pub fn d9_unpark();
    }
}

// Internal to the shim, not d9prof.h's API (its macros read it, as
// gate_open does here): the word the inline gate reads; never written from
// Rust. A `const uint32_t *` in C.
extern "C" {
    static d9__gate: AtomicPtr<u32>;
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

/// 1 while a recorder is attached (or before the shim has set itself up, so
/// that the first call does): the inline fast path of the C header.
#[inline(always)]
pub(crate) fn gate_open() -> bool {
    // SAFETY: d9__gate always points to a live u32 (the segment's
    // `attached` word, or a static one); both loads are relaxed atomics,
    // as the C macros do.
    unsafe {
        let p = d9__gate.load(Ordering::Relaxed);
        (*(p as *const AtomicU32)).load(Ordering::Relaxed) != 0
    }
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
#[inline]
pub fn task_wake(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_task_wake(id) }
    }
}

/// The runtime starts polling `id` on this thread; prefer [`poll`].
#[inline]
pub fn poll_begin(id: TaskId) {
    if gate_open() {
        // SAFETY: plain value argument.
        unsafe { ffi::d9_poll_begin(id) }
    }
}

/// The poll of `id` on this thread returned; prefer [`poll`].
#[inline]
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
#[inline]
pub fn park() {
    if gate_open() {
        // SAFETY: no arguments.
        unsafe { ffi::d9_park() }
    }
}

/// The calling worker resumes.
#[inline]
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
#[inline]
pub fn poll(id: TaskId) -> PollGuard {
    poll_begin(id);
    PollGuard { id }
}

impl Drop for PollGuard {
    #[inline]
    fn drop(&mut self) {
        poll_end(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_unique_and_never_zero() {
        let a = next_task_id();
        let b = next_task_id();
        assert_ne!(a, 0);
        assert!(b > a);
    }

    #[test]
    fn markers_run_with_no_recorder() {
        assert_eq!(init(), Ok(()));
        thread_start("test\0cut");
        let id = next_task_id();
        task_spawn(id, "a task");
        task_wake(id);
        {
            let _g = poll(id);
        }
        park();
        unpark();
        task_end(id);
        thread_stop();
        // detached once set up: the gate is shut while nobody records
        assert!(!gate_open());
    }
}
