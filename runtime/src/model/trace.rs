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

/// The model running on this OS thread.
struct Running {
    /// Threads for pools built without a count.
    threads: usize,
    /// The current execution's events, in the order loom ran them.
    events: Vec<String>,
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
    fn enter(threads: usize) -> Self {
        let running = Running {
            threads,
            events: Vec::new(),
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
        }
    });
}

pub(super) fn note(what: &dyn fmt::Display) {
    event(format_args!("note: {what}"));
}

fn clear_events() {
    RUNNING.with(|slot| {
        if let Some(running) = slot.borrow_mut().as_mut() {
            running.events.clear();
        }
    });
}

fn take_events() -> Vec<String> {
    RUNNING.with(|slot| {
        slot.borrow_mut()
            .as_mut()
            .map(|running| std::mem::take(&mut running.events))
            .unwrap_or_default()
    })
}

pub(super) fn check<F>(bound: usize, threads: usize, max_branches: usize, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(bound);
    builder.max_branches = max_branches;
    let mark = Mark::enter(threads);
    let execution = move || {
        clear_events();
        f();
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
            "sluice::model: an execution failed (preemption bound {bound}, {threads} threads \
             per pool); what sluice saw of it, in the order loom ran it:\n"
        );
        for event in &events {
            report.push_str("  ");
            report.push_str(event);
            report.push('\n');
        }
        if events.is_empty() {
            report.push_str("  (no node ran)\n");
        }
        let message = crate::exec::panic_message(&*payload).unwrap_or("a panic");
        // A new panic (not `resume_unwind`), so the hook prints the report.
        panic!("{message}\n{report}");
    }
}
