//! Many fixed-length histories, each with its window maximum in O(1), in one
//! flat preallocated buffer.
//!
//! [`RingHistories`] is `count` independent [`RingHistory`](crate::RingHistory)s
//! of one `capacity`, addressed by index: what a per-node watch keeps for
//! every node of a frame graph. Where `count` separate histories are `2 ×
//! count` allocations scattered over the heap (the samples and the window of
//! each), these live in one buffer of `count × capacity` slots and one array
//! of `count` small heads, so a pass that pushes one sample into each history
//! walks memory in order and follows no pointer per history.
//!
//! # Algorithm
//!
//! Not `RingHistory`'s monotonic deque, whose push pops a data-dependent
//! number of entries (a branch the processor mispredicts about once per
//! push on noisy samples such as frame times), but the streaming form of
//! van Herk and Gil-Werman's sliding maximum (M. van Herk, "A fast
//! algorithm for local minimum and maximum filters on rectangular and
//! octagonal kernels", 1992; J. Gil and M. Werman, 1993): the ring is
//! filled in passes, position 0 to `capacity - 1`. The window is then the
//! *newer part*, positions `0..next` written in this pass, whose maximum a
//! push keeps up with one comparison, and the *older part*, positions
//! `next..capacity` still holding the previous pass, whose maximum is a
//! suffix maximum recorded when that pass completed. A push is a store, a
//! comparison and a counter, with no loop; the push that completes a pass
//! also records the suffix maxima of the whole ring, `capacity` comparisons
//! once every `capacity` pushes. So a push is O(1) amortized (O(capacity)
//! at worst, that once per pass), [`History::max`] is O(1), and nothing
//! allocates. There is no unsafe code.
//!
//! # Layout and invariants
//!
//! History `h` owns the slots `h × capacity .. (h + 1) × capacity` of the
//! buffer, and `heads[h]`. Each slot holds two samples of its history, at
//! its *ring position* (the slot's offset in the history's region):
//!
//! - `sample`: the sample at that position. While the history holds `len <
//!   capacity` samples (its first pass), sample `i` (oldest first) is at
//!   position `i` and `next == len`; once full, the oldest is at `next` and
//!   the others follow it cyclically. The slots at positions `>= len` hold
//!   the fill value and are never read.
//! - `suffix`: while full, for every position `i` in `next..capacity` (the
//!   older part), the maximum of the samples at `i..capacity`. They were
//!   recorded when `next` last wrapped to 0, and those samples have not
//!   been written since. Never read at positions `< next`, nor while not
//!   full.
//!
//! The head holds `len <= capacity`, `next < capacity` (positions fit a
//! `u32`, checked by [`RingHistories::new`]), and `newer`, the maximum of
//! the samples at positions `0..next`, meaningful only while `next > 0`.
//! The window's maximum is then `newer` while not full; once full, the
//! greater of `suffix[next]` and `newer` (`suffix[0]` alone when `next ==
//! 0`). Among equal (or incomparable) samples the more recent one is
//! taken, as `RingHistory` does, so a NaN cannot hide a later maximum
//! forever.

use core::fmt;

/// `count` histories of the last `capacity` samples each, with their maxima,
/// in one flat buffer.
///
/// Exclusive: [`push`](Self::push) takes `&mut self`; reads take `&self`.
/// Each history reads exactly as a [`RingHistory`](crate::RingHistory) of
/// the same capacity would after the same pushes and clears (the same
/// samples, maximum and latest; with a total order, which the tests check
/// against one).
///
/// ```
/// use sluice_collections::RingHistories;
///
/// // Two nodes, the last three frame times of each.
/// let mut times = RingHistories::new(2, 3);
/// for (a, b) in [(16, 4), (33, 5), (16, 4), (17, 6)] {
///     times.push(0, a);
///     times.push(1, b);
/// }
/// assert_eq!(times.get(0).iter().copied().collect::<Vec<_>>(), [33, 16, 17]);
/// assert_eq!(times.get(0).max(), Some(33));
/// assert_eq!(times.get(1).max(), Some(6));
/// times.push(0, 16); // 33 falls off the end of history 0
/// assert_eq!(times.get(0).max(), Some(17));
/// ```
#[derive(Clone)]
pub struct RingHistories<T> {
    /// How many samples each history keeps; at least 1, at most `u32::MAX`.
    capacity: usize,
    /// One per history.
    heads: Box<[Head<T>]>,
    /// `heads.len() × capacity` slots, history `h`'s at `h × capacity..`.
    slots: Box<[Slot<T>]>,
}

/// Where one history stands (the module docs' invariants).
#[derive(Clone, Copy, Debug)]
struct Head<T> {
    /// How many samples it holds, at most the capacity.
    len: u32,
    /// The ring position the next push writes.
    next: u32,
    /// The maximum of the samples at positions `0..next`, while `next > 0`.
    newer: T,
}

/// A sample and the older part's suffix maximum at one ring position (the
/// module docs' layout).
#[derive(Clone, Copy, Debug)]
struct Slot<T> {
    sample: T,
    suffix: T,
}

/// The greater of `older` and `newer`; `newer` among equals and when the two
/// are incomparable (the module docs' tie rule).
#[inline]
fn greater<T: PartialOrd>(older: T, newer: T) -> T {
    if older > newer { older } else { newer }
}

impl<T: PartialOrd + Copy + Default> RingHistories<T> {
    /// `count` empty histories that each keep the last `capacity` samples,
    /// allocated here, once (unused slots hold `T::default()`).
    ///
    /// # Panics
    ///
    /// If `capacity` is zero (as [`RingHistory::new`](crate::RingHistory::new)),
    /// above `u32::MAX`, or `count × capacity` overflows `usize`.
    pub fn new(count: usize, capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "RingHistories::new: capacity must be at least 1"
        );
        assert!(
            u32::try_from(capacity).is_ok(),
            "RingHistories::new: capacity {capacity} is above u32::MAX"
        );
        let slots = count.checked_mul(capacity).unwrap_or_else(|| {
            panic!("RingHistories::new: {count} histories of {capacity} overflow usize")
        });
        let empty = Slot {
            sample: T::default(),
            suffix: T::default(),
        };
        let head = Head {
            len: 0,
            next: 0,
            newer: T::default(),
        };
        RingHistories {
            capacity,
            heads: vec![head; count].into_boxed_slice(),
            slots: vec![empty; slots].into_boxed_slice(),
        }
    }
}

impl<T: PartialOrd + Copy> RingHistories<T> {
    /// Appends `sample` to history `index`; if it is full, its oldest falls
    /// off. O(1) amortized (the push that completes a pass over the ring
    /// records its suffix maxima: O(capacity), once every `capacity`
    /// pushes); never allocates.
    ///
    /// # Panics
    ///
    /// If `index >= self.count()`, as slice indexing does.
    #[inline(always)]
    pub fn push(&mut self, index: usize, sample: T) {
        let capacity = self.capacity;
        let head = &mut self.heads[index];
        let region = &mut self.slots[index * capacity..][..capacity];
        let pos = head.next as usize;
        region[pos].sample = sample;
        head.newer = if pos == 0 {
            sample
        } else {
            greater(head.newer, sample)
        };
        let next = pos + 1;
        if next < capacity {
            head.next = next as u32;
            // While not full, `len == pos`; once full, `len == capacity`.
            head.len = head.len.max(next as u32);
        } else {
            Self::complete_pass(region);
            head.next = 0;
            head.len = capacity as u32;
        }
    }

    /// The pass over `region` is complete: every position holds a sample of
    /// the window, and each records the maximum from it to the end.
    #[cold]
    #[inline(never)]
    fn complete_pass(region: &mut [Slot<T>]) {
        if let Some((last, older)) = region.split_last_mut() {
            let mut max = last.sample;
            last.suffix = max;
            for slot in older.iter_mut().rev() {
                max = greater(slot.sample, max);
                slot.suffix = max;
            }
        }
    }

    /// History `index`, to read.
    ///
    /// # Panics
    ///
    /// If `index >= self.count()`, as slice indexing does.
    #[inline]
    pub fn get(&self, index: usize) -> History<'_, T> {
        History {
            head: self.heads[index],
            slots: &self.slots[index * self.capacity..][..self.capacity],
        }
    }
}

impl<T> RingHistories<T> {
    /// How many histories there are.
    pub fn count(&self) -> usize {
        self.heads.len()
    }

    /// How many samples each history keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets every sample of history `index`; keeps the allocation.
    ///
    /// # Panics
    ///
    /// If `index >= self.count()`, as slice indexing does.
    pub fn clear(&mut self, index: usize) {
        let head = &mut self.heads[index];
        // `newer` is meaningless while `next == 0`: left as it is.
        (head.len, head.next) = (0, 0);
    }

    /// Forgets every sample of every history; keeps the allocation.
    pub fn clear_all(&mut self) {
        for head in self.heads.iter_mut() {
            (head.len, head.next) = (0, 0);
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for RingHistories<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingHistories")
            .field("count", &self.count())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

/// One history of a [`RingHistories`], borrowed to read: the same reads as
/// a [`RingHistory`](crate::RingHistory).
#[derive(Clone, Copy)]
pub struct History<'a, T> {
    head: Head<T>,
    /// The history's region of the buffer.
    slots: &'a [Slot<T>],
}

impl<'a, T: Copy> History<'a, T> {
    /// The greatest sample in the window (the most recent among equals), or
    /// `None` if nothing was pushed. O(1).
    #[inline]
    pub fn max(&self) -> Option<T>
    where
        T: PartialOrd,
    {
        let Head { len, next, newer } = self.head;
        if len as usize == self.slots.len() {
            // Full: the older part's suffix maximum, and the newer part's.
            let older = self.slots[next as usize].suffix;
            Some(if next == 0 {
                older
            } else {
                greater(older, newer)
            })
        } else {
            (len > 0).then_some(newer)
        }
    }

    /// The most recent sample, or `None` if nothing was pushed.
    pub fn latest(&self) -> Option<T> {
        (self.head.len > 0).then(|| {
            let newest = self.head.next.checked_sub(1);
            let newest = newest.unwrap_or(self.slots.len() as u32 - 1);
            self.slots[newest as usize].sample
        })
    }

    /// The samples, oldest to newest.
    pub fn iter(&self) -> Iter<'a, T> {
        let held = &self.slots[..self.head.len as usize];
        let (newer, older) = held.split_at(self.head.next as usize);
        // Not full: `next == len`, so `older` is empty and `newer` is all.
        // Full: the oldest is at `next`.
        Iter {
            older: older.iter(),
            newer: newer.iter(),
        }
    }
}

impl<T> History<'_, T> {
    /// How many samples each history keeps.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many samples it holds now: the pushes since it was made or
    /// cleared, up to the capacity.
    #[inline]
    pub fn len(&self) -> usize {
        self.head.len as usize
    }

    /// Whether nothing was pushed since it was made or cleared.
    pub fn is_empty(&self) -> bool {
        self.head.len == 0
    }

    /// Whether it holds `capacity` samples, so the next push drops one.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.head.len as usize == self.slots.len()
    }
}

impl<T: fmt::Debug + Copy + PartialOrd> fmt::Debug for History<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("History")
            .field("capacity", &self.capacity())
            .field("samples", &self.iter())
            .field("max", &self.max())
            .finish()
    }
}

impl<'a, T: Copy> IntoIterator for History<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// The samples of one history of a [`RingHistories`], oldest to newest.
pub struct Iter<'a, T> {
    /// The samples from the oldest to the end of the ring.
    older: core::slice::Iter<'a, Slot<T>>,
    /// The samples from the start of the ring to the newest.
    newer: core::slice::Iter<'a, Slot<T>>,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        let slot = self.older.next().or_else(|| self.newer.next())?;
        Some(&slot.sample)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.older.len() + self.newer.len();
        (len, Some(len))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let slot = self.newer.next_back().or_else(|| self.older.next_back())?;
        Some(&slot.sample)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<T> core::iter::FusedIterator for Iter<'_, T> {}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            older: self.older.clone(),
            newer: self.newer.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::RingHistory;
    use proptest::prelude::*;

    /// Every history of `histories` reads exactly as its model does.
    fn assert_same(histories: &RingHistories<u16>, models: &[RingHistory<u16>]) {
        assert_eq!(histories.count(), models.len());
        for (index, model) in models.iter().enumerate() {
            let history = histories.get(index);
            let samples: Vec<u16> = history.iter().copied().collect();
            assert_eq!(
                samples,
                model.iter().copied().collect::<Vec<_>>(),
                "{index}"
            );
            let reversed: Vec<u16> = history.iter().rev().copied().collect();
            assert_eq!(reversed, model.iter().rev().copied().collect::<Vec<_>>());
            assert_eq!(history.iter().len(), model.len());
            assert_eq!(history.max(), model.max(), "history {index}");
            assert_eq!(history.latest(), model.latest(), "history {index}");
            assert_eq!(history.len(), model.len());
            assert_eq!(history.is_empty(), model.is_empty());
            assert_eq!(history.is_full(), model.is_full());
            assert_eq!(history.capacity(), model.capacity());
        }
    }

    #[test]
    fn smoke() {
        let mut histories = RingHistories::new(3, 4);
        for (i, sample) in [3, 1, 4, 1, 5, 9, 2, 6].into_iter().enumerate() {
            histories.push(0, sample);
            histories.push(2, 10 * i as u32);
        }
        let first = histories.get(0);
        assert_eq!(first.iter().copied().collect::<Vec<_>>(), [5, 9, 2, 6]);
        assert_eq!(
            first.iter().rev().copied().collect::<Vec<_>>(),
            [6, 2, 9, 5]
        );
        assert_eq!(
            (first.max(), first.latest(), first.len()),
            (Some(9), Some(6), 4)
        );
        assert!(histories.get(1).is_empty(), "untouched");
        assert_eq!(histories.get(1).max(), None);
        assert_eq!(histories.get(2).max(), Some(70));
        assert_eq!(
            format!("{:?}", histories.get(0)),
            "History { capacity: 4, samples: [5, 9, 2, 6], max: Some(9) }"
        );
        assert_eq!(
            format!("{histories:?}"),
            "RingHistories { count: 3, capacity: 4, .. }"
        );
    }

    #[test]
    fn capacity_and_clear() {
        let mut histories = RingHistories::new(2, 3);
        assert_eq!((histories.count(), histories.capacity()), (2, 3));
        for (i, sample) in [7u8, 8, 9].into_iter().enumerate() {
            histories.push(1, sample);
            assert_eq!(histories.get(1).len(), i + 1);
        }
        assert!(histories.get(1).is_full());
        assert!(!histories.get(0).is_full());
        histories.push(1, 1);
        assert_eq!(histories.get(1).len(), 3);
        assert_eq!(
            histories.get(1).iter().copied().collect::<Vec<_>>(),
            [8, 9, 1]
        );
        histories.push(0, 4);
        histories.clear(1);
        assert!(histories.get(1).is_empty());
        assert_eq!(histories.get(1).max(), None);
        assert_eq!(histories.get(0).max(), Some(4), "the other is kept");
        histories.push(1, 2);
        assert_eq!(histories.get(1).iter().copied().collect::<Vec<_>>(), [2]);
        histories.clear_all();
        assert!((0..2).all(|i| histories.get(i).is_empty()));
    }

    #[test]
    fn no_histories() {
        let histories = RingHistories::<u64>::new(0, 8);
        assert_eq!(histories.count(), 0);
    }

    #[test]
    #[should_panic(expected = "RingHistories::new: capacity must be at least 1")]
    fn zero_capacity_panics() {
        let _ = RingHistories::<u8>::new(4, 0);
    }

    #[test]
    #[should_panic(expected = "overflow usize")]
    fn an_overflowing_size_panics() {
        let _ = RingHistories::<u8>::new(usize::MAX / 2, 4);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn pushing_past_the_count_panics() {
        RingHistories::<u8>::new(2, 2).push(2, 0);
    }

    #[test]
    fn floats_and_nan() {
        let mut histories = RingHistories::new(1, 3);
        for sample in [16.6_f32, f32::NAN] {
            histories.push(0, sample);
        }
        assert!(histories.get(0).max().is_some());
        for sample in [8.0, 9.0, 1.0] {
            histories.push(0, sample);
        }
        assert_eq!(histories.get(0).max(), Some(9.0), "the NaN has fallen off");
    }

    /// A descending run is the deque's worst case (every sample stays until
    /// it falls off the end), through many wraps of both rings.
    #[test]
    fn wraparound_descending_matches_ring_history() {
        let pushes = if cfg!(miri) { 40 } else { 1_000 };
        let mut histories = RingHistories::new(2, 5);
        let mut models = [RingHistory::new(5), RingHistory::new(5)];
        for i in (0..pushes).rev() {
            let samples = [i as u16, (i % 7) as u16];
            for (index, (model, sample)) in models.iter_mut().zip(samples).enumerate() {
                histories.push(index, sample);
                model.push(sample);
            }
            assert_same(&histories, &models);
        }
    }

    /// One operation on the histories and on their models.
    #[derive(Debug, Clone)]
    enum Op {
        Push(usize, u16),
        Clear(usize),
    }

    fn op(count: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            // Small values, so that ties are common.
            12 => (0..count, 0u16..8).prop_map(|(index, sample)| Op::Push(index, sample)),
            1 => (0..count).prop_map(Op::Clear),
        ]
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config())]

        /// After every push or clear, each history reads exactly as an
        /// independent `RingHistory` given the same operations.
        #[test]
        fn matches_independent_ring_histories(
            (count, capacity, ops) in (1usize..6, 1usize..10).prop_flat_map(|(count, capacity)| {
                let ops = proptest::collection::vec(op(count), 0..if cfg!(miri) { 24 } else { 160 });
                (Just(count), Just(capacity), ops)
            }),
        ) {
            let mut histories = RingHistories::new(count, capacity);
            let mut models: Vec<RingHistory<u16>> =
                (0..count).map(|_| RingHistory::new(capacity)).collect();
            for op in ops {
                match op {
                    Op::Push(index, sample) => {
                        histories.push(index, sample);
                        models[index].push(sample);
                    }
                    Op::Clear(index) => {
                        histories.clear(index);
                        models[index].clear();
                    }
                }
                assert_same(&histories, &models);
                for head in histories.heads.iter() {
                    prop_assert!((head.len as usize) <= capacity);
                    prop_assert!((head.next as usize) < capacity);
                    prop_assert!(head.len == capacity as u32 || head.next == head.len);
                }
            }
        }
    }
}
