//! A registered node's run-time state, touched only by the thread running it.

use std::cell::UnsafeCell;

use crate::access::ServiceId;
use crate::system::{NodeBody, NodeEnv};

/// A node's body and its factory bookkeeping.
///
/// Shared by every thread of an iteration but entered by one at a time: the
/// executor hands each node to exactly one thread per iteration, and
/// iterations of one world never overlap (they take `&mut World`).
pub(crate) struct NodeCell {
    body: UnsafeCell<Box<dyn NodeBody>>,
    /// The services whose versions decide whether a factory runs: everything
    /// it reads or gates. Empty for systems.
    inputs: Box<[ServiceId]>,
    /// Whether the node produces something (and so is skipped when its inputs
    /// did not move).
    is_factory: bool,
    /// The sum of the inputs' versions after the factory's last run; `None`
    /// before its first. Versions only grow, so the sum moves exactly when at
    /// least one input moved.
    seen: UnsafeCell<Option<u64>>,
}

// SAFETY: the cell is entered by one thread at a time (see the type's doc):
// `body` is `Send`, and `seen` is a plain integer.
unsafe impl Sync for NodeCell {}

/// What running a node did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// The body ran.
    Body,
    /// A factory whose inputs did not move: skipped.
    Skipped,
}

impl NodeCell {
    pub(crate) fn new(body: Box<dyn NodeBody>, inputs: Box<[ServiceId]>, is_factory: bool) -> Self {
        Self {
            body: UnsafeCell::new(body),
            inputs: if is_factory { inputs } else { Box::new([]) },
            is_factory,
            seen: UnsafeCell::new(None),
        }
    }

    /// Runs the node, or skips a factory whose inputs did not move.
    ///
    /// # Safety
    /// - No other thread is inside this cell (the executor runs each node on
    ///   one thread at a time).
    /// - `env` is the world's environment for this node, and the node runs as
    ///   a node of the world's current plan ([`NodeBody::run`]'s contract).
    pub(crate) unsafe fn run(&self, env: &NodeEnv<'_>) -> Ran {
        if self.is_factory {
            // SAFETY: the inputs are declared by this node, so no gate of
            // them runs now (the plan orders gates against accessors).
            let before = unsafe { self.input_versions(env) };
            // SAFETY: only this thread is inside the cell (caller's guarantee).
            let seen = unsafe { &mut *self.seen.get() };
            if *seen == Some(before) {
                return Ran::Skipped;
            }
            // SAFETY: as above, exclusive entry; `env` satisfies the body's
            // contract by the caller's guarantee.
            unsafe { (*self.body.get()).run(env) };
            // The factory's own gates moved some inputs: remember the state it
            // left, so the next iteration runs it only if someone else moves one.
            // SAFETY: as for `before`.
            *seen = Some(unsafe { self.input_versions(env) });
        } else {
            // SAFETY: exclusive entry and the body's contract, as above.
            unsafe { (*self.body.get()).run(env) };
        }
        Ran::Body
    }

    /// # Safety
    /// The node declared every input, and runs under the plan.
    unsafe fn input_versions(&self, env: &NodeEnv<'_>) -> u64 {
        self.inputs
            .iter()
            // SAFETY: declared inputs (caller's guarantee).
            .map(|&id| unsafe { env.cells.version(id) })
            .fold(0u64, u64::wrapping_add)
    }
}
