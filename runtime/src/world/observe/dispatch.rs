//! Delivering events: the world's changes that fire hooks and observers,
//! custom triggers, propagation, and landing what hooks and observers
//! recorded (see the module docs of `observe` for the order).

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::ServiceId;
use crate::entity::{Bundle, ComponentId, Entity, EntityError};
use crate::world::error::BoundaryStep;
use crate::world::{BoundaryFailure, CommandQueue, World};

use super::hooks::HookWorld;
use super::{
    Current, DEFAULT_OBSERVER_DEPTH, Event, EventKey, HookContext, Lifecycle, ObserveError,
    ObserverEntry, Recorded, TriggerSlot,
};

/// How many targets an event may propagate through before it is stopped
/// (a parent link that loops, say): 65,536; 256 under Miri, which
/// interprets every hop (a looping link's test took minutes there).
pub const MAX_PROPAGATION: u32 = if cfg!(miri) { 1 << 8 } else { 1 << 16 };

/// One change being delivered, named in a chain report.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Link {
    /// What the change does (`insert`, `trigger`).
    pub(super) what: &'static str,
    pub(super) name: &'static str,
    pub(super) entity: Option<Entity>,
}

impl Link {
    pub(crate) fn describe(self) -> String {
        match self.entity {
            Some(entity) => format!("{} `{}` at {entity}", self.what, self.name),
            None => format!("{} `{}`", self.what, self.name),
        }
    }
}

impl World {
    /// Runs `change` as one delivery: what the hooks and observers it runs
    /// record lands after it, in the order they ran, each landing a
    /// delivery one deeper.
    pub(super) fn deliver<R>(&mut self, link: Link, change: impl FnOnce(&mut World) -> R) -> R {
        self.observe.chain.push(link);
        let outer = self.observe.capture.replace(Vec::new());
        let result = change(self);
        let batches = std::mem::replace(&mut self.observe.capture, outer).unwrap_or_default();
        if !batches.is_empty() {
            // What they recorded lands with no capture of ours around it.
            let outer = self.observe.capture.take();
            for batch in batches {
                self.land_batch(batch);
            }
            self.observe.capture = outer;
        }
        self.observe.chain.pop();
        result
    }

    /// Lands one hook's or observer's recorded changes, or refuses them
    /// when the chain is as deep as allowed.
    fn land_batch(&mut self, mut batch: Recorded) {
        let queue = batch
            .downcast_mut::<CommandQueue>()
            .expect("batches are command queues");
        let limit = self.observe.depth_limit.unwrap_or(DEFAULT_OBSERVER_DEPTH) as usize;
        if self.observe.chain.len() >= limit {
            let (mut commands, _) = queue.take_all();
            let mut chain: Vec<String> = self.observe.chain.iter().map(|l| l.describe()).collect();
            if let Some(first) = commands.first() {
                chain.push(first.label.to_string());
            }
            let message = format!(
                "observers triggered each other deeper than {limit}: {}",
                chain.join(" -> ")
            );
            self.observe.failures.push(BoundaryFailure::new(
                BoundaryStep::ObserverChain { chain },
                Box::new(message),
            ));
            for command in commands.drain(..) {
                let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(command)));
            }
        } else {
            let mut failures = Vec::new();
            self.land_one_shot_commands(queue, &mut failures);
            self.observe.failures.append(&mut failures);
        }
        self.observe.spare_queues.push(batch);
    }

    /// A reused list for the components a change touches.
    fn scratch(&mut self) -> Vec<ComponentId> {
        self.observe.scratch.pop().unwrap_or_default()
    }

    fn give_back(&mut self, mut list: Vec<ComponentId>) {
        list.clear();
        self.observe.scratch.push(list);
    }

    /// Fires `event` for each of `components` of `entity` that something
    /// reacts to.
    pub(super) fn fire_all(
        &mut self,
        event: Lifecycle,
        components: &[ComponentId],
        entity: Entity,
    ) {
        for &component in components {
            if self.observe.interested(component, event) {
                if event.hook_first() {
                    self.run_component_hook(event, component, entity);
                    self.run_lifecycle_observers(event, component, entity);
                } else {
                    self.run_lifecycle_observers(event, component, entity);
                    self.run_component_hook(event, component, entity);
                }
            }
        }
    }

    fn run_component_hook(&mut self, event: Lifecycle, component: ComponentId, entity: Entity) {
        let Some(hook) = self.observe.hook(component, event).cloned() else {
            return;
        };
        let name = self.entities().components().info(component).name();
        let context = HookContext {
            entity,
            component: name,
            event,
        };
        let mut lent = self.lend_queue();
        let queue = lent
            .downcast_mut::<CommandQueue>()
            .expect("lent queues are command queues");
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            (hook.run)(context, &mut HookWorld::new(self, queue));
        }));
        match ran {
            Ok(()) if !queue.is_empty() => self.capture(lent),
            Ok(()) => self.observe.spare_queues.push(lent),
            Err(payload) => {
                // Nothing it recorded lands.
                let (mut commands, _) = queue.take_all();
                for command in commands.drain(..) {
                    let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(command)));
                }
                self.observe.spare_queues.push(lent);
                self.observe.failures.push(BoundaryFailure::new(
                    BoundaryStep::Hook {
                        hook: hook.name.to_owned(),
                        component: name.to_owned(),
                        event,
                        entity,
                    },
                    payload,
                ));
            }
        }
    }

    /// Keeps what a hook or observer recorded, to land after the change.
    pub(crate) fn capture(&mut self, recorded: Recorded) {
        match self.observe.capture.as_mut() {
            Some(batches) => batches.push(recorded),
            // Outside a delivery (never, for hooks and observers): lands now.
            None => self.land_batch(recorded),
        }
    }

    /// Whether what a one-shot system records is kept for after the
    /// change being delivered (it is an observer running in one).
    pub(crate) fn capturing(&self) -> bool {
        self.observe.capture.is_some()
    }

    fn run_lifecycle_observers(
        &mut self,
        event: Lifecycle,
        component: ComponentId,
        entity: Entity,
    ) {
        let Some(list) = self
            .observe
            .observers_of(EventKey::Lifecycle(event, component))
        else {
            return;
        };
        if let Some(first) = list.first() {
            // Every entry of one list observes one event type.
            (first.deliver_lifecycle)(self, &list, entity);
        }
    }

    /// Runs the observers of `list` that watch `target` (or every target)
    /// and are still registered, for the event now in `E`'s slot.
    fn run_observers<E: Event>(&mut self, list: &[ObserverEntry], target: Option<Entity>) {
        // Removals since the list was read (by an observer's command) are
        // looked up; none, the common case, costs one compare an entry.
        let removals = self.observe.removals;
        for entry in list {
            let watching = match entry.watch {
                None => true,
                Some(watched) => target == Some(watched),
            };
            if watching && self.observe.still_registered(entry.id, removals) {
                self.run_observer::<E>(entry);
            }
        }
    }

    /// Runs observer `entry` for the event now in `E`'s slot.
    fn run_observer<E: Event>(&mut self, entry: &ObserverEntry) {
        let system = entry.system;
        let node = u32::try_from(system.node().index()).unwrap_or(u32::MAX);
        if let Err(error) = self.run_observer_system(node, entry.shape, &entry.required) {
            let observer = self.graph.nodes()[system.node().index()].name().to_owned();
            let message = error.to_string();
            self.observe.failures.push(BoundaryFailure::new(
                BoundaryStep::Observer {
                    observer,
                    event: std::any::type_name::<E>().to_owned(),
                },
                Box::new(message),
            ));
        }
    }

    /// `E`'s slot, `slot` (resolved when its first observer registered).
    fn trigger_slot<E: Event>(&mut self, slot: ServiceId) -> Option<&mut TriggerSlot<E>> {
        self.graph
            .registry_mut()
            .slot_mut(slot)?
            .value
            .as_deref_mut()?
            .downcast_mut()
    }

    /// Puts `current` in `E`'s slot, returning what was there.
    fn put_current<E: Event>(
        &mut self,
        slot: ServiceId,
        current: Option<Current<E>>,
    ) -> Option<Current<E>> {
        match self.trigger_slot::<E>(slot) {
            Some(slot) => std::mem::replace(&mut slot.current, current),
            None => None,
        }
    }

    /// Triggers the custom event `event`: every global observer of `E`
    /// runs, in registration order, and what they record lands after them
    /// (see the [module docs](crate::world::observe)).
    ///
    /// # Errors
    /// [`ObserveError::Failed`] listing each hook or observer that
    /// panicked or was refused, and each chain past the depth bound;
    /// everything else landed.
    pub fn trigger<E: Event>(&mut self, event: E) -> Result<(), ObserveError> {
        self.trigger_reporting(event, None)
    }

    /// Triggers `event` at `target`: the global observers of `E` and those
    /// watching `target` run; then, unless one of them stopped it
    /// ([`On::stop_propagation`](crate::On::stop_propagation)), it goes on
    /// to [`E::next_target`](Event::next_target) of `target`, and so on
    /// (at most [`MAX_PROPAGATION`] targets; a next target that is not
    /// alive ends it).
    ///
    /// # Errors
    /// As [`trigger`](World::trigger); a propagation that goes on too long
    /// is reported as [`BoundaryStep::Propagation`].
    pub fn trigger_targets<E: Event>(
        &mut self,
        event: E,
        target: Entity,
    ) -> Result<(), ObserveError> {
        self.trigger_reporting(event, Some(target))
    }

    fn trigger_reporting<E: Event>(
        &mut self,
        event: E,
        target: Option<Entity>,
    ) -> Result<(), ObserveError> {
        let start = self.observe.failures.len();
        self.trigger_now(event, target);
        if self.observe.failures.len() == start {
            Ok(())
        } else {
            Err(ObserveError::Failed(self.observe.failures.split_off(start)))
        }
    }

    /// Delivers a custom event (failures go to the world's list).
    pub(crate) fn trigger_now<E: Event>(&mut self, event: E, target: Option<Entity>) {
        let key = EventKey::Custom(std::any::TypeId::of::<E>());
        let Some(list) = self.observe.observers_of(key) else {
            return; // nobody listens: nothing to do, not even propagate
        };
        let Some(slot) = list.first().map(|entry| entry.slot) else {
            return;
        };
        let link = Link {
            what: "trigger",
            name: std::any::type_name::<E>(),
            entity: target,
        };
        self.deliver(link, |world| {
            world.deliver_custom::<E>(event, target, key, slot, list);
        });
    }

    fn deliver_custom<E: Event>(
        &mut self,
        event: E,
        target: Option<Entity>,
        key: EventKey,
        slot: ServiceId,
        first: Arc<Vec<ObserverEntry>>,
    ) {
        let saved = self.put_current(
            slot,
            Some(Current {
                event,
                target,
                propagate: AtomicBool::new(true),
            }),
        );
        let mut at = target;
        let mut hops = 0u32;
        // Observers added by an observer's commands join the next
        // delivery, not this one: the list is read once per target (the
        // first target's was read by the caller, just before).
        let mut list = Some(first);
        loop {
            let this = match list.take() {
                Some(list) => list,
                None => self.observe.observers_of(key).unwrap_or_default(),
            };
            self.run_observers::<E>(&this, at);
            drop(this);
            if at.is_none() {
                break; // a global trigger: nowhere to propagate to
            }
            let Some(current) = self
                .trigger_slot::<E>(slot)
                .and_then(|slot| slot.current.as_mut())
            else {
                break;
            };
            let propagate = std::mem::replace(current.propagate.get_mut(), true);
            let next = match at {
                // A stale link (its entity despawned) is never followed.
                Some(here) if propagate => E::next_target(self.entities(), here)
                    .filter(|&next| self.entities().contains(next)),
                _ => None,
            };
            let Some(next) = next else {
                break;
            };
            hops += 1;
            if hops >= MAX_PROPAGATION {
                let message = format!(
                    "`{}` propagated through {hops} targets (a parent link that loops?); \
                     stopped at {next}",
                    std::any::type_name::<E>()
                );
                self.observe.failures.push(BoundaryFailure::new(
                    BoundaryStep::Propagation {
                        event: std::any::type_name::<E>().to_owned(),
                        hops,
                    },
                    Box::new(message),
                ));
                break;
            }
            at = Some(next);
            if let Some(current) = self
                .trigger_slot::<E>(slot)
                .and_then(|slot| slot.current.as_mut())
            {
                current.target = at;
            }
        }
        // The event is dropped here, after its observers (a panicking
        // `Drop` of it is reported as the observer step would be).
        let finished = self.put_current(slot, saved);
        if !std::mem::needs_drop::<E>() {
            return; // nothing runs when it is dropped
        }
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(finished))) {
            self.observe.failures.push(BoundaryFailure::new(
                BoundaryStep::Propagation {
                    event: std::any::type_name::<E>().to_owned(),
                    hops,
                },
                payload,
            ));
        }
    }

    /// Spawns, firing `on_add`/`Add` and `on_insert`/`Insert` for each
    /// component the entity is spawned with.
    pub(crate) fn observed_spawn<B: Bundle>(&mut self, bundle: B) -> Result<Entity, EntityError> {
        if !self.observe.active {
            return self.entities_mut().try_spawn(bundle);
        }
        let mut ids = self.scratch();
        self.entities_mut().bundle_ids::<B>(&mut ids);
        let events = Lifecycle::Add.bit() | Lifecycle::Insert.bit();
        let plain = !self.observe.any_interest(&ids, events) && !self.entities().has_requirements();
        self.give_back(ids);
        if plain {
            // Nothing reacts to these components: the plain path.
            return self.entities_mut().try_spawn(bundle);
        }
        let link = Link {
            what: "spawn",
            name: std::any::type_name::<B>(),
            entity: None,
        };
        self.deliver(link, |world| {
            let entity = world.entities_mut().try_spawn(bundle)?;
            let mut added = world.scratch();
            world.entities().components_of(entity, &mut added);
            world.fire_all(Lifecycle::Add, &added, entity);
            world.fire_all(Lifecycle::Insert, &added, entity);
            world.give_back(added);
            Ok(entity)
        })
    }

    /// The checks a change makes before firing anything: alive, not
    /// frozen, no type named twice in `ids`.
    fn check_change(&self, entity: Entity, ids: &[ComponentId]) -> Result<(), EntityError> {
        if !self.entities().contains(entity) {
            return Err(EntityError::NoSuchEntity { entity });
        }
        if self.entities().is_frozen(entity) {
            return Err(EntityError::Frozen { entity });
        }
        for (at, id) in ids.iter().enumerate() {
            if ids[..at].contains(id) {
                let component = self.entities().components().info(*id).name();
                return Err(EntityError::DuplicateComponent { component });
            }
        }
        Ok(())
    }

    /// Inserts (`REPLACE`) or inserts what is new, firing `Replace` for
    /// the values overwritten (before), `Add` for the components gained
    /// and `Insert` for the values written (after).
    pub(crate) fn observed_insert<B: Bundle, const REPLACE: bool>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        if !self.observe.active {
            let entities = self.entities_mut();
            return if REPLACE {
                entities.insert(entity, bundle)
            } else {
                entities.insert_if_new(entity, bundle)
            };
        }
        let link = Link {
            what: "insert",
            name: std::any::type_name::<B>(),
            entity: Some(entity),
        };
        let mut ids = self.scratch();
        self.entities_mut().bundle_ids::<B>(&mut ids);
        let events = Lifecycle::Replace.bit() | Lifecycle::Add.bit() | Lifecycle::Insert.bit();
        if !self.observe.any_interest(&ids, events) && !self.entities().has_requirements() {
            // Nothing reacts to these components: the plain path.
            self.give_back(ids);
            let entities = self.entities_mut();
            return if REPLACE {
                entities.insert(entity, bundle)
            } else {
                entities.insert_if_new(entity, bundle)
            };
        }
        self.deliver(link, |world| {
            let checked = world.check_change(entity, &ids);
            // Events fire in component id order.
            ids.sort_unstable();
            // `B`'s components the entity has already (overwritten, or
            // kept by `insert_if_new`).
            let mut present = world.scratch();
            // Everything it had, only needed when a requirement may add
            // components `B` does not name.
            let mut before = world.scratch();
            let requirements = world.entities().has_requirements();
            if checked.is_ok() {
                let have = world.entities().component_ids(entity);
                present.extend(ids.iter().filter(|id| have.contains(id)));
                if requirements {
                    before.extend_from_slice(have);
                }
            }
            let result = checked.and_then(|()| {
                if REPLACE {
                    world.fire_all(Lifecycle::Replace, &present, entity);
                }
                let entities = world.entities_mut();
                if REPLACE {
                    entities.insert(entity, bundle)
                } else {
                    entities.insert_if_new(entity, bundle)
                }
            });
            if result.is_ok() {
                let mut touched = world.scratch();
                if requirements {
                    let mut after = world.scratch();
                    world.entities().components_of(entity, &mut after);
                    touched.extend(after.iter().filter(|id| !before.contains(id)));
                    world.fire_all(Lifecycle::Add, &touched, entity);
                    if REPLACE {
                        touched.clear();
                        touched.extend(
                            after
                                .iter()
                                .filter(|id| ids.contains(id) || !before.contains(id)),
                        );
                    }
                    world.fire_all(Lifecycle::Insert, &touched, entity);
                    world.give_back(after);
                } else {
                    // Exactly `B`'s missing components were added.
                    touched.extend(ids.iter().filter(|id| !present.contains(id)));
                    world.fire_all(Lifecycle::Add, &touched, entity);
                    let written = if REPLACE { &ids } else { &touched };
                    world.fire_all(Lifecycle::Insert, written, entity);
                }
                world.give_back(touched);
            }
            world.give_back(before);
            world.give_back(present);
            world.give_back(ids);
            result
        })
    }

    /// Fires `Replace` then `Remove` (observers, then the hook) for each
    /// of `B`'s components `entity` has, before any goes; then `take`
    /// removes them.
    fn observed_removal<B: Bundle, R>(
        &mut self,
        entity: Entity,
        all_or_nothing: bool,
        take: impl FnOnce(&mut World) -> Result<R, EntityError>,
    ) -> Result<R, EntityError> {
        let link = Link {
            what: "remove",
            name: std::any::type_name::<B>(),
            entity: Some(entity),
        };
        let mut ids = self.scratch();
        self.entities_mut().bundle_ids::<B>(&mut ids);
        let events = Lifecycle::Replace.bit() | Lifecycle::Remove.bit();
        if !self.observe.any_interest(&ids, events) {
            // Nothing reacts to these components: the plain path.
            self.give_back(ids);
            return take(self);
        }
        self.deliver(link, |world| {
            let mut present = world.scratch();
            let mut checked = world.check_change(entity, &ids);
            if checked.is_ok() {
                world.entities().components_of(entity, &mut present);
                if all_or_nothing
                    && let Some(&missing) = ids.iter().find(|id| !present.contains(id))
                {
                    let component = world.entities().components().info(missing).name();
                    checked = Err(EntityError::MissingComponent { entity, component });
                }
                present.retain(|id| ids.contains(id));
            }
            let result = checked.and_then(|()| {
                world.fire_all(Lifecycle::Replace, &present, entity);
                world.fire_all(Lifecycle::Remove, &present, entity);
                take(world)
            });
            world.give_back(present);
            world.give_back(ids);
            result
        })
    }

    /// Removes whichever of `B`'s components `entity` has (as
    /// `Entities::remove_present`), firing `Replace` and `Remove` first.
    pub(crate) fn observed_remove_present<B: Bundle>(
        &mut self,
        entity: Entity,
    ) -> Result<Vec<&'static str>, EntityError> {
        if !self.observe.active {
            return self.entities_mut().remove_present::<B>(entity);
        }
        self.observed_removal::<B, _>(entity, false, |world| {
            world.entities_mut().remove_present::<B>(entity)
        })
    }

    /// Removes and returns `B` (as `Entities::remove`), firing `Replace`
    /// and `Remove` first.
    pub(crate) fn observed_remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        if !self.observe.active {
            return self.entities_mut().remove::<B>(entity);
        }
        self.observed_removal::<B, _>(entity, true, |world| {
            world.entities_mut().remove::<B>(entity)
        })
    }

    /// Despawns `root` with its subtree, children before parents, each
    /// entity through [`observed_despawn`](Self::observed_despawn) when
    /// anything observes (so hooks and observers see every entity of the
    /// subtree, the deepest first), the plain store's walk otherwise. How
    /// many entities it despawned.
    pub(crate) fn observed_despawn_tree(&mut self, root: Entity) -> Result<usize, EntityError> {
        use crate::entity::hierarchy::{despawn_in_order, despawn_tree, take_subtree};
        if !self.observe.active {
            return despawn_tree(self.entities_mut(), root);
        }
        let order = take_subtree(self.entities_mut(), root)?;
        Ok(despawn_in_order(&order, |entity| {
            self.observed_despawn(entity)
        }))
    }

    /// Despawns, firing `Replace` and `Remove` for every component first;
    /// the observers watching the entity go after.
    pub(crate) fn observed_despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.observe.active {
            return self.entities_mut().despawn(entity);
        }
        let events = Lifecycle::Replace.bit() | Lifecycle::Remove.bit();
        if !self
            .observe
            .any_interest(self.entities().component_ids(entity), events)
            && !self.observe.watches(entity)
        {
            // Nothing reacts to this entity's components: the plain path.
            return self.entities_mut().despawn(entity);
        }
        let link = Link {
            what: "despawn",
            name: "entity",
            entity: Some(entity),
        };
        self.deliver(link, |world| {
            if !world.entities().contains(entity) {
                return Err(EntityError::NoSuchEntity { entity });
            }
            let mut all = world.scratch();
            world.entities().components_of(entity, &mut all);
            world.fire_all(Lifecycle::Replace, &all, entity);
            world.fire_all(Lifecycle::Remove, &all, entity);
            world.give_back(all);
            let result = world.entities_mut().despawn(entity);
            if world.observe.watches(entity) {
                world.remove_watchers(entity);
            }
            result
        })
    }
}

/// Runs the observers in `list` (all of lifecycle event `E`) for
/// `target`: what an observer entry keeps to deliver its event without
/// knowing its component type. The event is put in its slot once for all.
pub(crate) fn deliver_lifecycle<E: Event>(
    world: &mut World,
    list: &[ObserverEntry],
    target: Entity,
) {
    let Some(event) = E::lifecycle_value() else {
        return;
    };
    let Some(slot) = list.first().map(|entry| entry.slot) else {
        return;
    };
    let saved = world.put_current(
        slot,
        Some(Current {
            event,
            target: Some(target),
            propagate: AtomicBool::new(true),
        }),
    );
    world.run_observers::<E>(list, Some(target));
    world.put_current(slot, saved);
}
