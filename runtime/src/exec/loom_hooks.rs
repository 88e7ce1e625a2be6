//! Internals the loom models in `tests/loom_*.rs` drive directly, compiled
//! only under `--cfg loom` (hidden, not part of the API). Each wrapper calls
//! the real code; nothing here re-implements a protocol.

use super::job::JobRef;
use super::pool::{Registry, WorkerThread};
use super::state::ReadyRing;
use crate::sync::{Arc, AtomicBool, Ordering};

/// The run's ready ring ([`ReadyRing`]).
#[allow(missing_debug_implementations)]
pub struct Ring(ReadyRing);

impl Ring {
    /// A ring with `capacity` slots.
    pub fn new(capacity: usize) -> Self {
        Self(ReadyRing::new(capacity))
    }

    /// `ReadyRing::push`.
    pub fn push(&self, node: u32) -> bool {
        self.0.push(node)
    }

    /// `ReadyRing::pop`.
    pub fn pop(&self) -> Option<u32> {
        self.0.pop()
    }

    /// `ReadyRing::is_empty`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A registry with external seats and no worker thread, to run the sleep
/// protocol (`Registry::sleep` / `Registry::notify`) between threads the
/// model spawns itself.
#[allow(missing_debug_implementations)]
pub struct Sleepers {
    registry: Arc<Registry>,
    /// Set by the published job when it runs.
    ran: AtomicBool,
}

/// The job [`Sleepers::publish`] queues: sets `ran`.
///
/// # Safety
///
/// - `data` points at a live `Sleepers`.
unsafe fn set_ran(data: *const (), _: u32, _: &WorkerThread) {
    // SAFETY:
    // - `data` is a `Sleepers` that outlives the job (the model keeps it in
    //   an `Arc` until every thread has joined).
    let sleepers = unsafe { &*data.cast::<Sleepers>() };
    sleepers.ran.store(true, Ordering::Relaxed);
}

impl Sleepers {
    /// A registry with `seats` external seats.
    pub fn new(seats: usize) -> Self {
        Self {
            registry: Arc::new(Registry::new(0, seats, false)),
            ran: AtomicBool::new(false),
        }
    }

    /// Publishes one job from outside the pool (`Registry::inject`: the
    /// injector, then `notify`), as a completion on a foreign thread does.
    ///
    /// `self` must outlive the job: keep it until the waiting thread joined.
    pub fn publish(&self) {
        // SAFETY:
        // - `self` outlives the job (the caller's contract) and is `Sync`;
        //   `set_ran` is sound to call any number of times.
        let job = unsafe { JobRef::new(std::ptr::from_ref(self).cast(), 0, set_ran) };
        self.registry.inject(job);
    }

    /// Occupies a free external seat and works until the published job has
    /// run, going to sleep (`WorkerThread::wait_until`) when there is none.
    pub fn wait_for_job(&self) {
        Registry::with_external_seat(&self.registry, |worker| {
            let ran = || self.ran.load(Ordering::Relaxed);
            worker.wait_until(None, false, ran, ran);
        });
    }

    /// Whether the job ran.
    pub fn job_ran(&self) -> bool {
        self.ran.load(Ordering::Relaxed)
    }
}
