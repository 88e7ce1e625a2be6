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

use std::marker::PhantomData;

use crate::entity::disabled;
use crate::entity::{Archetype, Entities, Entity};

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
        self.ids().into_iter().flat_map(move |(ids, filter)| {
            entities
                .archetype_list()
                .iter()
                .filter(move |archetype| visits::<D, F>(ids, filter, archetype))
                .flat_map(move |archetype| {
                    // SAFETY: the archetype matches; the node holds the
                    // filter's lanes (`new`'s contract).
                    let rows = unsafe { F::fetch(filter, archetype, last_run) };
                    (0..archetype.len())
                        // SAFETY: every row below `len` is live.
                        .filter(move |&row| !F::BY_ROW || unsafe { F::row(rows, row) })
                        .map(move |row| (archetype, row))
                })
        })
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
        // SAFETY: the archetype matches; `row` is live; the query is
        // consumed, so no other item of it exists (`new`'s contract holds
        // the lanes).
        Some(unsafe { D::item(D::fetch(ids, self.entities, archetype, self.ticks()), row) })
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
        let archetypes = self.entities.archetype_list().iter();
        for archetype in archetypes.filter(|archetype| visits::<D, F>(ids, filter, archetype)) {
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

    /// Every matching entity's item, through `&mut self` (the items may
    /// write).
    pub fn iter_mut(&mut self) -> QueryIter<'_, D, F> {
        QueryIter::new(self)
    }

    /// How many entities match.
    pub fn count(&self) -> usize {
        self.ids().map_or(0, |(ids, filter)| {
            self.entities
                .archetype_list()
                .iter()
                .filter(|archetype| visits::<D, F>(ids, filter, archetype))
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
        // SAFETY: the archetype matches; `row` is the entity's live row.
        if F::BY_ROW && !unsafe { F::row(F::fetch(filter, archetype, self.last_run), row) } {
            return Err(filtered_out);
        }
        Ok((archetype, row, ids))
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
        // SAFETY: the archetype matches; `row` is live; the caller keeps
        // the row's items apart.
        unsafe { D::item(D::fetch(ids, self.entities, archetype, self.ticks()), row) }
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

/// Whether a query of `D` filtered by `F` sees disabled entities: it names
/// [`Disabled`](crate::Disabled) or allows it.
#[inline]
pub(crate) fn sees_disabled<D: QueryData, F: QueryFilter>() -> bool {
    D::sees_disabled() || F::sees_disabled()
}

/// The items of a query, archetype by archetype (allocates nothing).
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
}

impl<'q, D: QueryData, F: QueryFilter> QueryIter<'q, D, F> {
    fn new(query: &'q Query<'_, D, F>) -> Self {
        Self {
            ids: query.ids(),
            entities: query.entities,
            archetypes: query.entities.archetype_list().iter(),
            current: None,
            row: 0,
            last_run: query.last_run,
            tick: query.tick,
        }
    }
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
            if visits::<D, F>(ids, filter, archetype) {
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

    /// The rest of the items, archetype by archetype, each walked in one
    /// tight loop: what `count`, `sum`, `for_each` and the other consuming
    /// adaptors run, without `next`'s per-item state.
    #[inline]
    fn fold<B, G>(self, init: B, mut g: G) -> B
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
            if visits::<D, F>(ids, filter, archetype) {
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
