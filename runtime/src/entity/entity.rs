//! [`Entity`] handles and the slot table that says where each live entity
//! is stored.

use std::fmt;

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
/// Equality, hashing and ordering follow `id` (two handles with the same id
/// are the same entity and have the same slot).
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

/// One entry of the slot table.
///
/// Invariant: `id == VACANT` exactly when the slot is on the free list;
/// otherwise the entity `id` lives at `location`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    id: u64,
    pub(crate) location: Location,
    pub(crate) frozen: bool,
}

/// The id a vacant slot records: the counter never reaches it.
const VACANT: u64 = u64::MAX;

/// The slot table: entity handle to location, with a free list of vacant
/// slots so memory stays bounded by the most entities alive at once.
///
/// Invariants: `free` lists exactly the vacant slots, each once;
/// `live == slots.len() - free.len()`; `next_id` is greater than every id
/// handed out.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_id: u64,
    live: usize,
}

impl Slots {
    /// Hands out a new entity living at `location`, reusing a vacant slot
    /// if there is one.
    pub(crate) fn alloc(&mut self, location: Location) -> Entity {
        let id = self.next_id;
        assert!(id != VACANT, "entity ids exhausted");
        let entry = Slot {
            id,
            location,
            frozen: false,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = entry;
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("fewer than 2^32 live entities");
                self.slots.push(entry);
                slot
            }
        };
        self.next_id += 1;
        self.live += 1;
        Entity { id, slot }
    }

    /// Makes room for `additional` more entities.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots
            .reserve(additional.saturating_sub(self.free.len()));
    }

    /// The slot of `entity`, if it is alive.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<&Slot> {
        self.slots
            .get(entity.slot as usize)
            .filter(|slot| slot.id == entity.id)
    }

    /// The slot of `entity`, if it is alive.
    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity) -> Option<&mut Slot> {
        self.slots
            .get_mut(entity.slot as usize)
            .filter(|slot| slot.id == entity.id)
    }

    /// Records that `entity` (alive) now sits in `row` of its archetype:
    /// another row's swap-remove moved it.
    pub(crate) fn set_row(&mut self, entity: Entity, row: u32) {
        self.get_mut(entity)
            .expect("a stored entity is alive")
            .location
            .row = row;
    }

    /// Vacates `entity`'s slot; its location, if it was alive.
    pub(crate) fn free(&mut self, entity: Entity) -> Option<Location> {
        let slot = self.get_mut(entity)?;
        slot.id = VACANT;
        let location = slot.location;
        self.free.push(entity.slot);
        self.live -= 1;
        Some(location)
    }

    /// The number of live entities.
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// The number of slots, live and vacant.
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
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
