//! [`Query::par_for_each`]: a query's rows cut into slices that run on the
//! world's pool while the system waits, through
//! [`for_each_slice`](crate::exec::for_each_slice).

use std::ops::Range;

use super::{Query, QueryData, QueryFilter, visits};
use crate::exec::for_each_slice;

/// Slices per thread when the caller does not choose a slice size: enough
/// for the claims to balance uneven rows, few enough to keep each slice's
/// setup (one column lookup per component) negligible.
const SLICES_PER_THREAD: usize = 4;

/// The smallest automatic slice: below it, a slice costs more to hand out
/// than to run.
const MIN_AUTO_ROWS: usize = 64;

impl<D: QueryData, F: QueryFilter> Query<'_, D, F> {
    /// Calls `f` with every matching entity's item, in parallel: the rows
    /// are cut into slices (about four per thread, at least 64 rows each)
    /// that the threads of the world's pool run as helper jobs while this
    /// system waits. Outside a pool, or on one thread, it is
    /// [`for_each`](Self::for_each). Allocates nothing. `Commands` recorded
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
    ///     q.par_for_each(|pos| pos.0 *= 2.0);
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
        let Some((ids, filter)) = self.ids() else {
            return;
        };
        let rows = rows_per_slice.max(1);
        let (entities, last_run, tick) = (self.entities, self.last_run, self.tick);
        let matching = || {
            entities
                .archetype_list()
                .iter()
                .filter(move |archetype| visits::<D, F>(ids, filter, archetype))
        };
        let slices = matching().map(|a| a.len().div_ceil(rows)).sum();
        // `for_each_slice` carries this node's recording into the slices:
        // commands land in row order, as from `for_each`.
        let run = |claimed: Range<usize>| {
            // Slice numbers run through the matching archetypes in order.
            let mut first = 0;
            for archetype in matching() {
                let count = archetype.len().div_ceil(rows);
                let (start, end) = (claimed.start.max(first), claimed.end.min(first + count));
                if start < end {
                    // SAFETY: `archetype` matches `ids`; the query holds its
                    // lanes (`Query::new`'s contract) while `&mut self` is
                    // held, for the whole call.
                    let fetch = unsafe { D::fetch(ids, entities, archetype, tick) };
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
                            // SAFETY: `row` is live, and each slice (so each
                            // row) is claimed by one thread only
                            // (`for_each_slice` runs each index once), while
                            // `&mut self` is held.
                            f(unsafe { D::item(fetch, row) });
                        }
                    }
                }
                first += count;
                if first >= claimed.end {
                    break;
                }
            }
        };
        for_each_slice(slices, &run);
    }

    /// The rows of the matching archetypes (before any per-row filter).
    fn count_rows(&self) -> usize {
        self.ids().map_or(0, |(ids, filter)| {
            self.entities
                .archetype_list()
                .iter()
                .filter(|archetype| visits::<D, F>(ids, filter, archetype))
                .map(|archetype| archetype.len())
                .sum()
        })
    }
}
