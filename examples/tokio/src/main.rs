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
//!   src/main.rs:LINE).
use std::hint::black_box;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
