//! Loose tasks: work outside the graph's nodes, in two queues.
//!
//! - *Prioritized* tasks are drained to completion inside an iteration: a
//!   run does not return while its prioritized queue holds a task (batch
//!   slices are prioritized work too, though they travel as jobs in the
//!   deques rather than through this queue), up to a poll budget per run
//!   ([`LooseTasks::set_prioritized_budget`]): past it, what is queued waits
//!   for the next run, and the overrun is counted and logged, so that a task
//!   that wakes itself and stays pending forever cannot keep a run from
//!   returning.
//! - *Regular* tasks (async continuations) get a time-boxed window each
//!   iteration: the window opens when the first regular task of the run
//!   starts, no regular task starts after it closes, and what is left waits
//!   for the next iteration.
//!
//! Tasks are futures run with `async-task`: waking one re-queues its
//! `Runnable` on the queue it was spawned on, so a task pending across frames
//! resumes in a later iteration, and `async-task` guarantees a task is never
//! queued twice or lost.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use async_task::{Builder, Runnable, Task};

use crate::sync::{AtomicU64, Injector, Ordering, StdArc as Arc, StdWeak as Weak, Steal};

/// The default regular window: 1 ms per iteration.
pub const DEFAULT_REGULAR_WINDOW: Duration = Duration::from_millis(1);

/// The default prioritized budget: 65,536 polls of prioritized tasks per
/// run, far more than a frame's real prioritized work, and a few
/// milliseconds of a task that does nothing but wake itself.
pub const DEFAULT_PRIORITIZED_BUDGET: u64 = 1 << 16;

/// The queues behind a [`LooseTasks`].
pub(crate) struct LooseShared {
    epoch: Instant,
    window_nanos: AtomicU64,
    /// How many prioritized polls one run may make.
    prioritized_budget: AtomicU64,
    /// How many runs stopped polling prioritized tasks at the budget.
    overruns: AtomicU64,
    prioritized: Injector<Runnable>,
    regular: Injector<Runnable>,
}

impl LooseShared {
    pub(crate) fn pop_prioritized(&self) -> Option<Runnable> {
        pop(&self.prioritized)
    }

    pub(crate) fn pop_regular(&self) -> Option<Runnable> {
        pop(&self.regular)
    }

    pub(crate) fn has_prioritized(&self) -> bool {
        !self.prioritized.is_empty()
    }

    pub(crate) fn has_regular(&self) -> bool {
        !self.regular.is_empty()
    }

    pub(crate) fn window_nanos(&self) -> u64 {
        self.window_nanos.load(Ordering::Relaxed)
    }

    pub(crate) fn prioritized_budget(&self) -> u64 {
        self.prioritized_budget.load(Ordering::Relaxed)
    }

    /// A run spent its prioritized budget (`budget` polls) with prioritized
    /// work still queued: counted, and logged.
    pub(crate) fn record_overrun(&self, budget: u64) {
        self.overruns.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            budget,
            queued = self.prioritized.len(),
            "prioritized loose tasks used this run's whole budget of {budget} polls; what is \
             queued waits for the next run (a prioritized task that wakes itself and stays \
             pending never finishes)"
        );
    }

    /// Nanoseconds since these queues were made.
    pub(crate) fn now_nanos(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Polls a task once. A panic inside it is caught by `async-task` and
    /// handed to whoever awaits its [`Task`]; it never reaches the pool.
    pub(crate) fn run_task(runnable: Runnable) {
        let _span = tracing::trace_span!("task").entered();
        // A model's printed interleaving shows each poll.
        #[cfg(loom)]
        let _traced = crate::model::Span::enter("task");
        // `propagate_panic(true)` already catches; this is belt and braces.
        let _user = crate::sync::coarse::user();
        let _ = panic::catch_unwind(AssertUnwindSafe(|| runnable.run()));
    }
}

fn pop(queue: &Injector<Runnable>) -> Option<Runnable> {
    loop {
        match queue.steal() {
            Steal::Success(runnable) => return Some(runnable),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

/// The loose tasks of one world: pass them to a run with
/// `run_with_loose`, and spawn from anywhere.
pub struct LooseTasks {
    shared: Arc<LooseShared>,
}

impl Default for LooseTasks {
    fn default() -> Self {
        Self::new()
    }
}

impl LooseTasks {
    /// Empty queues with the [default window](DEFAULT_REGULAR_WINDOW).
    pub fn new() -> Self {
        Self {
            shared: Arc::new(LooseShared {
                epoch: Instant::now(),
                window_nanos: AtomicU64::new(DEFAULT_REGULAR_WINDOW.as_nanos() as u64),
                prioritized_budget: AtomicU64::new(DEFAULT_PRIORITIZED_BUDGET),
                overruns: AtomicU64::new(0),
                prioritized: Injector::new(),
                regular: Injector::new(),
            }),
        }
    }

    /// Sets how long regular tasks may keep starting in each iteration
    /// (`Duration::ZERO` runs none).
    pub fn set_regular_window(&self, window: Duration) {
        let nanos = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
        self.shared.window_nanos.store(nanos, Ordering::Relaxed);
    }

    /// The regular window.
    pub fn regular_window(&self) -> Duration {
        Duration::from_nanos(self.shared.window_nanos())
    }

    /// Sets how many times one run may poll prioritized tasks
    /// ([`DEFAULT_PRIORITIZED_BUDGET`] until set; `0` polls none). Once a
    /// run has spent it, the prioritized tasks still queued wait for the
    /// next run, and the run counts as an
    /// [overrun](Self::prioritized_overruns) (also logged through
    /// `tracing`): a task that wakes itself and returns `Pending` forever
    /// costs each run its budget instead of never letting it return.
    pub fn set_prioritized_budget(&self, polls: u64) {
        self.shared
            .prioritized_budget
            .store(polls, Ordering::Relaxed);
    }

    /// How many polls of prioritized tasks one run may make.
    pub fn prioritized_budget(&self) -> u64 {
        self.shared.prioritized_budget()
    }

    /// How many runs so far spent their whole prioritized budget with
    /// prioritized work left over (which carried over to the next run).
    pub fn prioritized_overruns(&self) -> u64 {
        self.shared.overruns.load(Ordering::Relaxed)
    }

    /// Spawns a regular task: an async continuation, polled in the regular
    /// window of the iterations it is woken in. Detach the returned [`Task`]
    /// to let it run unobserved (dropping it cancels the task).
    pub fn spawn<F>(&self, future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_on(future, |shared| &shared.regular)
    }

    /// Spawns a prioritized task: polled before the iteration ends, every
    /// time it is woken, within the run's
    /// [budget](Self::set_prioritized_budget).
    pub fn spawn_prioritized<F>(&self, future: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_on(future, |shared| &shared.prioritized)
    }

    fn spawn_on<F>(
        &self,
        future: F,
        queue: fn(&LooseShared) -> &Injector<Runnable>,
    ) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // Weak: a queued runnable holds its schedule function, which must not
        // keep the queues alive (a cycle); once the queues are gone, waking a
        // task drops its runnable, which cancels it.
        let shared: Weak<LooseShared> = Arc::downgrade(&self.shared);
        let schedule = move |runnable: Runnable| {
            if let Some(shared) = shared.upgrade() {
                queue(&shared).push(runnable);
            }
        };
        // Under loom a panic in the task (loom's report of a race in it
        // included) also fails the model, whether or not the `Task` is
        // awaited.
        #[cfg(loom)]
        let future = ReportPanic(Box::pin(future));
        let (runnable, task) = Builder::new()
            .propagate_panic(true)
            .spawn(|_| future, schedule);
        runnable.schedule();
        task
    }

    /// Regular tasks waiting for a window.
    pub fn queued_regular(&self) -> usize {
        self.shared.regular.len()
    }

    /// Prioritized tasks waiting to run.
    pub fn queued_prioritized(&self) -> usize {
        self.shared.prioritized.len()
    }

    pub(crate) fn shared(&self) -> *const LooseShared {
        Arc::as_ptr(&self.shared)
    }
}

impl Drop for LooseTasks {
    fn drop(&mut self) {
        // Cancel what is queued (dropping a runnable cancels its task).
        while self.shared.pop_prioritized().is_some() {}
        while self.shared.pop_regular().is_some() {}
    }
}

impl fmt::Debug for LooseTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LooseTasks")
            .field("regular_window", &self.regular_window())
            .field("queued_regular", &self.queued_regular())
            .field("queued_prioritized", &self.queued_prioritized())
            .field("prioritized_budget", &self.prioritized_budget())
            .field("prioritized_overruns", &self.prioritized_overruns())
            .finish()
    }
}

/// Under loom: a task's future that tells the model when it panics, then
/// lets the panic go on to the task's [`Task`].
#[cfg(loom)]
struct ReportPanic<F>(std::pin::Pin<Box<F>>);

#[cfg(loom)]
impl<F: Future> Future for ReportPanic<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let inner = self.0.as_mut();
        match panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => {
                let message = super::run::panic_message(&*payload).unwrap_or("a panic");
                crate::model::task_panicked(message);
                panic::resume_unwind(payload)
            }
        }
    }
}
