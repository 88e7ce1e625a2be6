//! `Query::par_for_each_init` in the API model (issue 23): a system that
//! bumps every `P` by `k` in slices of `rows` rows, through per-thread
//! state.
//!
//! The model knows what the documentation promises: the rows change as a
//! plain bump would (serial equivalence); every row is served by exactly
//! one state; a state is made only by a thread that runs a slice, so none
//! when no row matches, and at most one per thread of the pool in a call.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{NodeBuilder, NodeSpec, Query, World};

use super::{P, check};

/// What each run of an init system reported: `(its serial, states made,
/// rows served by them)`.
#[derive(Debug, Default)]
pub(super) struct InitLog(Vec<(usize, usize, usize)>);

/// The model's side: `(serial, rows with a P)` per run, in run order.
#[derive(Debug, Default)]
pub(super) struct InitModel(Vec<(usize, usize)>);

impl InitModel {
    /// One run of the init system `serial` over `rows` rows.
    pub(super) fn ran(&mut self, serial: usize, rows: usize) {
        self.0.push((serial, rows));
    }
}

/// `(k, rows per slice)` of a `Sys::InitBump`.
pub(super) fn sys() -> impl Strategy<Value = (i8, u8)> {
    (-3i8..4, prop_oneof![Just(0u8), 1u8..5])
}

pub(super) fn install(world: &mut World) {
    world.insert(InitLog::default());
}

/// One thread's state: the rows it served, filed when it drops.
struct Served<'a> {
    rows: usize,
    total: &'a AtomicUsize,
}

impl Drop for Served<'_> {
    fn drop(&mut self) {
        self.total.fetch_add(self.rows, Ordering::Relaxed);
    }
}

/// The system: `p += k` for every `P`, with `rows` rows per slice (0: the
/// automatic size), then the log entry of the call.
pub(super) fn system(node: NodeBuilder, serial: usize, k: i8, rows: u8) -> NodeSpec {
    node.system(move |mut q: Query<'_, &mut P>, log: &mut InitLog| {
        let (states, served) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let init = || {
            states.fetch_add(1, Ordering::Relaxed);
            Served {
                rows: 0,
                total: &served,
            }
        };
        let body = |state: &mut Served<'_>, mut p: sluice::Mut<P>| {
            state.rows += 1;
            p.0 = p.0.wrapping_add(i64::from(k));
        };
        if rows == 0 {
            q.par_for_each_init(init, body);
        } else {
            q.par_for_each_init_sliced(usize::from(rows), init, body);
        }
        log.0
            .push((serial, states.into_inner(), served.into_inner()));
    })
}

/// The log against the model, for a pool of `threads` threads.
pub(super) fn compare(
    world: &World,
    model: &InitModel,
    threads: usize,
) -> Result<(), TestCaseError> {
    let log = &world.get::<InitLog>().expect("the init log").0;
    check(log.len() == model.0.len(), || {
        format!(
            "{} init runs logged, the model {}",
            log.len(),
            model.0.len()
        )
    })?;
    for (&(serial, states, served), &(expected_serial, rows)) in log.iter().zip(&model.0) {
        check(serial == expected_serial && served == rows, || {
            format!(
                "init system #{serial} served {served} rows; the model: #{expected_serial}, {rows}"
            )
        })?;
        let allowed = if rows == 0 { 0..=0 } else { 1..=threads };
        check(allowed.contains(&states), || {
            format!(
                "init system #{serial} made {states} states for {rows} rows on {threads} threads"
            )
        })?;
    }
    Ok(())
}
