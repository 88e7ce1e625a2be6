//! Model-checking a user's frame (`sluice::model`, the guide's
//! `docs/guide/11-loom.md`): its worked examples, each buggy version caught by
//! loom and each fixed version passing, plus the bad inputs.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_user`
//! (add `-- --nocapture` to see each failure's interleaving and each
//! model's size).

#![cfg(loom)]

use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use sluice::exec::{ClearBuffer, ThreadPoolBuilder};
use sluice::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use sluice::sync::{Arc, UnsafeCell, thread};
use sluice::{BatchProcessor, IterationError, NodeBuilder, Query, World};
use sluice_collections::{AppendArena, mpsc};

/// Runs `model`, which must fail, and returns what it failed with (loom's
/// message or the model's own, then the interleaving sluice printed).
fn expect_caught(model: impl FnOnce()) -> String {
    let payload =
        panic::catch_unwind(AssertUnwindSafe(model)).expect_err("loom no longer catches this bug");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    // What a user sees (with `--nocapture`): the failure and its interleaving.
    println!("{message}");
    message
}

// -- The lost update ------------------------------------------------------

struct Counter(AtomicU32);

/// The bug: a load, then a store. Two of these with no edge between them
/// (both take `&Counter`) can both read the same value.
fn add_hit(counter: &Counter) {
    let seen = counter.0.load(Ordering::SeqCst);
    sluice::model::note(format_args!("read {seen}"));
    counter.0.store(seen + 1, Ordering::SeqCst);
}

/// The fix: one atomic read-modify-write.
fn add_hit_fixed(counter: &Counter) {
    counter.0.fetch_add(1, Ordering::SeqCst);
}

fn two_hits(add: fn(&Counter)) -> Result<(), IterationError> {
    let mut world = World::new();
    world.insert(Counter(AtomicU32::new(0)));
    world.add_system(NodeBuilder::new("sword").system(add));
    world.add_system(NodeBuilder::new("arrow").system(add));
    world.run_iteration()?;
    let hits = world.get::<Counter>().unwrap().0.load(Ordering::SeqCst);
    assert_eq!(hits, 2, "lost update");
    Ok(())
}

#[test]
fn lost_update_is_caught() {
    let message = expect_caught(|| sluice::model(|| two_hits(add_hit)));
    assert!(message.contains("lost update"), "{message}");
    // The interleaving: both systems read 0, on different threads.
    assert!(message.contains("start sword") && message.contains("start arrow"));
    assert_eq!(message.matches("note: read 0").count(), 2, "{message}");
}

#[test]
fn fetch_add_passes() {
    sluice::model(|| two_hits(add_hit_fixed));
}

/// Ordered nodes never overlap: the same load-then-store, but both take
/// `&mut Counter`, so the plan orders them and no interleaving loses one.
#[test]
fn ordered_nodes_never_overlap() {
    fn add_hit_gated(counter: &mut Counter) {
        add_hit(counter);
    }
    sluice::model(|| {
        let mut world = World::new();
        world.insert(Counter(AtomicU32::new(0)));
        world.add_system(NodeBuilder::new("sword").system(add_hit_gated));
        world.add_system(NodeBuilder::new("arrow").system(add_hit_gated));
        world.run_iteration()?;
        assert_eq!(world.get::<Counter>().unwrap().0.load(Ordering::SeqCst), 2);
        Ok::<(), IterationError>(())
    });
}

// -- The overlapping slice writes -----------------------------------------

#[derive(Default)]
struct Damage {
    hits: Vec<u32>,
    total: u32,
}

impl ClearBuffer for Damage {
    fn clear_buffer(&mut self) {
        self.hits.clear();
    }
}

/// Doubles each hit into a slot of its own, then sums the slots.
struct Doubler {
    slots: Vec<UnsafeCell<u32>>,
    /// The bug: every slice adds into slot 0, which the other slice also
    /// writes (right when the slices run one after the other, a data race
    /// when they overlap).
    shared_slot: bool,
}

// SAFETY:
// - Each slot is written by the one slice that owns it and read by
//   `after_update`, after every slice. With `shared_slot` (the bug, only in
//   this model) both slices write slot 0: loom stops the first overlap.
unsafe impl Sync for Doubler {}

impl BatchProcessor for Doubler {
    type Buffer = Damage;
    type Item = u32;
    const BATCH_SIZE: usize = 1;

    fn items(buffer: &Damage) -> &[u32] {
        &buffer.hits
    }

    fn process_batch(&self, start: usize, batch: &[u32]) {
        let (slot, doubled) = (&self.slots[start], batch[0] * 2);
        if self.shared_slot {
            // SAFETY: none (see `impl Sync`): loom reports the overlap.
            self.slots[0].with_mut(|value| unsafe { *value += doubled });
        } else {
            // SAFETY:
            // - Slot `start` is this slice's alone.
            slot.with_mut(|value| unsafe { *value = doubled });
        }
    }

    fn after_update(&mut self, buffer: &mut Damage) {
        buffer.total = self.slots.iter_mut().map(|slot| *slot.get_mut()).sum();
        buffer.hits.clear();
    }
}

fn doubled(shared_slot: bool) -> Result<(), IterationError> {
    let mut world = World::new();
    world.insert(Damage {
        hits: vec![1, 2],
        total: 0,
    });
    let slots = (0..2).map(|_| UnsafeCell::new(0)).collect();
    world.add_batch_processor(NodeBuilder::new("double"), Doubler { slots, shared_slot });
    world.run_iteration()?;
    assert_eq!(world.get::<Damage>().unwrap().total, 6);
    Ok(())
}

#[test]
fn overlapping_slice_writes_are_caught() {
    let message = expect_caught(|| sluice::model(|| doubled(true)));
    assert!(message.contains("Causality violation"), "{message}");
    assert!(message.contains("start slice 0..1") && message.contains("start slice 1..2"));
}

/// The fix passes, at the default bound.
#[test]
fn own_slot_per_slice_passes() {
    sluice::model(|| doubled(false));
}

// -- Parallel-query slices ------------------------------------------------

struct Pos(u32);

/// The last row a parallel query saw: one cell for every row (the bug).
struct LastSeen(UnsafeCell<u32>);

// SAFETY:
// - None: the rows' slices write the cell unsynchronized, on purpose. The
//   type exists only in this model, where loom stops the first such write
//   that overlaps another (a causality violation), before any harm.
unsafe impl Sync for LastSeen {}

/// Rows of one parallel query run as slices on both threads: a body that
/// writes one cell for every row races with itself.
#[test]
fn par_query_slices_overlap() {
    let message = expect_caught(|| {
        sluice::model(|| {
            let last = Arc::new(LastSeen(UnsafeCell::new(0)));
            let mut world = World::new();
            world.spawn((Pos(1),));
            world.spawn((Pos(2),));
            let seen = last.clone();
            world.add_par_query::<&Pos, ()>(NodeBuilder::new("track"), 1, move |pos: &Pos| {
                // SAFETY: none (see `LastSeen`): loom reports the overlap.
                seen.0.with_mut(|value| unsafe { *value = pos.0 });
            });
            world.run_iteration()
        });
    });
    assert!(message.contains("Causality violation"), "{message}");
}

// -- What else the default exploration catches ----------------------------
//
// The default preempts at the user's operations and where sluice's machinery
// blocks, not inside the machinery (`sluice::model`, "What is explored").
// Each bug below needs the executor to hand work to a second (or third)
// thread at the right moment; each must stay caught.

/// A cell every writer takes `&` of: a race however it is written.
struct Shared(UnsafeCell<u32>);

// SAFETY:
// - None: the writers below race on purpose, in models only, where loom
//   stops the first unordered pair of accesses before any harm.
unsafe impl Sync for Shared {}

impl Shared {
    fn add(&self) {
        // SAFETY: none (see `impl Sync`): loom reports the overlap.
        self.0.with_mut(|value| unsafe { *value += 1 });
    }
}

/// Three systems on three threads lose an update.
#[test]
fn lost_update_among_three_threads_is_caught() {
    let message = expect_caught(|| {
        sluice::model::Builder::new().threads(3).check(|| {
            let mut world = World::new();
            world.insert(Counter(AtomicU32::new(0)));
            for name in ["sword", "arrow", "spell"] {
                world.add_system(NodeBuilder::new(name).system(add_hit));
            }
            world.run_iteration()?;
            let hits = world.get::<Counter>().unwrap().0.load(Ordering::SeqCst);
            assert_eq!(hits, 3, "lost update");
            Ok::<(), IterationError>(())
        });
    });
    assert!(message.contains("lost update"), "{message}");
}

/// A system and a slice of an unordered batch node write one cell.
#[test]
fn a_system_racing_a_batch_slice_is_caught() {
    /// Slice 0 writes the shared cell.
    struct Touch(Arc<Shared>);
    impl BatchProcessor for Touch {
        type Buffer = Damage;
        type Item = u32;
        const BATCH_SIZE: usize = 1;
        fn items(buffer: &Damage) -> &[u32] {
            &buffer.hits
        }
        fn process_batch(&self, start: usize, _: &[u32]) {
            if start == 0 {
                self.0.add();
            }
        }
    }
    let message = expect_caught(|| {
        sluice::model(|| {
            let shared = Arc::new(Shared(UnsafeCell::new(0)));
            let mut world = World::new();
            world.insert(Damage {
                hits: vec![1, 2],
                total: 0,
            });
            world.add_batch_processor(NodeBuilder::new("touch"), Touch(shared.clone()));
            world.add_system(NodeBuilder::new("poke").system(move || shared.add()));
            world.run_iteration()
        });
    });
    assert!(message.contains("Causality violation"), "{message}");
}

/// `Query::par_for_each` inside a system: its slices race on one cell.
#[test]
fn par_for_each_slices_overlap() {
    let message = expect_caught(|| {
        sluice::model(|| {
            let shared = Arc::new(Shared(UnsafeCell::new(0)));
            let mut world = World::new();
            world.spawn((Pos(1),));
            world.spawn((Pos(2),));
            world.add_system(
                NodeBuilder::new("walk").system(move |mut query: Query<&Pos>| {
                    query.par_for_each_sliced(1, |_| shared.add());
                }),
            );
            world.run_iteration()
        });
    });
    assert!(message.contains("Causality violation"), "{message}");
}

/// A flag stored `Relaxed` publishes nothing: the reader's read of the data
/// races with the writer's write (loom explores the loads' values too).
#[test]
fn relaxed_publication_is_caught() {
    struct Mailbox {
        letter: UnsafeCell<u32>,
        sent: AtomicBool,
    }
    // SAFETY:
    // - None: the letter is published with a `Relaxed` flag, the bug this
    //   model exists to catch (loom stops the racing read).
    unsafe impl Sync for Mailbox {}
    let message = expect_caught(|| {
        sluice::model(|| {
            let mut world = World::new();
            world.insert(Mailbox {
                letter: UnsafeCell::new(0),
                sent: AtomicBool::new(false),
            });
            world.add_system(NodeBuilder::new("send").system(|mailbox: &Mailbox| {
                // SAFETY: none (see `impl Sync`).
                mailbox.letter.with_mut(|letter| unsafe { *letter = 7 });
                mailbox.sent.store(true, Ordering::Relaxed);
            }));
            world.add_system(NodeBuilder::new("read").system(|mailbox: &Mailbox| {
                if mailbox.sent.load(Ordering::Relaxed) {
                    // SAFETY: none (see `impl Sync`).
                    let letter = mailbox.letter.with(|letter| unsafe { *letter });
                    assert_eq!(letter, 7);
                }
            }));
            world.run_iteration()
        });
    });
    assert!(message.contains("Causality violation"), "{message}");
}

/// A loose task racing a system: loom's report comes out of the task, which
/// async-task would hand to a `Task` nobody awaits; the model fails anyway.
#[test]
fn a_loose_task_racing_a_system_is_caught() {
    let message = expect_caught(|| {
        sluice::model(|| {
            let shared = Arc::new(Shared(UnsafeCell::new(0)));
            let mut world = World::new();
            let in_task = shared.clone();
            let _task = world.spawn_prioritized_task(async move { in_task.add() });
            world.add_system(NodeBuilder::new("poke").system(move || shared.add()));
            // A second node: the run wakes the worker for it, which then
            // polls the task beside "poke".
            world.add_system(NodeBuilder::new("idle").system(|| {}));
            world.run_iteration()
        });
    });
    assert!(message.contains("Causality violation"), "{message}");
}

// -- Cost ------------------------------------------------------------------

/// A world of a handful of systems (an unordered pair, a chain through a
/// gate) and a batch node explores in well under a second at the default
/// bound: 76 executions. The ceiling is a regression guard (exploring the
/// machinery too takes hundreds of times more executions, see below).
#[test]
fn a_handful_of_systems_explores_in_seconds() {
    struct Armour(AtomicU32);
    let started = std::time::Instant::now();
    let executions = sluice::model::Builder::new().explore(|| {
        let mut world = World::new();
        world.insert(Counter(AtomicU32::new(0)));
        world.insert(Armour(AtomicU32::new(0)));
        world.insert(Damage {
            hits: vec![1, 2],
            total: 0,
        });
        world.add_system(NodeBuilder::new("sword").system(add_hit_fixed));
        world.add_system(NodeBuilder::new("arrow").system(add_hit_fixed));
        world.add_system(NodeBuilder::new("wear").system(|armour: &Armour| {
            armour.0.fetch_add(1, Ordering::SeqCst);
        }));
        world.add_system(NodeBuilder::new("mend").system(|armour: &mut Armour| {
            armour.0.store(0, Ordering::SeqCst);
        }));
        let slots = (0..2).map(|_| UnsafeCell::new(0)).collect();
        world.add_batch_processor(
            NodeBuilder::new("double"),
            Doubler {
                slots,
                shared_slot: false,
            },
        );
        world.run_iteration()?;
        assert_eq!(world.get::<Counter>().unwrap().0.load(Ordering::SeqCst), 2);
        assert_eq!(world.get::<Damage>().unwrap().total, 6);
        Ok::<(), IterationError>(())
    });
    println!(
        "a handful of systems: {executions} executions in {:?}",
        started.elapsed()
    );
    assert!(executions < 5_000, "{executions} executions");
}

/// `explore_machinery(true)` preempts inside sluice too: the same two
/// systems explore many times more executions, and the lost update is
/// still caught.
#[test]
fn exploring_the_machinery_costs_more() {
    let coarse = sluice::model::Builder::new().explore(|| two_hits(add_hit_fixed));
    let fine = sluice::model::Builder::new()
        .explore_machinery(true)
        .explore(|| two_hits(add_hit_fixed));
    println!("two systems: {coarse} executions, {fine} with the machinery explored");
    assert!(fine > 10 * coarse, "{fine} vs {coarse}");
    let message = expect_caught(|| {
        sluice::model::Builder::new()
            .explore_machinery(true)
            .check(|| two_hits(add_hit))
    });
    assert!(message.contains("lost update"), "{message}");
}

// -- The collections in a user's own model --------------------------------

/// Two model threads append to one arena and push to one queue; every value
/// arrives once.
#[test]
fn collections_in_a_users_model() {
    sluice::model(|| {
        let arena = Arc::new(AppendArena::with_capacity(2));
        let (tx, mut rx) = mpsc::bounded::<u32>(2);
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (arena, tx) = (arena.clone(), tx.clone());
                thread::spawn(move || {
                    arena.push(i).unwrap();
                    tx.push(i).unwrap();
                })
            })
            .collect();
        for handle in threads {
            handle.join().unwrap();
        }
        let mut got = [rx.pop().unwrap(), rx.pop().unwrap()];
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
        assert_eq!(arena.len(), 2);
    });
}

// -- Bad input ------------------------------------------------------------

/// A world (or pool) built under `--cfg loom` outside `sluice::model` is
/// refused with a message naming the fix, not a failure inside loom.
#[test]
fn world_outside_a_model_is_refused() {
    let error = ThreadPoolBuilder::new().build().unwrap_err();
    assert!(error.to_string().contains("sluice::model"), "{error}");
    let message = expect_caught(|| drop(World::new()));
    assert!(
        message.starts_with("World::new: sluice was built with --cfg loom"),
        "{message}"
    );
    assert!(
        message.contains("inside `sluice::model(|| ..)`"),
        "{message}"
    );
}

/// A model whose iteration never finishes (a system spinning on a flag
/// that a system ordered after it sets) is stopped by loom with a message,
/// not left to hang.
#[test]
fn a_model_that_never_finishes_is_stopped() {
    struct Flag(AtomicBool);
    let message = expect_caught(|| {
        sluice::model::Builder::new().max_branches(2_000).check(|| {
            let mut world = World::new();
            world.insert(Flag(AtomicBool::new(false)));
            world.add_system(NodeBuilder::new("wait").system(|flag: &Flag| {
                while !flag.0.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            }));
            world.add_system(
                NodeBuilder::new("set")
                    .after("wait")
                    .system(|flag: &Flag| flag.0.store(true, Ordering::Release)),
            );
            world.run_iteration()
        });
    });
    assert!(message.contains("maximum number of branches"), "{message}");
}

/// A node that starts an OS thread (`std::thread`, not
/// `sluice::sync::thread`): the thread runs for real, outside loom, which
/// neither explores it nor sees its accesses. Plain work on it is fine;
/// a loom primitive used on it panics there with loom's message, which the
/// node's `join` hands on, so the model fails saying so.
#[test]
fn a_node_starting_an_os_thread() {
    sluice::model(|| {
        let mut world = World::new();
        world.insert(Counter(AtomicU32::new(0)));
        world.add_system(NodeBuilder::new("offload").system(|counter: &Counter| {
            let sum = std::thread::spawn(|| (1..=4).sum::<u32>()).join().unwrap();
            counter.0.store(sum, Ordering::SeqCst);
        }));
        world.run_iteration()?;
        assert_eq!(world.get::<Counter>().unwrap().0.load(Ordering::SeqCst), 10);
        Ok::<(), IterationError>(())
    });
    let message = expect_caught(|| {
        sluice::model(|| {
            let mut world = World::new();
            world.add_system(NodeBuilder::new("offload").system(|| {
                let os_thread = std::thread::spawn(|| AtomicU32::new(0).load(Ordering::SeqCst));
                if let Err(payload) = os_thread.join() {
                    panic::resume_unwind(payload);
                }
            }));
            world.run_iteration()
        });
    });
    assert!(message.contains("offload"), "{message}");
    assert!(
        message.contains("cannot access Loom execution state from outside a Loom model"),
        "{message}"
    );
}

/// A node blocked outside loom (joining an OS thread that sleeps, here; one
/// that waited for a model thread would never return) stops every model
/// thread, since loom runs them all on one OS thread: the model says so on
/// stderr and in its failure report instead of hanging without a word.
#[test]
fn a_stalled_model_says_so() {
    let message = expect_caught(|| {
        sluice::model::Builder::new()
            .stall_warning(Duration::from_millis(50))
            .check(|| {
                let mut world = World::new();
                world.add_system(NodeBuilder::new("block").system(|| {
                    let sleeper =
                        std::thread::spawn(|| std::thread::sleep(Duration::from_millis(400)));
                    sleeper.join().unwrap();
                    panic!("the report shows what the watchdog said");
                }));
                world.run_iteration()
            });
    });
    assert!(message.contains("has not moved for"), "{message}");
    assert!(message.contains("std::thread"), "{message}");
}
