//! A fixed-length history of samples with its window maximum in O(1).
//!
//! [`RingHistory`] keeps the last `capacity` samples pushed (the oldest falls
//! off when a new one arrives) and, alongside, the maximum of exactly those
//! samples, which is what a frame-time overlay shows: the worst frame of the
//! last second.
//!
//! # Algorithm
//!
//! The classic sliding-window maximum (the "ascending minima" / monotonic
//! deque technique, e.g. Richard Harter, "Ascending minima algorithm", 2001,
//! here for maxima): beside the ring of samples sits a deque of ring positions
//! whose samples are *strictly decreasing* from front to back, oldest first.
//! A push drops the front if it is the slot about to be overwritten, drops
//! from the back every position whose sample is not greater than the new
//! one (it can never again be the maximum: the new sample is at least as large
//! and outlives it), then appends the new position. The front is the window's
//! maximum. Each position enters and leaves the deque once, so a push is O(1)
//! amortized, and [`max`](RingHistory::max) is O(1).
//!
//! Everything is preallocated by [`RingHistory::new`]; pushing never
//! allocates. There is no unsafe code.

use core::fmt;
use core::iter::FusedIterator;
use std::collections::VecDeque;

/// The last `capacity` samples and their maximum.
///
/// Exclusive: [`push`](Self::push) takes `&mut self`; reads take `&self`.
///
/// `T: PartialOrd` so that `f32`/`f64` frame times fit. With a total order
/// (no NaN) [`max`](Self::max) is the greatest sample in the window, the most
/// recent one among equals; if a sample is incomparable (a NaN),
/// [`max`](Self::max) still returns a sample of the window, but which one is
/// unspecified.
///
/// ```
/// use sluice_collections::RingHistory;
///
/// let mut frame_ms = RingHistory::new(3);
/// for ms in [16.0, 33.0, 16.0, 17.0] {
///     frame_ms.push(ms);
/// }
/// assert_eq!(frame_ms.iter().copied().collect::<Vec<_>>(), [33.0, 16.0, 17.0]);
/// assert_eq!(frame_ms.max(), Some(33.0));
/// frame_ms.push(16.5); // 33 falls off the end
/// assert_eq!(frame_ms.max(), Some(17.0));
/// ```
#[derive(Clone)]
pub struct RingHistory<T> {
    /// How many samples the history keeps; at least 1.
    capacity: usize,
    /// The samples, at most `capacity` of them, allocated once with room
    /// for that many. While not full, sample `i` (oldest first) is at `i`;
    /// once full, the oldest is at `next` and the rest follow it cyclically.
    samples: Vec<T>,
    /// The ring position the next push writes: `samples.len()` while not
    /// full, the oldest sample's position once full. Always `< capacity`.
    next: usize,
    /// Ring positions of the window, oldest first, whose samples are strictly
    /// decreasing (for comparable samples); every position in it holds a
    /// sample of the window, each at most once, so it never holds more than
    /// `capacity` entries (allocated up front). The front is the position of
    /// the maximum. Empty exactly when `samples` is.
    window: VecDeque<usize>,
}

impl<T: PartialOrd + Copy> RingHistory<T> {
    /// An empty history that keeps the last `capacity` samples.
    ///
    /// # Panics
    ///
    /// If `capacity` is zero: a history of nothing has no maximum, latest or
    /// window, and is always a mistake.
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "RingHistory::new: capacity must be at least 1"
        );
        RingHistory {
            capacity,
            samples: Vec::with_capacity(capacity),
            next: 0,
            window: VecDeque::with_capacity(capacity),
        }
    }

    /// Appends `sample`; if the history is full, the oldest falls off.
    /// O(1) amortized; never allocates.
    pub fn push(&mut self, sample: T) {
        let pos = self.next;
        // The slot about to be overwritten leaves the window. Only the oldest
        // sample's slot can be overwritten, and if it is still in the deque it
        // is the front.
        if self.window.front() == Some(&pos) {
            self.window.pop_front();
        }
        while let Some(&back) = self.window.back() {
            // Drop every sample that is not greater than the new one. `!(a >
            // b)` rather than `a <= b` also drops incomparable samples, so a
            // NaN cannot hide a later maximum forever.
            if self.samples[back] > sample {
                break;
            }
            self.window.pop_back();
        }
        if pos == self.samples.len() {
            self.samples.push(sample);
        } else {
            self.samples[pos] = sample;
        }
        self.window.push_back(pos);
        self.next = if pos + 1 == self.capacity { 0 } else { pos + 1 };
    }

    /// The greatest sample in the window (the most recent among equals), or
    /// `None` if nothing was pushed. O(1).
    pub fn max(&self) -> Option<T> {
        self.window.front().map(|&pos| self.samples[pos])
    }

    /// The most recent sample, or `None` if nothing was pushed.
    pub fn latest(&self) -> Option<T> {
        self.window.back().map(|&pos| self.samples[pos])
    }
}

impl<T> RingHistory<T> {
    /// How many samples the history keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many samples it holds now: the pushes so far, up to `capacity`.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether nothing was pushed since construction or the last `clear`.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Whether it holds `capacity` samples, so the next push drops one.
    pub fn is_full(&self) -> bool {
        self.samples.len() == self.capacity
    }

    /// Forgets every sample; keeps the allocation.
    pub fn clear(&mut self) {
        self.samples.clear();
        self.window.clear();
        self.next = 0;
    }

    /// The samples, oldest to newest.
    pub fn iter(&self) -> Iter<'_, T> {
        let (newer, older) = self.samples.split_at(self.next);
        // Not full: `next == len`, so `older` is empty and `newer` is all.
        // Full: the oldest is at `next`.
        Iter {
            older: older.iter(),
            newer: newer.iter(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for RingHistory<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingHistory")
            .field("capacity", &self.capacity())
            .field("samples", &self.iter())
            .field("max", &self.window.front().map(|&pos| &self.samples[pos]))
            .finish()
    }
}

impl<'a, T> IntoIterator for &'a RingHistory<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// The samples of a [`RingHistory`], oldest to newest.
pub struct Iter<'a, T> {
    /// The samples from the oldest to the end of the ring.
    older: core::slice::Iter<'a, T>,
    /// The samples from the start of the ring to the newest.
    newer: core::slice::Iter<'a, T>,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        self.older.next().or_else(|| self.newer.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.older.len() + self.newer.len();
        (len, Some(len))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.newer.next_back().or_else(|| self.older.next_back())
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            older: self.older.clone(),
            newer: self.newer.clone(),
        }
    }
}

impl<T> FusedIterator for Iter<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The naive model: the last `capacity` samples and their maximum by a
    /// scan, ties to the most recent.
    fn naive(pushed: &[u16], capacity: usize) -> (Vec<u16>, Option<u16>) {
        let window = &pushed[pushed.len().saturating_sub(capacity)..];
        (window.to_vec(), window.iter().copied().max())
    }

    #[test]
    fn smoke() {
        let mut history = RingHistory::new(4);
        for sample in [3, 1, 4, 1, 5, 9, 2, 6] {
            history.push(sample);
        }
        assert_eq!(history.iter().copied().collect::<Vec<_>>(), [5, 9, 2, 6]);
        assert_eq!(
            history.iter().rev().copied().collect::<Vec<_>>(),
            [6, 2, 9, 5]
        );
        assert_eq!(history.max(), Some(9));
        assert_eq!(history.latest(), Some(6));
        assert_eq!(history.len(), 4);
        assert_eq!(
            format!("{history:?}"),
            "RingHistory { capacity: 4, samples: [5, 9, 2, 6], max: Some(9) }"
        );
    }

    #[test]
    fn empty() {
        let history: RingHistory<f32> = RingHistory::new(3);
        assert!(history.is_empty());
        assert!(!history.is_full());
        assert_eq!(history.max(), None);
        assert_eq!(history.latest(), None);
        assert_eq!(history.iter().next(), None);
        assert_eq!(history.iter().len(), 0);
    }

    #[test]
    fn capacity() {
        let mut history = RingHistory::new(3);
        assert_eq!(history.capacity(), 3);
        for (i, sample) in [7u8, 8, 9].into_iter().enumerate() {
            history.push(sample);
            assert_eq!(history.len(), i + 1);
        }
        assert!(history.is_full());
        history.push(1);
        assert_eq!(history.len(), 3);
        assert_eq!(history.capacity(), 3);
        assert_eq!(history.iter().copied().collect::<Vec<_>>(), [8, 9, 1]);
        history.clear();
        assert!(history.is_empty());
        assert_eq!(history.max(), None);
        history.push(2);
        assert_eq!(history.iter().copied().collect::<Vec<_>>(), [2]);
    }

    #[test]
    #[should_panic(expected = "RingHistory::new: capacity must be at least 1")]
    fn zero_capacity_panics() {
        let _ = RingHistory::<u8>::new(0);
    }

    #[test]
    fn capacity_one() {
        let mut history = RingHistory::new(1);
        for sample in [5, 3, 8, 8, 1] {
            history.push(sample);
            assert_eq!(history.max(), Some(sample));
            assert_eq!(history.latest(), Some(sample));
            assert_eq!(history.iter().copied().collect::<Vec<_>>(), [sample]);
        }
    }

    /// A descending run is the deque's worst case: every sample stays in it
    /// until it falls off the end, and the maximum moves with the oldest.
    #[test]
    fn wraparound_descending() {
        let capacity = 5;
        let mut history = RingHistory::new(capacity);
        let pushed: Vec<u16> = (0..50).rev().collect();
        for (i, &sample) in pushed.iter().enumerate() {
            history.push(sample);
            assert_eq!(history.max(), naive(&pushed[..=i], capacity).1);
            assert!(history.window.len() <= capacity);
        }
    }

    #[test]
    fn floats_and_nan() {
        let mut history = RingHistory::new(3);
        history.push(16.6_f32);
        history.push(f32::NAN);
        // The maximum is some sample of the window.
        assert!(history.max().is_some());
        history.push(8.0);
        history.push(9.0);
        history.push(1.0);
        // The NaN has fallen off: the order is total again.
        assert_eq!(history.max(), Some(9.0));
    }

    /// Tens of thousands of pushes through a small window: still exact, and
    /// the deque never outgrows its allocation.
    #[test]
    fn long_run_never_allocates() {
        let pushes = if cfg!(miri) { 200 } else { 100_000 };
        let mut history = RingHistory::new(16);
        let (samples_cap, window_cap) = (history.samples.capacity(), history.window.capacity());
        let mut state = 0x2545_f491_u32;
        let mut pushed = Vec::new();
        for _ in 0..pushes {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let sample = (state % 1000) as u16;
            history.push(sample);
            pushed.push(sample);
        }
        let (window, max) = naive(&pushed, 16);
        assert_eq!(history.iter().copied().collect::<Vec<_>>(), window);
        assert_eq!(history.max(), max);
        assert_eq!(history.samples.capacity(), samples_cap);
        assert_eq!(history.window.capacity(), window_cap);
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config())]

        /// After every push, the window, its maximum, its latest and its
        /// length match the naive model (small values, so ties are common).
        #[test]
        fn matches_naive_window(
            capacity in 1usize..12,
            pushed in proptest::collection::vec(0u16..8, 0..64),
        ) {
            let mut history = RingHistory::new(capacity);
            for i in 0..pushed.len() {
                history.push(pushed[i]);
                let (window, max) = naive(&pushed[..=i], capacity);
                prop_assert_eq!(history.iter().copied().collect::<Vec<_>>(), window.clone());
                prop_assert_eq!(history.iter().rev().copied().collect::<Vec<_>>(),
                    window.iter().rev().copied().collect::<Vec<_>>());
                prop_assert_eq!(history.iter().len(), window.len());
                prop_assert_eq!(history.max(), max);
                prop_assert_eq!(history.latest(), Some(pushed[i]));
                prop_assert_eq!(history.len(), window.len());
            }
        }
    }
}
