//! A failing node is all or nothing (issue 19, finding 3): a node that
//! panics contributes nothing it recorded for the boundary (commands,
//! messages, `Next<T>` values, messages through a `MessageSender`), from
//! its body or any of its slices, and the same on every executor and
//! thread count. What it wrote in place stays; the nodes that completed
//! keep everything; the next iteration runs normally.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

#[path = "support/executors.rs"]
mod executors;

use executors::executors;
use sluice::exec::{BatchProcessor, ThreadPool, for_each_slice};
use sluice::script::{ScriptKind, Scripts, SimClock};
use sluice::{
    Commands, Entity, ExecutorKind, IterationError, MessageSender, Next, NodeBuilder, Publish,
    Query, World,
};

/// The panic message prefix of planned failures (kept out of the output).
const PLANNED: &str = "planned failure";

/// Rows of the scenario, and the one that panics.
const ROWS: u32 = if cfg!(miri) { 8 } else { 256 };
const FAILING_ROW: u32 = if cfg!(miri) { 5 } else { 100 };

/// Runs of each scenario per executor and thread count.
const RUNS: usize = if cfg!(miri) { 1 } else { 50 };

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row(u32);
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spawned(u32);
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tagged;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit(u32);
#[derive(Debug, Default)]
struct Marker;
#[derive(Debug, Default, PartialEq, Eq)]
struct Level(u32);

/// Keeps planned panics out of the output; everything else is reported.
fn quiet_planned_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(PLANNED) {
                default(info);
            }
        }));
    });
}

fn world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world.spawn_batch((0..ROWS).map(|i| (Row(i),)));
    world
}

/// The failing row: sends and records first, then waits a moment (so the
/// other threads get far), then panics while `armed`.
fn fail_at_row(row: u32, armed: &AtomicBool) {
    if row == FAILING_ROW && armed.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
        panic!("{PLANNED}: row {row}");
    }
}

/// The failed iteration's error, checked to name `node`.
fn expect_failure(world: &mut World, node: &str, context: &str) {
    match world.run_iteration() {
        Err(IterationError::NodePanicked(panic)) => {
            assert_eq!(panic.node(), node, "{context}");
            assert!(
                panic.message().is_some_and(|m| m.starts_with(PLANNED)),
                "{context}: {panic}"
            );
        }
        other => panic!("{context}: expected `{node}` to fail, got {other:?}"),
    }
}

fn spawned(world: &mut World) -> Vec<u32> {
    let mut rows: Vec<u32> = world.query::<&Spawned>().iter().map(|s| s.0).collect();
    rows.sort_unstable();
    rows
}

fn hits(world: &mut World) -> Vec<u32> {
    world
        .messages_mut::<Hit>()
        .kept()
        .map(|hit| hit.0)
        .collect()
}

/// Finding 3: one system over `ROWS` entities sends a message and records
/// a spawn per row in slices of one row; a row panics after a delay. None
/// of it lands, on every executor and thread count, run after run; a node
/// ordered before it keeps its records; the next iteration lands every row.
#[test]
fn a_failing_par_for_each_lands_nothing_on_every_executor() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        for run in 0..RUNS {
            let context = format!("{executor:?} on {threads} threads, run {run}");
            let mut world = world(executor, threads);
            let armed = Arc::new(AtomicBool::new(true));
            let trip = armed.clone();
            world.add_system(NodeBuilder::new("before").system(
                |commands: Commands<'_>, hits: Publish<Hit>| {
                    hits.send(Hit(u32::MAX));
                    commands.spawn((Spawned(u32::MAX),));
                },
            ));
            world.add_system(NodeBuilder::new("fragile").after("before").system(
                move |mut rows: Query<&Row>, commands: Commands<'_>, hits: Publish<Hit>| {
                    rows.par_for_each_sliced(1, |row| {
                        hits.send(Hit(row.0));
                        commands.spawn((Spawned(row.0),));
                        fail_at_row(row.0, &trip);
                    });
                },
            ));
            expect_failure(&mut world, "fragile", &context);
            assert_eq!(hits(&mut world), [u32::MAX], "{context}: messages");
            assert_eq!(spawned(&mut world), [u32::MAX], "{context}: spawns");

            armed.store(false, Ordering::SeqCst);
            world.run_iteration().expect("the next iteration runs");
            // With no reader, a message is kept until the boundary after
            // the one it joined at: the failed iteration's are gone.
            assert_eq!(
                world.messages_mut::<Hit>().len(),
                ROWS as usize + 1,
                "{context}: every row's message, and the node before's"
            );
            assert_eq!(spawned(&mut world).len(), ROWS as usize + 2, "{context}");
        }
    }
}

/// A plain system that sends twice, records every kind of command and a
/// `Next<T>` value, then panics: none of it lands, on every executor.
#[test]
fn a_plain_system_that_records_then_panics_lands_nothing() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let context = format!("{executor:?} on {threads} threads");
        let mut world = world(executor, threads);
        world.insert(Level(1));
        let first = world.query::<Entity>().iter().next().expect("an entity");
        let armed = Arc::new(AtomicBool::new(true));
        let added_ran = Arc::new(AtomicUsize::new(0));
        let (trip, ran) = (armed.clone(), added_ran.clone());
        world.add_system(NodeBuilder::new("fragile").system(
            move |commands: Commands<'_>, hits: Publish<Hit>, mut level: Next<Level>| {
                hits.send(Hit(1));
                hits.send(Hit(2));
                commands.spawn((Spawned(0),));
                commands.insert(Marker);
                commands.entity(first).insert((Tagged,));
                let ran = ran.clone();
                commands.add_system(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
                level.set(Level(2));
                if trip.load(Ordering::SeqCst) {
                    panic!("{PLANNED}: after recording");
                }
            },
        ));
        expect_failure(&mut world, "fragile", &context);
        assert_eq!(hits(&mut world), [] as [u32; 0], "{context}: messages");
        assert_eq!(spawned(&mut world), [] as [u32; 0], "{context}: spawns");
        assert!(world.get::<Marker>().is_none(), "{context}: insert");
        assert_eq!(world.query::<&Tagged>().iter().count(), 0, "{context}");
        assert_eq!(world.get::<Level>(), Some(&Level(1)), "{context}: Next");
        // A registration is planned during the next iteration and runs in
        // the one after: of the three healthy iterations' registrations,
        // the first runs once; the failed iteration's would have run twice.
        armed.store(false, Ordering::SeqCst);
        for _ in 0..3 {
            world.run_iteration().expect("runs");
        }
        assert_eq!(world.get::<Level>(), Some(&Level(2)), "{context}");
        assert!(world.get::<Marker>().is_some(), "{context}");
        assert_eq!(
            added_ran.load(Ordering::SeqCst),
            1,
            "{context}: only the healthy iterations' registrations ran"
        );
    }
}

/// Commands and messages recorded in the slices of a failing system, by
/// `par_for_each` (entity commands) and by `exec::for_each_slice` called
/// directly (spawns and messages): none land, on every executor.
#[test]
fn commands_from_the_slices_of_a_failing_system_land_nothing() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        for run in 0..RUNS.min(10) {
            for name in ["tagger", "slicer"] {
                let context = format!("{executor:?} on {threads} threads, run {run}, {name}");
                let mut world = world(executor, threads);
                let armed = Arc::new(AtomicBool::new(true));
                let trip = armed.clone();
                if name == "tagger" {
                    world.add_system(NodeBuilder::new(name).system(
                        move |mut rows: Query<(Entity, &Row)>, commands: Commands<'_>| {
                            rows.par_for_each_sliced(3, |(entity, row)| {
                                commands.entity(entity).insert((Tagged,));
                                fail_at_row(row.0, &trip);
                            });
                        },
                    ));
                } else {
                    world.add_system(NodeBuilder::new(name).system(
                        move |commands: Commands<'_>, hits: Publish<Hit>| {
                            for_each_slice(ROWS as usize, &|slices| {
                                for row in slices {
                                    let row = row as u32;
                                    commands.spawn((Spawned(row),));
                                    hits.send(Hit(row));
                                    fail_at_row(row, &trip);
                                }
                            });
                        },
                    ));
                }
                expect_failure(&mut world, name, &context);
                assert_eq!(world.query::<&Tagged>().iter().count(), 0, "{context}");
                assert_eq!(spawned(&mut world), [] as [u32; 0], "{context}");
                assert_eq!(hits(&mut world), [] as [u32; 0], "{context}");

                armed.store(false, Ordering::SeqCst);
                world.run_iteration().expect("runs");
                let (tagged, landed) = if name == "tagger" {
                    (ROWS as usize, 0)
                } else {
                    (0, ROWS as usize)
                };
                assert_eq!(world.query::<&Tagged>().iter().count(), tagged, "{context}");
                // In row order, as from a sequential loop, on every executor.
                let order: Vec<u32> = world.query::<&Spawned>().iter().map(|s| s.0).collect();
                assert_eq!(order, (0..landed as u32).collect::<Vec<_>>(), "{context}");
                assert_eq!(hits(&mut world), order, "{context}");
            }
        }
    }
}

/// A parallel query node and a batch processor, both sending through a
/// `MessageSender` of their world from their slices: a failing one's
/// messages are not delivered, on every executor; a healthy one's are.
#[test]
fn par_query_nodes_and_batch_processors_that_fail_deliver_nothing() {
    quiet_planned_panics();

    struct Sender(MessageSender<Hit>, Arc<AtomicBool>);
    impl BatchProcessor for Sender {
        type Buffer = Vec<u32>;
        type Item = u32;
        const BATCH_SIZE: usize = 1;
        fn items(buffer: &Vec<u32>) -> &[u32] {
            buffer
        }
        fn before_update(&mut self, buffer: &mut Vec<u32>) {
            buffer.clear();
            buffer.extend(0..ROWS);
        }
        fn process_batch(&self, _start: usize, batch: &[u32]) {
            for &row in batch {
                self.0.send(Hit(row)).expect("room in the queue");
                fail_at_row(row, &self.1);
            }
        }
    }

    for (executor, threads) in executors() {
        for run in 0..RUNS.min(10) {
            let context = format!("{executor:?} on {threads} threads, run {run}");
            for batch in [false, true] {
                let mut world = world(executor, threads);
                let sender = world.sender_with_capacity::<Hit>(4 * ROWS as usize);
                let armed = Arc::new(AtomicBool::new(true));
                let name = if batch { "batch" } else { "par query" };
                if batch {
                    world.insert(Vec::<u32>::new());
                    world.add_batch_processor(
                        NodeBuilder::new(name),
                        Sender(sender.clone(), armed.clone()),
                    );
                } else {
                    let (sender, trip) = (sender.clone(), armed.clone());
                    world.add_par_query::<&Row, ()>(NodeBuilder::new(name), 1, move |row| {
                        sender.send(Hit(row.0)).expect("room in the queue");
                        fail_at_row(row.0, &trip);
                    });
                }
                expect_failure(&mut world, name, &format!("{context}, {name}"));
                assert_eq!(hits(&mut world), [] as [u32; 0], "{context}, {name}");
                // From outside a node, the sender's messages land as ever.
                sender.send(Hit(u32::MAX)).expect("room");
                armed.store(false, Ordering::SeqCst);
                world.run_iteration().expect("runs");
                let mut landed = hits(&mut world);
                landed.sort_unstable();
                assert_eq!(landed.len(), ROWS as usize + 1, "{context}, {name}");
                assert_eq!(landed.last(), Some(&u32::MAX), "{context}, {name}");
            }
        }
    }
}

/// Scripts gathered by a failing system record through their view: none of
/// it lands.
#[test]
fn script_records_of_a_failing_gather_land_nothing() {
    quiet_planned_panics();
    struct Spawner;
    impl ScriptKind for Spawner {
        type View<'v> = Commands<'v>;
        type Intent = ();
    }
    for (executor, threads) in executors() {
        let context = format!("{executor:?} on {threads} threads");
        let mut world = world(executor, threads);
        world.insert(SimClock::new());
        let mut scripts = Scripts::<Spawner>::new();
        for who in 0..ROWS {
            scripts.start(format!("spawner {who}"), move |cx| async move {
                loop {
                    cx.view(|commands| commands.spawn((Spawned(who),)));
                    cx.next_tick().await;
                }
            });
        }
        world.insert(scripts);
        let armed = Arc::new(AtomicBool::new(true));
        let trip = armed.clone();
        world.add_system(NodeBuilder::new("gather").system(
            move |scripts: &mut Scripts<Spawner>, clock: &SimClock, commands: Commands<'_>| {
                scripts.gather(clock, &commands);
                if trip.load(Ordering::SeqCst) {
                    panic!("{PLANNED}: after the gather");
                }
            },
        ));
        expect_failure(&mut world, "gather", &context);
        assert_eq!(spawned(&mut world), [] as [u32; 0], "{context}");
        armed.store(false, Ordering::SeqCst);
        world.run_iteration().expect("runs");
        assert_eq!(spawned(&mut world).len(), ROWS as usize, "{context}");
    }
}

/// Two unordered nodes that both fail: whichever ran contributes nothing,
/// and the report names the first failure and lists every failed node.
#[test]
fn every_failed_node_contributes_nothing() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        for run in 0..RUNS.min(10) {
            let context = format!("{executor:?} on {threads} threads, run {run}");
            let mut world = world(executor, threads);
            let started = Arc::new(Mutex::new(Vec::new()));
            for name in ["left", "right"] {
                let started = started.clone();
                world.add_system(NodeBuilder::new(name).system(
                    move |mut rows: Query<&Row>, hits: Publish<Hit>| {
                        started.lock().unwrap().push(name);
                        rows.par_for_each_sliced(7, |row| hits.send(Hit(row.0)));
                        std::thread::sleep(Duration::from_millis(1));
                        panic!("{PLANNED}: {name}");
                    },
                ));
            }
            let Err(IterationError::NodePanicked(panic)) = world.run_iteration() else {
                panic!("{context}: a node fails");
            };
            let started = started.lock().unwrap().clone();
            assert_eq!(
                panic.nodes().first().map(String::as_str),
                Some(panic.node())
            );
            let mut failed: Vec<&str> = panic.nodes().iter().map(String::as_str).collect();
            failed.sort_unstable();
            let mut expected = started.clone();
            expected.sort_unstable();
            assert_eq!(failed, expected, "{context}: every started node failed");
            assert_eq!(hits(&mut world), [] as [u32; 0], "{context}");
        }
    }
}

/// Panics when dropped while `armed`.
struct Bomb(Arc<AtomicBool>);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0.swap(false, Ordering::SeqCst) {
            panic!("{PLANNED}: a dropped bomb");
        }
    }
}

/// A failed node's command whose value panics when dropped unlanded is
/// reported as a discard naming the node; everything else it recorded is
/// dropped all the same, and what other nodes recorded lands.
#[test]
fn a_panicking_drop_of_a_discarded_command_is_reported() {
    quiet_planned_panics();
    let mut world = world(ExecutorKind::Serial, 1);
    let fuse = Arc::new(AtomicBool::new(true));
    let bomb = fuse.clone();
    world.add_system(NodeBuilder::new("steady").system(|commands: Commands<'_>| {
        commands.spawn((Spawned(7),));
    }));
    world.add_system(NodeBuilder::new("fragile").after("steady").system(
        move |commands: Commands<'_>| {
            commands.spawn((Spawned(1),));
            commands.insert(Bomb(bomb.clone()));
            commands.spawn((Spawned(2),));
            panic!("{PLANNED}: after recording a bomb");
        },
    ));
    let Err(IterationError::NodePanicked(panic)) = world.run_iteration() else {
        panic!("fragile fails");
    };
    assert_eq!(panic.node(), "fragile");
    let failures = panic.boundary_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let sluice::BoundaryStep::Discard { node, what } = failures[0].step() else {
        panic!("a discard: {:?}", failures[0]);
    };
    assert_eq!(node, "fragile");
    assert!(what.contains("Bomb"), "{what}");
    assert!(!fuse.load(Ordering::SeqCst), "the bomb was dropped");
    assert!(world.get::<Bomb>().is_none());
    assert_eq!(spawned(&mut world), [7], "only the steady node's spawn");
}
