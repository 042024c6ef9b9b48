// SPDX-License-Identifier: MIT
//! recurse.rs - the Rust target of tests/e2e/fpless.sh: 40 calls deep,
//! then spin, for SECS seconds (the first argument). Built with
//! `rustc -C opt-level=3 -g`, without force-frame-pointers: a release
//! build as users make them.
use std::hint::black_box;
use std::time::{Duration, Instant};

#[inline(never)]
fn rec(depth: u32) -> u64 {
    if depth == 0 {
        let mut x: u64 = 0;
        for i in 0..200_000u64 {
            x = x.wrapping_add(black_box(i).wrapping_mul(2_654_435_761));
        }
        return black_box(x);
    }
    let r = rec(black_box(depth - 1));
    black_box(r).wrapping_add(1)
}

#[inline(never)]
fn top_caller() -> u64 {
    black_box(rec(black_box(40)))
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut sum = 0u64;
    while Instant::now() < end {
        sum = sum.wrapping_add(top_caller());
    }
    black_box(sum);
}
