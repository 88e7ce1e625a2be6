//! Queries as system parameters: `Query<(&Pos, &mut Vel)>`,
//! `Query<(Entity, &Hp), With<Enemy>>`, `Without<T>`, `Option<&T>`.
//!
//! Each component a query names is a lane to the planner ([`Lane<C>`]):
//! `&C` shared, `&mut C` gated, so systems writing different components run
//! together and the one ordering rule applies unchanged. A query also reads
//! the world's entity store shared; structural changes happen only at the
//! boundary (through `Commands`) or with `&mut World`, never while systems
//! run, so the archetypes and columns it walks hold still.
//!
//! - `data.rs`: what a query yields per entity ([`QueryData`]).
//! - `change.rs`: the items that write or read with change ticks
//!   ([`Mut`], [`Ref`]).
//! - `filter.rs`: which archetypes it visits ([`QueryFilter`]).
//! - `param.rs`: the [`Param`](crate::system::Param) impl.
//! - `par.rs`: parallel iteration on the world's pool.
//! - `has.rs`, `any_of.rs`, `or.rs`: `Has<T>`, `AnyOf<(..)>`, `Or<(..)>`.
//! - `single.rs`: `Single<D, F>` and `Populated<D, F>`, which skip their
//!   system when there is not exactly one match, or none.
//! - `many.rs`: `get_many`, `get_many_mut`, `iter_many`.
//! - `combinations.rs`: `iter_combinations`, `iter_combinations_mut`.
//! - `sparse.rs`: the sparse walk of a query naming a sparse-set
//!   component, chosen once per run.

mod any_of;
mod change;
mod combinations;
mod cursor;
mod data;
mod error;
mod filter;
mod has;
mod many;
mod or;
mod par;
mod param;
mod removed;
mod single;
mod sparse;

use std::marker::PhantomData;

use crate::entity::disabled;
use crate::entity::{Archetype, Entities, Entity};
use sparse::SparseRows;
pub(crate) use sparse::Walk;

pub use change::{Mut, ReadFetch, Ref, RunTicks, WriteFetch};
pub(crate) use cursor::{ChangeRun, current as change_cursor};
pub use data::{Lane, QueryData, ReadOnlyQueryData};
pub(crate) use data::{assert_no_alias, column_of, lacks};
pub use error::QueryEntityError;
pub use filter::{Added, Changed, QueryFilter, With, Without};
pub use removed::Removed;
pub use {
    any_of::AnyOf,
    combinations::{Combinations, CombinationsMut},
    has::Has,
    many::IterMany,
    or::Or,
    single::{Populated, Single},
};

/// Every entity with the components `D` names (and passing `F`), as a
/// system parameter. Iterate with [`iter`](Self::iter) (read-only data),
/// [`iter_mut`](Self::iter_mut) or [`for_each`](Self::for_each); reach one
/// entity with [`get`](Self::get) / [`get_mut`](Self::get_mut).
///
/// ```
/// use sluice::{Entity, NodeBuilder, Query, With, World};
///
/// struct Pos(f32);
/// struct Vel(f32);
/// struct Enemy;
///
/// let mut world = World::new();
/// world.spawn((Pos(0.0), Vel(2.0)));
/// let foe = world.spawn((Pos(5.0), Vel(-1.0), Enemy));
/// world.add_system(NodeBuilder::new("move").system(|mut moving: Query<(&mut Pos, &Vel)>| {
///     moving.for_each(|(mut pos, vel)| pos.0 += vel.0);
/// }));
/// world.run_iteration().unwrap();
/// assert_eq!(world.entity(foe).unwrap().get::<Pos>().unwrap().0, 4.0);
/// ```
pub struct Query<'w, D: QueryData, F: QueryFilter = ()> {
    entities: &'w Entities,
    /// The system's change cursor: its last run's tick.
    last_run: u32,
    /// This run's tick: `&mut C` items are marked changed at it.
    tick: u32,
    _marker: PhantomData<fn() -> (D, F)>,
}

impl<D: QueryData, F: QueryFilter> std::fmt::Debug for Query<'_, D, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("data", &std::any::type_name::<D>())
            .field("filter", &std::any::type_name::<F>())
            .field("matching", &self.count())
            .finish()
    }
}

impl<D: QueryData, F: QueryFilter> std::fmt::Debug for QueryIter<'_, D, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryIter")
            .field("row", &self.row)
            .finish_non_exhaustive()
    }
}

impl<'w, D: QueryData, F: QueryFilter> Query<'w, D, F> {
    /// A query over `entities`.
    ///
    /// # Safety
    /// The caller holds the lanes `D` declares (shared or gated as declared)
    /// for as long as the query lives, and no `&mut Entities` exists.
    pub(crate) unsafe fn new(entities: &'w Entities) -> Self {
        let (last_run, tick) = cursor::current(|| entities.run_tick());
        Self {
            entities,
            last_run,
            tick,
            _marker: PhantomData,
        }
    }

    /// A query over a store held exclusively (between iterations): its
    /// writes take a fresh tick, and its `Changed`/`Added` filters see every
    /// row (it has no cursor of its own: it compares as a reader that never
    /// ran, however late it is made).
    pub(crate) fn exclusive(entities: &'w mut Entities) -> Self {
        let tick = entities.advance_tick();
        Self {
            entities,
            last_run: Entities::unseen_cursor(tick),
            tick,
            _marker: PhantomData,
        }
    }

    /// The ticks its items compare and stamp with.
    fn ticks(&self) -> RunTicks {
        RunTicks {
            last_run: self.last_run,
            this_run: self.tick,
        }
    }

    /// A query that only looks at which rows match, taking no tick (its
    /// filters compare against the running body's cursor): what
    /// [`Single`] and [`Populated`] ask before the body runs.
    ///
    /// # Safety
    /// As for [`new`](Self::new); the query hands out no item (only
    /// [`first_rows`](Self::first_rows) is called on it).
    pub(crate) unsafe fn looking(entities: &'w Entities) -> Self {
        Self {
            entities,
            last_run: cursor::peek(entities),
            tick: entities.tick(),
            _marker: PhantomData,
        }
    }

    /// The archetype and row of each matching entity, in iteration order.
    fn matching_rows(&self) -> impl Iterator<Item = (&'w Archetype, usize)> + '_ {
        let entities: &'w Entities = self.entities;
        let last_run = self.last_run;
        if let Some(ids) = self.ids()
            && Walk::of::<D, F>(ids.0, ids.1) != Walk::Tables
        {
            // SAFETY: the node holds the lanes (`new`'s contract).
            let rows = unsafe { self.sparse_rows(ids) };
            let rows = rows
                .filter(move |&(_, _, entity, _)| {
                    D::sparse_lacks(ids.0, entities, entity).is_none()
                })
                .map(|(archetype, row, _, _)| (archetype, row));
            return Either::Sparse(rows);
        }
        Either::Tables(self.ids().into_iter().flat_map(move |(ids, filter)| {
            entities
                .archetype_list()
                .iter()
                .filter(move |archetype| walks::<D, F>(ids, filter, archetype, last_run))
                .flat_map(move |archetype| {
                    // SAFETY: the archetype matches; the node holds the
                    // filter's lanes (`new`'s contract).
                    let rows = unsafe { F::fetch(filter, archetype, last_run) };
                    (0..archetype.len())
                        // SAFETY: every row below `len` is live.
                        .filter(move |&row| !F::BY_ROW || unsafe { F::row(rows, row) })
                        .map(move |row| (archetype, row))
                })
        }))
    }

    /// The rows of this run's sparse walk.
    ///
    /// # Safety
    /// As for [`new`](Self::new): the node holds the lanes while the rows'
    /// fetches are used.
    unsafe fn sparse_rows(&self, ids: (D::Ids, F::Ids)) -> SparseRows<'w, D, F> {
        // SAFETY: the caller's.
        unsafe {
            SparseRows::new(
                self.entities,
                ids,
                self.ticks(),
                Walk::of::<D, F>(ids.0, ids.1),
            )
        }
    }

    /// How many entities match, counting no further than `limit`.
    pub(crate) fn first_rows(&self, limit: usize) -> usize {
        self.matching_rows().take(limit).count()
    }

    /// The one matching entity's item, or `None` when there is none or
    /// more than one; consumes the query, so the item is its only one.
    pub(crate) fn into_single(self) -> Option<D::Item<'w>> {
        let mut rows = self.matching_rows();
        let (archetype, row) = rows.next()?;
        if rows.next().is_some() {
            return None;
        }
        let (ids, _) = self.ids()?;
        let entity = archetype.entities()[row];
        // SAFETY: the archetype matches; `row` is live (with every sparse
        // component the data requires); the query is consumed, so no other
        // item of it exists (`new`'s contract holds the lanes).
        unsafe {
            let fetch = D::fetch(ids, self.entities, archetype, self.ticks());
            D::sparse_item(ids, self.entities, fetch, row, entity)
        }
    }

    /// The data's and the filter's ids, or `None` when nothing can match.
    fn ids(&self) -> Option<(D::Ids, F::Ids)> {
        let components = self.entities.components();
        Some((D::ids(components)?, F::ids(components)))
    }

    /// Calls `f` with every matching entity's item.
    pub fn for_each(&mut self, mut f: impl FnMut(D::Item<'_>)) {
        let Some((ids, filter)) = self.ids() else {
            return;
        };
        if Walk::of::<D, F>(ids, filter) != Walk::Tables {
            return self.for_each_sparse((ids, filter), f);
        }
        let archetypes = self.entities.archetype_list().iter();
        for archetype in
            archetypes.filter(|archetype| walks::<D, F>(ids, filter, archetype, self.last_run))
        {
            // SAFETY: `archetype` matches `ids`; the query holds its lanes
            // (`new`'s contract).
            let fetch = unsafe { D::fetch(ids, self.entities, archetype, self.ticks()) };
            // SAFETY: as for the data.
            let rows = unsafe { F::fetch(filter, archetype, self.last_run) };
            let len = archetype.len();
            let f = &mut f;
            let rows_of = |fetch| {
                for row in 0..len {
                    // SAFETY: `row` is live; the node holds the filter's
                    // lanes.
                    if F::BY_ROW && !unsafe { F::row(rows, row) } {
                        continue;
                    }
                    // SAFETY: `row` is live, and each row's item is handed
                    // out once while `&mut self` is held.
                    f(unsafe { D::item(fetch, row) });
                }
            };
            // SAFETY: `len` is the archetype's; while `&mut self` is held no
            // item of this query is alive but those `rows_of` makes, and the
            // node holds the lanes, so nothing else refers to the rows.
            unsafe { D::scoped(fetch, len, rows_of) };
        }
    }

    /// [`for_each`](Self::for_each) on the sparse walk, out of line so the
    /// table walk's loop stays as it is.
    #[inline(never)]
    fn for_each_sparse(&mut self, ids: (D::Ids, F::Ids), mut f: impl FnMut(D::Item<'_>)) {
        let entities: &'w Entities = self.entities;
        // SAFETY: the query holds its lanes (`new`'s contract).
        let mut rows = unsafe { self.sparse_rows(ids) };
        if let Some(dense) = rows.dense.take() {
            return dense.for_each(f);
        }
        for (_, row, entity, fetch) in rows {
            // SAFETY: `row` is live, and each row's item is handed out once
            // while `&mut self` is held (a set lists an entity once).
            if let Some(item) = unsafe { D::sparse_item(ids.0, entities, fetch, row, entity) } {
                f(item);
            }
        }
    }

    /// Every matching entity's item, through `&mut self` (the items may
    /// write).
    pub fn iter_mut(&mut self) -> QueryIter<'_, D, F> {
        QueryIter::new(self)
    }

    /// How many entities match.
    pub fn count(&self) -> usize {
        if let Some(ids) = self.ids()
            && Walk::of::<D, F>(ids.0, ids.1) != Walk::Tables
        {
            // SAFETY: the node holds the lanes; no item is made.
            let rows = unsafe { self.sparse_rows(ids) };
            if let Some(dense) = &rows.dense {
                return dense.remaining();
            }
            return rows
                .filter(|&(_, _, entity, _)| {
                    D::sparse_lacks(ids.0, self.entities, entity).is_none()
                })
                .count();
        }
        self.ids().map_or(0, |(ids, filter)| {
            self.entities
                .archetype_list()
                .iter()
                .filter(|archetype| walks::<D, F>(ids, filter, archetype, self.last_run))
                .map(|archetype| {
                    if !F::BY_ROW {
                        return archetype.len();
                    }
                    // SAFETY: the archetype matches.
                    let rows = unsafe { F::fetch(filter, archetype, self.last_run) };
                    (0..archetype.len())
                        // SAFETY: every row below `len` is live; the node
                        // holds the filter's lanes.
                        .filter(|&row| unsafe { F::row(rows, row) })
                        .count()
                })
                .sum()
        })
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// `entity`'s item, or why there is none: it is not alive here, lacks
    /// a component (named), or the filter leaves it out.
    pub fn get_mut(&mut self, entity: Entity) -> Result<D::Item<'_>, QueryEntityError> {
        self.item_of(entity)
    }

    fn item_of<'q>(&'q self, entity: Entity) -> Result<D::Item<'q>, QueryEntityError> {
        let (archetype, row, ids) = self.locate(entity)?;
        // SAFETY: `locate` found the entity's live row in a matching
        // archetype; the caller holds `&self` for read-only data or
        // `&mut self` otherwise.
        Ok(unsafe { self.item_at(archetype, row, ids) })
    }

    /// `entity`'s archetype and row when the query has an item for it, or
    /// why not; hands out nothing.
    #[inline]
    fn locate(&self, entity: Entity) -> Result<(&'w Archetype, usize, D::Ids), QueryEntityError> {
        self.locate_with(self.ids(), entity)
    }

    /// [`locate`](Self::locate) with the query's [`ids`](Self::ids) looked
    /// up once by the caller (a lookup by type each), for several
    /// entities.
    #[inline]
    fn locate_with(
        &self,
        ids: Option<(D::Ids, F::Ids)>,
        entity: Entity,
    ) -> Result<(&'w Archetype, usize, D::Ids), QueryEntityError> {
        let entities: &'w Entities = self.entities;
        let (archetype, row) = entities
            .location_of(entity)
            .ok_or(QueryEntityError::NoSuchEntity(entity))?;
        if disabled::hides(archetype) && !sees_disabled::<D, F>() {
            return Err(QueryEntityError::Disabled(entity));
        }
        let Some((ids, filter)) = ids.filter(|&(ids, _)| D::matches(ids, archetype)) else {
            // Only now name what is missing (`missing` says `None` exactly
            // when `matches` says yes; the fallback only keeps this total).
            let component =
                D::missing(entities.components(), archetype).unwrap_or(std::any::type_name::<D>());
            return Err(QueryEntityError::MissingComponent { entity, component });
        };
        let filtered_out = QueryEntityError::FilteredOut {
            entity,
            filter: std::any::type_name::<F>(),
        };
        if archetype.is_empty() || !F::matches(filter, archetype) {
            return Err(filtered_out);
        }
        if Walk::of::<D, F>(ids, filter) != Walk::Tables {
            if let Some(component) = D::sparse_lacks(ids, entities, entity) {
                return Err(QueryEntityError::MissingComponent { entity, component });
            }
            // SAFETY: the archetype matches; `row` is the entity's live
            // row; the node holds the filter's lanes.
            let kept =
                unsafe { F::sparse_row(filter, entities, archetype, row, entity, self.last_run) };
            return if kept {
                Ok((archetype, row, ids))
            } else {
                Err(filtered_out)
            };
        }
        // SAFETY: the archetype matches; `row` is the entity's live row.
        if F::BY_ROW && !unsafe { F::row(F::fetch(filter, archetype, self.last_run), row) } {
            return Err(filtered_out);
        }
        Ok((archetype, row, ids))
    }

    /// The data's and filter's ids, looked up once for many
    /// [`get_unchecked_with`](Self::get_unchecked_with) calls.
    #[inline]
    pub(crate) fn prepared_ids(&self) -> Option<(D::Ids, F::Ids)> {
        self.ids()
    }

    /// `entity`'s item through `&self`, for a walk over many entities of
    /// few archetypes (the hierarchy's transform propagation, which hands
    /// disjoint rows to several threads): `cache` keeps the fetches of the
    /// last few archetypes matched ([`FetchCache`]), so an entity of one
    /// of them costs its location and the item only (the checks and column
    /// lookups were made for the archetype once).
    ///
    /// # Safety
    /// While the item lives, no other live item of this query is of the
    /// same row when the data writes (the query's lanes are held, as for
    /// every query, by its node); `cache` was filled only by calls on this
    /// query with these `ids` (from [`prepared_ids`](Self::prepared_ids)).
    #[inline]
    pub(crate) unsafe fn get_cached(
        &self,
        ids: Option<(D::Ids, F::Ids)>,
        cache: &mut FetchCache<'w, D>,
        entity: Entity,
    ) -> Result<D::Item<'w>, QueryEntityError> {
        let entities: &'w Entities = self.entities;
        if !F::BY_ROW
            && let Some((at, row)) = entities.location_of(entity)
            && let Some(fetch) = cache.find(at)
        {
            // SAFETY: the archetype matched this query when cached
            // (archetypes change only through `&mut Entities`), the filter
            // keeps whole archetypes, `row` is live; the caller keeps the
            // row's items apart.
            return Ok(unsafe { D::item(fetch, row) });
        }
        let (archetype, row, data) = self.locate_with(ids, entity)?;
        // SAFETY: `locate_with` found the live row in a matching archetype.
        let fetch = unsafe { D::fetch(data, entities, archetype, self.ticks()) };
        cache.keep(archetype, fetch);
        // SAFETY: as above; the caller keeps the row's items apart.
        Ok(unsafe { D::item(fetch, row) })
    }

    /// The item of `row` of `archetype`.
    ///
    /// # Safety
    /// `locate` returned `archetype`, `row` and `ids`, and no other live
    /// item of this query is of the same row when the data writes.
    #[inline]
    unsafe fn item_at<'q>(
        &'q self,
        archetype: &'q Archetype,
        row: usize,
        ids: D::Ids,
    ) -> D::Item<'q> {
        let entity = archetype.entities()[row];
        // SAFETY: the archetype matches; `row` is live, with every sparse
        // component the data requires (`locate`); the caller keeps the
        // row's items apart.
        unsafe {
            let fetch = D::fetch(ids, self.entities, archetype, self.ticks());
            D::sparse_item(ids, self.entities, fetch, row, entity)
                .expect("a located row has the data's sparse components")
        }
    }
}

impl<'w, D: ReadOnlyQueryData, F: QueryFilter> Query<'w, D, F> {
    /// Every matching entity's item.
    pub fn iter(&self) -> QueryIter<'_, D, F> {
        QueryIter::new(self)
    }

    /// `entity`'s item, or why there is none: it is not alive here, lacks
    /// a component (named), or the filter leaves it out.
    pub fn get(&self, entity: Entity) -> Result<D::Item<'_>, QueryEntityError> {
        self.item_of(entity)
    }
}

/// One of two iterators of one item type: a query's rows on the table
/// walk or on the sparse walk.
enum Either<T, S> {
    Tables(T),
    Sparse(S),
}

impl<I, T: Iterator<Item = I>, S: Iterator<Item = I>> Iterator for Either<T, S> {
    type Item = I;

    #[inline]
    fn next(&mut self) -> Option<I> {
        match self {
            Self::Tables(rows) => rows.next(),
            Self::Sparse(rows) => rows.next(),
        }
    }
}

/// Whether a query of `D` filtered by `F` visits `archetype`.
fn visits<D: QueryData, F: QueryFilter>(
    ids: D::Ids,
    filter: F::Ids,
    archetype: &Archetype,
) -> bool {
    !archetype.is_empty()
        && (!disabled::hides(archetype) || sees_disabled::<D, F>())
        && D::matches(ids, archetype)
        && F::matches(filter, archetype)
}

/// Whether a table walk enters `archetype`: the query visits it, and the
/// filter may keep one of its rows for a system whose cursor is
/// `last_run` (a `Changed<T>` scan skips a column no one wrote since).
#[inline]
pub(super) fn walks<D: QueryData, F: QueryFilter>(
    ids: D::Ids,
    filter: F::Ids,
    archetype: &Archetype,
    last_run: u32,
) -> bool {
    visits::<D, F>(ids, filter, archetype) && !F::refuses_all(filter, archetype, last_run)
}

/// Whether a query of `D` filtered by `F` sees disabled entities: it names
/// [`Disabled`](crate::Disabled) or allows it.
#[inline]
pub(crate) fn sees_disabled<D: QueryData, F: QueryFilter>() -> bool {
    D::sees_disabled() || F::sees_disabled()
}

/// The items of a query, archetype by archetype (allocates nothing, but
/// for the sparse walk of a query naming a sparse-set component, which is
/// boxed once per iterator).
pub struct QueryIter<'q, D: QueryData, F: QueryFilter> {
    /// `None`: nothing can match.
    ids: Option<(D::Ids, F::Ids)>,
    entities: &'q Entities,
    archetypes: std::slice::Iter<'q, Archetype>,
    /// The archetype being walked: its columns, the filter's state, and
    /// its length.
    current: Option<(D::Fetch<'q>, F::Fetch<'q>, usize)>,
    row: usize,
    last_run: u32,
    tick: u32,
    /// The sparse walk, when the query names a sparse-set component (then
    /// `ids` is `None`, so the table walk's `next` hands over at once).
    /// Boxed: the table walk's state must never have its address taken,
    /// or it leaves the registers (29 instructions a row instead of 10);
    /// handing the walk its own allocation keeps it a loaded pointer.
    sparse: Option<Box<SparseRows<'q, D, F>>>,
}

impl<'q, D: QueryData, F: QueryFilter> QueryIter<'q, D, F> {
    fn new(query: &'q Query<'_, D, F>) -> Self {
        let mut ids = query.ids();
        let sparse = match ids {
            Some(found) if Walk::of::<D, F>(found.0, found.1) != Walk::Tables => {
                ids = None;
                // SAFETY: the query holds its lanes (`Query::new`'s
                // contract) while the iterator borrows it.
                Some(Box::new(unsafe { query.sparse_rows(found) }))
            }
            _ => None,
        };
        Self {
            ids,
            entities: query.entities,
            archetypes: query.entities.archetype_list().iter(),
            current: None,
            row: 0,
            last_run: query.last_run,
            tick: query.tick,
            sparse,
        }
    }
}

/// The next item of a sparse walk (none when nothing can match). It takes
/// the walk alone, not the iterator (see `QueryIter::sparse`).
#[inline(never)]
fn next_sparse<'q, D: QueryData, F: QueryFilter>(
    entities: &'q Entities,
    rows: Option<&mut SparseRows<'q, D, F>>,
) -> Option<D::Item<'q>> {
    let rows = rows?;
    if let Some(dense) = &mut rows.dense {
        return dense.next();
    }
    let ids = rows.ids;
    rows.find_map(|(_, row, entity, fetch)| {
        // SAFETY: `row` is live, and handed out once per borrow of the
        // query (a set lists an entity once).
        unsafe { D::sparse_item(ids, entities, fetch, row, entity) }
    })
}

impl<D: QueryData, F: QueryFilter> QueryIter<'_, D, F> {
    /// The ticks its items compare and stamp with.
    fn ticks(&self) -> RunTicks {
        RunTicks {
            last_run: self.last_run,
            this_run: self.tick,
        }
    }
}

impl<'q, D: QueryData, F: QueryFilter> Iterator for QueryIter<'q, D, F> {
    type Item = D::Item<'q>;

    #[inline]
    fn next(&mut self) -> Option<D::Item<'q>> {
        if self.ids.is_none() {
            return next_sparse(self.entities, self.sparse.as_deref_mut());
        }
        self.next_in_tables()
    }

    /// Chooses the walk once, not per item: the table walk's loop then
    /// holds no call (a call there would make every row save the caller's
    /// registers, the consumer's accumulator among them).
    #[inline]
    fn fold<B, G: FnMut(B, D::Item<'q>) -> B>(mut self, init: B, g: G) -> B {
        if let Some(rows) = self.sparse.take() {
            return fold_sparse(self.entities, *rows, init, g);
        }
        self.fold_tables(init, g)
    }
}

/// [`QueryIter::fold`] on the sparse walk.
#[inline(never)]
fn fold_sparse<'q, D: QueryData, F: QueryFilter, B>(
    entities: &'q Entities,
    rows: SparseRows<'q, D, F>,
    init: B,
    mut g: impl FnMut(B, D::Item<'q>) -> B,
) -> B {
    if let Some(dense) = rows.dense {
        return dense.fold(init, g);
    }
    let ids = rows.ids;
    rows.fold(init, |acc, (_, row, entity, fetch)| {
        // SAFETY: `row` is live, and handed out once per borrow of the
        // query (a set lists an entity once).
        match unsafe { D::sparse_item(ids, entities, fetch, row, entity) } {
            Some(item) => g(acc, item),
            None => acc,
        }
    })
}

impl<'q, D: QueryData, F: QueryFilter> QueryIter<'q, D, F> {
    /// The next item of the table walk (none on the sparse walk, whose
    /// `ids` are `None`).
    #[inline]
    fn next_in_tables(&mut self) -> Option<D::Item<'q>> {
        let (ids, filter) = self.ids?;
        loop {
            if let Some((fetch, rows, len)) = self.current
                && self.row < len
            {
                let row = self.row;
                self.row += 1;
                // SAFETY: `row` is live; the node holds the filter's lanes.
                if F::BY_ROW && !unsafe { F::row(rows, row) } {
                    continue;
                }
                // SAFETY: `row` is live, and handed out once per borrow of
                // the query (`iter_mut` takes `&mut`, `iter` only read-only
                // data).
                return Some(unsafe { D::item(fetch, row) });
            }
            let archetype = self.archetypes.next()?;
            if walks::<D, F>(ids, filter, archetype, self.last_run) {
                // SAFETY: the archetype matches `ids`; the query holds its
                // lanes (`Query::new`'s contract).
                let fetch = unsafe { D::fetch(ids, self.entities, archetype, self.ticks()) };
                // SAFETY: as above.
                let rows = unsafe { F::fetch(filter, archetype, self.last_run) };
                self.current = Some((fetch, rows, archetype.len()));
                self.row = 0;
            }
        }
    }

    /// The rest of the table walk's items, archetype by archetype, each
    /// walked in one tight loop: what `count`, `sum`, `for_each` and the
    /// other consuming adaptors run, without `next`'s per-item state.
    #[inline]
    fn fold_tables<B, G>(self, init: B, mut g: G) -> B
    where
        G: FnMut(B, D::Item<'q>) -> B,
    {
        let Some((ids, filter)) = self.ids else {
            return init;
        };
        let ticks = self.ticks();
        let mut acc = init;
        let mut walk =
            |fetch: D::Fetch<'q>, rows: F::Fetch<'q>, from: usize, len: usize, mut acc| {
                for row in from..len {
                    // SAFETY: `row` is live; the node holds the filter's lanes.
                    if F::BY_ROW && !unsafe { F::row(rows, row) } {
                        continue;
                    }
                    // SAFETY: `row` is live, and handed out once per borrow of
                    // the query (as in `next`; `next` left off at `from`).
                    acc = g(acc, unsafe { D::item(fetch, row) });
                }
                acc
            };
        if let Some((fetch, rows, len)) = self.current {
            acc = walk(fetch, rows, self.row, len, acc);
        }
        for archetype in self.archetypes {
            if walks::<D, F>(ids, filter, archetype, self.last_run) {
                // SAFETY: the archetype matches `ids`; the query holds its
                // lanes (`Query::new`'s contract).
                let fetch = unsafe { D::fetch(ids, self.entities, archetype, ticks) };
                // SAFETY: as above.
                let rows = unsafe { F::fetch(filter, archetype, self.last_run) };
                acc = walk(fetch, rows, 0, archetype.len(), acc);
            }
        }
        acc
    }
}

/// How many archetypes a [`FetchCache`] remembers: a hierarchy's walk
/// alternates between a few (parents with `Children`, leaves without, a
/// marker on some roots), and refetching at each switch cost four column
/// lookups an entity.
const FETCH_CACHE_WAYS: usize = 4;

/// The fetches of the last few archetypes a walk of
/// [`Query::get_cached`] met, replaced oldest first.
pub(crate) struct FetchCache<'w, D: QueryData> {
    ways: [Option<(&'w Archetype, D::Fetch<'w>)>; FETCH_CACHE_WAYS],
    /// The way the next new archetype replaces.
    next: usize,
}

impl<D: QueryData> Default for FetchCache<'_, D> {
    fn default() -> Self {
        Self {
            ways: [None; FETCH_CACHE_WAYS],
            next: 0,
        }
    }
}

impl<'w, D: QueryData> FetchCache<'w, D> {
    /// The fetch kept for `archetype`, if any.
    #[inline]
    fn find(&self, archetype: &Archetype) -> Option<D::Fetch<'w>> {
        self.ways
            .iter()
            .flatten()
            .find(|(kept, _)| std::ptr::eq(*kept, archetype))
            .map(|&(_, fetch)| fetch)
    }

    /// Keeps `fetch` for `archetype`, in place of the oldest.
    #[inline]
    fn keep(&mut self, archetype: &'w Archetype, fetch: D::Fetch<'w>) {
        self.ways[self.next] = Some((archetype, fetch));
        self.next = (self.next + 1) % FETCH_CACHE_WAYS;
    }
}
