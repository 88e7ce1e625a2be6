//! The world's side: opting in, taking a snapshot, restoring one.

use std::any::{Any, TypeId};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{
    CapturedLocal, CapturedMessages, CapturedService, PartKind, RestoreError, Snapshot,
    SnapshotError,
};
use crate::entity::Component;
use crate::entity::StoreMismatch;
use crate::world::{FixedTime, FrameTime, World};

impl World {
    /// Opts the component `T` into snapshots: every snapshot from now on
    /// captures its values (cloned: a `Copy` type's column is one copy).
    /// Idempotent: a second call is a no-op.
    pub fn snapshot_component<T: Component + Clone>(&mut self) -> &mut Self {
        self.snapshots.add_component::<T>();
        self
    }

    /// Opts the references [`ComponentRef<T>`](crate::ComponentRef) into
    /// snapshots, as [`snapshot_component`](Self::snapshot_component)
    /// does, and has a restore bind them to the store they land in: a
    /// reference caches where its target's `T` lives in the store it was
    /// made in, and reads nothing from any other, so one restored into
    /// another world would read `None`. After a restore of another
    /// world's snapshot, or of a save, each is made again for its target
    /// (which keeps its id). `T` itself needs no registration here (its
    /// rows are snapshotted as any component's: opt it in too). Idempotent.
    ///
    /// `snapshot_component::<ComponentRef<T>>()` alone snapshots the
    /// references without binding them: they come back into the world
    /// they were taken from only.
    pub fn snapshot_component_ref<T: Component>(&mut self) -> &mut Self {
        self.snapshots.add_component_ref::<T>();
        self
    }

    /// Opts the service `T` into snapshots (cloned, with
    /// [`Clone::clone_from`] so a snapshot taken again reuses its memory:
    /// `#[derive(Clone)]` does not write a `clone_from`, so a service with
    /// heap memory that must not allocate per snapshot implements `Clone`
    /// by hand). Idempotent.
    pub fn snapshot_service<T: Clone + Send + Sync + 'static>(&mut self) -> &mut Self {
        self.snapshots.add_service::<T>();
        self
    }

    /// Opts the messages of type `T` into snapshots: the queue's kept
    /// messages and every reader's cursor (cloned), so after a restore each
    /// reader reads what it would have. Put back only into the world they
    /// were taken from (a reader is a node of its world). What other
    /// threads sent through a [`MessageSender`](crate::MessageSender) and
    /// no boundary has drained yet is not captured. Idempotent.
    pub fn snapshot_messages<T: Clone + Send + Sync + 'static>(&mut self) -> &mut Self {
        self.snapshots.add_messages::<T>();
        self
    }

    /// Opts every node's [`Local<T>`](crate::Local) parameters into
    /// snapshots: each is cloned (one allocation per value and capture),
    /// by its node's parameter, and put back only into the world it was
    /// taken from, into the same node's parameter; a restore is refused
    /// ([`RestoreError::NodeGone`]) when that node was removed since. A
    /// node registered after the snapshot keeps its own value. Idempotent.
    pub fn snapshot_local<T: Clone + Default + Send + 'static>(&mut self) -> &mut Self {
        self.snapshots.add_local::<T>();
        self
    }

    /// Strict snapshots: [`snapshot`](Self::snapshot) refuses
    /// ([`SnapshotError::LeftOut`], naming them) while any component with
    /// rows, or any service, message queue or [`Local`](crate::Local) is
    /// not opted in.
    pub fn set_snapshot_strict(&mut self, strict: bool) -> &mut Self {
        self.snapshots.strict = strict;
        self
    }

    /// Everything opted in, copied (see [`Snapshot`]); what is left out is
    /// named in its [`report`](Snapshot::report).
    ///
    /// # Errors
    /// [`SnapshotError::DuringIteration`] inside an iteration;
    /// [`SnapshotError::LeftOut`] when strict and something is left out;
    /// [`SnapshotError::Panicked`] when a `Clone` panicked.
    pub fn snapshot(&self) -> Result<Snapshot, SnapshotError> {
        let mut snapshot = Snapshot::new();
        self.snapshot_into(&mut snapshot)?;
        Ok(snapshot)
    }

    /// [`snapshot`](Self::snapshot) into an existing snapshot, reusing its
    /// memory: once warm, no allocation when the world's shape (its
    /// archetypes, their row counts, its services) is no larger than at
    /// the last capture. On error `into` is left empty.
    ///
    /// Incremental: when `into` holds an earlier capture of this world, a
    /// component type none of whose columns changed since (no row in or
    /// out, no value written, stamped or handed out mutably) keeps its
    /// values and ticks from then instead of being copied again: they are
    /// exactly what a copy would give ([`Snapshot::reused_components`],
    /// [`Snapshot::set_incremental`]).
    ///
    /// # Errors
    /// As [`snapshot`](Self::snapshot).
    pub fn snapshot_into(&self, into: &mut Snapshot) -> Result<(), SnapshotError> {
        if self.is_running_whole() {
            into.clear();
            return Err(SnapshotError::DuringIteration);
        }
        // The store's capture keeps the parts it can reuse (incremental).
        into.clear_beside_store();
        let cloning = Cell::new("");
        let captured = catch_unwind(AssertUnwindSafe(|| self.capture_snapshot(into, &cloning)));
        if captured.is_err() {
            into.clear();
            return Err(SnapshotError::Panicked {
                what: cloning.get().to_owned(),
            });
        }
        if self.snapshots.strict && !into.report.is_complete() {
            let names = into
                .report
                .entries()
                .iter()
                .map(ToString::to_string)
                .collect();
            into.clear();
            return Err(SnapshotError::LeftOut { names });
        }
        Ok(())
    }

    /// The capture itself; `cloning` names the type being cloned, for the
    /// error when its `Clone` panics.
    fn capture_snapshot(&self, into: &mut Snapshot, cloning: &Cell<&'static str>) {
        let registry = &self.snapshots;
        let part_for = |type_id: TypeId| registry.component(type_id).map(|c| c.new_part);
        let Snapshot { report, store, .. } = into;
        store.capture(
            self.entities(),
            &part_for,
            &mut |name| report.push(PartKind::Component, name),
            cloning,
        );
        let services = self.graph_registry();
        for entry in &registry.services {
            if into.service_len == into.services.len() {
                into.services.push(CapturedService {
                    type_id: entry.type_id,
                    name: entry.name,
                    part: (entry.new_part)(),
                    book: None,
                });
            }
            let captured = &mut into.services[into.service_len];
            if captured.type_id != entry.type_id {
                *captured = CapturedService {
                    type_id: entry.type_id,
                    name: entry.name,
                    part: (entry.new_part)(),
                    book: None,
                };
            }
            captured.book = self.slot_book(Some(entry.type_id));
            into.service_len += 1;
            let value = services
                .table()
                .id_of_type(entry.type_id)
                .and_then(|id| services.slot(id))
                .and_then(|slot| slot.value.as_deref());
            cloning.set(entry.name);
            let same_type = captured.part.capture(value);
            debug_assert!(same_type, "a slot holds a value of its own type");
        }
        for entry in &registry.messages {
            if into.messages_len == into.messages.len() {
                into.messages.push(CapturedMessages {
                    type_id: entry.type_id,
                    name: entry.name,
                    part: (entry.new_part)(),
                    present: false,
                });
            }
            let captured = &mut into.messages[into.messages_len];
            if captured.type_id != entry.type_id {
                *captured = CapturedMessages {
                    type_id: entry.type_id,
                    name: entry.name,
                    part: (entry.new_part)(),
                    present: false,
                };
            }
            into.messages_len += 1;
            let queue = services
                .table()
                .id_of_type(entry.type_id)
                .and_then(|id| services.slot(id))
                .and_then(|slot| slot.value.as_deref());
            cloning.set(entry.name);
            // SAFETY: no node of this world runs: the snapshot was refused
            // from a whole-world system or custom command, and an iteration
            // holds the world `&mut` (SOUNDNESS N9).
            captured.present = queue.is_some_and(|queue| unsafe { captured.part.capture(queue) });
        }
        self.capture_scripts(into, cloning);
        let Snapshot { report, .. } = into;
        // What is not captured, by name.
        let table = services.table();
        let own = [
            TypeId::of::<FrameTime>(),
            TypeId::of::<FixedTime>(),
            TypeId::of::<crate::script::SimClock>(),
        ];
        for (index, slot) in services.slots().iter().enumerate() {
            let Some(value) = slot.value.as_deref() else {
                continue;
            };
            // A value of no size (a component's lane, a marker) holds no
            // state to lose.
            if size_of_val(value) == 0 {
                continue;
            }
            let id = crate::access::ServiceId(index as u32);
            let type_id = (*value).type_id();
            if !table.is_typed(id) {
                if let Some(entry) = registry.local(type_id) {
                    cloning.set(entry.name);
                    if let Some(clone) = (entry.clone)(value) {
                        into.locals.push(CapturedLocal {
                            slot: id,
                            type_id,
                            name: entry.name,
                            value: clone,
                            clone: entry.clone,
                            #[cfg(feature = "serde")]
                            key: self.local_key(id, type_id),
                        });
                        continue;
                    }
                }
                report.push(PartKind::Local, table.name(id));
            } else if table.is_private(id)
                || own.contains(&type_id)
                || registry.service(type_id).is_some()
                || registry.messages(type_id).is_some()
                || registry.scripts(type_id).is_some()
            {
                continue;
            } else if table
                .name(id)
                .starts_with("sluice::script::store::Scripts<")
            {
                report.push(PartKind::Scripts, table.name(id));
            } else if table.name(id).starts_with("sluice::message::Messages<") {
                report.push(PartKind::Messages, table.name(id));
            } else {
                report.push(PartKind::Service, table.name(id));
            }
        }
        into.clock = Some(self.clock_snapshot());
        into.entities_book = self.slot_book(None);
        into.origin = Some(self.world_id());
        into.locals_world = into.origin;
        self.capture_cursors(&mut into.cursors);
        into.removal_ticks = self.removal_ticks();
        self.states.capture_marks(&mut into.state_marks);
        into.started = self.has_started();
        // An `Arc` clone: no allocation.
        #[cfg(feature = "serde")]
        into.saves.clone_from(&registry.saves);
    }

    /// Gives back the world as `snapshot` was: its entities (the same ids),
    /// archetype rows, component values and ticks, opted-in services and
    /// clocks. See the [module](crate::snapshot) for the rules.
    ///
    /// # Errors
    /// Every error but [`RestoreError::DropPanicked`] leaves the world
    /// unchanged: [`DuringIteration`](RestoreError::DuringIteration),
    /// [`Empty`](RestoreError::Empty), [`LeftOut`](RestoreError::LeftOut),
    /// [`NotOptedIn`](RestoreError::NotOptedIn),
    /// [`StorageDiffers`](RestoreError::StorageDiffers),
    /// [`Corrupt`](RestoreError::Corrupt), [`Panicked`](RestoreError::Panicked).
    pub fn restore(&mut self, snapshot: &Snapshot) -> Result<(), RestoreError> {
        if self.is_running_whole() {
            return Err(RestoreError::DuringIteration);
        }
        if !snapshot.store.filled {
            return Err(RestoreError::Empty);
        }
        let left_out = snapshot.report.left_out_components();
        if !left_out.is_empty() {
            return Err(RestoreError::LeftOut { names: left_out });
        }
        let services = &snapshot.services[..snapshot.service_len];
        if let Some(service) = services
            .iter()
            .find(|s| self.snapshots.service(s.type_id).is_none())
        {
            return Err(RestoreError::NotOptedIn {
                what: format!("service {}", service.name),
            });
        }
        self.check_scripts(snapshot)?;
        let same_world = snapshot.origin == Some(self.world_id());
        // Locals name slots of one world: the one they were taken from,
        // or the one a save's locals were resolved in (`read_snapshot`).
        let locals_here = snapshot.locals_world == Some(self.world_id());
        if locals_here && let Some(gone) = self.gone_local(snapshot) {
            return Err(RestoreError::NodeGone { local: gone });
        }
        let registry = &self.snapshots;
        snapshot
            .store
            .check(self.entities(), &|type_id| {
                registry.component(type_id).is_some()
            })
            .map_err(|mismatch| match mismatch {
                StoreMismatch::NotOptedIn(name) => RestoreError::NotOptedIn {
                    what: format!("component {name}"),
                },
                StoreMismatch::Storage {
                    name,
                    snapshot,
                    world,
                } => RestoreError::StorageDiffers {
                    component: name,
                    snapshot,
                    world,
                },
                StoreMismatch::Corrupt(what) => RestoreError::Corrupt { what },
            })?;
        // Every clone before the world changes: a panicking `Clone` leaves
        // it as it was.
        let cloning = Cell::new("");
        let staged = catch_unwind(AssertUnwindSafe(|| {
            let store = snapshot.store.stage(&cloning);
            let services: Vec<Option<Box<dyn Any + Send + Sync>>> = services
                .iter()
                .map(|service| {
                    cloning.set(service.name);
                    service.part.stage()
                })
                .collect();
            // A queue's readers are nodes of its world: only there is it
            // put back.
            let messages: Vec<Option<Box<dyn Any + Send>>> = snapshot.messages
                [..snapshot.messages_len]
                .iter()
                .map(|messages| {
                    cloning.set(messages.name);
                    (same_world && messages.present).then(|| messages.part.stage())
                })
                .collect();
            // A `Local` is a node's own: only there is it put back.
            let locals: Vec<Option<Box<dyn Any + Send + Sync>>> = if locals_here {
                snapshot
                    .locals
                    .iter()
                    .map(|local| {
                        cloning.set(local.name);
                        (local.clone)(&*local.value)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let scripts = Self::stage_scripts(snapshot, &cloning);
            (store, services, messages, locals, scripts)
        }));
        let Ok((store, values, queues, locals, scripts)) = staged else {
            return Err(RestoreError::Panicked {
                what: cloning.get().to_owned(),
            });
        };
        let mut panics: Vec<&'static str> = Vec::new();
        snapshot
            .store
            .restore_into(self.entities_mut(), store, &mut panics);
        self.rebind_refs(snapshot.store.origin);
        for (service, value) in services.iter().zip(values) {
            let old = self.replace_service_boxed(service.type_id, service.name, value);
            if catch_unwind(AssertUnwindSafe(|| drop(old))).is_err() {
                panics.push(service.name);
            }
        }
        for (messages, staged) in snapshot.messages.iter().zip(queues) {
            let Some(staged) = staged else { continue };
            let old = self
                .service_value_mut(messages.type_id)
                .and_then(|queue| messages.part.apply(staged, queue));
            if catch_unwind(AssertUnwindSafe(|| drop(old))).is_err() {
                panics.push(messages.name);
            }
        }
        for (local, value) in snapshot.locals.iter().zip(locals) {
            // `None`: the snapshot's own clone cannot fail (its type, and
            // nothing holds its lock); kept as it is all the same.
            let Some(value) = value else { continue };
            let old = self
                .slot_value_mut(local.slot)
                .and_then(|slot| slot.replace(value));
            if catch_unwind(AssertUnwindSafe(|| drop(old))).is_err() {
                panics.push(local.name);
            }
        }
        // A save read back replaces the stores as it replaces the entity
        // allocator: the saved ids, and the ids to hand out next, so a
        // `ScriptId` kept in a saved component or service names its script
        // again. Another world's snapshot in memory keeps this world's ids
        // unique instead (see `Scripts::restore`).
        let scripts_exact = same_world || snapshot.origin.is_none();
        self.apply_scripts(snapshot, scripts, scripts_exact, &mut panics);
        if let Some(clock) = &snapshot.clock {
            self.restore_clock(clock);
        }
        self.set_removal_ticks(snapshot.removal_ticks);
        if snapshot.origin != Some(self.world_id()) {
            // Another world's cursors and versions mean nothing here:
            // every node starts over (its next run sees everything as new).
            self.restore_cursors(&crate::world::NodeCursors::default());
            return finish(panics);
        }
        // Readers and factories see the restored slots, and their own
        // cursors, as they were at the snapshot.
        for service in services {
            if let Some(book) = service.book {
                self.set_slot_book(Some(service.type_id), book);
            }
        }
        if let Some(book) = snapshot.entities_book {
            self.set_slot_book(None, book);
        }
        self.restore_cursors(&snapshot.cursors);
        // The state drivers' bookkeeping follows the restored versions: a
        // derived state recomputes exactly when it would have.
        self.states.restore_marks(&snapshot.state_marks);
        // Before the first run, the initial values are entered right after
        // `Startup`: a world restored to then starts again.
        self.set_started(snapshot.started);
        finish(panics)
    }
}

impl World {
    /// Binds the restored [`ComponentRef`](crate::ComponentRef)s of every
    /// type opted in with [`snapshot_component_ref`](Self::snapshot_component_ref)
    /// to this world's store, when the snapshot was not taken from it
    /// (`from`: the store it was taken from; `None` for a save's).
    fn rebind_refs(&mut self, from: Option<crate::entity::StoreId>) {
        if from == Some(self.entities().id()) {
            // Taken from this store: every cached column is this store's.
            return;
        }
        let rebinds: Vec<_> = self
            .snapshots
            .refs
            .iter()
            .map(|entry| entry.rebind)
            .collect();
        for rebind in rebinds {
            let refused = rebind(self.entities_mut(), from);
            // A restore checks the snapshot first (a save's references by
            // `read_snapshot`; a capture's were made by `ComponentRef::new`
            // and their targets, frozen, kept their `T`): nothing here.
            debug_assert!(refused.is_empty(), "references left unbound: {refused:?}");
            for (holder, error) in refused {
                tracing::error!("{holder}'s reference was left unbound by a restore: {error}");
            }
        }
    }

    /// The first `Local` of `snapshot` whose node this world no longer has
    /// (its slot emptied or holding another type), named with its slot.
    fn gone_local(&self, snapshot: &Snapshot) -> Option<String> {
        let services = self.graph_registry();
        snapshot
            .locals
            .iter()
            .find(|local| {
                let value = services
                    .slot(local.slot)
                    .and_then(|slot| slot.value.as_deref());
                value.is_none_or(|value| (*value).type_id() != local.type_id)
            })
            .map(|local| format!("{} (slot {})", local.name, local.slot.index()))
    }
}

/// A restore's result: the `Drop`s that panicked, if any.
fn finish(panics: Vec<&'static str>) -> Result<(), RestoreError> {
    if panics.is_empty() {
        Ok(())
    } else {
        Err(RestoreError::DropPanicked {
            what: panics.into_iter().map(str::to_owned).collect(),
        })
    }
}
