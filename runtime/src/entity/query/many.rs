//! Several entities' items at once: `get_many`, `get_many_mut` (which
//! refuses one entity twice) and `iter_many`.

use std::borrow::Borrow;

use crate::entity::query::{Query, QueryData, QueryEntityError, QueryFilter, ReadOnlyQueryData};
use crate::entity::{Archetype, Entity};

impl<D: ReadOnlyQueryData, F: QueryFilter> Query<'_, D, F> {
    /// The items of `entities`, in their order, or the first reason one
    /// has none (as [`get`](Self::get) gives it). An entity may be named
    /// more than once: the items only read.
    pub fn get_many<const N: usize>(
        &self,
        entities: [Entity; N],
    ) -> Result<[D::Item<'_>; N], QueryEntityError> {
        let ids = self.ids();
        let mut found = [None; N];
        for (slot, &entity) in found.iter_mut().zip(&entities) {
            *slot = Some(self.locate_with(ids, entity)?);
        }
        Ok(found.map(|place| {
            let (archetype, row, ids) = place.expect("every entity was located above");
            // SAFETY: each place came from `locate_with`; the data only
            // reads, so items of one row may live together.
            unsafe { self.item_at(archetype, row, ids) }
        }))
    }

    /// The items of those of `entities` the query has an item for, in
    /// their order, skipping the others (dead, lacking the data, or
    /// filtered out). An entity named twice yields twice.
    pub fn iter_many<I>(&self, entities: I) -> IterMany<'_, '_, D, F, I::IntoIter>
    where
        I: IntoIterator,
        I::Item: Borrow<Entity>,
    {
        IterMany {
            query: self,
            ids: self.ids(),
            entities: entities.into_iter(),
        }
    }
}

impl<D: QueryData, F: QueryFilter> Query<'_, D, F> {
    /// The items of `entities`, in their order, each of which may write,
    /// or the first reason one has none: as [`get_mut`](Self::get_mut)
    /// gives it, or
    /// [`QueryEntityError::AliasedMutability`] when an entity is named
    /// twice (two `&mut` to one row would alias). Nothing is handed out,
    /// and no row is marked changed, unless every entity has an item.
    pub fn get_many_mut<const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[D::Item<'_>; N], QueryEntityError> {
        let ids = self.ids();
        let mut found: [Option<(&Archetype, usize, D::Ids)>; N] = [None; N];
        for (index, &entity) in entities.iter().enumerate() {
            let place = self.locate_with(ids, entity)?;
            // Distinct live entities have distinct rows; comparing the
            // rows, not only the handles, is what rules out the alias.
            let twice = found[..index]
                .iter()
                .flatten()
                .any(|&(archetype, row, _)| std::ptr::eq(archetype, place.0) && row == place.1);
            if twice {
                return Err(QueryEntityError::AliasedMutability(entity));
            }
            found[index] = Some(place);
        }
        let this: &Self = self;
        Ok(found.map(|place| {
            let (archetype, row, ids) = place.expect("every entity was located above");
            // SAFETY: each place came from `locate_with`, and no two are the
            // same row (checked above); `&mut self` is held for the items'
            // life, so no other item of this query lives meanwhile.
            unsafe { this.item_at(archetype, row, ids) }
        }))
    }
}

/// The items of a list of entities ([`Query::iter_many`]), skipping the
/// entities the query has no item for.
pub struct IterMany<'q, 'w, D: ReadOnlyQueryData, F: QueryFilter, I> {
    query: &'q Query<'w, D, F>,
    /// The query's ids, looked up once.
    ids: Option<(D::Ids, F::Ids)>,
    entities: I,
}

impl<'q, D, F, I> Iterator for IterMany<'q, '_, D, F, I>
where
    D: ReadOnlyQueryData,
    F: QueryFilter,
    I: Iterator,
    I::Item: Borrow<Entity>,
{
    type Item = D::Item<'q>;

    fn next(&mut self) -> Option<D::Item<'q>> {
        let (query, ids): (&'q Query<'_, D, F>, _) = (self.query, self.ids);
        self.entities.find_map(|entity| {
            let (archetype, row, ids) = query.locate_with(ids, *entity.borrow()).ok()?;
            // SAFETY: from `locate`; the data only reads.
            Some(unsafe { query.item_at(archetype, row, ids) })
        })
    }
}

impl<D: ReadOnlyQueryData, F: QueryFilter, I> std::fmt::Debug for IterMany<'_, '_, D, F, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IterMany").finish_non_exhaustive()
    }
}
