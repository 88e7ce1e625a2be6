//! Service ids and access sets.
//!
//! Every service a world knows gets a dense [`ServiceId`] the first time it is
//! named, by type or by name. Type-to-id and name-to-id resolution happens once,
//! at registration ([`ServiceTable`]); everything after that indexes by id.
//!
//! An [`AccessSet`] records what one node touches as a sorted list of service
//! ids, each with how it is touched (shared, gated, produced), plus an
//! `exclusive` flag. A node touches a handful of services, so the list lives
//! inline (no heap) up to [`INLINE_ACCESSES`] entries and spills to a vector
//! beyond. Components will get their own id space (`ComponentId`) beside
//! these; the fields are private so that addition does not break anyone.

use std::any::TypeId;
use std::fmt;

use std::hash::BuildHasher;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, enum_map::Enum)]
pub enum AccessKind {
    /// `&T`: many shared accessors of one service run together.
    Shared,
    /// `&mut T`: a barrier in the service's lane.
    Gated,
    /// A factory's output: every consumer of the service runs after it.
    Produced,
    /// An `Append<T>` parameter (reference 003's recorders): shared access
    /// in the service's lane (appenders run together, and beside readers),
    /// and every appender runs before every gate of the service, which is
    /// where the appended values are committed (drained).
    Appended,
}

/// The id space of a world's services: type to id, name to id, id to name.
///
/// Services are keyed by [`TypeId`]: two types are two services even when
/// `std::any::type_name` spells them the same (two `struct S` in different
/// blocks). The name is kept for messages, and a service named by type is also
/// reachable by its type name, so tools that only know names still find it;
/// when two types share a name, the name finds the first of them. A name
/// mentioned before any type (a tool's `reads_named`) becomes the service of
/// the first type with that name.
///
/// Each name is stored once per id: the name index maps a name's hash to the
/// latest id with that hash, and ids sharing a hash are chained through
/// `same_hash`. Private services (the world's own, resolved by `resolve_private`) are not
/// in the name index at all.
#[derive(Debug, Default, Clone)]
pub struct ServiceTable {
    by_type: HashMap<TypeId, ServiceId>,
    by_hash: HashMap<u64, u32>,
    /// Per id, the previous id whose name has the same hash (`u32::MAX`: none).
    same_hash: Vec<u32>,
    names: Vec<Box<str>>,
    /// Per id, whether a type is bound to it (a name-only id is not).
    typed: Vec<bool>,
    /// Per id, whether it is the runtime's own (`resolve_private`): no name
    /// reaches it and no user declaration may name it.
    private: Vec<bool>,
    /// Per id, whether it holds (or is declared as) a value that is not
    /// `Send`: only nodes pinned to the main thread may name it (SL0011).
    non_send: Vec<bool>,
    hasher: foldhash::fast::RandomState,
}

/// Room reserved on first mention: a world names a few dozen services.
const INITIAL_SERVICES: usize = 64;

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
        let hash = self.hasher.hash_one(name);
        // A name mentioned before any type joins the first type called so;
        // a name some other type already holds does not make them one service.
        let id = match self.find_untyped(hash, name) {
            Some(id) => id,
            None => self.push(name, Some(hash)),
        };
        self.bind(type_id, id);
        id
    }

    /// The id of a service only the runtime itself may reach: resolved by
    /// type like any other, but never found by name, so no tool or
    /// `reads_named` declaration can name it.
    pub(crate) fn resolve_private(&mut self, type_id: TypeId, name: &str) -> ServiceId {
        if let Some(&id) = self.by_type.get(&type_id) {
            return id;
        }
        let id = self.push(name, None);
        self.bind(type_id, id);
        self.private[id.index()] = true;
        id
    }

    /// A new id of a node's own state (a [`Local`](crate::Local)): no type
    /// and no name reach it, and no declaration may name it (it is private),
    /// so only the parameter that asked for it ever touches its slot.
    pub(crate) fn push_local(&mut self, name: &str) -> ServiceId {
        let id = self.push(name, None);
        self.private[id.index()] = true;
        id
    }

    /// Whether `id` is one of the runtime's own services (the entity store,
    /// the command queue, the scheduling state), which only the runtime's
    /// own declarations may name.
    pub fn is_private(&self, id: ServiceId) -> bool {
        self.private.get(id.index()).copied().unwrap_or(false)
    }

    /// The id of the type `type_id`, if it has been mentioned.
    pub(crate) fn id_of_type(&self, type_id: TypeId) -> Option<ServiceId> {
        self.by_type.get(&type_id).copied()
    }

    /// Whether a type is bound to `id` (a [`Local`](crate::Local)'s slot
    /// and a name-only id are not).
    pub(crate) fn is_typed(&self, id: ServiceId) -> bool {
        self.typed.get(id.index()).copied().unwrap_or(false)
    }

    /// Marks `id` as a service whose value is not `Send` (inserted with
    /// [`World::insert_non_send`](crate::World::insert_non_send) or named by
    /// a [`NonSend`](crate::NonSend) parameter).
    pub(crate) fn mark_non_send(&mut self, id: ServiceId) {
        if let Some(flag) = self.non_send.get_mut(id.index()) {
            *flag = true;
        }
    }

    /// Whether `id` is a service whose value is not `Send`: only nodes
    /// pinned to the main thread may name it.
    pub fn is_non_send(&self, id: ServiceId) -> bool {
        self.non_send.get(id.index()).copied().unwrap_or(false)
    }

    /// Whether any service is not `Send` (most worlds have none, and the
    /// planner then skips SL0011's pass over every node).
    pub(crate) fn any_non_send(&self) -> bool {
        self.non_send.contains(&true)
    }

    fn bind(&mut self, type_id: TypeId, id: ServiceId) {
        if self.by_type.capacity() == 0 {
            self.by_type.reserve(INITIAL_SERVICES);
        }
        self.by_type.insert(type_id, id);
        self.typed[id.index()] = true;
    }

    /// Every id called `name`, latest first.
    fn named<'a>(&'a self, hash: u64, name: &'a str) -> impl Iterator<Item = ServiceId> + 'a {
        let mut at = self.by_hash.get(&hash).copied().unwrap_or(u32::MAX);
        std::iter::from_fn(move || {
            while at != u32::MAX {
                let id = at;
                at = self.same_hash[id as usize];
                if *self.names[id as usize] == *name {
                    return Some(ServiceId(id));
                }
            }
            None
        })
    }

    /// The first id called `name`.
    fn find(&self, hash: u64, name: &str) -> Option<ServiceId> {
        self.named(hash, name).last()
    }

    /// The id called `name` that no type is bound to yet.
    fn find_untyped(&self, hash: u64, name: &str) -> Option<ServiceId> {
        self.named(hash, name).find(|id| !self.typed[id.index()])
    }

    /// A new id called `name`, in the name index when `hash` is given.
    fn push(&mut self, name: &str, hash: Option<u64>) -> ServiceId {
        let id = ServiceId(u32::try_from(self.names.len()).expect("more than u32::MAX services"));
        if self.names.capacity() == 0 {
            self.names.reserve(INITIAL_SERVICES);
            self.same_hash.reserve(INITIAL_SERVICES);
            self.typed.reserve(INITIAL_SERVICES);
            self.private.reserve(INITIAL_SERVICES);
            self.by_hash.reserve(INITIAL_SERVICES);
        }
        let previous = match hash {
            Some(hash) => self.by_hash.insert(hash, id.0).unwrap_or(u32::MAX),
            None => u32::MAX,
        };
        self.same_hash.push(previous);
        self.names.push(name.into());
        self.typed.push(false);
        self.private.push(false);
        self.non_send.push(false);
        id
    }

    /// The id of the service called `name`, assigning one on first mention.
    pub fn resolve_name(&mut self, name: &str) -> ServiceId {
        let hash = self.hasher.hash_one(name);
        match self.find(hash, name) {
            Some(id) => id,
            None => self.push(name, Some(hash)),
        }
    }

    /// The id of `T` if it has been mentioned.
    pub fn id_of<T: 'static>(&self) -> Option<ServiceId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// The id of the service called `name` if it has been mentioned.
    pub fn id_by_name(&self, name: &str) -> Option<ServiceId> {
        self.find(self.hasher.hash_one(name), name)
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

/// A short list of `Copy` values kept inline up to `N` entries, on the heap
/// beyond: the planner's per-node lists are almost always short.
#[derive(Clone)]
pub(crate) enum SmallList<T: Copy + Default, const N: usize> {
    Inline { len: u8, items: [T; N] },
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> Default for SmallList<T, N> {
    fn default() -> Self {
        SmallList::Inline {
            len: 0,
            items: [T::default(); N],
        }
    }
}

impl<T: Copy + Default, const N: usize> SmallList<T, N> {
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            SmallList::Inline { len, items } => &items[..*len as usize],
            SmallList::Heap(items) => items,
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            SmallList::Inline { len, items } => &mut items[..*len as usize],
            SmallList::Heap(items) => items,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Inserts `value` at `at` (`at <= len`), shifting the rest up.
    #[inline]
    pub(crate) fn insert(&mut self, at: usize, value: T) {
        match self {
            SmallList::Inline { len, items } if (*len as usize) < N => {
                // A few entries: shift by hand rather than call memmove.
                let mut i = *len as usize;
                while i > at {
                    items[i] = items[i - 1];
                    i -= 1;
                }
                items[at] = value;
                *len += 1;
            }
            _ => self.insert_spilled(at, value),
        }
    }

    #[cold]
    #[inline(never)]
    fn insert_spilled(&mut self, at: usize, value: T) {
        match self {
            SmallList::Inline { len, items } => {
                let mut spilled = Vec::with_capacity(N * 2);
                spilled.extend_from_slice(&items[..*len as usize]);
                spilled.insert(at, value);
                *self = SmallList::Heap(spilled);
            }
            SmallList::Heap(items) => items.insert(at, value),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        self.insert(self.len(), value);
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for SmallList<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Accesses an [`AccessSet`] holds without touching the heap.
pub const INLINE_ACCESSES: usize = 4;

/// One service of an access set: its id and how it is touched (a union of
/// [`Touch::SHARED`], [`Touch::GATED`], [`Touch::PRODUCED`],
/// [`Touch::APPENDED`]; never both shared and gated, never appended without
/// shared, never empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Touch {
    pub(crate) id: u32,
    pub(crate) how: u8,
}

impl Touch {
    pub(crate) const SHARED: u8 = 1;
    pub(crate) const GATED: u8 = 2;
    pub(crate) const PRODUCED: u8 = 4;
    /// Appended: always with [`Touch::SHARED`] (an appender is a shared
    /// accessor of the lane that must precede the lane's gates).
    pub(crate) const APPENDED: u8 = 8;
    /// Gated or produced: a barrier in the service's lane.
    pub(crate) const WRITES: u8 = Self::GATED | Self::PRODUCED;

    #[inline]
    pub(crate) fn service(self) -> ServiceId {
        ServiceId(self.id)
    }

    #[inline]
    pub(crate) fn is(self, how: u8) -> bool {
        self.how & how != 0
    }
}

/// What one node touches: shared, gated and produced services, and whether it
/// needs the whole world.
///
/// A service is either shared or gated, never both: gating subsumes reading.
/// Stored as a list sorted by id (inline for up to [`INLINE_ACCESSES`]
/// services), so the usual set costs no allocation and the conflict test is a
/// merge of two short lists.
#[derive(Clone, Default)]
pub struct AccessSet {
    touches: SmallList<Touch, INLINE_ACCESSES>,
    exclusive: bool,
}

impl PartialEq for AccessSet {
    fn eq(&self, other: &Self) -> bool {
        self.exclusive == other.exclusive && self.touches.as_slice() == other.touches.as_slice()
    }
}

impl Eq for AccessSet {}

impl AccessSet {
    /// An empty set: touches nothing, not exclusive.
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, id: ServiceId) -> Result<usize, usize> {
        let touches = self.touches.as_slice();
        // Short lists (the usual case) are scanned; long ones searched.
        if touches.len() <= 8 {
            for (at, touch) in touches.iter().enumerate() {
                if touch.id >= id.0 {
                    return if touch.id == id.0 { Ok(at) } else { Err(at) };
                }
            }
            Err(touches.len())
        } else {
            touches.binary_search_by_key(&id.0, |touch| touch.id)
        }
    }

    fn touch(&self, id: ServiceId) -> u8 {
        match self.find(id) {
            Ok(at) => self.touches.as_slice()[at].how,
            Err(_) => 0,
        }
    }

    fn update(&mut self, id: ServiceId, how: impl FnOnce(u8) -> u8) {
        match self.find(id) {
            Ok(at) => {
                let touch = &mut self.touches.as_mut_slice()[at];
                touch.how = how(touch.how);
            }
            Err(at) => self.touches.insert(
                at,
                Touch {
                    id: id.0,
                    how: how(0),
                },
            ),
        }
    }

    /// Adds shared access to `id` (no-op when `id` is already gated).
    pub fn add_shared(&mut self, id: ServiceId) {
        self.update(id, |how| {
            if how & Touch::GATED == 0 {
                how | Touch::SHARED
            } else {
                how
            }
        });
    }

    /// Adds gated access to `id`, replacing shared (or appending) access to it.
    pub fn add_gated(&mut self, id: ServiceId) {
        self.update(id, |how| {
            (how & !(Touch::SHARED | Touch::APPENDED)) | Touch::GATED
        });
    }

    /// Adds appending access to `id`: shared in its lane, before its gates
    /// (no-op when `id` is already gated, which subsumes it).
    pub fn add_appended(&mut self, id: ServiceId) {
        self.update(id, |how| {
            if how & Touch::GATED == 0 {
                how | Touch::SHARED | Touch::APPENDED
            } else {
                how
            }
        });
    }

    /// Records that the node produces `id`.
    pub fn add_produced(&mut self, id: ServiceId) {
        self.update(id, |how| how | Touch::PRODUCED);
    }

    /// Adds `kind` access to `id`.
    pub fn add(&mut self, id: ServiceId, kind: AccessKind) {
        match kind {
            AccessKind::Shared => self.add_shared(id),
            AccessKind::Gated => self.add_gated(id),
            AccessKind::Produced => self.add_produced(id),
            AccessKind::Appended => self.add_appended(id),
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

    fn with(&self, how: u8) -> impl Iterator<Item = ServiceId> + '_ {
        self.touches
            .as_slice()
            .iter()
            .filter(move |touch| touch.is(how))
            .map(|touch| touch.service())
    }

    /// Every service touched, in id order, with how.
    pub(crate) fn touches(&self) -> &[Touch] {
        self.touches.as_slice()
    }

    /// Services read without a gate (appended ones included), in id order.
    pub fn shared(&self) -> impl Iterator<Item = ServiceId> + '_ {
        self.with(Touch::SHARED)
    }

    /// Services gated, in id order.
    pub fn gated(&self) -> impl Iterator<Item = ServiceId> + '_ {
        self.with(Touch::GATED)
    }

    /// Services produced, in id order.
    pub fn produced(&self) -> impl Iterator<Item = ServiceId> + '_ {
        self.with(Touch::PRODUCED)
    }

    /// Services appended to (also listed by [`shared`](Self::shared)), in
    /// id order.
    pub fn appended(&self) -> impl Iterator<Item = ServiceId> + '_ {
        self.with(Touch::APPENDED)
    }

    /// Whether the node reads or gates `id` (a consumer of it).
    pub fn consumes(&self, id: ServiceId) -> bool {
        self.touch(id) & (Touch::SHARED | Touch::GATED) != 0
    }

    /// How the node touches `id`: gated wins over produced, produced over
    /// appended, appended over shared.
    pub fn access_to(&self, id: ServiceId) -> Option<AccessKind> {
        let how = self.touch(id);
        if how & Touch::GATED != 0 {
            Some(AccessKind::Gated)
        } else if how & Touch::PRODUCED != 0 {
            Some(AccessKind::Produced)
        } else if how & Touch::APPENDED != 0 {
            Some(AccessKind::Appended)
        } else if how & Touch::SHARED != 0 {
            Some(AccessKind::Shared)
        } else {
            None
        }
    }

    /// Whether the set touches nothing and is not exclusive.
    pub fn is_empty(&self) -> bool {
        !self.exclusive && self.touches.len() == 0
    }

    /// Calls `each` for every service both sets touch, with how each does,
    /// in id order, until it returns `true`; returns whether one did.
    fn any_common(&self, other: &AccessSet, mut each: impl FnMut(u32, u8, u8) -> bool) -> bool {
        let (a, b) = (self.touches.as_slice(), other.touches.as_slice());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].id.cmp(&b[j].id) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if each(a[i].id, a[i].how, b[j].how) {
                        return true;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        false
    }

    /// Whether a node with this set and one with `other` must not run at the
    /// same time: either is exclusive, or one gates or produces a service the
    /// other touches in any way. Shared with shared never conflicts.
    pub fn conflicts(&self, other: &AccessSet) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        // Every touch is non-empty, so a common service conflicts unless both
        // only share it.
        self.any_common(other, |_, a, b| (a | b) & Touch::WRITES != 0)
    }

    /// The services on which the two sets conflict, in id order (empty when
    /// the conflict comes only from exclusivity).
    pub fn conflicting_services(&self, other: &AccessSet) -> Vec<ServiceId> {
        let mut services = Vec::new();
        self.any_common(other, |id, a, b| {
            if (a | b) & Touch::WRITES != 0 {
                services.push(ServiceId(id));
            }
            false
        });
        services
    }
}

impl fmt::Debug for AccessSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |how: u8| self.with(how).map(ServiceId::index).collect::<Vec<_>>();
        f.debug_struct("AccessSet")
            .field("shared", &list(Touch::SHARED))
            .field("gated", &list(Touch::GATED))
            .field("produced", &list(Touch::PRODUCED))
            .field("appended", &list(Touch::APPENDED))
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
    fn a_set_past_the_inline_entries_keeps_its_meaning() {
        let ids = [9, 3, 12, 0, 7, 5, 1];
        let mut s = AccessSet::new();
        for (i, &id) in ids.iter().enumerate() {
            if i % 3 == 0 {
                s.add_gated(ServiceId(id));
            } else {
                s.add_shared(ServiceId(id));
            }
        }
        s.add_produced(ServiceId(3));
        s.add_shared(ServiceId(9));
        s.add_gated(ServiceId(5));
        let list = |it: &mut dyn Iterator<Item = ServiceId>| it.map(|s| s.0).collect::<Vec<_>>();
        assert_eq!(list(&mut s.gated()), vec![0, 1, 5, 9]);
        assert_eq!(list(&mut s.shared()), vec![3, 7, 12]);
        assert_eq!(list(&mut s.produced()), vec![3]);
        assert_eq!(s.access_to(ServiceId(3)), Some(AccessKind::Produced));
        assert_eq!(s.access_to(ServiceId(4)), None);
        assert!(s.consumes(ServiceId(3)) && !s.consumes(ServiceId(4)));
        assert!(!s.conflicts(&set(&[7, 12], &[])));
        assert!(s.conflicts(&set(&[3], &[])));
        assert_eq!(
            s.conflicting_services(&set(&[0, 7, 12, 3, 40], &[])),
            vec![ServiceId(0), ServiceId(3)]
        );
        let mut again = AccessSet::new();
        for id in [12, 7, 3] {
            again.add_shared(ServiceId(id));
        }
        for id in [5, 9, 1, 0] {
            again.add_gated(ServiceId(id));
        }
        again.add_produced(ServiceId(3));
        assert_eq!(again, s);
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

    /// Two types that `type_name` spells alike stay two services.
    #[test]
    fn types_with_one_name_are_two_services() {
        let first = {
            struct S;
            TypeId::of::<S>()
        };
        let second = {
            struct S;
            TypeId::of::<S>()
        };
        assert_ne!(first, second);
        let mut table = ServiceTable::new();
        let named = table.resolve_name("S");
        let a = table.resolve_type(first, "S");
        let b = table.resolve_type(second, "S");
        assert_eq!(
            a, named,
            "the first type takes the name mentioned before it"
        );
        assert_ne!(a, b);
        assert_eq!(table.resolve_type(first, "S"), a);
        assert_eq!(table.resolve_type(second, "S"), b);
        assert_eq!(table.id_by_name("S"), Some(a), "the name finds the first");
        assert_eq!(table.name(b), "S");
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn private_services_are_not_found_by_name() {
        struct Hidden;
        let mut table = ServiceTable::new();
        let name = std::any::type_name::<Hidden>();
        let hidden = table.resolve_private(TypeId::of::<Hidden>(), name);
        assert_eq!(table.id_by_name(name), None);
        assert_eq!(table.id_of::<Hidden>(), Some(hidden));
        let by_name = table.resolve_name(name);
        assert_ne!(by_name, hidden, "a name cannot reach a private service");
    }
}
