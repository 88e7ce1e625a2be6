//! Run conditions across iterations (issue 20): a condition reading
//! `Removed<T>` keeps its own cursor; a batch processor's and a parallel
//! query's condition is called exactly once per iteration however many
//! slices the node is cut into, on every executor; a whole-world system's
//! condition is evaluated once and skips it when false.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::exec::{BatchProcessor, ClearBuffer, ThreadPool};
use sluice::{ExecutorKind, NodeBuilder, Removed, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);

#[derive(Debug, Default)]
struct Runs(Vec<u64>);

/// Which iteration it is, set by the test before each one.
struct Iteration(u64);

/// A condition reading `Removed<Hp>` holds exactly in the iterations after
/// an `Hp` was lost, each removal once: a false evaluation still moves the
/// condition's cursor, so an old removal does not make it hold again (the
/// world keeps the records of two iterations, so a cursor left behind
/// would see it next time). The body's own `Removed<Hp>` has its own
/// cursor and sees everything lost since it last ran.
#[test]
fn a_removed_reader_condition_decides_each_iteration() {
    let mut world = World::new();
    let entities: Vec<_> = (0..4).map(|i| world.spawn((Hp(i),))).collect();
    world.insert(Runs::default());
    world.insert(Iteration(0));
    world.insert(Vec::<Vec<sluice::Entity>>::new());
    world.add_system(
        NodeBuilder::new("mourn")
            .system(
                |removed: Removed<Hp>,
                 now: &Iteration,
                 runs: &mut Runs,
                 seen: &mut Vec<Vec<sluice::Entity>>| {
                    runs.0.push(now.0);
                    seen.push(removed.iter().collect());
                },
            )
            .run_if(|removed: Removed<Hp>| removed.iter().next().is_some()),
    );
    // Before each iteration: what to take away (by entity), despawning or
    // removing the component.
    let plan: [&[usize]; 7] = [&[], &[0], &[], &[], &[1, 2], &[], &[3]];
    for (iteration, lose) in plan.iter().enumerate() {
        for &i in *lose {
            if i % 2 == 0 {
                world.despawn(entities[i]).unwrap();
            } else {
                world
                    .entity_mut(entities[i])
                    .unwrap()
                    .remove::<(Hp,)>()
                    .unwrap();
            }
        }
        world.get_mut::<Iteration>().unwrap().0 = iteration as u64;
        world.run_iteration().unwrap();
    }
    assert_eq!(
        world.get::<Runs>().unwrap().0,
        [1, 4, 6],
        "ran in the iterations after a removal, and only those"
    );
    let seen = world.get::<Vec<Vec<sluice::Entity>>>().unwrap();
    assert_eq!(
        *seen,
        [
            vec![entities[0]],
            vec![entities[1], entities[2]],
            vec![entities[3]]
        ]
    );
}

/// Items the counting processor works over.
#[derive(Default)]
struct Items(Vec<u32>);
impl ClearBuffer for Items {
    fn clear_buffer(&mut self) {}
}

/// How many slices and items it processed, across iterations.
struct Counting {
    slices: Arc<AtomicUsize>,
    items: Arc<AtomicUsize>,
}
impl BatchProcessor for Counting {
    type Buffer = Items;
    type Item = u32;
    const BATCH_SIZE: usize = 16;
    fn items(buffer: &Items) -> &[u32] {
        &buffer.0
    }
    fn process_batch(&self, _start: usize, batch: &[u32]) {
        self.slices.fetch_add(1, Ordering::Relaxed);
        self.items.fetch_add(batch.len(), Ordering::Relaxed);
    }
    // The items stay: every iteration slices the same buffer.
    fn after_update(&mut self, _buffer: &mut Items) {}
}

const ITEMS: usize = 1_000;
const ITERATIONS: usize = 6;

/// Per node: the condition's calls, then what the body did: the batch
/// processor's (slices, items), the parallel query's rows.
#[derive(Debug, PartialEq)]
struct Counts {
    batch: (usize, usize, usize),
    query: (usize, usize),
}

fn counts(executor: ExecutorKind, threads: usize) -> Counts {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world.insert(Items((0..ITEMS as u32).collect()));
    world.insert(Iteration(0));
    for i in 0..ITEMS as u32 {
        world.spawn((Hp(i),));
    }
    let batch_calls = Arc::new(AtomicUsize::new(0));
    let (slices, items) = (Arc::default(), Arc::default());
    let calls = batch_calls.clone();
    world.add_system(
        NodeBuilder::new("burn")
            .batch_processor(Counting {
                slices: Arc::clone(&slices),
                items: Arc::clone(&items),
            })
            // Holds in even iterations only.
            .run_if(move |now: &Iteration| {
                calls.fetch_add(1, Ordering::Relaxed);
                now.0.is_multiple_of(2)
            }),
    );
    let query_calls = Arc::new(AtomicUsize::new(0));
    let rows = Arc::new(AtomicUsize::new(0));
    let calls = query_calls.clone();
    let counted_rows = rows.clone();
    world.add_system(
        NodeBuilder::new("heal")
            // 1000 rows in slices of 16.
            .par_query::<&mut Hp, ()>(16, move |mut hp: sluice::Mut<Hp>| {
                hp.0 += 1;
                counted_rows.fetch_add(1, Ordering::Relaxed);
            })
            // Holds in odd iterations only.
            .run_if(move |now: &Iteration| {
                calls.fetch_add(1, Ordering::Relaxed);
                !now.0.is_multiple_of(2)
            }),
    );
    for iteration in 0..ITERATIONS {
        world.get_mut::<Iteration>().unwrap().0 = iteration as u64;
        world.run_iteration().unwrap();
    }
    let hp_total: u64 = world.query::<&Hp>().iter().map(|hp| u64::from(hp.0)).sum();
    let spawned: u64 = (0..ITEMS as u64).sum();
    assert_eq!(
        hp_total - spawned,
        (ITEMS * ITERATIONS / 2) as u64,
        "the query ran in the odd iterations only"
    );
    let load = |n: &AtomicUsize| n.load(Ordering::Relaxed);
    Counts {
        batch: (load(&batch_calls), load(&slices), load(&items)),
        query: (load(&query_calls), load(&rows)),
    }
}

/// A batch processor's and a parallel query's condition is called exactly
/// once per iteration, whether it holds or not, though each node runs in
/// many slices (1000 items in slices of 16), on every executor and thread
/// count; the nodes run in the iterations their conditions hold.
#[test]
fn a_sliced_node_calls_its_condition_once_per_iteration_on_every_executor() {
    let slices = ITEMS.div_ceil(16) * ITERATIONS / 2;
    let expected = Counts {
        batch: (ITERATIONS, slices, ITEMS * ITERATIONS / 2),
        query: (ITERATIONS, ITEMS * ITERATIONS / 2),
    };
    assert_eq!(counts(ExecutorKind::Serial, 0), expected, "serial");
    for threads in [1, 2, 4] {
        for executor in [ExecutorKind::Parallel, ExecutorKind::Adaptive] {
            assert_eq!(
                counts(executor, threads),
                expected,
                "{executor:?} on {threads} threads"
            );
        }
    }
}

/// A whole-world system's run condition is evaluated once when it is due,
/// on the world's thread, and the system is skipped when it is false.
#[test]
fn a_whole_world_system_obeys_its_condition() {
    struct Save;
    let mut world = World::new();
    world.insert(Runs::default());
    world.insert(Iteration(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    world.add_system(
        NodeBuilder::new("save")
            .world(|world: &mut World| {
                let now = world.get::<Iteration>().unwrap().0;
                world.get_mut::<Runs>().unwrap().0.push(now);
            })
            .run_if(move |now: &Iteration, save: Option<&Save>| {
                counted.fetch_add(1, Ordering::Relaxed);
                save.is_some() && now.0 != 3
            }),
    );
    for iteration in 0..6 {
        if iteration == 2 {
            world.insert(Save);
        }
        if iteration == 5 {
            world.remove::<Save>();
        }
        world.get_mut::<Iteration>().unwrap().0 = iteration;
        world.run_iteration().unwrap();
    }
    assert_eq!(world.get::<Runs>().unwrap().0, [2, 4]);
    assert_eq!(calls.load(Ordering::Relaxed), 6, "once per iteration");
}

/// A whole-world system whose condition panics fails the iteration naming
/// it, and the world goes on: the next iteration evaluates it again.
#[test]
fn a_panicking_whole_world_condition_fails_the_iteration() {
    let mut world = World::new();
    world.insert(Iteration(0));
    world.insert(Runs::default());
    world.add_system(
        NodeBuilder::new("save")
            .world(|world: &mut World| world.get_mut::<Runs>().unwrap().0.push(0))
            .run_if(|now: &Iteration| {
                assert!(now.0 != 1, "condition broke");
                true
            }),
    );
    world.run_iteration().unwrap();
    world.get_mut::<Iteration>().unwrap().0 = 1;
    let error = world.run_iteration().unwrap_err();
    let sluice::IterationError::NodePanicked(panic) = &error else {
        panic!("a node panic, got {error}");
    };
    assert_eq!(panic.nodes(), ["save"]);
    world.get_mut::<Iteration>().unwrap().0 = 2;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Runs>().unwrap().0.len(), 2);
}
