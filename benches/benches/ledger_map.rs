//! `ledger_map`: two threads each read all of 10,000 keys (u64 keys, u64
//! values), from a `LedgerMap` beside its peers `DashMap` and
//! `RwLock<HashMap>`.
//!
//! Every map hashes with the same `foldhash::fast::RandomState`, so the
//! difference measured is the read path itself: a plain lookup (LedgerMap),
//! a shard read lock per lookup (DashMap), a read lock per lookup (RwLock, as
//! independent reads from many systems would take it), and, for scale, one
//! read lock held for the whole pass (RwLock's best case, which blocks every
//! writer for as long).
//!
//! One iteration is both threads' passes; the time is the slower thread's,
//! measured between a shared barrier and the end of its reads.

#![allow(missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Barrier, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dashmap::DashMap;
use foldhash::fast::RandomState;
use sluice_collections::LedgerMap;

const KEYS: u64 = 10_000;
const THREADS: usize = 2;

/// Spreads `0..KEYS` over the u64 range (splitmix64), so keys look like ids.
fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs `iters` passes of `pass` on each of `THREADS` threads at once and
/// returns the slower thread's time.
fn on_threads(iters: u64, pass: impl Fn(&[u64]) -> u64 + Sync, keys: &[u64]) -> Duration {
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(pass(black_box(keys)));
                    }
                    start.elapsed()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("reader panicked"))
            .max()
            .expect("two readers")
    })
}

fn reads(c: &mut Criterion) {
    let keys: Vec<u64> = (0..KEYS).map(key).collect();

    let mut ledger = LedgerMap::with_hasher(RandomState::default());
    let dash = DashMap::with_hasher(RandomState::default());
    let mut std_map = HashMap::with_hasher(RandomState::default());
    for &k in &keys {
        ledger.insert(k, !k);
        dash.insert(k, !k);
        std_map.insert(k, !k);
    }
    ledger.apply();
    let rwlock = RwLock::new(std_map);

    let mut group = c.benchmark_group("ledger_map/read_10k_keys_2_threads");
    group
        .throughput(Throughput::Elements(KEYS * THREADS as u64))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30);

    group.bench_function("sluice LedgerMap", |b| {
        b.iter_custom(|iters| {
            on_threads(
                iters,
                |keys| {
                    keys.iter()
                        .map(|k| *ledger.get(k).expect("present"))
                        .fold(0, u64::wrapping_add)
                },
                &keys,
            )
        });
    });
    group.bench_function("dashmap DashMap", |b| {
        b.iter_custom(|iters| {
            on_threads(
                iters,
                |keys| {
                    keys.iter()
                        .map(|k| *dash.get(k).expect("present"))
                        .fold(0, u64::wrapping_add)
                },
                &keys,
            )
        });
    });
    group.bench_function("std RwLock<HashMap>", |b| {
        b.iter_custom(|iters| {
            on_threads(
                iters,
                |keys| {
                    keys.iter()
                        .map(|k| {
                            *rwlock
                                .read()
                                .expect("not poisoned")
                                .get(k)
                                .expect("present")
                        })
                        .fold(0, u64::wrapping_add)
                },
                &keys,
            )
        });
    });
    group.bench_function("std RwLock<HashMap> (one read lock per pass)", |b| {
        b.iter_custom(|iters| {
            on_threads(
                iters,
                |keys| {
                    let map = rwlock.read().expect("not poisoned");
                    keys.iter()
                        .map(|k| *map.get(k).expect("present"))
                        .fold(0, u64::wrapping_add)
                },
                &keys,
            )
        });
    });
    group.finish();
}

criterion_group!(benches, reads);
criterion_main!(benches);
