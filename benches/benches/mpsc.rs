//! Bounded multi-producer, single-consumer queues: `sluice_collections::mpsc`
//! against `crossbeam_queue::ArrayQueue`, `crossbeam_channel::bounded` and
//! `std::sync::mpsc::sync_channel`.
//!
//! Each iteration spawns the producers, which split 1,000,000 `u64`
//! messages between them, and receives every message on the bench thread;
//! the capacity is 1024. Lock-free queues that find themselves full or empty
//! back off the same way (spin a little, then yield the thread: the machine
//! may have fewer cores than threads), the channels block.

use std::hint::black_box;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Messages per iteration, all producers together.
const MESSAGES: u64 = 1_000_000;
/// The queue capacity.
const CAPACITY: usize = 1024;

/// Spins for a doubling number of rounds, then yields the thread.
struct Backoff(u32);

impl Backoff {
    fn new() -> Self {
        Self(0)
    }

    fn snooze(&mut self) {
        if self.0 <= 6 {
            for _ in 0..1u32 << self.0 {
                std::hint::spin_loop();
            }
            self.0 += 1;
        } else {
            thread::yield_now();
        }
    }
}

/// The range of messages producer `p` of `producers` sends.
fn share(p: u64, producers: u64) -> std::ops::Range<u64> {
    MESSAGES * p / producers..MESSAGES * (p + 1) / producers
}

/// Runs `producers` threads pushing their share through `push` (snoozing
/// while full) and pops every message on this thread (snoozing while empty):
/// one harness for every lock-free peer, so they wait the same way.
fn drive_lock_free<P>(producers: u64, push: P, mut pop: impl FnMut() -> Option<u64>) -> u64
where
    P: Fn(u64) -> Result<(), u64> + Clone + Send + 'static,
{
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let push = push.clone();
            thread::spawn(move || {
                for mut v in share(p, producers) {
                    let mut backoff = Backoff::new();
                    while let Err(back) = push(v) {
                        v = back;
                        backoff.snooze();
                    }
                }
            })
        })
        .collect();
    let mut sum = 0;
    let mut received = 0;
    let mut backoff = Backoff::new();
    while received < MESSAGES {
        match pop() {
            Some(v) => {
                sum += v;
                received += 1;
                backoff = Backoff::new();
            }
            None => backoff.snooze(),
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    sum
}

/// Ours: Vyukov's bounded queue with an owned consumer head.
fn sluice(producers: u64) -> u64 {
    let (tx, mut rx) = sluice_collections::mpsc::bounded::<u64>(CAPACITY);
    drive_lock_free(producers, move |v| tx.push(v), move || rx.pop())
}

/// crossbeam-queue's `ArrayQueue` (MPMC, CAS on both ends).
fn array_queue(producers: u64) -> u64 {
    let queue = Arc::new(crossbeam_queue::ArrayQueue::<u64>::new(CAPACITY));
    let consumer = Arc::clone(&queue);
    drive_lock_free(producers, move |v| queue.push(v), move || consumer.pop())
}

/// crossbeam-channel's bounded channel (blocking).
fn crossbeam_channel(producers: u64) -> u64 {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(CAPACITY);
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let tx = tx.clone();
            thread::spawn(move || {
                for v in share(p, producers) {
                    tx.send(v).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let sum = rx.iter().sum();
    for h in handles {
        h.join().unwrap();
    }
    sum
}

/// std's `sync_channel` (blocking).
fn std_sync_channel(producers: u64) -> u64 {
    let (tx, rx) = std::sync::mpsc::sync_channel::<u64>(CAPACITY);
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let tx = tx.clone();
            thread::spawn(move || {
                for v in share(p, producers) {
                    tx.send(v).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let sum = rx.iter().sum();
    for h in handles {
        h.join().unwrap();
    }
    sum
}

/// A queue's run: producers in, checksum of the messages out.
type Run = fn(u64) -> u64;

fn bench(c: &mut Criterion) {
    let expected = MESSAGES * (MESSAGES - 1) / 2;
    for producers in [1u64, 3] {
        let mut group = c.benchmark_group(format!("mpsc/{producers}p1c"));
        group
            .throughput(Throughput::Elements(MESSAGES))
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        let peers: [(&str, Run); 4] = [
            ("sluice", sluice),
            ("crossbeam_queue::ArrayQueue", array_queue),
            ("crossbeam_channel::bounded", crossbeam_channel),
            ("std::sync::mpsc::sync_channel", std_sync_channel),
        ];
        for (name, run) in peers {
            group.bench_function(name, |b| {
                b.iter(|| assert_eq!(black_box(run(black_box(producers))), expected))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
