//! A read-mostly map whose get-or-add captures nothing.
//!
//! Reference 003 ("The structures underneath") describes
//! `ReadWriteLockedDictionary`: a read under a read lock that escalates to a
//! write lock only when the key turns out to be absent, handing back a
//! reference into the map's own storage, so a hit is not a copy. Its many
//! `GetOrAdd` overloads exist because of closures: a factory that captures a
//! local allocates on every call, including the calls that find the key, so
//! the state is passed as arguments instead, up to three of them.
//!
//! [`GetOrAddMap`] is that structure on [`dashmap`] (the workspace's
//! reader/writer-locked map; see `DESIGN.md`, "Collections"): a hit is one
//! shard read lock and one hash probe, and hands back a [`Ref`] into the
//! shard. The factory is a plain `fn` pointer, so a capturing closure does
//! not compile: whatever it needs arrives as the `state` arguments of
//! [`get_or_add`](GetOrAddMap::get_or_add),
//! [`get_or_add2`](GetOrAddMap::get_or_add2) and
//! [`get_or_add3`](GetOrAddMap::get_or_add3). The key is looked up
//! borrowed (`&str` for a `String` key) and made owned only on a miss, so a
//! hit allocates nothing (`tests/get_or_add_alloc.rs` counts).
//!
//! # Locking
//!
//! A [`Ref`] holds its shard's read lock. Like any dashmap reference, do not
//! hold one while adding to the same map on the same thread (the add may
//! need that shard's write lock), and do not touch the map from inside a
//! factory (it runs under the write lock of the key's shard).

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
pub use dashmap::mapref::one::Ref;

/// A concurrent map read under a shard read lock, written only when a key is
/// missing, by a factory that captures nothing.
///
/// | concurrent (`&self`) | exclusive (`&mut self`) |
/// | --- | --- |
/// | [`get`](Self::get), [`get_or_add`](Self::get_or_add), [`get_or_add2`](Self::get_or_add2), [`get_or_add3`](Self::get_or_add3), [`len`](Self::len) | [`clear`](Self::clear) |
///
/// `S` is the hasher; the default is `foldhash::fast::RandomState`.
///
/// ```
/// use sluice_collections::GetOrAddMap;
///
/// let names: GetOrAddMap<String, u32> = GetOrAddMap::new();
/// let base = 100;
/// // The state (`base`) is an argument, not a capture.
/// let id = *names.get_or_add("hp", base, |name, base| base + name.len() as u32);
/// assert_eq!(id, 102);
/// // A hit: the factory does not run, nothing is allocated.
/// assert_eq!(*names.get_or_add("hp", 0, |_, _| unreachable!()), 102);
/// ```
pub struct GetOrAddMap<K, V, S = foldhash::fast::RandomState> {
    map: DashMap<K, V, S>,
}

impl<K: Eq + Hash, V> GetOrAddMap<K, V> {
    /// An empty map with the default hasher.
    pub fn new() -> Self {
        Self::with_hasher(Default::default())
    }
}

impl<K: Eq + Hash, V, S: BuildHasher + Clone> GetOrAddMap<K, V, S> {
    /// An empty map that hashes with `hasher`.
    pub fn with_hasher(hasher: S) -> Self {
        GetOrAddMap {
            map: DashMap::with_hasher(hasher),
        }
    }

    /// The value of `key`, under its shard's read lock.
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Option<Ref<'_, K, V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key)
    }

    /// The value of `key`; on a miss, `make(key, state)` is stored first.
    ///
    /// A hit takes the shard's read lock only and allocates nothing; a miss
    /// makes the owned key (`ToOwned`), takes the write lock, and calls
    /// `make` unless another thread added the key meanwhile, so `make` runs
    /// at most once per key.
    #[inline]
    pub fn get_or_add<Q, A>(&self, key: &Q, state: A, make: fn(&Q, A) -> V) -> Ref<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        self.hit_or_add(key, |key| make(key, state))
    }

    /// [`get_or_add`](Self::get_or_add) with two state arguments.
    #[inline]
    pub fn get_or_add2<Q, A, B>(
        &self,
        key: &Q,
        a: A,
        b: B,
        make: fn(&Q, A, B) -> V,
    ) -> Ref<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        self.hit_or_add(key, |key| make(key, a, b))
    }

    /// [`get_or_add`](Self::get_or_add) with three state arguments.
    #[inline]
    pub fn get_or_add3<Q, A, B, C>(
        &self,
        key: &Q,
        a: A,
        b: B,
        c: C,
        make: fn(&Q, A, B, C) -> V,
    ) -> Ref<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        self.hit_or_add(key, |key| make(key, a, b, c))
    }

    /// The hit, or on a miss [`add`](Self::add) and a second look. Both
    /// paths end in one `get`, whose `Ref` is the return value itself: when
    /// the miss path handed back a `Ref` of its own, the two were merged
    /// through a stack copy that read the hit's fields back wider than they
    /// were written, a store-forwarding stall that made a hit 1.6x a plain
    /// `get` (`benches/get_or_add.rs`).
    #[inline]
    fn hit_or_add<Q>(&self, key: &Q, make: impl FnOnce(&Q) -> V) -> Ref<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        if let Some(hit) = self.map.get(key) {
            return hit;
        }
        self.add(key, make);
        match self.map.get(key) {
            Some(hit) => hit,
            // `add` stored the key or found it stored, and nothing removes
            // an entry through `&self` (`clear` takes `&mut self`).
            None => unreachable!("a key added to a GetOrAddMap is gone"),
        }
    }

    /// The miss path: the write lock, a second look, and `make` if still
    /// absent. Out of line, so the hit path stays small.
    #[cold]
    #[inline(never)]
    fn add<Q>(&self, key: &Q, make: impl FnOnce(&Q) -> V)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        if let Entry::Vacant(vacant) = self.map.entry(key.to_owned()) {
            vacant.insert(make(key));
        }
    }

    /// Whether `key` has a value.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// The number of entries (a snapshot while other threads add).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the map has no entries (a snapshot while other threads add).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<K: Eq + Hash, V, S: BuildHasher + Clone + Default> Default for GetOrAddMap<K, V, S> {
    fn default() -> Self {
        Self::with_hasher(S::default())
    }
}

impl<K: Eq + Hash + fmt::Debug, V: fmt::Debug, S: BuildHasher + Clone> fmt::Debug
    for GetOrAddMap<K, V, S>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetOrAddMap")
            .field("len", &self.map.len())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::{AtomicUsize, Ordering};
    use std::thread;

    #[test]
    fn smoke() {
        let map: GetOrAddMap<String, usize> = GetOrAddMap::new();
        assert!(map.is_empty());
        assert_eq!(*map.get_or_add("one", 1, |_, n| n), 1);
        assert_eq!(
            *map.get_or_add("one", 9, |_, n| n),
            1,
            "a hit keeps the value"
        );
        assert_eq!(
            *map.get_or_add2("two", 1, 1, |key, a, b| a + b + key.len()),
            5
        );
        assert_eq!(
            *map.get_or_add3("three", 1, 2, 3, |_, a, b, c| a * b * c),
            6
        );
        assert_eq!(map.len(), 3);
        assert!(map.contains_key("two"));
        assert_eq!(map.get("three").map(|v| *v), Some(6));
        assert!(map.get("four").is_none());
        let hit = map.get_or_add("one", 0, |_, _| unreachable!());
        assert_eq!(hit.key(), "one");
        drop(hit);
        let mut map = map;
        map.clear();
        assert!(map.is_empty());
    }

    /// The value handed back is the map's own, not a copy: two lookups see
    /// one address.
    #[test]
    fn a_hit_is_a_reference() {
        let map: GetOrAddMap<u32, [u8; 64]> = GetOrAddMap::new();
        let first = &*map.get_or_add(&7, 3, |_, fill| [fill; 64]) as *const [u8; 64];
        let again = &*map.get_or_add(&7, 0, |_, _| unreachable!()) as *const [u8; 64];
        assert_eq!(first, again);
    }

    /// Many threads asking for the same keys at once: each key's factory
    /// runs exactly once, and everyone sees its value.
    #[test]
    fn racing_adds_make_each_value_once() {
        const THREADS: usize = 4;
        let keys: usize = if cfg!(miri) { 8 } else { 1_000 };
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let map: GetOrAddMap<usize, usize> = GetOrAddMap::new();
        thread::scope(|s| {
            for t in 0..THREADS {
                let map = &map;
                s.spawn(move || {
                    for i in 0..keys {
                        let key = (i + t * 7) % keys;
                        let value = *map.get_or_add(&key, &MADE, |key, made| {
                            made.fetch_add(1, Ordering::Relaxed);
                            key * 2
                        });
                        assert_eq!(value, key * 2);
                    }
                });
            }
        });
        assert_eq!(MADE.load(Ordering::Relaxed), keys);
        assert_eq!(map.len(), keys);
    }

    /// A factory that panics adds nothing and leaves the map usable.
    #[test]
    fn panic_in_factory_adds_nothing() {
        let map: GetOrAddMap<u8, u8> = GetOrAddMap::new();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            map.get_or_add(&1, (), |_, ()| panic!("no value"));
        }));
        assert!(result.is_err());
        assert!(map.is_empty());
        assert_eq!(*map.get_or_add(&1, 5, |_, v| v), 5);
    }

    /// Values are dropped with the map, once each.
    #[test]
    fn drops() {
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        struct Counted;
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        }
        {
            let map: GetOrAddMap<u32, Counted> = GetOrAddMap::new();
            for i in 0..10 {
                drop(map.get_or_add(&(i % 5), (), |_, ()| Counted));
            }
            assert_eq!(DROPPED.load(Ordering::Relaxed), 0);
        }
        assert_eq!(DROPPED.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<GetOrAddMap<String, Vec<u8>>>();
    }
}
