//! Batch processors as world nodes: the buffer is a service the node gates,
//! so every writer of it runs first and every reader after `after_update`.

use std::ptr::NonNull;

use crate::access::ServiceId;
use crate::exec::{BatchNode, BatchProcessor, NodeContext as RunContext, NodeOutcome};
use crate::node::NodeBuilder;
use crate::system::ServiceCells;
use crate::world::spec::{NodeSpec, SpecBody};

impl NodeBuilder {
    /// Pairs this declaration with a batch processor: its buffer service
    /// `P::Buffer` is gated automatically, so every writer of the buffer
    /// runs first and the node's successors start after `after_update`.
    /// Register it with [`World::add_system`](crate::World::add_system)
    /// (or [`Commands::add_system`](crate::Commands::add_system)); a
    /// [`run_if`](NodeSpec::run_if) condition is evaluated once for the
    /// whole node, however many slices it has.
    ///
    /// ```
    /// use sluice::exec::ClearBuffer;
    /// use sluice::{BatchProcessor, NodeBuilder, World};
    ///
    /// #[derive(Default)]
    /// struct Sparks(Vec<u32>);
    /// impl ClearBuffer for Sparks {
    ///     fn clear_buffer(&mut self) { self.0.clear(); }
    /// }
    /// struct Burn;
    /// impl BatchProcessor for Burn {
    ///     type Buffer = Sparks;
    ///     type Item = u32;
    ///     const BATCH_SIZE: usize = 64;
    ///     fn items(buffer: &Sparks) -> &[u32] { &buffer.0 }
    ///     fn process_batch(&self, _start: usize, _batch: &[u32]) {}
    /// }
    /// struct Paused;
    ///
    /// let mut world = World::new();
    /// world.insert(Sparks((0..1_000).collect()));
    /// world.insert(Paused);
    /// world.add_system(
    ///     NodeBuilder::new("burn")
    ///         .batch_processor(Burn)
    ///         .run_if(|paused: Option<&Paused>| paused.is_none()),
    /// );
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Sparks>().map(|s| s.0.len()), Some(1_000)); // skipped: untouched
    /// world.remove::<Paused>();
    /// world.run_iteration()?;
    /// assert_eq!(world.get::<Sparks>().map(|s| s.0.len()), Some(0)); // ran: `after_update` cleared it
    /// # Ok::<(), sluice::IterationError>(())
    /// ```
    pub fn batch_processor<P: BatchProcessor>(self, processor: P) -> NodeSpec {
        NodeSpec::new(
            self.runtime_gates::<P::Buffer>(),
            SpecBody::Batch(Box::new(move |registry| {
                Box::new(WorldBatch {
                    node: BatchNode::new(processor),
                    buffer: registry.resolve::<P::Buffer>(),
                })
            })),
        )
    }
}

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

    /// Appends its change cursor, if it has one (a snapshot's).
    ///
    /// # Safety
    /// No thread is running the node.
    unsafe fn read_cursors(&self, _out: &mut Vec<Option<u32>>) {}

    /// Sets its change cursor from what [`read_cursors`](Self::read_cursors)
    /// appended.
    fn write_cursors(&mut self, _cursors: &[Option<u32>]) {}
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
