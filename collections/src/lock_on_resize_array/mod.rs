//! A growable array that many threads append to and read at once.
//!
//! # Algorithm
//!
//! The storage is a list of segments of doubling size, in the manner of a
//! "two-level" concurrent vector (Dechev, Pirkelbauer and Stroustrup,
//! "Lock-free Dynamically Resizable Arrays", OPODIS 2006; also the layout of
//! the `boxcar` crate): with a base capacity `B` (a power of two), segment
//! `k` holds `B * 2^k` slots, and index `i` lives in segment
//! `log2(i + B) - log2(B)` at offset `i + B - B * 2^k`. A segment, once
//! allocated, is never moved or freed before the array is dropped, so a
//! reference into it stays valid while the array is borrowed.
//!
//! * A push claims its index with one `fetch_add` on the length. If the
//!   segment of that index is not allocated yet, the pusher takes a spin lock,
//!   checks again (another pusher may have allocated it meanwhile) and
//!   allocates it, publishing the pointer with a Release store. Only growth
//!   takes the lock.
//! * The pusher then writes the value and sets the slot's ready flag with a
//!   Release store. A reader returns a slot only after an Acquire load of its
//!   flag, so it never sees a value half written.
//! * An [`Appender`] claims a run of indices with one `fetch_add` and fills
//!   them one by one, each exactly like a push (write, then Release the ready
//!   flag), so two appending threads share the length's cache line once per
//!   run instead of once per value, and write slots a run apart. Indices of a
//!   run it never fills keep their ready flags cleared: they are holes, which
//!   every reader already skips.
//! * Removing values (`clear`, `drain`, `iter_mut`) takes `&mut self`, so it
//!   never overlaps a push or a reader.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Ordering, UnsafeCell, spin_loop, yield_now};

/// The number of segment pointers. Segments past `SEGMENTS - base_shift`
/// are never used (see [`LockOnResizeArray::locate`]).
const SEGMENTS: usize = usize::BITS as usize - 1;

/// The base capacity of [`LockOnResizeArray::new`].
const DEFAULT_BASE: usize = 32;

/// One slot of a segment.
struct Slot<T> {
    /// Whether `value` is initialised. Set (Release) by the push that claimed
    /// the slot once it has written `value`; cleared only under `&mut` access
    /// to the array, when the value is dropped or moved out.
    ready: AtomicBool,
    /// Written once by the push that claimed the slot, before `ready` is set;
    /// read through `&self` only after `ready` is seen set (Acquire).
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A growable array with lock-free appends and reads through `&self`.
///
/// # Phase contract
///
/// * Overlapping (`&self`): [`push`](Self::push),
///   [`appender`](Self::appender) (and pushes through any number of
///   [`Appender`]s, one per thread), [`get`](Self::get),
///   [`iter`](Self::iter), [`len`](Self::len),
///   [`capacity`](Self::capacity).
/// * Alone (`&mut self`): [`clear`](Self::clear),
///   [`iter_mut`](Self::iter_mut), [`drain`](Self::drain).
///
/// # Examples
///
/// ```
/// use sluice_collections::LockOnResizeArray;
///
/// let mut array = LockOnResizeArray::with_capacity(1);
/// std::thread::scope(|s| {
///     s.spawn(|| array.push("a"));
///     s.spawn(|| array.push("b"));
/// });
/// assert_eq!(array.len(), 2);
/// let mut items: Vec<_> = array.iter().copied().collect();
/// items.sort();
/// assert_eq!(items, ["a", "b"]);
/// for item in array.iter_mut() {
///     *item = "c";
/// }
/// assert_eq!(array.drain().collect::<Vec<_>>(), ["c", "c"]);
/// assert!(array.is_empty());
/// ```
pub struct LockOnResizeArray<T> {
    /// The number of indices claimed. Every index below it has been handed to
    /// exactly one push (one `fetch_add` each); its slot is ready once that
    /// push has finished, so under `&mut self` the slots below `len` are
    /// ready, except the holes an [`Appender`] left (the unfilled rest of its
    /// last run) and those a leaked [`Drain`] took.
    len: CachePadded<AtomicUsize>,
    /// `log2` of the base capacity: segment `k` holds `1 << (base_shift + k)`
    /// slots. Never changes.
    base_shift: u32,
    /// Segment `k`, or null while it is not allocated. Goes from null to an
    /// allocation of `1 << (base_shift + k)` slots once, under `lock`, with a
    /// Release store (the slots' ready flags start cleared); freed only in
    /// `Drop`. Readers load it with Acquire.
    segments: [AtomicPtr<Slot<T>>; SEGMENTS],
    /// The spin lock taken to allocate a segment; `true` while held.
    lock: CachePadded<AtomicBool>,
    /// The array owns values of `T`.
    _owns: PhantomData<T>,
}

// SAFETY:
// - the array owns its values, so sending it sends them: `T: Send`.
unsafe impl<T: Send> Send for LockOnResizeArray<T> {}
// SAFETY:
// - through `&self` a thread moves values in (`push`: `T: Send`) and borrows
//   values other threads wrote (`get`, `iter`: `T: Sync`);
// - concurrent pushes write distinct slots, and reads are ordered after the
//   writes by the ready flags (see `Slot`).
unsafe impl<T: Send + Sync> Sync for LockOnResizeArray<T> {}

impl<T> Default for LockOnResizeArray<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for LockOnResizeArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Releases the growth lock when dropped, even if the allocation panics.
struct LockGuard<'a>(&'a AtomicBool);

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // Release: the segment stores made under the lock happen-before the
        // next holder's accesses.
        self.0.store(false, Ordering::Release);
    }
}

/// Allocates a segment of `len` slots with every ready flag cleared.
fn alloc_segment<T>(len: usize) -> *mut Slot<T> {
    #[cfg(not(loom))]
    let segment: Box<[Slot<T>]> = {
        let zeroed = Box::<[Slot<T>]>::new_zeroed_slice(len);
        // SAFETY:
        // - an all-zero `AtomicBool` is `false` (it has the representation of
        //   `bool`);
        // - `UnsafeCell<MaybeUninit<T>>` accepts any bytes, zero included.
        unsafe { zeroed.assume_init() }
    };
    #[cfg(loom)]
    let segment: Box<[Slot<T>]> = (0..len)
        .map(|_| Slot {
            ready: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        })
        .collect();
    Box::into_raw(segment).cast::<Slot<T>>()
}

/// Aborts: the array cannot hold more values. Aborting rather than
/// panicking keeps the claimed length from ever wrapping around.
#[cold]
#[inline(never)]
fn capacity_overflow() -> ! {
    eprintln!("LockOnResizeArray: capacity overflow");
    std::process::abort()
}

impl<T> LockOnResizeArray<T> {
    /// The run length of [`appender`](Self::appender): 64 indices, so one
    /// claim serves 64 pushes and two appenders' runs of small values lie
    /// several cache lines apart.
    pub const APPENDER_CHUNK: usize = 64;

    /// The longest run [`appender_with_chunk`](Self::appender_with_chunk)
    /// accepts (`2^16`). Bounding it keeps the claimed length, which may run
    /// past the last segment by one run per appending thread before the
    /// process aborts, far from wrapping around.
    pub const MAX_APPENDER_CHUNK: usize = 1 << 16;

    /// Creates an empty array. Nothing is allocated until the first push;
    /// the first segment holds 32 values.
    pub fn new() -> Self {
        Self::with_base(DEFAULT_BASE)
    }

    /// Creates an empty array whose first segment, allocated now, holds at
    /// least `capacity` values (`capacity` rounded up to a power of two).
    /// Later segments double in size.
    ///
    /// # Panics
    ///
    /// Panics if `capacity` is zero or if its next power of two overflows
    /// `usize`.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(
            capacity != 0,
            "LockOnResizeArray::with_capacity: the capacity must be at least 1"
        );
        let base = capacity
            .checked_next_power_of_two()
            .filter(|base| base.trailing_zeros() < SEGMENTS as u32)
            .expect("LockOnResizeArray::with_capacity: capacity overflow");
        let array = Self::with_base(base);
        array.segment(0);
        array
    }

    /// An empty array with base capacity `base`, a power of two below
    /// `2^SEGMENTS`.
    fn with_base(base: usize) -> Self {
        debug_assert!(base.is_power_of_two());
        Self {
            len: CachePadded::new(AtomicUsize::new(0)),
            base_shift: base.trailing_zeros(),
            segments: core::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            lock: CachePadded::new(AtomicBool::new(false)),
            _owns: PhantomData,
        }
    }

    /// The number of slots of segment `k`.
    #[inline]
    fn segment_len(&self, k: usize) -> usize {
        1 << (self.base_shift as usize + k)
    }

    /// The segment and offset of `index`, or `None` if `index` is past the
    /// last segment. The segments hold `2^SEGMENTS - base` slots in all,
    /// fewer than `isize::MAX`.
    #[inline]
    fn locate(&self, index: usize) -> Option<(usize, usize)> {
        let base = 1usize << self.base_shift;
        let pos = index.checked_add(base)?;
        let k = (usize::BITS - 1 - pos.leading_zeros() - self.base_shift) as usize;
        if k >= SEGMENTS - self.base_shift as usize {
            return None;
        }
        Some((k, pos - (base << k)))
    }

    /// Segment `k`, allocating it if needed. `k` must be below
    /// `SEGMENTS - base_shift`.
    #[inline]
    fn segment(&self, k: usize) -> *mut Slot<T> {
        // Acquire: pairs with the Release store in `grow`, so the cleared
        // ready flags of a new segment are visible.
        let segment = self.segments[k].load(Ordering::Acquire);
        if segment.is_null() {
            self.grow(k)
        } else {
            segment
        }
    }

    /// Allocates segment `k` under the growth lock unless another thread did.
    #[cold]
    #[inline(never)]
    fn grow(&self, k: usize) -> *mut Slot<T> {
        let _guard = self.lock();
        // The double check: another pusher may have allocated it while we
        // waited for the lock.
        let segment = self.segments[k].load(Ordering::Acquire);
        if !segment.is_null() {
            return segment;
        }
        let segment = alloc_segment::<T>(self.segment_len(k));
        // Release: publishes the segment's initialised flags to readers that
        // load the pointer with Acquire.
        self.segments[k].store(segment, Ordering::Release);
        segment
    }

    /// Takes the growth lock.
    fn lock(&self) -> LockGuard<'_> {
        // Acquire: pairs with the Release in `LockGuard::drop`.
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Spin a little, then let the holder (which may have been
            // preempted) run.
            let mut spins = 0u32;
            while self.lock.load(Ordering::Relaxed) {
                if spins < 64 {
                    spin_loop();
                    spins += 1;
                } else {
                    yield_now();
                }
            }
        }
        LockGuard(&self.lock)
    }

    /// The slot of `index` if its segment is allocated.
    #[inline]
    fn slot(&self, index: usize) -> Option<&Slot<T>> {
        let (k, offset) = self.locate(index)?;
        // Acquire: see `segment`.
        let segment = self.segments[k].load(Ordering::Acquire);
        if segment.is_null() {
            return None;
        }
        // SAFETY:
        // - `segment` is non-null, so it is an allocation of
        //   `segment_len(k)` initialised slots (published by the Release
        //   store in `grow`, seen by our Acquire load);
        // - `offset < segment_len(k)` by `locate`;
        // - segments are freed only in `Drop`, so the slot outlives `&self`.
        Some(unsafe { &*segment.add(offset) })
    }

    /// Appends `value` and returns its index.
    ///
    /// Claims the index with one atomic increment; takes a spin lock only when
    /// the segment of that index is not allocated yet.
    ///
    /// # Aborts
    ///
    /// Aborts the process if the array already holds `isize::MAX / 2` or so
    /// values (far beyond what memory allows), like `Arc` on a reference
    /// count overflow.
    pub fn push(&self, value: T) -> usize {
        // Relaxed: the claim only needs atomicity; the value is published by
        // the ready flag below.
        let index = self.len.fetch_add(1, Ordering::Relaxed);
        let Some((k, offset)) = self.locate(index) else {
            capacity_overflow()
        };
        let segment = self.segment(k);
        // SAFETY:
        // - `segment` is an allocation of `segment_len(k)` initialised slots,
        //   and `offset < segment_len(k)` by `locate`.
        let slot = unsafe { &*segment.add(offset) };
        slot.value.with_mut(|cell| {
            // SAFETY:
            // - the `fetch_add` gave `index` to this push alone, so no other
            //   push writes the slot;
            // - no reader touches the value before `ready` is set below;
            // - the slot holds no value: an index is claimed once between two
            //   resets, and resets (`clear`, `drain`) empty every slot below
            //   the length.
            unsafe { (*cell).write(value) };
        });
        // Release: publishes the value to readers' Acquire loads.
        slot.ready.store(true, Ordering::Release);
        index
    }

    /// A handle that appends through this array in runs of
    /// [`APPENDER_CHUNK`](Self::APPENDER_CHUNK) indices: one atomic increment
    /// claims a whole run, which the handle then fills without touching the
    /// shared length. Meant for one thread appending many values while other
    /// appenders, pushes and readers run.
    ///
    /// See [`Appender`] for the order of its indices and for the holes it
    /// leaves when dropped before filling its last run.
    pub fn appender(&self) -> Appender<'_, T> {
        self.appender_with_chunk(Self::APPENDER_CHUNK)
    }

    /// Like [`appender`](Self::appender), with runs of `chunk` indices.
    ///
    /// # Panics
    ///
    /// Panics if `chunk` is zero or above [`MAX_APPENDER_CHUNK`](Self::MAX_APPENDER_CHUNK).
    pub fn appender_with_chunk(&self, chunk: usize) -> Appender<'_, T> {
        assert!(
            (1..=Self::MAX_APPENDER_CHUNK).contains(&chunk),
            "LockOnResizeArray::appender_with_chunk: the chunk must be in 1..=2^16"
        );
        Appender {
            array: self,
            next: 0,
            end: 0,
            slots: &[],
            chunk,
        }
    }

    /// The value at `index`, if a push has claimed that index and finished
    /// writing it.
    ///
    /// While a push is in flight its index may return `None` even though
    /// [`len`](Self::len) counts it.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        let slot = self.slot(index)?;
        // Acquire: pairs with the Release store in `push`, so the value's
        // write happens-before our read.
        if !slot.ready.load(Ordering::Acquire) {
            return None;
        }
        Some(slot.value.with(|cell| {
            // SAFETY:
            // - `ready` is set, so the value is initialised and its write
            //   happens-before this read;
            // - it is cleared, and the value moved or dropped, only under
            //   `&mut self`, so it stays valid and unaliased by `&mut` for the
            //   lifetime of `&self`.
            unsafe { (*cell).assume_init_ref() }
        }))
    }

    /// The number of indices claimed: pushes finished and in flight, and the
    /// whole runs [`Appender`]s claimed, holes included (see [`Appender`]).
    /// Without appenders, the number of values once every push has finished.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Whether no index has been claimed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of slots allocated.
    pub fn capacity(&self) -> usize {
        (0..SEGMENTS - self.base_shift as usize)
            .filter(|&k| !self.segments[k].load(Ordering::Relaxed).is_null())
            .map(|k| self.segment_len(k))
            .sum()
    }

    /// Iterates over the values whose pushes have finished, in index order,
    /// up to the length when the iterator was created.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            array: self,
            next: 0,
            end: self.len(),
        }
    }

    /// Iterates mutably over every value, in index order.
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        let end = self.len();
        IterMut {
            array: self,
            next: 0,
            end,
            _borrow: PhantomData,
        }
    }

    /// Takes every value out, in index order. The array is empty once the
    /// iterator is dropped; its segments stay allocated for reuse.
    ///
    /// If the iterator is leaked, the values it did not yield stay in the
    /// array (and are dropped with it); the taken ones leave holes.
    pub fn drain(&mut self) -> Drain<'_, T> {
        Drain {
            array: self,
            next: 0,
        }
    }

    /// Drops every value and resets the length; the segments stay allocated.
    pub fn clear(&mut self) {
        self.for_each_claimed_slot(|slot| {
            // Relaxed: `&mut self` orders every push before us.
            if slot.ready.load(Ordering::Relaxed) {
                slot.ready.store(false, Ordering::Relaxed);
                slot.value.with_mut(|cell| {
                    // SAFETY:
                    // - `ready` was set, so the value is initialised;
                    // - we just cleared `ready`, so nothing reads or drops it
                    //   again;
                    // - `&mut self`: no other thread touches the slot.
                    unsafe { (*cell).assume_init_drop() }
                });
            }
        });
        self.len.store(0, Ordering::Relaxed);
    }

    /// Runs `f` on every allocated slot below the length, segment by
    /// segment, in index order.
    fn for_each_claimed_slot(&mut self, mut f: impl FnMut(&Slot<T>)) {
        let len = self.len();
        let mut start = 0;
        for k in 0..SEGMENTS - self.base_shift as usize {
            if start >= len {
                break;
            }
            let segment_len = self.segment_len(k);
            let segment = self.segments[k].load(Ordering::Relaxed);
            if !segment.is_null() {
                // SAFETY:
                // - a non-null segment is an allocation of `segment_len`
                //   initialised slots, and we take at most that many;
                // - it stays allocated while `self` is borrowed.
                let slots =
                    unsafe { core::slice::from_raw_parts(segment, segment_len.min(len - start)) };
                slots.iter().for_each(&mut f);
            }
            // No overflow: segment starts stay below `2^SEGMENTS`.
            start += segment_len;
        }
    }

    /// Moves the value at `index` out if there is one, clearing its flag.
    ///
    /// # Safety
    ///
    /// - No other thread may access the array (the caller holds `&mut`
    ///   access or is the array's destructor).
    unsafe fn take(&self, index: usize) -> Option<T> {
        let slot = self.slot(index)?;
        // Relaxed: the caller's exclusive access orders every push before us.
        if !slot.ready.load(Ordering::Relaxed) {
            return None;
        }
        slot.ready.store(false, Ordering::Relaxed);
        Some(slot.value.with(|cell| {
            // SAFETY:
            // - `ready` was set, so the value is initialised;
            // - we just cleared `ready`, so nothing reads or drops the value
            //   again;
            // - no other thread accesses the slot (the caller's contract).
            unsafe { (*cell).assume_init_read() }
        }))
    }
}

impl<T> Drop for LockOnResizeArray<T> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() {
            self.clear();
        }
        for (k, segment) in self.segments.iter().enumerate() {
            let segment = segment.load(Ordering::Relaxed);
            if segment.is_null() {
                continue;
            }
            let len = 1 << (self.base_shift as usize + k);
            // SAFETY:
            // - a non-null segment came from `alloc_segment(len)` for this
            //   very `len`, i.e. from `Box::<[Slot<T>]>::into_raw`;
            // - it is freed once, here, and nothing uses it after `drop`;
            // - its values were dropped by `clear` above (or need no drop),
            //   and dropping a `Slot` does not drop its `MaybeUninit` value.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(segment, len)) });
        }
    }
}

impl<'a, T> IntoIterator for &'a LockOnResizeArray<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut LockOnResizeArray<T> {
    type Item = &'a mut T;
    type IntoIter = IterMut<'a, T>;

    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}

/// The iterator of [`LockOnResizeArray::iter`].
pub struct Iter<'a, T> {
    /// The array.
    array: &'a LockOnResizeArray<T>,
    /// The next index to look at.
    next: usize,
    /// The length when the iterator was created.
    end: usize,
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        while self.next < self.end {
            let index = self.next;
            self.next += 1;
            if let Some(value) = self.array.get(index) {
                return Some(value);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.end - self.next))
    }
}

/// The iterator of [`LockOnResizeArray::iter_mut`].
pub struct IterMut<'a, T> {
    /// The array, exclusively borrowed for `'a` (held shared so the yielded
    /// `&mut T`, which point into distinct slots, can outlive each step).
    array: &'a LockOnResizeArray<T>,
    /// The next index to look at.
    next: usize,
    /// The array's length.
    end: usize,
    /// The iterator stands for `&'a mut` access to the values.
    _borrow: PhantomData<&'a mut T>,
}

impl<T> fmt::Debug for IterMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = &'a mut T;

    fn next(&mut self) -> Option<&'a mut T> {
        while self.next < self.end {
            let index = self.next;
            self.next += 1;
            let Some(slot) = self.array.slot(index) else {
                continue;
            };
            // Relaxed: the `&mut` borrow orders every push before us.
            if !slot.ready.load(Ordering::Relaxed) {
                continue;
            }
            return Some(slot.value.with_mut(|cell| {
                // SAFETY:
                // - `ready` is set, so the value is initialised;
                // - the iterator was made from `&'a mut` access, so nothing
                //   else reaches the array for `'a`;
                // - each index is visited once, so the `&mut T` handed out
                //   point into distinct slots and never alias.
                unsafe { (*cell).assume_init_mut() }
            }));
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.end - self.next))
    }
}

/// The iterator of [`LockOnResizeArray::drain`].
pub struct Drain<'a, T> {
    /// The array, exclusively borrowed.
    array: &'a mut LockOnResizeArray<T>,
    /// The next index to take; the array's length is the end.
    next: usize,
}

impl<T> fmt::Debug for Drain<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("next", &self.next)
            .field("end", &self.array.len())
            .finish()
    }
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let end = self.array.len();
        while self.next < end {
            let index = self.next;
            self.next += 1;
            // SAFETY:
            // - we hold `&mut` access to the array.
            if let Some(value) = unsafe { self.array.take(index) } {
                return Some(value);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.array.len() - self.next))
    }
}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        for value in self.by_ref() {
            drop(value);
        }
        self.array.len.store(0, Ordering::Relaxed);
    }
}

/// A handle of [`LockOnResizeArray::appender`]: appends in runs of indices
/// claimed with one atomic increment each.
///
/// It borrows the array shared, so any number of appenders, plain
/// [`push`](LockOnResizeArray::push)es and readers may run at once; it is
/// `Send` but takes `&mut self` to push, so each thread holds its own.
///
/// # Semantics
///
/// * Indices of one appender are ascending; across appenders (and plain
///   pushes) they interleave by runs.
/// * A value is readable ([`get`](LockOnResizeArray::get),
///   [`iter`](LockOnResizeArray::iter)) once its `push` has returned, exactly
///   as with a plain push.
/// * When an appender is dropped (or leaked) before filling its run, the
///   unfilled rest of the run stays unwritten: holes. A hole reads as `None`
///   through `get`, and `iter`, `iter_mut`, `drain` and `clear` skip it. The
///   array's [`len`](LockOnResizeArray::len) counts claimed indices, so it
///   counts holes too (at most `chunk - 1` per appender) until the next
///   `clear` or `drain` resets it; count the values with `iter().count()`.
///
/// # Examples
///
/// ```
/// use sluice_collections::LockOnResizeArray;
///
/// let mut array = LockOnResizeArray::new();
/// std::thread::scope(|s| {
///     for t in 0..2 {
///         let array = &array;
///         s.spawn(move || {
///             let mut appender = array.appender();
///             for i in 0..100 {
///                 appender.push(t * 1000 + i);
///             }
///         });
///     }
/// });
/// // Each thread's last run was cut short: `len` counts the holes.
/// assert!(array.len() >= 200);
/// assert_eq!(array.iter().count(), 200);
/// let mut items: Vec<_> = array.drain().collect();
/// items.sort();
/// assert_eq!(items[..2], [0, 1]);
/// assert!(array.is_empty());
/// ```
pub struct Appender<'a, T> {
    /// The array.
    array: &'a LockOnResizeArray<T>,
    /// The index of the next push, which owns the slot `slots[0]` if
    /// `slots` is not empty.
    next: usize,
    /// The end of the run claimed last: indices `next..end` are this
    /// appender's and unwritten.
    end: usize,
    /// The slots of indices `next..` up to the end of the run or of the
    /// segment of `next`, whichever comes first; empty when a new run or
    /// segment must be looked up.
    slots: &'a [Slot<T>],
    /// The number of indices claimed at once.
    chunk: usize,
}

// SAFETY:
// - the appender holds `&LockOnResizeArray<T>` (sendable when the array is
//   `Sync`, i.e. `T: Send + Sync`) and references to slots it alone writes
//   (`next..end`, claimed by its `fetch_add`); moving it to another thread
//   moves that exclusive right to write along with it.
unsafe impl<T: Send + Sync> Send for Appender<'_, T> {}

impl<T> fmt::Debug for Appender<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Appender")
            .field("next", &self.next)
            .field("end", &self.end)
            .field("chunk", &self.chunk)
            .finish_non_exhaustive()
    }
}

impl<T> Appender<'_, T> {
    /// Appends `value` and returns its index.
    ///
    /// Claims a new run of indices (one atomic increment) when the last one
    /// is used up, and looks up a segment (allocating it under the growth
    /// lock if needed) when the run enters a new one; otherwise touches no
    /// shared counter.
    ///
    /// # Aborts
    ///
    /// Like [`LockOnResizeArray::push`], aborts the process if the array
    /// cannot hold the index.
    #[inline]
    pub fn push(&mut self, value: T) -> usize {
        if self.slots.is_empty() {
            self.refill();
        }
        let (slot, rest) = self
            .slots
            .split_first()
            .expect("refill leaves a slot to write");
        self.slots = rest;
        let index = self.next;
        self.next += 1;
        slot.value.with_mut(|cell| {
            // SAFETY:
            // - `index` lies in the run this appender claimed with one
            //   `fetch_add`, and the appender moves past it now, so no other
            //   push ever writes the slot;
            // - no reader touches the value before `ready` is set below;
            // - the slot holds no value: an index is claimed once between two
            //   resets, resets take `&mut` access to the array (which this
            //   appender borrows), and they empty every slot below the length.
            unsafe { (*cell).write(value) };
        });
        // Release: publishes the value to readers' Acquire loads.
        slot.ready.store(true, Ordering::Release);
        index
    }

    /// Points `slots` at the slots from `next` on, claiming a new run first
    /// if the current one is used up.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        let array = self.array;
        if self.next == self.end {
            // Relaxed: the claim only needs atomicity; each value is
            // published by its ready flag.
            let start = array.len.fetch_add(self.chunk, Ordering::Relaxed);
            let Some(end) = start.checked_add(self.chunk) else {
                capacity_overflow()
            };
            self.next = start;
            self.end = end;
        }
        let Some((k, offset)) = array.locate(self.next) else {
            capacity_overflow()
        };
        let segment = array.segment(k);
        let len = (array.segment_len(k) - offset).min(self.end - self.next);
        // SAFETY:
        // - `segment` is an allocation of `segment_len(k)` initialised slots
        //   (see `segment`), and `offset + len <= segment_len(k)`;
        // - segments are freed only when the array is dropped, so the slots
        //   outlive the `'a` borrow of the array;
        // - the slots are only reached through shared references; their
        //   values are written through the cells, by this appender alone
        //   (the indices `next..end` are its claim).
        self.slots = unsafe { core::slice::from_raw_parts(segment.add(offset), len) };
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
