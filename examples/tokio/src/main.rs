//! d9demo-tokio: a Tokio service whose tasks behave in known ways, for
//! `make demo-tokio` and the e2e tests.
//!
//!   d9demo-tokio [-d SECS] [-w WORKERS]
//!   d9demo-tokio [-d SECS] --bench
//!
//! --bench: on a current-thread runtime, batches of 20k polls of a task
//! that only yields, spawned with tokio::spawn (plain) and with
//! d9prof::tokio::spawn (marked), interleaved for SECS; prints "ready PID",
//! then the medians: ns per poll plain and marked, and the ns a marked
//! poll adds (per pair of batches, with its quartiles): what make bench
//! reports, detached and with a recorder attached.
//!
//! Prints "ready PID" once serving, then runs SECS seconds (default 30):
//! - "cpu_handler": requests that burn ~2 ms of CPU each in `burn_cpu`;
//! - "blocking_handler": requests that mistakenly block the worker in a
//!   synchronous sleep (`blocking_read`) for 3 ms inside the poll;
//! - "echo_server" / "echo_client": a TCP echo pair on loopback;
//! - 50 timer tasks spawned without a name: d9prof names them by their
//!   future's type and spawn site (main::{{closure}}::{{closure}}
//!   src/main.rs:LINE);
//! - "req_client" / "req_conn": requests over a kept-alive loopback
//!   connection, one line each, traced with `tracing` and recorded by
//!   d9prof's layer (`d9prof spans`, `flame --span`, `events`): each is a
//!   `request` span (an `#[instrument]`ed handler, fields req and route),
//!   and in it a `fast_route` span (~200 us of CPU in `checksum_body`) or,
//!   one in four, a `slow_route` span: the handler's mistake, a
//!   synchronous `std::thread::sleep` of 4 ms on the worker, then ~1.5 ms
//!   of CPU in `render_report`. After each request's span has closed the
//!   connection prints "req N ROUTE SLEPT_NS": its number (the spans' req
//!   field), fast or slow, and the sleep as the handler measured it (0 on
//!   the fast route);
//! - `library_flush`: a task spawned with plain `tokio::spawn`, as a
//!   library spawns its own (hyper's connections, a pool's reaper): the
//!   crate does not mark it, and d9prof still sees it from outside
//!   (zero-code), ~1 ms of CPU in `library_work` every 10 ms.
use std::hint::black_box;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tracing::{info, instrument, Span};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

/// The CPU-heavy request's work: a hash loop for about `us` microseconds.
#[inline(never)]
fn burn_cpu(us: u64) -> u64 {
    let end = Instant::now() + Duration::from_micros(us);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    while Instant::now() < end {
        for i in 0..256u64 {
            h = (h ^ i).wrapping_mul(0x0100_0000_01b3);
        }
    }
    black_box(h)
}

/// What a library's own task does: ~1 ms of CPU now and then.
#[inline(never)]
fn library_work() -> u64 {
    let end = Instant::now() + Duration::from_millis(1);
    let mut h = 0x8422_2325_cbf2_9ce4u64;
    while Instant::now() < end {
        for i in 0..256u64 {
            h = h.rotate_left(5) ^ i;
        }
    }
    black_box(h)
}

/// A library's task: spawned with plain tokio::spawn, unmarked.
async fn library_flush() {
    loop {
        black_box(library_work());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The mistake: a synchronous wait inside a poll, as a blocking file or
/// socket read would be.
#[inline(never)]
fn blocking_read(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    black_box(ms) // work after the call: no tail call hides this frame
}

async fn cpu_handler() {
    loop {
        burn_cpu(2000);
        tokio::task::yield_now().await;
    }
}

async fn blocking_handler() {
    loop {
        blocking_read(3);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

async fn echo_server(listener: TcpListener) {
    loop {
        let Ok((mut s, _)) = listener.accept().await else {
            return;
        };
        d9prof::tokio::spawn_named("echo_conn", async move {
            let mut buf = [0u8; 4096];
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }
}

async fn echo_client(addr: std::net::SocketAddr) {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return;
    };
    let msg = [7u8; 512];
    let mut back = [0u8; 512];
    loop {
        if s.write_all(&msg).await.is_err() || s.read_exact(&mut back).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

/// The slow route's CPU work: a hash loop for about `us` microseconds.
#[inline(never)]
fn render_report(us: u64) -> u64 {
    let end = Instant::now() + Duration::from_micros(us);
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    while Instant::now() < end {
        for i in 0..256u64 {
            h = (h ^ (h >> 7) ^ i).wrapping_mul(0x0100_0000_01b3);
        }
    }
    black_box(h)
}

/// The fast route's CPU work, the same for about `us` microseconds.
#[inline(never)]
fn checksum_body(us: u64) -> u64 {
    let end = Instant::now() + Duration::from_micros(us);
    let mut h = 1u64;
    while Instant::now() < end {
        for i in 0..256u64 {
            h = h.wrapping_mul(31).wrapping_add(i);
        }
    }
    black_box(h)
}

/// How long the slow route sleeps, synchronously, on the worker.
const SLOW_SLEEP: Duration = Duration::from_millis(4);

/// "/slow": the mistake users make, a synchronous sleep (a blocking
/// driver, a file read) on the worker, inside the poll; then CPU. The
/// sleep as measured here, and the reply.
#[instrument(skip_all, fields(req = n))]
async fn slow_route(n: u64) -> (Duration, u64) {
    let t = Instant::now();
    std::thread::sleep(SLOW_SLEEP);
    let slept = t.elapsed();
    let h = render_report(1500);
    info!(
        slept_us = slept.as_micros() as u64,
        req = n,
        "slow route served"
    );
    (slept, h)
}

/// "/fast": a little CPU.
#[instrument(skip_all, fields(req = n))]
async fn fast_route(n: u64) -> (Duration, u64) {
    (Duration::ZERO, checksum_body(200))
}

/// One request: its route's handler, then the reply. The slow route's
/// sleep as its handler measured it (zero on the fast one), None when the
/// connection failed.
#[instrument(name = "request", skip_all, fields(req = n, route = tracing::field::Empty))]
async fn handle_request(w: &mut OwnedWriteHalf, line: &str, n: u64) -> Option<Duration> {
    let route = line.trim();
    Span::current().record("route", route);
    let (slept, h) = if route == "/slow" {
        slow_route(n).await
    } else {
        fast_route(n).await
    };
    w.write_all(format!("ok {h:x}\n").as_bytes()).await.ok()?;
    Some(slept)
}

/// A connection of the request server: its requests one after the
/// other, each printed once its span has closed.
async fn req_conn(s: TcpStream, first: u64) {
    let (r, mut w) = s.into_split();
    let mut lines = BufReader::new(r).lines();
    for n in first.. {
        let Ok(Some(line)) = lines.next_line().await else {
            return;
        };
        let Some(slept) = handle_request(&mut w, &line, n).await else {
            return;
        };
        let route = if line.trim() == "/slow" {
            "slow"
        } else {
            "fast"
        };
        println!("req {n} {route} {}", slept.as_nanos());
    }
}

async fn req_server(listener: TcpListener) {
    for conn in 0u64.. {
        let Ok((s, _)) = listener.accept().await else {
            return;
        };
        // request numbers unique across connections
        d9prof::tokio::spawn_named("req_conn", req_conn(s, conn << 32 | 1));
    }
}

/// Requests on one kept-alive connection: three fast, one slow, a short
/// pause after each.
async fn req_client(addr: std::net::SocketAddr) {
    let Ok(s) = TcpStream::connect(addr).await else {
        return;
    };
    let (r, mut w) = s.into_split();
    let mut replies = BufReader::new(r).lines();
    for i in 0u64.. {
        let route = if i % 4 == 3 { "/slow\n" } else { "/fast\n" };
        if w.write_all(route.as_bytes()).await.is_err() {
            return;
        }
        let Ok(Some(_)) = replies.next_line().await else {
            return;
        };
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// One task that only yields `n` times, spawned plain or marked: ns per
/// poll.
async fn yields(marked: bool, n: u32) -> f64 {
    let body = async move {
        let start = Instant::now();
        for _ in 0..n {
            tokio::task::yield_now().await;
        }
        start.elapsed().as_nanos() as f64 / n as f64
    };
    if marked {
        d9prof::tokio::spawn_named("bench", body).await.unwrap()
    } else {
        tokio::spawn(body).await.unwrap()
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// --bench: batches of plain and marked polls interleaved in one process
/// (so that drift of the machine hits both alike) for `secs` seconds.
fn bench(secs: f64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("rt");
    println!("ready {}", std::process::id());
    let (mut p, mut m, mut d) = rt.block_on(async move {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let (mut p, mut m, mut d) = (Vec::new(), Vec::new(), Vec::new());
        let mut plain_first = true;
        while Instant::now() < end {
            // the order alternates: neither mode always runs first
            let (a, b) = if plain_first {
                let a = yields(false, 20_000).await;
                (a, yields(true, 20_000).await)
            } else {
                let b = yields(true, 20_000).await;
                (yields(false, 20_000).await, b)
            };
            p.push(a);
            m.push(b);
            d.push(b - a);
            plain_first = !plain_first;
        }
        (p, m, d)
    });
    println!("rounds {}", d.len());
    println!("plain_ns_per_poll {:.2}", median(&mut p));
    println!("marked_ns_per_poll {:.2}", median(&mut m));
    println!("added_ns_per_poll {:.2}", median(&mut d));
    let q = |v: &Vec<f64>, f: f64| v[((v.len() - 1) as f64 * f) as usize];
    println!("added_ns_p25 {:.2}", q(&d, 0.25));
    println!("added_ns_p75 {:.2}", q(&d, 0.75));
}

fn main() {
    let mut secs = 30.0f64;
    let mut workers = 2usize;
    let mut bench_mode = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--bench" {
            bench_mode = true;
            continue;
        }
        let v = args.next();
        match (a.as_str(), v) {
            ("-d", Some(v)) => secs = v.parse().expect("-d SECS"),
            ("-w", Some(v)) => workers = v.parse().expect("-w WORKERS"),
            _ => {
                eprintln!("usage: d9demo-tokio [-d SECS] [-w WORKERS] [--bench]");
                std::process::exit(2);
            }
        }
    }
    if bench_mode {
        let _ = d9prof::init();
        d9prof::thread_start("bench");
        bench(secs);
        return;
    }
    let _ = d9prof::init();
    // the service's own spans and events, to d9prof: this crate's at INFO
    // and above, none of its libraries'
    let mine = Targets::new().with_target("d9demo_tokio", LevelFilter::INFO);
    tracing_subscriber::registry()
        .with(d9prof::tracing::D9Layer::new().with_filter(mine))
        .init();
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(workers)
        .thread_name("d9tokio-worker")
        .enable_all();
    d9prof::tokio::instrument(&mut b);
    let rt = b.build().expect("runtime");
    rt.block_on(async move {
        d9prof::tokio::spawn_named("cpu_handler", cpu_handler());
        d9prof::tokio::spawn_named("blocking_handler", blocking_handler());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        d9prof::tokio::spawn_named("echo_server", echo_server(listener));
        d9prof::tokio::spawn_named("echo_client", echo_client(addr));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        d9prof::tokio::spawn_named("req_server", req_server(listener));
        d9prof::tokio::spawn_named("req_client", req_client(addr));
        tokio::spawn(library_flush());
        for i in 0..50u64 {
            d9prof::tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(5 + i % 7)).await;
                }
            });
        }
        println!("ready {}", std::process::id());
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    });
    rt.shutdown_timeout(Duration::from_millis(100));
}
