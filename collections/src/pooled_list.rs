//! A list whose buffer comes from, and goes back to, its type's pool.
//!
//! Reference 003 ("The structures underneath") describes `PooledList`: a
//! list over `ArrayPool` whose backing array is rented once and reused
//! across clears, built by a collection expression (`[a, b]`). Here the pool
//! is the per-type [`Pool`] of `Vec<T>` ([`Pooled::pool`]): a
//! [`PooledList<T>`] takes an idle `Vec<T>` (with last user's capacity) when
//! made, and gives it back, cleared, when dropped. A scratch list made every
//! frame therefore allocates only until its pool holds a buffer big enough.
//! It is built by [`pooled_list!`](crate::pooled_list) (`pooled_list![a, b]`)
//! or by `collect()`, and otherwise is a `Vec<T>` (it derefs to one).
//!
//! A buffer that never grew (capacity zero) is not given back, so a pool
//! only ever holds buffers worth reusing. Under `--cfg loom` there are no
//! per-type pools (see [`Pooled`]) and a `PooledList` is a plain `Vec`.

use core::fmt;
use core::ops::{Deref, DerefMut};

use crate::pool::Pool;
#[cfg(not(loom))]
use crate::pool::{Pooled, Taken};

/// A `Vec<T>` taken from the per-type pool of `Vec<T>` and given back when
/// dropped. Build one with [`pooled_list!`](crate::pooled_list),
/// [`collect`](Iterator::collect) or [`new`](Self::new).
///
/// ```
/// use sluice_collections::{PooledList, pooled_list};
///
/// let mut list: PooledList<u32> = pooled_list![1, 2];
/// list.push(3);
/// assert_eq!(list[..], [1, 2, 3]);
/// drop(list); // cleared, its buffer back in `Vec::<u32>::pool()`
/// let again: PooledList<u32> = (0..2).collect();
/// assert!(again.capacity() >= 3, "the buffer of the first list, reused");
/// ```
pub struct PooledList<T: Send + 'static> {
    /// The items. Its buffer goes back to `pool` on drop.
    items: Vec<T>,
    /// Where the buffer came from (looked up once, at creation); `None`
    /// under loom, which has no per-type pools.
    pool: Option<&'static Pool<Vec<T>>>,
}

impl<T: Send + 'static> PooledList<T> {
    /// An empty list on an idle buffer of the pool (or a new, empty `Vec` if
    /// the pool has none).
    pub fn new() -> Self {
        #[cfg(not(loom))]
        {
            let pool = <Vec<T> as Pooled>::pool();
            PooledList {
                items: Taken::into_inner(pool.take()),
                pool: Some(pool),
            }
        }
        #[cfg(loom)]
        {
            PooledList {
                items: Vec::new(),
                pool: None,
            }
        }
    }

    /// An empty list with room for at least `capacity` items.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut list = Self::new();
        list.items.reserve(capacity);
        list
    }

    /// Keeps the buffer: it will not go back to the pool.
    pub fn into_vec(mut self) -> Vec<T> {
        // The empty `Vec` left behind has no buffer, so the drop gives
        // nothing back.
        core::mem::take(&mut self.items)
    }
}

impl<T: Send + 'static> Drop for PooledList<T> {
    fn drop(&mut self) {
        if self.items.capacity() == 0 {
            return;
        }
        let items = core::mem::take(&mut self.items);
        if let Some(pool) = self.pool {
            // Clears (drops the items) and keeps the buffer, or drops it if
            // the pool is full. A panicking item drop unwinds from here
            // with the buffer dropped; the pool is untouched.
            pool.give_back(items);
        }
    }
}

impl<T: Send + 'static> Default for PooledList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static> Deref for PooledList<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T: Send + 'static> DerefMut for PooledList<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
}

impl<T: Send + 'static> FromIterator<T> for PooledList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut list = Self::new();
        list.items.extend(iter);
        list
    }
}

impl<T: Send + 'static> Extend<T> for PooledList<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.items.extend(iter);
    }
}

impl<'a, T: Send + 'static> IntoIterator for &'a PooledList<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, T: Send + 'static> IntoIterator for &'a mut PooledList<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

impl<T: Send + 'static + fmt::Debug> fmt::Debug for PooledList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

impl<T: Send + 'static + PartialEq> PartialEq for PooledList<T> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl<T: Send + 'static + Eq> Eq for PooledList<T> {}

/// Builds a [`PooledList`] like `vec!`: `pooled_list![a, b, c]`, or
/// `pooled_list![value; n]` (`n` clones).
///
/// ```
/// use sluice_collections::{PooledList, pooled_list};
///
/// let names: PooledList<&str> = pooled_list!["a", "b"];
/// assert_eq!(names[..], ["a", "b"]);
/// let zeros: PooledList<u8> = pooled_list![0; 3];
/// assert_eq!(zeros[..], [0, 0, 0]);
/// let empty: PooledList<u8> = pooled_list![];
/// assert!(empty.is_empty());
/// ```
#[macro_export]
macro_rules! pooled_list {
    () => {
        $crate::PooledList::new()
    };
    ($value:expr; $count:expr) => {{
        let mut list = $crate::PooledList::new();
        list.resize($count, $value);
        list
    }};
    ($($item:expr),+ $(,)?) => {
        <$crate::PooledList<_> as ::core::iter::FromIterator<_>>::from_iter([$($item),+])
    };
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::{AtomicUsize, Ordering};
    use std::thread;

    /// Tests run in parallel and per-type pools are process-wide: each test
    /// lists a type of its own, so that it owns its pool.
    #[derive(Debug, Clone, PartialEq)]
    struct Item<const ID: usize>(u32);

    #[test]
    fn smoke() {
        let mut list: PooledList<Item<0>> = pooled_list![Item(1), Item(2)];
        list.push(Item(3));
        assert_eq!(list[..], [Item(1), Item(2), Item(3)]);
        assert_eq!(list.iter().map(|i| i.0).sum::<u32>(), 6);
        let buffer = list.as_ptr();
        let capacity = list.capacity();
        drop(list);
        let pool = Vec::<Item<0>>::pool();
        assert_eq!(pool.idle(), 1);
        // The next list is built on the same buffer, emptied.
        let again: PooledList<Item<0>> = PooledList::new();
        assert!(again.is_empty());
        assert_eq!((again.as_ptr(), again.capacity()), (buffer, capacity));
        assert_eq!(pool.idle(), 0);
    }

    #[test]
    fn macro_forms() {
        let empty: PooledList<Item<1>> = pooled_list![];
        assert!(empty.is_empty());
        assert_eq!(empty.capacity(), 0);
        let repeated: PooledList<Item<1>> = pooled_list![Item(7); 3];
        assert_eq!(repeated[..], [Item(7), Item(7), Item(7)]);
        let trailing: PooledList<Item<1>> = pooled_list![Item(1), Item(2),];
        assert_eq!(trailing.len(), 2);
        let collected: PooledList<Item<1>> = (0..4).map(Item).collect();
        assert_eq!(collected.last(), Some(&Item(3)));
        let mut extended: PooledList<Item<1>> = PooledList::with_capacity(2);
        assert!(extended.capacity() >= 2);
        extended.extend([Item(1)]);
        for item in &mut extended {
            item.0 += 1;
        }
        assert_eq!((&extended).into_iter().next(), Some(&Item(2)));
        assert_eq!(format!("{extended:?}"), "[Item(2)]");
        assert_eq!(extended, pooled_list![Item(2)]);
    }

    /// A list that never allocated gives nothing back; one kept with
    /// `into_vec` gives nothing back either.
    #[test]
    fn only_buffers_go_back() {
        let pool = Vec::<Item<2>>::pool();
        drop(PooledList::<Item<2>>::new());
        assert_eq!(pool.idle(), 0);
        let kept = pooled_list![Item::<2>(1)].into_vec();
        assert_eq!(kept, [Item(1)]);
        assert_eq!(pool.idle(), 0);
        drop(pooled_list![Item::<2>(1)]);
        assert_eq!(pool.idle(), 1);
    }

    /// A value that counts its drops.
    struct Counted<'a>(&'a AtomicUsize);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Every item is dropped exactly once, when the list drops (the pool
    /// keeps the buffer, not the items).
    #[test]
    fn drops() {
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        let list: PooledList<Counted<'static>> = (0..5).map(|_| Counted(&DROPPED)).collect();
        assert_eq!(DROPPED.load(Ordering::Relaxed), 0);
        drop(list);
        assert_eq!(DROPPED.load(Ordering::Relaxed), 5);
        let mut list: PooledList<Counted<'static>> = PooledList::new();
        assert!(list.capacity() >= 5);
        list.push(Counted(&DROPPED));
        list.truncate(0);
        assert_eq!(DROPPED.load(Ordering::Relaxed), 6);
        drop(list);
        assert_eq!(DROPPED.load(Ordering::Relaxed), 6);
    }

    /// An item whose drop panics: the panic reaches the dropper, the other
    /// items are still dropped, and the pool stays usable.
    #[test]
    fn panic_in_item_drop() {
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        struct Bomb(bool);
        impl Drop for Bomb {
            fn drop(&mut self) {
                DROPPED.fetch_add(1, Ordering::Relaxed);
                assert!(!self.0, "bomb");
            }
        }
        let list: PooledList<Bomb> = pooled_list![Bomb(false), Bomb(true), Bomb(false)];
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(list)));
        assert!(result.is_err());
        assert_eq!(DROPPED.load(Ordering::Relaxed), 3);
        let list: PooledList<Bomb> = pooled_list![Bomb(false)];
        drop(list);
        assert_eq!(DROPPED.load(Ordering::Relaxed), 4);
    }

    /// A list dropped on one thread lends its buffer to a list made on
    /// another: the pool is per type, not per thread.
    #[test]
    fn buffers_cross_threads() {
        let buffer = thread::spawn(|| {
            let list: PooledList<Item<3>> = pooled_list![Item(1), Item(2)];
            list.as_ptr().addr()
        })
        .join()
        .unwrap();
        let list: PooledList<Item<3>> = PooledList::new();
        assert_eq!(list.as_ptr().addr(), buffer);
        let lists = if cfg!(miri) { 20 } else { 10_000 };
        thread::scope(|s| {
            for t in 0..2 {
                s.spawn(move || {
                    for i in 0..lists {
                        let list: PooledList<Item<3>> = pooled_list![Item(t), Item(i)];
                        assert_eq!(list.len(), 2);
                    }
                });
            }
        });
        assert!(Vec::<Item<3>>::pool().idle() <= Vec::<Item<3>>::POOL_CAPACITY);
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<PooledList<String>>();
    }
}
