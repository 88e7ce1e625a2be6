//! Reusable values, taken and given back from any thread.
//!
//! A [`Pool<T>`] keeps idle values of `T` (buffers, strings, maps) so that a
//! frame reuses last frame's allocations instead of making new ones.
//! [`Pool::take`] returns a [`Taken`] guard that derefs to the value and, when
//! dropped, [resets](Pooled::reset) it (a `Vec` is cleared, keeping its
//! capacity) and gives it back. A take from an empty pool makes a fresh value
//! with `T::default()`; a give-back to a full pool drops the value.
//!
//! Per-type pools are described on [`Pooled`].
//!
//! # Algorithm
//!
//! The idle values sit in Dmitry Vyukov's bounded MPMC queue (1024cores,
//! "Bounded MPMC queue",
//! <https://www.1024cores.net/home/lock-free-algorithms/queues/bounded-mpmc-queue>),
//! the algorithm of crossbeam-queue's `ArrayQueue`, with the crate's doubled
//! stamps (see [`mpsc`](crate::mpsc)): for position `p`, a cell stamped `2p`
//! is free for the give-back of `p` and a cell stamped `2p + 1` holds the
//! value given back at `p`, so every power-of-two capacity, including one, is
//! exact. A give-back (take) claims its position by a compare-and-swap on the
//! tail (head) only after an Acquire load of the cell's stamp showed the cell
//! ready for that position, and hands the cell over with a Release store of
//! the next stamp.

use core::fmt;
use core::hash::BuildHasher;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use std::collections::{HashMap, VecDeque};

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicUsize, Ordering, UnsafeCell, spin_loop};

/// A type with a per-type [`Pool`]: it can be made (`Default`), sent between
/// threads, and [reset](Self::reset) for reuse.
///
/// The crate implements it for `Vec<T>`, `String`, `VecDeque<T>` and
/// `HashMap<K, V, S>`; each resets by `clear`, which keeps the allocation.
///
/// # Per-type pools
///
/// [`Pooled::pool`] returns the one process-wide pool of a type. Rust has no
/// generic statics, and the impls this crate provides are generic
/// (`Vec<T>` for every `T`), so the default `pool()` looks the type up in a
/// registry keyed by [`TypeId`](core::any::TypeId): a global
/// [`GetOrAddMap`](crate::GetOrAddMap), written once per type (its pool is
/// created and leaked then), with a per-thread cache in
/// front so that a steady-state lookup is one hash probe in thread-local
/// memory, with no lock and no shared write. A non-generic type that wants to
/// skip even that can override `pool()` with its own `static`:
///
/// ```
/// use std::sync::OnceLock;
/// use sluice_collections::{Pool, Pooled};
///
/// #[derive(Default)]
/// struct Scratch(Vec<u8>);
///
/// impl Pooled for Scratch {
///     fn reset(&mut self) {
///         self.0.clear();
///     }
///     fn pool() -> &'static Pool<Self> {
///         static POOL: OnceLock<Pool<Scratch>> = OnceLock::new();
///         POOL.get_or_init(|| Pool::new(Self::POOL_CAPACITY))
///     }
/// }
///
/// let mut scratch = Scratch::pool().take();
/// scratch.0.extend_from_slice(b"frame");
/// drop(scratch); // cleared and back in the pool
/// assert_eq!(Scratch::pool().idle(), 1);
/// ```
///
/// Under `--cfg loom` there are no per-type pools (loom's atomics cannot live
/// in a static across model runs): models build a [`Pool`] with
/// [`Pool::new`].
pub trait Pooled: Default + Send + Sized + 'static {
    /// How many idle values the per-type pool keeps (rounded up to a power
    /// of two); a value given back beyond that is dropped.
    const POOL_CAPACITY: usize = 64;

    /// Makes the value ready for its next user, keeping what is worth
    /// keeping (typically the allocation). Called on every give-back.
    fn reset(&mut self);

    /// The process-wide pool of this type.
    ///
    /// The default looks the type up in a registry keyed by
    /// [`TypeId`](core::any::TypeId) (see [Per-type pools](Pooled#per-type-pools));
    /// override it to use a `static` of your own.
    ///
    /// # Panics
    ///
    /// The default panics under `--cfg loom`, where a model must build its
    /// own [`Pool`].
    fn pool() -> &'static Pool<Self> {
        registry::pool_of::<Self>()
    }
}

impl<T: Send + 'static> Pooled for Vec<T> {
    fn reset(&mut self) {
        self.clear();
    }
}

impl Pooled for String {
    fn reset(&mut self) {
        self.clear();
    }
}

impl<T: Send + 'static> Pooled for VecDeque<T> {
    fn reset(&mut self) {
        self.clear();
    }
}

impl<K, V, S> Pooled for HashMap<K, V, S>
where
    K: Send + 'static,
    V: Send + 'static,
    S: BuildHasher + Default + Send + 'static,
{
    fn reset(&mut self) {
        self.clear();
    }
}

/// The stamp of a cell that is free for the give-back at position `pos`.
#[inline]
fn free_stamp(pos: usize) -> usize {
    pos.wrapping_mul(2)
}

/// The stamp of a cell that holds the value given back at position `pos`.
#[inline]
fn full_stamp(pos: usize) -> usize {
    pos.wrapping_mul(2).wrapping_add(1)
}

/// One cell of the ring.
struct Slot<T> {
    /// `free_stamp(p)` while the cell waits for the give-back of position
    /// `p`; `full_stamp(p)` from when that give-back has written `value`
    /// until a take has moved it out. Both transitions are Release stores
    /// (publishing the write, and the end of the read, of `value`); every
    /// load before a claim is Acquire.
    stamp: AtomicUsize,
    /// Initialised exactly while `stamp` is a full stamp. Written only by
    /// the give-back that claimed the position, read only by the take that
    /// claimed it.
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A lock-free pool of idle `T`s, shared by reference between threads.
///
/// | concurrent (`&self`) | exclusive (`&mut self`) |
/// | --- | --- |
/// | [`take`](Self::take), give back (drop the [`Taken`], or [`give_back`](Self::give_back)), [`idle`](Self::idle) | |
pub struct Pool<T> {
    /// The next position a give-back claims. Only moves forward, by a
    /// successful compare-and-swap from `p` to `p + 1` made by a give-back
    /// that saw the cell of `p` stamped `free_stamp(p)`.
    tail: CachePadded<AtomicUsize>,
    /// The next position a take claims. Only moves forward, by a successful
    /// compare-and-swap from `p` to `p + 1` made by a take that saw the cell
    /// of `p` stamped `full_stamp(p)`. Never passes `tail`.
    head: CachePadded<AtomicUsize>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    /// The ring. Cell `i` starts stamped `free_stamp(i)`; the cell of
    /// position `p` is `slots[p & mask]`.
    slots: Box<[Slot<T>]>,
}

// SAFETY: a pool owns the idle `T`s in it; sending it sends them.
unsafe impl<T: Send> Send for Pool<T> {}

// SAFETY: through `&Pool` a thread moves a `T` in (give back) or out (take),
// so values cross threads: `T: Send`. A cell's value is accessed only by the
// one thread whose compare-and-swap claimed its position, between an Acquire
// load and a Release store of its stamp, so there is never a shared `&T`
// (`T: Sync` is not needed) nor a concurrent access to one cell.
unsafe impl<T: Send> Sync for Pool<T> {}

impl<T> Pool<T> {
    /// An empty pool that keeps up to `capacity` idle values, rounded up to
    /// a power of two.
    ///
    /// # Panics
    ///
    /// If `capacity` is zero (a pool that keeps nothing is a mistake: use
    /// `T::default()`), or if rounding it up overflows `usize`.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "Pool::new: capacity must be at least 1");
        let capacity = capacity
            .checked_next_power_of_two()
            .expect("Pool::new: capacity too large");
        Pool {
            tail: CachePadded::new(AtomicUsize::new(0)),
            head: CachePadded::new(AtomicUsize::new(0)),
            mask: capacity - 1,
            slots: (0..capacity)
                .map(|i| Slot {
                    stamp: AtomicUsize::new(free_stamp(i)),
                    value: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
        }
    }

    /// The most idle values it keeps.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many idle values it holds now (a snapshot while other threads
    /// take and give back).
    pub fn idle(&self) -> usize {
        // Relaxed: a statistic. Head first, so that a concurrent take cannot
        // make the difference negative.
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        tail.wrapping_sub(head).min(self.capacity())
    }

    /// Moves `value` into the ring, or hands it back if the ring is full.
    fn push(&self, value: T) -> Result<(), T> {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            // Acquire: pairs with the take that freed this cell (its read of
            // the previous value happens before our write).
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == free_stamp(pos) {
                // Relaxed: the claim orders nothing; the stamps do.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: our compare-and-swap claimed `pos`, and the
                        // cell was free for it, so no other thread accesses
                        // the value until our stamp store below; the Acquire
                        // load ordered the previous reader before us.
                        slot.value
                            .with_mut(|v| unsafe { v.write(MaybeUninit::new(value)) });
                        // Release: publishes the value to the take of `pos`.
                        slot.stamp.store(full_stamp(pos), Ordering::Release);
                        return Ok(());
                    }
                    Err(current) => pos = current,
                }
            } else if (stamp.wrapping_sub(free_stamp(pos)) as isize) < 0 {
                // The cell still belongs to the previous lap: full.
                return Err(value);
            } else {
                // Another give-back claimed `pos`; catch up.
                spin_loop();
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Moves an idle value out of the ring, if there is one.
    fn pop(&self) -> Option<T> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            // Acquire: pairs with the give-back that filled this cell.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == full_stamp(pos) {
                match self.head.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the cell holds the value given back at
                        // `pos` (its stamp, loaded with Acquire, says so, and
                        // that write happens before us); our compare-and-swap
                        // claimed `pos`, so we are its only reader, once.
                        let value = slot.value.with(|v| unsafe { v.read().assume_init() });
                        // Release: our read happens before the give-back of
                        // the next lap writes the cell.
                        slot.stamp.store(
                            free_stamp(pos.wrapping_add(self.slots.len())),
                            Ordering::Release,
                        );
                        return Some(value);
                    }
                    Err(current) => pos = current,
                }
            } else if (stamp.wrapping_sub(full_stamp(pos)) as isize) < 0 {
                // Not yet given back at `pos`: empty (or a give-back is in
                // flight, which counts as empty).
                return None;
            } else {
                // Another take claimed `pos`; catch up.
                spin_loop();
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }
}

impl<T: Pooled> Pool<T> {
    /// An idle value, or `T::default()` if there is none. It comes back to
    /// this pool, reset, when the guard drops.
    pub fn take(&self) -> Taken<'_, T> {
        Taken {
            value: ManuallyDrop::new(self.pop().unwrap_or_default()),
            pool: self,
        }
    }

    /// Resets `value` and keeps it for a later `take`; drops it if the pool
    /// is full. This is what dropping a [`Taken`] does; call it directly to
    /// stock a pool with values made elsewhere.
    pub fn give_back(&self, mut value: T) {
        value.reset();
        // Full: the value is dropped here.
        let _ = self.push(value);
    }
}

impl<T> Drop for Pool<T> {
    fn drop(&mut self) {
        // `&mut self`: every take and give-back has finished, so positions
        // `head..tail` are exactly the cells holding values.
        while self.pop().is_some() {}
    }
}

impl<T> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("capacity", &self.capacity())
            .field("idle", &self.idle())
            .finish()
    }
}

/// A value taken from a [`Pool`]; derefs to it, and gives it back (reset)
/// when dropped.
#[must_use = "dropping a Taken gives the value straight back"]
pub struct Taken<'a, T: Pooled> {
    /// The value; always initialised, except inside `drop` and `into_inner`,
    /// which take it out exactly once as the guard ends.
    value: ManuallyDrop<T>,
    /// Where it goes back.
    pool: &'a Pool<T>,
}

impl<T: Pooled> Taken<'_, T> {
    /// Keeps the value: it will not go back to the pool.
    pub fn into_inner(this: Self) -> T {
        let mut this = ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped, so its value is taken only here,
        // once; the guard is gone after this.
        unsafe { ManuallyDrop::take(&mut this.value) }
    }
}

impl<T: Pooled> Deref for Taken<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Pooled> DerefMut for Taken<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: Pooled> Drop for Taken<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the value is initialised (only `into_inner` takes it
        // otherwise, and it never drops the guard), and the guard is being
        // dropped, so nothing uses the field after this.
        let value = unsafe { ManuallyDrop::take(&mut self.value) };
        self.pool.give_back(value);
    }
}

impl<T: Pooled + fmt::Debug> fmt::Debug for Taken<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Taken").field(&*self.value).finish()
    }
}

/// The per-type pools behind the default [`Pooled::pool`].
mod registry {
    use super::{Pool, Pooled};
    #[cfg(not(loom))]
    use core::any::{Any, TypeId};

    /// A registered pool: a leaked `Pool<T>` for the `T` of its key.
    #[cfg(not(loom))]
    type Entry = &'static (dyn Any + Send + Sync);

    /// Every per-type pool created so far, by type: a get-or-add map, so a
    /// type is registered once whichever threads race to it first, and a
    /// thread's cache miss on a registered type takes a shard read lock, not
    /// a global mutex and a scan. Read only when a thread's cache misses.
    #[cfg(not(loom))]
    static POOLS: std::sync::LazyLock<crate::GetOrAddMap<TypeId, Entry>> =
        std::sync::LazyLock::new(crate::GetOrAddMap::new);

    #[cfg(not(loom))]
    std::thread_local! {
        /// This thread's copy of the entries it has looked up.
        static CACHE: std::cell::RefCell<std::collections::HashMap<TypeId, Entry, foldhash::fast::RandomState>> =
            std::cell::RefCell::default();
    }

    /// The registered pool of `T`, created on first use.
    #[cfg(not(loom))]
    pub(super) fn pool_of<T: Pooled>() -> &'static Pool<T> {
        let id = TypeId::of::<T>();
        let entry = CACHE
            .try_with(|cache| {
                if let Some(&entry) = cache.borrow().get(&id) {
                    return entry;
                }
                let entry = global::<T>(id);
                cache.borrow_mut().insert(id, entry);
                entry
            })
            // The thread is being torn down: skip the cache.
            .unwrap_or_else(|_| global::<T>(id));
        entry
            .downcast_ref::<Pool<T>>()
            .expect("a pool is registered under its own type's id")
    }

    /// The registered pool of `T` from the global map, created if absent.
    #[cfg(not(loom))]
    fn global<T: Pooled>(id: TypeId) -> Entry {
        *POOLS.get_or_add(&id, (), new_pool::<T>)
    }

    /// A new pool of `T`, leaked: registered pools live as long as the
    /// process.
    #[cfg(not(loom))]
    fn new_pool<T: Pooled>(_: &TypeId, (): ()) -> Entry {
        Box::leak(Box::new(Pool::<T>::new(T::POOL_CAPACITY)))
    }

    /// Loom models build their own pools: loom's atomics cannot outlive a
    /// model run, so they cannot sit in a static.
    #[cfg(loom)]
    pub(super) fn pool_of<T: Pooled>() -> &'static Pool<T> {
        panic!("Pooled::pool: per-type pools are statics, which loom cannot model; use Pool::new")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::{AtomicBool, AtomicUsize, Ordering};
    use std::thread;

    /// Operations per thread in the threaded tests.
    const COUNT: usize = if cfg!(miri) { 50 } else { 100_000 };

    /// Counters per test (tests run in parallel; each uses its own `ID`).
    static MADE: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];
    static RESETS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];
    static DROPPED: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

    /// A pooled value that counts how often it is made, reset and dropped,
    /// and knows whether someone holds it.
    #[derive(Debug)]
    struct Tracked<const ID: usize> {
        data: Vec<usize>,
        held: AtomicBool,
    }

    impl<const ID: usize> Tracked<ID> {
        fn made() -> usize {
            MADE[ID].load(Ordering::Relaxed)
        }
        fn resets() -> usize {
            RESETS[ID].load(Ordering::Relaxed)
        }
        fn dropped() -> usize {
            DROPPED[ID].load(Ordering::Relaxed)
        }
        /// Marks it held; panics if it already was (handed out twice).
        fn hold(&self) {
            assert!(!self.held.swap(true, Ordering::Relaxed), "handed out twice");
            assert!(self.data.is_empty(), "not reset");
        }
    }

    impl<const ID: usize> Default for Tracked<ID> {
        fn default() -> Self {
            MADE[ID].fetch_add(1, Ordering::Relaxed);
            Tracked {
                data: Vec::new(),
                held: AtomicBool::new(false),
            }
        }
    }

    impl<const ID: usize> Drop for Tracked<ID> {
        fn drop(&mut self) {
            DROPPED[ID].fetch_add(1, Ordering::Relaxed);
        }
    }

    impl<const ID: usize> Pooled for Tracked<ID> {
        const POOL_CAPACITY: usize = 4;
        fn reset(&mut self) {
            RESETS[ID].fetch_add(1, Ordering::Relaxed);
            self.data.clear();
            self.held.store(false, Ordering::Relaxed);
        }
    }

    #[test]
    fn smoke() {
        let pool = Pool::<Tracked<0>>::new(4);
        let mut a = pool.take();
        a.hold();
        a.data.extend([1, 2, 3]);
        let capacity = a.data.capacity();
        assert_eq!(Tracked::<0>::made(), 1);
        drop(a);
        assert_eq!(pool.idle(), 1);
        let b = pool.take();
        b.hold();
        // The same allocation, reset.
        assert!(b.data.is_empty());
        assert_eq!(b.data.capacity(), capacity);
        assert_eq!(Tracked::<0>::made(), 1);
        assert_eq!(Tracked::<0>::resets(), 1);
        let kept = Taken::into_inner(b);
        assert_eq!(pool.idle(), 0);
        drop(kept);
        assert_eq!(Tracked::<0>::dropped(), 1);
    }

    #[test]
    fn capacity() {
        assert_eq!(Pool::<String>::new(1).capacity(), 1);
        assert_eq!(Pool::<String>::new(3).capacity(), 4);
        assert_eq!(Pool::<String>::new(64).capacity(), 64);
        let pool = Pool::<String>::new(2);
        for round in 0..3 {
            let taken: Vec<_> = (0..5).map(|_| pool.take()).collect();
            assert_eq!(pool.idle(), 0);
            drop(taken);
            assert_eq!(pool.idle(), 2, "round {round}");
        }
    }

    #[test]
    #[should_panic(expected = "Pool::new: capacity must be at least 1")]
    fn zero_capacity_panics() {
        let _ = Pool::<String>::new(0);
    }

    /// Every value made is dropped exactly once: given back to a full pool,
    /// kept with `into_inner`, or idle when the pool drops.
    #[test]
    fn drops() {
        {
            let pool = Pool::<Tracked<1>>::new(2);
            let taken: Vec<_> = (0..5).map(|_| pool.take()).collect();
            assert_eq!(Tracked::<1>::made(), 5);
            drop(taken);
            // Two kept, three dropped on a full pool.
            assert_eq!(Tracked::<1>::dropped(), 3);
            assert_eq!(Tracked::<1>::resets(), 5);
            let again: Vec<_> = (0..3).map(|_| pool.take()).collect();
            assert_eq!(Tracked::<1>::made(), 6);
            drop(Taken::into_inner(again.into_iter().next().unwrap()));
            // The other two went back when the Vec's iterator dropped.
            assert_eq!(Tracked::<1>::dropped(), 4);
            assert_eq!(pool.idle(), 2);
        }
        assert_eq!(Tracked::<1>::made(), 6);
        assert_eq!(Tracked::<1>::dropped(), 6);
    }

    /// One thread gives values back, another takes them: they cross.
    #[test]
    fn spsc() {
        let pool = Pool::<Vec<usize>>::new(8);
        thread::scope(|s| {
            s.spawn(|| {
                for i in 0..COUNT {
                    let mut v = Vec::with_capacity(4);
                    v.push(i);
                    pool.give_back(v);
                }
            });
            s.spawn(|| {
                for _ in 0..COUNT {
                    let v = pool.take();
                    assert!(v.is_empty());
                }
            });
        });
        assert!(pool.idle() <= 8);
    }

    /// Many threads take and give back at once: a value is never held by two
    /// threads, always comes back reset, and is dropped exactly once.
    #[test]
    fn mpsc() {
        const THREADS: usize = 4;
        {
            let pool = Pool::<Tracked<2>>::new(4);
            thread::scope(|s| {
                for t in 0..THREADS {
                    let pool = &pool;
                    s.spawn(move || {
                        for i in 0..COUNT {
                            let mut a = pool.take();
                            a.hold();
                            a.data.push(t);
                            if i % 3 == 0 {
                                let b = pool.take();
                                b.hold();
                            }
                        }
                    });
                }
            });
            assert_eq!(
                Tracked::<2>::resets(),
                THREADS * COUNT + THREADS * COUNT.div_ceil(3)
            );
            assert!(pool.idle() <= 4);
        }
        assert_eq!(Tracked::<2>::made(), Tracked::<2>::dropped());
    }

    /// The per-type pools: one per type, shared by every thread.
    #[test]
    fn per_type_pools() {
        struct Marker;
        let a: &'static Pool<Vec<Marker>> = Vec::<Marker>::pool();
        assert!(core::ptr::eq(a, Vec::<Marker>::pool()));
        let from_thread = thread::spawn(|| Vec::<Marker>::pool() as *const _ as usize)
            .join()
            .unwrap();
        assert_eq!(from_thread, a as *const _ as usize);
        assert_eq!(a.capacity(), 64);

        let mut s = String::pool().take();
        s.push_str("frame");
        drop(s);
        assert!(String::pool().take().is_empty());

        let mut map = HashMap::<u8, u8>::pool().take();
        map.insert(1, 1);
        drop(map);
        assert!(HashMap::<u8, u8>::pool().take().is_empty());

        let mut deque = VecDeque::<u8>::pool().take();
        deque.push_back(1);
        drop(deque);
        assert!(VecDeque::<u8>::pool().take().is_empty());

        // Distinct types, distinct pools.
        let b: &'static Pool<Vec<u8>> = Vec::<u8>::pool();
        assert_ne!(a as *const _ as usize, b as *const _ as usize);
    }

    /// Threads racing to a type nobody has used yet all get one pool: the
    /// registry makes it once.
    #[test]
    fn per_type_pools_race() {
        struct Fresh;
        let pools: Vec<usize> = thread::scope(|s| {
            let racers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (Vec::<Fresh>::pool() as *const Pool<Vec<Fresh>>).addr()))
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert!(pools.windows(2).all(|w| w[0] == w[1]), "{pools:?}");
        assert_eq!(
            pools[0],
            (Vec::<Fresh>::pool() as *const Pool<Vec<Fresh>>).addr()
        );
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Pool<Vec<u8>>>();
        check::<Pool<String>>();
    }
}
