//! Every set of `K` distinct matching entities: `iter_combinations` (the
//! n-body case: each pair once) and its writing form,
//! `iter_combinations_mut`, which lends each combination only until the
//! next is asked for, so two live `&mut` never reach one row.

use crate::entity::query::{Query, QueryData, QueryFilter, ReadOnlyQueryData};
use crate::entity::{Archetype, Entities};

/// The matching rows, gathered once, and the `K` positions among them of
/// the current combination (ascending, so its rows are distinct).
///
/// Invariant: while `pending` is set, every index is below `rows.len()`.
struct Positions<const K: usize> {
    /// Each matching row: the index of its archetype among the matching
    /// ones, and its row there.
    rows: Vec<(u32, u32)>,
    indices: [usize; K],
    /// Whether `indices` holds a combination not yet handed out.
    pending: bool,
}

impl<const K: usize> Positions<K> {
    fn new(rows: Vec<(u32, u32)>) -> Self {
        Self {
            pending: K > 0 && rows.len() >= K,
            indices: std::array::from_fn(|i| i),
            rows,
        }
    }

    /// The next combination's rows, ascending in iteration order.
    #[inline]
    fn advance(&mut self) -> Option<[(u32, u32); K]> {
        if !self.pending {
            return None;
        }
        // SAFETY: `pending` is set, so every index is below `rows.len()`
        // (the invariant: `new` starts at `0..K` only with `K` rows or
        // more, and the loop below moves position `i` only while it is
        // below `len - K + i`, the ones after it to at most `len - 1`).
        let rows = map_inline(self.indices, |index| unsafe {
            *self.rows.get_unchecked(index)
        });
        // Move on: the last position that can still grow grows, and the
        // ones after it follow it one by one.
        let len = self.rows.len();
        self.pending = false;
        for i in (0..K).rev() {
            if self.indices[i] < len - K + i {
                self.indices[i] += 1;
                for j in i + 1..K {
                    self.indices[j] = self.indices[j - 1] + 1;
                }
                self.pending = true;
                break;
            }
        }
        Some(rows)
    }

    /// How many combinations are left: C(remaining) is not tracked, so
    /// only whether any is.
    fn is_done(&self) -> bool {
        !self.pending
    }
}

/// `array.map(f)`, inlined into the caller: `[T; K]::map` is left out of
/// line in the combination loop (a call per combination, its items passed
/// back through memory), which cost the n-body step more than its items.
#[inline(always)]
fn map_inline<T: Copy, U, const K: usize>(array: [T; K], mut f: impl FnMut(T) -> U) -> [U; K] {
    let mut out = [const { std::mem::MaybeUninit::<U>::uninit() }; K];
    for (slot, &value) in out.iter_mut().zip(&array) {
        slot.write(f(value));
    }
    // SAFETY: the loop wrote each of the `K` elements (a panic in `f`
    // leaves before this, leaking those written, never reading one that
    // was not), and `[MaybeUninit<U>; K]` has the layout of `[U; K]`;
    // `out` is not used again, so each value is owned once.
    unsafe { std::mem::transmute_copy(&std::mem::ManuallyDrop::new(out)) }
}

impl<'w, D: QueryData, F: QueryFilter> Query<'w, D, F> {
    /// The matching archetypes (with at least one matching row) and the
    /// matching rows, as `(index among those archetypes, row)`.
    fn gather(&self) -> (Vec<&'w Archetype>, Vec<(u32, u32)>) {
        let mut archetypes: Vec<&'w Archetype> = Vec::new();
        let mut rows = Vec::new();
        for (archetype, row) in self.matching_rows() {
            if archetypes
                .last()
                .is_none_or(|last| !std::ptr::eq(*last, archetype))
            {
                archetypes.push(archetype);
            }
            let at = u32::try_from(archetypes.len() - 1).expect("fewer than 2^32 archetypes");
            rows.push((at, u32::try_from(row).expect("fewer than 2^32 rows")));
        }
        (archetypes, rows)
    }

    /// Every `K`-combination of distinct matching entities, each once, as
    /// an array of their items in iteration order:
    /// `iter_combinations::<2>()` yields each pair `[a, b]` once (never
    /// `[b, a]`, never `[a, a]`). Gathers the matching rows first (one
    /// allocation); `K == 0` or fewer than `K` matches yield nothing.
    ///
    /// ```
    /// use sluice::{NodeBuilder, Query, World};
    ///
    /// struct Mass(f32);
    ///
    /// let mut world = World::new();
    /// for mass in [1.0, 2.0, 3.0] {
    ///     world.spawn((Mass(mass),));
    /// }
    /// world.add_system(NodeBuilder::new("pairs").system(|bodies: Query<&Mass>| {
    ///     let products: f32 = bodies.iter_combinations().map(|[a, b]| a.0 * b.0).sum();
    ///     assert_eq!(products, 1.0 * 2.0 + 1.0 * 3.0 + 2.0 * 3.0);
    /// }));
    /// world.run_iteration().unwrap();
    /// ```
    pub fn iter_combinations<const K: usize>(&self) -> Combinations<'_, D, K>
    where
        D: ReadOnlyQueryData,
    {
        Combinations {
            fetches: self.archetype_fetches(),
        }
    }

    /// Every `K`-combination of distinct matching entities, each once,
    /// with items that may write: a lending iterator, whose
    /// [`fetch_next`](CombinationsMut::fetch_next) borrows it until the
    /// combination is dropped, so no two live items reach one row (the
    /// positions of one combination are distinct rows). Or hand each
    /// combination to a closure with
    /// [`for_each`](CombinationsMut::for_each).
    ///
    /// ```
    /// use sluice::{NodeBuilder, Query, World};
    ///
    /// struct Body { pos: f32, force: f32 }
    ///
    /// let mut world = World::new();
    /// let near = world.spawn((Body { pos: 0.0, force: 0.0 },));
    /// world.spawn((Body { pos: 1.0, force: 0.0 },));
    /// world.add_system(NodeBuilder::new("gravity").system(|mut bodies: Query<&mut Body>| {
    ///     let mut pairs = bodies.iter_combinations_mut();
    ///     while let Some([mut a, mut b]) = pairs.fetch_next() {
    ///         let pull = (b.pos - a.pos).signum();
    ///         a.force += pull;
    ///         b.force -= pull;
    ///     }
    /// }));
    /// world.run_iteration().unwrap();
    /// assert_eq!(world.entity(near).unwrap().get::<Body>().unwrap().force, 1.0);
    /// ```
    pub fn iter_combinations_mut<const K: usize>(&mut self) -> CombinationsMut<'_, D, K> {
        CombinationsMut {
            fetches: self.archetype_fetches(),
        }
    }

    /// Every matching archetype's columns (each with a matching row), and
    /// the matching rows among them.
    fn archetype_fetches<const K: usize>(&self) -> Gathered<'w, D, K> {
        let (archetypes, rows) = self.gather();
        let ids = self.ids().map(|(ids, _)| ids);
        let fetches = match ids {
            Some(ids) => archetypes
                .iter()
                // SAFETY: each archetype matches; the node holds the lanes
                // (`new`'s contract). Fetching hands out no item.
                .map(|archetype| unsafe { D::fetch(ids, self.entities, archetype, self.ticks()) })
                .collect(),
            None => Vec::new(),
        };
        Gathered {
            entities: self.entities,
            sparse: ids.is_some_and(D::names_sparse),
            ids,
            archetypes,
            fetches,
            positions: Positions::new(rows),
        }
    }
}

/// Each matching archetype's columns and the positions of the current
/// combination among the matching rows.
///
/// Invariant (of `Combinations` too): the archetype index `at` of every
/// gathered row is below `fetches.len()` and `archetypes.len()`
/// (`archetype_fetches` fetches every archetype `gather` numbered; with no
/// ids, no row matches).
struct Gathered<'q, D: QueryData, const K: usize> {
    entities: &'q Entities,
    /// Whether the data names a sparse-set component: only then is an item
    /// built through [`QueryData::sparse_item`], so a table-only
    /// combination costs what it did before sparse sets.
    sparse: bool,
    /// The data's ids (`None`: nothing matches, no position is handed out).
    ids: Option<D::Ids>,
    archetypes: Vec<&'q Archetype>,
    fetches: Vec<D::Fetch<'q>>,
    positions: Positions<K>,
}

impl<'q, D: QueryData, const K: usize> Gathered<'q, D, K> {
    /// The item of `row` of the `at`th matching archetype, with its fetch
    /// `fetch` (that archetype's, for a lifetime `'a` within `'q`).
    ///
    /// # Safety
    /// The row was gathered (live and matching, with the data's sparse
    /// components), and no other item of it is alive when the data writes.
    #[inline]
    unsafe fn item<'a>(&self, fetch: D::Fetch<'a>, (at, row): (u32, u32)) -> D::Item<'a>
    where
        'q: 'a,
    {
        if !self.sparse {
            // SAFETY: the caller's; a table-only row's item is its columns'.
            return unsafe { D::item(fetch, row as usize) };
        }
        let ids = self.ids.expect("a gathered row has ids");
        let entity = self.archetypes[at as usize].entities()[row as usize];
        // SAFETY: the caller's.
        unsafe { D::sparse_item(ids, self.entities, fetch, row as usize, entity) }
            .expect("a gathered row has the data's sparse components")
    }
}

/// The `K`-combinations of a query's read-only items
/// ([`Query::iter_combinations`]).
pub struct Combinations<'q, D: ReadOnlyQueryData, const K: usize> {
    /// Each matching archetype's columns, and the positions.
    fetches: Gathered<'q, D, K>,
}

impl<'q, D: ReadOnlyQueryData, const K: usize> Iterator for Combinations<'q, D, K> {
    type Item = [D::Item<'q>; K];

    #[inline]
    fn next(&mut self) -> Option<[D::Item<'q>; K]> {
        let rows = self.fetches.positions.advance()?;
        let gathered = &self.fetches;
        // SAFETY: `at` is below `fetches.len()` (`Gathered`'s invariant);
        // each row is a live row of the archetype whose columns that fetch
        // holds; the data only reads, so items may live together.
        Some(map_inline(rows, |place| unsafe {
            gathered.item(*gathered.fetches.get_unchecked(place.0 as usize), place)
        }))
    }
}

impl<D: ReadOnlyQueryData, const K: usize> std::fmt::Debug for Combinations<'_, D, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combinations")
            .field("k", &K)
            .field("done", &self.fetches.positions.is_done())
            .finish()
    }
}

/// The `K`-combinations of a query's items that may write
/// ([`Query::iter_combinations_mut`]): each lent until the next is asked
/// for.
pub struct CombinationsMut<'q, D: QueryData, const K: usize> {
    fetches: Gathered<'q, D, K>,
}

impl<D: QueryData, const K: usize> CombinationsMut<'_, D, K> {
    /// The next combination, lent until it is dropped (a new call needs
    /// this borrow back, so the rows of two combinations are never held
    /// at once); `None` when every combination was handed out.
    #[inline]
    pub fn fetch_next<'a>(&'a mut self) -> Option<[D::Item<'a>; K]> {
        let rows = self.fetches.positions.advance()?;
        let gathered = &self.fetches;
        Some(map_inline(rows, |(at, row)| {
            // SAFETY: `at` is below `fetches.len()` (`Gathered`'s
            // invariant).
            let fetch = unsafe { gathered.fetches.get_unchecked(at as usize) };
            // SAFETY: `D::Fetch<'q>` and `D::Fetch<'a>` are one type but
            // for a lifetime (`'q` outlives `'a`: `self` borrows for
            // `'q`), so they have one layout, and a fetch valid for the
            // query's borrow `'q` is valid for the shorter `'a`; the copy
            // is `Copy` (no drop) and lives only in this call.
            let fetch: D::Fetch<'a> = unsafe { std::mem::transmute_copy(fetch) };
            // SAFETY: `fetch` holds the columns of a matching archetype in
            // which `row` is live; the node holds the lanes
            // (`Query::new`'s contract); the rows of one combination are
            // distinct (ascending positions among distinct matching rows),
            // and the previous combination's items are dead (this call
            // borrows `self` mutably for the new ones' life).
            unsafe { gathered.item(fetch, (at, row)) }
        }))
    }

    /// Calls `f` with every combination left, one at a time.
    pub fn for_each(mut self, mut f: impl FnMut([D::Item<'_>; K])) {
        while let Some(items) = self.fetch_next() {
            f(items);
        }
    }
}

impl<D: QueryData, const K: usize> std::fmt::Debug for CombinationsMut<'_, D, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CombinationsMut")
            .field("k", &K)
            .field("done", &self.fetches.positions.is_done())
            .finish()
    }
}
