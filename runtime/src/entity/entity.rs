//! [`Entity`] handles and the slot table that says where each live entity
//! is stored.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::num::NonZeroU32;

use super::archetype::ArchetypeId;

/// A handle to an entity: 8 bytes, and `Option<Entity>` too.
///
/// `slot` is the index of the entry in the store's slot table that records
/// where the entity lives; `generation` tells apart the entities that slot
/// held. Slots are reused after a despawn (so the table does not grow
/// under churn); the despawn moves the slot on to its next generation, so
/// a stale handle (despawned, or whose slot a later entity took) carries a
/// generation the slot no longer holds and resolves to nothing, never to
/// another entity's data.
///
/// # Never reused
///
/// A slot hands out generations 1, 2, ... in order, each once. A slot whose
/// entity of generation `u32::MAX` is despawned is retired: it is never
/// handed out again. So a (slot, generation) pair names at most one entity
/// in a store's lifetime, exactly, however long it runs; the price is one
/// dead table entry (16 bytes) per slot retired, which takes 2^32 - 1
/// spawns and despawns of that one slot (at one every nanosecond, over four
/// seconds per slot, and only slots that churn that much ever retire).
///
/// [`id`](Self::id) packs the pair into a `u64`, unique for the store's
/// lifetime. Ids are not in spawn order: a reused slot's next entity has a
/// larger generation, so a larger id than its slot's earlier entities, but
/// possibly a smaller one than an entity spawned before it in a higher slot.
/// A store that has never despawned hands out slots 0, 1, 2... in spawn
/// order (all in generation 1), and the boundary lands commands in record
/// order, so the handles a world's spawns get are the same for every
/// thread count.
///
/// Equality and hashing follow the pair ([`id`](Self::id)); ordering
/// follows `id` (by generation, then slot).
///
/// # A handle of another store
///
/// A handle is only these two numbers: it does not know its store, and
/// every store counts slots from 0 and generations from 1, so one world's
/// handle is often, bit for bit, a handle of another. Every accessor that
/// takes a handle (`World::entity`/`entity_mut`/`despawn`/`freeze`,
/// [`Entities`]' `get`/`get_mut`/`ticks`/`insert`/`remove`/`despawn`/
/// `freeze`/`contains`, `Query::get`/`get_mut`, `Commands::entity`/
/// `despawn`, `ComponentRef::new`) first looks it up in its own store's
/// slot table, bounds-checked, and goes on only if that slot is live with
/// the handle's generation (a free or retired slot holds none). So a handle
/// from another store either names the live entity of this store with the
/// same slot and generation (it then *is* that entity's handle), whose
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
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entity {
    slot: u32,
    generation: NonZeroU32,
}

const _: () = assert!(size_of::<Entity>() == 8);
const _: () = assert!(size_of::<Option<Entity>>() == 8);

impl Entity {
    /// The entity's id: unique for the store's lifetime (`generation << 32
    /// | slot`), not in spawn order (see [`Entity`]).
    #[inline]
    pub fn id(self) -> u64 {
        (u64::from(self.generation.get()) << 32) | u64::from(self.slot)
    }

    /// The index of the entity's slot in the store (reused after despawn).
    #[inline]
    pub fn slot(self) -> u32 {
        self.slot
    }

    /// Which of its slot's entities this is: 1 for the slot's first, one
    /// more for each later one.
    #[inline]
    pub fn generation(self) -> u32 {
        self.generation.get()
    }
}

impl Hash for Entity {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.id());
    }
}

impl PartialOrd for Entity {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entity {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.id().cmp(&other.id())
    }
}

/// An entity is saved as its [`id`](Entity::id): slot and generation, so
/// references between entities stay valid across a save and its load.
#[cfg(feature = "serde")]
impl serde::Serialize for Entity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.id())
    }
}

/// Reads an [`id`](Entity::id); refuses one whose generation is 0 (no
/// entity ever has it).
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Entity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <u64 as serde::Deserialize>::deserialize(deserializer)?;
        let generation = NonZeroU32::new((id >> 32) as u32).ok_or_else(|| {
            <D::Error as serde::de::Error>::custom(format!(
                "the entity id {id:#x} has generation 0, which no entity has"
            ))
        })?;
        Ok(Entity {
            slot: id as u32,
            generation,
        })
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({}v{})", self.slot, self.generation)
    }
}

/// Where a live entity's components are: its archetype and its row there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Location {
    pub(crate) archetype: ArchetypeId,
    pub(crate) row: u32,
}

/// One entry of the slot table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    /// The generation of the entity living here; 0 (no handle's) when the
    /// slot is free or retired.
    generation: u32,
    pub(crate) location: Location,
    pub(crate) frozen: bool,
}

/// Every slot ever handed out. A despawned entity's slot is reused by a
/// later one (no growth under churn) under the next generation; each live
/// slot records the generation living in it, so a stale handle resolves
/// to nothing.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// Invariant: a live slot's `generation` is that of the one entity
    /// living in it, and every generation below it was handed out before;
    /// a free or retired slot's is 0.
    slots: Vec<Slot>,
    /// The free slots, each with the generation it hands out next (above
    /// every one it handed out); the last freed is reused first.
    free: Vec<(u32, NonZeroU32)>,
    /// How many entities are alive.
    live: usize,
    /// How many slots ran out of generations and are never reused.
    retired: usize,
}

impl Clone for Slots {
    fn clone(&self) -> Self {
        Self {
            slots: self.slots.clone(),
            free: self.free.clone(),
            live: self.live,
            retired: self.retired,
        }
    }

    /// Field by field, so a snapshot taken again reuses its memory.
    fn clone_from(&mut self, source: &Self) {
        self.slots.clone_from(&source.slots);
        self.free.clone_from(&source.free);
        self.live = source.live;
        self.retired = source.retired;
    }
}

impl Slots {
    /// A new entity living at `location`.
    pub(crate) fn alloc(&mut self, location: Location) -> Entity {
        let entity = match self.free.pop() {
            Some((slot, generation)) => {
                self.slots[slot as usize] = Slot {
                    generation: generation.get(),
                    location,
                    frozen: false,
                };
                Entity { slot, generation }
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("fewer than 2^32 entity slots");
                self.slots.push(Slot {
                    generation: 1,
                    location,
                    frozen: false,
                });
                Entity {
                    slot,
                    generation: NonZeroU32::MIN,
                }
            }
        };
        self.live += 1;
        entity
    }

    /// Room for `additional` more entities.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots
            .reserve(additional.saturating_sub(self.free.len()));
    }

    /// `entity`'s slot, if it is alive.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<&Slot> {
        self.slots
            .get(entity.slot as usize)
            .filter(|slot| slot.generation == entity.generation.get())
    }

    /// Tells whether the table ever handed out an entity (alive now, or
    /// despawned since): its slot exists and gave out its generation. The
    /// free list is indexed once, for many questions.
    #[cfg(feature = "serde")]
    pub(crate) fn handed_out(&self) -> impl Fn(Entity) -> bool + '_ {
        let next: std::collections::HashMap<u32, NonZeroU32> = self.free.iter().copied().collect();
        move |entity: Entity| {
            let Some(slot) = self.slots.get(entity.slot as usize) else {
                return false;
            };
            if slot.generation != 0 {
                return entity.generation.get() <= slot.generation;
            }
            // Free: below the generation it hands out next; retired (not
            // free): every generation was handed out.
            next.get(&entity.slot)
                .is_none_or(|&next| entity.generation < next)
        }
    }

    /// `entity`'s slot, if it is alive.
    #[inline]
    pub(crate) fn get_mut(&mut self, entity: Entity) -> Option<&mut Slot> {
        self.slots
            .get_mut(entity.slot as usize)
            .filter(|slot| slot.generation == entity.generation.get())
    }

    /// Records that `entity`, stored in an archetype (so alive), moved to
    /// `row` of its archetype.
    #[inline]
    pub(crate) fn set_row(&mut self, entity: Entity, row: u32) {
        self.live_slot(entity).location.row = row;
    }

    /// Records that `entity`, stored in an archetype (so alive), moved to
    /// `location`.
    #[inline]
    pub(crate) fn set_location(&mut self, entity: Entity, location: Location) {
        self.live_slot(entity).location = location;
    }

    /// The slot of `entity`, which an archetype stores (every stored
    /// entity is alive: the store's invariant), found by index alone.
    #[inline]
    fn live_slot(&mut self, entity: Entity) -> &mut Slot {
        let slot = &mut self.slots[entity.slot as usize];
        debug_assert_eq!(
            slot.generation,
            entity.generation.get(),
            "a stored entity is alive"
        );
        slot
    }

    /// Frees `entity`'s slot, returning where it lived; `None` when stale.
    /// The slot is reused under the next generation, or retired when
    /// `entity` had the last one.
    pub(crate) fn free(&mut self, entity: Entity) -> Option<Location> {
        let slot = self.get_mut(entity)?;
        slot.generation = 0;
        let location = slot.location;
        self.live -= 1;
        match entity.generation.checked_add(1) {
            Some(next) => self.free.push((entity.slot, next)),
            None => self.retired += 1,
        }
        Some(location)
    }

    /// How many slots the table has (live, free and retired).
    pub(crate) fn table_len(&self) -> usize {
        self.slots.len()
    }

    /// The bytes of heap memory the table holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>()
            + self.free.capacity() * size_of::<(u32, NonZeroU32)>()
    }

    /// How many entities are alive.
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// How many slots are retired (every generation handed out).
    #[cfg(test)]
    pub(crate) fn retired(&self) -> usize {
        self.retired
    }

    /// How many slots there is room for (the table's capacity).
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.capacity()
    }

    /// Test hook: moves every free slot on to generation `generation` (or
    /// leaves it where it is, if already past it), as if each had been
    /// reused that many times, to reach the retirement without 2^32 spawns.
    #[cfg(test)]
    pub(crate) fn age_free_slots(&mut self, generation: NonZeroU32) {
        for (_, next) in &mut self.free {
            *next = (*next).max(generation);
        }
    }
}

/// The slot table as a save holds it (the `serde` feature): each slot's
/// generation (0: free or retired), the frozen slots and the free list in
/// order (the next spawns' ids). Where each entity lives is not saved: a
/// restore puts every entity in its archetype row again.
#[cfg(feature = "serde")]
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct SavedSlots {
    generations: Vec<u32>,
    frozen: Vec<u32>,
    free: Vec<(u32, u32)>,
}

/// Encodes a [`Slots`] as a [`SavedSlots`], without copying it (the
/// checksum streams it).
#[cfg(feature = "serde")]
pub(crate) struct SlotsView<'a>(pub(crate) &'a Slots);

#[cfg(feature = "serde")]
impl serde::Serialize for SlotsView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeTuple};
        struct Generations<'a>(&'a [Slot]);
        impl serde::Serialize for Generations<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|slot| slot.generation))
            }
        }
        struct Frozen<'a>(&'a [Slot]);
        impl serde::Serialize for Frozen<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let frozen = |slot: &&Slot| slot.generation != 0 && slot.frozen;
                let count = self.0.iter().filter(frozen).count();
                let mut seq = serializer.serialize_seq(Some(count))?;
                for (index, _) in self.0.iter().enumerate().filter(|(_, slot)| frozen(slot)) {
                    seq.serialize_element(&(index as u32))?;
                }
                seq.end()
            }
        }
        struct Free<'a>(&'a [(u32, NonZeroU32)]);
        impl serde::Serialize for Free<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|&(slot, next)| (slot, next.get())))
            }
        }
        let mut tuple = serializer.serialize_tuple(3)?;
        tuple.serialize_element(&Generations(&self.0.slots))?;
        tuple.serialize_element(&Frozen(&self.0.slots))?;
        tuple.serialize_element(&Free(&self.0.free))?;
        tuple.end()
    }
}

#[cfg(feature = "serde")]
impl SavedSlots {
    /// The slot table it describes, checked: a free or frozen slot that is
    /// out of range, listed twice, free while alive, or a free slot whose
    /// next generation is 0, is refused (naming it). Every live slot points
    /// at the empty archetype's first row until a restore puts its entity
    /// in place.
    pub(crate) fn to_slots(&self) -> Result<Slots, String> {
        let location = Location {
            archetype: ArchetypeId::EMPTY,
            row: 0,
        };
        let len = self.generations.len();
        if u32::try_from(len).is_err() {
            return Err(format!("{len} slots, more than 2^32"));
        }
        let mut slots: Vec<Slot> = self
            .generations
            .iter()
            .map(|&generation| Slot {
                generation,
                location,
                frozen: false,
            })
            .collect();
        let live = slots.iter().filter(|slot| slot.generation != 0).count();
        let mut listed = vec![false; len];
        let mut free = Vec::with_capacity(self.free.len().min(len));
        for &(slot, next) in &self.free {
            let index = slot as usize;
            match slots.get(index) {
                None => {
                    return Err(format!(
                        "the free slot {slot} is past the table ({len} slots)"
                    ));
                }
                Some(entry) if entry.generation != 0 => {
                    return Err(format!("the slot {slot} is both alive and free"));
                }
                Some(_) if listed[index] => return Err(format!("the slot {slot} is free twice")),
                Some(_) => {}
            }
            listed[index] = true;
            let next = NonZeroU32::new(next)
                .ok_or_else(|| format!("the free slot {slot} hands out generation 0"))?;
            free.push((slot, next));
        }
        for &slot in &self.frozen {
            match slots.get_mut(slot as usize) {
                Some(entry) if entry.generation != 0 && !entry.frozen => entry.frozen = true,
                _ => {
                    return Err(format!(
                        "the frozen slot {slot} is not alive, or frozen twice"
                    ));
                }
            }
        }
        Ok(Slots {
            slots,
            free,
            live,
            retired: len - live - self.free.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "serde")]
    #[test]
    fn entities_are_saved_as_their_id_and_generation_0_is_refused() {
        let entity = Entity {
            slot: 7,
            generation: NonZeroU32::new(3).unwrap(),
        };
        let bytes = postcard::to_stdvec(&entity).unwrap();
        assert_eq!(bytes, postcard::to_stdvec(&entity.id()).unwrap());
        assert_eq!(postcard::from_bytes::<Entity>(&bytes).unwrap(), entity);
        let error = postcard::from_bytes::<Entity>(&postcard::to_stdvec(&7u64).unwrap());
        assert!(error.is_err(), "generation 0 is no entity's");
    }

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
        assert_eq!((a.generation(), b.generation()), (1, 2));
        assert_ne!(a.id(), b.id());
        assert!(slots.get(a).is_none());
        assert_eq!(slots.free(a), None);
        assert_eq!(slots.get(b).map(|s| s.location), Some(at(1)));
        assert_eq!(b.to_string(), "Entity(0v2)");
        assert_eq!(slots.live(), 1);
    }

    #[test]
    fn a_free_slot_matches_no_handle() {
        let mut slots = Slots::default();
        let a = slots.alloc(at(0));
        slots.free(a).unwrap();
        // The handle the slot hands out next, made up before it is.
        let next = Entity {
            slot: a.slot(),
            generation: NonZeroU32::new(2).unwrap(),
        };
        assert!(slots.get(next).is_none());
        assert_eq!(slots.free(next), None);
        assert_eq!(slots.live(), 0);
        assert_eq!(slots.alloc(at(3)), next);
    }

    #[test]
    fn a_slot_out_of_generations_is_retired() {
        let mut slots = Slots::default();
        let first = slots.alloc(at(0));
        slots.free(first).unwrap();
        slots.age_free_slots(NonZeroU32::new(u32::MAX - 1).unwrap());
        let mut last_two = Vec::new();
        for _ in 0..2 {
            let e = slots.alloc(at(0));
            assert_eq!(e.slot(), first.slot());
            last_two.push(e);
            slots.free(e).unwrap();
        }
        assert_eq!(
            last_two.iter().map(|e| e.generation()).collect::<Vec<_>>(),
            [u32::MAX - 1, u32::MAX]
        );
        assert_eq!(slots.retired(), 1);
        let fresh = slots.alloc(at(0));
        assert_eq!((fresh.slot(), fresh.generation()), (1, 1), "slot 0 retired");
        for stale in [first, last_two[0], last_two[1]] {
            assert!(slots.get(stale).is_none());
        }
    }

    #[test]
    fn ids_are_generation_then_slot() {
        let mut slots = Slots::default();
        let a = slots.alloc(at(0));
        let b = slots.alloc(at(1));
        slots.free(a).unwrap();
        let c = slots.alloc(at(2));
        assert_eq!([a.id(), b.id(), c.id()], [1 << 32, (1 << 32) | 1, 2 << 32]);
        assert!(a < b && b < c);
        assert_eq!(Some(c), Some(c).filter(|e| e.generation() == 2));
    }
}
