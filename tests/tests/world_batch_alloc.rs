//! A warmed-up world iteration allocates nothing: a world of 50 systems over
//! 16 services and a batch processor over thousands of items (hundreds of
//! slices, refilled every iteration) runs `run_iteration` without a single
//! heap allocation on any thread, on the serial executor, the parallel one on
//! pools of 1, 2 and 4 threads, and the adaptive one.
//!
//! Its own test binary, for the counting global allocator, without the test
//! harness (`harness = false`): `main` runs the check on the main thread, so
//! no harness thread allocates beside the measurement. When an iteration
//! allocates, the allocator captures the backtraces of the first few
//! allocations and the failure message shows them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sluice::exec::ClearBuffer;
use sluice::{BatchProcessor, Context, ExecutorKind, NodeBuilder, ThreadPool, World};
use sluice_tests::by_index;

// The workspace's one counting allocator (beside the runtime's allocation
// tests, which share it).
#[path = "../../runtime/tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, Threads, traced_allocations_during};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Backtraces kept of the first allocations while counting.
const TRACED: usize = 3;

const SERVICES: usize = 16;
const SYSTEMS: usize = 50;
const ITEMS: u32 = 5_000;

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
    world.insert(Svc::<N>(0));
}

fn read<const N: usize>(cx: &Context<'_>) -> u64 {
    cx.read::<Svc<N>>().0
}

fn add<const N: usize>(cx: &mut Context<'_>, value: u64) {
    let svc = cx.write::<Svc<N>>();
    svc.0 = svc.0.wrapping_add(value);
}

/// The batch buffer, refilled every iteration by the `fill` system.
#[derive(Debug, Default)]
struct Items(Vec<u32>);

impl ClearBuffer for Items {
    fn clear_buffer(&mut self) {
        self.0.clear();
    }
}

struct Sum {
    total: Arc<AtomicU64>,
}

impl BatchProcessor for Sum {
    type Buffer = Items;
    type Item = u32;
    const BATCH_SIZE: usize = 16;

    fn items(buffer: &Items) -> &[u32] {
        &buffer.0
    }

    fn process_batch(&self, _start: usize, batch: &[u32]) {
        let sum: u64 = batch.iter().map(|&x| u64::from(x)).sum();
        self.total.fetch_add(sum, Ordering::Relaxed);
    }
}

fn build(pool: &ThreadPool, executor: ExecutorKind) -> (World, Arc<AtomicU64>) {
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    for s in 0..SERVICES {
        by_index!(s, insert(&mut world));
    }
    world.insert(Items::default());
    for index in 0..SYSTEMS {
        // Shared reads of two services, a gate of a third: lanes with both
        // parallel readers and barriers.
        let reads = [index % SERVICES, (index * 7 + 3) % SERVICES];
        let gate = (index * 5 + 1) % SERVICES;
        let mut builder = NodeBuilder::new(format!("s{index}"));
        for s in reads {
            if s != gate {
                builder = by_index!(s, declare_read(builder));
            }
        }
        builder = by_index!(gate, declare_gate(builder));
        if index % 10 == 9 {
            builder = builder.after(format!("s{}", index - 5));
        }
        world.add_system(builder.run(move |cx| {
            let mut h = index as u64;
            for s in reads {
                h = h.wrapping_add(by_index!(s, read(cx)));
            }
            by_index!(gate, add(cx, h));
        }));
    }
    world.add_system(NodeBuilder::new("fill").system(|items: &mut Items| items.0.extend(0..ITEMS)));
    let total = Arc::new(AtomicU64::new(0));
    world.add_batch_processor(
        NodeBuilder::new("sum"),
        Sum {
            total: Arc::clone(&total),
        },
    );
    (world, total)
}

/// Waits until every worker thread of `pool` has started and gone to sleep
/// once: a thread's start and its first steal (which registers it with
/// crossbeam-epoch) allocate once per thread, not per iteration. On a busy
/// machine a worker may not have been scheduled during the warm-up yet.
fn settle(pool: &ThreadPool) {
    let workers = pool.num_threads() - 1;
    for _ in 0..50_000 {
        if pool.stats().sleeping_workers == workers {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn main() {
    a_warm_world_iteration_allocates_nothing();
    println!("world_batch_alloc: a warm world iteration allocates nothing: ok");
}

fn a_warm_world_iteration_allocates_nothing() {
    let per_iteration = u64::from(ITEMS) * u64::from(ITEMS - 1) / 2;
    let setups = [
        (1, ExecutorKind::Serial),
        (1, ExecutorKind::Parallel),
        (2, ExecutorKind::Parallel),
        (4, ExecutorKind::Parallel),
        (4, ExecutorKind::Adaptive),
    ];
    let mut failures = Vec::new();
    for (threads, executor) in setups {
        let pool = ThreadPool::new(threads).expect("the pool starts");
        let (mut world, total) = build(&pool, executor);
        for _ in 0..5 {
            world.run_iteration().expect("warm-up iteration");
        }
        settle(&pool);
        // Long enough for the adaptive executor to probe (its first probe,
        // pool and inline side by side, runs in a world's first iterations).
        let iterations = 70;
        let (allocations, traces) = traced_allocations_during(Threads::Every, TRACED, || {
            for _ in 0..iterations {
                world.run_iteration().expect("counted iteration");
            }
        });
        if allocations > 0 {
            failures.push(format!(
                "{executor:?} on {threads} threads: {allocations} allocations in {iterations} warm iterations; the first:\n{}",
                traces.join("\n")
            ));
        }
        assert_eq!(
            total.load(Ordering::Relaxed),
            per_iteration * (5 + iterations),
            "every item was summed in every iteration"
        );
        assert!(
            world.get::<Items>().expect("inserted").0.is_empty(),
            "after_update cleared the buffer"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
