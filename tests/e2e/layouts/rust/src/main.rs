// SPDX-License-Identifier: MIT
//! The layouts program in Rust: spin in `hot::caller` -> `hot::leaf`.
//!   layout_rs [SECS]   print "ready PID", then spin for SECS (default 30) s

mod hot {
    static TAB: [u32; 32] = [
        0x9e3779b9, 0x7f4a7c15, 0xf39cc060, 0x5ced1a2b, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f,
        0x165667b1, 0xd3a2646c, 0xfd7046c5, 0xb55a4f09, 0x1b873593, 0xcc9e2d51, 0xe6546b64,
        0x94d049bb, 0xbf58476d, 0x2545f491, 0x4f6cdd1d, 0x6c8e9cf5, 0x7feb352d, 0x846ca68b,
        0x68e31da4, 0xb5297a4d, 0x1b56c4e9, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
        0x1f83d9ab, 0x5be0cd19, 0x6a09e667, 0xbb67ae85,
    ];

    /// FNV-1a over the table, 64k steps (~0.1 ms); calls nothing.
    #[inline(never)]
    pub fn leaf(mut h: u32) -> u32 {
        for _ in 0..2048 {
            for t in TAB.iter() {
                h = (h ^ t).wrapping_mul(16777619);
            }
        }
        h
    }

    #[inline(never)]
    pub fn caller(seed: u32, n: u32) -> u32 {
        let mut h = seed;
        for i in 0..n {
            h = leaf(std::hint::black_box(h.wrapping_add(i))) ^ (h >> 3);
        }
        h
    }
}

fn main() {
    use std::time::{Duration, Instant};

    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    println!("ready {}", std::process::id());
    let mut h = 1u32;
    loop {
        h = std::hint::black_box(hot::caller(h, 10));
        if Instant::now() >= end {
            break;
        }
    }
}
