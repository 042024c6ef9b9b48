//! The Tokio wrappers on a real runtime, with no recorder attached (the
//! markers are then no-ops): futures run, wake and end as without them.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(2).enable_time();
    d9prof::tokio::instrument(&mut b);
    b.build().unwrap()
}

#[test]
fn marked_tasks_run_wake_and_return() {
    runtime().block_on(async {
        let h = d9prof::tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(5)).await; // a wake
            21 * 2
        });
        assert_eq!(h.await.unwrap(), 42);
        let h = d9prof::tokio::spawn_named("named", async { "ok" });
        assert_eq!(h.await.unwrap(), "ok");
        let h = d9prof::tokio::spawn_blocking(|| 7);
        assert_eq!(h.await.unwrap(), 7);
    });
}

/// Dropping the wrapper is what marks task_end: an aborted task's future
/// is dropped by Tokio, so it ends too.
#[test]
fn an_aborted_task_is_dropped() {
    struct Count(Arc<AtomicUsize>);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = dropped.clone();
    runtime().block_on(async move {
        let c = Count(d);
        let h = d9prof::tokio::spawn(async move {
            let _c = c;
            tokio::time::sleep(Duration::from_secs(3600)).await;
        });
        tokio::time::sleep(Duration::from_millis(5)).await;
        h.abort();
        assert!(h.await.unwrap_err().is_cancelled());
    });
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_local_set_runs_marked_local_tasks() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let v = local.block_on(&rt, async {
        let rc = std::rc::Rc::new(5); // !Send
        d9prof::tokio::spawn_local(async move { *rc + 1 })
            .await
            .unwrap()
    });
    assert_eq!(v, 6);
}

async fn compute_report() -> u32 {
    tokio::task::yield_now().await;
    7
}

/// An async fn's future is named as its function, `{{closure}}` after it,
/// as in its poll's frames.
#[test]
fn an_async_fn_future_is_named_by_its_function() {
    let fut = compute_report();
    let n = d9prof::tokio::task_name(std::any::type_name_of_val(&fut), "src/main.rs", 9);
    assert_eq!(n, "tokio::compute_report::{{closure}} src/main.rs:9");
    let v = runtime().block_on(async { d9prof::tokio::spawn(fut).await.unwrap() });
    assert_eq!(v, 7);
}
