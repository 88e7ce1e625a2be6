//! Reaching another entity's component (reference 003): a
//! [`ComponentRef<T>`] held as a component, and [`Target<T>`] in a query to
//! take the target's `T` directly.
//!
//! The reference caches the store and never the row. A frozen entity cannot
//! gain or lose a component, so it never changes archetype and the column
//! its `T` lives in is settled for its life: that is safe to hold. Its row
//! is not (a despawn swap-removes rows, and a despawned entity's slot is
//! handed to the next entity spawned), so the row is resolved from the
//! entity on every access, and a despawned target reads `None`, never
//! somebody else: entity ids are never reused.
//!
//! What is cached (an archetype id, a column index) means something only
//! in the store it was read from: another store numbers its archetypes and
//! columns its own way, and its entity handles, counted from 0 too, are
//! often bit for bit the same. So the reference carries its store's
//! [`StoreId`] and reads nothing from any other store.

use std::marker::PhantomData;

use crate::entity::query::{Lane, QueryData, ReadOnlyQueryData, column_of};
use crate::entity::{
    Archetype, ArchetypeId, Component, ComponentId, Components, Entities, Entity, EntityError,
    StoreId,
};
use crate::node::NodeBuilder;
use crate::registry::Registry;

/// A reference to the `T` of a frozen entity: a component that lets the
/// entity holding it read its target's `T` (through [`Target<T>`] in a
/// query, or [`get`](Self::get)).
///
/// It belongs to the entity store it was made in ([`store`](Self::store)):
/// read with any other (another world's, a store put in its world's place,
/// a new world at its dropped world's address) it reads `None`. Snapshots
/// and saves keep it working across worlds when its type is opted in with
/// [`World::snapshot_component_ref`](crate::World::snapshot_component_ref)
/// (or, with the `serde` feature, `World::save_component_ref`, which saves
/// it as its target entity): a restore binds it to the store it lands in.
pub struct ComponentRef<T: Component> {
    target: Entity,
    /// The store `archetype` and `column` are numbers of.
    store: StoreId,
    /// The target's archetype: settled, since the target is frozen.
    archetype: ArchetypeId,
    /// `T`'s column in it.
    column: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T: Component> Clone for ComponentRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Component> Copy for ComponentRef<T> {}

impl<T: Component> std::fmt::Debug for ComponentRef<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ComponentRef<{}>({})",
            std::any::type_name::<T>(),
            self.target
        )
    }
}

impl<T: Component> ComponentRef<T> {
    /// A reference to `target`'s `T` in `world`'s entity store (`world` is
    /// a [`World`](crate::World) or its [`Entities`]). `target` is looked up
    /// in that store: a handle of another world names the entity of this one
    /// with the same slot and generation, if it is alive (see [`Entity`]).
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] when it is not alive,
    /// [`EntityError::NotFrozen`] when it is not frozen,
    /// [`EntityError::SparseComponent`] when `T` is kept in a sparse set
    /// (a reference caches a table column), and
    /// [`EntityError::MissingComponent`] when it has no `T`.
    pub fn new(world: &impl AsRef<Entities>, target: Entity) -> Result<Self, EntityError> {
        let entities = world.as_ref();
        let (archetype, _, frozen) = entities
            .place_of(target)
            .ok_or(EntityError::NoSuchEntity { entity: target })?;
        if !frozen {
            return Err(EntityError::NotFrozen { entity: target });
        }
        let sparse = entities.components().id_of::<T>();
        if let Some(id) = sparse.filter(|&id| entities.components().is_sparse(id)) {
            let component = entities.components().info(id).name();
            return Err(EntityError::SparseComponent {
                entity: target,
                component,
            });
        }
        let column = entities
            .components()
            .id_of::<T>()
            .and_then(|id| entities.archetype(archetype)?.column_index(id))
            .ok_or(EntityError::MissingComponent {
                entity: target,
                component: std::any::type_name::<T>(),
            })?;
        Ok(Self {
            target,
            store: entities.id(),
            archetype,
            column: u32::try_from(column).expect("fewer than 2^32 columns"),
            _marker: PhantomData,
        })
    }

    /// A reference to `target` bound to no store: it reads `None`
    /// everywhere until a restore binds it ([`rebind_refs`]). What a save's
    /// decoder makes, before the entities it names are placed.
    pub(crate) fn unbound(target: Entity) -> Self {
        Self {
            target,
            store: StoreId::UNBOUND,
            archetype: ArchetypeId::EMPTY,
            column: 0,
            _marker: PhantomData,
        }
    }

    /// Whether it is bound to a store other than `origin` (none: not
    /// bound, as read from a save or left by a restore for a dead target).
    #[cfg(feature = "serde")]
    pub(crate) fn is_foreign_to(&self, origin: Option<StoreId>) -> bool {
        self.store != StoreId::UNBOUND && Some(self.store) != origin
    }

    /// The entity referred to.
    pub fn target(&self) -> Entity {
        self.target
    }

    /// The entity store the reference belongs to.
    pub fn store(&self) -> StoreId {
        self.store
    }

    /// The target's `T`, or `None` once the target is despawned, or when
    /// `world`'s store is not the one the reference was made in.
    pub fn get<'e>(&self, world: &'e impl AsRef<Entities>) -> Option<&'e T> {
        let entities = world.as_ref();
        // SAFETY: `&Entities` is shared for `'e`: nothing writes `T` now
        // (writers need `&mut Entities` or `T`'s lane gated, which the
        // holder of `&Entities` outside a system excludes).
        unsafe { self.resolve(entities) }
    }

    /// The target's `T` through the cached column, the row resolved now;
    /// `None` in a store other than the reference's.
    ///
    /// # Safety
    /// Nothing writes `T`'s column while the reference lives.
    #[inline]
    unsafe fn resolve<'e>(&self, entities: &'e Entities) -> Option<&'e T> {
        // The cached numbers mean `T`'s column only in the store they came
        // from (another store's entity at the same slot and generation lives in
        // an archetype of its own numbering).
        if entities.id() != self.store {
            return None;
        }
        let (archetype, row, _) = entities.place_of(self.target)?;
        // A frozen entity never moves: a live target is where it was. The
        // check is cheap, and keeps a broken invariant from becoming a read.
        if archetype != self.archetype {
            return None;
        }
        // SAFETY: `entities` is the store the reference was made in (no two
        // stores share an id), whose archetype `archetype` had `T` at column
        // `self.column` when it was made; a store never drops, renumbers or
        // reorders its archetypes or their columns, so both indices are in
        // bounds and the column still holds `T`s. The target is alive there
        // at `row`, a live row of that column; no writer runs (caller).
        Some(unsafe {
            let archetype = entities.archetype_list().get_unchecked(archetype.index());
            let column = archetype.columns.get_unchecked(self.column as usize);
            &*column.data().cast::<T>().add(row)
        })
    }
}

/// Binds to `entities` every [`ComponentRef<T>`] it holds that is
/// [unbound](ComponentRef::unbound) (read from a save) or bound to the
/// store `from` (the one a snapshot restored into `entities` was taken
/// from): each is made again with [`ComponentRef::new`] for its target,
/// which keeps its id across a restore. A reference bound to a third
/// store is left as it is: it read `None` before the restore and does
/// after. One whose target is not alive reads `None` as it did, and is
/// left unbound. The holders' changed ticks are not stamped (the game's
/// state is the target, which did not change).
///
/// Returns the references it could not bind although their target is
/// alive, with why: none, when the snapshot was checked (a live world's
/// capture, or a save checked by `World::read_snapshot`); those stay as
/// they were, reading `None`.
pub(crate) fn rebind_refs<T: Component>(
    entities: &mut Entities,
    from: Option<StoreId>,
) -> Vec<(Entity, EntityError)> {
    let mut refused = Vec::new();
    for holder in entities.holders_of::<ComponentRef<T>>() {
        let Some(&old) = entities.get::<ComponentRef<T>>(holder) else {
            continue;
        };
        if old.store != StoreId::UNBOUND && Some(old.store) != from {
            continue;
        }
        match ComponentRef::<T>::new(entities, old.target) {
            Ok(bound) => {
                if let Some(slot) = entities.get_mut_unstamped::<ComponentRef<T>>(holder) {
                    *slot = bound;
                }
            }
            Err(EntityError::NoSuchEntity { .. }) => {
                // Reads `None` as before; unbound, it names no other
                // world's store (a save would refuse that: `SaveError::ForeignReference`).
                if let Some(slot) = entities.get_mut_unstamped::<ComponentRef<T>>(holder) {
                    *slot = ComponentRef::unbound(old.target);
                }
            }
            Err(error) => refused.push((holder, error)),
        }
    }
    refused
}

/// In a query, the target's `T` of each entity's [`ComponentRef<T>`]:
/// `Query<(&mut Heading, Target<Pos>)>` visits entities that hold a
/// `ComponentRef<Pos>` (they need no `Pos` of their own) and reads their
/// targets' `Pos` (`None` once a target is despawned, or for a reference
/// made in another world's store). The access is shared
/// on `Pos`'s lane, since the target belongs to another entity that another
/// system may be writing; there is no `&mut` through a reference:
///
/// ```compile_fail
/// # use sluice::{Query, Target};
/// # struct Pos;
/// fn steer(q: Query<Target<&mut Pos>>) {}
/// ```
///
/// A [`Disabled`](crate::Disabled) target is still read: disabling hides
/// an entity from the queries that walk it, not from a reference that
/// names it (as [`ComponentRef::get`] and [`World::entity`](crate::World::entity)
/// still reach it). A disabled *referring* entity is skipped like any
/// other unless the query asks for disabled entities.
pub struct Target<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Target<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target<{}>", std::any::type_name::<T>())
    }
}

/// The column of references of one archetype, and the store to resolve
/// them in.
pub struct TargetFetch<'w, T: Component> {
    refs: *const ComponentRef<T>,
    entities: &'w Entities,
}

impl<T: Component> Clone for TargetFetch<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Component> Copy for TargetFetch<'_, T> {}

impl<T: Component> std::fmt::Debug for TargetFetch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TargetFetch").finish_non_exhaustive()
    }
}

// SAFETY: declares `ComponentRef<T>`'s lane and `T`'s lane shared; `item`
// reads a row of the reference column and a row of a `T` column, never
// writing.
unsafe impl<T: Component> QueryData for Target<T> {
    type Item<'w> = Option<&'w T>;
    type Ids = ComponentId;
    type Fetch<'w> = TargetFetch<'w, T>;

    fn declare(node: NodeBuilder) -> NodeBuilder {
        Lane::<T>::read(Lane::<ComponentRef<T>>::read(node))
    }

    fn lanes(out: &mut Vec<(std::any::TypeId, bool)>) {
        out.push((std::any::TypeId::of::<Lane<ComponentRef<T>>>(), false));
        out.push((std::any::TypeId::of::<Lane<T>>(), false));
    }

    fn resolve(registry: &mut Registry) {
        Lane::<ComponentRef<T>>::resolve(registry);
        Lane::<T>::resolve(registry);
    }

    fn ids(components: &Components) -> Option<ComponentId> {
        components.id_of::<ComponentRef<T>>()
    }

    fn matches(id: ComponentId, archetype: &Archetype) -> bool {
        archetype.contains(id)
    }

    fn missing(components: &Components, archetype: &Archetype) -> Option<&'static str> {
        crate::entity::query::lacks::<ComponentRef<T>>(components, archetype)
    }

    unsafe fn fetch<'w>(
        id: ComponentId,
        entities: &'w Entities,
        archetype: &'w Archetype,
        _ticks: crate::entity::query::RunTicks,
    ) -> Self::Fetch<'w> {
        TargetFetch {
            refs: column_of(archetype, id).data().cast::<ComponentRef<T>>(),
            entities,
        }
    }

    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Option<&'w T> {
        // SAFETY: `row` is a live row of the reference column (caller); the
        // node holds `T`'s lane shared, so no writer of `T` runs.
        unsafe { (*fetch.refs.add(row)).resolve(fetch.entities) }
    }
}

// SAFETY: reads only.
unsafe impl<T: Component> ReadOnlyQueryData for Target<T> {}
