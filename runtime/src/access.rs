//! Service ids and access sets.
//!
//! Every service a world knows gets a dense [`ServiceId`] the first time it is
//! named, by type or by name. Type-to-id and name-to-id resolution happens once,
//! at registration ([`ServiceTable`]); everything after that indexes by id.
//!
//! An [`AccessSet`] records what one node touches as three bitsets over service
//! ids (shared, gated, produced) plus an `exclusive` flag. Components will get
//! their own id space (`ComponentId`) and their own bitsets beside these; the
//! fields are private so that addition does not break anyone.

use std::any::TypeId;
use std::fmt;

use fixedbitset::FixedBitSet;
use foldhash::HashMap;

/// A dense id for a service of one world, assigned in order of first mention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServiceId(pub u32);

impl ServiceId {
    /// The id as an index into per-service arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a node touches a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessKind {
    /// `&T`: many shared accessors of one service run together.
    Shared,
    /// `&mut T`: a barrier in the service's lane.
    Gated,
    /// A factory's output: every consumer of the service runs after it.
    Produced,
}

/// The id space of a world's services: type to id, name to id, id to name.
///
/// A service named by type is also reachable by its type name
/// (`std::any::type_name`), so tools that only know names still find it.
#[derive(Debug, Default, Clone)]
pub struct ServiceTable {
    by_type: HashMap<TypeId, ServiceId>,
    by_name: HashMap<Box<str>, ServiceId>,
    names: Vec<Box<str>>,
}

impl ServiceTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of ids handed out so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no service has been named yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The id of `T`, assigning the next one on first mention.
    pub fn resolve<T: 'static>(&mut self) -> ServiceId {
        self.resolve_type(TypeId::of::<T>(), std::any::type_name::<T>())
    }

    /// The id of the type `type_id` called `name`, assigning one on first mention.
    pub fn resolve_type(&mut self, type_id: TypeId, name: &str) -> ServiceId {
        if let Some(&id) = self.by_type.get(&type_id) {
            return id;
        }
        let id = self.resolve_name(name);
        self.by_type.insert(type_id, id);
        id
    }

    /// The id of the service called `name`, assigning one on first mention.
    pub fn resolve_name(&mut self, name: &str) -> ServiceId {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let id = ServiceId(u32::try_from(self.names.len()).expect("more than u32::MAX services"));
        self.by_name.insert(name.into(), id);
        self.names.push(name.into());
        id
    }

    /// The id of `T` if it has been mentioned.
    pub fn id_of<T: 'static>(&self) -> Option<ServiceId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// The id of the service called `name` if it has been mentioned.
    pub fn id_by_name(&self, name: &str) -> Option<ServiceId> {
        self.by_name.get(name).copied()
    }

    /// The name of `id` (its type name for services named by type).
    ///
    /// # Panics
    /// If `id` was not handed out by this table.
    pub fn name(&self, id: ServiceId) -> &str {
        &self.names[id.index()]
    }

    /// All names, indexed by id.
    pub fn names(&self) -> &[Box<str>] {
        &self.names
    }
}

/// What one node touches: shared, gated and produced services, and whether it
/// needs the whole world.
///
/// A service is either shared or gated, never both: gating subsumes reading.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AccessSet {
    shared: FixedBitSet,
    gated: FixedBitSet,
    produced: FixedBitSet,
    exclusive: bool,
}

fn insert(set: &mut FixedBitSet, id: ServiceId) {
    if set.len() <= id.index() {
        set.grow(id.index() + 1);
    }
    set.insert(id.index());
}

fn contains(set: &FixedBitSet, id: ServiceId) -> bool {
    set.contains(id.index())
}

fn ids(set: &FixedBitSet) -> impl Iterator<Item = ServiceId> + '_ {
    set.ones().map(|i| ServiceId(i as u32))
}

impl AccessSet {
    /// An empty set: touches nothing, not exclusive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds shared access to `id` (no-op when `id` is already gated).
    pub fn add_shared(&mut self, id: ServiceId) {
        if !contains(&self.gated, id) {
            insert(&mut self.shared, id);
        }
    }

    /// Adds gated access to `id`, replacing shared access to it.
    pub fn add_gated(&mut self, id: ServiceId) {
        if contains(&self.shared, id) {
            self.shared.set(id.index(), false);
        }
        insert(&mut self.gated, id);
    }

    /// Records that the node produces `id`.
    pub fn add_produced(&mut self, id: ServiceId) {
        insert(&mut self.produced, id);
    }

    /// Adds `kind` access to `id`.
    pub fn add(&mut self, id: ServiceId, kind: AccessKind) {
        match kind {
            AccessKind::Shared => self.add_shared(id),
            AccessKind::Gated => self.add_gated(id),
            AccessKind::Produced => self.add_produced(id),
        }
    }

    /// Marks the node exclusive: it conflicts with every other node.
    pub fn set_exclusive(&mut self, exclusive: bool) {
        self.exclusive = exclusive;
    }

    /// Whether the node needs the whole world.
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Services read without a gate, in id order.
    pub fn shared(&self) -> impl Iterator<Item = ServiceId> + '_ {
        ids(&self.shared)
    }

    /// Services gated, in id order.
    pub fn gated(&self) -> impl Iterator<Item = ServiceId> + '_ {
        ids(&self.gated)
    }

    /// Services produced, in id order.
    pub fn produced(&self) -> impl Iterator<Item = ServiceId> + '_ {
        ids(&self.produced)
    }

    /// Whether the node reads or gates `id` (a consumer of it).
    pub fn consumes(&self, id: ServiceId) -> bool {
        contains(&self.shared, id) || contains(&self.gated, id)
    }

    /// How the node touches `id`: gated wins over produced, produced over shared.
    pub fn access_to(&self, id: ServiceId) -> Option<AccessKind> {
        if contains(&self.gated, id) {
            Some(AccessKind::Gated)
        } else if contains(&self.produced, id) {
            Some(AccessKind::Produced)
        } else if contains(&self.shared, id) {
            Some(AccessKind::Shared)
        } else {
            None
        }
    }

    pub(crate) fn shared_bits(&self) -> &FixedBitSet {
        &self.shared
    }

    pub(crate) fn gated_bits(&self) -> &FixedBitSet {
        &self.gated
    }

    pub(crate) fn produced_bits(&self) -> &FixedBitSet {
        &self.produced
    }

    /// Whether the set touches nothing and is not exclusive.
    pub fn is_empty(&self) -> bool {
        !self.exclusive
            && self.shared.is_clear()
            && self.gated.is_clear()
            && self.produced.is_clear()
    }

    /// Whether a node with this set and one with `other` must not run at the
    /// same time: either is exclusive, or one gates or produces a service the
    /// other touches in any way. Shared with shared never conflicts.
    pub fn conflicts(&self, other: &AccessSet) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        let writes_hit = |writer: &AccessSet, other: &AccessSet| {
            [&writer.gated, &writer.produced].into_iter().any(|w| {
                !w.is_disjoint(&other.shared)
                    || !w.is_disjoint(&other.gated)
                    || !w.is_disjoint(&other.produced)
            })
        };
        writes_hit(self, other) || writes_hit(other, self)
    }

    /// The services on which the two sets conflict, in id order (empty when
    /// the conflict comes only from exclusivity).
    pub fn conflicting_services(&self, other: &AccessSet) -> Vec<ServiceId> {
        let mut writes = self.gated.clone();
        writes.union_with(&self.produced);
        let mut other_writes = other.gated.clone();
        other_writes.union_with(&other.produced);
        let mut all = self.shared.clone();
        all.union_with(&writes);
        let mut other_all = other.shared.clone();
        other_all.union_with(&other_writes);
        writes.intersect_with(&other_all);
        other_writes.intersect_with(&all);
        writes.union_with(&other_writes);
        ids(&writes).collect()
    }
}

impl fmt::Debug for AccessSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |set: &FixedBitSet| set.ones().collect::<Vec<_>>();
        f.debug_struct("AccessSet")
            .field("shared", &list(&self.shared))
            .field("gated", &list(&self.gated))
            .field("produced", &list(&self.produced))
            .field("exclusive", &self.exclusive)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(shared: &[u32], gated: &[u32]) -> AccessSet {
        let mut s = AccessSet::new();
        shared.iter().for_each(|&i| s.add_shared(ServiceId(i)));
        gated.iter().for_each(|&i| s.add_gated(ServiceId(i)));
        s
    }

    #[test]
    fn shared_with_shared_never_conflicts() {
        assert!(!set(&[1, 2], &[]).conflicts(&set(&[1, 2], &[])));
    }

    #[test]
    fn a_gate_conflicts_with_any_access_to_its_service() {
        assert!(set(&[], &[3]).conflicts(&set(&[3], &[])));
        assert!(set(&[3], &[]).conflicts(&set(&[], &[3])));
        assert!(set(&[], &[3]).conflicts(&set(&[], &[3])));
        assert!(!set(&[], &[3]).conflicts(&set(&[4], &[5])));
        assert_eq!(
            set(&[1], &[3]).conflicting_services(&set(&[3], &[1])),
            vec![ServiceId(1), ServiceId(3)]
        );
    }

    #[test]
    fn exclusive_conflicts_even_with_an_empty_set() {
        let mut exclusive = AccessSet::new();
        exclusive.set_exclusive(true);
        assert!(exclusive.conflicts(&AccessSet::new()));
        assert!(AccessSet::new().conflicts(&exclusive));
        assert!(!AccessSet::new().conflicts(&AccessSet::new()));
    }

    #[test]
    fn gating_replaces_sharing() {
        let s = set(&[7], &[7]);
        assert_eq!(s.shared().count(), 0);
        assert_eq!(s.access_to(ServiceId(7)), Some(AccessKind::Gated));
        let mut produced = AccessSet::new();
        produced.add_produced(ServiceId(2));
        assert!(produced.conflicts(&set(&[2], &[])));
    }

    #[test]
    fn table_resolves_types_and_names_once() {
        struct Hp;
        let mut table = ServiceTable::new();
        let hp = table.resolve::<Hp>();
        assert_eq!(table.resolve::<Hp>(), hp);
        assert_eq!(table.id_by_name(std::any::type_name::<Hp>()), Some(hp));
        let armor = table.resolve_name("Armor");
        assert_ne!(armor, hp);
        assert_eq!(table.resolve_name("Armor"), armor);
        assert_eq!(table.name(armor), "Armor");
        assert_eq!(table.len(), 2);
    }
}
