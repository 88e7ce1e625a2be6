//! A node's run conditions and their change cursors (reference 002: "The
//! condition evaluates once when its node is ready, after predecessor
//! barriers. A false result completes dependency ordering without running
//! the body or advancing the body's change cursor. Successful false
//! evaluations advance the condition's own cursor. A partitioned body still
//! evaluates its condition only once").
//!
//! Shared by every kind of node that runs a body of its own: systems and
//! factories ([`NodeCell`](super::node_cell::NodeCell)), and batch
//! processors and parallel queries ([`BatchCell`]), whose conditions are
//! evaluated once, on the scheduling thread, before anything is sliced.

use crate::entity::query::ChangeRun;
use crate::exec::{NodeContext as RunContext, NodeOutcome};
use crate::message::ReaderPart;
use crate::sync::UnsafeCell;
use crate::system::{ConditionBody, NodeEnv};
use crate::world::batch::BatchDriver;

/// Every run condition of one node, each with its own change cursor.
pub(crate) struct RunConditions {
    conditions: Vec<Box<dyn ConditionBody>>,
    /// Each condition's own cursor: a condition that reads and returns
    /// false moves its cursor, not the body's.
    cursors: Vec<Option<u32>>,
    /// Whether the last evaluation found one false (the spike watch records
    /// only runs of the body).
    failed_last: bool,
}

impl RunConditions {
    pub(crate) fn new(conditions: Vec<Box<dyn ConditionBody>>) -> Self {
        Self {
            cursors: vec![None; conditions.len()],
            conditions,
            failed_last: false,
        }
    }

    /// Evaluates the conditions in order, stopping at the first that is
    /// false; whether all held. Each reads messages as part `1..` of the
    /// node (the body is part 0) and queries with its own cursor.
    ///
    /// # Safety
    /// The node runs as a node of the world's current plan with `env` its
    /// environment ([`NodeBody::run`](crate::NodeBody::run)'s contract): the
    /// conditions' reads are part of its declared access.
    #[inline]
    pub(crate) unsafe fn hold(&mut self, env: &NodeEnv<'_>) -> bool {
        // Most nodes have no condition: no part or cursor to enter, and
        // `failed_last` stays false.
        if self.conditions.is_empty() {
            return true;
        }
        // SAFETY: the caller's guarantee.
        unsafe { self.evaluate(env) }
    }

    /// [`hold`](Self::hold) for a node with conditions.
    ///
    /// # Safety
    /// As [`hold`](Self::hold).
    unsafe fn evaluate(&mut self, env: &NodeEnv<'_>) -> bool {
        let conditions = self.conditions.iter_mut().zip(&mut self.cursors);
        for (part, (condition, cursor)) in (1..).zip(conditions) {
            let _part = ReaderPart::enter(part);
            let run = ChangeRun::enter(*cursor);
            // SAFETY: the caller's guarantee.
            let holds = unsafe { condition.evaluate(env) };
            if let Some(tick) = run.finish() {
                *cursor = Some(tick);
            }
            if !holds {
                self.failed_last = true;
                return false;
            }
        }
        self.failed_last = false;
        true
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Whether the last evaluation found a condition false.
    pub(crate) fn failed_last(&self) -> bool {
        self.failed_last
    }

    /// Each condition's change cursor, in order (a snapshot's).
    pub(crate) fn cursors(&self) -> &[Option<u32>] {
        &self.cursors
    }

    /// Each condition's change cursor, mutably (a snapshot's restore).
    pub(crate) fn cursors_mut(&mut self) -> &mut [Option<u32>] {
        &mut self.cursors
    }

    /// Moves the cursors up to the store's `MAX_TICK_AGE` before `now`.
    pub(crate) fn clamp_cursors(&mut self, now: u32) {
        // A cursor that never ran needs none: its first run resolves it.
        for cursor in self.cursors.iter_mut().flatten() {
            crate::entity::Entities::clamp_tick(cursor, now);
        }
    }
}

/// A batch processor or parallel query with its run conditions.
pub(crate) struct BatchCell {
    driver: Box<dyn BatchDriver>,
    /// Entered only by the thread running the node, before it schedules
    /// its slices.
    conditions: UnsafeCell<RunConditions>,
    /// Whether it has run conditions (so a run can skip the batch).
    skippable: bool,
}

// SAFETY: the driver is `Sync`; the conditions are entered by one thread at
// a time (the executor runs each node on one thread per iteration, and
// iterations of one world never overlap), and everything in them is `Send`.
unsafe impl Sync for BatchCell {}

impl BatchCell {
    pub(crate) fn new(driver: Box<dyn BatchDriver>, conditions: RunConditions) -> Self {
        Self {
            driver,
            skippable: !conditions.is_empty(),
            conditions: UnsafeCell::new(conditions),
        }
    }

    /// Moves the driver's and the conditions' change cursors up to the
    /// store's `MAX_TICK_AGE` before `now`.
    pub(crate) fn clamp_cursors(&mut self, now: u32) {
        self.driver.clamp_cursors(now);
        self.conditions.get_mut().clamp_cursors(now);
    }

    /// Appends the driver's and the conditions' change cursors, in that
    /// order (a snapshot's).
    ///
    /// # Safety
    /// No thread is running the node (no iteration of its world runs).
    pub(crate) unsafe fn read_cursors(&self, out: &mut Vec<Option<u32>>) {
        // SAFETY: forwarded from the caller.
        unsafe { self.driver.read_cursors(out) };
        // SAFETY: the conditions are entered only by the thread running
        // the node, and none does (caller).
        self.conditions
            .with(|conditions| out.extend_from_slice(unsafe { &*conditions }.cursors()));
    }

    /// Sets the cursors [`read_cursors`](Self::read_cursors) appended, from
    /// `cursors` (as many, in its order).
    pub(crate) fn write_cursors(&mut self, cursors: &[Option<u32>]) {
        let conditions = self.conditions.get_mut().cursors_mut();
        let (driver, own) = cursors.split_at(cursors.len() - conditions.len());
        self.driver.write_cursors(driver);
        conditions.copy_from_slice(own);
    }

    /// Whether a run can skip the batch: it has run conditions.
    pub(crate) fn skippable(&self) -> bool {
        self.skippable
    }

    /// Whether the last run skipped the batch (a run condition was false;
    /// read between runs).
    pub(crate) fn skipped(&mut self) -> bool {
        self.conditions.get_mut().failed_last()
    }

    /// Evaluates the conditions once for the whole node; when all hold,
    /// schedules the batch (`before_update`, the slices, `after_update`).
    /// When one is false nothing of the batch runs: its buffer is left as
    /// it is (not even gated, so its version holds), a parallel query's
    /// change cursor does not move, and the node is done at once.
    ///
    /// # Safety
    /// - No other thread is inside this cell (the executor runs each node
    ///   on one thread at a time), and the node's previous batch completed.
    /// - The node runs as a node of the world's current plan with `env` its
    ///   environment, whose cells live for the run (`'s`).
    pub(crate) unsafe fn run<'s>(&'s self, env: &NodeEnv<'s>, cx: &RunContext<'s>) -> NodeOutcome {
        // SAFETY: only this thread is inside the cell (caller's guarantee).
        let conditions = self.conditions.with_mut(|c| unsafe { &mut *c });
        // SAFETY: forwarded from the caller.
        if !unsafe { conditions.hold(env) } {
            return NodeOutcome::Done;
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.driver.schedule(cx, &env.cells) }
    }
}
