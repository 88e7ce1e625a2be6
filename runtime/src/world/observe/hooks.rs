//! Component hooks: one function per component type and lifecycle event,
//! run with a [`HookWorld`], a view of the world that can read and write
//! services and components and record commands, but not change what
//! entities are made of while the change that fired the hook is under way.

use std::sync::Arc;

use crate::entity::{Component, Entity};
use crate::world::{CommandQueue, Commands, EntityRef, World};

use super::{Lifecycle, ObserveError};

/// What a hook is told: which entity, which component, which event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookContext {
    /// The entity whose component it is.
    pub entity: Entity,
    /// The component's type name.
    pub component: &'static str,
    /// Which event.
    pub event: Lifecycle,
}

/// A hook's body, shared so a running hook outlives its replacement.
pub(crate) type HookFn = Arc<dyn Fn(HookContext, &mut HookWorld<'_>) + Send + Sync>;

/// A registered hook and its name (its closure's type), for reports.
#[derive(Clone)]
pub(crate) struct Hook {
    pub(crate) run: HookFn,
    pub(crate) name: &'static str,
}

/// The world as a hook sees it, in the middle of a change: services and
/// component values can be read and written; structural changes (spawn,
/// insert, remove, despawn) and triggers are recorded as
/// [`commands`](HookWorld::commands), landing right after the change that
/// fired the hook, before the next command of the queue.
pub struct HookWorld<'w> {
    world: &'w mut World,
    queue: &'w CommandQueue,
}

impl std::fmt::Debug for HookWorld<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookWorld").finish_non_exhaustive()
    }
}

impl<'w> HookWorld<'w> {
    pub(crate) fn new(world: &'w mut World, queue: &'w CommandQueue) -> Self {
        Self { world, queue }
    }

    /// The service `T`, if the world holds one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.world.get::<T>()
    }

    /// The service `T` to change, if the world holds one.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.world.get_mut::<T>()
    }

    /// A view of `entity`, or `None` when it is not alive.
    pub fn entity(&self, entity: Entity) -> Option<EntityRef<'_>> {
        self.world.entity(entity)
    }

    /// `entity`'s `C` to change in place (marked changed), if it has one.
    pub fn component_mut<C: Component>(&mut self, entity: Entity) -> Option<&mut C> {
        self.world.entities_mut().get_mut::<C>(entity)
    }

    /// Records changes that land right after the change that fired this
    /// hook (and its observers), in record order.
    pub fn commands(&self) -> Commands<'_> {
        Commands::for_queue(self.queue)
    }
}

impl World {
    /// Sets `C`'s `on_add` hook: run when an entity gains a `C` (spawned
    /// with it, or inserted where it had none), before the observers of
    /// [`Add<C>`](crate::Add).
    ///
    /// A component has at most one hook per event: a second is refused
    /// ([`ObserveError::HookAlreadySet`]) and the first stays; a plugin
    /// that wants to react alongside another uses an observer.
    ///
    /// ```
    /// use sluice::World;
    ///
    /// struct Hp(u32);
    /// #[derive(Default)]
    /// struct Alive(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Alive::default());
    /// world.on_add::<Hp>(|_, world| world.get_mut::<Alive>().unwrap().0 += 1)?;
    /// world.on_remove::<Hp>(|_, world| world.get_mut::<Alive>().unwrap().0 -= 1)?;
    /// let e = world.spawn((Hp(3),));
    /// assert_eq!(world.get::<Alive>().unwrap().0, 1);
    /// world.despawn(e)?;
    /// assert_eq!(world.get::<Alive>().unwrap().0, 0);
    /// assert!(world.on_add::<Hp>(|_, _| {}).is_err()); // one per event
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ObserveError::HookAlreadySet`]; nothing changes.
    pub fn on_add<C: Component>(
        &mut self,
        hook: impl Fn(HookContext, &mut HookWorld<'_>) + Send + Sync + 'static,
    ) -> Result<(), ObserveError> {
        self.set_hook::<C, _>(Lifecycle::Add, hook)
    }

    /// Sets `C`'s `on_insert` hook: run whenever a spawn or insert writes a
    /// `C` (after `on_add` when it is new), before the observers of
    /// [`Insert<C>`](crate::Insert).
    ///
    /// # Errors
    /// As [`on_add`](World::on_add).
    pub fn on_insert<C: Component>(
        &mut self,
        hook: impl Fn(HookContext, &mut HookWorld<'_>) + Send + Sync + 'static,
    ) -> Result<(), ObserveError> {
        self.set_hook::<C, _>(Lifecycle::Insert, hook)
    }

    /// Sets `C`'s `on_replace` hook: run when a `C` is about to be
    /// overwritten, removed or despawned (still readable), after the
    /// observers of [`Replace<C>`](crate::Replace).
    ///
    /// # Errors
    /// As [`on_add`](World::on_add).
    pub fn on_replace<C: Component>(
        &mut self,
        hook: impl Fn(HookContext, &mut HookWorld<'_>) + Send + Sync + 'static,
    ) -> Result<(), ObserveError> {
        self.set_hook::<C, _>(Lifecycle::Replace, hook)
    }

    /// Sets `C`'s `on_remove` hook: run when a `C` is about to be removed
    /// or despawned (still readable), after the observers of
    /// [`Remove<C>`](crate::Remove).
    ///
    /// # Errors
    /// As [`on_add`](World::on_add).
    pub fn on_remove<C: Component>(
        &mut self,
        hook: impl Fn(HookContext, &mut HookWorld<'_>) + Send + Sync + 'static,
    ) -> Result<(), ObserveError> {
        self.set_hook::<C, _>(Lifecycle::Remove, hook)
    }

    fn set_hook<C: Component, F>(&mut self, event: Lifecycle, hook: F) -> Result<(), ObserveError>
    where
        F: Fn(HookContext, &mut HookWorld<'_>) + Send + Sync + 'static,
    {
        let component = self.entities_mut().component_id_registering::<C>();
        let hooks = self.observe.hooks_mut(component);
        let slot = &mut hooks[event.index()];
        if let Some(existing) = slot {
            return Err(ObserveError::HookAlreadySet {
                component: std::any::type_name::<C>(),
                event,
                existing: existing.name,
            });
        }
        *slot = Some(Hook {
            run: Arc::new(hook),
            name: std::any::type_name::<F>(),
        });
        self.observe.note_interest(component, event);
        Ok(())
    }
}
