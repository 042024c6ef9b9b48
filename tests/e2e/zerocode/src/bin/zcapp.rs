//! An unmodified Tokio program (tokio::spawn only, no d9prof code) with
//! known behaviour, for d9prof's zero-code tests. It counts what it did
//! itself, the ground truth the tests hold d9prof's answers to.
//!
//!   zcapp mix SECS    a CPU hog (hog_task: ~200 us of hog_work, then a
//!                     yield), a task that blocks its worker in
//!                     std::thread::sleep (blocker_task, 3 ms each), and
//!                     a spawner of short tasks (8 a ms, 2 polls of ~8 us),
//!                     on 2 workers
//!   zcapp bench SECS  8 tasks that yield after ~0.3 us of work, on one
//!                     worker: the shortest polls, as many as it can
//!
//! Prints "pid N", then "ready", then at the end one line per counter
//! ("NAME VALUE"): polls counted by each task's own loop, sleeps and the
//! time they took (measured around each sleep), the CPU time of the
//! process (CLOCK_PROCESS_CPUTIME_ID) and of the hog's work.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

static STOP: AtomicBool = AtomicBool::new(false);
static HOG_POLLS: AtomicU64 = AtomicU64::new(0);
static HOG_WORK_NS: AtomicU64 = AtomicU64::new(0);
static BLOCKER_POLLS: AtomicU64 = AtomicU64::new(0);
static BLOCKER_SLEEPS: AtomicU64 = AtomicU64::new(0);
static BLOCKER_SLEPT_NS: AtomicU64 = AtomicU64::new(0);
static SHORT_TASKS: AtomicU64 = AtomicU64::new(0);
static SHORT_POLLS: AtomicU64 = AtomicU64::new(0);
static SPAWNER_POLLS: AtomicU64 = AtomicU64::new(0);
static BENCH_POLLS: AtomicU64 = AtomicU64::new(0);

fn cpu_ns(clock: libc_clock::Clock) -> u64 {
    libc_clock::now(clock)
}

/// The CPU clocks, without a libc crate: clock_gettime(2) through std's
/// own libc linkage.
mod libc_clock {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
    }
    #[derive(Clone, Copy)]
    pub enum Clock {
        Process = 2, // CLOCK_PROCESS_CPUTIME_ID
        Thread = 3,  // CLOCK_THREAD_CPUTIME_ID
    }
    pub fn now(c: Clock) -> u64 {
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: ts is a valid out pointer for the call.
        unsafe { clock_gettime(c as i32, &mut ts) };
        ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
    }
}

/// Spin for about @ns of this thread's CPU time: the work whose samples
/// the hog's task must hold.
#[inline(never)]
fn hog_work(ns: u64) -> u64 {
    let t0 = cpu_ns(libc_clock::Clock::Thread);
    let mut x = 0x9e3779b97f4a7c15u64;
    loop {
        for _ in 0..256 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        let d = cpu_ns(libc_clock::Clock::Thread) - t0;
        if d >= ns {
            HOG_WORK_NS.fetch_add(d, Relaxed);
            return std::hint::black_box(x);
        }
    }
}

#[inline(never)]
fn short_work() -> u64 {
    let mut x = 1u64;
    for i in 0..8000u64 {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    x
}

#[inline(never)]
fn bench_work() -> u64 {
    let mut x = 1u64;
    for i in 0..40u64 {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    x
}

async fn hog_task() {
    while !STOP.load(Relaxed) {
        hog_work(200_000);
        HOG_POLLS.fetch_add(1, Relaxed);
        tokio::task::yield_now().await;
    }
    HOG_POLLS.fetch_add(1, Relaxed);
}

/// Blocks its worker thread, as a careless handler does.
#[inline(never)]
fn blocking_sleep() {
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(3));
    BLOCKER_SLEPT_NS.fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
    BLOCKER_SLEEPS.fetch_add(1, Relaxed);
}

async fn blocker_task() {
    while !STOP.load(Relaxed) {
        blocking_sleep();
        BLOCKER_POLLS.fetch_add(1, Relaxed);
        tokio::task::yield_now().await;
    }
    BLOCKER_POLLS.fetch_add(1, Relaxed);
}

async fn short_task() {
    short_work();
    SHORT_POLLS.fetch_add(1, Relaxed);
    tokio::task::yield_now().await;
    short_work();
    SHORT_POLLS.fetch_add(1, Relaxed);
}

// Every short task it spawned ends before it does: main drops the
// runtime once the spawner ends, and a batch spawned just before STOP
// would go unpolled (counted by the app, never by the trace).
async fn spawner_task() {
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    let mut spawned = Vec::new();
    while !STOP.load(Relaxed) {
        SPAWNER_POLLS.fetch_add(1, Relaxed);
        tick.tick().await;
        for _ in 0..8 {
            SHORT_TASKS.fetch_add(1, Relaxed);
            spawned.push(tokio::spawn(short_task()));
        }
    }
    for h in spawned {
        let _ = h.await;
    }
}

async fn bench_task() {
    while !STOP.load(Relaxed) {
        bench_work();
        BENCH_POLLS.fetch_add(1, Relaxed);
        tokio::task::yield_now().await;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("mix");
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let workers = if mode == "bench" { 1 } else { 2 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    println!("pid {}", std::process::id());
    let cpu0 = cpu_ns(libc_clock::Clock::Process);
    rt.block_on(async {
        let mut handles = Vec::new();
        match mode {
            "bench" => {
                for _ in 0..8 {
                    handles.push(tokio::spawn(bench_task()));
                }
            }
            _ => {
                handles.push(tokio::spawn(hog_task()));
                handles.push(tokio::spawn(blocker_task()));
                handles.push(tokio::spawn(spawner_task()));
            }
        }
        println!("ready");
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
        STOP.store(true, Relaxed);
        for h in handles {
            let _ = h.await;
        }
    });
    let cpu = cpu_ns(libc_clock::Clock::Process) - cpu0;
    drop(rt);
    let out = [
        ("hog_polls", HOG_POLLS.load(Relaxed)),
        ("hog_work_ns", HOG_WORK_NS.load(Relaxed)),
        ("blocker_polls", BLOCKER_POLLS.load(Relaxed)),
        ("blocker_sleeps", BLOCKER_SLEEPS.load(Relaxed)),
        ("blocker_slept_ns", BLOCKER_SLEPT_NS.load(Relaxed)),
        ("short_tasks", SHORT_TASKS.load(Relaxed)),
        ("short_polls", SHORT_POLLS.load(Relaxed)),
        ("spawner_polls", SPAWNER_POLLS.load(Relaxed)),
        ("bench_polls", BENCH_POLLS.load(Relaxed)),
        ("cpu_ns", cpu),
    ];
    for (k, v) in out {
        println!("{k} {v}");
    }
}
