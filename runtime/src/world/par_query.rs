//! Parallel queries: a node whose body runs once per matching row, the rows
//! cut into slices that run as helper jobs on the world's pool, like a batch
//! processor's (the node completes when its last slice does). Nothing is
//! allocated per frame once the slice list has grown.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::access::ServiceId;
use crate::entity::query::{QueryData, QueryFilter, RunTicks, Walk};
use crate::entity::{Archetype, Entities};
use crate::exec::{BatchNode, BatchProcessor, ClearBuffer, NodeContext as RunContext, NodeOutcome};
use crate::node::NodeBuilder;
use crate::sync::UnsafeCell;
use crate::system::ServiceCells;
use crate::world::batch::BatchDriver;
use crate::world::spec::{NodeSpec, SpecBody};

impl NodeBuilder {
    /// Pairs this declaration with a parallel query: `body` runs once per
    /// entity matching `D` and `F`, the rows cut into slices of
    /// `rows_per_slice` that run as helper jobs on the world's pool. The
    /// node declares the query's lanes, as a system taking `Query<D, F>`
    /// would. Register it with [`World::add_system`](crate::World::add_system);
    /// a [`run_if`](NodeSpec::run_if) condition is evaluated once for the
    /// whole node, however the rows are sliced, and a false one leaves the
    /// query's change cursor where it was.
    pub fn par_query<D, F>(
        self,
        rows_per_slice: usize,
        body: impl for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
    ) -> NodeSpec
    where
        D: QueryData + 'static,
        F: QueryFilter + 'static,
    {
        // Declared exactly as a system's `Query<D, F>` parameter is, so the
        // one gate judges each lane as a handle of its own (SL0009).
        use crate::system::Param;
        let node = self.declaring_parameters(<crate::Query<'static, D, F> as Param>::declare);
        NodeSpec::new(
            node,
            SpecBody::Batch(Box::new(move |registry| {
                D::resolve(registry);
                F::resolve(registry);
                let entities = registry.resolve_private::<Entities>();
                Box::new(WorldParQuery::<D, F, _>::new(
                    body,
                    entities,
                    rows_per_slice,
                ))
            })),
        )
    }
}

/// Rows `start..start + len` of one archetype, with what a slice needs to
/// walk them.
pub(crate) struct RowSlice<D: QueryData, F: QueryFilter> {
    archetype: NonNull<Archetype>,
    entities: NonNull<Entities>,
    ids: D::Ids,
    filter: F::Ids,
    start: usize,
    len: usize,
    last_run: u32,
    tick: u32,
}

// SAFETY: the pointers are into the world's entity store, which nothing
// changes while systems run (structural changes need `&mut World`), and the
// slices of one run cover disjoint rows; the node holds its lanes.
unsafe impl<D: QueryData, F: QueryFilter> Send for RowSlice<D, F> {}
// SAFETY: as for `Send`.
unsafe impl<D: QueryData, F: QueryFilter> Sync for RowSlice<D, F> {}

/// The slices of one run, cut by the node before it fans them out.
pub(crate) struct RowSlices<D: QueryData, F: QueryFilter>(Vec<RowSlice<D, F>>);

impl<D: QueryData, F: QueryFilter> ClearBuffer for RowSlices<D, F> {
    fn clear_buffer(&mut self) {
        self.0.clear();
    }
}

/// The body run on every row.
pub(crate) struct RowBody<D, F, B> {
    body: B,
    _marker: PhantomData<fn() -> (D, F)>,
}

impl<D, F, B> BatchProcessor for RowBody<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
    type Buffer = RowSlices<D, F>;
    type Item = RowSlice<D, F>;
    const BATCH_SIZE: usize = 1;

    fn items(buffer: &RowSlices<D, F>) -> &[RowSlice<D, F>] {
        &buffer.0
    }

    /// Commands and messages recorded by the body land in row order within
    /// the node's: the batch node carries the node's recording into its
    /// slices.
    fn process_batch(&self, _start: usize, batch: &[RowSlice<D, F>]) {
        for slice in batch {
            // SAFETY: the store and archetype outlive the run and hold still
            // (see `RowSlice`'s `Send`); `archetype` matches the ids (the
            // node cut slices only from matching archetypes).
            let (entities, archetype) =
                unsafe { (slice.entities.as_ref(), slice.archetype.as_ref()) };
            let ticks = RunTicks {
                last_run: slice.last_run,
                this_run: slice.tick,
            };
            // SAFETY: as above; the node holds the data's lanes.
            let fetch = unsafe { D::fetch(slice.ids, entities, archetype, ticks) };
            if Walk::of::<D, F>(slice.ids, slice.filter) != Walk::Tables {
                self.sparse_slice(slice, entities, archetype, fetch);
                continue;
            }
            // SAFETY: as above; the node holds the filter's lanes.
            let rows = unsafe { F::fetch(slice.filter, archetype, slice.last_run) };
            for row in slice.start..slice.start + slice.len {
                // SAFETY: `row` is live (slices are cut within the length).
                if F::BY_ROW && !unsafe { F::row(rows, row) } {
                    continue;
                }
                // SAFETY: `row` is live, and no other slice of this run
                // covers it, so its item is handed out once.
                (self.body)(unsafe { D::item(fetch, row) });
            }
        }
    }
}

impl<D, F, B> RowBody<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
    /// A slice of a query naming a sparse-set component: each row's
    /// sparse components looked up in their sets.
    #[inline(never)]
    fn sparse_slice<'w>(
        &self,
        slice: &RowSlice<D, F>,
        entities: &'w Entities,
        archetype: &'w Archetype,
        fetch: D::Fetch<'w>,
    ) {
        for row in slice.start..slice.start + slice.len {
            let entity = archetype.entities()[row];
            // SAFETY: `row` is live (slices are cut within the length); the
            // node holds the filter's lanes.
            let kept = unsafe {
                F::sparse_row(
                    slice.filter,
                    entities,
                    archetype,
                    row,
                    entity,
                    slice.last_run,
                )
            };
            // SAFETY: `row` is live, and no other slice of this run covers
            // it, so its item is handed out once.
            let item =
                kept.then(|| unsafe { D::sparse_item(slice.ids, entities, fetch, row, entity) });
            if let Some(item) = item.flatten() {
                (self.body)(item);
            }
        }
    }
}

/// A parallel query registered in a world.
pub(crate) struct WorldParQuery<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
    node: BatchNode<RowBody<D, F, B>>,
    /// The slices of the run in flight; entered only by the scheduling
    /// thread before the fan-out and by the batch until it completes.
    slices: UnsafeCell<RowSlices<D, F>>,
    /// The change cursor (`None`: never ran, so the first run sees every
    /// row); touched only when the node is scheduled (one thread at a time).
    last_run: UnsafeCell<Option<u32>>,
    entities: ServiceId,
    rows_per_slice: usize,
}

impl<D, F, B> WorldParQuery<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
    pub(crate) fn new(body: B, entities: ServiceId, rows_per_slice: usize) -> Self {
        Self {
            node: BatchNode::new(RowBody {
                body,
                _marker: PhantomData,
            }),
            slices: UnsafeCell::new(RowSlices(Vec::new())),
            last_run: UnsafeCell::new(None),
            entities,
            rows_per_slice: rows_per_slice.max(1),
        }
    }
}

// SAFETY: the cells are entered as their docs say: by the one thread
// scheduling the node, or by the batch it hands them to until it completes.
unsafe impl<D, F, B> Send for WorldParQuery<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
}
// SAFETY: as for `Send`.
unsafe impl<D, F, B> Sync for WorldParQuery<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
}

impl<D, F, B> BatchDriver for WorldParQuery<D, F, B>
where
    D: QueryData + 'static,
    F: QueryFilter + 'static,
    B: for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
{
    fn clamp_cursors(&mut self, now: u32) {
        if let Some(cursor) = self.last_run.get_mut() {
            Entities::clamp_tick(cursor, now);
        }
    }

    unsafe fn read_cursors(&self, out: &mut Vec<Option<u32>>) {
        // SAFETY: the cursor is touched only when the node is scheduled,
        // and no thread runs it (caller).
        out.push(self.last_run.with(|cursor| unsafe { *cursor }));
    }

    fn write_cursors(&mut self, cursors: &[Option<u32>]) {
        if let [cursor] = cursors {
            *self.last_run.get_mut() = *cursor;
        }
    }

    unsafe fn schedule<'s>(&'s self, cx: &RunContext<'s>, cells: &ServiceCells<'s>) -> NodeOutcome {
        // SAFETY: the node declared shared access to the store, and only the
        // world, between iterations, takes it mutably.
        let entities = unsafe { cells.get::<Entities>(self.entities) }
            .expect("every world holds its entity store");
        let this_run = entities.run_tick();
        // SAFETY: one thread schedules the node at a time, and its previous
        // batch completed (the executor runs a node once per iteration).
        let last_run = self
            .last_run
            .with_mut(|cursor| unsafe { (*cursor).replace(this_run) });
        let last_run = Entities::cursor_for(last_run, this_run);
        let slices = self.slices.with_mut(|slices| {
            // SAFETY: as for the cursor: no batch of this node is in flight.
            let slices = unsafe { &mut *slices };
            slices.0.clear();
            let components = entities.components();
            if let Some(ids) = D::ids(components) {
                let filter = F::ids(components);
                for archetype in entities.archetype_list() {
                    if archetype.is_empty()
                        || (crate::entity::disabled::hides(archetype)
                            && !crate::entity::query::sees_disabled::<D, F>())
                        || !D::matches(ids, archetype)
                        || !F::matches(filter, archetype)
                        || F::refuses_all(filter, archetype, last_run)
                    {
                        continue;
                    }
                    let mut start = 0;
                    while start < archetype.len() {
                        let len = self.rows_per_slice.min(archetype.len() - start);
                        slices.0.push(RowSlice {
                            archetype: NonNull::from(archetype),
                            entities: NonNull::from(entities),
                            ids,
                            filter,
                            start,
                            len,
                            last_run,
                            tick: this_run,
                        });
                        start += len;
                    }
                }
            }
            NonNull::from(slices)
        });
        // SAFETY:
        // - the slices live in this node for the run, and nothing else
        //   enters them until the batch completes (the executor runs the
        //   node once per iteration and its successors after the batch);
        // - each slice's rows are live and disjoint (cut above).
        unsafe { self.node.schedule_raw(cx, slices) }
    }
}
