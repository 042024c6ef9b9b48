//! Tokio instrumentation (feature `tokio`).
//!
//! - [`instrument`] names the runtime's worker threads for d9prof and
//!   records their parks;
//! - [`spawn`], [`spawn_named`], [`spawn_local`] and [`spawn_blocking`]
//!   return Tokio's `JoinHandle` for a future (or closure) wrapped so that
//!   every poll is marked, every wake is `task_wake`, and completion or
//!   cancellation (the task dropped, e.g. `JoinHandle::abort`) is
//!   `task_end`. While no recorder (or USDT tracer) is attached a poll
//!   adds the gate, inline in the runtime's poll (two words read and a
//!   branch): the future sees the runtime's own waker.
//!
//! An unnamed task ([`spawn`], [`spawn_local`], [`spawn_blocking`]) is
//! named by its future's (or closure's) type and its spawn site, e.g.
//! `myapp::compute_report::{{closure}} src/main.rs:42` for
//! `spawn(compute_report(x))`, so `d9prof tasks` shows poll time per kind
//! of task and per spawn site (see [`task_name`] for the rule). The name
//! is made once per spawn site and type on each thread, then reused: a
//! spawn then costs a hash lookup, no formatting and no allocation.
//!
//! Only tasks spawned through these wrappers carry task ids: Tokio 1.24 has
//! no hook into its own spawn. Tokio >= 1.38 built with
//! `--cfg tokio_unstable` has task hooks (`on_task_spawn`,
//! `on_before_task_poll`, `on_after_task_poll`, `on_task_terminate`) that
//! would mark every task with no wrapper; [`instrument`] is where a future
//! feature of this crate will install them, with the same names and ids.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use ::tokio::runtime::Builder;
use ::tokio::task::JoinHandle;
use pin_project_lite::pin_project;

use crate::TaskId;

/// Mark `builder`'s threads: each worker (and blocking-pool thread) is
/// named for d9prof after its thread name when it starts, and its parks
/// and unparks are recorded. Returns `builder` for chaining.
pub fn instrument(builder: &mut Builder) -> &mut Builder {
    builder
        .on_thread_start(|| {
            let t = std::thread::current();
            crate::thread_start(t.name().unwrap_or("tokio-worker"));
        })
        .on_thread_stop(crate::thread_stop)
        .on_thread_park(crate::park)
        .on_thread_unpark(crate::unpark)
}

/// What the wakers a marked task's future sees share: the task, the
/// runtime's waker they wake, how many of them are out (clones the future
/// or what it waits on keep: the one the task holds itself is not
/// counted), and where the task is: [`IDLE`], [`POLLING`], [`WOKEN`] (in
/// its poll), [`WAITING`] (its last poll pending, no wake since). The
/// last one out dropped while it waits is `task_waker_drop`: nothing can
/// wake it again. Made again only when the runtime hands the task another
/// waker (Tokio's is the same for the task's life), so a poll allocates
/// nothing.
struct Wakers {
    id: TaskId,
    inner: Waker,
    out: AtomicUsize,
    state: AtomicU8,
}

const IDLE: u8 = 0;
const POLLING: u8 = 1;
const WOKEN: u8 = 2;
const WAITING: u8 = 3;

impl Wakers {
    fn wake(&self) {
        // woken: no longer waiting (a wake in its poll: runnable again)
        let _ = self
            .state
            .compare_exchange(WAITING, IDLE, Ordering::AcqRel, Ordering::Relaxed);
        let _ = self
            .state
            .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Relaxed);
        crate::task_wake(self.id);
        self.inner.wake_by_ref();
    }

    /// None of its wakers out and it waits: lost (said once).
    fn none_left(&self) {
        if self.out.load(Ordering::Acquire) == 0
            && self
                .state
                .compare_exchange(WAITING, IDLE, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            crate::task_waker_drop(self.id);
        }
    }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A waker of `w` that is not counted: the one the task's poll lends.
fn lent(w: &Arc<Wakers>) -> ManuallyDrop<Waker> {
    // SAFETY: the vtable's functions take the pointer as an Arc<Wakers>
    // that `w` keeps alive while the waker is lent (for one poll); it is
    // never dropped, so it takes no count of its own.
    ManuallyDrop::new(unsafe {
        Waker::from_raw(RawWaker::new(Arc::as_ptr(w).cast::<()>(), &VTABLE))
    })
}

unsafe fn clone(p: *const ()) -> RawWaker {
    // SAFETY: `p` is an Arc<Wakers> kept alive by the waker cloned.
    unsafe {
        Arc::increment_strong_count(p.cast::<Wakers>());
        (*p.cast::<Wakers>()).out.fetch_add(1, Ordering::AcqRel);
    }
    RawWaker::new(p, &VTABLE)
}

unsafe fn wake(p: *const ()) {
    // SAFETY: as clone's; the waker is consumed
    unsafe {
        wake_by_ref(p);
        drop_waker(p);
    }
}

unsafe fn wake_by_ref(p: *const ()) {
    // SAFETY: as clone's.
    unsafe { (*p.cast::<Wakers>()).wake() }
}

unsafe fn drop_waker(p: *const ()) {
    // SAFETY: a counted clone (the lent one is never dropped): its count
    // and its share of the Arc go.
    unsafe {
        let w = &*p.cast::<Wakers>();
        if w.out.fetch_sub(1, Ordering::AcqRel) == 1 {
            w.none_left();
        }
        Arc::decrement_strong_count(p.cast::<Wakers>());
    }
}

pin_project! {
    /// A future whose polls, wakes and end are marked as task `id`, and
    /// the loss of its last waker while it waits.
    pub struct Marked<F> {
        id: TaskId,
        #[pin]
        fut: F,
        // its wakers, for the runtime's last one
        wakers: Option<Arc<Wakers>>,
    }

    // task_end before `fut` is dropped, as a plain Drop would; its wakers
    // still out say nothing more
    impl<F> PinnedDrop for Marked<F> {
        fn drop(this: Pin<&mut Self>) {
            crate::task_end(this.id);
            if let Some(w) = &this.wakers {
                w.state.store(IDLE, Ordering::Release);
            }
        }
    }
}

impl<F> Marked<F> {
    /// Wrap `fut` as a new task named `name` (task_spawn now).
    pub fn new(name: &str, fut: F) -> Self {
        let id = crate::next_task_id();
        crate::task_spawn(id, name);
        Self::with_id(id, fut)
    }

    /// Wrap `fut` as a new task named after `F` and the caller's location
    /// (see [`task_name`]).
    #[track_caller]
    pub fn unnamed(fut: F) -> Self {
        let id = crate::next_task_id();
        spawn_unnamed::<F>(id, Location::caller());
        Self::with_id(id, fut)
    }

    fn with_id(id: TaskId, fut: F) -> Self {
        Marked {
            id,
            fut,
            wakers: None,
        }
    }

    /// The task id it is marked with.
    pub fn id(&self) -> TaskId {
        self.id
    }
}

/// The wakers of task `id` for `runtime`, kept in `slot`: made again when
/// the runtime's waker changes (the old ones out then say nothing more).
fn wakers_for<'a>(
    slot: &'a mut Option<Arc<Wakers>>,
    id: TaskId,
    runtime: &Waker,
) -> &'a Arc<Wakers> {
    let fresh = match slot {
        Some(w) => !w.inner.will_wake(runtime),
        None => true,
    };
    if fresh {
        if let Some(old) = slot {
            old.state.store(IDLE, Ordering::Release);
        }
        *slot = Some(Arc::new(Wakers {
            id,
            inner: runtime.clone(),
            out: AtomicUsize::new(0),
            state: AtomicU8::new(IDLE),
        }));
    }
    slot.as_ref().unwrap()
}

impl<F: Future> Future for Marked<F> {
    type Output = F::Output;

    /// Inline into the runtime's poll: detached, the gate and the inner
    /// future's poll, nothing else.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if crate::gate_open() {
            return self.poll_marked(cx);
        }
        // nobody records: the runtime's own waker, nothing added (a waker
        // handed out now marks no wake if it fires after a recorder
        // attached; the next poll hands out a marking one)
        self.project().fut.poll(cx)
    }
}

impl<F: Future> Marked<F> {
    /// A poll while the gate is open: marked, with our waker, and, if it
    /// returns pending keeping no waker and unwoken, the waker's loss.
    /// Out of line and cold, so that the detached poll keeps no registers
    /// for it.
    #[cold]
    #[inline(never)]
    fn poll_marked(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _poll = crate::poll(*this.id);
        let w = wakers_for(this.wakers, *this.id, cx.waker());
        w.state.store(POLLING, Ordering::Release);
        let waker = lent(w);
        let r = this.fut.poll(&mut Context::from_waker(&waker));
        if r.is_pending() {
            // waiting, unless woken in the poll; with none of its wakers
            // out, lost already
            if w.state
                .compare_exchange(POLLING, WAITING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                w.none_left();
            } else {
                w.state.store(IDLE, Ordering::Release);
            }
        } else {
            w.state.store(IDLE, Ordering::Release);
        }
        r
    }
}

/// The name of a task spawned with no name: `TYPE FILE:LINE`, at most
/// [`NAME_MAX`](crate::NAME_MAX) bytes (what the shim keeps), from the
/// future's type name (`std::any::type_name`) and the spawn site. The rule:
/// - TYPE is the path of the type as the user wrote it, without generic
///   arguments (`myapp::Worker<alloc::string::String>` is `myapp::Worker`,
///   `tokio::time::Timeout<myapp::fetch::{{closure}}>` is
///   `tokio::time::Timeout`); an `async fn`'s future or an `async` block is
///   the function it is in followed by `::{{closure}}`; a pinned or boxed
///   future (`Pin<Box<T>>`, `Box<T>`) is named as T, a trait object as
///   `dyn Future`, an associated type (`<T as Trait>::Assoc`) as T;
/// - FILE is the site's file as rustc gives it (`src/main.rs` in the
///   caller's own crate), only its last two components when it is longer
///   than 32 bytes (a dependency's absolute path);
/// - when the whole is too long, TYPE loses its leading path segments
///   (crate, modules) down to its last one that is not `{{closure}}`, then
///   the `{{closure}}`s nested in the first (`run::{{closure}}` for
///   `run::{{closure}}::{{closure}}`), then, if need be, its end.
pub fn task_name(type_name: &str, file: &str, line: u32) -> String {
    let file = if file.len() > 32 {
        let mut parts = file.rsplitn(3, '/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(base), Some(dir), Some(_)) => &file[file.len() - base.len() - dir.len() - 1..],
            _ => file,
        }
    } else {
        file
    };
    let site = format!("{file}:{line}");
    let budget = crate::NAME_MAX.saturating_sub(site.len() + 1);
    let full = short_type(type_name);
    // drop leading segments, never the last one that is not a closure
    let floor = std::iter::once(0)
        .chain(full.match_indices("::").map(|(i, _)| i + 2))
        .filter(|&i| !full[i..].starts_with("{{closure}}"))
        .last()
        .unwrap_or(0);
    let mut from = 0;
    while full.len() - from > budget && from < floor {
        from = full[from..].find("::").map_or(floor, |i| from + i + 2);
    }
    let mut ty = &full[from..];
    // then the closures nested in the first
    while ty.len() > budget && ty.ends_with("::{{closure}}::{{closure}}") {
        ty = &ty[..ty.len() - "::{{closure}}".len()];
    }
    let mut name = String::with_capacity(ty.len().min(budget) + 1 + site.len());
    for c in ty.chars() {
        if name.len() + c.len_utf8() > budget {
            break;
        }
        name.push(c);
    }
    name.push(' ');
    name.push_str(&site);
    name
}

/// `type_name` without generic arguments, `Pin`/`Box` unwrapped, a trait
/// object as `dyn Future`.
fn short_type(type_name: &str) -> String {
    let mut t = type_name.trim();
    loop {
        let outer = t.split('<').next().unwrap_or(t);
        if !matches!(
            outer,
            "core::pin::Pin" | "alloc::boxed::Box" | "std::pin::Pin"
        ) {
            break;
        }
        match first_generic_arg(t) {
            Some(inner) => t = inner.trim(),
            None => break,
        }
    }
    if t.starts_with("dyn ") {
        return "dyn Future".into();
    }
    if t.starts_with('<') {
        // a qualified path, `<T as Trait>::Assoc`: T
        if let Some(inner) = first_generic_arg(t) {
            let ty = inner.split(" as ").next().unwrap_or(inner);
            return short_type(ty);
        }
    }
    let mut out = String::with_capacity(t.len());
    let mut depth = 0usize;
    let mut prev = '\0';
    for c in t.chars() {
        match c {
            '<' => depth += 1,
            '>' if prev != '-' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        prev = c;
    }
    if out.is_empty() {
        return t.to_string();
    }
    out
}

/// `A` in `Outer<A, B>`.
fn first_generic_arg(t: &str) -> Option<&str> {
    let open = t.find('<')?;
    let mut depth = 0usize;
    let mut prev = '\0';
    for (i, c) in t[open..].char_indices() {
        match c {
            '<' => depth += 1,
            '>' if prev != '-' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&t[open + 1..open + i]);
                }
            }
            ',' if depth == 1 => return Some(&t[open + 1..open + i]),
            _ => {}
        }
        prev = c;
    }
    None
}

thread_local! {
    /// Names made on this thread, by (type name, spawn site).
    static NAMES: RefCell<HashMap<(usize, usize, usize), CString>> =
        RefCell::new(HashMap::new());
}

/// task_spawn of `id` named by `F` and `loc`, the name made once per
/// thread, type and site.
fn spawn_unnamed<F: ?Sized>(id: TaskId, loc: &'static Location<'static>) {
    let ty = std::any::type_name::<F>();
    let make = || crate::cstring(&task_name(ty, loc.file(), loc.line()));
    let key = (
        ty.as_ptr() as usize,
        ty.len(),
        loc as *const Location as usize,
    );
    let cached = NAMES.try_with(|m| {
        let mut m = m.borrow_mut();
        crate::task_spawn_c(id, m.entry(key).or_insert_with(make));
    });
    if cached.is_err() {
        // the thread's locals are being torn down
        crate::task_spawn_c(id, &make());
    }
}

/// `tokio::spawn` of `fut`, marked, named by its type and the caller's
/// location ([`task_name`]).
#[track_caller]
pub fn spawn<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    ::tokio::spawn(Marked::unnamed(fut))
}

/// `tokio::spawn` of `fut`, marked, named `name`.
pub fn spawn_named<F>(name: &str, fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    ::tokio::spawn(Marked::new(name, fut))
}

/// `tokio::task::spawn_local` of `fut` (inside a `LocalSet`), marked,
/// named by its type and the caller's location ([`task_name`]).
#[track_caller]
pub fn spawn_local<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    ::tokio::task::spawn_local(Marked::unnamed(fut))
}

/// `tokio::task::spawn_blocking` of `f`, marked as one task polled once
/// (the whole closure is its poll), named by the closure's type and the
/// caller's location ([`task_name`]).
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let id = crate::next_task_id();
    spawn_unnamed::<F>(id, Location::caller());
    ::tokio::task::spawn_blocking(move || {
        struct End(TaskId);
        impl Drop for End {
            fn drop(&mut self) {
                crate::task_end(self.0);
            }
        }
        let _end = End(id);
        let _poll = crate::poll(id);
        f()
    })
}

#[cfg(test)]
mod tests {
    use super::{task_name, Marked};
    use crate::tests::{gate_lock, Traced};
    use crate::NAME_MAX;
    use std::future::Future;
    use std::pin::{pin, Pin};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    /// Ready at once: whether the waker it is polled with is `.0`.
    struct SeesWaker(Waker);
    impl Future for SeesWaker {
        type Output = bool;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
            Poll::Ready(cx.waker().will_wake(&self.0))
        }
    }

    /// Detached, a marked future sees the runtime's waker; with the gate
    /// open (here by a USDT tracer, no recorder) its poll is marked and
    /// it sees ours.
    #[test]
    fn the_gate_chooses_the_marked_poll() {
        let _g = gate_lock();
        assert_eq!(crate::init(), Ok(()));
        let runtime = Waker::from(Arc::new(Noop));
        let mut cx = Context::from_waker(&runtime);
        let fut = pin!(Marked::new("detached", SeesWaker(runtime.clone())));
        assert_eq!(fut.poll(&mut cx), Poll::Ready(true));
        let _t = Traced::attach();
        let fut = pin!(Marked::new("traced", SeesWaker(runtime.clone())));
        assert_eq!(fut.poll(&mut cx), Poll::Ready(false));
    }

    #[test]
    fn a_task_is_named_by_its_future_type_and_site() {
        let n = task_name("myapp::compute_report::{{closure}}", "src/main.rs", 42);
        assert_eq!(n, "myapp::compute_report::{{closure}} src/main.rs:42");
    }

    #[test]
    fn generic_arguments_are_dropped() {
        let cases = [
            ("myapp::Worker<alloc::string::String>", "myapp::Worker"),
            (
                "tokio::time::timeout::Timeout<myapp::fetch::{{closure}}>",
                "tokio::time::timeout::Timeout",
            ),
            ("myapp::Job<fn(u8) -> u8, Vec<u8>>::run", "myapp::Job::run"),
            (
                "core::pin::Pin<alloc::boxed::Box<myapp::Conn<u8>>>",
                "myapp::Conn",
            ),
            (
                "core::pin::Pin<alloc::boxed::Box<dyn core::future::future::Future<Output = ()> + core::marker::Send>>",
                "dyn Future",
            ),
            (
                "<myapp::A<u8> as core::future::into_future::IntoFuture>::IntoFuture",
                "myapp::A",
            ),
        ];
        for (ty, want) in cases {
            assert_eq!(task_name(ty, "src/a.rs", 1), format!("{want} src/a.rs:1"));
        }
    }

    #[test]
    fn a_long_name_keeps_its_tail_within_the_limit() {
        let cases = [
            (
                "my_service::handlers::report::compute::{{closure}}",
                "src/main.rs",
                "report::compute::{{closure}} src/main.rs:7",
            ),
            (
                "d9demo_tokio::main::{{closure}}::{{closure}}",
                "src/main.rs",
                "main::{{closure}}::{{closure}} src/main.rs:7",
            ),
            (
                "svc::run::{{closure}}::{{closure}}::{{closure}}",
                "src/server/mod.rs",
                "run::{{closure}}::{{closure}} src/server/mod.rs:7",
            ),
        ];
        for (ty, file, want) in cases {
            let n = task_name(ty, file, 7);
            assert_eq!(n, want);
            assert!(n.len() <= NAME_MAX);
        }
        let huge = format!("a::{}::{{{{closure}}}}", "b".repeat(200));
        let n = task_name(&huge, "src/main.rs", 7);
        assert!(n.len() <= NAME_MAX, "{n}");
        assert!(
            n.starts_with("bbbb") && n.ends_with("b src/main.rs:7"),
            "{n}"
        );
    }

    #[test]
    fn a_dependency_site_keeps_its_last_two_components() {
        let f = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/dep-1.0.0/src/lib.rs";
        assert_eq!(
            task_name("dep::run::{{closure}}", f, 3),
            "dep::run::{{closure}} src/lib.rs:3"
        );
    }

    /// NAME_MAX is what the shim's name table keeps, and no more than
    /// D9_NAME_MAX (checked in a d9prof checkout).
    #[test]
    fn name_max_is_the_shims() {
        let h = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../libprof/d9_segment.h");
        let Ok(text) = std::fs::read_to_string(h) else {
            return;
        };
        let slot = &text[text.find("struct d9_name_slot {").expect("d9_name_slot")..];
        let slot = &slot[..slot.find("};").unwrap()];
        let size: usize = slot
            .lines()
            .find_map(|l| l.trim().strip_prefix("char name["))
            .and_then(|l| l.strip_suffix("];"))
            .expect("d9_name_slot.name")
            .parse()
            .unwrap();
        assert_eq!(NAME_MAX, size - 1);
        let records: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("#define D9_TEXT_RECORDS "))
            .expect("D9_TEXT_RECORDS")
            .trim()
            .parse()
            .unwrap();
        assert!(text.contains("#define D9_NAME_MAX\t(D9_TEXT_RECORDS * 24 - 1)"));
        let d9_name_max = records * 24 - 1;
        assert!(NAME_MAX <= d9_name_max);
    }
}
