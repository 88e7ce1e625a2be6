//! Events: the [`Event`] trait, the four lifecycle events of a component
//! ([`Add`], [`Insert`], [`Replace`], [`Remove`]), propagation
//! ([`Traversal`]) and the [`On`] parameter an observer reads its event
//! through.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::access::{AccessKind, ServiceId};
use crate::entity::{Component, ComponentId, Entities, Entity};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ServiceCells};

/// Something an observer reacts to: a custom event handed to
/// [`World::trigger`](crate::World::trigger) or
/// [`Commands::trigger`](crate::Commands::trigger), or one of a
/// component's lifecycle events ([`Add`], [`Insert`], [`Replace`],
/// [`Remove`]).
///
/// An event aimed at an entity
/// ([`trigger_targets`](crate::World::trigger_targets)) may *propagate*:
/// after the observers of one target ran, it goes on to
/// [`next_target`](Event::next_target) of that target, until there is
/// none or an observer stops it ([`On::stop_propagation`]).
pub trait Event: Send + Sync + 'static {
    /// The target after `target` when the event propagates; `None` (the
    /// default) stops it there. [`traverse`] follows a [`Traversal`]
    /// component: `sluice::traverse::<ChildOf>(entities, target)`.
    fn next_target(entities: &Entities, target: Entity) -> Option<Entity> {
        let _ = (entities, target);
        None
    }

    /// The component lifecycle event this is, if it is one (the runtime's
    /// own four implement it; a custom event keeps the default).
    #[doc(hidden)]
    fn lifecycle(entities: &mut Entities) -> Option<(Lifecycle, ComponentId)> {
        let _ = entities;
        None
    }

    /// The value of a lifecycle event (they carry nothing); `None` for a
    /// custom event.
    #[doc(hidden)]
    fn lifecycle_value() -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// A component naming the next target of a propagating event: a parent
/// link. Given an entity's component, [`next`](Traversal::next) is where
/// the event goes after it.
pub trait Traversal: Component {
    /// The entity an event goes on to after the one holding this.
    fn next(&self) -> Option<Entity>;
}

/// The next target of an event at `target`, following `T`: what an
/// [`Event::next_target`] propagating along a parent link returns.
pub fn traverse<T: Traversal>(entities: &Entities, target: Entity) -> Option<Entity> {
    entities.get::<T>(target)?.next()
}

/// Which of a component's four lifecycle events.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Lifecycle {
    /// The entity gained the component (spawned with it, or it was
    /// inserted where there was none).
    Add,
    /// A value of the component was written by a spawn or insert (after
    /// [`Lifecycle::Add`] when there was none before).
    Insert,
    /// A value of the component is about to be overwritten or removed
    /// (still readable).
    Replace,
    /// The component is about to be removed (despawn or remove; still
    /// readable).
    Remove,
}

impl Lifecycle {
    /// Its index among the four.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Its bit in an interest mask.
    pub(crate) const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The hook's name: `on_add`, ...
    pub fn hook_name(self) -> &'static str {
        match self {
            Lifecycle::Add => "on_add",
            Lifecycle::Insert => "on_insert",
            Lifecycle::Replace => "on_replace",
            Lifecycle::Remove => "on_remove",
        }
    }

    /// Whether hooks run before observers (add, insert) rather than after
    /// (replace, remove).
    pub(crate) fn hook_first(self) -> bool {
        matches!(self, Lifecycle::Add | Lifecycle::Insert)
    }
}

impl std::fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Lifecycle::Add => "Add",
            Lifecycle::Insert => "Insert",
            Lifecycle::Replace => "Replace",
            Lifecycle::Remove => "Remove",
        };
        f.write_str(name)
    }
}

macro_rules! lifecycle_event {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name<C: Component>(PhantomData<fn() -> C>);

        impl<C: Component> Event for $name<C> {
            fn lifecycle(entities: &mut Entities) -> Option<(Lifecycle, ComponentId)> {
                Some((Lifecycle::$name, entities.component_id_registering::<C>()))
            }

            fn lifecycle_value() -> Option<Self> {
                Some($name(PhantomData))
            }
        }

        impl<C: Component> std::fmt::Debug for $name<C> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($name), std::any::type_name::<C>())
            }
        }
    };
}

lifecycle_event!(
    /// The entity [`On::target`] gained a `C`: spawned with one, or one was
    /// inserted where it had none (hook first, then observers).
    Add
);
lifecycle_event!(
    /// A `C` was written to the entity [`On::target`] by a spawn or insert,
    /// after [`Add`] when it is new (hook first, then observers).
    Insert
);
lifecycle_event!(
    /// The `C` of the entity [`On::target`] is about to be overwritten by
    /// an insert, removed or despawned; it is still readable (observers
    /// first, then the hook).
    Replace
);
lifecycle_event!(
    /// The `C` of the entity [`On::target`] is about to be removed or
    /// despawned; it is still readable (observers first, then the hook).
    Remove
);

/// The event an observer of `E` is running for, held by the world in a
/// private service while its observers run.
pub(crate) struct TriggerSlot<E> {
    pub(crate) current: Option<Current<E>>,
}

impl<E> Default for TriggerSlot<E> {
    fn default() -> Self {
        Self { current: None }
    }
}

/// One event being delivered.
pub(crate) struct Current<E> {
    pub(crate) event: E,
    pub(crate) target: Option<Entity>,
    /// Cleared by [`On::stop_propagation`].
    pub(crate) propagate: AtomicBool,
}

/// The event an observer runs for: its first parameter, by convention.
///
/// ```
/// use sluice::prelude::*;
/// use sluice::{Add, On};
///
/// struct Hp(u32);
/// #[derive(Default)]
/// struct Seen(Vec<Entity>);
///
/// let mut world = World::new();
/// world.insert(Seen::default());
/// world.add_observer::<Add<Hp>, _>(|on: On<Add<Hp>>, seen: &mut Seen| {
///     seen.0.push(on.target().unwrap());
/// })?;
/// let e = world.spawn((Hp(3),));
/// assert_eq!(world.get::<Seen>().unwrap().0, [e]);
/// # Ok::<(), sluice::ObserveError>(())
/// ```
///
/// In a system that is not an observer of `E` (or an observer of `E`
/// outside a delivery) the body is skipped, as for a `Single` with no
/// match.
pub struct On<'w, E: Event> {
    current: &'w Current<E>,
}

impl<E: Event> On<'_, E> {
    /// The event.
    pub fn event(&self) -> &E {
        &self.current.event
    }

    /// The entity the event is at now (for a lifecycle event, the entity
    /// whose component it is); `None` for an event triggered without one.
    pub fn target(&self) -> Option<Entity> {
        self.current.target
    }

    /// Stops a propagating event after the observers of its current target:
    /// they all still run, then it goes no further.
    pub fn stop_propagation(&self) {
        self.current.propagate.store(false, Ordering::Relaxed);
    }
}

impl<E: Event> std::fmt::Debug for On<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("On")
            .field("event", &std::any::type_name::<E>())
            .field("target", &self.current.target)
            .finish()
    }
}

impl<E: Event> std::ops::Deref for On<'_, E> {
    type Target = E;
    fn deref(&self) -> &E {
        self.event()
    }
}

// SAFETY: `fetch` and `validate` read only the `TriggerSlot<E>` slot,
// through shared access, as `declare` declares.
unsafe impl<E: Event> Param for On<'_, E> {
    type Item<'w> = On<'w, E>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<TriggerSlot<E>>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.runtime_reads::<TriggerSlot<E>>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve_private::<TriggerSlot<E>>()
    }

    unsafe fn validate(id: ServiceId, cells: &ServiceCells<'_>) -> bool {
        // SAFETY: shared access to the slot was declared; only the world
        // writes it, between observer runs.
        unsafe { cells.get::<TriggerSlot<E>>(id) }.is_some_and(|slot| slot.current.is_some())
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> On<'w, E> {
        // SAFETY: as in `validate`, which said yes before this fetch.
        let slot = unsafe { cells.get::<TriggerSlot<E>>(id) };
        let current = slot
            .and_then(|slot| slot.current.as_ref())
            .expect("validated: an event is being delivered");
        On { current }
    }
}
