//! Atomics, cells, locks and threads that switch with loom: std's normally,
//! loom's under `--cfg loom`. The runtime takes its own from here, and so
//! should a game's services, so that [`sluice::model`](crate::model()) sees
//! their operations too:
//!
//! ```
//! use sluice::sync::atomic::{AtomicU32, Ordering};
//! use sluice::sync::{Arc, Mutex, UnsafeCell};
//!
//! struct Score {
//!     points: AtomicU32,
//!     names: Mutex<Vec<String>>,
//! }
//!
//! let score = Arc::new(Score { points: AtomicU32::new(0), names: Mutex::new(Vec::new()) });
//! score.points.fetch_add(3, Ordering::Relaxed);
//! score.names.lock().unwrap().push("ada".to_owned());
//! let cell = UnsafeCell::new(1_u32);
//! // SAFETY: nothing else accesses the cell.
//! cell.with_mut(|value| unsafe { *value += 1 });
//! assert_eq!(cell.into_inner(), 2);
//! ```
//!
//! Under loom these types exist only on the threads of a model: one used
//! outside [`sluice::model`](crate::model()), or on an OS thread a model's
//! code started with `std::thread::spawn`, panics with loom's "cannot
//! access Loom execution state from outside a Loom model" (start a model's
//! threads with [`thread::spawn`] from here). loom's `Arc` has no `Weak`,
//! and a value of them cannot be made in a `static` (make it inside the
//! model). Each operation of these types is a point where a model may
//! switch threads.
//! [`UnsafeCell`] has loom's closure API (`with`, `with_mut`) in both builds:
//! each access is checked against every other under loom.
//!
//! Inside sluice (not public): crossbeam-deque and crossbeam-utils' `Parker`
//! have no loom support; under loom they are replaced by the stand-ins in
//! `model`, which keep the guarantees the executor relies on and nothing
//! more (see there for what is assumed of the real ones).

// The shim offers a fixed set of primitives; not every build uses each one.
#![allow(unused_imports, dead_code)]

/// Atomic integers, pointers and fences: `std::sync::atomic`, or
/// `loom::sync::atomic` under `--cfg loom`.
pub mod atomic {
    #[cfg(loom)]
    pub use loom::sync::atomic::{
        AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicPtr, AtomicU8,
        AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    #[cfg(not(loom))]
    pub use std::sync::atomic::{
        AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicPtr, AtomicU8,
        AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
}

/// Threads: `std::thread`, or `loom::thread` under `--cfg loom` (the threads
/// a model explores; start your own model's threads with its `spawn`: an
/// OS thread started with `std::thread::spawn` inside a model runs outside
/// loom, unexplored, and panics on the first loom primitive it touches).
#[cfg(loom)]
pub use loom::thread;
#[cfg(not(loom))]
pub use std::thread;

#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};

pub(crate) use atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};

#[cfg(loom)]
pub(crate) use loom::thread::JoinHandle;
#[cfg(loom)]
pub(crate) use model::{Injector, Parker, Steal, Stealer, Unparker, Worker};

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};
#[cfg(not(loom))]
pub(crate) use crossbeam_utils::sync::{Parker, Unparker};
#[cfg(not(loom))]
pub(crate) use std::thread::{JoinHandle, yield_now};

/// std's `Arc` and `Weak`, in every build: the loose queues hand a `Weak`
/// to `async-task`'s schedule function, and loom's `Arc` has no `Weak`.
/// (What they guard, the queues, are loom's under loom.)
pub(crate) use std::sync::{Arc as StdArc, Weak as StdWeak};

/// A process-wide counter in a `static` (graph ids), std's in every build:
/// loom's atomics live inside one model execution, not in statics. It
/// orders nothing; it only hands out distinct numbers.
pub(crate) use std::sync::atomic::AtomicU64 as StaticAtomicU64;

/// std's atomics and `OnceLock` in every build, for statistics only: the
/// executor's idle clocks (`exec/idle.rs`), which order nothing and which
/// no decision of the executor reads, so a model need not explore them (as
/// loom's, each idle thread's stores would multiply every model's
/// interleavings for nothing).
pub(crate) mod stats {
    pub(crate) use std::sync::OnceLock;
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
}

/// std's primitives in every build, for what runs outside loom's view: the
/// watchdog of a model (an OS thread watching the model's OS thread).
pub(crate) mod os {
    pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
    pub(crate) use std::sync::{Arc, Condvar, Mutex};
}

/// `Cell` is std's in every build: it is `!Sync`, so no other thread can
/// see it and there is nothing for loom to check.
pub(crate) use std::cell::Cell;

/// Lock poisoning is std's type in both builds (loom's locks return it).
pub(crate) use std::sync::PoisonError;

/// Plain access to an atomic through an exclusive borrow (std's `get_mut`,
/// loom's `with_mut`): no atomic instruction, as in std.
pub(crate) trait ExclusiveU32 {
    /// The value.
    fn get_exclusive(&mut self) -> u32;
    /// Sets the value.
    fn set_exclusive(&mut self, value: u32);
}

impl ExclusiveU32 for AtomicU32 {
    #[inline]
    fn get_exclusive(&mut self) -> u32 {
        #[cfg(loom)]
        return self.with_mut(|value| *value);
        #[cfg(not(loom))]
        return *self.get_mut();
    }

    #[inline]
    fn set_exclusive(&mut self, value: u32) {
        #[cfg(loom)]
        self.with_mut(|slot| *slot = value);
        #[cfg(not(loom))]
        {
            *self.get_mut() = value;
        }
    }
}

/// Lets another thread run (under loom, a switch point, explored even
/// inside sluice's machinery).
#[cfg(loom)]
#[inline]
pub(crate) fn yield_now() {
    coarse::blocking(loom::thread::yield_now);
}

/// Tells the scheduler (or loom) that this thread is spinning on a value
/// another thread will change.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Waits a little for a resource another thread holds (under loom, lets
/// another thread run).
#[inline]
pub(crate) fn pause(duration: std::time::Duration) {
    #[cfg(loom)]
    {
        let _ = duration;
        yield_now();
    }
    #[cfg(not(loom))]
    std::thread::sleep(duration);
}

/// Starts a named thread.
pub(crate) fn spawn_named<F>(name: String, f: F) -> std::io::Result<JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    #[cfg(loom)]
    return loom::thread::Builder::new().name(name).spawn(f);
    #[cfg(not(loom))]
    return std::thread::Builder::new().name(name).spawn(f);
}

/// `std::cell::UnsafeCell` (or loom's, which tracks every access) behind
/// loom's closure-based API, so the same code compiles against both.
///
/// Under loom, a write (`with_mut`) that happens-before-overlaps any other
/// access of the same cell fails the model ("Causality violation"), however
/// the raw pointer is then used.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct UnsafeCell<T: ?Sized> {
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[inline]
    pub fn new(value: T) -> Self {
        Self {
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
            #[cfg(not(loom))]
            inner: std::cell::UnsafeCell::new(value),
        }
    }

    /// Unwraps the value.
    #[inline]
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared raw pointer to the value (under loom, checked
    /// as a read that lasts as long as `f`).
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(loom)]
        return self.inner.with(f);
        #[cfg(not(loom))]
        return f(self.inner.get());
    }

    /// Runs `f` with a mutable raw pointer to the value (under loom, checked
    /// as a write that lasts as long as `f`).
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.inner.with_mut(f);
        #[cfg(not(loom))]
        return f(self.inner.get());
    }

    /// The value, through an exclusive borrow of the cell.
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        #[cfg(loom)]
        // SAFETY:
        // - `&mut self` is the only borrow of the cell, so nothing else
        //   reads or writes the value while the returned borrow lives.
        return self.inner.with_mut(|value| unsafe { &mut *value });
        #[cfg(not(loom))]
        return self.inner.get_mut();
    }
}

/// Under loom: where loom may preempt a thread. By default
/// ([`sluice::model`](crate::model())) only outside sluice's machinery: the
/// machinery's steps (queues, counts, the sleep protocol, slice claims) run
/// without a preemption inside them and their atomic loads read one value
/// loom allows, not each; loom switches threads at the user's own
/// operations, where user code starts or ends (a body, a slice, a task:
/// [`user`], [`machinery`]), and where a step blocks (parks, waits for a
/// lock, yields, joins: [`blocking`]). A model that explores the machinery
/// too (the executor's own models) preempts everywhere.
///
/// loom's switch ("exploring") is one flag for the whole execution; each
/// loom thread keeps whether it is inside the machinery, and the flag
/// follows the running thread: it is on at every switch (a blocking step
/// turns it on before it blocks and off once it is back), so the thread
/// that runs next finds it on and turns it off when it resumes inside the
/// machinery. loom asserts the flag's state on every change: a blocking
/// step missed here fails the model at that thread's next crossing.
#[cfg(loom)]
pub(crate) mod coarse {
    use std::cell::Cell;

    loom::thread_local! {
        /// Whether this loom thread is inside sluice's machinery.
        static INSIDE: Cell<bool> = Cell::new(false);
    }

    /// Inside the machinery (or outside it) until dropped.
    #[must_use]
    pub(crate) struct Section {
        outer: bool,
    }

    /// Enters sluice's machinery: no preemption until the section ends or
    /// enters user code.
    pub(crate) fn machinery() -> Section {
        enter(true)
    }

    /// Enters user code (a body, a slice, a task) from the machinery.
    pub(crate) fn user() -> Section {
        enter(false)
    }

    fn enter(inside: bool) -> Section {
        if !crate::model::coarse_machinery() {
            return Section { outer: inside };
        }
        let outer = INSIDE.with(|cell| cell.replace(inside));
        if outer != inside {
            cross(inside);
        }
        Section { outer }
    }

    impl Drop for Section {
        fn drop(&mut self) {
            if !crate::model::coarse_machinery() {
                return;
            }
            let inside = INSIDE.with(|cell| cell.replace(self.outer));
            if inside != self.outer {
                cross(self.outer);
            }
        }
    }

    loom::lazy_static! {
        /// Loaded (never stored) where user code and machinery meet: a
        /// branch loom explores, on no data anybody else touches.
        static ref BOUNDARY: loom::sync::atomic::AtomicBool =
            loom::sync::atomic::AtomicBool::new(false);
    }

    /// Crosses between user code and the machinery (`into_machinery`
    /// says which way), with loom free to switch threads right there.
    fn cross(into_machinery: bool) {
        if into_machinery {
            BOUNDARY.load(loom::sync::atomic::Ordering::Relaxed);
            loom::stop_exploring();
        } else {
            loom::explore();
            BOUNDARY.load(loom::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Runs `f`, which may block or switch threads, as a switch point loom
    /// explores, also inside the machinery.
    pub(crate) fn blocking<R>(f: impl FnOnce() -> R) -> R {
        let inside = crate::model::coarse_machinery() && INSIDE.with(Cell::get);
        if inside {
            loom::explore();
        }
        let result = f();
        if inside {
            loom::stop_exploring();
        }
        result
    }
}

/// The machinery's own lock: std's `Mutex`, or under loom loom's behind a
/// `lock` that tries first, so that taking a free lock inside sluice's
/// machinery is no switch point (see [`coarse`]); a lock another thread
/// holds is waited for as a blocking step, which loom explores.
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex as Lock;

/// See the `not(loom)` version.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct Lock<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> std::sync::LockResult<loom::sync::MutexGuard<'_, T>> {
        if !crate::model::coarse_machinery() {
            return self.0.lock();
        }
        match self.0.try_lock() {
            Ok(guard) => Ok(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Err(poisoned),
            Err(std::sync::TryLockError::WouldBlock) => coarse::blocking(|| self.0.lock()),
        }
    }
}

/// Without loom: nothing to switch (the sections are no-ops).
#[cfg(not(loom))]
pub(crate) mod coarse {
    /// Nothing, without loom.
    #[must_use]
    pub(crate) struct Section;

    #[inline(always)]
    pub(crate) fn machinery() -> Section {
        Section
    }

    #[inline(always)]
    pub(crate) fn user() -> Section {
        Section
    }
}

/// Stand-ins for crossbeam's deque and parker under loom, which does not
/// see inside crossbeam. What the executor assumes of the real ones, and
/// what the stand-ins therefore provide:
///
/// - **Deque / injector.** Linearizable: every pushed job is popped or
///   stolen exactly once. A push happens before the pop or steal that takes
///   the job (crossbeam: the buffer write, then a `Release` store of `back`;
///   `pop`/`steal` load it with `Acquire`). `is_empty` takes no lock and
///   gives the same guarantee as crossbeam's: an `Acquire` load of what the
///   last push stored `Release`, and nothing stronger (crossbeam's
///   `is_empty` loads `front` and `back` with `Acquire`, no fence), so the
///   sleep protocol's fences are what the models check. The stand-in is a
///   loom `Mutex<VecDeque>` for the contents plus an atomic length that
///   `is_empty` reads without the lock. `steal` never returns `Retry`.
/// - **Parker.** A token: `unpark` before `park` makes that `park` return at
///   once, and `unpark` happens before the `park` it ends. Spurious wake-ups
///   are allowed by the contract but never produced here (which only makes
///   the models' search smaller, not weaker: the executor re-checks after
///   every wake).
#[cfg(loom)]
pub(crate) mod model {
    use std::collections::VecDeque;

    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::sync::{Arc, Condvar};

    use super::Lock;

    /// crossbeam's `Steal`.
    #[derive(Debug)]
    pub(crate) enum Steal<T> {
        Empty,
        Success(T),
        Retry,
    }

    struct Queue<T> {
        items: Lock<VecDeque<T>>,
        /// The number of items, stored `Release` under the lock, read
        /// `Acquire` without it by `is_empty`.
        len: AtomicUsize,
    }

    impl<T> Queue<T> {
        fn new() -> Self {
            Self {
                items: Lock::new(VecDeque::new()),
                len: AtomicUsize::new(0),
            }
        }

        /// Changes the contents under the lock; publishes the new length
        /// (`Release`) only when it changed, as crossbeam's `back` store.
        fn edit<R>(&self, f: impl FnOnce(&mut VecDeque<T>) -> R) -> R {
            let mut items = self.items.lock().unwrap();
            let before = items.len();
            let result = f(&mut items);
            if items.len() != before {
                self.len.store(items.len(), Ordering::Release);
            }
            result
        }

        fn is_empty(&self) -> bool {
            self.len.load(Ordering::Acquire) == 0
        }

        /// Takes from the front; an empty queue is seen without the lock
        /// (crossbeam's `steal` returns `Empty` after two loads and a
        /// fence, taking nothing from a later push).
        fn take_front(&self) -> Steal<T> {
            if self.is_empty() {
                return Steal::Empty;
            }
            self.edit(VecDeque::pop_front)
                .map_or(Steal::Empty, Steal::Success)
        }
    }

    /// A LIFO local deque (the owner's end is the back).
    pub(crate) struct Worker<T> {
        queue: Arc<Queue<T>>,
    }

    impl<T> Worker<T> {
        pub(crate) fn new_lifo() -> Self {
            Self {
                queue: Arc::new(Queue::new()),
            }
        }

        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer {
                queue: self.queue.clone(),
            }
        }

        pub(crate) fn push(&self, item: T) {
            self.queue.edit(|items| items.push_back(item));
        }

        pub(crate) fn pop(&self) -> Option<T> {
            // The owner is the only pusher: a length of 0 is current.
            if self.queue.len.load(Ordering::Relaxed) == 0 {
                return None;
            }
            self.queue.edit(VecDeque::pop_back)
        }

        /// The owner's view of the length (thieves may have taken some
        /// since: never more than this).
        pub(crate) fn len(&self) -> usize {
            self.queue.len.load(Ordering::Relaxed)
        }
    }

    /// The thieves' end (the front) of a [`Worker`].
    pub(crate) struct Stealer<T> {
        queue: Arc<Queue<T>>,
    }

    impl<T> Stealer<T> {
        pub(crate) fn steal(&self) -> Steal<T> {
            self.queue.take_front()
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.queue.is_empty()
        }
    }

    /// A FIFO queue any thread pushes to.
    pub(crate) struct Injector<T> {
        queue: Queue<T>,
    }

    impl<T> Injector<T> {
        pub(crate) fn new() -> Self {
            Self {
                queue: Queue::new(),
            }
        }

        pub(crate) fn push(&self, item: T) {
            self.queue.edit(|items| items.push_back(item));
        }

        pub(crate) fn steal(&self) -> Steal<T> {
            self.queue.take_front()
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.queue.is_empty()
        }

        pub(crate) fn len(&self) -> usize {
            self.queue.edit(|items| items.len())
        }
    }

    struct Token {
        set: Lock<bool>,
        cond: Condvar,
    }

    /// A parker with one token.
    pub(crate) struct Parker {
        unparker: Unparker,
    }

    impl Parker {
        pub(crate) fn new() -> Self {
            Self {
                unparker: Unparker {
                    token: Arc::new(Token {
                        set: Lock::new(false),
                        cond: Condvar::new(),
                    }),
                },
            }
        }

        pub(crate) fn unparker(&self) -> &Unparker {
            &self.unparker
        }

        /// Blocks until the token is set, and takes it.
        pub(crate) fn park(&self) {
            let token = &self.unparker.token;
            super::coarse::blocking(|| {
                let mut set = token.set.lock().unwrap();
                while !*set {
                    set = token.cond.wait(set).unwrap();
                }
                *set = false;
            });
        }
    }

    /// Sets a [`Parker`]'s token.
    #[derive(Clone)]
    pub(crate) struct Unparker {
        token: Arc<Token>,
    }

    impl Unparker {
        pub(crate) fn unpark(&self) {
            *self.token.set.lock().unwrap() = true;
            self.token.cond.notify_one();
        }
    }
}
