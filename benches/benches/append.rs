//! Concurrent appends: 1,000,000 items pushed by 2 threads into
//! `LockOnResizeArray` and `AppendArena`, against `Mutex<Vec<_>>` and
//! `boxcar::Vec`.
//!
//! Every iteration starts from an empty structure and includes dropping it.
//! The growable ones (`LockOnResizeArray`, `boxcar::Vec`, `Mutex<Vec>`) start
//! with no preallocation and grow as they go; `AppendArena` has a fixed
//! capacity by contract, so it is created with room for all the items.
//!
//! The `(appender)` rows push through one per-thread appender each
//! (`LockOnResizeArray::appender`, `AppendArena::appender`), which claims 64
//! slots per atomic increment; the plain rows claim one per push. An appender
//! may strand up to 63 slots at the end of its last run, so that arena gets
//! room for the items plus 63 per thread.

use std::hint::black_box;
use std::ops::Range;
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
    split_ranges(|items| items.for_each(&push));
}

/// Runs `run` once per thread on that thread's share of the items.
fn split_ranges(run: impl Fn(Range<u64>) + Sync) {
    thread::scope(|s| {
        for t in 0..THREADS {
            let run = &run;
            s.spawn(move || run(ITEMS * t / THREADS..ITEMS * (t + 1) / THREADS));
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
    group.bench_function("sluice::LockOnResizeArray (appender)", |b| {
        b.iter(|| {
            let array = LockOnResizeArray::new();
            split_ranges(|items| {
                let mut appender = array.appender();
                for v in items {
                    appender.push(v);
                }
            });
            // `len` counts the slots each appender's last run left unfilled.
            let holes = 2 * (LockOnResizeArray::<u64>::APPENDER_CHUNK as u64 - 1);
            assert!((ITEMS..=ITEMS + holes).contains(&(array.len() as u64)));
            black_box(array)
        })
    });
    group.bench_function("sluice::AppendArena (appender)", |b| {
        b.iter(|| {
            let slack = THREADS as usize * (AppendArena::<u64>::APPENDER_CHUNK - 1);
            let arena = AppendArena::with_capacity(ITEMS as usize + slack);
            split_ranges(|items| {
                let mut appender = arena.appender();
                for v in items {
                    appender.push(v).unwrap();
                }
            });
            assert!((ITEMS..=ITEMS + slack as u64).contains(&(arena.len() as u64)));
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
