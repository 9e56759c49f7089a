// SPDX-License-Identifier: Apache-2.0
//! ledger (Rust): a busy workload whose time is in a method of a struct in a module,
//! ledger::billing::Ledger::settle, called from ledger::billing::run_day, for
//! tests/integration/test_native_langs.sh. Built with rustc -O (no frame pointers, the legacy
//! symbol mangling: names carry a hash, which the profiler drops as perf does).
//!
//! Usage: ledger   prints "ledger running" and computes until killed.

mod billing {
    pub struct Ledger {
        entries: Vec<u64>,
    }

    impl Ledger {
        pub fn new(n: usize) -> Ledger {
            Ledger { entries: vec![1; n] }
        }

        #[inline(never)]
        pub fn settle(&mut self, rounds: u64) -> u64 {
            let mut h: u64 = 0x243f6a88;
            let n = self.entries.len() as u64;
            for i in 0..rounds {
                let e = &mut self.entries[(i % n) as usize];
                h ^= *e;
                h = h.wrapping_mul(0x5bd1e995);
                h ^= h >> 15;
                *e = h;
            }
            h
        }
    }

    // Its work after the call keeps the call from being a tail call (a jump, which leaves no
    // frame of run_day to see).
    #[inline(never)]
    pub fn run_day(ledger: &mut Ledger) -> u64 {
        ledger.settle(1 << 20) ^ 1
    }
}

use std::sync::atomic::{AtomicU64, Ordering};

static SINK: AtomicU64 = AtomicU64::new(0);

fn main() {
    let mut ledger = billing::Ledger::new(512);
    println!("ledger running");
    loop {
        SINK.fetch_add(billing::run_day(&mut ledger), Ordering::Relaxed);
    }
}
