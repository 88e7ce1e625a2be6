//! `Has<T>`: whether an entity has a `T`, as a query item.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::entity::query::{QueryData, ReadOnlyQueryData};
use crate::entity::{Archetype, Component, ComponentId, Components, Entities, Entity, RunTicks};
use crate::node::NodeBuilder;
use crate::registry::Registry;

/// Yields `true` for entities that have a `T`, `false` for the others, and
/// matches every entity (`Query<(Entity, Has<Shield>)>`).
///
/// It reads none of `T`'s data, only which components an entity's
/// archetype holds, so it declares nothing on `T`'s lane: a system with
/// `Query<Has<T>>` runs beside one writing `T`, and `(Has<T>, &mut T)` in
/// one query is no alias. That is sound because archetypes change only at
/// the boundary (commands) or through `&mut World`, never while nodes run,
/// so there is nothing inside an iteration for the lane to order.
///
/// ```
/// use sluice::{Entity, Has, NodeBuilder, Query, World};
///
/// struct Hp(u32);
/// struct Shield;
///
/// let mut world = World::new();
/// let bare = world.spawn((Hp(5),));
/// let shielded = world.spawn((Hp(5), Shield));
/// world.add_system(NodeBuilder::new("hit").system(|mut hit: Query<(&mut Hp, Has<Shield>)>| {
///     hit.for_each(|(mut hp, shielded)| hp.0 -= if shielded { 1 } else { 3 });
/// }));
/// world.run_iteration().unwrap();
/// assert_eq!(world.entity(bare).unwrap().get::<Hp>().unwrap().0, 2);
/// assert_eq!(world.entity(shielded).unwrap().get::<Hp>().unwrap().0, 4);
/// ```
pub struct Has<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Has<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Has<{}>", std::any::type_name::<T>())
    }
}

// SAFETY: reads no column at all (only the archetype's component set,
// which holds still while nodes run), so it declares no lane and hands out
// no reference.
unsafe impl<T: Component> QueryData for Has<T> {
    type Item<'w> = bool;
    type Ids = Option<(ComponentId, bool)>;
    type Fetch<'w> = bool;

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node
    }

    fn sees_disabled() -> bool {
        crate::entity::disabled::is_disabled::<T>()
    }

    fn lanes(_out: &mut Vec<(TypeId, bool)>) {}

    fn resolve(_registry: &mut Registry) {}

    crate::entity::query::data::any_archetype!(T);

    unsafe fn fetch<'w>(
        ids: Option<(ComponentId, bool)>,
        _entities: &'w Entities,
        archetype: &'w Archetype,
        _ticks: RunTicks,
    ) -> bool {
        // A sparse component's answer is the row's (`sparse_item`).
        ids.is_some_and(|(id, sparse)| !sparse && archetype.contains(id))
    }

    #[inline]
    unsafe fn sparse_item(
        ids: Option<(ComponentId, bool)>,
        entities: &Entities,
        has: bool,
        _row: usize,
        entity: Entity,
    ) -> Option<bool> {
        Some(match ids {
            Some((id, true)) => entities
                .sparse_set(id)
                .is_some_and(|set| set.contains(entity)),
            _ => has,
        })
    }

    #[inline]
    unsafe fn item<'w>(has: Self::Fetch<'w>, _row: usize) -> Self::Item<'w> {
        has
    }
}

// SAFETY: hands out a `bool`, no reference.
unsafe impl<T: Component> ReadOnlyQueryData for Has<T> {}
