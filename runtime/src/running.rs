//! What this thread knows of the node body it runs, in one thread-local:
//! where its records land ([`recording`](crate::recording)), which part of
//! the node reads messages (`message::param`), and its change cursor
//! (`entity::query::cursor`).
//!
//! Each of those modules reads and replaces only its own field. A system's
//! run enters all three at once ([`BodyScope`]): one thread-local access to
//! enter and one to leave, where three guards took six (a thread-local's
//! access is a call, not an inlined load, outside the crate that defines it).
//!
//! Every word is a cell of its own (the recorder takes four, each optional
//! tick one), read and written whole. The processor forwards a store to a
//! later load only when the load reads within that one store: as one
//! struct, the state the body's entry wrote field by field (a 4-byte `None`
//! tag among them) was read back in wider loads, each of which waited for
//! the stores to reach the cache, twice a node (about a third of an empty
//! system's time on the serial executor, in the same number of
//! instructions). Which copies stall depends on the compiler's choice of
//! moves: check a change with `benches/tools/store_forwarding.py`.

use crate::recording::{Recorder, RecorderWords};
use crate::sync::Cell;

/// A body's change cursor (`None`: it never ran with a query) and this
/// run's tick once a query asked.
pub(crate) type CursorRun = (Option<u32>, Option<u32>);

/// An `Option<u32>` as one word, written and read by single 8-byte
/// accesses (a `None` is a tag alone, without its payload's bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tick(u64);

impl Tick {
    const NONE: Tick = Tick(u64::MAX);

    fn new(tick: Option<u32>) -> Self {
        tick.map_or(Self::NONE, |tick| Tick(u64::from(tick)))
    }

    fn get(self) -> Option<u32> {
        u32::try_from(self.0).ok()
    }
}

/// The running body's state on this thread: what [`BodyScope`] saves
/// and restores.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Running {
    /// Where the records made now land, as words: saved and restored whole,
    /// never unpacked on the way.
    recorder: RecorderWords,
    /// The part of the running node (0: its body, `i + 1`: run condition
    /// `i`), so each part has its own message cursors.
    reader_part: u32,
    /// The running body's change cursor.
    last_run: Tick,
    /// This run's tick, once a query took one.
    this_run: Tick,
}

/// The thread's running state, a cell per word (see the module's notes).
struct RunningCells {
    /// [`Recorder::to_words`].
    recorder: [Cell<u64>; 4],
    reader_part: Cell<u32>,
    last_run: Cell<Tick>,
    this_run: Cell<Tick>,
}

impl RunningCells {
    /// Off any node.
    const fn idle() -> RunningCells {
        RunningCells {
            recorder: {
                let [a, b, c, d] = Recorder::NONE.to_words();
                [Cell::new(a), Cell::new(b), Cell::new(c), Cell::new(d)]
            },
            reader_part: Cell::new(0),
            last_run: Cell::new(Tick::NONE),
            this_run: Cell::new(Tick::NONE),
        }
    }

    #[inline]
    fn recorder(&self) -> Recorder {
        let [ca, cb, cc, cd] = &self.recorder;
        Recorder::from_words([ca.get(), cb.get(), cc.get(), cd.get()])
    }

    #[inline]
    fn replace_recorder(&self, [a, b, c, d]: RecorderWords) -> RecorderWords {
        let [ca, cb, cc, cd] = &self.recorder;
        [ca.replace(a), cb.replace(b), cc.replace(c), cd.replace(d)]
    }

    /// Writes `running` back, reading nothing (a read of words just written
    /// one by one could be merged into a wider load: see the module's notes).
    fn restore(&self, running: Running) {
        let [a, b, c, d] = running.recorder;
        let [ca, cb, cc, cd] = &self.recorder;
        ca.set(a);
        cb.set(b);
        cc.set(c);
        cd.set(d);
        self.reader_part.set(running.reader_part);
        self.last_run.set(running.last_run);
        self.this_run.set(running.this_run);
    }

    #[inline]
    fn replace(&self, running: Running) -> Running {
        Running {
            recorder: self.replace_recorder(running.recorder),
            reader_part: self.reader_part.replace(running.reader_part),
            last_run: self.last_run.replace(running.last_run),
            this_run: self.this_run.replace(running.this_run),
        }
    }
}

// Per loom thread under loom: its threads share one OS thread, and a
// node on one must not see another's value.
#[cfg(not(loom))]
std::thread_local! {
    static RUNNING: RunningCells = const { RunningCells::idle() };
}

#[cfg(loom)]
loom::thread_local! {
    static RUNNING: RunningCells = RunningCells::idle();
}

/// Where this thread's records land now.
pub(crate) fn recorder() -> Recorder {
    RUNNING.with(RunningCells::recorder)
}

/// Replaces where this thread's records land (as words), returning the
/// old place.
pub(crate) fn replace_recorder(recorder: RecorderWords) -> RecorderWords {
    RUNNING.with(|running| running.replace_recorder(recorder))
}

/// Calls `f` with the cells of this thread's recorder
/// ([`Recorder::to_words`]), to read or move on its place in place.
#[inline]
pub(crate) fn with_recorder_words<R>(f: impl FnOnce(&[Cell<u64>; 4]) -> R) -> R {
    RUNNING.with(|running| f(&running.recorder))
}

/// The part of the running node that reads messages now.
pub(crate) fn reader_part() -> u32 {
    RUNNING.with(|running| running.reader_part.get())
}

/// Replaces the part of the running node, returning the old one.
pub(crate) fn replace_reader_part(part: u32) -> u32 {
    RUNNING.with(|running| running.reader_part.replace(part))
}

/// Replaces the running body's change cursor, returning the old one.
pub(crate) fn replace_cursor((last_run, this_run): CursorRun) -> CursorRun {
    RUNNING.with(|running| {
        (
            running.last_run.replace(Tick::new(last_run)).get(),
            running.this_run.replace(Tick::new(this_run)).get(),
        )
    })
}

/// The running body's cursor and this run's tick, taking the tick from
/// `fresh` the first time a run asks.
pub(crate) fn cursor_taking_tick(fresh: impl FnOnce() -> u32) -> (Option<u32>, u32) {
    RUNNING.with(|running| {
        let this_run = running.this_run.get().get().unwrap_or_else(|| {
            let tick = fresh();
            running.this_run.set(Tick::new(Some(tick)));
            tick
        });
        (running.last_run.get().get(), this_run)
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
    /// Enters the run of node `node` of world `world`, at position `rank`
    /// of its plan's order, whose cursor is `last_run` (`None`: it never
    /// ran with a query).
    pub(crate) fn enter(world: u64, node: u32, rank: u32, last_run: Option<u32>) -> Self {
        Self {
            previous: RUNNING.with(|running| {
                running.replace(Running {
                    recorder: Recorder::of_node(world, node, rank).to_words(),
                    reader_part: 0,
                    last_run: Tick::new(last_run),
                    this_run: Tick::NONE,
                })
            }),
            finished: false,
        }
    }

    /// Ends the run: its tick, if one of its queries took one (the body's
    /// new cursor).
    pub(crate) fn finish(mut self) -> Option<u32> {
        self.finished = true;
        RUNNING
            .with(|running| running.replace(self.previous))
            .this_run
            .get()
    }
}

impl Drop for BodyScope {
    fn drop(&mut self) {
        // Unwinding out of a body, or a skipped one: restore the outer run.
        if !self.finished {
            RUNNING.with(|running| running.restore(self.previous));
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ticks_keep_every_value() {
        for tick in [None, Some(0), Some(1), Some(u32::MAX - 1), Some(u32::MAX)] {
            assert_eq!(Tick::new(tick).get(), tick);
        }
    }

    #[test]
    fn a_body_scope_restores_the_outer_run() {
        let outer = BodyScope::enter(7, 3, 0, Some(10));
        assert_eq!(cursor_taking_tick(|| 11), (Some(10), 11));
        let inner = BodyScope::enter(7, 4, 1, None);
        assert_eq!(recorder().node(), 4);
        assert_eq!(cursor_taking_tick(|| 20), (None, 20));
        assert_eq!(
            cursor_taking_tick(|| unreachable!("taken once")),
            (None, 20)
        );
        assert_eq!(inner.finish(), Some(20));
        assert_eq!(recorder().node(), 3);
        assert_eq!(cursor_taking_tick(|| unreachable!("kept")), (Some(10), 11));
        drop(outer);
        assert_eq!(recorder().node(), u32::MAX);
        assert_eq!(replace_cursor((None, None)), (None, None));
    }
}
