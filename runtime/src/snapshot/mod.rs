//! Snapshots of a whole world, and the rollback buffer (issue 39).
//!
//! [`World::snapshot`](crate::World::snapshot) copies everything opted in
//! into a [`Snapshot`]; [`World::restore`](crate::World::restore) gives the
//! world back as it was; a [`RollbackBuffer`] keeps the last frames'
//! snapshots for a rollback session, reusing their memory.
//!
//! # What a snapshot holds
//!
//! - The entity store: every entity id (the slot table: generations, the
//!   free list), every archetype's rows in row order, each opted-in
//!   component's values with their added and changed ticks, sparse-set
//!   components the same way, the store's change tick and its removal
//!   records ([`Removed`](crate::Removed)). A restore gives back the same
//!   ids (an [`Entity`](crate::Entity) kept inside a component stays
//!   valid), the same archetype membership, values and ticks, and the
//!   next spawns get the ids they got after the snapshot was taken.
//! - Every opted-in service (cloned; [`Clone::clone_from`] reuses memory).
//! - Every opted-in message queue ([`World::snapshot_messages`](crate::World::snapshot_messages)):
//!   its kept messages and every reader's cursor, put back into the world
//!   it was taken from. **A message sent from outside the frame is part
//!   of a snapshot once a boundary has drained it**: a
//!   [`MessageSender`](crate::MessageSender) (any thread, or the caller
//!   between iterations) puts it in the sender's queue, and only the next
//!   iteration boundary moves it into the log a snapshot copies. So a
//!   message sent before the snapshot and not drained yet is in no
//!   snapshot; a restore leaves the sender's queue as it is, and the next
//!   boundary delivers whatever is in it, sent before or after the
//!   snapshot. One drained after the snapshot was taken is undone by a
//!   restore with the rest of the log (its sender is not asked again).
//! - Every node's change cursors (and a factory's record of its inputs),
//!   with each opted-in service slot's version and change ticks, so
//!   `Changed<T>`, `Added<T>` and `Tracked<T>` see after a restore what
//!   they saw then: a world restored and played on gives the same frames.
//!   Into another world, every node starts over instead (its next run sees
//!   everything as new).
//! - Every state ([`World::insert_state`](crate::World::insert_state),
//!   sub-states, computed states): opted in when it is added, its
//!   [`State<S>`](crate::state::State) and its pending request
//!   ([`NextState<S>`](crate::state::NextState)) as services, and the
//!   state point's bookkeeping (whether the initial value was entered,
//!   the source version a derived state last computed from), put back
//!   into the world it was taken from: a restored world applies the same
//!   transitions as the run it undid. With it, whether the world had run
//!   its `Startup` schedule: a world restored to a snapshot taken before
//!   its first run runs `Startup` again at its next run and enters its
//!   states' initial values right after it, as the frames that followed
//!   the snapshot did (the API model found them entered one frame late,
//!   after the frame instead of before it). Saving a state to disk is opt-in
//!   like any service (`World::save_service::<State<S>>`).
//! - Every node's [`Local<T>`](crate::Local) of a type opted in with
//!   [`World::snapshot_local`](crate::World::snapshot_local), by its slot
//!   (one parameter of one registration; slots are never reused), put
//!   back into the world it was taken from only: a restore refuses
//!   ([`RestoreError::NodeGone`]) when one of those nodes was removed
//!   since. A local's slot holds a `Mutex<T>`: a run reaches it through
//!   `&mut` without locking, and a snapshot through `&World` with a
//!   `try_lock` (nothing runs then; no `unsafe`).
//! - The world's clocks ([`World::clock_snapshot`](crate::World::clock_snapshot):
//!   the frame clock, the fixed-step accumulator, [`FixedTime`](crate::FixedTime),
//!   the [`SimClock`](crate::script::SimClock)).
//! - Every script store opted in ([`World::insert_scripts`](crate::World::insert_scripts),
//!   [`World::snapshot_scripts`](crate::World::snapshot_scripts), a store
//!   made by [`Commands::start_script`](crate::Commands::start_script)):
//!   each live [`StepScript`](crate::script::StepScript)'s id (serial and
//!   slot), name, state (cloned into the last capture's box with
//!   [`Clone::clone_from`]: a warm capture allocates nothing) and wait
//!   (deadlines are on the `SimClock`, captured above), and the store's
//!   layout (free slots in reuse order, the next serial, the timer rings'
//!   positions, the clock steps seen, the finished count). Restored into
//!   the world it was taken from, the store is put back exactly, the next
//!   id too: the frames after the restore start the same scripts under
//!   the same ids (so an id handed out in the frames undone may name
//!   another script again, as an entity id may; the store takes a new
//!   identity, so a [`ScriptSnapshot`](crate::script::ScriptSnapshot)
//!   from before restores into it as another store's, with new ids where
//!   they could clash). Into another world, as
//!   [`Scripts::restore`](crate::script::Scripts::restore) does (a fresh
//!   store keeps the saved ids). A store opted in but absent at the
//!   snapshot is taken out by the restore.
//!
//! Opt in with [`World::snapshot_component`](crate::World::snapshot_component)
//! and [`World::snapshot_service`](crate::World::snapshot_service). The
//! runtime opts in its own components ([`Disabled`](crate::Disabled),
//! [`ChildOf`](crate::ChildOf), [`Children`](crate::Children),
//! [`Transform`](crate::Transform), [`GlobalTransform`](crate::GlobalTransform)).
//!
//! # Incremental captures
//!
//! [`World::snapshot_into`](crate::World::snapshot_into) (and so
//! [`RollbackBuffer::save`]) into a snapshot holding an earlier capture of
//! the same entity store keeps a component type's values and ticks from
//! then, without copying, when every column of that type is the same,
//! with the same version: each column's version rises whenever a row
//! moves in or out, a value is inserted, replaced or stamped, its ticks
//! are clamped, or a writing query (`&mut T`, `Mut<T>`) fetches it (once
//! per column, not per row). The rest (entity ids, slots, services,
//! messages, cursors, clocks) is captured every time. A failed capture,
//! another world's, or [`Snapshot::set_incremental`]`(false)` make the
//! next capture copy everything; [`Snapshot::reused_components`] counts
//! the kept types (`entity/snapshot.rs` has the details).
//!
//! # What it leaves out
//!
//! Nothing is skipped silently: [`SnapshotReport::left_out`] names every
//! component type with rows, service, message queue and
//! [`Local`](crate::Local) that is not captured. Not captured: message
//! queues not opted in, and messages other threads sent that no boundary
//! has drained; `Local` values of types not opted in, and every `Local`
//! restored into another world (its nodes are not this world's); a
//! script store not opted in ([`PartKind::Scripts`], as one inserted with
//! `World::insert`), or holding an `async` script (its state is a
//! compiler-made future, not data) or intents gathered and not drained by
//! collect (take snapshots between updates): reported by the store's
//! type name, and left as it is by a restore; a script store's
//! [`failures`](crate::script::Scripts::failures) (a log, not state);
//! a whole-world system's run conditions' cursors. A strict world
//! ([`World::set_snapshot_strict`](crate::World::set_snapshot_strict))
//! refuses to take a snapshot while anything is left out.
//!
//! # Semantics of a restore
//!
//! - Everything is checked before anything changes: a snapshot holding a
//!   component or service type this world does not snapshot, a component
//!   stored another way (table or sparse set), a snapshot that left out
//!   component rows ([`RestoreError::LeftOut`]: the world could not be
//!   given back as it was), or an inconsistent one (a damaged save) is
//!   refused with a named error and the world is unchanged. Then every
//!   value is cloned out of the snapshot, before the world is touched: a
//!   `Clone` that panics leaves the world unchanged
//!   ([`RestoreError::Panicked`]).
//! - Components are matched by type, not by their number in a registry:
//!   a snapshot of another world with the same types, registered in
//!   another order, restores; a component type the world never met is
//!   registered. Component types registered after the snapshot was taken
//!   end up with no rows.
//! - Services left out are untouched. An opted-in service the world did
//!   not hold at the snapshot is taken out of the world.
//! - Restore is not a spawn: no hook or observer fires. Registered nodes,
//!   the plan and the schedule are not part of the world's state: nodes
//!   registered after the snapshot stay registered.
//! - A value whose `Drop` panics as the restore replaces it: the restore
//!   finishes (the world is as the snapshot was) and then reports it
//!   ([`RestoreError::DropPanicked`]); a script the restore takes away
//!   from a store whose `Drop` panics is recorded as that script's
//!   failure ([`Scripts::failures`](crate::script::Scripts::failures)), as
//!   a cancel records it.
//! - Refused during an iteration (from a whole-world system or a custom
//!   command): [`SnapshotError::DuringIteration`],
//!   [`RestoreError::DuringIteration`].
//!
//! # Saves, the checksum and divergence (the `serde` feature)
//!
//! `World::save_component::<T>("name")` and `World::save_service` opt a
//! type into snapshots and into saves under a stable name (one name per
//! type, one type per name; the runtime's own components are saved as
//! `sluice::ChildOf`, `sluice::Children`, `sluice::Disabled`,
//! `sluice::Transform` and `sluice::GlobalTransform`). Then
//! `Snapshot::write_to` writes a save, `World::read_snapshot` reads one
//! into a snapshot (nothing changes in the world) and `World::load_from`
//! reads and restores; `Snapshot::checksum` hashes the saved state and
//! `Snapshot::divergence` names where two snapshots differ.
//!
//! **A save** is a container (magic `SLUICESV`, a format version, named
//! sections each with its length, a trailing xxh3-64 of the whole file)
//! holding postcard encodings: first the entities section (the store's
//! change tick, the world's removal-record window, the slot table: each
//! slot's generation, the frozen slots and the free list in order, so the
//! next spawns get the same ids; every archetype with rows as the save
//! names of its components and its entities in row order; the sparse-set
//! components' entities; the removal records of saved components), then
//! one section per saved component (its values archetype after archetype,
//! then their added and changed ticks) and per saved service (its value,
//! or none: a load takes it out), in the order of their names. Services
//! not registered for saving are not written (a load leaves them as they
//! are), nor are message queues (a load leaves them as they are:
//! `Snapshot::not_saved` names both, and the `Local`s of types not
//! saved); component rows not registered for
//! saving make `write_to` refuse
//! (`SaveError::NotSaved`), as a restore refuses left-out rows. Last, the
//! clocks (`World::clock_snapshot`: the frame clock, the fixed step, its
//! cap and accumulator, `FixedTime`, the `SimClock`), checked on load (a
//! zero step, an accumulator past a step, a bad scale are refused).
//!
//! **Locals in saves.** A snapshot's `Local` values come back only into
//! the world they were taken from (a slot means nothing elsewhere), but a
//! `Local<T>` type registered with `World::save_local::<T>("name")` is
//! saved in a last section (`locals`, only when there is one): each value
//! by its node's instance key (the node's name unless `NodeBuilder::key`
//! set another; the identity a world keeps unique among its nodes, SL0004)
//! and its position among that node's locals (in parameter order: the
//! body's, then each run condition's). A new process that registers the
//! same systems loads it back into the node of that key, in any
//! registration order. Nothing is guessed: a save is refused while two
//! nodes bear a saved local's node key (`SaveError::AmbiguousNode`), and a
//! load when the world has no node of that key (`LoadError::NodeMissing`),
//! two (`LoadError::NodeAmbiguous`), or one whose local there is absent or
//! of another type (`LoadError::Shape`), changing nothing. The checksum
//! covers each saved local, and the divergence report names the first
//! that differs (see below).
//!
//! **Scripts in saves.** A script store registered with
//! `World::save_scripts::<K>("name")`, whose step script types are
//! registered with `World::save_step_script::<K, S>("name")` (`S`'s serde
//! form), is saved in a section of its own (kind `SectionKind::Scripts`,
//! named by the store's name): the layout the snapshot holds and each live
//! script's type name, id, name, wait and postcard-encoded state. A wait
//! on a condition is saved as such; the load asks the loaded state for
//! the function again (`StepScript::resume_wait`). A save is refused
//! before anything is written when a saved store holds a script of a type
//! not registered (`SaveError::NotSaved`, naming the type and the store),
//! a condition its state does not give back
//! (`SaveError::UnsavedCondition`), or a script whose `Serialize` fails or
//! panics. A load refuses an unknown store (`LoadError::UnknownType`) or
//! script type (`LoadError::UnknownScript`), a state that does not decode
//! (`LoadError::Shape`) and a layout that contradicts itself
//! (`LoadError::Inconsistent`), changing nothing; the restore puts the
//! store back exactly, ids and the ids to hand out next included, as it
//! puts back the entity allocator. A store not registered, or holding an `async` script, is not
//! saved (`Snapshot::not_saved` names it) and left as it is by a load.
//!
//! **References in saves.** A [`ComponentRef<T>`](crate::ComponentRef)
//! caches its store's archetype and column numbers, which mean nothing in
//! a file or another store. `World::save_component_ref::<T>("name")`
//! saves each as its target `Entity` (fixed-width in the checksum, so two
//! peers compare equal) and decodes it unbound (a placeholder whose store
//! id, `StoreId::UNBOUND`, no store has: it reads `None` if seen). Before
//! the world changes, a load checks every target: alive, frozen and in an
//! archetype with a table column of `T`, or an id the save's slot table
//! handed out and took back (a dead target, which reads `None` after the
//! load as before); otherwise `LoadError::Reference`. After the restore
//! places the entities, each reference that is unbound or bound to the
//! store the snapshot was taken from is made again with
//! `ComponentRef::new` (the same binding makes another world's in-memory
//! snapshot restore with working references:
//! `World::snapshot_component_ref`), without stamping its changed tick.
//! A reference made in a third store is left alone by a restore (it reads
//! `None` before and after) and refused by a save
//! (`SaveError::ForeignReference`).
//!
//! **Loading** validates everything before the world changes: the magic,
//! the version, the trailing checksum (a truncated file is told apart from
//! a damaged one), each section's bounds, each type by its save name
//! (`LoadError::UnknownType`), each section's decoding with the world's
//! type (`LoadError::Shape`), and the whole for consistency (every live
//! entity in one archetype row, free slots not alive, a hierarchy whose
//! two sides agree: `LoadError::Inconsistent`). A length read from a
//! save never drives an allocation: the container's lengths are only
//! compared with what is left of the input, the entities' lists reserve
//! at most serde's cautious 1 MiB before their elements decode, and
//! component values are decoded one by one up to the row count the
//! entities give (even a zero-sized component's), growing as they go.
//!
//! **The checksum** covers the state a peer would compare: the slot table
//! (generations, frozen slots, free list), every archetype with rows (its
//! saved components' names in column order, its entities in row order)
//! and the sparse-set components' entities, as one part; then each saved
//! component (its name and its values in row order) and each saved
//! service (its name and value), one part each, in name order; then each
//! saved script store (`World::save_scripts`), one part each in name
//! order: its name, its layout (slot count, free list, next serial, clock
//! steps seen, timer ring positions, finished count), its script count,
//! and per script in serial order its type's save name, serial, slot,
//! name and wait (an enum index, then a deadline's seconds and
//! nanoseconds), then its state through its own `Serialize`; last, each
//! saved local (`World::save_local`), one part each in the order of its
//! node's key and its position: the key, the position, the type's save
//! name and the value. Each part
//! is hashed alone, xxh3-64 (default secret, seed 0) of its values in a
//! fixed-width little-endian encoding of serde's data model (the
//! `checksum` module's header gives it rule by rule: integers and float
//! bits at their full width, `usize` as a `u64`, lengths as `u64`s, enum
//! variants as `u32` indices), written by each type's own `Serialize`
//! in one monomorphized loop per column; the checksum is the xxh3-64 of
//! the parts' hashes, each as 8 little-endian bytes, in that order. Not
//! covered: change ticks and removal records (change detection's
//! bookkeeping), the clocks (wall time), and the parts not registered for
//! saving (`Snapshot::not_saved` names them). The same state gives the
//! same checksum on every executor, thread count and machine (endianness
//! and pointer width included), between worlds that register their
//! components in the same order (an archetype's column order follows
//! it). The checksum hashes the values a save holds, not a save's bytes:
//! a save is postcard's varints, which cost a checksum twice the
//! instructions.
//!
//! # Inside: parts, and adding a new kind
//!
//! A snapshot holds its captured values as *parts*, each a typed holder
//! behind the crate-private trait `part::CapturedPart` (with `as_any`, to
//! downcast to the typed holder): a component type's values are a
//! `part::ColumnValues<T>` (`values: Vec<T>` with its ticks), held in the
//! entity store's capture (`entity::CapturedStore::components`, each
//! entry naming its `TypeId` and type name; the archetypes list which
//! part and which range holds each column's rows); a service's is a
//! `part::ServiceValue<T>` in `Snapshot::services`, by `TypeId` and name.
//! The world's registry of what is opted in (`registry::SnapshotRegistry`)
//! holds, per component or service, how to make an empty part and an
//! optional `codec` slot for saves (`Box<dyn Any>`, filled by
//! `save_component`/`save_service` behind the `serde` feature). A new kind
//! of part (message queues, states, script stores) is a new typed holder implementing
//! `CapturedPart`, a list of them in [`Snapshot`], an opt-in entry in the
//! registry, and its capture and restore steps in `world.rs`.

#[cfg(feature = "serde")]
mod checksum;
#[cfg(feature = "serde")]
pub(crate) mod codec;
#[cfg(feature = "serde")]
mod divergence;
mod error;
#[cfg(feature = "serde")]
mod file;
#[cfg(feature = "serde")]
mod io;
#[cfg(feature = "serde")]
mod local_saves;
pub(crate) mod part;
pub(crate) mod registry;
mod rollback;
#[cfg(feature = "serde")]
mod saves;
#[cfg(feature = "serde")]
mod script_saves;
mod scripts;
mod world;

use std::fmt;

#[cfg(feature = "serde")]
pub use divergence::{DIVERGENCE_ENTITIES, Divergence};
pub use error::{RestoreError, SnapshotError};
#[cfg(feature = "serde")]
pub use file::{FORMAT_VERSION, LoadError, ReferenceFault, SaveError, SectionKind};
pub use rollback::RollbackBuffer;
#[cfg(feature = "serde")]
pub use saves::{BUILTIN_SAVE_NAMES, RegistrationError};

use crate::entity::CapturedStore;
use crate::world::ClockSnapshot;
use part::ServicePart;

/// Which kind of state a [`LeftOut`] entry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartKind {
    /// A component type with rows.
    Component,
    /// A service.
    Service,
    /// A message queue ([`Messages<T>`](crate::Messages)).
    Messages,
    /// A system's [`Local`](crate::Local) state.
    Local,
    /// A script store ([`Scripts<K>`](crate::script::Scripts)): not opted
    /// in, or holding an `async` script or intents not drained.
    Scripts,
}

impl fmt::Display for PartKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Component => "component",
            Self::Service => "service",
            Self::Messages => "messages",
            Self::Local => "local",
            Self::Scripts => "scripts",
        })
    }
}

/// One piece of the world's state a snapshot did not capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    kind: PartKind,
    name: String,
}

impl LeftOut {
    /// What kind of state it is.
    pub fn kind(&self) -> PartKind {
        self.kind
    }

    /// Its name: the type name (`std::any::type_name`), or a local's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

/// What a snapshot did not capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotReport {
    /// The first `len` entries are this capture's (the rest keep their
    /// memory for the next).
    left_out: Vec<LeftOut>,
    len: usize,
}

impl SnapshotReport {
    /// The names (type names) of what was not captured, each once.
    pub fn left_out(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.entries().iter().map(LeftOut::name)
    }

    /// What was not captured, with its kind.
    pub fn entries(&self) -> &[LeftOut] {
        &self.left_out[..self.len]
    }

    /// Whether everything was captured.
    pub fn is_complete(&self) -> bool {
        self.len == 0
    }

    /// The component types with rows that were left out (which make a
    /// restore refuse).
    pub(crate) fn left_out_components(&self) -> Vec<String> {
        self.entries()
            .iter()
            .filter(|entry| entry.kind == PartKind::Component)
            .map(|entry| entry.name.clone())
            .collect()
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds an entry, once, reusing an old entry's memory.
    fn push(&mut self, kind: PartKind, name: &str) {
        if self
            .entries()
            .iter()
            .any(|entry| entry.kind == kind && entry.name == name)
        {
            return;
        }
        if self.len == self.left_out.len() {
            self.left_out.push(LeftOut {
                kind,
                name: String::new(),
            });
        }
        let entry = &mut self.left_out[self.len];
        entry.kind = kind;
        entry.name.clear();
        entry.name.push_str(name);
        self.len += 1;
    }
}

/// One opted-in service's captured value.
#[derive(Debug)]
pub(crate) struct CapturedService {
    pub(crate) type_id: std::any::TypeId,
    pub(crate) name: &'static str,
    /// The slot's version and change ticks (`None`: the world had no slot).
    pub(crate) book: Option<(u64, crate::registry::SlotTicks)>,
    pub(crate) part: Box<dyn ServicePart>,
}

/// One opted-in message type's captured queue.
#[derive(Debug)]
pub(crate) struct CapturedMessages {
    /// The queue's type, `Messages<T>`.
    pub(crate) type_id: std::any::TypeId,
    pub(crate) name: &'static str,
    pub(crate) part: Box<dyn part::MessagesPart>,
    /// Whether the world had the queue.
    pub(crate) present: bool,
}

/// One node's `Local<T>` value, captured.
pub(crate) struct CapturedLocal {
    /// Its slot: a slot is never reused, so it names one parameter of one
    /// registration for the world's whole life.
    pub(crate) slot: crate::access::ServiceId,
    /// `LocalValue<T>`.
    pub(crate) type_id: std::any::TypeId,
    pub(crate) name: &'static str,
    /// A `LocalValue<T>` holding the clone.
    pub(crate) value: Box<dyn std::any::Any + Send + Sync>,
    /// Clones `value` again, for a restore.
    pub(crate) clone: registry::CloneLocal,
    /// Its identity in a save (node name, position), when its type is
    /// saved (`World::save_local`).
    #[cfg(feature = "serde")]
    pub(crate) key: Option<local_saves::LocalKey>,
}

impl fmt::Debug for CapturedLocal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapturedLocal")
            .field("slot", &self.slot)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A world's state, taken by [`World::snapshot`](crate::World::snapshot)
/// and given back by [`World::restore`](crate::World::restore). Holds
/// copies only: it is not tied to the world's lifetime, and may be kept,
/// moved to another thread, or restored into another world that snapshots
/// the same types. See the [module](self) for what it holds.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub(crate) report: SnapshotReport,
    pub(crate) store: CapturedStore,
    /// The opted-in services; the first `service_len` are this capture's.
    pub(crate) services: Vec<CapturedService>,
    pub(crate) service_len: usize,
    /// The opted-in message queues; the first `messages_len` are this
    /// capture's.
    pub(crate) messages: Vec<CapturedMessages>,
    pub(crate) messages_len: usize,
    /// The opted-in script stores; the first `scripts_len` are this
    /// capture's.
    pub(crate) scripts: Vec<scripts::CapturedScripts>,
    pub(crate) scripts_len: usize,
    pub(crate) clock: Option<ClockSnapshot>,
    /// The id of the world it was taken from (`None`: built otherwise, by
    /// a save's reader).
    pub(crate) origin: Option<u64>,
    /// Every node's change cursors.
    pub(crate) cursors: crate::world::NodeCursors,
    /// The entity store's slot: its version and change ticks.
    pub(crate) entities_book: Option<(u64, crate::registry::SlotTicks)>,
    /// The world's removal-record window (`World::removal_ticks`).
    pub(crate) removal_ticks: (u32, u32),
    /// Each state driver's own bookkeeping, by state type (put back only
    /// into the world it was taken from).
    pub(crate) state_marks: Vec<(std::any::TypeId, crate::state::StateMarks)>,
    /// Whether the world had run `Startup` (put back only into the world
    /// it was taken from).
    pub(crate) started: bool,
    /// The opted-in `Local` values, each by its slot (put back only into
    /// the world it was taken from).
    pub(crate) locals: Vec<CapturedLocal>,
    /// The world whose slots `locals` name (the world it was taken from,
    /// or the one a save's locals were read for): put back only there.
    pub(crate) locals_world: Option<u64>,
    /// The codecs of the types the world saves, as at the capture: a
    /// snapshot is written, checksummed and compared without its world.
    #[cfg(feature = "serde")]
    pub(crate) saves: std::sync::Arc<saves::SaveCodecs>,
}

impl Snapshot {
    /// An empty snapshot (restoring it is refused: [`RestoreError::Empty`]),
    /// to fill with [`World::snapshot_into`](crate::World::snapshot_into).
    pub fn new() -> Self {
        Self::default()
    }

    /// What it did not capture.
    pub fn report(&self) -> &SnapshotReport {
        &self.report
    }

    /// The bytes of heap memory held by the captured values and tables
    /// (capacities: what keeping it costs; a service's own heap, such as a
    /// `Vec` inside it, is not counted).
    pub fn heap_bytes(&self) -> usize {
        self.store.heap_bytes()
            + self
                .services
                .iter()
                .map(|service| service.part.heap_bytes())
                .sum::<usize>()
            + self.services.capacity() * size_of::<CapturedService>()
            + self
                .messages
                .iter()
                .map(|messages| messages.part.heap_bytes())
                .sum::<usize>()
            + self.messages.capacity() * size_of::<CapturedMessages>()
            + self.scripts_heap_bytes()
            + self
                .report
                .left_out
                .iter()
                .map(|entry| entry.name.capacity())
                .sum::<usize>()
    }

    /// How many entities it holds (0 when empty).
    pub fn entity_count(&self) -> usize {
        self.store.entity_count()
    }

    /// Whether it holds a capture (a new snapshot, or one whose capture
    /// failed, does not).
    pub fn is_filled(&self) -> bool {
        self.store.filled
    }

    /// Whether [`World::snapshot_into`](crate::World::snapshot_into) may
    /// keep a component type's values from this snapshot's last capture
    /// instead of copying them again (on by default; see
    /// [`reused_components`](Self::reused_components)). Off, every capture
    /// copies everything.
    pub fn set_incremental(&mut self, incremental: bool) {
        self.store.always_full = !incremental;
    }

    /// Whether captures into it are incremental
    /// ([`set_incremental`](Self::set_incremental)).
    pub fn is_incremental(&self) -> bool {
        !self.store.always_full
    }

    /// How many component types the last capture kept from the capture
    /// before instead of copying: with [incremental](Self::set_incremental)
    /// captures, a type whose every column (per archetype, or its sparse
    /// set) is the same, with no row moved in or out, no value inserted,
    /// replaced or stamped, and no query or `get_mut` handed out mutable
    /// access to it since this snapshot's last capture of the same world.
    /// Such a type's values and ticks are exactly what a copy would give.
    pub fn reused_components(&self) -> usize {
        if self.store.filled {
            self.store.kept
        } else {
            0
        }
    }

    /// Forgets what it holds, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.store.clear();
        self.clear_beside_store();
    }

    /// Forgets everything but the entity store's capture, which a capture
    /// resets itself (keeping the parts it may reuse).
    pub(crate) fn clear_beside_store(&mut self) {
        self.report.clear();
        for service in &mut self.services {
            service.part.forget();
        }
        self.service_len = 0;
        self.messages_len = 0;
        self.scripts_len = 0;
        self.clock = None;
        self.state_marks.clear();
        self.locals.clear();
        self.locals_world = None;
    }
}
