//! Which archetypes a query visits beyond what its data requires: `With<T>`,
//! `Without<T>`, and tuples of them. Filters read no component, so they
//! declare no lane.

use std::marker::PhantomData;

use crate::entity::{Archetype, Component, ComponentId, Components};

/// Keeps archetypes that have a `T` (without reading it).
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps archetypes that have no `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for With<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "With<{}>", std::any::type_name::<T>())
    }
}

impl<T> std::fmt::Debug for Without<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Without<{}>", std::any::type_name::<T>())
    }
}

/// A filter on archetypes.
pub trait QueryFilter {
    /// The component ids, looked up once per run.
    type Ids: Copy;
    /// The ids (a component never stored has none: no archetype has it).
    fn ids(components: &Components) -> Self::Ids;
    /// Whether the query visits `archetype`.
    fn matches(ids: Self::Ids, archetype: &Archetype) -> bool;
}

impl QueryFilter for () {
    type Ids = ();

    fn ids(_components: &Components) {}

    fn matches((): (), _archetype: &Archetype) -> bool {
        true
    }
}

impl<T: Component> QueryFilter for With<T> {
    type Ids = Option<ComponentId>;

    fn ids(components: &Components) -> Option<ComponentId> {
        components.id_of::<T>()
    }

    fn matches(id: Option<ComponentId>, archetype: &Archetype) -> bool {
        id.is_some_and(|id| archetype.contains(id))
    }
}

impl<T: Component> QueryFilter for Without<T> {
    type Ids = Option<ComponentId>;

    fn ids(components: &Components) -> Option<ComponentId> {
        components.id_of::<T>()
    }

    fn matches(id: Option<ComponentId>, archetype: &Archetype) -> bool {
        id.is_none_or(|id| !archetype.contains(id))
    }
}

macro_rules! impl_tuples {
    ($($name:ident $index:tt),+) => {
        impl<$($name: QueryFilter),+> QueryFilter for ($($name,)+) {
            type Ids = ($($name::Ids,)+);

            fn ids(components: &Components) -> Self::Ids {
                ($($name::ids(components),)+)
            }

            fn matches(ids: Self::Ids, archetype: &Archetype) -> bool {
                $($name::matches(ids.$index, archetype))&&+
            }
        }
    };
}

impl_tuples!(A 0);
impl_tuples!(A 0, B 1);
impl_tuples!(A 0, B 1, C 2);
impl_tuples!(A 0, B 1, C 2, D 3);
