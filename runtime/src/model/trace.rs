//! The loom side of [`model`](super::model): loom's builder with sluice's
//! settings, the "inside a model" mark pools check, and the interleaving
//! printed when an execution fails.
//!
//! loom runs every thread of a model as a coroutine on the test's OS thread,
//! so one std thread-local holds the mark and the log for all of them (and
//! tests running side by side, on OS threads of their own, each have theirs).

use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use super::watchdog::{Progress, Watchdog};
use crate::sync::os::Arc;

/// The model running on this OS thread.
struct Running {
    /// Threads for pools built without a count.
    threads: usize,
    /// Whether sluice's machinery runs without preemptions inside it.
    coarse: bool,
    /// The current execution's events, in the order loom ran them.
    events: Vec<String>,
    /// Executions started so far.
    executions: usize,
    /// The first panic of a loose task in the current execution (async-task
    /// hands a task's panic to its `Task`, which a model may never await:
    /// loom's report of a race inside the task would be lost).
    task_panic: Option<String>,
    /// What the watchdog watches.
    progress: Arc<Progress>,
}

std::thread_local! {
    static RUNNING: RefCell<Option<Running>> = const { RefCell::new(None) };
}

/// Marks this OS thread as running a model until dropped (restoring the
/// enclosing model's mark, for a model started inside another's closure).
struct Mark {
    outer: Option<Running>,
}

impl Mark {
    fn enter(settings: &Settings, progress: Arc<Progress>) -> Self {
        let running = Running {
            threads: settings.threads,
            coarse: !settings.explore_machinery,
            events: Vec::new(),
            executions: 0,
            task_panic: None,
            progress,
        };
        Self {
            outer: RUNNING.with(|slot| slot.borrow_mut().replace(running)),
        }
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        let outer = self.outer.take();
        RUNNING.with(|slot| *slot.borrow_mut() = outer);
    }
}

/// Whether sluice's machinery runs without preemptions inside it: inside a
/// [`model`](super::model) that does not explore it (see
/// `sync::coarse`); `false` outside a model.
pub(crate) fn coarse_machinery() -> bool {
    RUNNING.with(|slot| slot.borrow().as_ref().is_some_and(|running| running.coarse))
}

pub(super) fn model_threads() -> Option<usize> {
    RUNNING.with(|slot| slot.borrow().as_ref().map(|running| running.threads))
}

/// Logs `start {what}` when made and `end {what}` when dropped, on the
/// current loom thread (a node's body, a slice).
pub(crate) struct Span {
    /// `None` outside a model.
    what: Option<String>,
}

impl Span {
    pub(crate) fn enter(what: impl fmt::Display) -> Self {
        let inside = RUNNING.with(|slot| slot.borrow().is_some());
        let what = inside.then(|| what.to_string());
        if let Some(what) = &what {
            event(format_args!("start {what}"));
        }
        Self { what }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(what) = &self.what {
            event(format_args!("end   {what}"));
        }
    }
}

/// Appends `what`, made on the current loom thread, to the running
/// execution's log; nothing outside a model.
fn event(what: fmt::Arguments<'_>) {
    RUNNING.with(|slot| {
        if let Some(running) = slot.borrow_mut().as_mut() {
            let thread = loom::thread::current();
            let name = thread.name().unwrap_or("main").to_owned();
            running.events.push(format!("{name:>16}: {what}"));
            running.progress.tick();
        }
    });
}

pub(super) fn note(what: &dyn fmt::Display) {
    event(format_args!("note: {what}"));
}

/// A new execution: counted, with an empty log.
fn begin_execution() {
    RUNNING.with(|slot| {
        if let Some(running) = slot.borrow_mut().as_mut() {
            running.executions += 1;
            running.events.clear();
            running.task_panic = None;
            running.progress.execution();
        }
    });
}

/// Keeps the first panic of a loose task in this execution (nothing
/// outside a model).
pub(crate) fn task_panicked(message: &str) {
    event(format_args!("task panicked: {message}"));
    RUNNING.with(|slot| {
        if let Some(running) = slot.borrow_mut().as_mut() {
            running.task_panic.get_or_insert_with(|| message.to_owned());
        }
    });
}

fn take_task_panic() -> Option<String> {
    RUNNING.with(|slot| {
        slot.borrow_mut()
            .as_mut()
            .and_then(|running| running.task_panic.take())
    })
}

/// What [`check`] explores with.
pub(super) struct Settings {
    pub(super) bound: usize,
    pub(super) threads: usize,
    pub(super) max_branches: usize,
    pub(super) explore_machinery: bool,
    pub(super) stall: Duration,
}

fn take_events() -> Vec<String> {
    RUNNING.with(|slot| {
        slot.borrow_mut()
            .as_mut()
            .map(|running| std::mem::take(&mut running.events))
            .unwrap_or_default()
    })
}

/// Explores `f`; returns the number of executions.
pub(super) fn check<F>(settings: &Settings, f: F) -> usize
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(settings.bound);
    builder.max_branches = settings.max_branches;
    let progress = Arc::new(Progress::default());
    let watchdog = Watchdog::start(Arc::clone(&progress), settings.stall);
    let mark = Mark::enter(settings, progress);
    let execution = move || {
        begin_execution();
        f();
        if let Some(message) = take_task_panic() {
            panic!("a loose task panicked: {message}");
        }
    };
    // loom's own log (`LOOM_LOG`), as `loom::model` sets it up.
    let subscriber = tracing_subscriber::fmt::Subscriber::builder()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("LOOM_LOG"))
        .with_test_writer()
        .without_time()
        .finish();
    let outcome = tracing::subscriber::with_default(subscriber, || {
        panic::catch_unwind(AssertUnwindSafe(|| builder.check(execution)))
    });
    if let Err(payload) = outcome {
        let events = take_events();
        drop(mark);
        let mut report = format!(
            "sluice::model: an execution failed (preemption bound {}, {} threads per pool, {}); \
             what sluice saw of it, in the order loom ran it:\n",
            settings.bound,
            settings.threads,
            if settings.explore_machinery {
                "preempting inside sluice's machinery too"
            } else {
                "preempting at your operations and where sluice's machinery blocks"
            },
        );
        for event in &events {
            report.push_str("  ");
            report.push_str(event);
            report.push('\n');
        }
        if events.is_empty() {
            report.push_str("  (no node ran)\n");
        }
        for warning in watchdog.warnings() {
            report.push_str(&warning);
            report.push('\n');
        }
        let message = crate::exec::panic_message(&*payload).unwrap_or("a panic");
        // A new panic (not `resume_unwind`), so the hook prints the report.
        panic!("{message}\n{report}");
    }
    let executions = RUNNING.with(|slot| slot.borrow().as_ref().map_or(0, |r| r.executions));
    drop(mark);
    executions
}
