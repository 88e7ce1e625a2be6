//! Registering types for saving (the `serde` feature):
//! [`World::save_component`] and [`World::save_service`] opt a type into
//! snapshots and give it a stable name and a codec, so snapshots holding
//! it can be written to disk, read back, checksummed and compared.
//!
//! Names are what a save records: a type may be renamed or moved between
//! modules and still load, as long as it keeps its name and its fields.
//! One name per type and one type per name, across components and
//! services alike.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::codec::{ComponentCodec, Encoding, PartCodec, ServiceCodec, WithSerde};
use super::file::SectionKind;
use super::registry::SnapshotRegistry;
use crate::entity::Component;
use crate::entity::{ChildOfEncoding, ChildrenEncoding};
use crate::world::World;

/// The codecs of the types a world saves, shared with the snapshots it
/// takes (a snapshot is written or checksummed without its world).
#[derive(Clone, Default)]
pub(crate) struct SaveCodecs {
    /// In registration order.
    codecs: Vec<Arc<dyn PartCodec>>,
    /// Indices of `codecs` in the order of their names: the order of a
    /// save's sections and of the checksum.
    by_name: Vec<usize>,
    /// Registrations refused by [`World::save_component`] and
    /// [`World::save_service`] (each naming both sides).
    pub(crate) conflicts: Vec<String>,
    /// The `Local` types saved (`World::save_local`).
    pub(crate) locals: Vec<super::local_saves::LocalCodec>,
    /// The script stores saved (`World::save_scripts`).
    pub(crate) script_stores: Vec<super::script_saves::StoreCodec>,
    /// The step script types saved (`World::save_step_script`).
    pub(crate) step_scripts: Vec<super::script_saves::StepCodec>,
    /// The reference types saved (`World::save_component_ref`).
    pub(crate) refs: Vec<RefCodec>,
}

/// A saved reference type: what `write_to` checks of its values.
#[derive(Clone)]
pub(crate) struct RefCodec {
    /// `ComponentRef<T>`'s.
    pub(crate) type_id: TypeId,
    /// `T`'s type name.
    pub(crate) target_name: &'static str,
    /// The first value (its index, its target) bound to a store that is
    /// neither `origin` nor none: a reference made in another world.
    pub(crate) foreign: ForeignRef,
}

pub(crate) type ForeignRef = fn(
    &dyn super::part::ComponentPart,
    Option<crate::entity::StoreId>,
) -> Option<(usize, crate::Entity)>;

fn foreign_ref<T: Component>(
    part: &dyn super::part::ComponentPart,
    origin: Option<crate::entity::StoreId>,
) -> Option<(usize, crate::Entity)> {
    let values = part
        .as_any()
        .downcast_ref::<super::part::ColumnValues<crate::ComponentRef<T>>>()?;
    values
        .values
        .iter()
        .position(|value| value.is_foreign_to(origin))
        .map(|index| (index, values.values[index].target()))
}

impl fmt::Debug for SaveCodecs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaveCodecs")
            .field(
                "names",
                &self.in_name_order().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .field("conflicts", &self.conflicts)
            .finish()
    }
}

impl SaveCodecs {
    /// The codec of the `kind` type `type_id`, if it is saved.
    pub(crate) fn of_type(&self, kind: SectionKind, type_id: TypeId) -> Option<&dyn PartCodec> {
        self.codecs
            .iter()
            .find(|codec| codec.kind() == kind && codec.value_type() == type_id)
            .map(|codec| &**codec)
    }

    /// The codec saved under `name`, if any.
    pub(crate) fn named(&self, name: &str) -> Option<&dyn PartCodec> {
        self.by_name
            .binary_search_by(|&index| self.codecs[index].name().cmp(name))
            .ok()
            .map(|found| &*self.codecs[self.by_name[found]])
    }

    /// Every codec, by name.
    pub(crate) fn in_name_order(&self) -> impl Iterator<Item = &dyn PartCodec> {
        self.by_name.iter().map(|&index| &*self.codecs[index])
    }

    /// Adds `codec`: `Ok(true)` when added, `Ok(false)` when the same
    /// type was already saved under the same name.
    fn add(&mut self, codec: Arc<dyn PartCodec>) -> Result<bool, RegistrationError> {
        if let Some(named) = self.named(codec.name()) {
            if named.value_type() == codec.value_type() && named.kind() == codec.kind() {
                return Ok(false);
            }
            return Err(RegistrationError::NameTaken {
                name: codec.name(),
                taken_by: named.type_name(),
                refused: codec.type_name(),
            });
        }
        if let Some(taken_by) = self
            .local_taking(codec.name())
            .or_else(|| self.script_taking(codec.name()))
        {
            return Err(RegistrationError::NameTaken {
                name: codec.name(),
                taken_by,
                refused: codec.type_name(),
            });
        }
        if let Some(same) = self.of_type(codec.kind(), codec.value_type()) {
            return Err(RegistrationError::AlreadyNamed {
                type_name: codec.type_name(),
                name: same.name(),
                refused: codec.name(),
            });
        }
        let position = self
            .by_name
            .partition_point(|&index| self.codecs[index].name() < codec.name());
        self.by_name.insert(position, self.codecs.len());
        self.codecs.push(codec);
        Ok(true)
    }
}

/// Why [`World::try_save_component`] or [`World::try_save_service`]
/// refused a registration. The world keeps its first registration.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The name already belongs to another type.
    NameTaken {
        /// The name.
        name: &'static str,
        /// The type saved under it.
        taken_by: &'static str,
        /// The type refused.
        refused: &'static str,
    },
    /// The type is already saved under another name.
    AlreadyNamed {
        /// The type.
        type_name: &'static str,
        /// The name it is saved under.
        name: &'static str,
        /// The name refused.
        refused: &'static str,
    },
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistrationError::NameTaken {
                name,
                taken_by,
                refused,
            } => write!(
                f,
                "the save name `{name}` belongs to {taken_by}; {refused} cannot take it"
            ),
            RegistrationError::AlreadyNamed {
                type_name,
                name,
                refused,
            } => write!(
                f,
                "{type_name} is saved as `{name}`; it cannot also be saved as `{refused}`"
            ),
        }
    }
}

impl std::error::Error for RegistrationError {}

/// Saves the component `T` under `name` in `registry` (and opts it into
/// snapshots).
fn register_component<T: Component + Clone + Serialize + DeserializeOwned>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError> {
    register_encoded::<T, WithSerde>(registry, name)
}

/// [`register_component`], written through `E`.
fn register_encoded<T: Component + Clone, E: Encoding<T>>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError> {
    let codec = Arc::new(ComponentCodec::<T, E> {
        name,
        _type: PhantomData,
    });
    let entry = registry.component(TypeId::of::<T>());
    check_slot(entry.and_then(|entry| entry.codec.as_ref()), &*codec)?;
    add_codec(registry, codec)?;
    registry.add_component::<T>().codec = Some(Box::new(name));
    Ok(())
}

/// How a [`ComponentRef<T>`](crate::ComponentRef) is saved: as its target
/// [`Entity`](crate::Entity) (ids are restored as they were). It is read
/// back [unbound](crate::ComponentRef::unbound), reading `None`, until
/// the restore binds it to the store it lands in.
pub(crate) struct ComponentRefEncoding;

impl<T: Component> Encoding<crate::ComponentRef<T>> for ComponentRefEncoding {
    type Saved<'a> = crate::Entity;
    type Read = crate::Entity;

    fn saved(value: &crate::ComponentRef<T>) -> crate::Entity {
        value.target()
    }

    fn restored(target: crate::Entity) -> Result<crate::ComponentRef<T>, String> {
        Ok(crate::ComponentRef::unbound(target))
    }
}

/// Saves `ComponentRef<T>` under `name` in `registry` (and opts it into
/// snapshots, bound on restore).
fn register_component_ref<T: Component>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError> {
    register_encoded::<crate::ComponentRef<T>, ComponentRefEncoding>(registry, name)?;
    registry.add_component_ref::<T>();
    let type_id = TypeId::of::<crate::ComponentRef<T>>();
    if registry
        .saves
        .refs
        .iter()
        .all(|known| known.type_id != type_id)
    {
        Arc::make_mut(&mut registry.saves).refs.push(RefCodec {
            type_id,
            target_name: std::any::type_name::<T>(),
            foreign: foreign_ref::<T>,
        });
    }
    Ok(())
}

/// Saves the service `T` under `name` in `registry` (and opts it into
/// snapshots).
fn register_service<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static>(
    registry: &mut SnapshotRegistry,
    name: &'static str,
) -> Result<(), RegistrationError> {
    let codec = Arc::new(ServiceCodec::<T> {
        name,
        _type: PhantomData,
    });
    let entry = registry.service(TypeId::of::<T>());
    check_slot(entry.and_then(|entry| entry.codec.as_ref()), &*codec)?;
    add_codec(registry, codec)?;
    registry.add_service::<T>().codec = Some(Box::new(name));
    Ok(())
}

fn add_codec(
    registry: &mut SnapshotRegistry,
    codec: Arc<dyn PartCodec>,
) -> Result<(), RegistrationError> {
    let saves = &mut registry.saves;
    if saves.named(codec.name()).is_some_and(|named| {
        named.value_type() == codec.value_type() && named.kind() == codec.kind()
    }) {
        return Ok(());
    }
    Arc::make_mut(saves).add(codec).map(|_| ())
}

/// The save names of the runtime's own components, which every world
/// saves: a game's hierarchy, transforms and disabled entities are saved
/// without registering them.
pub const BUILTIN_SAVE_NAMES: [&str; 5] = [
    "sluice::Disabled",
    "sluice::ChildOf",
    "sluice::Children",
    "sluice::Transform",
    "sluice::GlobalTransform",
];

/// Registers the runtime's own components for saving.
pub(crate) fn add_builtins(registry: &mut SnapshotRegistry) {
    let [disabled, child_of, children, transform, global] = BUILTIN_SAVE_NAMES;
    let added = register_component::<crate::Disabled>(registry, disabled)
        .and_then(|()| register_encoded::<crate::ChildOf, ChildOfEncoding>(registry, child_of))
        .and_then(|()| register_encoded::<crate::Children, ChildrenEncoding>(registry, children))
        .and_then(|()| register_component::<crate::Transform>(registry, transform))
        .and_then(|()| register_component::<crate::GlobalTransform>(registry, global));
    debug_assert!(added.is_ok(), "distinct names and types: {added:?}");
}

/// The registry entry's codec slot holds the name its type is saved
/// under: another name for the same type is refused.
fn check_slot(
    slot: Option<&Box<dyn std::any::Any + Send + Sync>>,
    codec: &dyn PartCodec,
) -> Result<(), RegistrationError> {
    match slot.and_then(|slot| slot.downcast_ref::<&'static str>()) {
        Some(&name) if name != codec.name() => Err(RegistrationError::AlreadyNamed {
            type_name: codec.type_name(),
            name,
            refused: codec.name(),
        }),
        _ => Ok(()),
    }
}

impl World {
    /// Opts the component `T` into snapshots
    /// ([`snapshot_component`](Self::snapshot_component)) and into saves
    /// under `name`: its values are written by
    /// [`Snapshot::write_to`](crate::Snapshot::write_to), read by
    /// [`read_snapshot`](Self::read_snapshot), covered by
    /// [`Snapshot::checksum`](crate::Snapshot::checksum) and compared by
    /// [`Snapshot::divergence`](crate::Snapshot::divergence). Registering
    /// the same type under the same name again is a no-op.
    ///
    /// A name already given to another type, or a type already saved under
    /// another name, is refused without a panic: the first registration
    /// stays, a warning is traced, and every save and load of this world
    /// fails naming the conflict ([`SaveError::Registration`](crate::snapshot::SaveError::Registration))
    /// until it is fixed. [`try_save_component`](Self::try_save_component)
    /// returns the error instead.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use sluice::World;
    ///
    /// #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    /// struct Hp(u32);
    ///
    /// let mut world = World::new();
    /// world.save_component::<Hp>("hp");
    /// let hero = world.spawn((Hp(10),));
    /// let mut save = Vec::new(); // or a `File`
    /// world.snapshot()?.write_to(&mut save)?;
    ///
    /// world.entity_mut(hero).unwrap().get_mut::<Hp>().unwrap().0 = 0;
    /// world.load_from(&save[..])?;
    /// assert_eq!(world.entity(hero).unwrap().get::<Hp>(), Some(&Hp(10)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save_component<T: Component + Clone + Serialize + DeserializeOwned>(
        &mut self,
        name: &'static str,
    ) -> &mut Self {
        if let Err(error) = self.try_save_component::<T>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_component`](Self::save_component), returning a conflicting
    /// registration as an error (nothing is recorded then).
    ///
    /// # Errors
    /// [`RegistrationError`] naming the name and both types, or the type
    /// and both names.
    pub fn try_save_component<T: Component + Clone + Serialize + DeserializeOwned>(
        &mut self,
        name: &'static str,
    ) -> Result<&mut Self, RegistrationError> {
        register_component::<T>(&mut self.snapshots, name)?;
        Ok(self)
    }

    /// Opts the references [`ComponentRef<T>`](crate::ComponentRef) into
    /// snapshots, bound to the store a restore puts them in
    /// ([`snapshot_component_ref`](Self::snapshot_component_ref)), and
    /// into saves under `name`, each as its target [`Entity`](crate::Entity)
    /// (entity ids are restored as they were, so the target keeps its id;
    /// the checksum and the divergence report see the same entity). `T`
    /// need not be serializable here; its rows are saved as any
    /// component's, so register it with [`save_component`](Self::save_component)
    /// too. The rules for names are [`save_component`](Self::save_component)'s.
    ///
    /// A load checks every reference before the world changes: its target
    /// is either alive in the save, frozen, in an archetype with a `T`
    /// column, or an entity the save's id table handed out and despawned
    /// since (a reference whose target died saves as that target and
    /// reads `None` after the load, as it did before the save). Anything
    /// else is refused ([`LoadError::Reference`](crate::snapshot::LoadError::Reference)).
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use sluice::{ComponentRef, World};
    ///
    /// #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    /// struct Pos(i32);
    ///
    /// let mut world = World::new();
    /// world.save_component::<Pos>("pos");
    /// world.save_component_ref::<Pos>("follows_pos");
    /// let leader = world.spawn((Pos(7),));
    /// world.freeze(leader)?;
    /// let follower = world.spawn((ComponentRef::<Pos>::new(&world, leader)?,));
    /// let mut save = Vec::new();
    /// world.snapshot()?.write_to(&mut save)?;
    ///
    /// let mut fresh = World::new();
    /// fresh.save_component::<Pos>("pos");
    /// fresh.save_component_ref::<Pos>("follows_pos");
    /// fresh.load_from(&save[..])?;
    /// let follows = *fresh.entity(follower).unwrap().get::<ComponentRef<Pos>>().unwrap();
    /// assert_eq!(follows.get(&fresh), Some(&Pos(7)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save_component_ref<T: Component>(&mut self, name: &'static str) -> &mut Self {
        if let Err(error) = self.try_save_component_ref::<T>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_component_ref`](Self::save_component_ref), returning a
    /// conflicting registration as an error.
    ///
    /// # Errors
    /// As [`try_save_component`](Self::try_save_component).
    pub fn try_save_component_ref<T: Component>(
        &mut self,
        name: &'static str,
    ) -> Result<&mut Self, RegistrationError> {
        register_component_ref::<T>(&mut self.snapshots, name)?;
        Ok(self)
    }

    /// Opts the service `T` into snapshots
    /// ([`snapshot_service`](Self::snapshot_service)) and into saves under
    /// `name`; see [`save_component`](Self::save_component) for the rules.
    pub fn save_service<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static>(
        &mut self,
        name: &'static str,
    ) -> &mut Self {
        if let Err(error) = self.try_save_service::<T>(name) {
            self.record_save_conflict(error);
        }
        self
    }

    /// [`save_service`](Self::save_service), returning a conflicting
    /// registration as an error.
    ///
    /// # Errors
    /// As [`try_save_component`](Self::try_save_component).
    pub fn try_save_service<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static>(
        &mut self,
        name: &'static str,
    ) -> Result<&mut Self, RegistrationError> {
        register_service::<T>(&mut self.snapshots, name)?;
        Ok(self)
    }

    pub(super) fn record_save_conflict(&mut self, error: RegistrationError) {
        tracing::warn!("{error}; the first registration stays, saves and loads are refused");
        let text = error.to_string();
        let saves = Arc::make_mut(&mut self.snapshots.saves);
        if !saves.conflicts.contains(&text) {
            saves.conflicts.push(text);
        }
    }
}
