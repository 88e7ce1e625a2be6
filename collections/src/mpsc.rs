//! A bounded multi-producer, single-consumer queue.
//!
//! # Algorithm
//!
//! This is Dmitry Vyukov's bounded MPMC queue (1024cores, "Bounded MPMC
//! queue", <https://www.1024cores.net/home/lock-free-algorithms/queues/bounded-mpmc-queue>),
//! specialised for a single consumer:
//!
//! * Every cell carries a sequence number that says which position it is
//!   ready for and whether it holds a value. A producer claims a position by
//!   a compare-and-swap on the shared tail only after it has seen (Acquire)
//!   that the cell is free for exactly that position; it then writes the
//!   value and publishes it with a Release store of the sequence number.
//! * The consumer is the only reader, so its head is a plain `usize` owned by
//!   the [`Consumer`] handle: it needs no compare-and-swap. It reads a cell
//!   only after it has seen (Acquire) that the cell holds the value for its
//!   position, and it hands the cell back to the producers of the next lap
//!   with a Release store.
//! * When the consumer finds its head cell not yet published, it remembers
//!   that, and its next [`pop`](Consumer::pop) first spins a moment
//!   (`POLL_BACKOFF` spin-loop hints, touching no shared memory) before it
//!   reads the cell again. A consumer that is faster than the producers would
//!   otherwise poll the very cache line they are writing, pulling it back to
//!   its core for nearly every message; the pause lets a producer fill the
//!   line first. It is purely local: it changes no ordering.
//!
//! One change from the original: sequence numbers are *doubled*. For a
//! position `p`, a cell stamped `2p` is free for `p` and a cell stamped
//! `2p + 1` holds the value written at `p`. In Vyukov's scheme the stamps
//! "holds `p`" (`p + 1`) and "free for `p + 1`" coincide when the capacity is
//! one; doubling keeps them apart, so every power-of-two capacity, including
//! one, is exact.
//!
//! # Capacity
//!
//! The capacity must be a power of two (so a position maps to its cell with a
//! mask); [`bounded`] panics otherwise. It is never rounded up.

use core::cell::Cell as NotSync;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell, spin_loop};

/// How many spin-loop hints [`Consumer::pop`] issues, after a call that found
/// the queue empty, before it reads the head cell again. Measured (2 cores,
/// producers and consumer pinned apart, 1 and 3 producers, 1,000,000 `u64`,
/// capacity 1024): 128 cuts the empty polls from 260,000 to 430,000 a run to
/// 8,000 to 15,000 and the time by 2.5x; 8 to 64 help less, 256 and 512 no
/// more. Under loom one hint (a yield) suffices.
const POLL_BACKOFF: u32 = if cfg!(loom) { 1 } else { 128 };

/// The stamp of a cell that is free for the producer of position `pos`.
#[inline]
fn free_stamp(pos: usize) -> usize {
    pos.wrapping_mul(2)
}

/// The stamp of a cell that holds the value written at position `pos`.
#[inline]
fn full_stamp(pos: usize) -> usize {
    pos.wrapping_mul(2).wrapping_add(1)
}

/// One cell of the ring.
struct Slot<T> {
    /// The cell's stamp. It is `free_stamp(p)` while the cell waits for the
    /// producer of position `p`, and `full_stamp(p)` once that producer has
    /// written `value` and until the consumer has taken it. The store that
    /// sets `full_stamp` is Release (it publishes `value`); the store that
    /// sets the next lap's `free_stamp` is Release (it publishes that the
    /// consumer has finished reading `value`).
    stamp: AtomicUsize,
    /// Initialised exactly while `stamp` is `full_stamp(p)` for some `p`.
    /// Written only by the producer that claimed the position, read only by
    /// the consumer.
    value: UnsafeCell<MaybeUninit<T>>,
}

/// The state every handle shares; it is freed when the last handle goes.
struct Inner<T> {
    /// The next position a producer will claim. Only ever moves forward, by
    /// a successful compare-and-swap from `p` to `p + 1` made by a producer
    /// that saw the cell of `p` stamped `free_stamp(p)`.
    tail: CachePadded<AtomicUsize>,
    /// The consumer's head, copied here when the [`Consumer`] is dropped so
    /// that [`Inner`]'s destructor knows which positions still hold values.
    /// Meaningless while the consumer is alive (it keeps its own copy).
    head: AtomicUsize,
    /// `capacity - 1`; the capacity is a power of two.
    mask: usize,
    /// The ring, `capacity` cells. Cell `i` initially stamped
    /// `free_stamp(i)`.
    buffer: Box<[Slot<T>]>,
}

// SAFETY:
// - `Inner` moves values of `T` from producer threads to the consumer thread,
//   which needs `T: Send`.
// - No `&T` is ever shared between threads (the consumer takes the value
//   out), so `T: Sync` is not needed.
// - Every access to a `value` cell is ordered by the stamp protocol described
//   on `Slot`.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as for `Send` above; shared access only moves `T` between threads.
unsafe impl<T: Send> Sync for Inner<T> {}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // `&mut self`: every producer and the consumer are gone, and the
        // `Arc` that owned us synchronised with each of them, so relaxed
        // loads see their last stores.
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        let mut pos = head;
        while pos != tail {
            let slot = &self.buffer[pos & self.mask];
            if slot.stamp.load(Ordering::Relaxed) == full_stamp(pos) {
                slot.value.with_mut(|value| {
                    // SAFETY:
                    // - the stamp is `full_stamp(pos)`, so the producer of
                    //   `pos` initialised the value and the consumer, whose
                    //   head stopped at or before `pos`, never took it;
                    // - we have `&mut self`, so nothing else touches the cell;
                    // - each position in `head..tail` maps to a distinct cell
                    //   (there are at most `capacity` of them), so each value
                    //   is dropped once.
                    unsafe { (*value).assume_init_drop() }
                });
            }
            pos = pos.wrapping_add(1);
        }
    }
}

/// Creates a bounded queue that holds at most `capacity` values, and returns
/// its two ends.
///
/// The [`Producer`] can be cloned and shared by any number of threads; the
/// [`Consumer`] is unique.
///
/// # Panics
///
/// Panics if `capacity` is zero or not a power of two.
///
/// # Examples
///
/// ```
/// let (tx, mut rx) = sluice_collections::mpsc::bounded::<u32>(2);
/// assert_eq!(tx.push(1), Ok(()));
/// assert_eq!(tx.push(2), Ok(()));
/// assert_eq!(tx.push(3), Err(3)); // full
/// assert_eq!(rx.pop(), Some(1));
/// assert_eq!(rx.pop(), Some(2));
/// assert_eq!(rx.pop(), None); // empty
/// ```
pub fn bounded<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    assert!(
        capacity != 0,
        "mpsc::bounded: the capacity must be at least 1"
    );
    assert!(
        capacity.is_power_of_two(),
        "mpsc::bounded: the capacity must be a power of two, got {capacity}"
    );
    let buffer = (0..capacity)
        .map(|i| Slot {
            stamp: AtomicUsize::new(free_stamp(i)),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        })
        .collect();
    let inner = Arc::new(Inner {
        tail: CachePadded::new(AtomicUsize::new(0)),
        head: AtomicUsize::new(0),
        mask: capacity - 1,
        buffer,
    });
    (
        Producer {
            inner: inner.clone(),
        },
        Consumer {
            inner,
            head: 0,
            missed: false,
            _not_sync: PhantomData,
        },
    )
}

/// The sending end of a [`bounded`] queue: clone it for every thread that
/// pushes.
pub struct Producer<T> {
    /// Shared with every other handle of the same queue.
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Producer<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<T> Producer<T> {
    /// Appends `value`, or gives it back in `Err` if the queue is full.
    ///
    /// Lock-free: a push fails only when the cell it needs still holds a
    /// value the consumer has not taken.
    pub fn push(&self, value: T) -> Result<(), T> {
        let inner = &*self.inner;
        let mut pos = inner.tail.load(Ordering::Relaxed);
        let slot = loop {
            let slot = &inner.buffer[pos & inner.mask];
            // Acquire: if the cell is free for `pos`, the consumer's read of
            // the previous lap's value happens-before our write.
            let stamp = slot.stamp.load(Ordering::Acquire);
            let diff = stamp.wrapping_sub(free_stamp(pos)) as isize;
            if diff == 0 {
                // The cell is free for `pos`: try to claim it.
                match inner.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break slot,
                    Err(current) => pos = current,
                }
            } else if diff < 0 {
                // The cell still holds the value of the previous lap: full.
                return Err(value);
            } else {
                // Another producer claimed `pos` already; catch up.
                pos = inner.tail.load(Ordering::Relaxed);
            }
        };
        slot.value.with_mut(|cell| {
            // SAFETY:
            // - we moved the tail from `pos` to `pos + 1`, so no other
            //   producer claims `pos`, and no producer can claim this cell
            //   again before its stamp reaches `free_stamp(pos + capacity)`,
            //   which only the consumer sets after reading our value;
            // - the consumer does not read the cell until it sees
            //   `full_stamp(pos)`, which we store below;
            // - the cell holds no value (its stamp was `free_stamp(pos)`), so
            //   overwriting leaks nothing.
            unsafe { (*cell).write(value) };
        });
        // Release: publishes the value to the consumer's Acquire load.
        slot.stamp.store(full_stamp(pos), Ordering::Release);
        Ok(())
    }

    /// The number of values the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.inner.mask + 1
    }
}

/// The receiving end of a [`bounded`] queue. There is exactly one: it is
/// [`Send`] but neither [`Clone`] nor [`Sync`].
///
/// ```compile_fail
/// fn assert_sync<T: Sync>() {}
/// assert_sync::<sluice_collections::mpsc::Consumer<u32>>();
/// ```
///
/// ```compile_fail
/// let (_tx, rx) = sluice_collections::mpsc::bounded::<u32>(4);
/// let _other = rx.clone();
/// ```
pub struct Consumer<T> {
    /// Shared with every producer of the same queue.
    inner: Arc<Inner<T>>,
    /// The next position to take. Owned: only this handle reads or writes it,
    /// and only this handle reads values out of cells.
    head: usize,
    /// Whether the last `pop` found the head cell unpublished: the next one
    /// backs off before polling it.
    missed: bool,
    /// Makes the handle `!Sync`, so `pop` can never run on two threads at
    /// once through a shared reference.
    _not_sync: PhantomData<NotSync<()>>,
}

impl<T> fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("capacity", &self.capacity())
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl<T> Consumer<T> {
    /// Takes the oldest value, or returns `None` if the queue is empty.
    ///
    /// "Empty" means the value at the head position is not yet published: a
    /// producer that claimed it may still be writing it, in which case later
    /// values are not returned before it.
    ///
    /// After a call that returned `None`, the next call first spins briefly
    /// (128 spin-loop hints: about 2 µs on the 2-core Xeon it was measured
    /// on; the cost of a hint varies by CPU) before it looks at the queue, so
    /// that a consumer polling faster than the producers write does not keep
    /// stealing the cache line they are filling.
    pub fn pop(&mut self) -> Option<T> {
        if self.missed {
            for _ in 0..POLL_BACKOFF {
                spin_loop();
            }
        }
        let value = self.take_head();
        self.missed = value.is_none();
        value
    }

    /// Takes every value published now, oldest first, without the backoff
    /// of [`pop`](Self::pop): for a consumer that empties the queue now and
    /// then (once a frame) rather than polling it, which would otherwise
    /// spin before its first look every time (its last look found the
    /// queue empty). Stops at the first position not yet published, as
    /// `pop` does; a value published meanwhile may or may not be taken.
    ///
    /// ```
    /// let (tx, mut rx) = sluice_collections::mpsc::bounded(4);
    /// tx.push(1).unwrap();
    /// tx.push(2).unwrap();
    /// assert_eq!(rx.drain().collect::<Vec<_>>(), [1, 2]);
    /// assert_eq!(rx.pop(), None);
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T> {
        Drain { consumer: self }
    }

    /// The value at the head, if published: the queue's one consumer step.
    fn take_head(&mut self) -> Option<T> {
        let inner = &*self.inner;
        let pos = self.head;
        let slot = &inner.buffer[pos & inner.mask];
        // Acquire: pairs with the producer's Release store of the stamp, so
        // its write of the value happens-before our read.
        if slot.stamp.load(Ordering::Acquire) != full_stamp(pos) {
            return None;
        }
        let value = slot.value.with(|cell| {
            // SAFETY:
            // - the stamp is `full_stamp(pos)`, so the producer of `pos`
            //   initialised the value and that write happens-before this read
            //   (Release/Acquire on the stamp);
            // - no producer writes the cell until we store the next lap's
            //   free stamp below;
            // - we are the only consumer (`&mut self`, `!Sync`, `!Clone`), and
            //   we advance `head` past `pos`, so the value is read once.
            unsafe { (*cell).assume_init_read() }
        });
        // Release: our read happens-before the next lap's producer writes.
        slot.stamp.store(
            free_stamp(pos.wrapping_add(inner.mask + 1)),
            Ordering::Release,
        );
        self.head = pos.wrapping_add(1);
        Some(value)
    }

    /// The number of values the queue holds at most.
    pub fn capacity(&self) -> usize {
        self.inner.mask + 1
    }

    /// An approximation of the number of values waiting: positions claimed
    /// by producers and not yet taken, some of which may still be being
    /// written.
    pub fn len(&self) -> usize {
        let tail = self.inner.tail.load(Ordering::Relaxed);
        tail.wrapping_sub(self.head).min(self.capacity())
    }

    /// Whether [`len`](Self::len) is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        // Relaxed: the `Arc` drop that follows orders this store before the
        // destructor of `Inner`.
        self.inner.head.store(self.head, Ordering::Relaxed);
    }
}

/// The values [`Consumer::drain`] takes, oldest first.
#[derive(Debug)]
pub struct Drain<'a, T> {
    consumer: &'a mut Consumer<T>,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let value = self.consumer.take_head();
        // A drain is not a poll: the next `pop` does not back off for it.
        self.consumer.missed = false;
        value
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdAtomicUsize;
    use std::thread;

    const COUNT: usize = if cfg!(miri) { 50 } else { 100_000 };

    #[test]
    fn smoke() {
        let (tx, mut rx) = bounded(4);
        assert_eq!(rx.pop(), None);
        tx.push(7).unwrap();
        assert_eq!(rx.len(), 1);
        assert_eq!(rx.pop(), Some(7));
        assert_eq!(rx.pop(), None);
        assert!(rx.is_empty());
    }

    #[test]
    fn drain() {
        let (tx, mut rx) = bounded(4);
        assert_eq!(rx.drain().next(), None);
        for lap in 0..3 {
            for i in 0..3 {
                tx.push(lap * 10 + i).unwrap();
            }
            assert_eq!(
                rx.drain().collect::<Vec<_>>(),
                [lap * 10, lap * 10 + 1, lap * 10 + 2]
            );
            assert!(rx.is_empty());
        }
        // Neither a drain nor an empty one leaves a backoff behind.
        assert!(!rx.missed);
        assert_eq!(rx.pop(), None);
        assert!(rx.missed, "an empty pop backs off the next one");
        assert_eq!(rx.drain().count(), 0);
        assert!(!rx.missed);
        // Taken by a drain, stopped early: the rest stay in order.
        for i in 0..4 {
            tx.push(i).unwrap();
        }
        assert_eq!(rx.drain().next(), Some(0));
        assert_eq!(rx.pop(), Some(1));
        assert_eq!(rx.drain().collect::<Vec<_>>(), [2, 3]);
    }

    #[test]
    fn capacity() {
        for cap in [1, 2, 4, 64] {
            let (tx, mut rx) = bounded(cap);
            assert_eq!(tx.capacity(), cap);
            assert_eq!(rx.capacity(), cap);
            // Several laps, each filling to the brim and emptying.
            for lap in 0..3 {
                for i in 0..cap {
                    assert_eq!(tx.push(lap * 100 + i), Ok(()));
                }
                assert_eq!(tx.push(usize::MAX), Err(usize::MAX));
                assert_eq!(rx.len(), cap);
                for i in 0..cap {
                    assert_eq!(rx.pop(), Some(lap * 100 + i));
                }
                assert_eq!(rx.pop(), None);
            }
        }
    }

    #[test]
    #[should_panic(expected = "at least 1")]
    fn zero_capacity_panics() {
        let _ = bounded::<u8>(0);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn non_power_of_two_panics() {
        let _ = bounded::<u8>(3);
    }

    #[test]
    fn spsc() {
        let (tx, mut rx) = bounded(8);
        let producer = thread::spawn(move || {
            for i in 0..COUNT {
                let mut v = i;
                while let Err(back) = tx.push(v) {
                    v = back;
                    thread::yield_now();
                }
            }
        });
        for i in 0..COUNT {
            loop {
                if let Some(v) = rx.pop() {
                    assert_eq!(v, i);
                    break;
                }
                thread::yield_now();
            }
        }
        producer.join().unwrap();
        assert_eq!(rx.pop(), None);
    }

    #[test]
    fn mpsc() {
        const PRODUCERS: usize = 3;
        let (tx, mut rx) = bounded(16);
        let handles: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for i in 0..COUNT {
                        let mut v = (p, i);
                        while let Err(back) = tx.push(v) {
                            v = back;
                            thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        // Each producer's values arrive in its own order.
        let mut next = [0; PRODUCERS];
        for _ in 0..PRODUCERS * COUNT {
            let (p, i) = loop {
                if let Some(v) = rx.pop() {
                    break v;
                }
                thread::yield_now();
            };
            assert_eq!(next[p], i);
            next[p] += 1;
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(next, [COUNT; PRODUCERS]);
        assert_eq!(rx.pop(), None);
    }

    /// Counts its drops in a shared counter.
    #[derive(Debug)]
    struct Counted(std::sync::Arc<StdAtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn drops() {
        let runs = if cfg!(miri) { 3 } else { 100 };
        for run in 0..runs {
            let drops = std::sync::Arc::new(StdAtomicUsize::new(0));
            let (tx, mut rx) = bounded(8);
            let mut pushed = 0;
            // Wrap around a few times, then leave `run % 9` items behind.
            for _ in 0..20 {
                tx.push(Counted(drops.clone())).unwrap();
                pushed += 1;
                drop(rx.pop().unwrap());
            }
            let left = run % 9;
            for _ in 0..left {
                if tx.push(Counted(drops.clone())).is_ok() {
                    pushed += 1;
                }
            }
            // A value refused by a full queue comes back and is dropped here.
            if left == 8 {
                let refused = tx.push(Counted(drops.clone()));
                assert!(refused.is_err());
                pushed += 1;
            }
            assert_eq!(
                drops.load(std::sync::atomic::Ordering::Relaxed),
                20 + (left == 8) as usize
            );
            // Drop the handles in both orders.
            if run % 2 == 0 {
                drop(rx);
                drop(tx);
            } else {
                drop(tx);
                drop(rx);
            }
            assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), pushed);
        }
    }

    use proptest::prelude::*;

    /// One step of [`matches_a_bounded_deque`].
    #[derive(Debug, Clone)]
    enum Step {
        Push(u16),
        Pop,
        /// Takes this many values through a drain, then drops it (a drain
        /// stopped early leaves the rest in order).
        Drain(usize),
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config())]

        /// Any sequence of pushes, pops and drains, on one thread, gives
        /// what a `VecDeque` bounded to the capacity gives.
        #[test]
        fn matches_a_bounded_deque(
            capacity_log2 in 0u32..4,
            steps in proptest::collection::vec(
                prop_oneof![
                    any::<u16>().prop_map(Step::Push),
                    Just(Step::Pop),
                    (0usize..6).prop_map(Step::Drain),
                ],
                0..64,
            ),
        ) {
            let capacity = 1 << capacity_log2;
            let (tx, mut rx) = bounded(capacity);
            let mut model = std::collections::VecDeque::new();
            for step in steps {
                match step {
                    Step::Push(value) => {
                        let expected = if model.len() < capacity {
                            model.push_back(value);
                            Ok(())
                        } else {
                            Err(value)
                        };
                        prop_assert_eq!(tx.push(value), expected);
                    }
                    Step::Pop => prop_assert_eq!(rx.pop(), model.pop_front()),
                    Step::Drain(take) => {
                        let taken: Vec<u16> = rx.drain().take(take).collect();
                        let expected: Vec<u16> =
                            (0..take.min(model.len())).filter_map(|_| model.pop_front()).collect();
                        prop_assert_eq!(taken, expected);
                    }
                }
                prop_assert_eq!(rx.len(), model.len());
            }
        }
    }

    #[test]
    fn send_sync() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<Producer<Vec<u8>>>();
        sync::<Producer<Vec<u8>>>();
        send::<Consumer<Vec<u8>>>();
    }
}
