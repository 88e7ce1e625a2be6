//! Change cursors: each system (and each run condition) remembers the tick
//! of its last run, and `Changed<T>` / `Added<T>` keep the rows stamped
//! after it. The world's node runner enters a [`ChangeRun`] around every
//! body and condition; the first query the run creates takes a fresh tick
//! from the store, which stamps its writes and becomes the new cursor. A
//! body that does not run (a run condition was false) keeps its cursor, so
//! it sees the skipped changes when it next runs (reference 002).
//!
//! A cursor is `None` until the body's first run with a query: that run
//! compares against [`Entities::unseen_cursor`] of its own tick, so it
//! sees every row however late the body was made (a fixed 0 would read
//! every row as older once the store's tick is 2^31 past it).

use crate::entity::Entities;

use crate::running::{self, CursorRun as Run};

/// While alive, queries created on this thread belong to one run of a body
/// whose cursor is `last_run`.
#[derive(Debug)]
pub(crate) struct ChangeRun {
    previous: Option<Run>,
}

impl ChangeRun {
    /// Enters a run of a body whose cursor is `last_run` (`None`: never
    /// ran with a query).
    pub(crate) fn enter(last_run: Option<u32>) -> Self {
        Self {
            previous: Some(running::replace_cursor((last_run, None))),
        }
    }

    /// Ends the run: its tick, if one of its queries took one (the body's
    /// new cursor).
    pub(crate) fn finish(mut self) -> Option<u32> {
        let previous = self.previous.take().expect("finished once");
        running::replace_cursor(previous).1
    }
}

impl Drop for ChangeRun {
    fn drop(&mut self) {
        // Unwinding out of a body: restore the outer run's cursor.
        if let Some(previous) = self.previous.take() {
            running::replace_cursor(previous);
        }
    }
}

/// The running body's cursor (resolved for a body that never ran) and this
/// run's tick, taking the tick from `fresh` the first time a run asks.
pub(crate) fn current(fresh: impl FnOnce() -> u32) -> (u32, u32) {
    let (last_run, this_run) = running::cursor_taking_tick(fresh);
    (Entities::cursor_for(last_run, this_run), this_run)
}

/// The running body's cursor as its queries would compare against it,
/// without taking this run's tick: for a parameter that looks at the
/// matches before the body runs ([`Single`](super::Single)), so a body it
/// skips keeps its cursor.
pub(crate) fn peek(entities: &Entities) -> u32 {
    let run = running::replace_cursor((None, None));
    running::replace_cursor(run);
    let (last_run, this_run) = run;
    Entities::cursor_for(
        last_run,
        this_run.unwrap_or_else(|| entities.tick().wrapping_add(1)),
    )
}
