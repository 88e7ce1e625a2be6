//! What the loom models of the executor share.

use sluice::exec::{ThreadPool, ThreadPoolBuilder};

/// The pool every model runs on: the caller plus one worker thread, one run
/// at a time, and a local deque of one job, so that the second ready node
/// overflows into the run's ready ring and visitors join the run.
pub fn two_thread_pool() -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .max_concurrent_runs(1)
        .local_capacity(1)
        .build()
        .unwrap()
}
