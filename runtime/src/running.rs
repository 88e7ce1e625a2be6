//! What this thread knows of the node body it runs, in one thread-local:
//! where its records land ([`recording`](crate::recording)), which part of
//! the node reads messages (`message::param`), and its change cursor
//! (`entity::query::cursor`).
//!
//! Each of those modules reads and replaces only its own field. A system's
//! run enters all three at once ([`BodyScope`]): one thread-local access to
//! enter and one to leave, where three guards took six (a thread-local's
//! access is a call, not an inlined load, outside the crate that defines it).

use crate::recording::Recorder;
use crate::sync::Cell;

/// A body's change cursor (`None`: it never ran with a query) and this
/// run's tick once a query asked.
pub(crate) type CursorRun = (Option<u32>, Option<u32>);

/// The running body's state on this thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Running {
    /// Where the records made now land.
    pub(crate) recorder: Recorder,
    /// The part of the running node (0: its body, `i + 1`: run condition
    /// `i`), so each part has its own message cursors.
    pub(crate) reader_part: u32,
    /// The running body's change cursor and this run's tick.
    pub(crate) cursor: CursorRun,
}

impl Running {
    /// Off any node.
    const IDLE: Running = Running {
        recorder: Recorder::NONE,
        reader_part: 0,
        cursor: (None, None),
    };
}

// Per loom thread under loom: its threads share one OS thread, and a
// node on one must not see another's value.
#[cfg(not(loom))]
std::thread_local! {
    static RUNNING: Cell<Running> = const { Cell::new(Running::IDLE) };
}

#[cfg(loom)]
loom::thread_local! {
    static RUNNING: Cell<Running> = Cell::new(Running::IDLE);
}

/// This thread's running state.
pub(crate) fn get() -> Running {
    RUNNING.with(Cell::get)
}

/// Replaces this thread's running state, returning the old one.
pub(crate) fn replace(running: Running) -> Running {
    RUNNING.with(|cell| cell.replace(running))
}

/// Changes this thread's running state with `change`, returning what it
/// returns.
pub(crate) fn update<R>(change: impl FnOnce(&mut Running) -> R) -> R {
    RUNNING.with(|cell| {
        let mut running = cell.get();
        let result = change(&mut running);
        cell.set(running);
        result
    })
}

/// While alive, this thread runs a system (or factory) of world `world`:
/// its records land at the node's place, its readers are the body's part,
/// and its queries compare against the body's cursor.
#[must_use = "the body's scope ends when the guard drops"]
pub(crate) struct BodyScope {
    previous: Running,
    /// Whether [`finish`](Self::finish) already restored `previous`.
    finished: bool,
}

impl BodyScope {
    /// Enters the run of node `node` of world `world`, whose cursor is
    /// `last_run` (`None`: it never ran with a query).
    pub(crate) fn enter(world: u64, node: u32, last_run: Option<u32>) -> Self {
        Self {
            previous: replace(Running {
                recorder: Recorder::of_node(world, node),
                reader_part: 0,
                cursor: (last_run, None),
            }),
            finished: false,
        }
    }

    /// Ends the run: its tick, if one of its queries took one (the body's
    /// new cursor).
    pub(crate) fn finish(mut self) -> Option<u32> {
        self.finished = true;
        replace(self.previous).cursor.1
    }
}

impl Drop for BodyScope {
    fn drop(&mut self) {
        // Unwinding out of a body, or a skipped one: restore the outer run.
        if !self.finished {
            replace(self.previous);
        }
    }
}
