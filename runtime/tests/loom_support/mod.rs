//! What the loom models of the executor share.

use sluice::exec::{ThreadPool, ThreadPoolBuilder};

/// The pool every model runs on: the caller plus one worker thread, one run
/// at a time.
pub fn two_thread_pool() -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .max_concurrent_runs(1)
        .build()
        .unwrap()
}
