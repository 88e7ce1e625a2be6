//! `AnyOf<(..)>`: the entities with at least one of several query items,
//! each item an `Option`.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::entity::query::{QueryData, ReadOnlyQueryData};
use crate::entity::{Archetype, Components, Entities, Entity, RunTicks};
use crate::node::NodeBuilder;
use crate::registry::Registry;

/// Matches entities that have at least one of the items in the tuple `T`
/// and yields a tuple of `Option`s, `Some` for each item the entity has:
/// `Query<AnyOf<(&Hp, &Shield)>>` yields `(Option<&Hp>, Option<&Shield>)`
/// and skips entities with neither.
///
/// It declares every element's lanes as the element alone would (a `&mut`
/// element gates its lane), so the one gate judges it like the tuple
/// `(A, B, ..)`: `Query<(AnyOf<(&mut A, &B)>, &A)>` is refused (SL0009).
///
/// ```
/// use sluice::{AnyOf, NodeBuilder, Query, World};
///
/// struct Hp(u32);
/// struct Shield(u32);
/// struct Rock;
///
/// let mut world = World::new();
/// world.spawn((Hp(3),));
/// world.spawn((Shield(2),));
/// world.spawn((Hp(1), Shield(1)));
/// world.spawn((Rock,)); // neither: not visited
/// world.add_system(NodeBuilder::new("total").system(|all: Query<AnyOf<(&Hp, &Shield)>>| {
///     let total: u32 = all
///         .iter()
///         .map(|(hp, shield)| hp.map_or(0, |hp| hp.0) + shield.map_or(0, |s| s.0))
///         .sum();
///     assert_eq!((all.count(), total), (3, 7));
/// }));
/// world.run_iteration().unwrap();
/// ```
pub struct AnyOf<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for AnyOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyOf<{}>", std::any::type_name::<T>())
    }
}

macro_rules! impl_any_of {
    ($($name:ident $index:tt),+) => {
        // SAFETY: declares every element's lanes; an element's `fetch` runs
        // only on an archetype it matches (its contract), and its `item`
        // only on what it fetched, so each element keeps its own contract.
        unsafe impl<$($name: QueryData),+> QueryData for AnyOf<($($name,)+)> {
            type Item<'w> = ($(Option<$name::Item<'w>>,)+);
            /// Per element: its ids, `None` when it can match nothing.
            type Ids = ($(Option<$name::Ids>,)+);
            /// Per element: its columns, `None` when the archetype lacks it.
            type Fetch<'w> = ($(Option<$name::Fetch<'w>>,)+);

            fn sees_disabled() -> bool {
                $($name::sees_disabled())||+
            }

            fn declare(node: NodeBuilder) -> NodeBuilder {
                $(let node = $name::declare(node);)+
                node
            }

            fn lanes(out: &mut Vec<(TypeId, bool)>) {
                $($name::lanes(out);)+
            }

            fn resolve(registry: &mut Registry) {
                $($name::resolve(registry);)+
            }

            fn ids(components: &Components) -> Option<Self::Ids> {
                let ids = ($($name::ids(components),)+);
                ($(ids.$index.is_some())||+).then_some(ids)
            }

            fn matches(ids: Self::Ids, archetype: &Archetype) -> bool {
                $(ids.$index.is_some_and(|ids| $name::matches(ids, archetype)))||+
            }

            fn missing(components: &Components, archetype: &Archetype) -> Option<&'static str> {
                let has_one = $($name::missing(components, archetype).is_none())||+;
                (!has_one).then(std::any::type_name::<Self>)
            }

            unsafe fn fetch<'w>(ids: Self::Ids, entities: &'w Entities, archetype: &'w Archetype, ticks: RunTicks) -> Self::Fetch<'w> {
                ($(
                    ids.$index
                        .filter(|&ids| $name::matches(ids, archetype))
                        // SAFETY: the element matches the archetype, and the
                        // node runs under the plan (the caller's guarantee).
                        .map(|ids| unsafe { $name::fetch(ids, entities, archetype, ticks) }),
                )+)
            }

            #[inline]
            fn names_sparse(ids: Self::Ids) -> bool {
                $(ids.$index.is_some_and($name::names_sparse))||+
            }

            fn sparse_lacks(ids: Self::Ids, entities: &Entities, entity: Entity) -> Option<&'static str> {
                let has_one = $(ids.$index.is_some_and(|ids| $name::sparse_lacks(ids, entities, entity).is_none()))||+;
                (!has_one).then(std::any::type_name::<Self>)
            }

            #[inline]
            unsafe fn sparse_item<'w>(ids: Self::Ids, entities: &'w Entities, fetch: Self::Fetch<'w>, row: usize, entity: Entity) -> Option<Self::Item<'w>> {
                // SAFETY: forwarded from the caller, for the elements that
                // fetched this archetype (with the ids they fetched with).
                let items = ($(ids.$index.zip(fetch.$index).and_then(|(ids, fetch)| unsafe { $name::sparse_item(ids, entities, fetch, row, entity) }),)+);
                ($(items.$index.is_some())||+).then_some(items)
            }

            #[inline]
            unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded from the caller, for the elements that
                // fetched this archetype.
                ($(fetch.$index.map(|fetch| unsafe { $name::item(fetch, row) }),)+)
            }
        }

        // SAFETY: every element is read-only.
        unsafe impl<$($name: ReadOnlyQueryData),+> ReadOnlyQueryData for AnyOf<($($name,)+)> {}
    };
}

crate::tuples::for_tuples!(impl_any_of, 4);
