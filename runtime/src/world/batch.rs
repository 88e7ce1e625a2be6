//! Batch processors as world nodes: the buffer is a service the node gates,
//! so every writer of it runs first and every reader after `after_update`.

use std::ptr::NonNull;

use crate::access::ServiceId;
use crate::exec::{BatchNode, BatchProcessor, NodeContext as RunContext, NodeOutcome};
use crate::system::ServiceCells;

/// A batch node scheduled against a world's cells.
pub(crate) trait BatchDriver: Send + Sync {
    /// Runs `before_update`, fans the slices out over the pool and returns
    /// [`NodeOutcome::Deferred`] (or `Done` for an empty buffer).
    ///
    /// # Safety
    /// The node runs as a node of the world's current plan, which gives it
    /// gated access to its buffer service, and `cells` live for the run.
    unsafe fn schedule<'s>(&'s self, cx: &RunContext<'s>, cells: &ServiceCells<'s>) -> NodeOutcome;

    /// Moves its change cursor, if it has one, up to the store's
    /// `MAX_TICK_AGE` before `now` (see `Entities::check_ticks`).
    fn clamp_cursors(&mut self, _now: u32) {}
}

/// A [`BatchProcessor`] and the id of its buffer service.
pub(crate) struct WorldBatch<P: BatchProcessor> {
    pub(crate) node: BatchNode<P>,
    pub(crate) buffer: ServiceId,
}

impl<P: BatchProcessor> BatchDriver for WorldBatch<P> {
    unsafe fn schedule<'s>(&'s self, cx: &RunContext<'s>, cells: &ServiceCells<'s>) -> NodeOutcome {
        // SAFETY: the node gates its buffer (declared at registration), so it is
        // alone in the buffer's lane until it completes.
        let buffer = unsafe { cells.get_mut::<P::Buffer>(self.buffer) }.unwrap_or_else(|| {
            panic!(
                "batch buffer `{}` is declared but the world holds no value for it",
                std::any::type_name::<P::Buffer>()
            )
        });
        // SAFETY:
        // - the buffer lives in the world's slots, borrowed for the whole run;
        // - nothing else reads or writes it until this node completes: the
        //   plan orders every other accessor of the buffer against this gate,
        //   and successors start only when the last slice's `after_update` is done.
        unsafe { self.node.schedule_raw(cx, NonNull::from(buffer)) }
    }
}
