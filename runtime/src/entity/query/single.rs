//! `Single<D, F>` and `Populated<D, F>`: query parameters that skip their
//! system when there is not exactly one match, or none.
//!
//! Each is declared exactly as `Query<D, F>` is (the same lanes, through
//! the same one gate), so what the planner orders and refuses does not
//! change. Before the body runs, the parameter looks at the matches
//! ([`Param::validate`]) without taking a change tick; when they are not
//! what it needs, the body is skipped for this run as a false run
//! condition skips it: nothing fails, the body's change cursor (what
//! `Changed<T>` compares against) and its message cursors stay, and it
//! runs when the matches are there. As a run condition's parameter, a
//! refusal makes the condition false; in a factory it skips the factory,
//! whose last output stays.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crate::access::{AccessKind, ServiceId};
use crate::entity::Entities;
use crate::entity::query::{Query, QueryData, QueryFilter, ReadOnlyQueryData};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ReadOnlyParam, ServiceCells};

/// The item of the one entity matching `D` and `F`, as a system
/// parameter. The system runs only when exactly one entity matches: with
/// none, or two or more, its body is skipped for that run, not failed, as
/// a false run condition skips it: the iteration succeeds, and the body's
/// change cursor (what `Changed<T>` compares against) and message cursors
/// stay, so its next run sees everything since its last. The matches are
/// looked at before the body runs, taking no change tick. As a run
/// condition's parameter, no single match makes the condition false; in a
/// factory it skips the factory, whose last output stays. Declared exactly
/// as `Query<D, F>` is. Reads as the item (`Deref`), or take it with
/// [`into_inner`](Self::into_inner).
///
/// ```
/// use sluice::{NodeBuilder, Single, With, World};
///
/// struct Pos(f32);
/// struct Player;
/// struct Followed(f32);
///
/// let mut world = World::new();
/// world.insert(Followed(0.0));
/// world.add_system(NodeBuilder::new("camera").system(
///     |player: Single<&Pos, With<Player>>, followed: &mut Followed| {
///         followed.0 = player.0;
///     },
/// ));
/// world.run_iteration().unwrap(); // no player yet: skipped
/// world.spawn((Pos(4.0), Player));
/// world.run_iteration().unwrap();
/// assert_eq!(world.get::<Followed>().unwrap().0, 4.0);
/// ```
pub struct Single<'w, D: QueryData, F: QueryFilter = ()> {
    item: D::Item<'w>,
    _filter: PhantomData<fn() -> F>,
}

impl<'w, D: QueryData, F: QueryFilter> Single<'w, D, F> {
    /// The item, for the rest of the run.
    pub fn into_inner(self) -> D::Item<'w> {
        self.item
    }
}

impl<'w, D: QueryData, F: QueryFilter> Deref for Single<'w, D, F> {
    type Target = D::Item<'w>;

    fn deref(&self) -> &D::Item<'w> {
        &self.item
    }
}

impl<'w, D: QueryData, F: QueryFilter> DerefMut for Single<'w, D, F> {
    fn deref_mut(&mut self) -> &mut D::Item<'w> {
        &mut self.item
    }
}

impl<D: QueryData, F: QueryFilter> std::fmt::Debug for Single<'_, D, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Single")
            .field("data", &std::any::type_name::<D>())
            .field("filter", &std::any::type_name::<F>())
            .finish()
    }
}

/// A [`Query`] with at least one match, as a system parameter: with none,
/// the body is skipped for that run, not failed, as [`Single`] skips it.
/// Declared exactly as `Query<D, F>` is. Dereferences to the query.
///
/// ```
/// use sluice::{NodeBuilder, Populated, World};
///
/// struct Enemy(u32);
/// struct Waves(u32);
///
/// let mut world = World::new();
/// world.insert(Waves(0));
/// world.add_system(NodeBuilder::new("fight").system(
///     |enemies: Populated<&Enemy>, waves: &mut Waves| {
///         assert!(!enemies.is_empty());
///         waves.0 += 1;
///     },
/// ));
/// world.run_iteration().unwrap(); // no enemies: skipped
/// world.spawn((Enemy(1),));
/// world.run_iteration().unwrap();
/// assert_eq!(world.get::<Waves>().unwrap().0, 1);
/// ```
pub struct Populated<'w, D: QueryData, F: QueryFilter = ()>(Query<'w, D, F>);

impl<'w, D: QueryData, F: QueryFilter> Populated<'w, D, F> {
    /// The query, for the rest of the run.
    pub fn into_inner(self) -> Query<'w, D, F> {
        self.0
    }
}

impl<'w, D: QueryData, F: QueryFilter> Deref for Populated<'w, D, F> {
    type Target = Query<'w, D, F>;

    fn deref(&self) -> &Query<'w, D, F> {
        &self.0
    }
}

impl<D: QueryData, F: QueryFilter> DerefMut for Populated<'_, D, F> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<D: QueryData, F: QueryFilter> std::fmt::Debug for Populated<'_, D, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Populated").field(&self.0).finish()
    }
}

/// How many matches the body needs to run.
///
/// # Safety
/// `id` is the entity store's id and the node runs under the plan
/// ([`Param::validate`]'s contract), holding `D`'s and `F`'s lanes.
unsafe fn matches_at_least<D: QueryData, F: QueryFilter>(
    id: ServiceId,
    cells: &ServiceCells<'_>,
    limit: usize,
) -> usize {
    // SAFETY: the node declared shared access to the store (the caller's
    // guarantee).
    let entities = unsafe { cells.get::<Entities>(id) }
        .expect("every world holds its entity store from its creation");
    // SAFETY: the node holds the lanes; the query hands out no item.
    unsafe { Query::<D, F>::looking(entities) }.first_rows(limit)
}

/// The `Param` items `Single` and `Populated` share with `Query`: the
/// declaration and resolution are the query's own.
macro_rules! declared_as_query {
    () => {
        const KIND: AccessKind = AccessKind::Shared;

        fn service_name() -> &'static str {
            <Query<'_, D, F> as Param>::service_name()
        }

        fn declare(node: NodeBuilder) -> NodeBuilder {
            <Query<'_, D, F> as Param>::declare(node)
        }

        fn resolve(registry: &mut Registry, hooks: &mut BoundaryHooks) -> ServiceId {
            <Query<'_, D, F> as Param>::resolve(registry, hooks)
        }
    };
}

// SAFETY: declared and fetched as `Query<D, F>` (whose contract it keeps);
// `validate` only reads which rows match, under the same declaration.
unsafe impl<D: QueryData, F: QueryFilter> Param for Single<'_, D, F> {
    type Item<'w> = Single<'w, D, F>;
    declared_as_query!();

    unsafe fn validate(id: ServiceId, cells: &ServiceCells<'_>) -> bool {
        // SAFETY: `validate`'s contract is `fetch`'s.
        unsafe { matches_at_least::<D, F>(id, cells, 2) == 1 }
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Single<'w, D, F> {
        // SAFETY: forwarded from the caller.
        let query = unsafe { <Query<'_, D, F> as Param>::fetch(id, cells) };
        let item = query.into_single().unwrap_or_else(|| {
            // Runners ask `validate` first, under the same plan, so the
            // matches cannot have moved since.
            panic!(
                "`Single<{}, {}>` fetched without exactly one match: its node runner must ask \
                 `Param::validate` first",
                std::any::type_name::<D>(),
                std::any::type_name::<F>()
            )
        });
        Single {
            item,
            _filter: PhantomData,
        }
    }
}

impl<D: ReadOnlyQueryData, F: QueryFilter> ReadOnlyParam for Single<'_, D, F> {}

// SAFETY: declared and fetched as `Query<D, F>` (whose contract it keeps);
// `validate` only reads which rows match, under the same declaration.
unsafe impl<D: QueryData, F: QueryFilter> Param for Populated<'_, D, F> {
    type Item<'w> = Populated<'w, D, F>;
    declared_as_query!();

    unsafe fn validate(id: ServiceId, cells: &ServiceCells<'_>) -> bool {
        // SAFETY: `validate`'s contract is `fetch`'s.
        unsafe { matches_at_least::<D, F>(id, cells, 1) == 1 }
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Populated<'w, D, F> {
        // SAFETY: forwarded from the caller.
        Populated(unsafe { <Query<'_, D, F> as Param>::fetch(id, cells) })
    }
}

impl<D: ReadOnlyQueryData, F: QueryFilter> ReadOnlyParam for Populated<'_, D, F> {}
