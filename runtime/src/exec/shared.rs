//! The process's shared default pool: what [`World::new`](crate::World::new)
//! runs on, started at the first parallel run of any world that uses it, and
//! never stopped (as rayon's global pool), so making and dropping worlds
//! starts and joins no thread.

#[cfg(not(loom))]
use std::sync::OnceLock;

#[cfg(not(loom))]
use super::pool::ThreadPoolBuilder;
use super::pool::{ThreadPool, WorkerThread};

/// How many runs (worlds) may be on the shared pool at once: many worlds on
/// many threads (a test suite, a server's sessions) share it; more wait for a
/// seat.
#[cfg(not(loom))]
const SHARED_RUNS: usize = 16;

#[cfg(not(loom))]
static SHARED: OnceLock<ThreadPool> = OnceLock::new();
#[cfg(not(loom))]
static SHARED_THREADS: OnceLock<usize> = OnceLock::new();

impl ThreadPool {
    /// The shared default pool every [`World::new`](crate::World::new) runs
    /// on: one thread per available core (the caller included), up to 16
    /// worlds running at once. Started at its first use; its threads live
    /// until the process ends.
    ///
    /// # Panics
    /// When the operating system refuses to start its threads (the next call
    /// tries again).
    #[cfg(not(loom))]
    pub fn shared() -> &'static ThreadPool {
        SHARED.get_or_init(|| {
            ThreadPoolBuilder::new()
                .num_threads(Self::shared_threads())
                .max_concurrent_runs(SHARED_RUNS)
                .thread_name_prefix("sluice-shared")
                .build()
                .expect("the operating system refused the shared pool's threads")
        })
    }

    /// The shared pool if it has started.
    #[cfg(not(loom))]
    pub(crate) fn shared_if_started() -> Option<&'static ThreadPool> {
        SHARED.get()
    }

    /// How many threads the shared pool has, or will have once started
    /// (without starting it).
    #[cfg(not(loom))]
    pub(crate) fn shared_threads() -> usize {
        *SHARED_THREADS.get_or_init(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }

    /// Whether the calling thread is taking part in a run of this pool (a
    /// node or task of it is running here): another run on the pool from
    /// here would wait for this very thread.
    pub(crate) fn runs_on_current_thread(&self) -> bool {
        WorkerThread::current_of(self.registry()).is_some()
    }
}
