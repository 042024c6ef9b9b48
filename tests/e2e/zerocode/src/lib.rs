//! The same kind of program as zcapp, as a shared library another program
//! loads with dlopen(3): Tokio's thread-locals are then dynamic TLS, at no
//! fixed place from the thread pointer, which d9prof must refuse in one line.
//!
//!   zc_lib_run(secs)  a runtime of 2 workers and a CPU hog task, for secs

use std::time::{Duration, Instant};

#[inline(never)]
fn lib_work() -> u64 {
    let mut x = 0x9e3779b97f4a7c15u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

async fn lib_hog(until: Instant) {
    while Instant::now() < until {
        lib_work();
        tokio::task::yield_now().await;
    }
}

/// Run a hog task on a Tokio runtime for @secs seconds.
#[no_mangle]
pub extern "C" fn zc_lib_run(secs: f64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let until = Instant::now() + Duration::from_secs_f64(secs);
    rt.block_on(async move {
        let _ = tokio::spawn(lib_hog(until)).await;
    });
}
