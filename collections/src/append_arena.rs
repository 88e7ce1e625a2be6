//! A fixed-capacity buffer that many threads append to at once.
//!
//! # Algorithm
//!
//! A bump allocator over a single buffer: a push claims the slot at the tail
//! with one `fetch_add` and writes its value there, with no lock and no
//! retry loop (the scheme of crossbeam-queue's `ArrayQueue` tail without the
//! head, or of a lock-free "bump pointer" arena). Nothing reads a slot while
//! pushes may run: reading takes `&mut self` ([`AppendArena::drain`],
//! [`AppendArena::as_mut_slice`]), and whatever gave the reader exclusive
//! access (a thread join, a phase barrier) orders every write before it. So
//! the tail needs no ordering beyond the atomicity of its read-modify-write.
//!
//! A push past the capacity gives its value back in [`Full`]. Its
//! `fetch_add` has still moved the tail past the capacity; every reader clamps
//! the tail to the capacity, and a push first checks the tail with a plain
//! load, so the overshoot is bounded by the number of threads that pass the
//! check at once and the tail can never wrap around to a written slot.

use core::fmt;
use core::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

/// The error of [`AppendArena::push`] on a full arena: it holds the value
/// that did not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Full<T>(pub T);

impl<T> Full<T> {
    /// Returns the value that did not fit.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Full(..)")
    }
}

impl<T> fmt::Display for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the append arena is full")
    }
}

impl<T> std::error::Error for Full<T> {}

/// A buffer of fixed capacity that any number of threads append to through
/// `&self`, and that one thread drains through `&mut self`.
///
/// # Phase contract
///
/// * Overlapping (`&self`): [`push`](Self::push), [`len`](Self::len),
///   [`capacity`](Self::capacity).
/// * Alone (`&mut self`): [`drain`](Self::drain), [`reserve`](Self::reserve),
///   [`as_mut_slice`](Self::as_mut_slice), [`clear`](Self::clear).
///
/// # Examples
///
/// ```
/// use sluice_collections::AppendArena;
///
/// let mut arena = AppendArena::with_capacity(2);
/// std::thread::scope(|s| {
///     s.spawn(|| arena.push(1).unwrap());
///     s.spawn(|| arena.push(2).unwrap());
/// });
/// assert!(arena.push(3).is_err());
/// let mut items: Vec<_> = arena.drain().collect();
/// items.sort();
/// assert_eq!(items, [1, 2]);
/// assert_eq!(arena.len(), 0);
/// ```
pub struct AppendArena<T> {
    /// The number of slots claimed, possibly more than `slots.len()` by the
    /// pushes that found the arena full (each moved it by one and then gave
    /// its value back). Slots `0..min(tail, slots.len())` are claimed; once
    /// no push is running (anything holding `&mut self`), each of them holds
    /// an initialised value. Every claim is a `fetch_add`, so no two pushes
    /// get the same slot.
    tail: CachePadded<AtomicUsize>,
    /// The buffer. A slot is written once, by the push that claimed it, and
    /// read only under `&mut self`.
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY:
// - the arena owns its values, so sending it sends them: `T: Send`.
unsafe impl<T: Send> Send for AppendArena<T> {}
// SAFETY:
// - through `&self` a thread can only move a `T` in (`push`); no `&T` is ever
//   handed out through `&self`, so `T: Send` suffices;
// - concurrent pushes write distinct slots (see `tail`).
unsafe impl<T: Send> Sync for AppendArena<T> {}

impl<T> fmt::Debug for AppendArena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppendArena")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

/// Allocates `capacity` uninitialised slots.
fn alloc_slots<T>(capacity: usize) -> Box<[UnsafeCell<MaybeUninit<T>>]> {
    (0..capacity)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect()
}

impl<T> AppendArena<T> {
    /// Creates an empty arena that holds `capacity` values.
    ///
    /// # Panics
    ///
    /// Panics if `capacity` is zero.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(
            capacity != 0,
            "AppendArena::with_capacity: the capacity must be at least 1"
        );
        Self {
            tail: CachePadded::new(AtomicUsize::new(0)),
            slots: alloc_slots(capacity),
        }
    }

    /// Appends `value` and returns its slot index, or gives the value back
    /// in [`Full`] if every slot is taken.
    ///
    /// Lock-free and wait-free: one load and one `fetch_add`.
    pub fn push(&self, value: T) -> Result<usize, Full<T>> {
        let capacity = self.slots.len();
        // The early check bounds the tail's overshoot (see the module docs).
        if self.tail.load(Ordering::Relaxed) >= capacity {
            return Err(Full(value));
        }
        // Relaxed: only the atomicity of the claim matters; readers hold
        // `&mut self`, which orders this push before them.
        let index = self.tail.fetch_add(1, Ordering::Relaxed);
        if index >= capacity {
            return Err(Full(value));
        }
        self.slots[index].with_mut(|slot| {
            // SAFETY:
            // - `index < capacity`, and the `fetch_add` gave `index` to this
            //   push alone, so no other thread writes this slot;
            // - nothing reads a slot through `&self`;
            // - the slot holds no value: indices are claimed once between two
            //   resets, and every reset (`drain`, `clear`) empties the slots.
            unsafe { (*slot).write(value) };
        });
        Ok(index)
    }

    /// The number of values pushed so far (pushes still running included).
    pub fn len(&self) -> usize {
        self.tail.load(Ordering::Relaxed).min(self.slots.len())
    }

    /// Whether no value has been pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of values the arena holds before a push fails.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The number of initialised slots; exact under `&mut self`.
    fn settled_len(&mut self) -> usize {
        let len = self.len();
        // Forget the overshoot of failed pushes.
        self.tail.store(len, Ordering::Relaxed);
        len
    }

    /// Makes room for at least `additional` more values, moving the ones
    /// already pushed into a larger buffer if needed.
    ///
    /// # Panics
    ///
    /// Panics if the new capacity overflows `usize`.
    pub fn reserve(&mut self, additional: usize) {
        let len = self.settled_len();
        let needed = len
            .checked_add(additional)
            .expect("AppendArena::reserve: capacity overflow");
        if needed <= self.slots.len() {
            return;
        }
        let new_capacity = needed.max(self.slots.len().saturating_mul(2));
        let new_slots = alloc_slots::<T>(new_capacity);
        for (old, new) in self.slots[..len].iter().zip(new_slots.iter()) {
            old.with(|src| {
                new.with_mut(|dst| {
                    // SAFETY:
                    // - `src` is one of the first `len` slots, initialised
                    //   (we hold `&mut self`, so every push has finished);
                    // - `dst` is a fresh slot of a buffer nobody else sees;
                    // - the old buffer is freed below without dropping its
                    //   slots (`MaybeUninit` never drops), so each value is
                    //   moved, not duplicated.
                    unsafe { (*dst).write((*src).assume_init_read()) };
                });
            });
        }
        self.slots = new_slots;
    }

    /// Views the values pushed so far, in slot order.
    ///
    /// Not available under `--cfg loom`, whose cells do not have the layout
    /// of their contents.
    #[cfg(not(loom))]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let len = self.settled_len();
        let data = self.slots.as_mut_ptr().cast::<T>();
        // SAFETY:
        // - `UnsafeCell<MaybeUninit<T>>` has the layout of `T` (both wrappers
        //   are `repr(transparent)`), so `data` points at `len` slots of `T`
        //   inside one allocation;
        // - the first `len` slots are initialised: every push that claimed
        //   one has finished, since we hold `&mut self`;
        // - the `&mut self` borrow makes the slice unique for its lifetime.
        unsafe { core::slice::from_raw_parts_mut(data, len) }
    }

    /// Drops every value and resets the count, keeping the buffer.
    pub fn clear(&mut self) {
        drop(self.drain());
    }

    /// Takes every value out, in slot order, and resets the count.
    ///
    /// The count is reset at once: if the returned iterator is leaked, the
    /// values it did not yield are leaked too, never dropped twice.
    pub fn drain(&mut self) -> Drain<'_, T> {
        let len = self.settled_len();
        self.tail.store(0, Ordering::Relaxed);
        Drain {
            slots: self.slots[..len].iter(),
        }
    }
}

impl<T> Drop for AppendArena<T> {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The iterator of [`AppendArena::drain`]: yields the values in slot order
/// and drops those it did not yield when it goes.
pub struct Drain<'a, T> {
    /// The slots still to yield; each holds an initialised value that the
    /// arena no longer counts.
    slots: core::slice::Iter<'a, UnsafeCell<MaybeUninit<T>>>,
}

impl<T> fmt::Debug for Drain<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("remaining", &self.slots.len())
            .finish()
    }
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let slot = self.slots.next()?;
        Some(slot.with(|value| {
            // SAFETY:
            // - the slot is one of the initialised ones counted when the
            //   drain began (`&mut` access to the arena, so every push has
            //   finished);
            // - the arena's count was reset and the iterator moved past the
            //   slot, so nothing reads or drops it again.
            unsafe { (*value).assume_init_read() }
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        for value in self.by_ref() {
            drop(value);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize as StdAtomicUsize;
    use std::thread;

    const COUNT: usize = if cfg!(miri) { 50 } else { 100_000 };

    #[test]
    fn smoke() {
        let mut arena = AppendArena::with_capacity(4);
        assert!(arena.is_empty());
        assert_eq!(arena.push("a"), Ok(0));
        assert_eq!(arena.push("b"), Ok(1));
        assert_eq!(arena.len(), 2);
        assert_eq!(arena.as_mut_slice(), ["a", "b"]);
        assert_eq!(arena.drain().collect::<Vec<_>>(), ["a", "b"]);
        assert!(arena.is_empty());
        assert_eq!(arena.push("c"), Ok(0));
        assert_eq!(arena.drain().collect::<Vec<_>>(), ["c"]);
    }

    #[test]
    fn capacity() {
        let mut arena = AppendArena::with_capacity(2);
        assert_eq!(arena.capacity(), 2);
        arena.push(1).unwrap();
        arena.push(2).unwrap();
        // Repeated failures do not move `len` past the capacity.
        for i in 3..10 {
            let err = arena.push(i).unwrap_err();
            assert_eq!(err.into_inner(), i);
            assert_eq!(arena.len(), 2);
        }
        let err = arena.push(99).unwrap_err();
        assert_eq!(err.to_string(), "the append arena is full");
        assert_eq!(format!("{err:?}"), "Full(..)");
        // Grow between phases: the values stay, in order.
        arena.reserve(3);
        assert!(arena.capacity() >= 5);
        assert_eq!(arena.len(), 2);
        for i in 3..6 {
            assert_eq!(arena.push(i), Ok(i - 1));
        }
        assert_eq!(arena.as_mut_slice(), [1, 2, 3, 4, 5]);
        // `reserve` with room to spare does not reallocate.
        let cap = arena.capacity();
        arena.reserve(0);
        assert_eq!(arena.capacity(), cap);
        assert_eq!(arena.drain().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert_eq!(arena.drain().count(), 0);
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn zero_capacity_panics() {
        let _ = AppendArena::<u8>::with_capacity(0);
    }

    #[test]
    fn spsc() {
        // One appender thread, then the owner drains.
        let mut arena = AppendArena::with_capacity(COUNT);
        thread::scope(|s| {
            s.spawn(|| {
                for i in 0..COUNT {
                    assert_eq!(arena.push(i), Ok(i));
                }
                assert!(arena.push(COUNT).is_err());
            });
        });
        assert!(arena.drain().eq(0..COUNT));
    }

    #[test]
    fn mpsc() {
        const THREADS: usize = 4;
        let mut arena = AppendArena::with_capacity(THREADS * COUNT / 2);
        // Twice as many pushes as slots: exactly half must fail.
        let accepted = StdAtomicUsize::new(0);
        thread::scope(|s| {
            for t in 0..THREADS {
                let (arena, accepted) = (&arena, &accepted);
                s.spawn(move || {
                    for i in 0..COUNT {
                        match arena.push((t, i)) {
                            Ok(_) => {
                                accepted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            Err(Full(back)) => assert_eq!(back, (t, i)),
                        }
                    }
                });
            }
        });
        assert_eq!(accepted.into_inner(), THREADS * COUNT / 2);
        assert_eq!(arena.len(), THREADS * COUNT / 2);
        let items: Vec<_> = arena.drain().collect();
        assert_eq!(items.len(), THREADS * COUNT / 2);
        // Each thread's values are in its own push order, with no duplicate.
        let mut last = [None; THREADS];
        for (t, i) in items {
            assert!(last[t] < Some(i));
            last[t] = Some(i);
        }
    }

    /// Counts its drops in a shared counter.
    #[derive(Debug)]
    struct Counted(Arc<StdAtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn drops() {
        let drops = Arc::new(StdAtomicUsize::new(0));
        let count = || drops.load(std::sync::atomic::Ordering::Relaxed);
        let mut arena = AppendArena::with_capacity(4);
        for _ in 0..5 {
            // The fifth comes back in `Full` and is dropped here.
            let _ = arena.push(Counted(drops.clone()));
        }
        assert_eq!(count(), 1);
        arena.reserve(4); // moves, drops nothing
        assert_eq!(count(), 1);
        // A partly consumed drain drops the rest.
        let mut drain = arena.drain();
        drop(drain.next());
        assert_eq!(count(), 2);
        drop(drain);
        assert_eq!(count(), 5);
        // A leaked drain leaks, never double-drops (a leaked value that owns
        // no allocation, so Miri's leak check stays quiet).
        static LEAKED_DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        struct Leaky;
        impl Drop for Leaky {
            fn drop(&mut self) {
                LEAKED_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let mut leaky = AppendArena::with_capacity(2);
        leaky.push(Leaky).unwrap();
        leaky.push(Leaky).unwrap();
        core::mem::forget(leaky.drain());
        assert!(leaky.is_empty());
        leaky.push(Leaky).unwrap();
        drop(leaky);
        assert_eq!(LEAKED_DROPS.load(std::sync::atomic::Ordering::Relaxed), 1);
        // Dropping the arena drops what is left.
        arena.push(Counted(drops.clone())).unwrap();
        arena.push(Counted(drops.clone())).unwrap();
        arena.clear();
        assert_eq!(count(), 7);
        arena.push(Counted(drops.clone())).unwrap();
        drop(arena);
        assert_eq!(count(), 8);
    }

    #[test]
    fn send_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<AppendArena<std::cell::Cell<u8>>>();
    }
}
