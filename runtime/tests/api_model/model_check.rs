//! Issue 22's operations in the API model: `sluice::model` and its
//! `Builder` outside loom.
//!
//! The model knows what the documentation promises without `--cfg loom`:
//! a model runs its closure once, on real threads, whatever the builder's
//! bound, thread count, `explore_machinery` and `stall_warning` say; `Builder::explore`
//! returns 1; a world built inside the closure (here on the fuzzed
//! world's shared pool) runs its iteration normally; a closure's `Err`
//! comes out of `check` as a panic carrying the error's message. The
//! fuzzed worlds are not touched.

use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::model::Builder;
use sluice::sync::Arc;
use sluice::sync::atomic::{AtomicUsize, Ordering};
use sluice::{NodeBuilder, ThreadPool, World};

use super::{Op, check};

/// One model run: the builder's settings, how many systems the model's
/// world adds one from, and whether the closure then fails.
#[derive(Debug, Clone)]
pub(super) struct ModelOp {
    bound: usize,
    threads: usize,
    explore_machinery: bool,
    systems: u8,
    fail: bool,
    /// `check` (its panic caught) rather than `explore`.
    through_check: bool,
    /// `stall_warning`, in milliseconds.
    stall_ms: u64,
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    let settings = (0usize..4, 0usize..4, any::<bool>(), 0u64..20_000);
    let body = (0u8..4, any::<bool>(), any::<bool>());
    (settings, body).prop_map(
        |((bound, threads, explore_machinery, stall_ms), (systems, fail, through_check))| {
            Op::ModelCheck(ModelOp {
                bound,
                threads,
                explore_machinery,
                systems,
                fail,
                through_check,
                stall_ms,
            })
        },
    )
}

/// The counter the model's systems add to.
struct Hits(AtomicUsize);

/// Runs the model on `pool` and checks what came out.
pub(super) fn apply(op: &ModelOp, pool: &ThreadPool) -> Result<(), TestCaseError> {
    let runs = Arc::new(AtomicUsize::new(0));
    let (closure_runs, pool, systems, fail) = (runs.clone(), pool.clone(), op.systems, op.fail);
    let closure = move || -> Result<(), String> {
        closure_runs.fetch_add(1, Ordering::SeqCst);
        let mut world = World::with_pool(pool.clone());
        world.insert(Hits(AtomicUsize::new(0)));
        for i in 0..systems {
            world.add_system(NodeBuilder::new(format!("hit {i}")).system(|hits: &Hits| {
                hits.0.fetch_add(1, Ordering::SeqCst);
            }));
        }
        world.run_iteration().map_err(|error| error.to_string())?;
        let hits = world
            .get::<Hits>()
            .expect("inserted")
            .0
            .load(Ordering::SeqCst);
        if hits != usize::from(systems) {
            return Err(format!("{hits} hits from {systems} systems"));
        }
        if fail {
            return Err("the model's own failure".to_owned());
        }
        Ok(())
    };
    let builder = Builder::new()
        .preemption_bound(op.bound)
        .threads(op.threads)
        .explore_machinery(op.explore_machinery)
        .stall_warning(Duration::from_millis(op.stall_ms));
    check(builder.bound() == op.bound, || {
        format!(
            "bound {} after preemption_bound({})",
            builder.bound(),
            op.bound
        )
    })?;
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        if op.through_check {
            builder.check(closure);
            1
        } else {
            builder.explore(closure)
        }
    }));
    let ran = runs.load(Ordering::SeqCst);
    check(ran == 1, || {
        format!("the closure ran {ran} times, not once")
    })?;
    match (outcome, op.fail) {
        (Ok(executions), false) => check(executions == 1, || {
            format!("explore returned {executions} without loom, not 1")
        }),
        (Ok(_), true) => Err(TestCaseError::fail("a failing closure passed")),
        (Err(payload), fail) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            check(fail && message.contains("the model's own failure"), || {
                format!("the model panicked with {message:?}")
            })
        }
    }
}
