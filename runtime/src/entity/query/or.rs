//! `Or<(..)>`: a filter that keeps an entity when any of its elements
//! would (`Or<(With<A>, Changed<B>)>`).

use std::any::TypeId;
use std::marker::PhantomData;

use crate::entity::query::QueryFilter;
use crate::entity::{Archetype, Components, Entities, Entity};
use crate::node::NodeBuilder;
use crate::registry::Registry;

/// Keeps entities that pass at least one of the filters in the tuple `T`
/// (`With`, `Without`, `Changed`, `Added`, or tuples of them, which must
/// all pass): `Query<&Pos, Or<(Changed<Pos>, Added<Vel>)>>`.
///
/// It declares what each element declares (a `Changed<T>` element reads
/// `T`'s ticks shared), so it reaches the one gate as they would alone.
///
/// ```
/// use sluice::{NodeBuilder, Or, Query, With, World};
///
/// struct Hp(u32);
/// struct Enemy;
/// struct Boss;
///
/// let mut world = World::new();
/// world.spawn((Hp(1),));
/// world.spawn((Hp(2), Enemy));
/// world.spawn((Hp(3), Boss));
/// world.add_system(NodeBuilder::new("hostile").system(
///     |hostile: Query<&Hp, Or<(With<Enemy>, With<Boss>)>>| {
///         let mut hp: Vec<u32> = hostile.iter().map(|hp| hp.0).collect();
///         hp.sort();
///         assert_eq!(hp, [2, 3]);
///     },
/// ));
/// world.run_iteration().unwrap();
/// ```
pub struct Or<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Or<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Or<{}>", std::any::type_name::<T>())
    }
}

macro_rules! impl_or {
    ($($name:ident $index:tt),+) => {
        // SAFETY: declares every element's lanes; an element's `fetch` runs
        // only on an archetype that element matches (its contract), and its
        // `row` only on what it fetched.
        unsafe impl<$($name: QueryFilter),+> QueryFilter for Or<($($name,)+)> {
            type Ids = ($($name::Ids,)+);
            /// Per element: its state on the archetype, `None` when the
            /// element refuses the whole archetype.
            type Fetch<'w> = ($(Option<$name::Fetch<'w>>,)+);
            const BY_ROW: bool = $($name::BY_ROW)||+;

            fn sees_disabled() -> bool {
                $($name::sees_disabled())||+
            }

            fn declare(node: NodeBuilder, declared: &[(TypeId, bool)]) -> NodeBuilder {
                $(let node = $name::declare(node, declared);)+
                node
            }

            fn resolve(registry: &mut Registry) {
                $($name::resolve(registry);)+
            }

            fn ids(components: &Components) -> Self::Ids {
                ($($name::ids(components),)+)
            }

            fn matches(ids: Self::Ids, archetype: &Archetype) -> bool {
                $($name::matches(ids.$index, archetype))||+
            }

            unsafe fn fetch<'w>(ids: Self::Ids, archetype: &'w Archetype, last_run: u32) -> Self::Fetch<'w> {
                ($(
                    $name::matches(ids.$index, archetype)
                        // SAFETY: the element matches the archetype.
                        .then(|| unsafe { $name::fetch(ids.$index, archetype, last_run) }),
                )+)
            }

            #[inline]
            fn names_sparse(ids: Self::Ids) -> bool {
                $($name::names_sparse(ids.$index))||+
            }

            /// Every element refuses the archetype (or does not match it).
            #[inline]
            fn refuses_all(ids: Self::Ids, archetype: &Archetype, last_run: u32) -> bool {
                $((!$name::matches(ids.$index, archetype)
                    || $name::refuses_all(ids.$index, archetype, last_run)))&&+
            }

            #[inline]
            unsafe fn sparse_row(ids: Self::Ids, entities: &Entities, archetype: &Archetype, row: usize, entity: Entity, last_run: u32) -> bool {
                $(($name::matches(ids.$index, archetype)
                    // SAFETY: forwarded from the caller, for an element
                    // that matches the archetype.
                    && unsafe { $name::sparse_row(ids.$index, entities, archetype, row, entity, last_run) }))||+
            }

            #[inline]
            unsafe fn row(fetch: Self::Fetch<'_>, row: usize) -> bool {
                // SAFETY: forwarded from the caller, for the elements that
                // fetched this archetype.
                $(fetch.$index.is_some_and(|fetch| unsafe { $name::row(fetch, row) }))||+
            }
        }
    };
}

crate::tuples::for_tuples!(impl_or, 4);
