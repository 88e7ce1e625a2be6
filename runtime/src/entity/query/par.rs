//! [`Query::par_for_each`] and [`Query::par_for_each_init`]: a query's rows
//! cut into slices that run on the world's pool while the system waits,
//! through [`for_each_slice`](crate::exec::for_each_slice)'s runners (one
//! per thread taking part, which is what holds a thread's `init` state).

use super::{Query, QueryData, QueryFilter, RunTicks, Walk, walks};
use crate::exec::{SliceRuns, for_each_slice_runs};

/// Slices per thread when the caller does not choose a slice size: enough
/// for the claims to balance uneven rows, few enough to keep each slice's
/// setup (one column lookup per component) negligible. The claims are
/// guided (long runs first, single slices last), so more slices add few
/// claims; what they shorten is the tail, where one thread finishes the
/// last slice while the others wait (at 4 a slice, an eighth of the work
/// on two threads, left one thread idle up to that long).
const SLICES_PER_THREAD: usize = 16;

/// The smallest automatic slice: below it, a slice costs more to hand out
/// than to run.
const MIN_AUTO_ROWS: usize = 64;

impl<D: QueryData, F: QueryFilter> Query<'_, D, F> {
    /// Calls `f` with every matching entity's item, in parallel: the rows
    /// are cut into slices (about sixteen per thread, at least 64 rows each)
    /// that the threads of the world's pool run as helper jobs while this
    /// system waits. Outside a pool, or on one thread, it is
    /// [`for_each`](Self::for_each). Allocates nothing. A query naming a
    /// sparse-set component ([`StorageType::SparseSet`](crate::StorageType))
    /// runs as `for_each` does, on this thread. `Commands` recorded
    /// by `f` land in row order, as from `for_each`, whatever the thread
    /// count or slice size.
    ///
    /// ```
    /// use sluice::{NodeBuilder, Query, World};
    ///
    /// struct Pos(f32);
    /// let mut world = World::with_pool(sluice::exec::ThreadPool::new(2).unwrap());
    /// world.spawn_batch((0..1_000).map(|i| (Pos(i as f32),)));
    /// world.add_system(NodeBuilder::new("scale").system(|mut q: Query<&mut Pos>| {
    ///     q.par_for_each(|mut pos| pos.0 *= 2.0);
    /// }));
    /// world.run_iteration().unwrap();
    /// let sum: f32 = world.query::<&Pos>().iter().map(|p| p.0).sum();
    /// assert_eq!(sum, 999_000.0);
    /// ```
    ///
    /// # Panics
    ///
    /// A panic in `f` stops the slices not yet started and is resumed here
    /// once the slices in flight are done (the system fails as usual).
    pub fn par_for_each(&mut self, f: impl Fn(D::Item<'_>) + Sync) {
        let threads = crate::exec::current_thread_count();
        let rows = self.count_rows().div_ceil(threads * SLICES_PER_THREAD);
        self.par_for_each_sliced(rows.max(MIN_AUTO_ROWS), f);
    }

    /// [`par_for_each`](Self::par_for_each) with slices of `rows_per_slice`
    /// rows (a slice never spans two archetypes; 0 is taken as 1).
    pub fn par_for_each_sliced(&mut self, rows_per_slice: usize, f: impl Fn(D::Item<'_>) + Sync) {
        self.par_for_each_init_sliced(rows_per_slice, || (), |(), item| f(item));
    }

    /// [`par_for_each`](Self::par_for_each) with scratch state per thread
    /// (bevy's `for_each_init`): each thread that takes part calls `init`
    /// once, when it claims its first slice, and hands the state to `f` for
    /// every row of every slice it runs in this call; the state drops on
    /// that thread when it has no slice left. So `init` runs at most once
    /// per thread per call, never per row or per slice, and a scratch
    /// buffer taken from a pool (`sluice_collections::Pool`) is reused frame
    /// after frame without allocating.
    ///
    /// ```
    /// use sluice::{NodeBuilder, Query, World};
    ///
    /// struct Pos(f32);
    /// struct Neighbours(u32);
    /// let mut world = World::with_pool(sluice::exec::ThreadPool::new(2).unwrap());
    /// world.spawn_batch((0..1_000).map(|i| (Pos(i as f32), Neighbours(0))));
    /// world.add_system(NodeBuilder::new("count").system(
    ///     |mut q: Query<(&Pos, &mut Neighbours)>| {
    ///         q.par_for_each_init(
    ///             || Vec::with_capacity(8), // one scratch list per thread
    ///             |near: &mut Vec<f32>, (pos, mut count)| {
    ///                 near.clear();
    ///                 near.extend([pos.0 - 1.0, pos.0 + 1.0].iter().filter(|x| **x >= 0.0));
    ///                 count.0 = near.len() as u32;
    ///             },
    ///         );
    ///     },
    /// ));
    /// world.run_iteration().unwrap();
    /// let total: u32 = world.query::<&Neighbours>().iter().map(|n| n.0).sum();
    /// assert_eq!(total, 1_999);
    /// ```
    ///
    /// # Panics
    ///
    /// As for [`par_for_each`](Self::par_for_each); a panic in `init` is
    /// one in a slice.
    pub fn par_for_each_init<S>(
        &mut self,
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, D::Item<'_>) + Sync,
    ) {
        let threads = crate::exec::current_thread_count();
        let rows = self.count_rows().div_ceil(threads * SLICES_PER_THREAD);
        self.par_for_each_init_sliced(rows.max(MIN_AUTO_ROWS), init, f);
    }

    /// [`par_for_each_init`](Self::par_for_each_init) with slices of
    /// `rows_per_slice` rows (a slice never spans two archetypes; 0 is taken
    /// as 1).
    pub fn par_for_each_init_sliced<S>(
        &mut self,
        rows_per_slice: usize,
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, D::Item<'_>) + Sync,
    ) {
        let Some((ids, filter)) = self.ids() else {
            return;
        };
        if Walk::of::<D, F>(ids, filter) != Walk::Tables {
            // The sparse walk runs on this thread, in `for_each`'s order.
            let mut state = init();
            self.for_each(|item| f(&mut state, item));
            return;
        }
        let rows = rows_per_slice.max(1);
        let (entities, last_run, tick) = (self.entities, self.last_run, self.tick);
        let matching = || {
            entities
                .archetype_list()
                .iter()
                .filter(move |archetype| walks::<D, F>(ids, filter, archetype, last_run))
        };
        let slices = matching().map(|a| a.len().div_ceil(rows)).sum();
        // One runner per thread taking part; `for_each_slice_runs` carries
        // this node's recording into each of its runs: commands land in row
        // order, as from `for_each`.
        let runner = |runs: &mut SliceRuns<'_>| {
            // Made on the first claim: a helper that finds nothing left to
            // claim makes nothing.
            let mut state = None;
            for claimed in runs {
                let state = state.get_or_insert_with(&init);
                // Slice numbers run through the matching archetypes in order.
                let mut first = 0;
                for archetype in matching() {
                    let count = archetype.len().div_ceil(rows);
                    let (start, end) = (claimed.start.max(first), claimed.end.min(first + count));
                    if start < end {
                        // SAFETY: `archetype` matches `ids`; the query holds
                        // its lanes (`Query::new`'s contract) while `&mut
                        // self` is held, for the whole call.
                        let fetch = unsafe {
                            D::fetch(
                                ids,
                                entities,
                                archetype,
                                RunTicks {
                                    last_run,
                                    this_run: tick,
                                },
                            )
                        };
                        // SAFETY: as for the data.
                        let checks = unsafe { F::fetch(filter, archetype, last_run) };
                        for slice in start..end {
                            let row_start = (slice - first) * rows;
                            for row in row_start..(row_start + rows).min(archetype.len()) {
                                // SAFETY: `row` is live; the query holds the
                                // filter's lanes.
                                if F::BY_ROW && !unsafe { F::row(checks, row) } {
                                    continue;
                                }
                                // SAFETY: `row` is live, and each slice (so
                                // each row) is claimed by one runner only
                                // (`for_each_slice_runs` hands out each
                                // index once), while `&mut self` is held.
                                f(state, unsafe { D::item(fetch, row) });
                            }
                        }
                    }
                    first += count;
                    if first >= claimed.end {
                        break;
                    }
                }
            }
        };
        for_each_slice_runs(slices, &runner);
    }

    /// The rows of the matching archetypes (before any per-row filter).
    pub(crate) fn count_rows(&self) -> usize {
        self.ids().map_or(0, |(ids, filter)| {
            self.entities
                .archetype_list()
                .iter()
                .filter(|archetype| walks::<D, F>(ids, filter, archetype, self.last_run))
                .map(|archetype| archetype.len())
                .sum()
        })
    }
}
