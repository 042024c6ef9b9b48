//! d9bugs-tokio: Tokio programs with one bug each, for the detectors
//! (tests/e2e/tokio.sh), as tests/e2e/latency/bugs.c is for a C runtime.
//!
//!   d9bugs-tokio MODE SECONDS
//!
//! A multi-thread runtime of 2 workers (1 for `starve`), instrumented with
//! the d9prof crate, where task "ticker" wakes every 2 ms on a timer and
//! polls a few us. Then, once a recorder is attached, by MODE:
//! - `dropwaker`: a future that, polled once, drops its waker and returns
//!   pending: nothing can wake it again, it never ends (a lost waker);
//! - `selfwake`: a task that yields 50 times in a row (each poll a few us,
//!   `yield_now` wakes it again at once), then sleeps 10 ms: its wakes are
//!   mostly its own (a busy loop that yields, napping so that it takes no
//!   core from the programs beside it);
//! - `spin`: a task that spins 5 s in one poll without yielding, then ends
//!   (top sees a Tokio worker's poll some 0.5 s late: 2 s left it one
//!   second to be seen past the 1 s threshold, too few on a busy machine,
//!   and 3 s were once too few in CI, whose top saw no long poll);
//! - `leak`: an acceptor woken every 10 ms (a request) that spawns a
//!   `handler` task per request, which wakes once a second (a keepalive)
//!   and never ends: a task leaks per request;
//! - `starve`: on one worker, a "hog" that polls 60 ms of CPU every 200 ms,
//!   and task "victim" woken every 2 ms from another thread (a request)
//!   behind it: starved.
//!
//! Prints "pid N", "task ticker ID", "ready", then "task NAME ID
//! FILE:LINE" for the buggy task (its id and spawn site: the crate names it
//! TYPE FILE:LINE) or "site handler FILE:LINE" for the leak's handlers;
//! runs SECONDS, exits 0.
use std::future::Future;
use std::hint::black_box;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use d9prof::tokio::Marked;

/// About `us` microseconds of CPU.
#[inline(never)]
fn burn(us: u64) -> u64 {
    let end = Instant::now() + Duration::from_micros(us);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    while Instant::now() < end {
        for i in 0..64u64 {
            h = (h ^ i).wrapping_mul(0x0100_0000_01b3);
        }
    }
    black_box(h)
}

/// Polled once: some work, then pending with its waker dropped.
struct DropWaker;

impl Future for DropWaker {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        burn(20);
        // the bug: the waker is neither stored nor woken
        Poll::Pending
    }
}

async fn spinner() {
    loop {
        for _ in 0..50 {
            burn(2);
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn stuck() {
    burn(5_000_000);
}

async fn handler() {
    let mut keepalive = tokio::time::interval(Duration::from_secs(1));
    loop {
        keepalive.tick().await;
        burn(3);
    }
}

async fn hog() {
    loop {
        burn(60_000);
        tokio::time::sleep(Duration::from_millis(140)).await;
    }
}

/// Spawn `fut` marked, named by its type and the caller's line, and say
/// its id and site as "task WHAT ID FILE:LINE".
#[track_caller]
fn spawn_bug<F>(what: &str, fut: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let loc = Location::caller();
    let m = Marked::unnamed(fut);
    println!("task {what} {} {}:{}", m.id(), loc.file(), loc.line());
    tokio::spawn(m);
}

/// A request's handler, spawned (named by the crate, at the caller's
/// line: said once as "site handler FILE:LINE").
#[track_caller]
fn spawn_handler(said: &mut bool) {
    if !*said {
        let loc = Location::caller();
        println!("site handler {}:{}", loc.file(), loc.line());
        *said = true;
    }
    d9prof::tokio::spawn(handler());
}

async fn run(mode: &str) {
    let ticker = Marked::new("ticker", async {
        let mut tick = tokio::time::interval(Duration::from_millis(2));
        loop {
            tick.tick().await;
            burn(3);
        }
    });
    println!("task ticker {}", ticker.id());
    tokio::spawn(ticker);
    println!("ready");
    while !d9prof::recording() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    match mode {
        "dropwaker" => spawn_bug("dropped", DropWaker),
        "selfwake" => spawn_bug("spinner", spinner()),
        "spin" => spawn_bug("stuck", stuck()),
        "starve" => {
            spawn_bug("hog", hog());
            // requests from another thread every 2 ms: woken at once,
            // polled once the hog's poll ends
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            std::thread::spawn(move || {
                while tx.send(()).is_ok() {
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
            let victim = Marked::new("victim", async move {
                while rx.recv().await.is_some() {
                    burn(3);
                }
            });
            println!("task victim {}", victim.id());
            tokio::spawn(victim);
        }
        "leak" => {
            let mut req = tokio::time::interval(Duration::from_millis(10));
            let mut said = false;
            loop {
                req.tick().await;
                spawn_handler(&mut said);
            }
        }
        _ => {}
    }
    // (until the timeout)
    std::future::pending::<()>().await;
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let modes = ["dropwaker", "selfwake", "spin", "leak", "starve"];
    if args.len() != 3 || !modes.contains(&args[1].as_str()) {
        eprintln!("usage: d9bugs-tokio dropwaker|selfwake|spin|leak|starve SECONDS");
        std::process::exit(2);
    }
    let secs: f64 = args[2].parse().unwrap_or(10.0);
    let _ = d9prof::init();
    println!("pid {}", std::process::id());
    let mut b = tokio::runtime::Builder::new_multi_thread();
    d9prof::tokio::instrument(&mut b);
    let rt = b
        .worker_threads(if args[1] == "starve" { 1 } else { 2 })
        .enable_all()
        .build()
        .expect("a runtime");
    let mode = args[1].clone();
    rt.block_on(async move {
        let _ = tokio::time::timeout(Duration::from_secs_f64(secs), run(&mode)).await;
    });
    rt.shutdown_timeout(Duration::from_millis(100));
}
