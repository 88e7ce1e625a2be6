//! Entity disabling: the [`Disabled`] marker hides an entity from every
//! query that does not ask for it, and [`Allow`] asks.
//!
//! A query sees disabled entities when its data or filter names `Disabled`
//! anywhere (`&Disabled`, `Option<&Disabled>`, `Has<Disabled>`,
//! `With<Disabled>`, `Without<Disabled>`, inside a tuple, `Or` or `AnyOf`)
//! or when its filter holds [`Allow<Disabled>`]. Disabling hides an entity
//! from the queries that walk it, never from a handle that names it:
//! [`World::entity`](crate::World::entity), [`EntityRef`](crate::EntityRef),
//! a [`ComponentRef`](crate::ComponentRef) to one of its components, and a
//! [`Target<T>`](crate::Target) following such a reference all still reach
//! it, as Bevy's direct entity access does.

use std::any::TypeId;
use std::marker::PhantomData;

use super::archetype::Archetype;
use super::component::{Component, ComponentId, Components};
use crate::node::NodeBuilder;
use crate::registry::Registry;

use super::query::QueryFilter;

/// Marks an entity disabled: queries skip it unless they ask for it, by
/// naming `Disabled` anywhere in their data or filter (`&Disabled`,
/// `Option<&Disabled>`, `Has<Disabled>`, `With<Disabled>`,
/// `Without<Disabled>`, inside a tuple, `Or` or `AnyOf`) or by filtering
/// with [`Allow<Disabled>`](Allow). Insert it to disable an entity, remove
/// it to enable it again; its other components are kept.
///
/// Disabling hides an entity from the queries that walk it, never from a
/// handle that names it: [`World::entity`](crate::World::entity), a
/// [`ComponentRef`](crate::ComponentRef) to one of its components and a
/// [`Target<T>`](crate::Target) following such a reference still reach it,
/// as Bevy's direct entity access does. `Query::get` on a hidden entity
/// says so ([`QueryEntityError::Disabled`](crate::QueryEntityError::Disabled)).
///
/// ```
/// use sluice::{Allow, Disabled, Has, World};
///
/// struct Hp(u32);
///
/// let mut world = World::new();
/// world.spawn((Hp(1),));
/// let asleep = world.spawn((Hp(2), Disabled));
/// assert_eq!(world.query::<&Hp>().iter().count(), 1);
/// assert_eq!(world.query_filtered::<&Hp, Allow<Disabled>>().iter().count(), 2);
/// assert_eq!(world.query::<(&Hp, Has<Disabled>)>().iter().filter(|(_, off)| *off).count(), 1);
/// world.entity_mut(asleep).unwrap().remove::<(Disabled,)>().unwrap();
/// assert_eq!(world.query::<&Hp>().iter().count(), 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Disabled;

/// `Disabled`'s id in every store: the first component a store registers.
pub(crate) const DISABLED: ComponentId = ComponentId(0);

/// Whether `T` is [`Disabled`]: a query naming it sees disabled entities.
#[inline]
pub(crate) fn is_disabled<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<Disabled>()
}

/// Whether a query that does not see disabled entities skips `archetype`.
#[inline]
pub(crate) fn hides(archetype: &Archetype) -> bool {
    archetype.contains(DISABLED)
}

/// A filter that lets the query see the entities marked `T`
/// ([`Allow<Disabled>`]) without requiring or excluding them; it refuses
/// nothing. For any other `T` it changes nothing.
pub struct Allow<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Allow<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Allow<{}>", std::any::type_name::<T>())
    }
}

// SAFETY: reads nothing: it matches every archetype and refuses no row.
unsafe impl<T: Component> QueryFilter for Allow<T> {
    type Ids = ();
    type Fetch<'w> = ();
    const BY_ROW: bool = false;

    fn declare(node: NodeBuilder, _declared: &[(TypeId, bool)]) -> NodeBuilder {
        node
    }

    fn resolve(_registry: &mut Registry) {}

    fn ids(_components: &Components) {}

    fn matches((): (), _archetype: &Archetype) -> bool {
        true
    }

    unsafe fn fetch((): (), _archetype: &Archetype, _last_run: u32) {}

    unsafe fn row((): (), _row: usize) -> bool {
        true
    }

    fn sees_disabled() -> bool {
        is_disabled::<T>()
    }

    #[inline]
    fn keeps_set((): (), _set: ComponentId) -> bool {
        true
    }
}
