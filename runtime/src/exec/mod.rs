//! The execution engine: runs a compiled graph on a worker pool.
//!
//! The engine knows nothing of worlds or plans: it runs a [`CompiledGraph`]
//! (flat successor lists and predecessor counts) with an [`ExecutionState`]
//! (the reusable per-graph arrays), calling a node body for every node.
//!
//! - [`ThreadPool`]: the main thread is worker 0, plus n-1 worker threads
//!   with crossbeam-deque local queues, an injector and stealing. Idle
//!   threads spin briefly, then park. [`ThreadPool::run`] is one iteration.
//! - [`SerialExecutor`]: the same contract, node by node, in the graph's order.
//! - [`LooseTasks`]: prioritized and regular (time-boxed) async tasks.
//! - [`BatchProcessor`] / [`BatchNode`]: one node that fans a buffer out
//!   over the pool, completing when its last slice does.
//! - [`for_each_slice`]: a running body fans slices out over its pool and
//!   waits for them (parallel queries).
//! - [`SystemTiming`]: opt-in per-node timing; [`RunStats`]: with it, the
//!   threads' idle and wake-up time in a run.
//!
//! ```
//! use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, ThreadPool};
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! let graph = CompiledGraph::from_edges(3, &[(0, 2), (1, 2)]).unwrap();
//! let mut state = ExecutionState::new(&graph);
//! let pool = ThreadPool::new(2).unwrap();
//! let ran = AtomicUsize::new(0);
//! pool.run(&graph, &mut state, |cx| {
//!     ran.fetch_add(1, Ordering::Relaxed);
//!     let _ = cx.node();
//!     NodeOutcome::Done
//! })
//! .unwrap();
//! assert_eq!(ran.load(Ordering::Relaxed), 3);
//! ```
//!
//! The design notes are in `README.md` beside this file.

mod batch;
mod clock;
mod graph;
mod idle;
mod job;
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_hooks;
mod loose;
mod parallel;
mod placement;
mod pool;
mod run;
mod serial;
mod shared;
mod slices;
mod state;
mod timing;

pub use async_task::Task;
pub use batch::{BatchBuffer, BatchNode, BatchProcessor, ClearBuffer};
pub use graph::{CompiledGraph, GraphError};
pub(crate) use idle::NO_RUN;
pub use idle::{RunStats, ThreadIdle};
pub use loose::{DEFAULT_PRIORITIZED_BUDGET, DEFAULT_REGULAR_WINDOW, LooseTasks};
pub use pool::{
    DEFAULT_SPIN_BETWEEN_RUNS, DEFAULT_SPIN_WHILE_RUNNING, PoolStats, ThreadPool, ThreadPoolBuilder,
};
pub(crate) use run::panic_message;
pub use run::{Completion, NodeContext, NodeFailure, NodeOutcome};
pub use serial::SerialExecutor;
pub use slices::for_each_slice;
pub(crate) use slices::{SliceRuns, current_thread_count, for_each_slice_runs};
pub use state::ExecutionState;
pub use timing::SystemTiming;
