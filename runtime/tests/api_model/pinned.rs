//! The main thread in the API model (issue 20): a non-`Send` service
//! (`World::insert_non_send`), pinned systems that touch it (a
//! `NonSendMut<T>` parameter, or `NodeBuilder::pinned` with `gates::<T>()`
//! and `Context::write_non_send`), and an unpinned node naming it, which
//! the plan refuses (SL0011).
//!
//! The model knows what the documentation promises: a pinned node runs on
//! the thread that calls `run_iteration`/`update` (the test's thread) on
//! every executor; the non-`Send` value holds what the pinned systems, run
//! in registration order, made of it; an iteration whose plan holds an
//! unpinned node naming a non-`Send` service is refused whole, with SL0011
//! naming the node, and changes nothing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::thread::{self, ThreadId};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{IterationError, NodeBuilder, NodeSpec, NonSendMut, World};

use super::{Model, Real, check, compare_all};

/// The non-`Send` service: a counter behind an `Rc`, and the threads the
/// pinned systems ran on since it was inserted.
struct Counter {
    value: Rc<Cell<i64>>,
    threads: RefCell<Vec<ThreadId>>,
}

impl Counter {
    fn new(value: i64) -> Self {
        Self {
            value: Rc::new(Cell::new(value)),
            threads: RefCell::new(Vec::new()),
        }
    }

    /// What one pinned system does: value += k, and log the thread.
    fn touch(&self, k: i8) {
        self.value.set(self.value.get().wrapping_add(i64::from(k)));
        self.threads.borrow_mut().push(thread::current().id());
    }
}

/// The model's side: the counter's value and how many pinned runs it saw.
#[derive(Debug, Default)]
pub(super) struct PinnedModel {
    value: i64,
    runs: usize,
}

impl PinnedModel {
    /// One run of a pinned system of parameter `k`, in registration order.
    pub(super) fn run(&mut self, k: i8) {
        self.value = self.value.wrapping_add(i64::from(k));
        self.runs += 1;
    }
}

/// The operations of this module (beside `Sys::Pinned`, registered through
/// `Op::AddSystem`).
#[derive(Debug, Clone)]
pub(super) enum PinnedOp {
    /// `insert_non_send` of a fresh counter holding this value, replacing
    /// the last.
    Replace(i8),
    /// Registers an unpinned node naming the counter (`reads`, or `gates`
    /// with `true`), runs an iteration, which SL0011 refuses, and removes
    /// the node again.
    Unpinned { gates: bool },
}

pub(super) fn op() -> impl Strategy<Value = PinnedOp> {
    prop_oneof![
        (-20i8..20).prop_map(PinnedOp::Replace),
        any::<bool>().prop_map(|gates| PinnedOp::Unpinned { gates }),
    ]
}

/// Inserts the counter (at 0, as the model starts) into a new world.
pub(super) fn install(world: &mut World) {
    world.insert_non_send(Counter::new(0));
}

/// The pinned system of parameter `k`: a `NonSendMut` parameter for even
/// `k` (pinned by the parameter), an explicitly pinned node writing through
/// its context for odd `k`.
pub(super) fn system(node: NodeBuilder, k: i8) -> NodeSpec {
    if k % 2 == 0 {
        node.system(move |counter: NonSendMut<Counter>| counter.touch(k))
    } else {
        node.gates::<Counter>()
            .pinned()
            .run(move |cx| cx.write_non_send::<Counter>().touch(k))
    }
}

/// Compares the counter with the model: its value, one thread logged per
/// pinned run, every one the calling thread.
pub(super) fn compare(world: &World, model: &PinnedModel) -> Result<(), TestCaseError> {
    let counter = world
        .get_non_send::<Counter>()
        .ok_or_else(|| TestCaseError::fail("the non-Send counter is gone on its own thread"))?;
    let value = counter.value.get();
    check(value == model.value, || {
        format!(
            "the non-Send counter holds {value}, the model {}",
            model.value
        )
    })?;
    let threads = counter.threads.borrow();
    check(threads.len() == model.runs, || {
        format!(
            "{} pinned runs logged, the model {}",
            threads.len(),
            model.runs
        )
    })?;
    let me = thread::current().id();
    check(threads.iter().all(|&id| id == me), || {
        format!("a pinned system ran off the calling thread: {threads:?}, caller {me:?}")
    })
}

pub(super) fn apply(
    op: &PinnedOp,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    match *op {
        PinnedOp::Replace(v) => {
            real.world.insert_non_send(Counter::new(i64::from(v)));
            model.pinned = PinnedModel {
                value: i64::from(v),
                runs: 0,
            };
        }
        PinnedOp::Unpinned { gates } => {
            let node = NodeBuilder::new("unpinned");
            let node = if gates {
                node.gates::<Counter>()
            } else {
                node.reads::<Counter>()
            };
            // Its body panics if it ever runs: the iteration would then
            // report the panic, not the refusal.
            let index = real
                .world
                .add_system(node.run(|_| panic!("an unpinned node naming a non-Send service ran")));
            let result = real.world.run_iteration();
            real.world
                .remove_node(index)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let Err(IterationError::Plan(errors)) = result else {
                return Err(TestCaseError::fail(format!(
                    "an unpinned node naming a non-Send service: {result:?}"
                )));
            };
            let refusal = errors.errors().find(|d| d.code == "SL0011");
            check(refusal.is_some_and(|d| d.nodes == ["unpinned"]), || {
                format!("SL0011 naming the node, got {errors}")
            })?;
            // Refused whole: nothing of the iteration happened.
            compare(&real.world, &model.pinned)?;
            compare_all(real, model)?;
        }
    }
    Ok(())
}
