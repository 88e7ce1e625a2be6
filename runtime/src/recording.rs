//! Where the boundary work a running node records belongs: which world,
//! which node, and in which order it lands.
//!
//! Every command, message, appended value and `Next<T>` value recorded
//! while a node runs is tagged with the [`Place`] of its recording. The
//! world lands the records of one run of a plan in place order, which is
//! the order of a serial run of that plan (so the result is the same for
//! every executor and thread count), and drops those of a node that failed
//! (so a failed node contributes nothing it recorded, on every executor).
//!
//! The world enters a node's recording around its body ([`Recording`]).
//! Work a node fans out to other threads carries it along
//! ([`SliceRecording`]): `exec::for_each_slice` and batch nodes take their
//! caller's place before fanning out and enter it, by slice, on whichever
//! thread runs the slice. Fan-outs nest: a fan-out inside a slice orders
//! its slices inside that slice's place, as a nested loop would, up to
//! [`LEVELS`] deep; a deeper one runs its slices in order on the thread
//! that calls it, which is that loop. The executor passes the place along
//! without knowing what it means.
//!
//! A handle that records (`Append<T>`, `Commands`, `Publish<T>`,
//! `Next<T>`) also remembers, when it is made, the node it records for
//! ([`RecordsFor`]): a record made through it on a thread the node started
//! itself (`std::thread::scope`, rayon), which has no recording of its
//! own, still belongs to that node: it lands at the node's place, after
//! what the node recorded on its own threads, and not at all if the node
//! fails. Such handles borrow the node's run, so no thread can hold one
//! after the node returns.

use crate::running;
use crate::sync::{Ordering, StaticAtomicU64};

/// How many fan-outs deep slices get places of their own; a fan-out
/// deeper than this runs its slices in order on its caller's thread.
pub(crate) const LEVELS: usize = 2;

/// One level of fan-out in a [`Place`]: the run of slices (numbered from
/// 1 by its first slice, in slice order; 0 outside any slice at this
/// level) and the count of records made in it before.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Level {
    slice: u32,
    count: u32,
}

impl Level {
    const OUTSIDE: Level = Level { slice: 0, count: 0 };
}

/// Where a record was made, in the order records land: by the recording
/// node's position in plan order (`u32::MAX` off a node), then the node's
/// count of records before it; a record made inside a slice the node
/// fanned out shares the count the fan-out was called at and is ordered by
/// slice, then within the slice, and so on for each level of fan-out.
/// Slices cover consecutive work, so this is the order a sequential loop
/// (or nest of loops) would record in, whatever the slice size or thread
/// count.
///
/// Records made on a thread the node started itself take the count
/// [`FOREIGN`] (after every record of the node's own threads) and are
/// ordered among themselves by when they were made.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct Place {
    rank: u32,
    count: u32,
    levels: [Level; LEVELS],
}

/// The count of a record made through a node's handle on a thread that is
/// not recording for the node (one the node started itself).
const FOREIGN: u32 = u32::MAX;

impl Place {
    const fn of_rank(rank: u32) -> Self {
        Self {
            rank,
            count: 0,
            levels: [Level::OUTSIDE; LEVELS],
        }
    }

    /// The recording node's position in its plan's order (`u32::MAX` off a
    /// node): what a failed node's records are found by.
    pub(crate) fn rank(self) -> u32 {
        self.rank
    }

    /// How many levels of fan-out this place is inside.
    fn depth(self) -> usize {
        self.levels
            .iter()
            .take_while(|level| level.slice != 0)
            .count()
    }

    /// This place, moving on to the next record's.
    fn advance(&mut self) -> Place {
        let place = *self;
        match self.depth() {
            0 => self.count = self.count.wrapping_add(1),
            depth => {
                let level = &mut self.levels[depth - 1];
                level.count = level.count.wrapping_add(1);
            }
        }
        place
    }

    /// The place of a record made through a handle of the node at `rank`
    /// on a thread not recording for it: after the node's own records, in
    /// the order such records are made (one process-wide count, so each
    /// thread's records keep their order).
    fn foreign(rank: u32) -> Place {
        static MADE: StaticAtomicU64 = StaticAtomicU64::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let mut levels = [Level::OUTSIDE; LEVELS];
        levels[0] = Level {
            slice: (made >> 32) as u32,
            count: made as u32,
        };
        Place {
            rank,
            count: FOREIGN,
            levels,
        }
    }
}

/// A thread's recording: the world whose node runs (0: none), the node
/// (registration index; `u32::MAX` off a node) and the place of its next
/// record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recorder {
    world: u64,
    node: u32,
    place: Place,
}

/// How many words [`Recorder::to_words`] takes: the world, then the
/// 32-bit fields (node, rank, count, each level's slice and count) two to
/// a word.
const RECORDER_WORDS: usize = 5;

/// A [`Recorder`] as words ([`Recorder::to_words`]).
pub(crate) type RecorderWords = [u64; RECORDER_WORDS];
// `to_words` spells out two levels: one word per field pair, no loop, so
// that entering a body stays a handful of moves (a loop over a field array
// cost a node about 100 instructions).
const _: () = assert!(LEVELS == 2 && RECORDER_WORDS == 1 + (3 + 2 * LEVELS).div_ceil(2));

/// Two 32-bit fields as one word, `low` first.
const fn pair(low: u32, high: u32) -> u64 {
    low as u64 | (high as u64) << 32
}

impl Recorder {
    pub(crate) const NONE: Recorder = Recorder {
        world: 0,
        node: u32::MAX,
        place: Place::of_rank(u32::MAX),
    };

    /// The registration index of the recording node (`u32::MAX` off a node).
    pub(crate) fn node(self) -> u32 {
        self.node
    }

    /// The recording of node `node` of world `world`, at position `rank` of
    /// its plan's order, before its first record.
    pub(crate) const fn of_node(world: u64, node: u32, rank: u32) -> Self {
        Self {
            world,
            node,
            place: Place::of_rank(rank),
        }
    }

    /// The recorder as words, each stored and loaded whole by the thread's
    /// running state (see `running.rs`).
    #[inline]
    pub(crate) const fn to_words(self) -> RecorderWords {
        let Place {
            rank,
            count,
            levels: [outer, inner],
        } = self.place;
        [
            self.world,
            pair(self.node, rank),
            pair(count, outer.slice),
            pair(outer.count, inner.slice),
            inner.count as u64,
        ]
    }

    /// The recorder of [`to_words`](Self::to_words).
    #[inline]
    pub(crate) const fn from_words(
        [world, node_rank, count_outer, outer_inner, inner]: RecorderWords,
    ) -> Self {
        Self {
            world,
            node: node_rank as u32,
            place: Place {
                rank: (node_rank >> 32) as u32,
                count: count_outer as u32,
                levels: [
                    Level {
                        slice: (count_outer >> 32) as u32,
                        count: outer_inner as u32,
                    },
                    Level {
                        slice: (outer_inner >> 32) as u32,
                        count: inner as u32,
                    },
                ],
            },
        }
    }
}

/// A fresh world identity for recordings (never 0).
pub(crate) fn new_world_id() -> u64 {
    static NEXT_WORLD: StaticAtomicU64 = StaticAtomicU64::new(1);
    NEXT_WORLD.fetch_add(1, Ordering::Relaxed)
}

/// While alive, records made on this thread belong to a node of a world:
/// they land by node (plan order), then in the node's record order, the
/// same for every thread count. Dropping it restores the thread's
/// previous recording, so recordings nest.
#[must_use = "the recording ends when the guard drops"]
pub(crate) struct Recording {
    previous: RecorderWords,
}

impl Recording {
    /// Records made on this thread belong to node `node` of world `world`,
    /// at position `rank` of its plan's order.
    pub(crate) fn enter(world: u64, node: u32, rank: u32) -> Self {
        Self::at(Recorder::of_node(world, node, rank))
    }

    fn at(recorder: Recorder) -> Self {
        Self {
            previous: running::replace_recorder(recorder.to_words()),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let previous = self.previous;
        running::replace_recorder(previous);
    }
}

/// The recording of a node that fans work out, for its slices: a record
/// made in slice `k` lands where the node's next record would, ordered by
/// slice and then within it (see [`Place`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SliceRecording {
    /// The caller's recording at the fan-out's place.
    at: Recorder,
    /// The level the slices number (`LEVELS` when the caller is already
    /// that deep: its slices must then run in order on its thread).
    level: usize,
}

impl SliceRecording {
    /// Takes the current thread's place for the slices about to run; the
    /// caller's later records land after theirs.
    pub(crate) fn take() -> Self {
        running::update_recorder(|recorder| {
            let depth = recorder.place.depth();
            if depth == LEVELS {
                // No level left: the slices run in order right here and
                // record on as the caller would.
                return Self {
                    at: *recorder,
                    level: LEVELS,
                };
            }
            let place = recorder.place.advance();
            Self {
                at: Recorder { place, ..*recorder },
                level: depth,
            }
        })
    }

    /// Whether the slices must run in order on the calling thread: the
    /// caller is [`LEVELS`] fan-outs deep, and no place is left to order
    /// slices run elsewhere.
    pub(crate) fn runs_in_order(self) -> bool {
        self.level == LEVELS
    }

    /// Records made on this thread belong to the run of slices that starts
    /// at `slice` until the guard drops; `None` when the slices run in
    /// order on the caller ([`runs_in_order`](Self::runs_in_order)), whose
    /// recording goes on.
    pub(crate) fn enter(self, slice: usize) -> Option<Recording> {
        if self.runs_in_order() {
            return None;
        }
        let slice = u32::try_from(slice).map_or(u32::MAX, |slice| slice.saturating_add(1));
        let mut place = self.at.place;
        place.levels[self.level] = Level { slice, count: 0 };
        Some(Recording::at(Recorder { place, ..self.at }))
    }
}

/// The node a recording handle records for, taken when the handle is made
/// on the node's thread: a record made through the handle on a thread that
/// is not recording for that node (one the node started itself) still
/// lands at the node's place, and is dropped with the node's other records
/// if it fails.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordsFor {
    world: u64,
    node: u32,
    rank: u32,
}

impl RecordsFor {
    /// The node recording on this thread now.
    pub(crate) fn current() -> Self {
        let recorder = running::recorder();
        Self {
            world: recorder.world,
            node: recorder.node,
            rank: recorder.place.rank,
        }
    }

    /// The place of the next record made through the handle: this thread's
    /// next place when it records for the handle's node (its body, or a
    /// slice it fanned out), else one after every record of the node's own
    /// threads.
    #[inline]
    pub(crate) fn next_place(self) -> Place {
        running::update_recorder(|recorder| {
            if recorder.world == self.world && recorder.node == self.node {
                recorder.place.advance()
            } else {
                Place::foreign(self.rank)
            }
        })
    }
}

/// The registration index of the node recording on this thread, in
/// whichever world (`u32::MAX` off a node).
pub(crate) fn recording_node() -> u32 {
    running::recorder().node
}

/// The registration index of the node of world `world` recording on this
/// thread (`u32::MAX` off a node, or when the node is another world's).
pub(crate) fn recording_node_of(world: u64) -> u32 {
    let recorder = running::recorder();
    if recorder.world == world {
        recorder.node
    } else {
        u32::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorders_keep_every_field_as_words() {
        let every_field = Recorder {
            world: u64::MAX - 3,
            node: 7,
            place: Place {
                rank: 9,
                count: u32::MAX,
                levels: [
                    Level {
                        slice: 1 << 31,
                        count: 12,
                    },
                    Level {
                        slice: 5,
                        count: u32::MAX - 1,
                    },
                ],
            },
        };
        for recorder in [Recorder::NONE, Recorder::of_node(1, 0, 3), every_field] {
            let back = Recorder::from_words(recorder.to_words());
            assert_eq!(
                (back.world, back.node, back.place),
                (recorder.world, recorder.node, recorder.place)
            );
        }
    }

    /// Places of nested fan-outs sort as the nested loop records.
    #[test]
    fn nested_places_sort_as_loops_record() {
        let recording = Recording::enter(1, 4, 2);
        let before = RecordsFor::current().next_place();
        let outer = SliceRecording::take();
        let mut places = Vec::new();
        // Outer slices 1 and 0 (run out of order), each with an inner
        // fan-out of slices 1 and 0, each recording twice.
        for outer_slice in [1, 0] {
            let _in_outer = outer.enter(outer_slice);
            let first = RecordsFor::current().next_place();
            let inner = SliceRecording::take();
            for inner_slice in [1, 0] {
                let _in_inner = inner.enter(inner_slice);
                for record in 0..2 {
                    let place = RecordsFor::current().next_place();
                    places.push(((outer_slice, 1, inner_slice, record), place));
                }
                // Deeper than the levels: in order, on this thread.
                let deepest = SliceRecording::take();
                assert!(deepest.runs_in_order());
                assert!(deepest.enter(0).is_none());
                let place = RecordsFor::current().next_place();
                places.push(((outer_slice, 1, inner_slice, 2), place));
            }
            let last = RecordsFor::current().next_place();
            places.push(((outer_slice, 0, 0, 0), first));
            places.push(((outer_slice, 2, 0, 0), last));
        }
        let after = RecordsFor::current().next_place();
        places.sort_by_key(|&(_, place)| place);
        let loop_order: Vec<_> = places.iter().map(|&(made, _)| made).collect();
        let mut expected = loop_order.clone();
        expected.sort();
        assert_eq!(loop_order, expected);
        assert!(
            places
                .iter()
                .all(|&(_, place)| before < place && place < after)
        );
        drop(recording);
    }

    /// A thread not recording for a handle's node records after the node's
    /// own records, at the node's place.
    #[test]
    fn foreign_records_land_after_the_nodes_own() {
        let _recording = Recording::enter(1, 4, 2);
        let handle = RecordsFor::current();
        let own = handle.next_place();
        let foreign = std::thread::scope(|scope| {
            scope
                .spawn(|| [handle.next_place(), handle.next_place()])
                .join()
                .unwrap()
        });
        let later_own = handle.next_place();
        assert_eq!(foreign.map(Place::rank), [2, 2]);
        assert!(own < later_own && later_own < foreign[0] && foreign[0] < foreign[1]);
        assert!(foreign[1] < Place::of_rank(3));
    }
}
