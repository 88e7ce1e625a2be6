//! [`ScriptCx`]: what an `async` script awaits and reads, through the poll
//! its gather is running on this thread.

use std::any::TypeId;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{ScriptId, ScriptKind, Waiting};
use crate::sync::Cell;

/// The poll in progress on this thread: what the script may read and where
/// it writes. Type-erased so one thread-local serves every script kind;
/// `kind` says which `K` the pointers are for.
pub(super) struct Polling {
    pub(super) kind: TypeId,
    /// `*const K::View<'v>`, alive for the poll.
    pub(super) view: *const (),
    /// `*mut Vec<K::Intent>`: the script's own intents.
    pub(super) intents: *mut (),
    pub(super) now: Duration,
    pub(super) fixed_now: Duration,
    pub(super) id: ScriptId,
    /// What the script waits on once the poll returns `Pending`.
    pub(super) waiting: Waiting,
}

// Per loom thread under loom: its threads share one OS thread, and a
// node on one must not see another's value.
#[cfg(not(loom))]
std::thread_local! {
    /// The poll running on this thread (null between polls).
    static POLLING: Cell<*mut Polling> = const { Cell::new(ptr::null_mut()) };
}

#[cfg(loom)]
loom::thread_local! {
    /// The poll running on this thread (null between polls).
    static POLLING: Cell<*mut Polling> = Cell::new(ptr::null_mut());
}

/// While alive, `ScriptCx` calls on this thread reach `polling`.
pub(super) struct PollGuard {
    previous: *mut Polling,
}

impl PollGuard {
    /// # Safety
    ///
    /// - `polling` (and the view and intents it points to) stays valid and is
    ///   not otherwise used until the guard drops.
    pub(super) unsafe fn enter(polling: *mut Polling) -> Self {
        Self {
            previous: POLLING.with(|current| current.replace(polling)),
        }
    }
}

impl Drop for PollGuard {
    fn drop(&mut self) {
        POLLING.with(|current| current.set(self.previous));
    }
}

/// Runs `f` on the poll in progress, which must be of kind `K`.
fn with_polling<K: ScriptKind, R>(f: impl FnOnce(&mut Polling) -> R) -> R {
    let polling = POLLING.with(Cell::get);
    assert!(
        !polling.is_null(),
        "a ScriptCx<{}> was used outside its script (only a script's own poll may use it)",
        std::any::type_name::<K>()
    );
    // SAFETY: non-null means a `PollGuard` on this thread holds it valid and
    // unused elsewhere; this is the only reference made from it, and `f`
    // cannot reach the thread-local again (a nested call would make a
    // second `&mut`, so the view and emit paths copy out what they need
    // before calling user code).
    let polling = unsafe { &mut *polling };
    assert!(
        polling.kind == TypeId::of::<K>(),
        "a ScriptCx<{}> was used inside a script of another kind",
        std::any::type_name::<K>()
    );
    f(polling)
}

/// An `async` script's handle on sluice: time, waits, the gather's view and
/// intents. `Copy`; valid only while its own script is being polled (using
/// it elsewhere panics, naming the kind).
pub struct ScriptCx<K: ScriptKind> {
    kind: PhantomData<fn() -> K>,
}

impl<K: ScriptKind> Clone for ScriptCx<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: ScriptKind> Copy for ScriptCx<K> {}

impl<K: ScriptKind> std::fmt::Debug for ScriptCx<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptCx")
            .field("kind", &std::any::type_name::<K>())
            .finish()
    }
}

impl<K: ScriptKind> ScriptCx<K> {
    pub(super) fn new() -> Self {
        Self { kind: PhantomData }
    }

    /// This script's id.
    pub fn id(self) -> ScriptId {
        with_polling::<K, _>(|polling| polling.id)
    }

    /// Simulation time (the clock's variable time) at this gather.
    pub fn now(self) -> Duration {
        with_polling::<K, _>(|polling| polling.now)
    }

    /// Simulation time counted in fixed steps at this gather.
    pub fn fixed_now(self) -> Duration {
        with_polling::<K, _>(|polling| polling.fixed_now)
    }

    /// Reads the gather's view: shared borrows of what the gather system
    /// declared.
    pub fn view<R>(self, read: impl FnOnce(&K::View<'_>) -> R) -> R {
        let view = with_polling::<K, _>(|polling| polling.view);
        // SAFETY: the poll's view pointer is a `&K::View<'v>` alive for the
        // whole poll (the guard's contract), of this kind (checked); `read`
        // is generic over the view's lifetime, so nothing it returns can
        // borrow from it.
        read(unsafe { &*view.cast::<K::View<'_>>() })
    }

    /// Hands an intent to the collect phase, which applies every script's
    /// intents in script order.
    pub fn emit(self, intent: K::Intent) {
        let intents = with_polling::<K, _>(|polling| polling.intents);
        // SAFETY: the poll's intents pointer is this script's own
        // `Vec<K::Intent>` (kind checked), alive and used by nothing else
        // for the poll; no other reference to it exists during this push.
        unsafe { (*intents.cast::<Vec<K::Intent>>()).push(intent) };
    }

    /// Waits `duration` of simulation time ([`SimClock::now`](super::SimClock::now)).
    /// A zero wait returns at once.
    pub fn wait(self, duration: Duration) -> WaitFor<K> {
        WaitFor {
            duration,
            deadline: None,
            fixed: false,
            kind: PhantomData,
        }
    }

    /// Waits `duration` of the fixed cadence's simulation time
    /// ([`SimClock::fixed_now`](super::SimClock::fixed_now)).
    pub fn wait_fixed(self, duration: Duration) -> WaitFor<K> {
        WaitFor {
            fixed: true,
            ..self.wait(duration)
        }
    }

    /// Waits for the next gather that runs scripts.
    pub fn next_tick(self) -> NextTick<K> {
        NextTick {
            yielded: false,
            kind: PhantomData,
        }
    }

    /// Waits until `condition` holds on the gather's view, checked at once
    /// and then at every gather.
    #[track_caller]
    pub fn wait_until<F>(self, condition: F) -> WaitUntil<K, F>
    where
        F: FnMut(&K::View<'_>) -> bool,
    {
        WaitUntil {
            condition,
            location: Location::caller(),
            kind: PhantomData,
        }
    }
}

/// [`ScriptCx::wait`] and [`ScriptCx::wait_fixed`].
#[derive(Debug)]
#[must_use = "a wait does nothing unless awaited"]
pub struct WaitFor<K: ScriptKind> {
    duration: Duration,
    deadline: Option<Duration>,
    fixed: bool,
    kind: PhantomData<fn() -> K>,
}

impl<K: ScriptKind> Future for WaitFor<K> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let (duration, fixed) = (self.duration, self.fixed);
        let now = with_polling::<K, _>(|polling| {
            if fixed {
                polling.fixed_now
            } else {
                polling.now
            }
        });
        let deadline = *self.deadline.get_or_insert(now.saturating_add(duration));
        if now >= deadline {
            return Poll::Ready(());
        }
        with_polling::<K, _>(|polling| {
            polling.waiting = if fixed {
                Waiting::FixedTime(deadline)
            } else {
                Waiting::Time(deadline)
            };
        });
        Poll::Pending
    }
}

/// [`ScriptCx::next_tick`].
#[derive(Debug)]
#[must_use = "a wait does nothing unless awaited"]
pub struct NextTick<K: ScriptKind> {
    yielded: bool,
    kind: PhantomData<fn() -> K>,
}

impl<K: ScriptKind> Future for NextTick<K> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        with_polling::<K, _>(|polling| polling.waiting = Waiting::NextTick);
        Poll::Pending
    }
}

/// [`ScriptCx::wait_until`].
#[must_use = "a wait does nothing unless awaited"]
pub struct WaitUntil<K: ScriptKind, F> {
    condition: F,
    location: &'static Location<'static>,
    kind: PhantomData<fn() -> K>,
}

impl<K: ScriptKind, F> std::fmt::Debug for WaitUntil<K, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitUntil")
            .field("location", &self.location)
            .finish()
    }
}

// The condition is never pinned: it is only called through `&mut`.
impl<K: ScriptKind, F> Unpin for WaitUntil<K, F> {}

impl<K: ScriptKind, F> Future for WaitUntil<K, F>
where
    F: FnMut(&K::View<'_>) -> bool,
{
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let holds = ScriptCx::<K>::new().view(|view| (self.condition)(view));
        if holds {
            return Poll::Ready(());
        }
        let location = self.location;
        with_polling::<K, _>(|polling| polling.waiting = Waiting::Condition(Some(location)));
        Poll::Pending
    }
}
