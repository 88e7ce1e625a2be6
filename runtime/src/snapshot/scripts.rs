//! Script stores in a world's snapshot: a [`Scripts<K>`] opted in
//! ([`World::insert_scripts`], [`World::snapshot_scripts`]) is captured
//! with the rest of the world, and put back by its restore.

use std::any::{Any, TypeId};
use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{PartKind, RestoreError, Snapshot, SnapshotReport};
use crate::World;
use crate::script::step::StepBody;
use crate::script::{ScriptKind, ScriptSnapshot, Scripts};

/// A captured script store, behind a type-erased box.
pub(crate) trait ScriptsPart: Send + Sync + fmt::Debug {
    /// Captures the store `value` (a `Scripts<K>`), reusing memory.
    /// `false`: its scripts are not all step scripts, or it holds intents
    /// collect has not drained; nothing is captured then (the caller
    /// reports the store left out).
    fn capture(&mut self, value: &(dyn Any + Send + Sync)) -> bool;
    /// Clones every saved script's state out (a `Vec` of step bodies,
    /// boxed). May panic (`Clone`).
    fn stage(&self) -> Box<dyn Any + Send>;
    /// Puts the staged scripts into `store` (a `Scripts<K>`); `exact`: the
    /// world is the one it was captured in. `false` when a type differs.
    fn apply(
        &self,
        staged: Box<dyn Any + Send>,
        store: &mut (dyn Any + Send + Sync),
        exact: bool,
    ) -> bool;
    /// A new, empty `Scripts<K>` (a restore into a world that has none).
    fn new_store(&self) -> Box<dyn Any + Send + Sync>;
    /// The heap bytes it holds.
    fn heap_bytes(&self) -> usize;
    /// Refuses a save of it (see `ScriptsValue::check_store`).
    #[cfg(feature = "serde")]
    fn check_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        store_type: &str,
    ) -> Result<(), super::SaveError>;
    /// Its section's payload (see `ScriptsValue::encode_store`).
    #[cfg(feature = "serde")]
    fn encode_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        out: &mut Vec<u8>,
    ) -> postcard::Result<()>;
    /// Its checksum's encoding (see `ScriptsValue::hash_store`).
    #[cfg(feature = "serde")]
    fn hash_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        hasher: &mut super::checksum::PartHasher,
    ) -> Result<(), super::checksum::EncodeError>;
}

/// One kind's captured store.
pub(crate) struct ScriptsValue<K: ScriptKind> {
    pub(crate) saved: ScriptSnapshot<K>,
}

impl<K: ScriptKind> Default for ScriptsValue<K> {
    fn default() -> Self {
        Self {
            saved: ScriptSnapshot::empty(),
        }
    }
}

impl<K: ScriptKind> fmt::Debug for ScriptsValue<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptsValue")
            .field("kind", &std::any::type_name::<K>())
            .field("scripts", &self.saved.len())
            .finish()
    }
}

impl<K: ScriptKind> ScriptsPart for ScriptsValue<K> {
    fn capture(&mut self, value: &(dyn Any + Send + Sync)) -> bool {
        let Some(store) = value.downcast_ref::<Scripts<K>>() else {
            return false;
        };
        // Intents waiting for collect are the store's state too, and not
        // data a snapshot can clone (`K::Intent` need not be `Clone`).
        store.undrained() == 0 && self.saved.capture_from(store).is_ok()
    }

    fn stage(&self) -> Box<dyn Any + Send> {
        Box::new(self.saved.stage())
    }

    fn apply(
        &self,
        staged: Box<dyn Any + Send>,
        store: &mut (dyn Any + Send + Sync),
        exact: bool,
    ) -> bool {
        let (Some(store), Ok(staged)) = (
            store.downcast_mut::<Scripts<K>>(),
            staged.downcast::<Vec<Box<dyn StepBody<K>>>>(),
        ) else {
            return false;
        };
        store.restore_staged(&self.saved, *staged, exact);
        true
    }

    fn new_store(&self) -> Box<dyn Any + Send + Sync> {
        Box::new(Scripts::<K>::new())
    }

    fn heap_bytes(&self) -> usize {
        self.saved.heap_bytes()
    }

    #[cfg(feature = "serde")]
    fn check_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        store_type: &str,
    ) -> Result<(), super::SaveError> {
        self.check_store(saves, store_type)
    }

    #[cfg(feature = "serde")]
    fn encode_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        out: &mut Vec<u8>,
    ) -> postcard::Result<()> {
        self.encode_store(saves, out)
    }

    #[cfg(feature = "serde")]
    fn hash_saved(
        &self,
        saves: &super::saves::SaveCodecs,
        hasher: &mut super::checksum::PartHasher,
    ) -> Result<(), super::checksum::EncodeError> {
        self.hash_store(saves, hasher)
    }
}

/// What a snapshot holds of one opted-in store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreState {
    /// Captured: a restore puts it back.
    Captured,
    /// The world held no store: a restore takes it out.
    Absent,
    /// Not captured (an `async` script, or intents not drained), named in
    /// the report: a restore leaves the world's store as it is.
    LeftOut,
}

/// One opted-in store's capture.
#[derive(Debug)]
pub(crate) struct CapturedScripts {
    /// `Scripts<K>`.
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// The store slot's version and change ticks (`None`: no slot).
    pub(crate) book: Option<(u64, crate::registry::SlotTicks)>,
    pub(crate) part: Box<dyn ScriptsPart>,
    pub(crate) state: StoreState,
}

/// A restore's scripts, cloned out of the snapshot: per captured store,
/// its staged scripts (`None`: take the store out).
pub(crate) type StagedScripts = Vec<Option<Box<dyn Any + Send>>>;

impl World {
    /// Opts the script store [`Scripts<K>`] into snapshots: from now on
    /// [`snapshot`](Self::snapshot) captures its step scripts (their ids,
    /// slots, states and waits, the store's layout) and
    /// [`restore`](Self::restore) puts them back, so the frames after a
    /// restore are the frames that followed the snapshot. A store holding
    /// an `async` script, or intents collect has not drained, is left out
    /// (named in the [report](crate::Snapshot::report); a strict world
    /// refuses the snapshot). [`insert_scripts`](Self::insert_scripts) and
    /// [`Commands::start_step_script`](crate::Commands::start_step_script)
    /// opt in on their own. Idempotent.
    pub fn snapshot_scripts<K: ScriptKind>(&mut self) -> &mut Self {
        self.snapshots.add_scripts::<K>();
        self
    }

    /// Inserts the script store `scripts` (replacing the world's) and opts
    /// it into snapshots ([`snapshot_scripts`](Self::snapshot_scripts)),
    /// as [`insert_state`](Self::insert_state) opts a state in.
    pub fn insert_scripts<K: ScriptKind>(&mut self, scripts: Scripts<K>) -> &mut Self {
        self.insert(scripts);
        self.snapshot_scripts::<K>()
    }

    /// Captures every opted-in store into `into`, reporting the ones left
    /// out; `cloning` names the store whose script is being cloned.
    pub(super) fn capture_scripts(&self, into: &mut Snapshot, cloning: &Cell<&'static str>) {
        let services = self.graph_registry();
        for entry in &self.snapshots.scripts {
            if into.scripts_len == into.scripts.len() {
                into.scripts.push(CapturedScripts {
                    type_id: entry.type_id,
                    name: entry.name,
                    book: None,
                    part: (entry.new_part)(),
                    state: StoreState::Absent,
                });
            }
            let captured = &mut into.scripts[into.scripts_len];
            if captured.type_id != entry.type_id {
                *captured = CapturedScripts {
                    type_id: entry.type_id,
                    name: entry.name,
                    book: None,
                    part: (entry.new_part)(),
                    state: StoreState::Absent,
                };
            }
            into.scripts_len += 1;
            captured.book = self.slot_book(Some(entry.type_id));
            let store = services
                .table()
                .id_of_type(entry.type_id)
                .and_then(|id| services.slot(id))
                .and_then(|slot| slot.value.as_deref());
            cloning.set(entry.name);
            captured.state = match store {
                None => StoreState::Absent,
                Some(store) if captured.part.capture(store) => StoreState::Captured,
                Some(_) => {
                    report_left_out(&mut into.report, entry.name);
                    StoreState::LeftOut
                }
            };
        }
    }

    /// The first captured store of a type this world does not snapshot.
    pub(super) fn check_scripts(&self, snapshot: &Snapshot) -> Result<(), RestoreError> {
        match snapshot.scripts[..snapshot.scripts_len]
            .iter()
            .find(|s| s.state != StoreState::LeftOut && self.snapshots.scripts(s.type_id).is_none())
        {
            Some(store) => Err(RestoreError::NotOptedIn {
                what: format!("scripts {}", store.name),
            }),
            None => Ok(()),
        }
    }

    /// Clones every captured store's scripts out of `snapshot`; may panic
    /// (a script's `Clone`), naming the store in `cloning` first.
    pub(super) fn stage_scripts(
        snapshot: &Snapshot,
        cloning: &Cell<&'static str>,
    ) -> StagedScripts {
        snapshot.scripts[..snapshot.scripts_len]
            .iter()
            .map(|store| {
                cloning.set(store.name);
                (store.state == StoreState::Captured).then(|| store.part.stage())
            })
            .collect()
    }

    /// Puts the staged stores in (nothing here panics but a dropped
    /// script's `Drop`: a cancelled script's is recorded as its failure in
    /// the store; a store taken out, in `panics`).
    pub(super) fn apply_scripts(
        &mut self,
        snapshot: &Snapshot,
        staged: StagedScripts,
        same_world: bool,
        panics: &mut Vec<&'static str>,
    ) {
        for (store, staged) in snapshot.scripts[..snapshot.scripts_len].iter().zip(staged) {
            match store.state {
                StoreState::LeftOut => continue,
                StoreState::Absent => {
                    let old = self.replace_service_boxed(store.type_id, store.name, None);
                    if catch_unwind(AssertUnwindSafe(|| drop(old))).is_err() {
                        panics.push(store.name);
                    }
                }
                StoreState::Captured => {
                    let Some(staged) = staged else { continue };
                    if self.service_value_mut(store.type_id).is_none() {
                        let new = Some(store.part.new_store());
                        // The world held no store: nothing old to drop.
                        let _none = self.replace_service_boxed(store.type_id, store.name, new);
                    }
                    if let Some(value) = self.service_value_mut(store.type_id) {
                        let applied = store.part.apply(staged, value, same_world);
                        debug_assert!(applied, "a slot holds a value of its own type");
                    }
                }
            }
            if same_world && let Some(book) = store.book {
                self.set_slot_book(Some(store.type_id), book);
            }
        }
    }
}

/// Reports the store `name` left out.
fn report_left_out(report: &mut SnapshotReport, name: &str) {
    report.push(PartKind::Scripts, name);
}

/// Opts a new store of kind `K` into the registry (for the registry's
/// `add_scripts`): an empty part for it.
pub(crate) fn new_part<K: ScriptKind>() -> Box<dyn ScriptsPart> {
    Box::new(ScriptsValue::<K>::default())
}

impl Snapshot {
    /// The bytes the script stores' captures hold.
    pub(crate) fn scripts_heap_bytes(&self) -> usize {
        self.scripts
            .iter()
            .map(|store| store.part.heap_bytes())
            .sum::<usize>()
            + self.scripts.capacity() * size_of::<CapturedScripts>()
    }
}
