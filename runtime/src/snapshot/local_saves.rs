//! `Local` values in saves (the `serde` feature): [`World::save_local`]
//! gives a `Local<T>` type a save name, and a save then holds every such
//! local by an identity that holds in a new process, where the game
//! registers the same systems again: **its node's instance key** (the
//! node's name unless `NodeBuilder::key` gave it another: the identity a
//! world already keeps unique among its nodes, SL0004) **and its position
//! among that node's locals** (the order its parameters are resolved: the
//! body's, then each run condition's). A slot number would not do: slots
//! are handed out in registration order, which a new process need not
//! repeat.
//!
//! The key must tell the node apart: a save is refused
//! ([`SaveError::AmbiguousNode`]) while two registered nodes bear the key
//! of a node whose local it holds, and a load is refused when the world
//! has no node of that key ([`LoadError::NodeMissing`]), two of them
//! ([`LoadError::NodeAmbiguous`]), or a node of that key whose local at
//! that position is of another type or absent ([`LoadError::Shape`]).
//! Nothing is guessed, and a refused load changes nothing.
//!
//! The section (kind [`SectionKind::Locals`], named `locals`, written only
//! when the snapshot holds a saved local) is a postcard sequence of
//! `(node key, position, save name, value bytes)`, the value the
//! postcard encoding of `T`. The checksum covers each saved local as a
//! part of its own, after the script stores, in the order of node keys
//! and positions, and the divergence report names the first that differs
//! (`key[position]`); a local only snapshotted, not saved, has no save
//! name and is in neither.

use std::any::{Any, TypeId};

use serde::Serialize;
use serde::Serializer;
use serde::de::DeserializeOwned;

use super::checksum::{EncodeError, PartHasher};
use super::file::{LoadError, SaveError, Section, SectionKind};
use super::registry::SnapshotRegistry;
use super::saves::{RegistrationError, SaveCodecs};
use super::{CapturedLocal, Snapshot};
use crate::system::LocalValue;
use crate::world::World;

/// The name of the locals section.
pub(crate) const LOCALS: &str = "locals";

/// Encodes a local slot's value (`LocalValue<T>`) as postcard bytes.
type EncodeLocal = fn(&(dyn Any + Send + Sync), &mut Vec<u8>) -> Result<(), String>;
/// Decodes postcard bytes into a new slot value (`LocalValue<T>`).
type DecodeLocal = fn(&[u8]) -> Result<Box<dyn Any + Send + Sync>, String>;
/// Writes a local slot's value into the checksum's hasher.
type HashLocal = fn(&(dyn Any + Send + Sync), &mut PartHasher) -> Result<(), EncodeError>;

/// How one `Local<T>` type is saved.
#[derive(Clone, Debug)]
pub(crate) struct LocalCodec {
    pub(crate) name: &'static str,
    /// `LocalValue<T>`, what its slots hold.
    pub(crate) slot_type: TypeId,
    pub(crate) type_name: &'static str,
    encode: EncodeLocal,
    decode: DecodeLocal,
    hash: HashLocal,
}

/// Runs `with` on the value of a local slot (`LocalValue<T>`).
fn with_local<T: Send + 'static, R>(
    value: &(dyn Any + Send + Sync),
    with: impl FnOnce(&T) -> Result<R, String>,
) -> Result<R, String> {
    let cell = value
        .downcast_ref::<LocalValue<T>>()
        .ok_or("the slot holds another type")?;
    // Nothing runs while a snapshot's values are written (they are
    // clones the snapshot owns); a poisoned lock's value is whole.
    let guard = match cell.try_lock() {
        Ok(guard) => guard,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return Err("the local is locked".to_owned()),
    };
    with(&guard)
}

fn encode_local<T: Serialize + Send + 'static>(
    value: &(dyn Any + Send + Sync),
    out: &mut Vec<u8>,
) -> Result<(), String> {
    with_local::<T, _>(value, |value| {
        let bytes = postcard::to_allocvec(value).map_err(|error| error.to_string())?;
        out.extend_from_slice(&bytes);
        Ok(())
    })
}

fn hash_local<T: Serialize + Send + 'static>(
    value: &(dyn Any + Send + Sync),
    hasher: &mut PartHasher,
) -> Result<(), EncodeError> {
    with_local::<T, _>(value, |value| {
        hasher.write(value).map_err(|error| error.to_string())
    })
    .map_err(<EncodeError as serde::ser::Error>::custom)
}

fn decode_local<T: DeserializeOwned + Send + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn Any + Send + Sync>, String> {
    let value: T = postcard::from_bytes(bytes).map_err(|error| error.to_string())?;
    Ok(Box::new(LocalValue::new(value)))
}

impl SaveCodecs {
    /// The local codec of the slot type `slot_type` (`LocalValue<T>`).
    pub(crate) fn local_of(&self, slot_type: TypeId) -> Option<&LocalCodec> {
        self.locals
            .iter()
            .find(|codec| codec.slot_type == slot_type)
    }

    fn local_named(&self, name: &str) -> Option<&LocalCodec> {
        self.locals.iter().find(|codec| codec.name == name)
    }

    /// Adds `codec`, once; a name taken by any saved type, or a type
    /// saved under another name, is refused.
    fn add_local(&mut self, codec: LocalCodec) -> Result<(), RegistrationError> {
        if let Some(same) = self.local_of(codec.slot_type) {
            if same.name == codec.name {
                return Ok(());
            }
            return Err(RegistrationError::AlreadyNamed {
                type_name: codec.type_name,
                name: same.name,
                refused: codec.name,
            });
        }
        let taken_by = self
            .local_named(codec.name)
            .map(|other| other.type_name)
            .or_else(|| self.named(codec.name).map(|other| other.type_name()))
            .or_else(|| self.script_taking(codec.name));
        if let Some(taken_by) = taken_by {
            return Err(RegistrationError::NameTaken {
                name: codec.name,
                taken_by,
                refused: codec.type_name,
            });
        }
        self.locals.push(codec);
        Ok(())
    }
}

impl SaveCodecs {
    /// The `Local` type saved under `name`, if any (components and
    /// services check it before taking a name).
    pub(crate) fn local_taking(&self, name: &str) -> Option<&'static str> {
        self.local_named(name).map(|codec| codec.type_name)
    }
}

fn register_local<T>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError>
where
    T: Clone + Default + Send + Serialize + DeserializeOwned + 'static,
{
    let codec = LocalCodec {
        name,
        slot_type: TypeId::of::<LocalValue<T>>(),
        type_name: std::any::type_name::<crate::Local<'static, T>>(),
        encode: encode_local::<T>,
        decode: decode_local::<T>,
        hash: hash_local::<T>,
    };
    if registry.saves.local_of(codec.slot_type).map(|c| c.name) != Some(name) {
        std::sync::Arc::make_mut(&mut registry.saves).add_local(codec)?;
    }
    registry.add_local::<T>();
    Ok(())
}

impl World {
    /// Opts every node's [`Local<T>`](crate::Local) into snapshots
    /// ([`snapshot_local`](Self::snapshot_local)) and into saves under
    /// `name`: a save holds each such local by its node's instance key
    /// (its name unless [`NodeBuilder::key`](crate::NodeBuilder::key) set
    /// another) and its position among that node's locals, and a load in
    /// a new process that registered the same systems puts it back into
    /// the node of that key. Refused, naming the node: a save while two
    /// nodes bear the key ([`SaveError::AmbiguousNode`]), a load into a
    /// world with no node of that key ([`LoadError::NodeMissing`]), two
    /// ([`LoadError::NodeAmbiguous`]), or one whose local there is of
    /// another type ([`LoadError::Shape`]); a refused load changes
    /// nothing. Cost: each snapshot copies each such local's node key (one
    /// small allocation, and a look over the registered nodes to count
    /// that key's bearers) besides the value's clone. Registering the same type
    /// under the same name again is a no-op; a conflict is handled as
    /// [`save_component`](Self::save_component)'s.
    ///
    /// ```
    /// use sluice::{Local, NodeBuilder, World};
    ///
    /// #[derive(Default)]
    /// struct Shown(u32);
    ///
    /// fn counter(mut runs: Local<u32>, shown: &mut Shown) {
    ///     *runs += 1;
    ///     shown.0 = *runs;
    /// }
    ///
    /// let game = || {
    ///     let mut world = World::new();
    ///     world.insert(Shown::default());
    ///     world.save_local::<u32>("runs");
    ///     world.add_system(NodeBuilder::new("counter").system(counter));
    ///     world
    /// };
    /// let mut world = game();
    /// world.run_iteration()?;
    /// world.run_iteration()?;
    /// let mut save = Vec::new();
    /// world.snapshot()?.write_to(&mut save)?;
    ///
    /// // A new process registers the same system and loads the save.
    /// let mut again = game();
    /// again.load_from(&save[..])?;
    /// again.run_iteration()?;
    /// assert_eq!(again.get::<Shown>().unwrap().0, 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save_local<T>(&mut self, name: &'static str) -> &mut Self
    where
        T: Clone + Default + Send + Serialize + DeserializeOwned + 'static,
    {
        if let Err(error) = self.try_save_local::<T>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_local`](Self::save_local), returning a conflicting
    /// registration as an error.
    ///
    /// # Errors
    /// As [`try_save_component`](Self::try_save_component).
    pub fn try_save_local<T>(&mut self, name: &'static str) -> Result<&mut Self, RegistrationError>
    where
        T: Clone + Default + Send + Serialize + DeserializeOwned + 'static,
    {
        register_local::<T>(&mut self.snapshots, name)?;
        Ok(self)
    }

    /// The key a save gives the local in `slot`, if its type is saved:
    /// its node's key and position, and how many nodes bear that key.
    pub(crate) fn local_key(
        &self,
        slot: crate::access::ServiceId,
        slot_type: TypeId,
    ) -> Option<LocalKey> {
        self.snapshots.saves.local_of(slot_type)?;
        let (node, position, named) = self.local_identity(slot)?;
        Some(LocalKey {
            node: node.to_owned(),
            position,
            named,
        })
    }

    /// Decodes the locals section into `snapshot.locals`, each resolved to
    /// its node's slot in this world.
    pub(crate) fn read_locals(
        &self,
        section: &Section<'_>,
        snapshot: &mut Snapshot,
    ) -> Result<(), LoadError> {
        let saved: Vec<(String, u32, String, Vec<u8>)> =
            postcard::from_bytes(section.payload).map_err(|error| section.shape(error))?;
        let saves = &self.snapshots.saves;
        for (index, (node, position, name, bytes)) in saved.iter().enumerate() {
            if saved[..index]
                .iter()
                .any(|(other, at, _, _)| other == node && at == position)
            {
                return Err(LoadError::Inconsistent {
                    what: format!("the local #{position} of `{node}` is saved twice"),
                });
            }
            let codec = saves
                .local_named(name)
                .ok_or_else(|| LoadError::UnknownType {
                    kind: SectionKind::Locals,
                    name: name.clone(),
                })?;
            let value = (codec.decode)(bytes).map_err(|reason| {
                section.shape(format_args!("the local #{position} of `{node}`: {reason}"))
            })?;
            let slot = match self.live_nodes_keyed(node)[..] {
                [] => {
                    return Err(LoadError::NodeMissing {
                        node: node.clone(),
                        local: name.clone(),
                    });
                }
                [one] => self.local_slot_of(one, *position),
                ref many => {
                    return Err(LoadError::NodeAmbiguous {
                        node: node.clone(),
                        count: many.len(),
                    });
                }
            };
            let services = self.graph_registry();
            let holds = slot
                .and_then(|slot| services.slot(slot))
                .and_then(|slot| slot.value.as_deref())
                .map(|value| (*value).type_id());
            let (Some(slot), Some(held)) = (slot, holds) else {
                return Err(section.shape(format_args!(
                    "the node `{node}` has no local #{position} (the save's is a {})",
                    codec.type_name
                )));
            };
            if held != codec.slot_type {
                return Err(section.shape(format_args!(
                    "the local #{position} of `{node}` is not a {} here",
                    codec.type_name
                )));
            }
            let entry = self
                .snapshots
                .local(codec.slot_type)
                .expect("`save_local` opts the type into snapshots");
            snapshot.locals.push(CapturedLocal {
                slot,
                type_id: codec.slot_type,
                name: codec.type_name,
                value,
                clone: entry.clone,
                // Kept, so the snapshot read back is saved, checksummed
                // and compared as the one written (one node bears the key:
                // checked above).
                key: Some(LocalKey {
                    node: node.clone(),
                    position: *position,
                    named: 1,
                }),
            });
        }
        snapshot.locals_world = Some(self.world_id());
        Ok(())
    }
}

/// A saved local's identity, taken at the capture.
#[derive(Clone, Debug)]
pub(crate) struct LocalKey {
    pub(crate) node: String,
    pub(crate) position: u32,
    /// How many registered nodes bore the key then.
    pub(crate) named: usize,
}

/// The locals section's payload, borrowed from a snapshot.
struct SavedLocals<'a>(&'a Snapshot);

impl Serialize for SavedLocals<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let saved = saved_locals(self.0);
        let mut seq = serializer.serialize_seq(Some(saved.len()))?;
        for (local, key, codec) in saved {
            let mut bytes = Vec::new();
            (codec.encode)(&*local.value, &mut bytes).map_err(S::Error::custom)?;
            seq.serialize_element(&(&key.node, key.position, codec.name, bytes))?;
        }
        seq.end()
    }
}

/// The snapshot's locals that a save holds, with their keys and codecs.
fn saved_locals(snapshot: &Snapshot) -> Vec<(&CapturedLocal, &LocalKey, &LocalCodec)> {
    snapshot
        .locals
        .iter()
        .filter_map(|local| {
            let key = local.key.as_ref()?;
            Some((local, key, snapshot.saves.local_of(local.type_id)?))
        })
        .collect()
}

impl Snapshot {
    /// Whether a save of it has a locals section.
    pub(crate) fn has_saved_locals(&self) -> bool {
        !saved_locals(self).is_empty()
    }

    /// Refuses a save holding a local whose node's key two nodes bore.
    pub(crate) fn check_local_keys(&self) -> Result<(), SaveError> {
        match saved_locals(self).iter().find(|(_, key, _)| key.named > 1) {
            Some((_, key, _)) => Err(SaveError::AmbiguousNode {
                node: key.node.clone(),
                count: key.named,
            }),
            None => Ok(()),
        }
    }

    /// The checksum's parts for the saved locals, one a local, in the
    /// order of their node keys and positions (not of their slots, which
    /// follow registration order): each with its node key and position,
    /// its hash that of the key, the position, the save name and the
    /// value, in the checksum's encoding.
    pub(crate) fn local_hashes(
        &self,
        hasher: &mut PartHasher,
    ) -> Result<Vec<(&str, u32, u64)>, EncodeError> {
        let mut saved = saved_locals(self);
        saved.sort_by(|(_, a, _), (_, b, _)| (&a.node, a.position).cmp(&(&b.node, b.position)));
        saved
            .into_iter()
            .map(|(local, key, codec)| {
                hasher.reset();
                hasher.write(&(&key.node, key.position, codec.name))?;
                (codec.hash)(&*local.value, hasher)?;
                Ok((key.node.as_str(), key.position, hasher.digest()))
            })
            .collect()
    }

    /// Encodes the locals section's payload.
    pub(crate) fn encode_locals(&self, out: &mut Vec<u8>) -> postcard::Result<()> {
        let bytes = postcard::to_allocvec(&SavedLocals(self))?;
        out.extend_from_slice(&bytes);
        Ok(())
    }
}
