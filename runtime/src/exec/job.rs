//! The unit of work in the deques: a small `Copy` reference, never boxed.

use std::fmt;

use super::pool::WorkerThread;
use super::run::RunSlot;

/// The function a [`JobRef`] runs: its data pointer, its argument, and the
/// thread running it.
pub(crate) type ExecuteFn = unsafe fn(*const (), u32, &WorkerThread);

/// A type-erased job: a pointer to state that outlives the job, a `u32`
/// argument (a node index) and the function to run them with.
///
/// A node job is `(&RunSlot, node)`; a batch helper is `(&BatchNode<P>, 0)`.
/// Three words, `Copy`: queueing one allocates nothing.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    data: *const (),
    arg: u32,
    execute_fn: ExecuteFn,
}

// SAFETY:
// - A `JobRef` is only made by `JobRef::new`, whose contract is that `data`
//   may be used by `execute_fn` from any thread of the pool (it points at
//   `Sync` state that outlives the job).
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    ///
    /// - `data` must stay valid until `execute_fn` has run with it and
    ///   returned, and must be usable from any thread (`Sync` state).
    /// - `execute_fn(data, arg, worker)` must be sound to call exactly once
    ///   on any pool thread.
    pub(crate) unsafe fn new(data: *const (), arg: u32, execute_fn: ExecuteFn) -> Self {
        Self {
            data,
            arg,
            execute_fn,
        }
    }

    /// The node this job runs, when it is a node job of the run slot at
    /// `slot` (see `RunSlot::node_job`, the only maker of jobs whose data is
    /// a run slot: no other job's data can be at a slot's address while the
    /// slot lives).
    pub(crate) fn node_of(&self, slot: &RunSlot) -> Option<u32> {
        std::ptr::eq(self.data, std::ptr::from_ref(slot).cast()).then_some(self.arg)
    }

    /// Whether the job's data is `data` (a scope telling its own helpers
    /// apart from other jobs).
    pub(crate) fn data_is(&self, data: *const ()) -> bool {
        std::ptr::eq(self.data, data)
    }

    /// Runs the job.
    ///
    /// # Safety
    ///
    /// - Each `JobRef` made by [`JobRef::new`] is executed at most once
    ///   (copies included).
    pub(crate) unsafe fn execute(self, worker: &WorkerThread) {
        // SAFETY:
        // - `JobRef::new`'s contract makes this call sound once on a pool thread.
        // - The caller guarantees it is the only execution of this job.
        unsafe { (self.execute_fn)(self.data, self.arg, worker) }
    }
}

impl fmt::Debug for JobRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobRef")
            .field("data", &self.data)
            .field("arg", &self.arg)
            .finish()
    }
}
