//! Concurrent appends: 1,000,000 items pushed by 2 threads into
//! `LockOnResizeArray` and `AppendArena`, against `Mutex<Vec<_>>` and
//! `boxcar::Vec`.
//!
//! Every iteration starts from an empty structure and includes dropping it.
//! The growable ones (`LockOnResizeArray`, `boxcar::Vec`, `Mutex<Vec>`) start
//! with no preallocation and grow as they go; `AppendArena` has a fixed
//! capacity by contract, so it is created with room for all the items.

use std::hint::black_box;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_collections::{AppendArena, LockOnResizeArray};

/// Items per iteration, both threads together.
const ITEMS: u64 = 1_000_000;
/// Appending threads.
const THREADS: u64 = 2;

/// Runs `push` for every item, split between the threads.
fn split(push: impl Fn(u64) + Sync) {
    thread::scope(|s| {
        for t in 0..THREADS {
            let push = &push;
            s.spawn(move || {
                for v in ITEMS * t / THREADS..ITEMS * (t + 1) / THREADS {
                    push(v);
                }
            });
        }
    });
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("append/2 threads");
    group
        .throughput(Throughput::Elements(ITEMS))
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));

    group.bench_function("sluice::LockOnResizeArray", |b| {
        b.iter(|| {
            let array = LockOnResizeArray::new();
            split(|v| {
                array.push(v);
            });
            assert_eq!(array.len() as u64, ITEMS);
            black_box(array)
        })
    });
    group.bench_function("sluice::AppendArena", |b| {
        b.iter(|| {
            let arena = AppendArena::with_capacity(ITEMS as usize);
            split(|v| {
                arena.push(v).unwrap();
            });
            assert_eq!(arena.len() as u64, ITEMS);
            black_box(arena)
        })
    });
    group.bench_function("Mutex<Vec>", |b| {
        b.iter(|| {
            let vec = Mutex::new(Vec::new());
            split(|v| vec.lock().unwrap().push(v));
            assert_eq!(vec.lock().unwrap().len() as u64, ITEMS);
            black_box(vec)
        })
    });
    group.bench_function("boxcar::Vec", |b| {
        b.iter(|| {
            let vec = boxcar::Vec::new();
            split(|v| {
                vec.push(v);
            });
            assert_eq!(vec.count() as u64, ITEMS);
            black_box(vec)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
