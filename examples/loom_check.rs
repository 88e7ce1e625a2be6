//! The guide's chapter "Checking your frame with loom" (`docs/guide/11-loom.md`), runnable:
//! `cargo run --example loom_check`.
//!
//! Examples build without `--cfg loom`, so here `sluice::model` runs each
//! closure once, on real threads: the program shows that (one execution
//! per model), runs the chapter's fixed frame as a model, and shows why an
//! ordinary run is no proof: the buggy load-and-store adds up right when
//! the nodes happen not to overlap. Under
//! `RUSTFLAGS="--cfg loom" cargo test --release`, the same models explore
//! every interleaving (see `runtime/tests/loom_user.rs`).

use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use sluice::model::Builder;
use sluice::sync::atomic::{AtomicU32, Ordering};
use sluice::sync::{Arc, thread};
use sluice::{ExecutorKind, IterationError, NodeBuilder, World};
use sluice_collections::{AppendArena, mpsc};

/// How many times the first model's closure ran (a std atomic: loom's
/// cannot live in a `static`).
static MODEL_RUNS: StdAtomicUsize = StdAtomicUsize::new(0);

/// A counter two systems add hits to, both with shared access.
struct Counter(AtomicU32);

/// The bug: a load, then a store; two of these unordered lose an update.
fn add_hit(counter: &Counter) {
    let seen = counter.0.load(Ordering::SeqCst);
    sluice::model::note(format_args!("read {seen}"));
    counter.0.store(seen + 1, Ordering::SeqCst);
}

/// The fix: one atomic read-modify-write.
fn add_hit_fixed(counter: &Counter) {
    counter.0.fetch_add(1, Ordering::SeqCst);
}

/// Two unordered systems each add a hit; returns the count.
fn two_hits(add: fn(&Counter), executor: ExecutorKind) -> Result<u32, IterationError> {
    let mut world = World::new();
    world.set_executor(executor);
    world.insert(Counter(AtomicU32::new(0)));
    world.add_system(NodeBuilder::new("sword").system(add));
    world.add_system(NodeBuilder::new("arrow").system(add));
    world.run_iteration()?;
    Ok(world
        .get::<Counter>()
        .expect("inserted")
        .0
        .load(Ordering::SeqCst))
}

fn main() {
    // Outside loom a model runs its closure exactly once. (The closure is
    // `'static`: loom re-runs it, so it captures nothing borrowed.)
    sluice::model(|| {
        MODEL_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let runs = MODEL_RUNS.load(std::sync::atomic::Ordering::SeqCst);
    println!(
        "sluice::model ran its closure {runs} time(s) (loom: {})",
        cfg!(loom)
    );
    if !cfg!(loom) {
        assert_eq!(runs, 1);
    }

    // `Builder::explore` says how many executions a model explored: the
    // size to keep small under loom, 1 here.
    let explored = Builder::new().explore(|| -> Result<(), IterationError> {
        let hits = two_hits(add_hit_fixed, ExecutorKind::Parallel)?;
        assert_eq!(hits, 2, "lost update");
        Ok(())
    });
    println!(
        "the fixed frame passed; {explored} execution(s) explored at bound {}",
        Builder::new().bound()
    );
    if !cfg!(loom) {
        assert_eq!(explored, 1);
    }

    // Why a model and not a plain run: run one after the other, the buggy
    // nodes add up right. Only loom shows them overlapping.
    sluice::model(|| -> Result<(), IterationError> {
        let hits = two_hits(add_hit, ExecutorKind::Serial)?;
        println!("the buggy frame run serially counts {hits} hits: the bug stays hidden");
        assert_eq!(hits, 2);
        Ok(())
    });

    // The collections in a model of your own, between `sluice::sync` threads.
    sluice::model(|| {
        let arena = Arc::new(AppendArena::with_capacity(2));
        let (tx, mut rx) = mpsc::bounded::<u32>(2);
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (arena, tx) = (Arc::clone(&arena), tx.clone());
                thread::spawn(move || {
                    arena.push(i).expect("room for two");
                    tx.push(i).expect("room for two");
                })
            })
            .collect();
        for handle in threads {
            handle.join().expect("the thread ran");
        }
        let mut got = [rx.pop().expect("first"), rx.pop().expect("second")];
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
        assert_eq!(arena.len(), 2);
    });
    println!("two threads appended to one arena and pushed to one queue: every value arrived once");
}
