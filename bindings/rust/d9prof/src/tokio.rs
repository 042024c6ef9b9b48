//! Tokio instrumentation (feature `tokio`).
//!
//! - [`instrument`] names the runtime's worker threads for d9prof and
//!   records their parks;
//! - [`spawn`], [`spawn_named`], [`spawn_local`] and [`spawn_blocking`]
//!   return Tokio's `JoinHandle` for a future (or closure) wrapped so that
//!   every poll is marked, every wake is `task_wake`, and completion or
//!   cancellation (the task dropped, e.g. `JoinHandle::abort`) is
//!   `task_end`. While no recorder is attached a poll adds one load and a
//!   branch: the future sees the runtime's own waker. An unnamed task is named by its spawn location
//!   (`file.rs:line`), so `d9prof tasks` shows poll time per spawn site.
//!
//! Only tasks spawned through these wrappers carry task ids: Tokio 1.24 has
//! no hook into its own spawn. Tokio >= 1.38 built with
//! `--cfg tokio_unstable` has task hooks (`on_task_spawn`,
//! `on_before_task_poll`, `on_after_task_poll`, `on_task_terminate`) that
//! would mark every task with no wrapper; [`instrument`] is where a future
//! feature of this crate will install them, with the same names and ids.

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

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

/// The waker a marked task's future sees: wakes the runtime's waker and
/// marks the wake. Made again only when the runtime hands the task another
/// waker (Tokio's is the same for the task's life), so a poll allocates
/// nothing.
struct MarkWaker {
    id: TaskId,
    inner: Waker,
}

impl Wake for MarkWaker {
    fn wake(self: Arc<Self>) {
        crate::task_wake(self.id);
        self.inner.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        crate::task_wake(self.id);
        self.inner.wake_by_ref();
    }
}

pin_project! {
    /// A future whose polls, wakes and end are marked as task `id`.
    pub struct Marked<F> {
        id: TaskId,
        #[pin]
        fut: F,
        // the last runtime waker, and our wrapper of it
        waker: Option<(Waker, Waker)>,
    }

    // task_end before `fut` is dropped, as a plain Drop would
    impl<F> PinnedDrop for Marked<F> {
        fn drop(this: Pin<&mut Self>) {
            crate::task_end(this.id);
        }
    }
}

impl<F> Marked<F> {
    /// Wrap `fut` as a new task named `name` (task_spawn now).
    pub fn new(name: &str, fut: F) -> Self {
        let id = crate::next_task_id();
        crate::task_spawn(id, name);
        Marked {
            id,
            fut,
            waker: None,
        }
    }

    /// The task id it is marked with.
    pub fn id(&self) -> TaskId {
        self.id
    }
}

/// Our wrapper of `runtime` for task `id`, cached in `slot`.
fn waker_for<'a>(slot: &'a mut Option<(Waker, Waker)>, id: TaskId, runtime: &Waker) -> &'a Waker {
    let fresh = match slot {
        Some((inner, _)) => !inner.will_wake(runtime),
        None => true,
    };
    if fresh {
        let ours = Waker::from(Arc::new(MarkWaker {
            id,
            inner: runtime.clone(),
        }));
        *slot = Some((runtime.clone(), ours));
    }
    &slot.as_ref().unwrap().1
}

impl<F: Future> Future for Marked<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        if !crate::gate_open() {
            // nobody records: the runtime's own waker, nothing added (a
            // waker handed out now marks no wake if it fires after a
            // recorder attached; the next poll hands out a marking one)
            return this.fut.poll(cx);
        }
        let _poll = crate::poll(*this.id);
        let mut cx = Context::from_waker(waker_for(this.waker, *this.id, cx.waker()));
        this.fut.poll(&mut cx)
    }
}

fn location_name(loc: &Location<'_>) -> String {
    format!("{}:{}", loc.file(), loc.line())
}

/// `tokio::spawn` of `fut`, marked, named by the caller's location.
#[track_caller]
pub fn spawn<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let name = location_name(Location::caller());
    ::tokio::spawn(Marked::new(&name, fut))
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
/// named by the caller's location.
#[track_caller]
pub fn spawn_local<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let name = location_name(Location::caller());
    ::tokio::task::spawn_local(Marked::new(&name, fut))
}

/// `tokio::task::spawn_blocking` of `f`, marked as one task polled once
/// (the whole closure is its poll), named by the caller's location.
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let name = location_name(Location::caller());
    let id = crate::next_task_id();
    crate::task_spawn(id, &name);
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
