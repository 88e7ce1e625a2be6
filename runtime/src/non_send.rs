//! Values that are not `Send` or `Sync` (windows, GPU surfaces, audio
//! devices: reference 003's main thread), held by a world that is.
//!
//! A [`NonSendCell`] keeps its value together with the thread that made it
//! and hands the value out only on that thread: every way to the value
//! checks, and so does its `Drop`, which leaks the value rather than drop it
//! on another thread. That is what lets the cell be `Send + Sync` and sit
//! in an ordinary service slot (`Box<dyn Any + Send + Sync>`), so lanes,
//! versions and the plan treat it like any service; the type is private,
//! so no code outside the crate can downcast a slot to it and go around
//! the checks.

use std::mem::ManuallyDrop;
use std::thread::{self, ThreadId};

thread_local! {
    /// This thread's id (unique for the life of the process, unlike the
    /// address of a thread-local, which a later thread may reuse).
    static CURRENT: ThreadId = thread::current().id();
}

/// The id of the calling thread; `None` while its thread-locals are being
/// torn down (then it owns nothing).
pub(crate) fn current_thread() -> Option<ThreadId> {
    CURRENT.try_with(|id| *id).ok()
}

/// A value reachable only on the thread that made the cell.
pub(crate) struct NonSendCell<T> {
    owner: ThreadId,
    value: ManuallyDrop<T>,
}

// SAFETY:
// - Moving the cell to another thread moves no access to `T` with it: `get`,
//   `get_mut` and `Drop` reach `value` only on `owner`, and nothing else
//   does (the fields are private, the type is crate-private). A cell
//   dropped elsewhere leaks its value, which is always sound.
unsafe impl<T> Send for NonSendCell<T> {}
// SAFETY:
// - `&NonSendCell<T>` on another thread reaches nothing: `get` returns
//   `None` there. All `&T` it hands out live on `owner`, where sharing a
//   `!Sync` value between references is sound (they never meet another
//   thread unless `T: Sync`, the compiler's own rule for `&T`).
unsafe impl<T> Sync for NonSendCell<T> {}

impl<T> NonSendCell<T> {
    /// A cell owned by the calling thread.
    pub(crate) fn new(value: T) -> Option<Self> {
        Some(Self {
            owner: current_thread()?,
            value: ManuallyDrop::new(value),
        })
    }

    fn on_owner(&self) -> bool {
        current_thread() == Some(self.owner)
    }

    /// The value, on its own thread; `None` on any other.
    pub(crate) fn get(&self) -> Option<&T> {
        self.on_owner().then(|| &*self.value)
    }

    /// The value, mutably, on its own thread; `None` on any other.
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        if self.on_owner() {
            Some(&mut *self.value)
        } else {
            None
        }
    }
}

impl<T> Drop for NonSendCell<T> {
    /// Drops the value on its own thread; on any other, leaks it (and says
    /// so): dropping a `!Send` value there could break what it relies on.
    fn drop(&mut self) {
        if self.on_owner() {
            // SAFETY:
            // - `value` is dropped once, here, and never used after.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        } else {
            tracing::warn!(
                service = std::any::type_name::<T>(),
                "a non-Send service was dropped away from its thread and is leaked"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn reachable_and_dropped_only_on_its_thread() {
        let counter = Rc::new(());
        let cell = NonSendCell::new(Rc::clone(&counter)).unwrap();
        assert_eq!(Rc::strong_count(cell.get().unwrap()), 2);
        let cell = std::sync::Mutex::new(Some(cell));
        thread::scope(|scope| {
            scope.spawn(|| {
                let mut cell = cell.lock().unwrap();
                let inner = cell.as_mut().unwrap();
                assert!(inner.get().is_none());
                assert!(inner.get_mut().is_none());
            });
        });
        drop(cell);
        assert_eq!(Rc::strong_count(&counter), 1, "dropped on its own thread");
    }

    #[test]
    fn dropped_elsewhere_it_leaks() {
        struct Loud(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Loud {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cell = NonSendCell::new(Loud(std::sync::Arc::clone(&dropped))).unwrap();
        thread::spawn(move || drop(cell)).join().unwrap();
        assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
    }
}
