//! Batch processors registered on a world with `add_batch_processor`: the
//! buffer is gated automatically (a writer registered before the processor
//! runs first; readers registered after see the state `after_update` left),
//! `process_batch` covers every item exactly once, and `after_update` runs
//! once per iteration, also for an empty buffer. On the serial executor and
//! on pools of 1, 2 and 4 threads.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use sluice::exec::ClearBuffer;
use sluice::{BatchProcessor, ExecutorKind, NodeBuilder, ThreadPool, World};

/// The largest buffer any iteration fills.
const MAX_ITEMS: usize = 4_000;

/// The batch buffer: items are their own indices.
#[derive(Debug, Default)]
struct Items {
    items: Vec<u32>,
    /// `after_update` calls so far.
    rounds: u64,
    /// The length `before_update` saw in the last round.
    last_len: usize,
}

impl ClearBuffer for Items {
    fn clear_buffer(&mut self) {
        self.items.clear();
    }
}

/// How many items the writer puts in the buffer this iteration.
#[derive(Debug, Default)]
struct Fill(usize);

/// `(items, rounds, last_len)` as seen by the reader before the processor.
#[derive(Debug, Default)]
struct Before(Vec<(usize, u64)>);

/// `(items, rounds, last_len)` as seen by the reader after the processor.
#[derive(Debug, Default)]
struct After(Vec<(usize, u64, usize)>);

/// What the processor shares with the test.
#[derive(Debug)]
struct Shared {
    /// Per item index: how often `process_batch` covered it this iteration.
    hits: Vec<AtomicU32>,
    slices: AtomicUsize,
    after_updates: AtomicUsize,
    /// Problems seen inside `process_batch` (reported by the test).
    errors: Mutex<Vec<String>>,
}

struct Counter {
    shared: Arc<Shared>,
    /// What `before_update` saw, for `after_update` to record.
    seen_len: usize,
}

impl BatchProcessor for Counter {
    type Buffer = Items;
    type Item = u32;
    const BATCH_SIZE: usize = 7;

    fn items(buffer: &Items) -> &[u32] {
        &buffer.items
    }

    fn before_update(&mut self, buffer: &mut Items) {
        self.seen_len = buffer.items.len();
    }

    fn process_batch(&self, start: usize, batch: &[u32]) {
        self.shared.slices.fetch_add(1, Ordering::Relaxed);
        if batch.is_empty()
            || batch.len() > Self::BATCH_SIZE
            || !start.is_multiple_of(Self::BATCH_SIZE)
        {
            self.shared
                .errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(format!("slice at {start} of {} items", batch.len()));
        }
        for (offset, &item) in batch.iter().enumerate() {
            assert_eq!(item as usize, start + offset, "the slice starts at `start`");
            self.shared.hits[item as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn after_update(&mut self, buffer: &mut Items) {
        self.shared.after_updates.fetch_add(1, Ordering::SeqCst);
        buffer.rounds += 1;
        buffer.last_len = self.seen_len;
        buffer.items.clear();
    }
}

fn build(pool: &ThreadPool, executor: ExecutorKind) -> (World, Arc<Shared>) {
    let shared = Arc::new(Shared {
        hits: (0..MAX_ITEMS).map(|_| AtomicU32::new(0)).collect(),
        slices: AtomicUsize::new(0),
        after_updates: AtomicUsize::new(0),
        errors: Mutex::default(),
    });
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    world.insert(Items::default());
    world.insert(Fill(0));
    world.insert(Before::default());
    world.insert(After::default());
    // Registered before the processor; ordered only by gating `Items`.
    world.add_system(
        NodeBuilder::new("writer").system(|fill: &Fill, items: &mut Items| {
            items.items.extend(0..fill.0 as u32);
        }),
    );
    world.add_system(NodeBuilder::new("early reader").system(
        |items: &Items, seen: &mut Before| {
            seen.0.push((items.items.len(), items.rounds));
        },
    ));
    world.add_batch_processor(
        NodeBuilder::new("counter"),
        Counter {
            shared: Arc::clone(&shared),
            seen_len: 0,
        },
    );
    world.add_system(
        NodeBuilder::new("late reader").system(|items: &Items, seen: &mut After| {
            seen.0
                .push((items.items.len(), items.rounds, items.last_len));
        }),
    );
    (world, shared)
}

/// Buffer sizes per iteration: many slices, a partial last slice, one item,
/// an exact multiple of the batch size, and empty.
const FILLS: [usize; 7] = [MAX_ITEMS, 1_000, 1, 0, 7 * 50, MAX_ITEMS - 3, 0];

fn check(pool: &ThreadPool, executor: ExecutorKind) {
    let (mut world, shared) = build(pool, executor);
    let label = format!("{executor:?} on {} threads", pool.num_threads());
    let mut slices = 0;
    for (round, &fill) in FILLS.iter().enumerate() {
        world.get_mut::<Fill>().expect("inserted").0 = fill;
        for hit in &shared.hits {
            hit.store(0, Ordering::Relaxed);
        }
        if let Err(error) = world.run_iteration() {
            panic!("{label}, round {round}: {error}");
        }
        for (item, hit) in shared.hits.iter().enumerate() {
            let want = u32::from(item < fill);
            assert_eq!(
                hit.load(Ordering::Relaxed),
                want,
                "{label}, round {round}: item {item} of {fill}"
            );
        }
        slices += fill.div_ceil(Counter::BATCH_SIZE);
        assert_eq!(shared.slices.load(Ordering::Relaxed), slices, "{label}");
        assert_eq!(
            shared.after_updates.load(Ordering::SeqCst),
            round + 1,
            "{label}: after_update runs once per iteration"
        );
        let rounds = round as u64;
        assert_eq!(
            world.get::<Before>().expect("inserted").0.last(),
            Some(&(fill, rounds)),
            "{label}: the early reader sees the writer's items, not yet processed"
        );
        assert_eq!(
            world.get::<After>().expect("inserted").0.last(),
            Some(&(0, rounds + 1, fill)),
            "{label}: the late reader sees what after_update left"
        );
    }
    let errors = shared.errors.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(errors.is_empty(), "{label}: {errors:?}");
}

#[test]
fn the_buffer_is_gated_and_every_item_is_processed_once() {
    check(
        &ThreadPool::new(1).expect("the pool starts"),
        ExecutorKind::Serial,
    );
    for threads in [1, 2, 4] {
        let pool = ThreadPool::new(threads).expect("the pool starts");
        for _ in 0..3 {
            check(&pool, ExecutorKind::Parallel);
        }
    }
}

/// The processor's node is ordered by the buffer's lane alone: the plan puts
/// the writer before it and the readers around it as registered.
#[test]
fn the_plan_orders_the_buffer_lane() {
    let pool = ThreadPool::new(2).expect("the pool starts");
    let (mut world, _) = build(&pool, ExecutorKind::Parallel);
    let plan = world.plan().expect("the registrations plan");
    let names: Vec<String> = plan
        .order()
        .map(|node| plan.node_name(node).to_owned())
        .filter(|name| !name.starts_with("sluice::"))
        .collect();
    assert_eq!(names, ["writer", "early reader", "counter", "late reader"]);
}
