//! Step scripts in saves (the `serde` feature): [`World::save_scripts`]
//! gives a script store `Scripts<K>` a save name, and
//! [`World::save_step_script`] gives each [`StepScript`] type kept in it a
//! save name and a serde codec, as [`World::save_component`] does a
//! component's.
//!
//! A save then holds one section per saved store (kind
//! [`SectionKind::Scripts`], named by the store's save name): a postcard
//! pair of the store's layout (slot count, free slots in reuse order,
//! next serial, clock steps seen, timer ring positions, finished count)
//! and its live scripts in serial order, each as `(type's save name,
//! serial, slot, name, wait, state bytes)`, the state the postcard
//! encoding of the script. A wait on a condition is saved as such and
//! the condition is asked of the loaded state
//! ([`StepScript::resume_wait`]): a function pointer means nothing in
//! another process.
//!
//! The sections are encoded before anything is written: a script's
//! `Serialize` that fails or panics writes nothing at all. A load decodes
//! and checks every section (unknown store or script type names, states
//! that do not decode, a layout that contradicts itself) before the world
//! changes, and puts the store back exactly (the saved ids and the ids to
//! hand out next, as the entity allocator; not as
//! [`Scripts::restore`](crate::script::Scripts::restore), which keeps a
//! store's ids unique). The checksum and the divergence report
//! cover saved stores (see [`checksum`](super::checksum)'s header).

use std::any::{Any, TypeId};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use super::Snapshot;
use super::checksum::{EncodeError, PartHasher};
use super::codec::{Sink, encode};
use super::file::{LoadError, SaveError, Section, SectionKind, panic_message};
use super::registry::SnapshotRegistry;
use super::saves::{RegistrationError, SaveCodecs};
use super::scripts::{CapturedScripts, ScriptsPart, ScriptsValue, StoreState};
use crate::World;
use crate::script::saved::{LoadedScript, SavedLayout, SavedWait};
use crate::script::step::StepBody;
use crate::script::{ScriptKind, ScriptSnapshot, Scripts, StepScript};

/// Encodes a step script's state (downcast from `&dyn Any`) as postcard.
type EncodeStep = fn(&dyn Any, &mut Vec<u8>) -> Result<(), String>;
/// Hashes a step script's state in the checksum's encoding.
type HashStep = fn(&dyn Any, &mut PartHasher) -> Result<(), EncodeError>;
/// Decodes postcard bytes into a boxed step script of kind `K`.
type DecodeStep<K> = fn(&[u8]) -> Result<Box<dyn StepBody<K>>, String>;

/// Decodes a scripts section into a capture of its `Scripts<K>`.
type DecodeStore = fn(&SaveCodecs, &Section<'_>) -> Result<Box<dyn ScriptsPart>, LoadError>;

/// How one step script type of one store is saved.
#[derive(Clone)]
pub(crate) struct StepCodec {
    pub(crate) name: &'static str,
    /// `Scripts<K>`.
    store: TypeId,
    /// The script's type.
    script: TypeId,
    pub(crate) type_name: &'static str,
    encode: EncodeStep,
    hash: HashStep,
    /// A [`DecodeStep<K>`].
    decode: Arc<dyn Any + Send + Sync>,
}

/// How one script store type is saved.
#[derive(Clone)]
pub(crate) struct StoreCodec {
    pub(crate) name: &'static str,
    /// `Scripts<K>`.
    store: TypeId,
    pub(crate) type_name: &'static str,
    /// Decodes a section into a capture of `Scripts<K>`.
    decode: DecodeStore,
}

fn encode_step<S: Serialize + 'static>(value: &dyn Any, out: &mut Vec<u8>) -> Result<(), String> {
    let script = value
        .downcast_ref::<S>()
        .ok_or("the script is of another type")?;
    encode(script, Sink(out)).map_err(|error| error.to_string())
}

fn hash_step<S: Serialize + 'static>(
    value: &dyn Any,
    hasher: &mut PartHasher,
) -> Result<(), EncodeError> {
    match value.downcast_ref::<S>() {
        Some(script) => hasher.write(script),
        None => Err(serde::ser::Error::custom("the script is of another type")),
    }
}

fn decode_step<K: ScriptKind, S>(bytes: &[u8]) -> Result<Box<dyn StepBody<K>>, String>
where
    S: StepScript<K> + Clone + DeserializeOwned,
{
    let script: S = postcard::from_bytes(bytes).map_err(|error| error.to_string())?;
    Ok(Box::new(script))
}

impl SaveCodecs {
    /// The codec of the script type `script` in the store `store`.
    pub(crate) fn step_of(&self, store: TypeId, script: TypeId) -> Option<&StepCodec> {
        self.step_scripts
            .iter()
            .find(|codec| codec.store == store && codec.script == script)
    }

    fn step_named(&self, store: TypeId, name: &str) -> Option<&StepCodec> {
        self.step_scripts
            .iter()
            .find(|codec| codec.store == store && codec.name == name)
    }

    /// The saved store of type `store`, if any.
    pub(crate) fn store_of(&self, store: TypeId) -> Option<&StoreCodec> {
        self.script_stores.iter().find(|codec| codec.store == store)
    }

    fn store_named(&self, name: &str) -> Option<&StoreCodec> {
        self.script_stores.iter().find(|codec| codec.name == name)
    }

    /// The script store or step script type saved under `name`, if any
    /// (every other kind of registration checks it before taking a name).
    pub(crate) fn script_taking(&self, name: &str) -> Option<&'static str> {
        self.store_named(name)
            .map(|codec| codec.type_name)
            .or_else(|| {
                self.step_scripts
                    .iter()
                    .find(|codec| codec.name == name)
                    .map(|codec| codec.type_name)
            })
    }

    /// Any registration's type under `name`.
    fn taken_by(&self, name: &str) -> Option<&'static str> {
        self.named(name)
            .map(|codec| codec.type_name())
            .or_else(|| self.local_taking(name))
            .or_else(|| self.script_taking(name))
    }
}

/// Adds the step codec, once: `(same type, same name)` again is a no-op;
/// the type under another name, or the name taken, is refused.
fn add_step(saves: &mut Arc<SaveCodecs>, codec: StepCodec) -> Result<(), RegistrationError> {
    let saved_as = saves
        .step_of(codec.store, codec.script)
        .map(|same| same.name);
    let (name, type_name) = (codec.name, codec.type_name);
    add_once(saves, (name, type_name, saved_as), |codecs| {
        codecs.step_scripts.push(codec);
    })
}

/// Adds the store codec, under the same rules as [`add_step`].
fn add_store(saves: &mut Arc<SaveCodecs>, codec: StoreCodec) -> Result<(), RegistrationError> {
    let saved_as = saves.store_of(codec.store).map(|same| same.name);
    let (name, type_name) = (codec.name, codec.type_name);
    add_once(saves, (name, type_name, saved_as), |codecs| {
        codecs.script_stores.push(codec);
    })
}

/// The rule of both: a type saved as `name` already is a no-op, a type
/// saved under another name (`saved_as`) or a name another type takes
/// is refused; otherwise `push` adds its codec.
fn add_once(
    saves: &mut Arc<SaveCodecs>,
    (name, type_name, saved_as): (&'static str, &'static str, Option<&'static str>),
    push: impl FnOnce(&mut SaveCodecs),
) -> Result<(), RegistrationError> {
    if let Some(saved_as) = saved_as {
        if saved_as == name {
            return Ok(());
        }
        return Err(RegistrationError::AlreadyNamed {
            type_name,
            name: saved_as,
            refused: name,
        });
    }
    if let Some(taken_by) = saves.taken_by(name) {
        return Err(RegistrationError::NameTaken {
            name,
            taken_by,
            refused: type_name,
        });
    }
    push(Arc::make_mut(saves));
    Ok(())
}

fn register_store<K: ScriptKind>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError> {
    add_store(
        &mut registry.saves,
        StoreCodec {
            name,
            store: TypeId::of::<Scripts<K>>(),
            type_name: std::any::type_name::<Scripts<K>>(),
            decode: decode_store::<K>,
        },
    )?;
    registry.add_scripts::<K>();
    Ok(())
}

fn register_step<K, S>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError>
where
    K: ScriptKind,
    S: StepScript<K> + Clone + Serialize + DeserializeOwned,
{
    let decode: DecodeStep<K> = decode_step::<K, S>;
    add_step(
        &mut registry.saves,
        StepCodec {
            name,
            store: TypeId::of::<Scripts<K>>(),
            script: TypeId::of::<S>(),
            type_name: std::any::type_name::<S>(),
            encode: encode_step::<S>,
            hash: hash_step::<S>,
            decode: Arc::new(decode),
        },
    )?;
    registry.add_scripts::<K>();
    Ok(())
}

impl World {
    /// Opts the script store [`Scripts<K>`] into snapshots
    /// ([`snapshot_scripts`](Self::snapshot_scripts)) and into saves under
    /// `name`: a save holds the store's layout and every live script whose
    /// type is registered with [`save_step_script`](Self::save_step_script),
    /// and a load in a new process that registered the same types puts
    /// them back, so the frames after the load are the frames that followed
    /// the save. A save of a store holding a script of a type not
    /// registered is refused ([`SaveError::NotSaved`], naming the script's
    /// type and the store); a store holding an `async` script is left out,
    /// as from a snapshot. Registering the same store under the same name
    /// again is a no-op; a conflict is handled as
    /// [`save_component`](Self::save_component)'s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde::{Deserialize, Serialize};
    /// use sluice::World;
    /// use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
    ///
    /// struct Beeps;
    /// impl ScriptKind for Beeps {
    ///     type View<'v> = ();
    ///     type Intent = u32;
    /// }
    ///
    /// #[derive(Clone, Serialize, Deserialize)]
    /// struct Beeper { beeps: u32 }
    ///
    /// impl StepScript<Beeps> for Beeper {
    ///     fn step(&mut self, cx: &mut Step<'_, '_, Beeps>) -> Wait<Beeps> {
    ///         self.beeps += 1;
    ///         cx.emit(self.beeps);
    ///         Wait::For(Duration::from_secs(1))
    ///     }
    /// }
    ///
    /// let game = || {
    ///     let mut world = World::new();
    ///     world.insert(SimClock::default());
    ///     world.save_scripts::<Beeps>("beeps");
    ///     world.save_step_script::<Beeps, Beeper>("beeper");
    ///     world
    /// };
    /// let mut world = game();
    /// let mut scripts = Scripts::<Beeps>::new();
    /// scripts.start_step("beeper", Beeper { beeps: 0 });
    /// scripts.gather(&SimClock::default(), &());
    /// let _: Vec<_> = scripts.drain_intents().collect();
    /// world.insert_scripts(scripts);
    /// let mut save = Vec::new();
    /// world.snapshot()?.write_to(&mut save)?;
    ///
    /// // A new process registers the same types and loads the save.
    /// let mut again = game();
    /// again.load_from(&save[..])?;
    /// let scripts = again.get::<Scripts<Beeps>>().unwrap();
    /// assert_eq!(scripts.iter().next().unwrap().name, "beeper");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save_scripts<K: ScriptKind>(&mut self, name: &'static str) -> &mut Self {
        if let Err(error) = self.try_save_scripts::<K>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_scripts`](Self::save_scripts), returning a conflicting
    /// registration as an error.
    ///
    /// # Errors
    /// As [`try_save_component`](Self::try_save_component).
    pub fn try_save_scripts<K: ScriptKind>(
        &mut self,
        name: &'static str,
    ) -> Result<&mut Self, RegistrationError> {
        register_store::<K>(&mut self.snapshots, name)?;
        Ok(self)
    }

    /// Gives the step script type `S` of the store [`Scripts<K>`] a save
    /// name and a codec (its serde form; register the store itself with
    /// [`save_scripts`](Self::save_scripts)). A script of this type
    /// waiting on [`Wait::Until`](crate::script::Wait::Until) is saved only
    /// if its state gives the condition back
    /// ([`StepScript::resume_wait`]); otherwise the save is refused
    /// ([`SaveError::UnsavedCondition`]). One name per type and one type per
    /// name, across every kind of registration; the same type under the
    /// same name again is a no-op; a conflict is handled as
    /// [`save_component`](Self::save_component)'s.
    pub fn save_step_script<K, S>(&mut self, name: &'static str) -> &mut Self
    where
        K: ScriptKind,
        S: StepScript<K> + Clone + Serialize + DeserializeOwned,
    {
        if let Err(error) = self.try_save_step_script::<K, S>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_step_script`](Self::save_step_script), returning a
    /// conflicting registration as an error.
    ///
    /// # Errors
    /// As [`try_save_component`](Self::try_save_component).
    pub fn try_save_step_script<K, S>(
        &mut self,
        name: &'static str,
    ) -> Result<&mut Self, RegistrationError>
    where
        K: ScriptKind,
        S: StepScript<K> + Clone + Serialize + DeserializeOwned,
    {
        register_step::<K, S>(&mut self.snapshots, name)?;
        Ok(self)
    }

    /// Decodes a scripts section into `snapshot.scripts`.
    pub(crate) fn read_scripts(
        &self,
        section: &Section<'_>,
        snapshot: &mut Snapshot,
    ) -> Result<(), LoadError> {
        let saves = &self.snapshots.saves;
        let codec = saves
            .store_named(section.name)
            .ok_or_else(|| LoadError::UnknownType {
                kind: SectionKind::Scripts,
                name: section.name.to_owned(),
            })?;
        let part = (codec.decode)(saves, section)?;
        snapshot.scripts.truncate(snapshot.scripts_len);
        snapshot.scripts.push(CapturedScripts {
            type_id: codec.store,
            name: codec.type_name,
            book: None,
            part,
            state: StoreState::Captured,
        });
        snapshot.scripts_len = snapshot.scripts.len();
        Ok(())
    }
}

/// One script as a section holds it (its type name and state borrowed
/// from the save).
type SectionScript<'a> = (&'a str, u64, u32, String, SavedWait, &'a [u8]);

fn decode_store<K: ScriptKind>(
    saves: &SaveCodecs,
    section: &Section<'_>,
) -> Result<Box<dyn ScriptsPart>, LoadError> {
    let (layout, scripts): (SavedLayout, Vec<SectionScript<'_>>) =
        postcard::from_bytes(section.payload).map_err(|error| section.shape(error))?;
    let store = TypeId::of::<Scripts<K>>();
    let mut loaded = Vec::with_capacity(scripts.len());
    for (type_name, serial, key, name, wait, state) in scripts {
        let codec = saves
            .step_named(store, type_name)
            .ok_or_else(|| LoadError::UnknownScript {
                store: section.name.to_owned(),
                name: type_name.to_owned(),
            })?;
        let decode = codec
            .decode
            .downcast_ref::<DecodeStep<K>>()
            .expect("a store's step codecs decode its kind");
        let body = decode(state).map_err(|reason| {
            section.shape(format_args!(
                "the script `{name}` (#{serial}, a `{type_name}`): {reason}"
            ))
        })?;
        loaded.push(LoadedScript {
            serial,
            key,
            name,
            wait,
            body,
        });
    }
    let saved =
        ScriptSnapshot::from_saved(layout, loaded).map_err(|what| LoadError::Inconsistent {
            what: format!("the scripts `{}`: {what}", section.name),
        })?;
    Ok(Box::new(ScriptsValue::from_snapshot(saved)))
}

/// The snapshot's stores a save holds: captured, registered, with their
/// codecs.
fn saved_stores(snapshot: &Snapshot) -> impl Iterator<Item = (&StoreCodec, &CapturedScripts)> {
    let mut stores: Vec<_> = snapshot.scripts[..snapshot.scripts_len]
        .iter()
        .filter(|store| store.state == StoreState::Captured)
        .filter_map(|store| Some((snapshot.saves.store_of(store.type_id)?, store)))
        .collect();
    stores.sort_unstable_by_key(|(codec, _)| codec.name);
    stores.into_iter()
}

/// A store's section, borrowed from its capture.
struct SavedStore<'a, K: ScriptKind> {
    saves: &'a SaveCodecs,
    saved: &'a ScriptSnapshot<K>,
}

impl<K: ScriptKind> Serialize for SavedStore<'_, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut pair = serializer.serialize_tuple(2)?;
        pair.serialize_element(&self.saved.saved_layout())?;
        pair.serialize_element(&ScriptList(self))?;
        pair.end()
    }
}

/// A script's state bytes, written as one byte string (postcard: its
/// length, then the bytes), read back borrowed as a `&[u8]`.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// A store's scripts, as its section lists them.
struct ScriptList<'s, 'a, K: ScriptKind>(&'s SavedStore<'a, K>);

impl<K: ScriptKind> Serialize for ScriptList<'_, '_, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let store = TypeId::of::<Scripts<K>>();
        let mut seq = serializer.serialize_seq(Some(self.0.saved.len()))?;
        let mut bytes = Vec::new();
        for entry in self.0.saved.saved_entries() {
            let body = entry.body.as_any();
            let codec = self
                .0
                .saves
                .step_of(store, body.type_id())
                .ok_or_else(|| S::Error::custom("a script type is not saved"))?;
            let wait = entry
                .wait
                .ok_or_else(|| S::Error::custom("an async script's wait"))?;
            bytes.clear();
            (codec.encode)(body, &mut bytes).map_err(S::Error::custom)?;
            seq.serialize_element(&(
                codec.name,
                entry.serial,
                entry.key,
                entry.name,
                wait,
                Bytes(&bytes),
            ))?;
        }
        seq.end()
    }
}

impl<K: ScriptKind> ScriptsValue<K> {
    /// A capture holding `saved` (read from a save).
    pub(crate) fn from_snapshot(saved: ScriptSnapshot<K>) -> Self {
        Self { saved }
    }

    /// Refuses a save of this store (saved as `store_name`) holding a
    /// script whose type is not registered, or waiting on a condition its
    /// state does not give back.
    pub(crate) fn check_store(
        &self,
        saves: &SaveCodecs,
        store_type: &str,
    ) -> Result<(), SaveError> {
        let store = TypeId::of::<Scripts<K>>();
        let mut unsaved = Vec::new();
        for entry in self.saved.saved_entries() {
            let type_name = entry.body.type_name();
            if saves
                .step_of(store, entry.body.as_any().type_id())
                .is_none()
            {
                let named = format!("{type_name} (a script in {store_type})");
                if !unsaved.contains(&named) {
                    unsaved.push(named);
                }
            } else if entry.wait == Some(SavedWait::Condition)
                && entry.body.resume_until().is_none()
            {
                return Err(SaveError::UnsavedCondition {
                    store: store_type.to_owned(),
                    script: entry.name.to_owned(),
                    type_name,
                });
            }
        }
        if unsaved.is_empty() {
            Ok(())
        } else {
            Err(SaveError::NotSaved { names: unsaved })
        }
    }

    /// Encodes this store's section payload.
    pub(crate) fn encode_store(
        &self,
        saves: &SaveCodecs,
        out: &mut Vec<u8>,
    ) -> postcard::Result<()> {
        encode(
            &SavedStore {
                saves,
                saved: &self.saved,
            },
            Sink(out),
        )
    }

    /// Hashes this store in the checksum's encoding: the layout, then
    /// each script's type save name (its Rust type name when it has
    /// none), serial, slot, name and wait, then its state when its type
    /// is saved.
    pub(crate) fn hash_store(
        &self,
        saves: &SaveCodecs,
        hasher: &mut PartHasher,
    ) -> Result<(), EncodeError> {
        let store = TypeId::of::<Scripts<K>>();
        hasher.write(&self.saved.saved_layout())?;
        hasher.write(&(self.saved.len() as u64))?;
        for entry in self.saved.saved_entries() {
            let body = entry.body.as_any();
            let codec = saves.step_of(store, body.type_id());
            let name = codec.map_or_else(|| entry.body.type_name(), |codec| codec.name);
            hasher.write(&(name, entry.serial, entry.key, entry.name, entry.wait))?;
            if let Some(codec) = codec {
                (codec.hash)(body, hasher)?;
            }
        }
        Ok(())
    }
}

/// One store's section, encoded ahead of the save: its name and bytes.
pub(crate) type EncodedScripts = Vec<(&'static str, Vec<u8>)>;

impl Snapshot {
    /// Checks and encodes every saved store's section before anything is
    /// written, so a script's `Serialize` that fails or panics writes
    /// nothing.
    pub(crate) fn encode_scripts(&self) -> Result<EncodedScripts, SaveError> {
        let stores: Vec<_> = saved_stores(self).collect();
        for (codec, store) in &stores {
            store.part.check_saved(&self.saves, codec.type_name)?;
        }
        stores
            .into_iter()
            .map(|(codec, store)| {
                let mut bytes = Vec::new();
                let encoded = catch_unwind(AssertUnwindSafe(|| {
                    store.part.encode_saved(&self.saves, &mut bytes)
                }));
                match encoded {
                    Ok(Ok(())) => Ok((codec.name, bytes)),
                    Ok(Err(error)) => Err(SaveError::Encode {
                        kind: SectionKind::Scripts,
                        name: codec.name.to_owned(),
                        reason: error.to_string(),
                    }),
                    Err(payload) => Err(SaveError::Panicked {
                        kind: SectionKind::Scripts,
                        name: codec.name.to_owned(),
                        message: panic_message(&*payload),
                    }),
                }
            })
            .collect()
    }

    /// The hash of each saved store, by name, for the checksum.
    pub(crate) fn script_hashes(
        &self,
        hasher: &mut PartHasher,
    ) -> Result<Vec<(&'static str, u64)>, EncodeError> {
        saved_stores(self)
            .map(|(codec, store)| {
                hasher.reset();
                hasher.write(codec.name)?;
                store.part.hash_saved(&self.saves, hasher)?;
                Ok((codec.name, hasher.digest()))
            })
            .collect()
    }

    /// Whether the store `type_id` is saved (registered with
    /// [`World::save_scripts`]).
    pub(crate) fn saves_store(&self, type_id: TypeId) -> bool {
        self.saves.store_of(type_id).is_some()
    }
}
