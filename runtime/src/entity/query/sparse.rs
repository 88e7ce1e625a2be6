//! The sparse walk: how a query that names a sparse-set component
//! ([`StorageType::SparseSet`](crate::StorageType)) finds its rows.
//!
//! A sparse component is in no archetype (sluice's archetype is its table,
//! so adding one would move the row), so archetypes cannot say which of
//! their rows have it. A query decides once per run, from its ids, which
//! walk it takes:
//!
//! - naming no sparse component: the table walk (`Query::for_each`,
//!   `QueryIter`), with no row lookups and nothing of this module in its
//!   loop;
//! - requiring one (`&S`, `&mut S`, `Ref<S>`, `With<S>`, `Changed<S>`,
//!   `Added<S>`): the entities of that component's set, each looked up
//!   where it lives, so a query of a component few entities have visits
//!   only those;
//! - naming one only optionally (`Option<&S>`, `Has<S>`, `Without<S>`,
//!   inside `Or` or `AnyOf`): every row of the archetypes the query
//!   matches, each row's sparse components looked up in their sets.
//!
//! Both sparse walks ask the filter ([`QueryFilter::sparse_row`]) and the
//! data ([`QueryData::sparse_item`]) row by row, but for the set walk's
//! dense case ([`DenseItems`]): when every data term is the walked set's
//! component, the filter keeps the whole set, and no entity the query
//! would hide is disabled, the items are the set's column read in order.

use super::{QueryData, QueryFilter, RunTicks, sees_disabled, visits};
use crate::entity::{Archetype, ComponentId, Entities, Entity};

/// Where a sparse walk takes its candidate rows from.
enum Source<'w> {
    /// Every row of every archetype the query matches.
    Archetypes {
        list: std::slice::Iter<'w, Archetype>,
        row: usize,
        len: usize,
    },
    /// The entities of one sparse component's set.
    Set(std::slice::Iter<'w, Entity>),
}

/// How a run of a query walks its rows, decided once per run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Walk {
    /// No term names a sparse-set component.
    Tables,
    /// Some term names one, none requires one: every matching row.
    Rows,
    /// A term requires this sparse-set component: its set's entities.
    Set(ComponentId),
}

impl Walk {
    /// The walk of a query with these ids.
    #[inline]
    pub(crate) fn of<D: QueryData, F: QueryFilter>(ids: D::Ids, filter: F::Ids) -> Self {
        if !D::names_sparse(ids) && !F::names_sparse(filter) {
            return Self::Tables;
        }
        match D::required_sparse(ids).or_else(|| F::required_sparse(filter)) {
            Some(id) => Self::Set(id),
            None => Self::Rows,
        }
    }
}

/// The items of a set walk that needs no entity's location: the set's
/// column read in order, `item(fetch, i)` for each of its indexes.
pub(crate) struct DenseItems<'w, D: QueryData> {
    fetch: D::Fetch<'w>,
    next: usize,
    len: usize,
}

impl<'w, D: QueryData> DenseItems<'w, D> {
    /// The dense items of `walk` (the set walk of a query with these ids),
    /// if it has them: every data term is the set's component
    /// ([`QueryData::reads_only_set`]), the filter keeps every entity of
    /// the set ([`QueryFilter::keeps_set`]), and either the query sees
    /// disabled entities or none is disabled. Then the row-by-row walk
    /// would keep exactly the set's entities, in the set's order: each is
    /// alive (a despawn leaves every set), its archetype is not empty (it
    /// is there), every term and filter matches every archetype (they name
    /// only the set's component), and no archetype is hidden.
    ///
    /// # Safety
    /// As for [`SparseRows::new`]: the node holds the data's lanes while
    /// the items live.
    unsafe fn of<F: QueryFilter>(
        entities: &'w Entities,
        (ids, filter): (D::Ids, F::Ids),
        ticks: RunTicks,
        walk: Walk,
    ) -> Option<Self> {
        let Walk::Set(id) = walk else {
            return None;
        };
        let dense = D::reads_only_set(ids, id)
            && F::keeps_set(filter, id)
            && (sees_disabled::<D, F>() || !entities.any_disabled());
        if !dense {
            return None;
        }
        let len = entities.sparse_set(id)?.entities().len();
        // Any archetype will do (the fetch reads only the set); the empty
        // one is always there.
        let archetype = entities.archetype_list().first()?;
        if !D::matches(ids, archetype) {
            return None;
        }
        // SAFETY: the archetype matches `ids`; the node holds the lanes
        // (caller). Fetching hands out no item.
        let fetch = unsafe { D::fetch(ids, entities, archetype, ticks) };
        Some(Self {
            fetch,
            next: 0,
            len,
        })
    }

    /// How many items are left.
    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.len - self.next
    }
}

impl<'w, D: QueryData> Iterator for DenseItems<'w, D> {
    type Item = D::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<D::Item<'w>> {
        if self.next >= self.len {
            return None;
        }
        let index = self.next;
        self.next += 1;
        // SAFETY: `index` is below the set's length (`of`; the set holds
        // still while the query borrows the store shared), and handed out
        // once: `next` only grows. Every term reads the set's column at the
        // set's index (`reads_only_set`), as `sparse_item` would for the
        // entity there; the node holds the lanes (`of`'s contract).
        Some(unsafe { D::item(self.fetch, index) })
    }

    #[inline]
    fn fold<B, G: FnMut(B, D::Item<'w>) -> B>(self, init: B, mut g: G) -> B {
        let mut acc = init;
        for index in self.next..self.len {
            // SAFETY: as in `next`: each index below the set's length,
            // once.
            acc = g(acc, unsafe { D::item(self.fetch, index) });
        }
        acc
    }
}

/// The rows a sparse walk keeps (by the filter; the data's own sparse
/// components are left to [`QueryData::sparse_item`] or
/// [`QueryData::sparse_lacks`]): each with its archetype, row, entity and
/// the data's fetch for the archetype.
pub(crate) struct SparseRows<'w, D: QueryData, F: QueryFilter> {
    entities: &'w Entities,
    pub(crate) ids: D::Ids,
    filter: F::Ids,
    ticks: RunTicks,
    source: Source<'w>,
    /// The archetype of the last candidate, and the data's fetch for it
    /// (`None`: the query does not visit it).
    current: Option<(&'w Archetype, Option<D::Fetch<'w>>)>,
    /// The walk's items read straight from the set, when it has them
    /// ([`DenseItems::of`]): the item walks (`for_each`, `iter`, `count`)
    /// take these instead; the rows themselves (this iterator) stay the
    /// row-by-row walk.
    pub(crate) dense: Option<DenseItems<'w, D>>,
}

impl<'w, D: QueryData, F: QueryFilter> SparseRows<'w, D, F> {
    /// The rows of `walk` (not [`Walk::Tables`]).
    ///
    /// # Safety
    /// The node holds the lanes the data and the filter declare for as
    /// long as the rows' fetches are used (`Query::new`'s contract).
    pub(crate) unsafe fn new(
        entities: &'w Entities,
        (ids, filter): (D::Ids, F::Ids),
        ticks: RunTicks,
        walk: Walk,
    ) -> Self {
        let source = match walk {
            Walk::Set(id) => Source::Set(
                entities
                    .sparse_set(id)
                    .map_or(&[][..], |set| set.entities())
                    .iter(),
            ),
            Walk::Rows | Walk::Tables => Source::Archetypes {
                list: entities.archetype_list().iter(),
                row: 0,
                len: 0,
            },
        };
        // SAFETY: the caller's.
        let dense = unsafe { DenseItems::of::<F>(entities, (ids, filter), ticks, walk) };
        Self {
            entities,
            ids,
            filter,
            ticks,
            source,
            current: None,
            dense,
        }
    }

    /// The data's fetch for `archetype`, if the query visits it.
    #[inline]
    fn fetch(&self, archetype: &'w Archetype) -> Option<D::Fetch<'w>> {
        visits::<D, F>(self.ids, self.filter, archetype).then(|| {
            // SAFETY: the archetype matches the ids; the node holds the
            // lanes (`new`'s contract). Fetching hands out no item.
            unsafe { D::fetch(self.ids, self.entities, archetype, self.ticks) }
        })
    }
}

impl<'w, D: QueryData, F: QueryFilter> Iterator for SparseRows<'w, D, F> {
    type Item = (&'w Archetype, usize, Entity, D::Fetch<'w>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (archetype, row, entity) = match &mut self.source {
                Source::Archetypes { list, row, len } => {
                    if *row < *len
                        && let Some((archetype, _)) = self.current
                    {
                        let at = *row;
                        *row += 1;
                        (archetype, at, archetype.entities()[at])
                    } else {
                        let archetype = list.next()?;
                        let fetch = visits::<D, F>(self.ids, self.filter, archetype).then(|| {
                            // SAFETY: as in `fetch`.
                            unsafe { D::fetch(self.ids, self.entities, archetype, self.ticks) }
                        });
                        *row = 0;
                        *len = if fetch.is_some() { archetype.len() } else { 0 };
                        self.current = Some((archetype, fetch));
                        continue;
                    }
                }
                Source::Set(set) => {
                    let entity = *set.next()?;
                    let Some((archetype, row)) = self.entities.location_of(entity) else {
                        continue;
                    };
                    let known = self
                        .current
                        .is_some_and(|(last, _)| std::ptr::eq(last, archetype));
                    if !known {
                        self.current = Some((archetype, self.fetch(archetype)));
                    }
                    (archetype, row, entity)
                }
            };
            let Some((_, Some(fetch))) = self.current else {
                continue;
            };
            // SAFETY: the archetype matches (it has a fetch), `row` is a
            // live row of it; the node holds the filter's lanes.
            let kept = unsafe {
                F::sparse_row(
                    self.filter,
                    self.entities,
                    archetype,
                    row,
                    entity,
                    self.ticks.last_run,
                )
            };
            if kept {
                return Some((archetype, row, entity, fetch));
            }
        }
    }
}
