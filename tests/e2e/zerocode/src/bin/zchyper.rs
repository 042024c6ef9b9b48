//! A hyper 0.14 server as users write one (no d9prof code: hyper spawns
//! each connection's task itself), and a client to load it.
//!
//!   zchyper serve SECS   serves on 127.0.0.1 (an ephemeral port) for
//!                        SECS on 2 workers: /cpu burns ~2 ms of CPU in
//!                        cpu_route, /block sleeps 2 ms in its worker
//!                        (std::thread::sleep, the classic mistake),
//!                        anything else answers at once
//!   zchyper load PORT CONNS REQS PATH
//!                        CONNS connections at once, each REQS keep-alive
//!                        GETs of PATH, then closed
//!
//! serve prints "pid N", "port P", "ready", and at the end its own
//! counts: connections accepted, requests per route, the CPU the /cpu
//! route's work took and the time /block slept (measured around each).
//! load prints "conns N requests M".
use std::convert::Infallible;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use hyper::service::{make_service_fn, service_fn};
use hyper::{Body, Request, Response, Server};

static CONNS: AtomicU64 = AtomicU64::new(0);
static CPU_REQS: AtomicU64 = AtomicU64::new(0);
static CPU_NS: AtomicU64 = AtomicU64::new(0);
static BLOCK_REQS: AtomicU64 = AtomicU64::new(0);
static BLOCK_NS: AtomicU64 = AtomicU64::new(0);
static OTHER_REQS: AtomicU64 = AtomicU64::new(0);

fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
    }
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is a valid out pointer; 3 is CLOCK_THREAD_CPUTIME_ID.
    unsafe { clock_gettime(3, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

/// ~2 ms of this thread's CPU: the work a request to /cpu does.
#[inline(never)]
fn cpu_route() -> u64 {
    let t0 = thread_cpu_ns();
    let mut x = 0x2545f4914f6cdd1du64;
    loop {
        for _ in 0..256 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        let d = thread_cpu_ns() - t0;
        if d >= 2_000_000 {
            CPU_NS.fetch_add(d, Relaxed);
            return std::hint::black_box(x);
        }
    }
}

#[inline(never)]
fn block_route() {
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    BLOCK_NS.fetch_add(t0.elapsed().as_nanos() as u64, Relaxed);
}

async fn handle(req: Request<Body>) -> Result<Response<Body>, Infallible> {
    match req.uri().path() {
        "/cpu" => {
            cpu_route();
            CPU_REQS.fetch_add(1, Relaxed);
        }
        "/block" => {
            block_route();
            BLOCK_REQS.fetch_add(1, Relaxed);
        }
        _ => {
            OTHER_REQS.fetch_add(1, Relaxed);
        }
    }
    Ok(Response::new(Body::from("ok\n")))
}

fn serve(secs: f64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let make = make_service_fn(|_conn| {
            CONNS.fetch_add(1, Relaxed);
            async { Ok::<_, Infallible>(service_fn(handle)) }
        });
        let server = Server::bind(&([127, 0, 0, 1], 0).into()).serve(make);
        println!("pid {}", std::process::id());
        println!("port {}", server.local_addr().port());
        println!("ready");
        // the accept loop in a task of its own; the runtime's drop ends it
        tokio::spawn(server);
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    });
    drop(rt);
    for (k, v) in [
        ("conns", CONNS.load(Relaxed)),
        ("cpu_reqs", CPU_REQS.load(Relaxed)),
        ("cpu_ns", CPU_NS.load(Relaxed)),
        ("block_reqs", BLOCK_REQS.load(Relaxed)),
        ("block_ns", BLOCK_NS.load(Relaxed)),
        ("other_reqs", OTHER_REQS.load(Relaxed)),
    ] {
        println!("{k} {v}");
    }
}

/// One connection: @reqs GETs of @path, each answer read whole.
fn client(port: u16, reqs: u64, path: &str) -> u64 {
    let mut s = match std::net::TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(_) => return 0,
    };
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let mut done = 0;
    let mut buf = Vec::new();
    for _ in 0..reqs {
        if s.write_all(req.as_bytes()).is_err() {
            break;
        }
        // the answer: headers, then content-length bytes
        buf.clear();
        let mut chunk = [0u8; 4096];
        let body_at = loop {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return done,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..body_at]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < body_at + len {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return done,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        done += 1;
    }
    done
}

fn load(port: u16, conns: u64, reqs: u64, path: &str) {
    let threads: Vec<_> = (0..conns)
        .map(|_| {
            let p = path.to_string();
            std::thread::spawn(move || client(port, reqs, &p))
        })
        .collect();
    let mut ok_conns = 0;
    let mut requests = 0;
    for t in threads {
        let n = t.join().unwrap_or(0);
        if n == reqs {
            ok_conns += 1;
        }
        requests += n;
    }
    println!("conns {ok_conns} requests {requests}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match args.get(1).map(String::as_str) {
        Some("load") => load(
            num(2, 0) as u16,
            num(3, 8),
            num(4, 10),
            args.get(5).map(String::as_str).unwrap_or("/"),
        ),
        _ => serve(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10.0)),
    }
}
