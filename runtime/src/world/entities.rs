//! The world's entities: spawning, despawning and changing them directly
//! (between iterations, or from a whole-world system), and views of one
//! entity. Running nodes change entities through [`Commands`], which land at
//! the boundary.
//!
//! [`Commands`]: crate::Commands

use crate::entity::{
    Bundle, Component, ComponentError, ComponentId, ComponentTicks, Entities, Entity, EntityError,
    Query, QueryData, QueryFilter, RequiredError, StorageType,
};
use crate::world::World;

impl World {
    /// Chooses where `T`'s values are kept: in its archetype's table (the
    /// default) or in a sparse set, where adding and removing it every frame
    /// moves nothing else ([`StorageType`]). Call it before `T` is first
    /// spawned, inserted or named in a bundle; registering it again with the
    /// same storage changes nothing.
    ///
    /// ```
    /// use sluice::{StorageType, World};
    ///
    /// struct Pos(f32);
    /// struct Stunned;
    ///
    /// let mut world = World::new();
    /// world.register_component::<Stunned>(StorageType::SparseSet).unwrap();
    /// let e = world.spawn((Pos(0.0),));
    /// world.entity_mut(e).unwrap().insert((Stunned,)).unwrap();
    /// assert_eq!(world.query::<(&Pos, &Stunned)>().count(), 1);
    /// assert!(world.register_component::<Stunned>(StorageType::Table).is_err());
    /// ```
    ///
    /// # Errors
    /// [`ComponentError::StorageAlreadyChosen`] when `T` is registered
    /// already with the other storage (spawning, inserting or naming it in
    /// a bundle registers it as a table component); nothing changes.
    pub fn register_component<T: Component>(
        &mut self,
        storage: StorageType,
    ) -> Result<ComponentId, ComponentError> {
        self.entities_mut().register_component::<T>(storage)
    }

    /// Spawns an entity with the components of `bundle` (a tuple of up to
    /// twelve components).
    ///
    /// # Panics
    /// When `bundle` names one component type twice (the message names it).
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.observed_spawn(bundle)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Spawns an entity with no component, to build up with
    /// [`EntityMut::insert`].
    pub fn spawn_empty(&mut self) -> EntityMut<'_> {
        let entity = self.spawn(());
        EntityMut::new(self, entity)
    }

    /// Spawns one entity per bundle, reserving room once.
    ///
    /// # Panics
    /// As [`spawn`](Self::spawn).
    pub fn spawn_batch<B: Bundle>(&mut self, bundles: impl IntoIterator<Item = B>) -> Vec<Entity> {
        if self.observe.active {
            // One spawn at a time, each firing its hooks and observers.
            return bundles
                .into_iter()
                .map(|bundle| self.spawn(bundle))
                .collect();
        }
        self.entities_mut().spawn_batch(bundles)
    }

    /// Makes `A` require `B`: every later spawn or insert giving an entity
    /// an `A` also inserts `B::default()` where the entity then lacks a `B`
    /// (one given in the same bundle, or already there, is kept),
    /// transitively. The registration-call form of Bevy's `#[require(B)]`:
    /// every `Send + Sync + 'static` type is a component, so there is no
    /// component derive to carry the attribute. See
    /// [`Entities::register_required`].
    ///
    /// ```
    /// use sluice::{RequiredError, World};
    ///
    /// #[derive(Default)]
    /// struct Player;
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.register_required_with::<Player, Hp>(|| Hp(100))?;
    /// let fresh = world.spawn((Player,));
    /// let hurt = world.spawn((Player, Hp(7)));
    /// assert_eq!(world.entity(fresh).unwrap().get::<Hp>(), Some(&Hp(100)));
    /// assert_eq!(world.entity(hurt).unwrap().get::<Hp>(), Some(&Hp(7)));
    /// // A cycle is refused, by name.
    /// assert!(matches!(
    ///     world.register_required::<Hp, Player>(),
    ///     Err(RequiredError::Cycle { .. })
    /// ));
    /// # Ok::<(), RequiredError>(())
    /// ```
    ///
    /// # Errors
    /// [`RequiredError::Cycle`] (naming the cycle) or
    /// [`RequiredError::AlreadyRequired`]; nothing changes.
    pub fn register_required<A: Component, B: Component + Default>(
        &mut self,
    ) -> Result<(), RequiredError> {
        self.entities_mut().register_required::<A, B>()
    }

    /// As [`register_required`](Self::register_required), `B` made by
    /// `make`.
    ///
    /// # Errors
    /// As [`register_required`](Self::register_required).
    pub fn register_required_with<A: Component, B: Component>(
        &mut self,
        make: impl Fn() -> B + Send + Sync + 'static,
    ) -> Result<(), RequiredError> {
        self.entities_mut().register_required_with::<A, B>(make)
    }

    /// Despawns `entity`, dropping its components. One with children
    /// takes its whole subtree with it, children before parents; one with
    /// a parent leaves its parent's [`Children`](crate::Children)
    /// ([`despawn_recursive`](Self::despawn_recursive) also counts them).
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] when it was despawned already (or is a
    /// handle of another world that names no entity of this one: see
    /// [`Entity`] for what such a handle does).
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if self.observe.active {
            self.observed_despawn_tree(entity).map(drop)
        } else {
            crate::entity::hierarchy::despawn_related(self.entities_mut(), entity)
        }
    }

    /// Freezes `entity`: it can never gain or lose a component again, so a
    /// reference to one of its components may cache the component's store.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] when it is not alive.
    pub fn freeze(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.entities_mut().freeze(entity)
    }

    /// A view of `entity`, or `None` when it is not alive.
    pub fn entity(&self, entity: Entity) -> Option<EntityRef<'_>> {
        let entities = self.entities();
        entities
            .contains(entity)
            .then_some(EntityRef { entities, entity })
    }

    /// A changing view of `entity`, or `None` when it is not alive.
    #[inline]
    pub fn entity_mut(&mut self, entity: Entity) -> Option<EntityMut<'_>> {
        if !self.entities().contains(entity) {
            return None;
        }
        Some(EntityMut::new(self, entity))
    }

    /// A query over the world's entities, between iterations (the world
    /// held exclusively, so any data may be written).
    ///
    /// ```
    /// use sluice::{Query, World};
    ///
    /// struct Pos(f32);
    /// let mut world = World::new();
    /// world.spawn((Pos(1.0),));
    /// world.query::<&mut Pos>().for_each(|mut pos| pos.0 *= 2.0);
    /// assert_eq!(world.query::<&Pos>().iter().map(|p| p.0).sum::<f32>(), 2.0);
    /// ```
    ///
    /// # Panics
    /// When `D` names a component twice in ways that would alias
    /// (`(&mut Pos, &Pos)`); a system taking such a query is refused as
    /// SL0009.
    pub fn query<D: QueryData>(&mut self) -> Query<'_, D> {
        crate::entity::query::assert_no_alias::<D>(&mut self.query_lanes);
        Query::exclusive(self.entities_mut())
    }

    /// A filtered query over the world's entities, between iterations.
    ///
    /// # Panics
    /// As [`query`](Self::query).
    pub fn query_filtered<D: QueryData, F: QueryFilter>(&mut self) -> Query<'_, D, F> {
        crate::entity::query::assert_no_alias::<D>(&mut self.query_lanes);
        Query::exclusive(self.entities_mut())
    }

    /// Every entity and component of the world.
    pub fn entities(&self) -> &Entities {
        self.graph
            .registry()
            .slot(self.builtin.entities)
            .and_then(|slot| slot.value.as_deref()?.downcast_ref())
            .expect("every world holds its entity store")
    }

    /// Every entity and component, to change directly.
    ///
    /// Replacing the whole store (`std::mem::swap`, `std::mem::take`) is
    /// memory-safe: a [`ComponentRef`](crate::ComponentRef) belongs to the
    /// store it was made in and reads nothing from any other. But this
    /// world's change cursors and removal records count in the old store's
    /// ticks, so `Changed`, `Added` and `Removed` mean nothing for the new
    /// store's rows until its systems are registered again.
    #[inline]
    pub fn entities_mut(&mut self) -> &mut Entities {
        let slot = self
            .graph
            .registry_mut()
            .slot_mut(self.builtin.entities)
            .expect("every world holds its entity store");
        // Factories reading entities rerun after a change.
        slot.version += 1;
        slot.value
            .as_deref_mut()
            .and_then(|value| value.downcast_mut())
            .expect("every world holds its entity store")
    }
}

impl AsRef<Entities> for World {
    fn as_ref(&self) -> &Entities {
        self.entities()
    }
}

/// A view of one live entity of a world.
#[derive(Debug, Clone, Copy)]
pub struct EntityRef<'w> {
    entities: &'w Entities,
    entity: Entity,
}

impl<'w> EntityRef<'w> {
    /// The entity viewed.
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// Its component `C`, if it has one.
    pub fn get<C: Component>(&self) -> Option<&'w C> {
        self.entities.get::<C>(self.entity)
    }

    /// Whether it has a component `C`.
    pub fn has<C: Component>(&self) -> bool {
        self.get::<C>().is_some()
    }

    /// When its component `C` was added and last changed.
    pub fn ticks<C: Component>(&self) -> Option<ComponentTicks> {
        self.entities.ticks::<C>(self.entity)
    }

    /// Whether it is frozen.
    pub fn is_frozen(&self) -> bool {
        self.entities.is_frozen(self.entity)
    }
}

/// A changing view of one live entity of a world. Its inserts, removals
/// and despawn fire the world's hooks and observers.
#[derive(Debug)]
pub struct EntityMut<'w> {
    access: Access<'w>,
    entity: Entity,
}

/// What an [`EntityMut`] changes through: the store itself when the world
/// had no hook or observer when the view was made (the plain path, as
/// fast as without them), else the world, which fires them.
#[derive(Debug)]
enum Access<'w> {
    Plain(&'w mut Entities),
    Observed(&'w mut World),
}

impl<'w> EntityMut<'w> {
    #[inline]
    fn new(world: &'w mut World, entity: Entity) -> Self {
        let access = if world.observe.active {
            Access::Observed(world)
        } else {
            Access::Plain(world.entities_mut())
        };
        Self { access, entity }
    }
}

impl EntityMut<'_> {
    /// The entity viewed.
    pub fn id(&self) -> Entity {
        self.entity
    }

    fn entities(&self) -> &Entities {
        match &self.access {
            Access::Plain(entities) => entities,
            Access::Observed(world) => world.entities(),
        }
    }

    /// Its component `C`, if it has one.
    pub fn get<C: Component>(&self) -> Option<&C> {
        self.entities().get::<C>(self.entity)
    }

    /// Its component `C` to change (marked changed at the current tick).
    pub fn get_mut<C: Component>(&mut self) -> Option<&mut C> {
        let entities = match &mut self.access {
            Access::Plain(entities) => entities,
            Access::Observed(world) => world.entities_mut(),
        };
        entities.get_mut::<C>(self.entity)
    }

    /// Adds the components of `bundle`, replacing those it already has.
    ///
    /// # Errors
    /// [`EntityError::Frozen`] (nothing changes) or
    /// [`EntityError::DuplicateComponent`].
    #[inline]
    pub fn insert<B: Bundle>(&mut self, bundle: B) -> Result<&mut Self, EntityError> {
        match &mut self.access {
            Access::Plain(entities) => entities.insert(self.entity, bundle)?,
            Access::Observed(world) => world.observed_insert::<B, true>(self.entity, bundle)?,
        }
        Ok(self)
    }

    /// Adds the components of `bundle` it lacks, keeping those it has
    /// (unchanged, not marked changed); the offered values of those are
    /// dropped.
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_if_new<B: Bundle>(&mut self, bundle: B) -> Result<&mut Self, EntityError> {
        match &mut self.access {
            Access::Plain(entities) => entities.insert_if_new(self.entity, bundle)?,
            Access::Observed(world) => world.observed_insert::<B, false>(self.entity, bundle)?,
        }
        Ok(self)
    }

    /// Removes the components of `B` and returns them: all or nothing,
    /// as Bevy's `take`. [`remove_present`](Self::remove_present) removes
    /// whichever it has, as Bevy's `remove`.
    ///
    /// # Errors
    /// [`EntityError::Frozen`], or [`EntityError::MissingComponent`] when it
    /// lacks one of them (nothing changes).
    #[inline]
    pub fn remove<B: Bundle>(&mut self) -> Result<B, EntityError> {
        match &mut self.access {
            Access::Plain(entities) => entities.remove::<B>(self.entity),
            Access::Observed(world) => world.observed_remove::<B>(self.entity),
        }
    }

    /// Removes whichever components of `B` it has, dropping them, and
    /// returns the type names of those it lacked (empty when it had all).
    ///
    /// # Errors
    /// [`EntityError::Frozen`] or [`EntityError::DuplicateComponent`]
    /// (nothing changes).
    pub fn remove_present<B: Bundle>(&mut self) -> Result<Vec<&'static str>, EntityError> {
        match &mut self.access {
            Access::Plain(entities) => entities.remove_present::<B>(self.entity),
            Access::Observed(world) => world.observed_remove_present::<B>(self.entity),
        }
    }

    /// Despawns it (with its subtree, as [`World::despawn`] does).
    pub fn despawn(self) {
        match self.access {
            Access::Plain(entities) => {
                crate::entity::hierarchy::despawn_related(entities, self.entity)
            }
            Access::Observed(world) => world.observed_despawn_tree(self.entity).map(drop),
        }
        .expect("a viewed entity is alive");
    }
}
