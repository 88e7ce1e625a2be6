//! A map read with no lock whose writes wait in a ledger until the boundary.
//!
//! [`LedgerMap`] keeps a plain [`HashMap`] that every reader borrows directly:
//! [`get`](LedgerMap::get) is one hash lookup, with no lock, no atomic and no
//! reference count. A write made during the iteration
//! ([`insert`](LedgerMap::insert), [`remove`](LedgerMap::remove), both `&self`)
//! does not touch the map: it is recorded as a transaction in the ledger.
//! [`apply`](LedgerMap::apply), which takes `&mut self` and so runs alone at
//! the iteration boundary, lands the recorded writes in the order they were
//! recorded. Until then every reader sees the map as it was.
//!
//! # Record order
//!
//! Writes are applied in *global record order*: the order of the successful
//! compare-and-swap that claims each write's slot in the ledger (the
//! linearisation point of [`insert`](LedgerMap::insert) and
//! [`remove`](LedgerMap::remove)). Two writes made one after the other by one
//! thread, or ordered by any happens-before edge, are applied in that order.
//!
//! # Algorithm
//!
//! The ledger is the producer half of crossbeam-queue's `SegQueue` (an
//! unbounded queue made of a linked list of fixed-size blocks, `push` in
//! `crossbeam-queue/src/seg_queue.rs`), with the concurrent consumer replaced
//! by an exclusive drain:
//!
//! * A recorder claims the next slot by a compare-and-swap on the tail index
//!   and then writes its transaction into that slot. Each block spans
//!   `BLOCK_CAP + 1` index values; the spare last offset is a sentinel that
//!   means "this block is full and its successor is being installed", during
//!   which the other recorders wait.
//! * The recorder that claims a block's last slot allocates the next block
//!   *before* its compare-and-swap (so the wait is a few stores long), links
//!   it, and opens its lap with a Release store of the tail index. A recorder
//!   claims a slot only after an Acquire load of an index in the slot's lap,
//!   so the block's initialisation happens before its write into the slot.
//! * Nothing reads a slot while recorders may run: the drain takes `&mut`, so
//!   whatever handed it exclusive access (a join, the executor's completion
//!   counters) already orders every recorded write before it. That is why the
//!   slots need no "written" flag, unlike `SegQueue`'s.
//!
//! The first block is allocated once, by [`LedgerMap::new`], and reused after
//! every drain; an iteration that records fewer than `BLOCK_CAP` (31) writes
//! allocates nothing in the ledger (the recorder of a block's last slot
//! allocates the next block ahead of need).

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use std::collections::HashMap;
use std::collections::hash_map;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicPtr, AtomicUsize, Ordering, UnsafeCell, spin_loop};

/// Slots per block. Under loom it is two, so that a model of three writes
/// already crosses a block boundary and explores the installation.
const BLOCK_CAP: usize = if cfg!(loom) { 2 } else { 31 };

/// Index values per block: `BLOCK_CAP` slots plus the "installing" sentinel.
const LAP: usize = BLOCK_CAP + 1;

/// The number of writes claimed when the tail index reads `index`.
#[inline]
fn claimed(index: usize) -> usize {
    (index / LAP) * BLOCK_CAP + (index % LAP).min(BLOCK_CAP)
}

/// A block of ledger slots.
struct Block<T> {
    /// The block after this one, or null. Written once (Relaxed), by the
    /// recorder that claimed this block's last slot, before the Release store
    /// of the tail index that opens the next lap; read only under `&mut`
    /// ([`Ledger::drain`] and the drop), which happens after every recorder.
    next: AtomicPtr<Block<T>>,
    /// Slot `i` of the `b`-th block holds the write recorded at position
    /// `b * BLOCK_CAP + i`. It is initialised once the recorder that claimed
    /// it (by the compare-and-swap, so exactly one) has written it, and that
    /// happens before the next drain; a drain moves it out, after which it is
    /// uninitialised again.
    slots: [UnsafeCell<MaybeUninit<T>>; BLOCK_CAP],
}

impl<T> Block<T> {
    /// An empty block, on the heap.
    fn new() -> Box<Self> {
        Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: core::array::from_fn(|_| UnsafeCell::new(MaybeUninit::uninit())),
        })
    }
}

/// The recorders' shared position.
struct Tail<T> {
    /// The claim counter. Position `p` is index `(p / BLOCK_CAP) * LAP + p %
    /// BLOCK_CAP`; an index whose offset (`index % LAP`) is `BLOCK_CAP` means
    /// the block is full and its successor is being installed. It only grows
    /// between drains, by a compare-and-swap of one (a claim) or by the
    /// installer's Release store that opens the next lap; a drain resets it
    /// to zero under `&mut`.
    index: AtomicUsize,
    /// The block holding the slots of the current lap of `index`. The
    /// installer stores the next block here before the Release store of
    /// `index` that opens its lap, so a recorder that Acquire-loaded an index
    /// of that lap loads this block or a later one (and if later, its claim
    /// fails because the index has moved on).
    block: AtomicPtr<Block<T>>,
}

/// An unbounded, append-only multi-producer queue drained under `&mut`.
struct Ledger<T> {
    /// Recorders' shared position; the one hot cache line.
    tail: CachePadded<Tail<T>>,
    /// The first block, owned by the ledger from `new` to drop; never changes
    /// and is never freed by a drain. Blocks after it are reached through
    /// `next`, owned by the ledger until a drain frees them.
    head: NonNull<Block<T>>,
    /// The ledger owns values of type `T`.
    _owns: PhantomData<T>,
}

// SAFETY: the ledger owns the `T`s recorded in it; sending it to another
// thread sends them, which `T: Send` permits. Its pointers are to blocks the
// ledger itself owns.
unsafe impl<T: Send> Send for Ledger<T> {}

// SAFETY: through `&Ledger` a thread can only `push`, which moves a `T` in
// (the value then belongs to whichever thread drains, so `T: Send`), and read
// the counters. Every slot is written by exactly one recorder (the one whose
// compare-and-swap claimed it) and read only under `&mut`, so no `&T` is ever
// shared between threads and `T: Sync` is not needed.
unsafe impl<T: Send> Sync for Ledger<T> {}

impl<T> Ledger<T> {
    /// An empty ledger with its first block allocated.
    fn new() -> Self {
        let head = NonNull::from(Box::leak(Block::new()));
        Ledger {
            tail: CachePadded::new(Tail {
                index: AtomicUsize::new(0),
                block: AtomicPtr::new(head.as_ptr()),
            }),
            head,
            _owns: PhantomData,
        }
    }

    /// Records `value` at the next position.
    fn push(&self, value: T) {
        // The block to install if this recorder claims a block's last slot.
        let mut next_block: Option<Box<Block<T>>> = None;
        // Acquire: if this index is in a lap opened by an installer, its
        // block's initialisation must happen before our write into it.
        let mut index = self.tail.index.load(Ordering::Acquire);
        loop {
            let offset = index % LAP;
            if offset == BLOCK_CAP {
                // Another recorder is installing the next block.
                spin_loop();
                index = self.tail.index.load(Ordering::Acquire);
                continue;
            }
            if offset + 1 == BLOCK_CAP && next_block.is_none() {
                next_block = Some(Block::new());
            }
            // Relaxed: the Acquire load of `index` above happens after the
            // store of the block of its lap (see `Tail::block`).
            let block = self.tail.block.load(Ordering::Relaxed);
            // Acquire on failure: the new index is used as `index` above.
            match self.tail.index.compare_exchange_weak(
                index,
                index + 1,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if offset + 1 == BLOCK_CAP {
                        let next = Box::into_raw(next_block.take().expect("allocated above"));
                        self.tail.block.store(next, Ordering::Relaxed);
                        // SAFETY: `block` is the block of the lap our claim
                        // was in (our compare-and-swap succeeded, so the
                        // index did not move since `block` was loaded), it is
                        // alive (blocks are freed only under `&mut`), and
                        // only the claimer of its last slot (us) writes its
                        // `next`.
                        unsafe { (*block).next.store(next, Ordering::Relaxed) };
                        // Release: opens the next lap; pairs with the
                        // recorders' Acquire loads of `index`.
                        self.tail.index.store(index + 2, Ordering::Release);
                    }
                    // SAFETY: as above, `block` is alive and holds the slot at
                    // `offset < BLOCK_CAP`; our claim makes us its only
                    // writer, and no one reads it before a drain, which
                    // happens after us. Its initialisation happens before
                    // this write (it is the first block, created before this
                    // `&self` existed, or our Acquire load synchronised with
                    // the installer's Release store).
                    unsafe {
                        (*block).slots[offset].with_mut(|slot| slot.write(MaybeUninit::new(value)));
                    }
                    return;
                }
                Err(current) => index = current,
            }
        }
    }

    /// The number of writes recorded (claimed) so far.
    fn len(&self) -> usize {
        claimed(self.tail.index.load(Ordering::Relaxed))
    }

    /// Takes every recorded write, in record order, and leaves the ledger
    /// empty. Writes the iterator does not yield are dropped with it; if it
    /// is leaked they leak.
    fn drain(&mut self) -> Drain<'_, T> {
        // Relaxed: `&mut self` already orders every recorder before us.
        let remaining = claimed(self.tail.index.load(Ordering::Relaxed));
        self.tail.index.store(0, Ordering::Relaxed);
        self.tail.block.store(self.head.as_ptr(), Ordering::Relaxed);
        Drain {
            head: self.head,
            block: self.head,
            offset: 0,
            remaining,
            _ledger: PhantomData,
        }
    }
}

impl<T> Drop for Ledger<T> {
    fn drop(&mut self) {
        drop(self.drain());
        // SAFETY: `head` came from `Box::leak` in `new` and is freed only
        // here; the drain above dropped its values and freed the blocks
        // after it, and its slots hold no initialised value (`MaybeUninit`
        // needs no drop).
        drop(unsafe { Box::from_raw(self.head.as_ptr()) });
    }
}

/// The recorded writes, moved out in record order.
struct Drain<'a, T> {
    /// The ledger's first block, which survives the drain.
    head: NonNull<Block<T>>,
    /// The block of the next value to yield.
    block: NonNull<Block<T>>,
    /// The slot of the next value to yield in `block`, `0..=BLOCK_CAP`
    /// (`BLOCK_CAP`: continue at the start of the next block).
    offset: usize,
    /// Values still to yield; exactly the slots from (`block`, `offset`) on,
    /// in list order, that hold initialised values.
    remaining: usize,
    /// The drain holds the ledger exclusively: no recorder runs meanwhile.
    _ledger: PhantomData<&'a mut Ledger<T>>,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.remaining == 0 {
            return None;
        }
        if self.offset == BLOCK_CAP {
            // SAFETY: `block` is alive (blocks are freed only by this drain's
            // drop), and since values remain past its end, its last slot
            // was claimed, so its claimer linked `next` before the drain.
            let next = unsafe { self.block.as_ref() }.next.load(Ordering::Relaxed);
            self.block = NonNull::new(next).expect("a full block has a successor");
            self.offset = 0;
        }
        self.remaining -= 1;
        let offset = self.offset;
        self.offset += 1;
        // SAFETY: `block` is alive; the slot at `offset` was claimed (it is
        // among the first `remaining` slots from the drain's position), so
        // it was written, and that write happens before the `&mut` this
        // drain holds. We read it once and advance past it, so it is moved
        // out exactly once.
        Some(unsafe {
            self.block.as_ref().slots[offset].with(|slot| ptr::read(slot).assume_init())
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        // Drop what was not yielded. A panicking `T::drop` leaks the rest
        // and the blocks, which is safe.
        self.for_each(drop);
        // SAFETY: `head` is alive; we hold the ledger exclusively.
        let head = unsafe { self.head.as_ref() };
        let mut next = head.next.swap(ptr::null_mut(), Ordering::Relaxed);
        while let Some(block) = NonNull::new(next) {
            // SAFETY: every block after the head was made by `Box::into_raw`
            // in `push` and is reachable only from its predecessor's `next`,
            // which we have just cleared (or are about to free); its values
            // have all been moved out or dropped above.
            let block = unsafe { Box::from_raw(block.as_ptr()) };
            next = block.next.load(Ordering::Relaxed);
        }
    }
}

/// One recorded write.
enum Write<K, V> {
    /// `insert(key, value)`.
    Insert(K, V),
    /// `remove(key)`.
    Remove(K),
}

/// A hash map read with no lock, written through a ledger applied at the
/// boundary.
///
/// | concurrent (`&self`) | exclusive (`&mut self`) |
/// | --- | --- |
/// | [`get`](Self::get), [`contains_key`](Self::contains_key), [`iter`](Self::iter), [`len`](Self::len): the map as of the last `apply` | [`apply`](Self::apply): land the recorded writes in record order |
/// | [`insert`](Self::insert), [`remove`](Self::remove): record a write; [`pending`](Self::pending) | |
///
/// `S` is the hasher; the default is `foldhash::fast::RandomState` (fast,
/// randomly seeded per map, not a defence against a determined HashDoS).
///
/// # Record order
///
/// `apply` lands the writes in *global record order*: the order of the
/// atomic claim each `insert` or `remove` makes in the ledger (its
/// linearisation point). Two writes made one after the other by one thread,
/// or ordered by any happens-before edge, are applied in that order; the last
/// recorded write to a key wins.
///
/// ```
/// use sluice_collections::LedgerMap;
///
/// let mut names = LedgerMap::new();
/// names.insert(1, "one");
/// assert_eq!(names.get(&1), None); // recorded, not applied
/// assert_eq!(names.pending(), 1);
/// names.apply();
/// assert_eq!(names.get(&1), Some(&"one"));
/// ```
pub struct LedgerMap<K, V, S = foldhash::fast::RandomState> {
    /// What readers see: the state as of the last `apply`. Changed only
    /// through `&mut self`, so a `&V` borrowed from it stays valid for as long
    /// as the borrow of the map.
    map: HashMap<K, V, S>,
    /// The writes recorded since the last `apply`, in record order.
    ledger: Ledger<Write<K, V>>,
}

impl<K, V> LedgerMap<K, V> {
    /// An empty map with the default hasher.
    pub fn new() -> Self {
        Self::with_hasher(Default::default())
    }

    /// An empty map with room for `capacity` entries before it reallocates.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, Default::default())
    }
}

impl<K, V, S> LedgerMap<K, V, S> {
    /// An empty map that hashes with `hasher`.
    pub fn with_hasher(hasher: S) -> Self {
        Self::with_capacity_and_hasher(0, hasher)
    }

    /// An empty map with room for `capacity` entries, hashing with `hasher`.
    pub fn with_capacity_and_hasher(capacity: usize, hasher: S) -> Self {
        LedgerMap {
            map: HashMap::with_capacity_and_hasher(capacity, hasher),
            ledger: Ledger::new(),
        }
    }

    /// The number of entries as of the last `apply`.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the map had no entries at the last `apply`.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The entries as of the last `apply`, in arbitrary order.
    pub fn iter(&self) -> hash_map::Iter<'_, K, V> {
        self.map.iter()
    }

    /// The applied map itself, for anything else a reader needs.
    pub fn as_map(&self) -> &HashMap<K, V, S> {
        &self.map
    }

    /// The number of writes recorded and not yet applied. While recorders
    /// run it is a snapshot: it may already be stale when it returns.
    pub fn pending(&self) -> usize {
        self.ledger.len()
    }
}

impl<K: Eq + Hash, V, S: BuildHasher> LedgerMap<K, V, S> {
    /// The value of `key` as of the last `apply`. No lock, no atomic: a plain
    /// hash lookup.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key)
    }

    /// Whether `key` had a value at the last `apply`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// Records "set `key` to `value`". Readers see it after the next
    /// [`apply`](Self::apply).
    pub fn insert(&self, key: K, value: V) {
        self.ledger.push(Write::Insert(key, value));
    }

    /// Records "remove `key`" (the key is cloned into the ledger). Readers
    /// see it after the next [`apply`](Self::apply).
    pub fn remove(&self, key: &K)
    where
        K: Clone,
    {
        self.ledger.push(Write::Remove(key.clone()));
    }

    /// Lands every recorded write in the map, in record order, and empties
    /// the ledger. Returns how many writes were applied.
    ///
    /// If hashing a key or dropping a replaced value panics, the writes
    /// recorded after the one that panicked are dropped unapplied and the
    /// ledger is left empty.
    pub fn apply(&mut self) -> usize {
        let mut applied = 0;
        for write in self.ledger.drain() {
            match write {
                Write::Insert(key, value) => {
                    self.map.insert(key, value);
                }
                Write::Remove(key) => {
                    self.map.remove(&key);
                }
            }
            applied += 1;
        }
        applied
    }
}

impl<K, V, S: Default> Default for LedgerMap<K, V, S> {
    fn default() -> Self {
        Self::with_hasher(S::default())
    }
}

impl<K: fmt::Debug, V: fmt::Debug, S> fmt::Debug for LedgerMap<K, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LedgerMap")
            .field("map", &self.map)
            .field("pending", &self.pending())
            .finish()
    }
}

impl<'a, K, V, S> IntoIterator for &'a LedgerMap<K, V, S> {
    type Item = (&'a K, &'a V);
    type IntoIter = hash_map::Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

impl<K: Eq + Hash, V, S: BuildHasher + Default> FromIterator<(K, V)> for LedgerMap<K, V, S> {
    /// A map already holding `iter`'s entries (applied, nothing pending).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        LedgerMap {
            map: iter.into_iter().collect(),
            ledger: Ledger::new(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::{Arc, AtomicUsize};
    use std::thread;

    /// Writes per recorder in the threaded tests.
    const COUNT: usize = if cfg!(miri) { 50 } else { 100_000 };

    #[test]
    fn smoke() {
        let mut map = LedgerMap::new();
        assert!(map.is_empty());
        map.insert(1u32, "one");
        map.insert(2, "two");
        assert_eq!(map.get(&1), None);
        assert_eq!(map.pending(), 2);
        assert_eq!(map.apply(), 2);
        assert_eq!(map.pending(), 0);
        assert_eq!(map.get(&1), Some(&"one"));
        assert_eq!(map.get(&2), Some(&"two"));
        assert_eq!(map.len(), 2);
        assert!(map.contains_key(&2));

        map.remove(&1);
        map.insert(2, "deux");
        assert_eq!(map.get(&1), Some(&"one"));
        assert_eq!(map.get(&2), Some(&"two"));
        map.apply();
        assert_eq!(map.get(&1), None);
        assert_eq!(map.get(&2), Some(&"deux"));
        let mut entries: Vec<_> = map.iter().map(|(k, v)| (*k, *v)).collect();
        entries.sort();
        assert_eq!(entries, [(2, "deux")]);
    }

    #[test]
    fn empty() {
        let mut map: LedgerMap<u64, u64> = LedgerMap::default();
        assert_eq!(map.apply(), 0);
        assert_eq!(map.get(&0), None);
        assert_eq!(map.iter().count(), 0);
        map.remove(&7);
        assert_eq!(map.apply(), 1);
        assert!(map.is_empty());
    }

    /// Writes to one key land in record order, across many blocks and
    /// several applies (the first block is reused).
    #[test]
    fn record_order() {
        let mut map = LedgerMap::new();
        for round in 0..3 {
            for i in 0..5 * BLOCK_CAP + 3 {
                map.insert(0u8, (round, i));
                if i % 7 == 0 {
                    map.remove(&0);
                }
                map.insert(1 + (i % 5) as u8, (round, i));
            }
            assert_eq!(
                map.pending(),
                claimed(map.ledger.tail.index.load(Ordering::Relaxed))
            );
            map.apply();
            let last = 5 * BLOCK_CAP + 2;
            assert_eq!(map.get(&0), Some(&(round, last)));
            for k in 1..=5u8 {
                let i = (0..=last).rev().find(|i| 1 + (i % 5) as u8 == k).unwrap();
                assert_eq!(map.get(&k), Some(&(round, i)));
            }
        }
    }

    /// An iteration of fewer than `BLOCK_CAP` writes stays in the first
    /// block, and after a drain of many blocks recording starts there again.
    #[test]
    fn first_block_is_reused() {
        let mut map = LedgerMap::new();
        let head = map.ledger.head.as_ptr();
        for writes in [BLOCK_CAP - 1, 3 * BLOCK_CAP, BLOCK_CAP - 1] {
            for i in 0..writes {
                map.insert(i, writes);
            }
            let tail = map.ledger.tail.block.load(Ordering::Relaxed);
            // SAFETY: the head block lives as long as the ledger.
            let next = unsafe { &*head }.next.load(Ordering::Relaxed);
            assert_eq!(core::ptr::eq(tail, head), writes < BLOCK_CAP);
            assert_eq!(next.is_null(), writes < BLOCK_CAP);
            assert_eq!(map.apply(), writes);
            assert!(core::ptr::eq(
                map.ledger.tail.block.load(Ordering::Relaxed),
                head
            ));
            // SAFETY: as above.
            assert!(unsafe { &*head }.next.load(Ordering::Relaxed).is_null());
        }
    }

    #[test]
    fn pending_counts_every_boundary() {
        let map = LedgerMap::new();
        for n in 1..=3 * BLOCK_CAP + 1 {
            map.insert(n, ());
            assert_eq!(map.pending(), n);
        }
    }

    /// Several recorders at once: every write lands, and each thread's writes
    /// land in its own order.
    #[test]
    fn mpsc() {
        const THREADS: usize = 4;
        let mut map = LedgerMap::new();
        thread::scope(|s| {
            for t in 0..THREADS {
                let map = &map;
                s.spawn(move || {
                    for i in 0..COUNT {
                        map.insert((t, i), i);
                        // The last write of each thread to its own key wins.
                        map.insert((t, usize::MAX), i);
                    }
                });
            }
        });
        assert_eq!(map.pending(), THREADS * COUNT * 2);
        assert_eq!(map.apply(), THREADS * COUNT * 2);
        assert_eq!(map.len(), THREADS * (COUNT + 1));
        for t in 0..THREADS {
            assert_eq!(map.get(&(t, usize::MAX)), Some(&(COUNT - 1)));
            for i in 0..COUNT {
                assert_eq!(map.get(&(t, i)), Some(&i));
            }
        }
    }

    /// Readers racing recorders see the map as it was, every time.
    #[test]
    fn readers_see_the_old_map() {
        let keys = if cfg!(miri) { 8 } else { 1_000 };
        let mut map: LedgerMap<usize, usize> = (0..keys).map(|k| (k, k)).collect();
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for i in 0..COUNT {
                        map.insert(i % keys, usize::MAX);
                        map.remove(&(i % keys));
                    }
                });
            }
            // This thread reads until the recorders are done, and once more.
            loop {
                let finished = map.pending() == 4 * COUNT;
                for k in 0..keys {
                    assert_eq!(map.get(&k), Some(&k));
                }
                assert_eq!(map.len(), keys);
                if finished {
                    break;
                }
                thread::yield_now();
            }
        });
        assert_eq!(map.apply(), 4 * COUNT);
        // Every key's last write was its remove.
        assert!(map.is_empty());
    }

    /// A value that counts its drops.
    #[derive(Debug)]
    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Every value is dropped exactly once: replaced on apply, removed on
    /// apply, never applied (map dropped with writes pending), or still in
    /// the map when it drops.
    #[test]
    fn drops() {
        let drops = Arc::new(AtomicUsize::new(0));
        let made = 3 * BLOCK_CAP + 5;
        {
            let mut map = LedgerMap::new();
            for i in 0..made {
                map.insert(i % 10, Counted(drops.clone()));
            }
            map.apply();
            // 10 keys, so `made - 10` values were replaced.
            assert_eq!(drops.load(Ordering::Relaxed), made - 10);
            map.remove(&0);
            map.apply();
            assert_eq!(drops.load(Ordering::Relaxed), made - 9);
            for i in 0..made {
                map.insert(100 + i, Counted(drops.clone()));
            }
            // Dropped with 9 applied values and `made` pending.
        }
        assert_eq!(drops.load(Ordering::Relaxed), 2 * made);
    }

    /// A leaked drain leaks its values but leaves a usable, empty ledger.
    #[test]
    fn leaked_drain_leaves_the_ledger_empty() {
        let mut ledger = Ledger::new();
        for i in 0..BLOCK_CAP + 2 {
            ledger.push(i);
        }
        let mut drain = ledger.drain();
        assert_eq!(drain.next(), Some(0));
        core::mem::forget(drain);
        assert_eq!(ledger.len(), 0);
        ledger.push(7);
        assert_eq!(ledger.drain().collect::<Vec<_>>(), [7]);
    }

    /// A panic while applying drops the rest of the ledger and leaves the
    /// map usable.
    #[test]
    fn panic_in_apply_drops_the_rest() {
        #[derive(PartialEq, Eq, Debug, Clone)]
        struct Key(u32);
        impl Hash for Key {
            fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
                assert_ne!(self.0, 13, "unlucky key");
                self.0.hash(state);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let mut map = LedgerMap::new();
        map.insert(Key(1), Counted(drops.clone()));
        map.insert(Key(13), Counted(drops.clone()));
        map.insert(Key(2), Counted(drops.clone()));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| map.apply()));
        assert!(result.is_err());
        // The unlucky write and the one after it were dropped.
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        assert_eq!(map.pending(), 0);
        assert_eq!(map.len(), 1);
        map.insert(Key(3), Counted(drops.clone()));
        map.apply();
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<LedgerMap<String, Vec<u8>>>();
        check::<LedgerMap<u64, Arc<str>, std::hash::RandomState>>();
    }
}
