//! Two worlds on one pool: each runs from its own thread at its own rate for
//! many iterations, and each gives, iteration by iteration, exactly what the
//! same world gives on the serial executor.
//!
//! Each world is a seeded random graph over 8 counter services: a node folds
//! what it reads into a hash and mixes it into every service it gates
//! (`x = x * 31 + h`), so any change of order among conflicting nodes
//! changes the values. One world also has a batch processor, so its slices
//! (prioritized loose tasks) share the pool's threads with the other world's
//! nodes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use sluice::exec::ClearBuffer;
use sluice::{BatchProcessor, Context, ExecutorKind, NodeBuilder, ThreadPool, World};
use sluice_tests::by_index;

const SERVICES: usize = 8;

/// A counter service.
#[derive(Debug, Default)]
struct Svc<const N: usize>(u64);

fn declare_read<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.reads::<Svc<N>>()
}

fn declare_gate<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.gates::<Svc<N>>()
}

fn insert<const N: usize>(world: &mut World) {
    world.insert(Svc::<N>(N as u64));
}

fn value<const N: usize>(world: &World) -> u64 {
    world.get::<Svc<N>>().expect("every service is inserted").0
}

fn read<const N: usize>(cx: &Context<'_>) -> u64 {
    cx.read::<Svc<N>>().0
}

fn mix<const N: usize>(cx: &mut Context<'_>, h: u64) {
    let svc = cx.write::<Svc<N>>();
    svc.0 = svc.0.wrapping_mul(31).wrapping_add(h);
}

/// SplitMix64, so the worlds are the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// The batch buffer: items to sum, and the sums of past iterations.
#[derive(Debug, Default)]
struct Items {
    items: Vec<u64>,
    sums: Vec<u64>,
}

impl ClearBuffer for Items {
    fn clear_buffer(&mut self) {
        self.items.clear();
    }
}

/// Sums the items (in any order: addition commutes) and records the sum.
#[derive(Debug, Default)]
struct Summer {
    total: AtomicU64,
}

impl BatchProcessor for Summer {
    type Buffer = Items;
    type Item = u64;
    const BATCH_SIZE: usize = 16;

    fn items(buffer: &Items) -> &[u64] {
        &buffer.items
    }

    fn process_batch(&self, start: usize, batch: &[u64]) {
        let sum = batch
            .iter()
            .enumerate()
            .map(|(i, x)| x.wrapping_mul((start + i) as u64 + 1))
            .fold(0u64, u64::wrapping_add);
        self.total.fetch_add(sum, Ordering::Relaxed);
    }

    fn after_update(&mut self, buffer: &mut Items) {
        buffer.sums.push(self.total.swap(0, Ordering::Relaxed));
        buffer.items.clear();
    }
}

/// Builds the world of `seed` with `nodes` random nodes (and a batch
/// processor fed from service 0 when `batch`).
fn world(pool: &ThreadPool, executor: ExecutorKind, seed: u64, nodes: usize, batch: bool) -> World {
    let mut rng = Rng(seed);
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    for s in 0..SERVICES {
        by_index!(s, insert(&mut world));
    }
    for index in 0..nodes {
        let mut builder = NodeBuilder::new(format!("n{index}"));
        let (mut reads, mut gates) = (Vec::new(), Vec::new());
        for s in 0..SERVICES {
            match rng.below(5) {
                0 => gates.push(s),
                1 => reads.push(s),
                _ => {}
            }
        }
        for &s in &reads {
            builder = by_index!(s, declare_read(builder));
        }
        for &s in &gates {
            builder = by_index!(s, declare_gate(builder));
        }
        if index > 0 && rng.below(4) == 0 {
            builder = builder.after(format!("n{}", rng.below(index as u64)));
        }
        world.add_system(builder.run(move |cx| {
            let mut h = index as u64 + 1;
            for &s in reads.iter().chain(&gates) {
                h = h
                    .wrapping_mul(1_000_003)
                    .wrapping_add(by_index!(s, read(cx)));
            }
            for &s in &gates {
                by_index!(s, mix(cx, h));
            }
        }));
    }
    if batch {
        world.insert(Items::default());
        // Fills the buffer from service 0 (registered before the processor,
        // so it runs first), and folds the last sum back into service 1
        // (registered after, so it sees this iteration's sum).
        world.add_system(
            NodeBuilder::new("fill").system(|seed: &Svc<0>, items: &mut Items| {
                items
                    .items
                    .extend((0..1_000u64).map(|i| seed.0.wrapping_add(i)));
            }),
        );
        world.add_batch_processor(NodeBuilder::new("sum"), Summer::default());
        world.add_system(
            NodeBuilder::new("fold").system(|items: &Items, out: &mut Svc<1>| {
                out.0 = out
                    .0
                    .wrapping_add(*items.sums.last().expect("the batch ran"));
            }),
        );
    }
    world
}

/// A checksum of every service after an iteration.
fn snapshot(world: &World) -> u64 {
    let mut h = 0u64;
    for s in 0..SERVICES {
        h = h
            .wrapping_mul(1_000_003)
            .wrapping_add(by_index!(s, value(world)));
    }
    if let Some(items) = world.get::<Items>() {
        h = h
            .wrapping_mul(1_000_003)
            .wrapping_add(items.sums.len() as u64);
    }
    h
}

/// Runs `iterations` iterations, pausing after every `pause_every`-th, and
/// returns the snapshot after each.
fn drive(world: &mut World, iterations: usize, pause_every: usize) -> Vec<u64> {
    (0..iterations)
        .map(|i| {
            if let Err(error) = world.run_iteration() {
                panic!("iteration {i}: {error}");
            }
            if i % pause_every == 0 {
                thread::yield_now();
            }
            snapshot(world)
        })
        .collect()
}

/// Two worlds: (seed, nodes, batch, iterations, pause_every).
const WORLDS: [(u64, usize, bool, usize, usize); 2] =
    [(0xA11CE, 30, false, 1_500, 7), (0xB0B, 24, true, 600, 2)];

fn expected() -> Vec<Vec<u64>> {
    let solo = ThreadPool::new(1).expect("the pool starts");
    WORLDS
        .iter()
        .map(|&(seed, nodes, batch, iterations, pause)| {
            let mut world = world(&solo, ExecutorKind::Serial, seed, nodes, batch);
            drive(&mut world, iterations, pause)
        })
        .collect()
}

fn run_on_shared_pool(threads: usize, executor: ExecutorKind, expected: &[Vec<u64>]) {
    let pool = ThreadPool::new(threads).expect("the pool starts");
    let start = Arc::new(Barrier::new(WORLDS.len()));
    let handles: Vec<_> = WORLDS
        .iter()
        .map(|&(seed, nodes, batch, iterations, pause)| {
            let mut world = world(&pool, executor, seed, nodes, batch);
            let start = Arc::clone(&start);
            thread::spawn(move || {
                start.wait();
                drive(&mut world, iterations, pause)
            })
        })
        .collect();
    for (index, handle) in handles.into_iter().enumerate() {
        let snapshots = handle.join().expect("the world's thread finishes");
        let first_difference = snapshots
            .iter()
            .zip(&expected[index])
            .position(|(got, want)| got != want);
        assert_eq!(
            first_difference, None,
            "world {index} ({executor:?}) on a shared {threads}-thread pool diverged from its serial run"
        );
        assert_eq!(snapshots.len(), expected[index].len());
    }
}

#[test]
fn two_worlds_on_one_pool_give_their_serial_results() {
    let expected = expected();
    for threads in [2, 4] {
        run_on_shared_pool(threads, ExecutorKind::Parallel, &expected);
    }
    run_on_shared_pool(4, ExecutorKind::Adaptive, &expected);
}

/// The batch world really ran its batch every iteration, with every item.
#[test]
fn the_batch_world_sums_every_item_every_iteration() {
    let pool = ThreadPool::new(2).expect("the pool starts");
    let mut world = world(&pool, ExecutorKind::Parallel, 0xB0B, 0, true);
    for _ in 0..5 {
        let seed = world.get::<Svc<0>>().expect("inserted").0;
        world.run_iteration().expect("no node panics");
        let want = (0..1_000u64)
            .map(|i| seed.wrapping_add(i).wrapping_mul(i + 1))
            .fold(0u64, u64::wrapping_add);
        let items = world.get::<Items>().expect("inserted");
        assert!(items.items.is_empty(), "after_update cleared the buffer");
        assert_eq!(items.sums.last(), Some(&want));
    }
    assert_eq!(world.get::<Items>().expect("inserted").sums.len(), 5);
}
