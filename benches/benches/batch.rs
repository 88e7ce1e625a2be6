//! Batch processing: a `sluice` batch node against `rayon`'s `par_chunks`
//! and a plain loop, doing the same work.
//!
//! The buffer holds 1,000,000 `f32`; slices (chunks) are 1,024 items. Each
//! slice computes the sum of `x * 1.0001 + 0.5` over its items (eight lanes,
//! so the compiler vectorizes it) and stores it in its own result slot. Both
//! pools have 2 threads (the caller included), the machine's core count.
//! One tick of the sluice engine is a whole run: a one-node graph whose node
//! is the batch, with `before_update` on the node's thread, the slices on the
//! pool and `after_update` on the thread that finishes last.

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use sluice::exec::{
    BatchBuffer, BatchNode, BatchProcessor, CompiledGraph, ExecutionState, SerialExecutor,
    ThreadPool,
};

const ITEMS: usize = 1_000_000;
const BATCH: usize = 1024;
const THREADS: usize = 2;

/// The per-slice work shared by every peer.
#[inline]
fn kernel(batch: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut chunks = batch.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += x * 1.0001 + 0.5;
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|&x| x * 1.0001 + 0.5).sum();
    lanes.iter().sum::<f32>() + tail
}

/// The sluice batch processor: one result slot per slice (relaxed stores of
/// the `f32` bits: no lock, no `UnsafeCell`).
struct SliceSums {
    results: Vec<AtomicU32>,
}

impl BatchProcessor for SliceSums {
    type Buffer = Vec<f32>;
    type Item = f32;
    const BATCH_SIZE: usize = BATCH;

    fn items(buffer: &Vec<f32>) -> &[f32] {
        buffer
    }

    fn process_batch(&self, start: usize, batch: &[f32]) {
        self.results[start / BATCH].store(kernel(batch).to_bits(), Ordering::Relaxed);
    }

    fn after_update(&mut self, _buffer: &mut Vec<f32>) {
        // Keep the items: every tick processes the same buffer.
    }
}

fn items() -> Vec<f32> {
    (0..ITEMS).map(|i| (i % 1000) as f32 * 0.001).collect()
}

fn batch(c: &mut Criterion) {
    let slices = ITEMS.div_ceil(BATCH);
    let mut group = c.benchmark_group("batch");
    group.throughput(Throughput::Elements(ITEMS as u64));

    // sluice: a one-node graph whose node is the batch.
    let pool = ThreadPool::new(THREADS).unwrap();
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let node = BatchNode::new(SliceSums {
        results: (0..slices).map(|_| AtomicU32::new(0)).collect(),
    });
    let buffer = BatchBuffer::new(items());
    group.bench_function("sluice_batch_node", |b| {
        b.iter(|| {
            pool.run(&graph, &mut state, |cx| node.schedule(cx, &buffer))
                .unwrap()
        });
    });

    // The same node on the serial executor (one thread).
    let serial = SerialExecutor::new();
    group.bench_function("sluice_serial", |b| {
        b.iter(|| {
            serial
                .run(&graph, &mut state, |cx| node.schedule(cx, &buffer))
                .unwrap()
        });
    });

    // rayon: par_chunks over the same items into the same kind of slots.
    let rayon_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .unwrap();
    let data = items();
    let mut results = vec![0.0f32; slices];
    group.bench_function("rayon_par_chunks", |b| {
        b.iter(|| {
            rayon_pool.install(|| {
                data.par_chunks(BATCH)
                    .zip(results.par_iter_mut())
                    .for_each(|(chunk, result)| *result = kernel(chunk));
            });
            black_box(&results);
        });
    });

    // A plain loop on one thread.
    group.bench_function("plain_loop", |b| {
        b.iter(|| {
            for (chunk, result) in black_box(&data).chunks(BATCH).zip(results.iter_mut()) {
                *result = kernel(chunk);
            }
            black_box(&results);
        });
    });
    group.finish();

    // Same answers.
    let mut node = node;
    let ours: Vec<f32> = node
        .processor_mut()
        .results
        .iter()
        .map(|bits| f32::from_bits(bits.load(Ordering::Relaxed)))
        .collect();
    assert_eq!(ours, results);
}

criterion_group!(benches, batch);
criterion_main!(benches);
