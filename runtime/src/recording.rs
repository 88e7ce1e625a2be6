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
///
/// Three words, each a pair of 32-bit fields with the more significant one
/// high, so that places compare as three integers and the next record's
/// place is one word plus one: `rank:count`, then per level of fan-out
/// `slice:count` (the run of slices numbered from 1 by its first slice, 0
/// outside any slice at that level; the records made in it before). A
/// count passing 2^32 would carry into its neighbour: a node never makes
/// that many records in one run (each takes memory).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct Place {
    rank_count: u64,
    levels: [u64; LEVELS],
}

/// The count of a record made through a node's handle on a thread that is
/// not recording for the node (one the node started itself).
const FOREIGN: u32 = u32::MAX;

/// Two 32-bit fields as one word, `high` the more significant.
const fn pair(high: u32, low: u32) -> u64 {
    (high as u64) << 32 | low as u64
}

/// The high field of a [`pair`].
const fn high(word: u64) -> u32 {
    (word >> 32) as u32
}

impl Place {
    const fn of_rank(rank: u32) -> Self {
        Self {
            rank_count: pair(rank, 0),
            levels: [0; LEVELS],
        }
    }

    /// The recording node's position in its plan's order (`u32::MAX` off a
    /// node): what a failed node's records are found by.
    pub(crate) fn rank(self) -> u32 {
        high(self.rank_count)
    }

    /// How many levels of fan-out this place is inside.
    fn depth(self) -> usize {
        self.levels
            .iter()
            .take_while(|&&level| high(level) != 0)
            .count()
    }

    /// The place of a record made through a handle of the node at `rank`
    /// on a thread not recording for it: after the node's own records, in
    /// the order such records are made (one process-wide count, so each
    /// thread's records keep their order).
    fn foreign(rank: u32) -> Place {
        static MADE: StaticAtomicU64 = StaticAtomicU64::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let mut levels = [0; LEVELS];
        levels[0] = made;
        Place {
            rank_count: pair(rank, FOREIGN),
            levels,
        }
    }
}

/// A thread's recording: the world whose node runs (the low half of its
/// identity, [`new_world_id`]; 0: none), the node (registration index;
/// `u32::MAX` off a node) and the place of its next record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recorder {
    world: u32,
    node: u32,
    place: Place,
}

/// How many words [`Recorder::to_words`] takes: the world and node, then
/// the place's words.
const RECORDER_WORDS: usize = 1 + 1 + LEVELS;

/// A [`Recorder`] as words ([`Recorder::to_words`]).
pub(crate) type RecorderWords = [u64; RECORDER_WORDS];

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

    /// The recording of node `node` of world `world` ([`new_world_id`]), at
    /// position `rank` of its plan's order, before its first record.
    pub(crate) const fn of_node(world: u64, node: u32, rank: u32) -> Self {
        Self {
            world: world as u32,
            node,
            place: Place::of_rank(rank),
        }
    }

    /// The first word: who records (the world, then the node).
    const fn identity(self) -> u64 {
        pair(self.world, self.node)
    }

    /// The recorder as words, each stored and loaded whole by the thread's
    /// running state (see `running.rs`): its identity, then its place's.
    #[inline]
    pub(crate) const fn to_words(self) -> RecorderWords {
        let [outer, inner] = self.place.levels;
        [self.identity(), self.place.rank_count, outer, inner]
    }

    /// The recorder of [`to_words`](Self::to_words).
    #[inline]
    pub(crate) const fn from_words([identity, rank_count, outer, inner]: RecorderWords) -> Self {
        Self {
            world: high(identity),
            node: identity as u32,
            place: Place {
                rank_count,
                levels: [outer, inner],
            },
        }
    }
}

/// A fresh world identity for recordings, unique in the process. A
/// recorder keeps its low half (one word less on every node's entry and
/// exit), which is never 0 (no world); two worlds' halves are equal only
/// if 2^32 worlds were made between them.
pub(crate) fn new_world_id() -> u64 {
    static NEXT_WORLD: StaticAtomicU64 = StaticAtomicU64::new(1);
    loop {
        let id = NEXT_WORLD.fetch_add(1, Ordering::Relaxed);
        if id as u32 != 0 {
            return id;
        }
    }
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
        let mut recorder = running::recorder();
        let depth = recorder.place.depth();
        if depth == LEVELS {
            // No level left: the slices run in order right here and record
            // on as the caller would.
            return Self {
                at: recorder,
                level: LEVELS,
            };
        }
        recorder.place = next_place_of(None).expect("no identity to refuse");
        Self {
            at: recorder,
            level: depth,
        }
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
        place.levels[self.level] = pair(slice, 0);
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
    /// The node's recorder's identity ([`Recorder::to_words`]' first word).
    identity: u64,
    /// Its position in plan order.
    rank: u32,
}

impl RecordsFor {
    /// The node recording on this thread now.
    pub(crate) fn current() -> Self {
        let recorder = running::recorder();
        Self {
            identity: recorder.identity(),
            rank: recorder.place.rank(),
        }
    }

    /// The place of the next record made through the handle: this thread's
    /// next place when it records for the handle's node (its body, or a
    /// slice it fanned out), else one after every record of the node's own
    /// threads.
    #[inline]
    pub(crate) fn next_place(self) -> Place {
        next_place_of(Some(self.identity)).unwrap_or_else(|| Place::foreign(self.rank))
    }
}

/// The place of the next record of this thread's recording, moving it on;
/// `None` when `identity` is given and the recording's is another.
///
/// Works on the words themselves: the identity is compared whole, and the
/// innermost level's count (a place's low half) is one word plus one.
#[inline]
fn next_place_of(identity: Option<u64>) -> Option<Place> {
    running::with_recorder_words(|[identity_word, rank_count, outer, inner]| {
        if identity.is_some_and(|identity| identity != identity_word.get()) {
            return None;
        }
        let place = Place {
            rank_count: rank_count.get(),
            levels: [outer.get(), inner.get()],
        };
        let innermost = if high(place.levels[0]) == 0 {
            rank_count
        } else if high(place.levels[1]) == 0 {
            outer
        } else {
            inner
        };
        innermost.set(innermost.get().wrapping_add(1));
        Some(place)
    })
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
    if recorder.world == world as u32 {
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
            world: u32::MAX - 3,
            node: 7,
            place: Place {
                rank_count: pair(9, u32::MAX),
                levels: [pair(1 << 31, 12), pair(5, u32::MAX - 1)],
            },
        };
        for recorder in [Recorder::NONE, Recorder::of_node(1, 0, 3), every_field] {
            let back = Recorder::from_words(recorder.to_words());
            assert_eq!(
                (back.world, back.node, back.place),
                (recorder.world, recorder.node, recorder.place)
            );
        }
        assert_eq!(every_field.place.rank(), 9);
        assert_eq!(every_field.place.depth(), 2);
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
