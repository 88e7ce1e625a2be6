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
//!
//! An [`ArenaAppender`] claims a run of slots with one `fetch_add` and fills
//! them without touching the tail, so two appending threads share the tail's
//! cache line once per run and write slots a run apart. A run it never fills
//! leaves holes, which `&mut self` must never read. The appender marks its
//! whole run as pending in a side table of flags before writing any of it,
//! and clears the flags of the slots it wrote only when it leaves the run
//! (used up, or dropped): so a leaked appender leaks the values of its last
//! run, never exposes an unwritten slot. The first `&mut self` operation
//! after appenders ran moves the values down over the pending slots and
//! clears their flags (`AppendArena::settled_len`), so every other
//! `&mut self` operation keeps seeing a dense prefix of values.

use core::fmt;
use core::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, AtomicUsize, Ordering, UnsafeCell};

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
/// * Overlapping (`&self`): [`push`](Self::push),
///   [`appender`](Self::appender) (and pushes through any number of
///   [`ArenaAppender`]s, one per thread), [`len`](Self::len),
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
    tail: CachePadded<Tail>,
    /// The buffer. A slot is written once, by the push that claimed it, and
    /// read only under `&mut self`.
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// One flag per slot: set while the slot belongs to an appender's run and
    /// is not known to be written. Written (through `&self`) only by the
    /// appender that claimed the slot; read and cleared under `&mut self`.
    /// Outside `settled_len`, a set flag below `min(tail, capacity)` marks
    /// the one kind of slot in that range that holds no value.
    pending: Box<[UnsafeCell<bool>]>,
}

/// The claim counter and what the appenders tell `&mut self` about it.
struct Tail {
    /// The number of slots claimed; see [`AppendArena`]'s `tail`.
    claimed: AtomicUsize,
    /// Set (by each appender's claim, before it marks its run) once an
    /// appender may have marked a pending slot since the last settling.
    runs: AtomicBool,
}

// SAFETY:
// - the arena owns its values, so sending it sends them: `T: Send`.
unsafe impl<T: Send> Send for AppendArena<T> {}
// SAFETY:
// - through `&self` a thread can only move a `T` in (`push`, appenders); no
//   `&T` is ever handed out through `&self`, so `T: Send` suffices;
// - concurrent pushes and appenders write distinct slots and pending flags
//   (see `tail`, `pending`).
unsafe impl<T: Send> Sync for AppendArena<T> {}

impl<T> fmt::Debug for AppendArena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppendArena")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

/// Allocates `capacity` cleared pending flags.
fn alloc_flags(capacity: usize) -> Box<[UnsafeCell<bool>]> {
    #[cfg(not(loom))]
    {
        let zeroed = Box::<[UnsafeCell<bool>]>::new_zeroed_slice(capacity);
        // SAFETY:
        // - an all-zero `UnsafeCell<bool>` is `false` (`UnsafeCell` has the
        //   representation of its contents).
        unsafe { zeroed.assume_init() }
    }
    #[cfg(loom)]
    (0..capacity).map(|_| UnsafeCell::new(false)).collect()
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
            tail: CachePadded::new(Tail {
                claimed: AtomicUsize::new(0),
                runs: AtomicBool::new(false),
            }),
            slots: alloc_slots(capacity),
            pending: alloc_flags(capacity),
        }
    }

    /// The run length of [`appender`](Self::appender): 64 slots, so one
    /// claim serves 64 pushes and two appenders' runs of small values lie
    /// several cache lines apart.
    pub const APPENDER_CHUNK: usize = 64;

    /// The longest run [`appender_with_chunk`](Self::appender_with_chunk)
    /// accepts (`2^16`). Bounding it bounds the tail's overshoot past the
    /// capacity (one run per thread that passes the fullness check at once).
    pub const MAX_APPENDER_CHUNK: usize = 1 << 16;

    /// A handle that appends in runs of
    /// [`APPENDER_CHUNK`](Self::APPENDER_CHUNK) slots: one atomic increment
    /// claims a whole run, which the handle then fills without touching the
    /// shared tail. Meant for one thread appending many values while other
    /// appenders and pushes run.
    ///
    /// See [`ArenaAppender`] for the order of its indices, the holes it
    /// leaves when dropped before filling its last run, and the capacity
    /// those holes cost.
    pub fn appender(&self) -> ArenaAppender<'_, T> {
        self.appender_with_chunk(Self::APPENDER_CHUNK)
    }

    /// Like [`appender`](Self::appender), with runs of `chunk` slots.
    ///
    /// # Panics
    ///
    /// Panics if `chunk` is zero or above
    /// [`MAX_APPENDER_CHUNK`](Self::MAX_APPENDER_CHUNK).
    pub fn appender_with_chunk(&self, chunk: usize) -> ArenaAppender<'_, T> {
        assert!(
            (1..=Self::MAX_APPENDER_CHUNK).contains(&chunk),
            "AppendArena::appender_with_chunk: the chunk must be in 1..=2^16"
        );
        ArenaAppender {
            arena: self,
            start: 0,
            next: 0,
            end: 0,
            chunk,
        }
    }

    /// Sets or clears the pending flags of `range`.
    ///
    /// # Safety
    ///
    /// - no other thread accesses these flags meanwhile: the caller holds
    ///   `&mut` access, or the slots are in a run the caller claimed.
    unsafe fn mark_pending(&self, range: core::ops::Range<usize>, pending: bool) {
        for flag in &self.pending[range] {
            flag.with_mut(|flag| {
                // SAFETY:
                // - no other thread accesses the flag (the caller's contract).
                unsafe { *flag = pending };
            });
        }
    }

    /// Appends `value` and returns its slot index, or gives the value back
    /// in [`Full`] if every slot is taken.
    ///
    /// Lock-free and wait-free: one load and one `fetch_add`.
    pub fn push(&self, value: T) -> Result<usize, Full<T>> {
        let capacity = self.slots.len();
        // The early check bounds the tail's overshoot (see the module docs).
        if self.tail.claimed.load(Ordering::Relaxed) >= capacity {
            return Err(Full(value));
        }
        // Relaxed: only the atomicity of the claim matters; readers hold
        // `&mut self`, which orders this push before them.
        let index = self.tail.claimed.fetch_add(1, Ordering::Relaxed);
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

    /// The number of slots claimed so far: values pushed, pushes still
    /// running, and the whole runs [`ArenaAppender`]s claimed, holes
    /// included. Without appenders, the number of values once every push has
    /// finished. Every `&mut self` operation but this one
    /// ([`as_mut_slice`](Self::as_mut_slice), [`drain`](Self::drain),
    /// [`reserve`](Self::reserve), [`clear`](Self::clear)) first squeezes the
    /// holes out, after which `len` is the number of values.
    pub fn len(&self) -> usize {
        self.tail
            .claimed
            .load(Ordering::Relaxed)
            .min(self.slots.len())
    }

    /// Whether no value has been pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of values the arena holds before a push fails.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Squeezes out the holes appenders left and forgets the overshoot of
    /// failed pushes; returns the number of values, which then fill slots
    /// `0..len` (and no pending flag is set).
    fn settled_len(&mut self) -> usize {
        let claimed = self.len();
        let mut len = claimed;
        // Relaxed: `&mut self` orders every claim before us.
        if self.tail.runs.load(Ordering::Relaxed) {
            self.tail.runs.store(false, Ordering::Relaxed);
            len = 0;
            for from in 0..claimed {
                let pending = self.pending[from].with_mut(|flag| {
                    // SAFETY:
                    // - `&mut self`: no other thread touches the flag.
                    unsafe { core::mem::replace(&mut *flag, false) }
                });
                if pending {
                    continue;
                }
                if from != len {
                    self.slots[from].with(|src| {
                        self.slots[len].with_mut(|dst| {
                            // SAFETY:
                            // - `src` is a claimed slot whose flag is clear,
                            //   so it holds a value (`&mut self`: every push
                            //   that claimed a slot has finished, and an
                            //   appender clears a flag only after writing);
                            // - `dst` (`len < from`) holds no value: it was
                            //   pending, or its value moved down earlier;
                            // - `src` now counts as empty (it lies at or past
                            //   the new length), so the value is moved, not
                            //   duplicated.
                            unsafe { (*dst).write((*src).assume_init_read()) };
                        });
                    });
                }
                len += 1;
            }
        }
        self.tail.claimed.store(len, Ordering::Relaxed);
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
        // Every flag is clear after `settled_len`; a fresh table of the new
        // size is the same.
        self.pending = alloc_flags(new_capacity);
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
        self.tail.claimed.store(0, Ordering::Relaxed);
        Drain {
            slots: self.slots[..len].iter(),
        }
    }
}

impl<T> Drop for AppendArena<T> {
    fn drop(&mut self) {
        // Values that need no drop are freed with the buffer: no need to
        // squeeze out holes or walk the slots.
        if core::mem::needs_drop::<T>() {
            self.clear();
        }
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

/// A handle of [`AppendArena::appender`]: appends in runs of slots claimed
/// with one atomic increment each.
///
/// It borrows the arena shared, so any number of appenders and plain
/// [`push`](AppendArena::push)es may run at once; it is `Send` but takes
/// `&mut self` to push, so each thread holds its own.
///
/// # Semantics
///
/// * Indices of one appender are ascending; across appenders (and plain
///   pushes) they interleave by runs.
/// * A push that finds the arena full gives its value back in [`Full`]. The
///   last run before the capacity may be short (cut at the capacity); a run
///   claimed at or past the capacity is given up at once.
/// * When an appender is dropped before filling its run, the unfilled rest
///   of the run stays unwritten: holes. Holes are never read or dropped.
///   They count in [`len`](AppendArena::len) and take capacity until the next
///   `&mut self` operation (`drain`, `as_mut_slice`, `reserve`, `clear`),
///   which moves the later values down over them, keeping their order: so an
///   index returned by a push is the value's position in slot order until
///   then, and only the values after a hole shift down. Since holes give no
///   capacity back during the phase, an arena that appenders fill to the
///   brim holds up to `chunk - 1` fewer values per appender than its
///   capacity: give it that slack.
/// * A leaked appender (`mem::forget`) leaks the values of its last run
///   (they are never dropped) and leaves them as holes.
///
/// # Examples
///
/// ```
/// use sluice_collections::AppendArena;
///
/// let mut arena = AppendArena::with_capacity(200 + 2 * 63);
/// std::thread::scope(|s| {
///     for t in 0..2 {
///         let arena = &arena;
///         s.spawn(move || {
///             let mut appender = arena.appender();
///             for i in 0..100 {
///                 appender.push(t * 1000 + i).unwrap();
///             }
///         });
///     }
/// });
/// // Each thread's last run was cut short: the holes are squeezed out.
/// assert_eq!(arena.as_mut_slice().len(), 200);
/// assert_eq!(arena.len(), 200);
/// ```
pub struct ArenaAppender<'a, T> {
    /// The arena.
    arena: &'a AppendArena<T>,
    /// The first slot of the current run whose pending flag is still set:
    /// slots `start..next` are written, `next..end` not.
    start: usize,
    /// The slot of the next push.
    next: usize,
    /// The end of the current run, at most the capacity.
    end: usize,
    /// The number of slots claimed at once.
    chunk: usize,
}

// SAFETY:
// - the appender holds `&AppendArena<T>` (sendable: the arena is `Sync` for
//   `T: Send`) and the exclusive right to write the slots and flags of its
//   run; moving it to another thread moves that right along with it.
unsafe impl<T: Send> Send for ArenaAppender<'_, T> {}

impl<T> fmt::Debug for ArenaAppender<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArenaAppender")
            .field("next", &self.next)
            .field("end", &self.end)
            .field("chunk", &self.chunk)
            .finish_non_exhaustive()
    }
}

impl<T> ArenaAppender<'_, T> {
    /// Appends `value` and returns its slot index, or gives the value back in
    /// [`Full`] if no slot is left to claim.
    ///
    /// Claims a new run (one load and one `fetch_add`) when the last one is
    /// used up; otherwise touches no shared counter.
    #[inline]
    pub fn push(&mut self, value: T) -> Result<usize, Full<T>> {
        if self.next == self.end && !self.claim() {
            return Err(Full(value));
        }
        let index = self.next;
        self.arena.slots[index].with_mut(|slot| {
            // SAFETY:
            // - `index` lies in the run this appender claimed with one
            //   `fetch_add`, below the capacity, and the appender moves past
            //   it now, so no other thread writes this slot;
            // - nothing reads a slot through `&self`, and `&mut self` readers
            //   skip it while its pending flag is set;
            // - the slot holds no value: slots are claimed once between two
            //   resets, and every reset (`drain`, `clear`, which this
            //   appender's borrow excludes) empties them.
            unsafe { (*slot).write(value) };
        });
        self.next = index + 1;
        Ok(index)
    }

    /// Clears the pending flags of the slots written in the current run.
    fn settle_run(&mut self) {
        // SAFETY:
        // - `start..next` lies in this appender's run (below the capacity),
        //   and only the claiming appender touches a run's flags through
        //   `&self`;
        // - its slots are written: a flag is cleared only after the write.
        unsafe { self.arena.mark_pending(self.start..self.next, false) };
        self.start = self.next;
    }

    /// Leaves the used-up run and claims the next one; `false` if the arena
    /// is full.
    #[cold]
    #[inline(never)]
    fn claim(&mut self) -> bool {
        self.settle_run();
        let arena = self.arena;
        let capacity = arena.slots.len();
        // The early check bounds the tail's overshoot (see the module docs).
        if arena.tail.claimed.load(Ordering::Relaxed) >= capacity {
            return false;
        }
        // Before the claim, so that `&mut self` knows to look for pending
        // flags once this appender's borrow ends, even if it leaks.
        // Relaxed: `&mut self` is ordered after us by whatever ended the
        // borrow. Load first: once set, the flag's line stays shared.
        if !arena.tail.runs.load(Ordering::Relaxed) {
            arena.tail.runs.store(true, Ordering::Relaxed);
        }
        // Relaxed: only the atomicity of the claim matters, as in `push`.
        let start = arena.tail.claimed.fetch_add(self.chunk, Ordering::Relaxed);
        if start >= capacity {
            return false;
        }
        let end = capacity.min(start.saturating_add(self.chunk));
        // SAFETY:
        // - the `fetch_add` gave `start..end` (below the capacity) to this
        //   appender alone, so no other thread touches its flags.
        unsafe { arena.mark_pending(start..end, true) };
        (self.start, self.next, self.end) = (start, start, end);
        true
    }
}

impl<T> Drop for ArenaAppender<'_, T> {
    fn drop(&mut self) {
        // The slots `next..end` stay pending: holes.
        self.settle_run();
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
    fn appender_smoke() {
        let mut arena = AppendArena::with_capacity(8);
        let mut a = arena.appender_with_chunk(3);
        assert_eq!(a.push(10), Ok(0));
        assert_eq!(arena.push(99), Ok(3)); // a plain push lands after the run
        assert_eq!(a.push(11), Ok(1));
        assert_eq!(a.push(12), Ok(2));
        assert_eq!(a.push(13), Ok(4)); // the next run, 4..7
        assert!(format!("{a:?}").contains("next: 5"));
        drop(a);
        // 5 and 6 are holes: they count until `&mut self` squeezes them out.
        assert_eq!(arena.len(), 7);
        assert_eq!(arena.as_mut_slice(), [10, 11, 12, 99, 13]);
        assert_eq!(arena.len(), 5);
        // The holes gave their capacity back.
        let mut a = arena.appender_with_chunk(2);
        assert_eq!(a.push(14), Ok(5));
        assert_eq!(a.push(15), Ok(6));
        // A partial last run: one slot left of the two claimed.
        assert_eq!(a.push(16), Ok(7));
        assert_eq!(a.push(17), Err(Full(17)));
        assert_eq!(a.push(18).unwrap_err().into_inner(), 18);
        drop(a);
        assert_eq!(arena.push(19), Err(Full(19)));
        assert_eq!(arena.len(), 8);
        assert!(arena.drain().eq([10, 11, 12, 99, 13, 14, 15, 16]));
        assert!(arena.is_empty());
        // An appender that never pushed claims nothing.
        drop(arena.appender());
        assert_eq!(arena.len(), 0);
        let mut a = arena.appender();
        for i in 0..8 {
            assert_eq!(a.push(i), Ok(i));
        }
        assert_eq!(a.push(8), Err(Full(8)));
    }

    #[test]
    #[should_panic(expected = "the chunk must be in")]
    fn zero_chunk_panics() {
        let _ = AppendArena::<u8>::with_capacity(1).appender_with_chunk(0);
    }

    #[test]
    fn appender_reserve_and_holes() {
        // Runs past the capacity, a run claimed entirely past it, holes in
        // the middle, then `reserve` moves the squeezed values.
        let mut arena = AppendArena::with_capacity(5);
        let mut a = arena.appender_with_chunk(4);
        let mut b = arena.appender_with_chunk(4);
        assert_eq!(a.push(1), Ok(0));
        assert_eq!(b.push(2), Ok(4)); // 4..5, cut at the capacity
        assert_eq!(b.push(3), Err(Full(3)));
        assert_eq!(a.push(4), Ok(1));
        drop((a, b));
        assert_eq!(arena.len(), 5);
        arena.reserve(2);
        assert_eq!(arena.len(), 3);
        assert_eq!(arena.as_mut_slice(), [1, 4, 2]);
        let mut a = arena.appender_with_chunk(1);
        assert_eq!(a.push(5), Ok(3));
        drop(a);
        assert!(arena.drain().eq([1, 4, 2, 5]));
    }

    #[test]
    fn appender_drops() {
        let drops = Arc::new(StdAtomicUsize::new(0));
        let count = || drops.load(std::sync::atomic::Ordering::Relaxed);
        let mut arena = AppendArena::with_capacity(30);
        let mut a = arena.appender_with_chunk(4);
        let mut b = arena.appender_with_chunk(5);
        for _ in 0..7 {
            a.push(Counted(drops.clone())).unwrap();
            b.push(Counted(drops.clone())).unwrap();
            arena.push(Counted(drops.clone())).unwrap();
        }
        // 7 + 1 + 7 + 3 + 7 = 25 claimed; the rest is too short for b's run.
        let mut refused = 0;
        for _ in 0..10 {
            if let Err(Full(back)) = b.push(Counted(drops.clone())) {
                drop(back);
                refused += 1;
            }
        }
        assert_eq!(count(), refused);
        drop((a, b));
        assert_eq!(arena.drain().count(), 21 + 10 - refused);
        assert_eq!(count(), 31);
        // Dropping the arena drops what appenders left, holes skipped.
        let mut a = arena.appender_with_chunk(8);
        for _ in 0..3 {
            a.push(Counted(drops.clone())).unwrap();
        }
        drop(a);
        drop(arena);
        assert_eq!(count(), 34);
        // A leaked appender leaks its last run, never drops or reads a hole
        // (a leaked value that owns no allocation keeps Miri's leak check
        // quiet).
        static LEAKED_DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        struct Leaky;
        impl Drop for Leaky {
            fn drop(&mut self) {
                LEAKED_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let mut leaky = AppendArena::with_capacity(8);
        let mut a = leaky.appender_with_chunk(3);
        for _ in 0..4 {
            a.push(Leaky).unwrap(); // run 0..3 settled, 3 pending
        }
        core::mem::forget(a);
        leaky.push(Leaky).unwrap();
        assert_eq!(leaky.len(), 7);
        assert_eq!(leaky.drain().count(), 4);
        assert_eq!(LEAKED_DROPS.load(std::sync::atomic::Ordering::Relaxed), 4);
    }

    #[test]
    fn appenders_and_pushers() {
        // Two appenders and a plain pusher over an arena with room for a
        // little over half of the values: every value lands once or comes
        // back, and each writer's values keep its order.
        const WRITERS: usize = 3;
        let mut arena = AppendArena::with_capacity(WRITERS * COUNT / 2);
        let accepted = StdAtomicUsize::new(0);
        thread::scope(|s| {
            for t in 0..WRITERS {
                let (arena, accepted) = (&arena, &accepted);
                s.spawn(move || {
                    let mut appender = arena.appender_with_chunk(t * 7 + 1);
                    let mut last = None;
                    for i in 0..COUNT {
                        let pushed = if t == 0 {
                            arena.push((t, i))
                        } else {
                            appender.push((t, i))
                        };
                        match pushed {
                            Ok(index) => {
                                assert!(last < Some(index));
                                last = Some(index);
                                accepted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            Err(Full(back)) => assert_eq!(back, (t, i)),
                        }
                    }
                });
            }
        });
        let accepted = accepted.into_inner();
        // Each appender strands at most `chunk - 1` slots.
        assert!(accepted + 7 + 14 >= WRITERS * COUNT / 2);
        let items: Vec<_> = arena.drain().collect();
        assert_eq!(items.len(), accepted);
        let mut last = [None; WRITERS];
        for (t, i) in items {
            assert!(last[t] < Some(i));
            last[t] = Some(i);
        }
    }

    #[test]
    fn send_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<AppendArena<std::cell::Cell<u8>>>();
        fn send<T: Send>() {}
        send::<ArenaAppender<'_, std::cell::Cell<u8>>>();
    }
}
