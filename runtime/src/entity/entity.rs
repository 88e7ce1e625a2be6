//! [`Entity`] handles and the slot table that says where each live entity
//! is stored.

use std::fmt;

use slab::Slab;

use super::archetype::ArchetypeId;

/// A handle to an entity.
///
/// `id` comes from a monotonic `u64` counter and is never reused; `slot` is
/// the index of the entry in the store's slot table that records where the
/// entity lives. Slots are reused after a despawn (so the table does not
/// grow under churn), but a slot always records the id of the entity now in
/// it, so a stale handle (despawned, or whose slot a later entity took)
/// resolves to nothing, never to another entity's data.
///
/// Equality, hashing and ordering follow `id` (two handles of one store
/// with the same id are the same entity and have the same slot).
///
/// # A handle of another store
///
/// A handle is only these two numbers: it does not know its store, and
/// every store counts ids and slots from 0, so one world's handle is often,
/// bit for bit, a handle of another. Every accessor that takes a handle
/// (`World::entity`/`entity_mut`/`despawn`/`freeze`, [`Entities`]'
/// `get`/`get_mut`/`ticks`/`insert`/`remove`/`despawn`/`freeze`/`contains`,
/// `Query::get`/`get_mut`, `Commands::entity`/`despawn`,
/// `ComponentRef::new`) first looks it up in its own store's slot table,
/// bounds-checked, and goes on only if that slot holds the handle's id. So
/// a handle from another store either names the live entity of this store
/// with the same slot and id (it then *is* that entity's handle), whose
/// components are found by this store's own type registry, or it names
/// nothing and is refused as a despawned handle is
/// ([`EntityError::NoSuchEntity`], `None`), changing nothing. It never
/// reaches memory outside this store's columns, nor reads a column as
/// another type. What caches a store's layout ([`ComponentRef`], and so
/// [`Target`]) carries the store's [`StoreId`] and reads nothing elsewhere.
///
/// [`Entities`]: crate::Entities
/// [`EntityError::NoSuchEntity`]: crate::EntityError::NoSuchEntity
/// [`ComponentRef`]: crate::ComponentRef
/// [`Target`]: crate::Target
/// [`StoreId`]: crate::StoreId
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Entity {
    id: u64,
    slot: u32,
}

impl Entity {
    /// The entity's id: unique for the store's lifetime, in spawn order.
    #[inline]
    pub fn id(self) -> u64 {
        self.id
    }

    /// The index of the entity's slot in the store (reused after despawn).
    #[inline]
    pub fn slot(self) -> u32 {
        self.slot
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({})", self.id)
    }
}

/// Where a live entity's components are: its archetype and its row there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Location {
    pub(crate) archetype: ArchetypeId,
    pub(crate) row: u32,
}

/// One entry of the slot table: the entity `id` lives at `location`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    id: u64,
    pub(crate) location: Location,
    pub(crate) frozen: bool,
}

/// Every live entity's slot, in a [`Slab`]: a despawned entity's slot is
/// reused by a later one (no growth under churn), and each slot records the
/// id living in it, so a stale handle (an id that no longer lives there)
/// resolves to nothing.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// Invariant: a slot's `id` is the id of the one entity living in it.
    slots: Slab<Slot>,
    /// The next entity id: ids are never reused.
    next_id: u64,
}

impl Slots {
    /// A new entity living at `location`.
    pub(crate) fn alloc(&mut self, location: Location) -> Entity {
        let id = self.next_id;
        self.next_id = id.checked_add(1).expect("entity ids exhausted");
        let slot = self.slots.insert(Slot {
            id,
            location,
            frozen: false,
        });
        let slot = u32::try_from(slot).expect("fewer than 2^32 live entities");
        Entity { id, slot }
    }

    /// Room for `additional` more entities.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// `entity`'s slot, if it is alive.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<&Slot> {
        self.slots
            .get(entity.slot as usize)
            .filter(|slot| slot.id == entity.id)
    }

    /// `entity`'s slot, if it is alive.
    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity) -> Option<&mut Slot> {
        self.slots
            .get_mut(entity.slot as usize)
            .filter(|slot| slot.id == entity.id)
    }

    /// Records that live `entity` moved to `row` of its archetype.
    pub(crate) fn set_row(&mut self, entity: Entity, row: u32) {
        self.get_mut(entity)
            .expect("a stored entity is alive")
            .location
            .row = row;
    }

    /// Frees `entity`'s slot, returning where it lived; `None` when stale.
    pub(crate) fn free(&mut self, entity: Entity) -> Option<Location> {
        self.get(entity)?;
        Some(self.slots.remove(entity.slot as usize).location)
    }

    /// How many entities are alive.
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.slots.len()
    }

    /// How many slots there is room for (the slab's capacity).
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(row: u32) -> Location {
        Location {
            archetype: ArchetypeId(0),
            row,
        }
    }

    #[test]
    fn stale_handles_resolve_to_nothing() {
        let mut slots = Slots::default();
        let a = slots.alloc(at(0));
        assert_eq!(slots.free(a), Some(at(0)));
        let b = slots.alloc(at(1));
        assert_eq!(a.slot(), b.slot(), "the slot is reused");
        assert_ne!(a, b);
        assert!(a.id() < b.id());
        assert!(slots.get(a).is_none());
        assert_eq!(slots.free(a), None);
        assert_eq!(slots.get(b).map(|s| s.location), Some(at(1)));
        assert_eq!(b.to_string(), "Entity(1)");
        assert_eq!(slots.live(), 1);
    }
}
