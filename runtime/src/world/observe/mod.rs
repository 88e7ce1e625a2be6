//! Hooks and observers: code that reacts to a component's lifecycle
//! (added, inserted, replaced, removed) and to custom events.
//!
//! # When they run, and in what order
//!
//! They run where the change that fires them lands: at the iteration
//! boundary for changes recorded by [`Commands`](crate::Commands) (in
//! command order, which is plan order, so the same for every executor
//! and thread count), at once for changes made to the world directly
//! between iterations ([`World::spawn`], [`World::despawn`],
//! [`EntityMut`](crate::EntityMut)'s insert and remove, [`World::trigger`]).
//! The raw store ([`World::entities_mut`]) fires nothing.
//!
//! For one change:
//!
//! 1. before it, for each component it overwrites or takes away (in
//!    component id order): the observers of [`Replace`], then the
//!    `on_replace` hook; then for each component it takes away: the
//!    observers of [`Remove`], then the `on_remove` hook (the values are
//!    still readable);
//! 2. the change itself;
//! 3. after it, for each component it adds: the `on_add` hook, then the
//!    observers of [`Add`]; then for each component it writes: the
//!    `on_insert` hook, then the observers of [`Insert`];
//! 4. what those hooks and observers recorded (commands, triggers) lands,
//!    in the order they ran and then in record order, each landing firing
//!    its own hooks and observers the same way (depth first), before the
//!    next command of the queue. So an observer's commands keep their
//!    place: everything it causes lands before anything recorded after
//!    the change that ran it.
//!
//! Observers of one event run in registration order, observers watching
//! one entity ([`World::observe_entity`]) among the global ones. Hooks and
//! observers cannot change what entities are made of while a change is
//! under way: they record it, and it lands in step 4.
//!
//! A hook or observer that panics is caught and reported by name (a
//! [`BoundaryFailure`] whose step is [`BoundaryStep::Hook`] or
//! [`BoundaryStep::Observer`]); what it recorded is dropped, and the rest
//! of the boundary lands. Observers that trigger each other deeper than
//! [`World::set_observer_depth_limit`] allow (64 by default) are stopped:
//! the change past the bound is refused with
//! [`BoundaryStep::ObserverChain`], naming the chain, and everything that
//! landed before it stays.

mod dispatch;
mod event;
mod hooks;
mod reparent;

use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

use foldhash::HashMap;

use crate::entity::{ComponentId, Entity};
use crate::world::one_shot::ObserverShape;
use crate::world::spec::IntoSystem;
use crate::world::{BoundaryFailure, CommandQueue, RunSystemError, SystemId, World};

pub use dispatch::MAX_PROPAGATION;
pub use event::{Add, Event, Insert, Lifecycle, On, Remove, Replace, Traversal, traverse};
pub(crate) use event::{Current, TriggerSlot};
use hooks::Hook;
pub use hooks::{HookContext, HookWorld};

#[allow(unused_imports)] // named by the module docs
use crate::world::BoundaryStep;

/// How deep observers may trigger each other by default.
pub const DEFAULT_OBSERVER_DEPTH: u32 = 64;

/// Why a hook or observer could not be registered, or an event not
/// delivered through.
#[derive(Debug)]
#[non_exhaustive]
pub enum ObserveError {
    /// The component already has a hook for this event (one per component
    /// and event); the first stays.
    HookAlreadySet {
        /// The component's type name.
        component: &'static str,
        /// Which event.
        event: Lifecycle,
        /// The hook already set (its closure's type).
        existing: &'static str,
    },
    /// An observer was asked to watch an entity that is not alive.
    NoSuchEntity {
        /// The entity.
        entity: Entity,
    },
    /// The observer cannot run as one (the gate refuses its declarations,
    /// or it is a batch processor, parallel query or factory); nothing was
    /// registered.
    Refused(RunSystemError),
    /// The id names no observer of this world (another world's, or one
    /// removed).
    NoSuchObserver(ObserverId),
    /// Hooks or observers run by [`World::trigger`] failed (panicked, were
    /// refused, or went past the depth bound); everything else landed.
    Failed(Vec<BoundaryFailure>),
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HookAlreadySet {
                component,
                event,
                existing,
            } => write!(
                f,
                "component `{component}` already has an {} hook (`{existing}`): a component \
                 has one hook per event; use an observer to react alongside it",
                event.hook_name()
            ),
            Self::NoSuchEntity { entity } => {
                write!(f, "cannot observe {entity}: it is not alive")
            }
            Self::Refused(error) => write!(f, "the observer is refused: {error}"),
            Self::NoSuchObserver(id) => write!(f, "no observer {} in this world", id.id),
            Self::Failed(failures) => {
                write!(f, "hooks or observers failed:")?;
                for failure in failures {
                    write!(f, " {failure};")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ObserveError {}

/// An observer registered with [`World::add_observer`] or
/// [`World::observe_entity`], to remove it with [`World::remove_observer`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ObserverId {
    world: u64,
    id: u64,
}

/// One registered observer.
#[derive(Clone, Debug)]
pub(crate) struct ObserverEntry {
    pub(crate) id: u64,
    pub(crate) system: SystemId,
    /// The one entity it watches, or `None`: every target.
    pub(crate) watch: Option<Entity>,
    /// Its event type's `TriggerSlot` (the same for every entry of one
    /// list), resolved once at registration: a delivery looks no type up.
    pub(crate) slot: crate::ServiceId,
    /// What its runs may leave to land or gather, asked once at
    /// registration.
    pub(crate) shape: ObserverShape,
    /// The services its runs require, listed once at registration.
    pub(crate) required: Arc<[crate::ServiceId]>,
    /// Delivers a lifecycle event at an entity to a list of observers of
    /// its event type (`dispatch::deliver_lifecycle`).
    pub(crate) deliver_lifecycle: fn(&mut World, &[ObserverEntry], Entity),
}

/// What an observer observes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum EventKey {
    Custom(TypeId),
    Lifecycle(Lifecycle, ComponentId),
}

/// A batch of changes recorded by one hook or observer, waiting to land
/// after the change that ran it.
pub(crate) type Recorded = Box<dyn std::any::Any + Send + Sync>;

/// The world's hooks and observers, and the state of their delivery.
#[derive(Default)]
pub(crate) struct Observe {
    /// Whether any hook or observer is registered: when not, changes take
    /// the plain path (one branch).
    pub(crate) active: bool,
    /// By component index: the four hooks.
    hooks: Vec<[Option<Hook>; 4]>,
    /// By component index: a bit per lifecycle event with a hook or an
    /// observer.
    interest: Vec<u8>,
    /// Observers by what they observe, in registration order.
    observers: HashMap<EventKey, Arc<Vec<ObserverEntry>>>,
    /// Each observer's key, by id.
    keys: HashMap<u64, EventKey>,
    /// How many observers were ever removed: a delivery that sees it
    /// unchanged since it read its list skips looking each entry up.
    pub(crate) removals: u64,
    /// Entities watched by observers, and how many watch each.
    watched: HashMap<Entity, u32>,
    next_id: u64,
    /// How deep changes may nest (a change recorded by a hook or observer
    /// of another change is one deeper).
    pub(crate) depth_limit: Option<u32>,
    /// The changes being delivered now, outermost first: the chain named
    /// when the bound is passed.
    pub(crate) chain: Vec<dispatch::Link>,
    /// Batches recorded by the hooks and observers of the change now
    /// delivered, in the order they ran; `None` outside a delivery.
    pub(crate) capture: Option<Vec<Recorded>>,
    /// Command queues to lend hooks.
    pub(crate) spare_queues: Vec<Recorded>,
    /// Failures not yet reported: taken by the boundary, by
    /// [`World::trigger`], or by [`World::take_observer_failures`].
    pub(crate) failures: Vec<BoundaryFailure>,
    /// Reused for the components a change touches.
    pub(crate) scratch: Vec<Vec<ComponentId>>,
}

impl fmt::Debug for Observe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observe")
            .field("active", &self.active)
            .field("observers", &self.keys.len())
            .field("chain", &self.chain)
            .finish_non_exhaustive()
    }
}

impl Observe {
    fn hooks_mut(&mut self, component: ComponentId) -> &mut [Option<Hook>; 4] {
        let index = component.index();
        if self.hooks.len() <= index {
            self.hooks.resize_with(index + 1, Default::default);
        }
        &mut self.hooks[index]
    }

    pub(crate) fn hook(&self, component: ComponentId, event: Lifecycle) -> Option<&Hook> {
        self.hooks.get(component.index())?[event.index()].as_ref()
    }

    fn note_interest(&mut self, component: ComponentId, event: Lifecycle) {
        let index = component.index();
        if self.interest.len() <= index {
            self.interest.resize(index + 1, 0);
        }
        self.interest[index] |= 1 << event.index();
        self.active = true;
    }

    /// Recomputes a component's interest bit after an observer went.
    fn recheck_interest(&mut self, component: ComponentId, event: Lifecycle) {
        let observed = self
            .observers
            .get(&EventKey::Lifecycle(event, component))
            .is_some_and(|list| !list.is_empty());
        let hooked = self.hook(component, event).is_some();
        if let Some(bits) = self.interest.get_mut(component.index())
            && !observed
            && !hooked
        {
            *bits &= !(1 << event.index());
        }
        self.active = !self.keys.is_empty() || self.hooks.iter().flatten().any(Option::is_some);
    }

    /// Whether anything reacts to `event` on `component`.
    #[inline]
    pub(crate) fn interested(&self, component: ComponentId, event: Lifecycle) -> bool {
        self.interest
            .get(component.index())
            .is_some_and(|bits| bits & (1 << event.index()) != 0)
    }

    /// Whether anything reacts to any of `events` on any of `components`.
    #[inline]
    pub(crate) fn any_interest(&self, components: &[ComponentId], events: u8) -> bool {
        components.iter().any(|component| {
            self.interest
                .get(component.index())
                .is_some_and(|bits| bits & events != 0)
        })
    }

    pub(crate) fn observers_of(&self, key: EventKey) -> Option<Arc<Vec<ObserverEntry>>> {
        self.observers.get(&key).cloned()
    }

    /// Whether observer `id` is still registered, for a delivery that
    /// read its list when [`removals`](Self::removals) was `removals`.
    #[inline]
    pub(crate) fn still_registered(&self, id: u64, removals: u64) -> bool {
        self.removals == removals || self.keys.contains_key(&id)
    }

    pub(crate) fn watches(&self, entity: Entity) -> bool {
        !self.watched.is_empty() && self.watched.contains_key(&entity)
    }
}

impl World {
    /// Registers `observer` (a system whose parameters are declared and
    /// judged as any system's, by the one gate; it takes the event as an
    /// [`On<E>`] parameter) to run for every event `E`: a custom event
    /// triggered by [`trigger`](World::trigger),
    /// [`trigger_targets`](World::trigger_targets) or
    /// [`Commands::trigger`](crate::Commands::trigger), or a lifecycle event
    /// ([`Add<C>`], [`Insert<C>`], [`Replace<C>`], [`Remove<C>`]) of any
    /// entity. It runs in registration order among `E`'s observers; see the
    /// [module docs](crate::world::observe) for when.
    ///
    /// ```
    /// use sluice::prelude::*;
    /// use sluice::On;
    ///
    /// struct Damage(u32);
    /// impl sluice::Event for Damage {}
    /// #[derive(Default)]
    /// struct Taken(u32);
    ///
    /// let mut world = World::new();
    /// world.insert(Taken::default());
    /// world.add_observer::<Damage, _>(|on: On<Damage>, taken: &mut Taken| taken.0 += on.0)?;
    /// world.trigger(Damage(5))?;
    /// assert_eq!(world.get::<Taken>().unwrap().0, 5);
    /// # Ok::<(), sluice::ObserveError>(())
    /// ```
    ///
    /// # Errors
    /// [`ObserveError::Refused`] when it cannot run as an observer (the
    /// gate refuses its declarations; a batch processor, parallel query or
    /// factory); nothing is registered.
    #[track_caller]
    pub fn add_observer<E: Event, M>(
        &mut self,
        observer: impl IntoSystem<M>,
    ) -> Result<ObserverId, ObserveError> {
        self.register_observer::<E, M>(observer, None)
    }

    /// Registers `observer` for the events `E` aimed at `entity` only
    /// (its lifecycle events, or custom events triggered at it or
    /// propagating through it); it is removed when the entity is
    /// despawned (after the despawn's own events).
    ///
    /// # Errors
    /// [`ObserveError::NoSuchEntity`], or as
    /// [`add_observer`](World::add_observer).
    #[track_caller]
    pub fn observe_entity<E: Event, M>(
        &mut self,
        entity: Entity,
        observer: impl IntoSystem<M>,
    ) -> Result<ObserverId, ObserveError> {
        if !self.entities().contains(entity) {
            return Err(ObserveError::NoSuchEntity { entity });
        }
        self.register_observer::<E, M>(observer, Some(entity))
    }

    #[track_caller]
    fn register_observer<E: Event, M>(
        &mut self,
        observer: impl IntoSystem<M>,
        watch: Option<Entity>,
    ) -> Result<ObserverId, ObserveError> {
        let slot = self
            .graph
            .registry_mut()
            .resolve_private::<TriggerSlot<E>>();
        let holds = self
            .graph
            .registry()
            .slot(slot)
            .is_some_and(|slot| slot.value.is_some());
        if !holds {
            self.graph
                .registry_mut()
                .insert(TriggerSlot::<E>::default());
        }
        let system = self.register_system(observer);
        if let Err(error) = self.check_observer(system.node().index()) {
            let _ = self.unregister_system(system);
            return Err(ObserveError::Refused(error));
        }
        let shape = self.observer_shape(system.node().index());
        let required = Arc::from(self.required_services(system.node().index()));
        let key = match E::lifecycle(self.entities_mut()) {
            Some((event, component)) => {
                self.observe.note_interest(component, event);
                EventKey::Lifecycle(event, component)
            }
            None => EventKey::Custom(TypeId::of::<E>()),
        };
        let observe = &mut self.observe;
        let id = observe.next_id;
        observe.next_id += 1;
        Arc::make_mut(observe.observers.entry(key).or_default()).push(ObserverEntry {
            id,
            system,
            watch,
            slot,
            shape,
            required,
            deliver_lifecycle: dispatch::deliver_lifecycle::<E>,
        });
        observe.keys.insert(id, key);
        if let Some(entity) = watch {
            *observe.watched.entry(entity).or_default() += 1;
        }
        observe.active = true;
        Ok(ObserverId { world: self.id, id })
    }

    /// Removes an observer: it runs no more (a delivery under way when it
    /// is removed, from another observer's command, skips it from then on).
    ///
    /// # Errors
    /// [`ObserveError::NoSuchObserver`] for an id of another world or one
    /// removed already.
    pub fn remove_observer(&mut self, id: ObserverId) -> Result<(), ObserveError> {
        let key = (id.world == self.id)
            .then(|| self.observe.keys.remove(&id.id))
            .flatten()
            .ok_or(ObserveError::NoSuchObserver(id))?;
        self.observe.removals += 1;
        let list = Arc::make_mut(self.observe.observers.get_mut(&key).expect("keyed"));
        let at = list
            .iter()
            .position(|entry| entry.id == id.id)
            .expect("keyed");
        let entry = list.remove(at);
        if let Some(entity) = entry.watch
            && let Some(count) = self.observe.watched.get_mut(&entity)
        {
            *count -= 1;
            if *count == 0 {
                self.observe.watched.remove(&entity);
            }
        }
        if let EventKey::Lifecycle(event, component) = key {
            self.observe.recheck_interest(component, event);
        } else {
            self.observe.active = !self.observe.keys.is_empty()
                || self.observe.hooks.iter().flatten().any(Option::is_some);
        }
        // Its node goes; a failing `on_destroy` of it is not ours to report.
        let _ = self.unregister_system(entry.system);
        Ok(())
    }

    /// Removes every observer watching `entity` (it was despawned).
    pub(crate) fn remove_watchers(&mut self, entity: Entity) {
        let ids: Vec<u64> = self
            .observe
            .observers
            .values()
            .flat_map(|list| list.iter())
            .filter(|entry| entry.watch == Some(entity))
            .map(|entry| entry.id)
            .collect();
        for id in ids {
            let _ = self.remove_observer(ObserverId { world: self.id, id });
        }
    }

    /// Sets how deep hooks and observers may trigger each other: a change
    /// recorded by a hook or observer of another change is one deeper than
    /// it, and one deeper than `limit` is refused, reported as
    /// [`BoundaryStep::ObserverChain`] naming the chain (what landed before
    /// it stays). [`DEFAULT_OBSERVER_DEPTH`] by default; at least 1.
    pub fn set_observer_depth_limit(&mut self, limit: u32) {
        self.observe.depth_limit = Some(limit.max(1));
    }

    /// The failures of hooks and observers fired by changes made to the
    /// world directly (not through commands, whose failures the iteration
    /// reports), oldest first; taken, so each is reported once. What is
    /// not taken is reported by the next iteration's boundary.
    pub fn take_observer_failures(&mut self) -> Vec<BoundaryFailure> {
        std::mem::take(&mut self.observe.failures)
    }

    /// Hands `failures` everything hooks and observers failed at since
    /// the last report.
    pub(crate) fn report_observer_failures(&mut self, failures: &mut Vec<BoundaryFailure>) {
        if !self.observe.failures.is_empty() {
            failures.append(&mut self.observe.failures);
        }
    }

    /// A command queue for a hook to record into.
    pub(crate) fn lend_queue(&mut self) -> Recorded {
        self.observe
            .spare_queues
            .pop()
            .unwrap_or_else(|| Box::new(CommandQueue::default()))
    }
}
