//! Where the boundary work a running node records belongs: which world,
//! which node, and in which order it lands.
//!
//! Every command, message and `Next<T>` value recorded while a node runs is
//! tagged with the [`Place`] of its thread's recording. The world lands the
//! records of its nodes in place order (so the result is the same for every
//! thread count) and drops those of a node that failed (so a failed node
//! contributes nothing it recorded, on every executor).
//!
//! The world enters a node's recording around its body ([`Recording`]).
//! Work a node fans out to other threads carries it along
//! ([`SliceRecording`]): `exec::for_each_slice` and batch nodes take their
//! caller's place before fanning out and enter it, by slice, on whichever
//! thread runs the slice. The executor passes the place along without
//! knowing what it means.

use crate::running;
use crate::sync::{Ordering, StaticAtomicU64};

/// Where a record was made, in the order records land: by recording node
/// (registration index; `u32::MAX` off a node), then the node's count of
/// records before it; a record made inside a slice the node fanned out
/// shares the count the fan-out was called at and is ordered by slice
/// (numbered from 1, in slice order), then within the slice. Slices cover
/// consecutive work, so this is the order a sequential loop would record
/// in, whatever the slice size or thread count.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct Place {
    node: u32,
    count: u32,
    slice: u32,
    in_slice: u32,
}

impl Place {
    const OFF_NODE: Place = Place::of_node(u32::MAX);

    const fn of_node(node: u32) -> Self {
        Self {
            node,
            count: 0,
            slice: 0,
            in_slice: 0,
        }
    }

    /// The registration index of the recording node (`u32::MAX` off a node).
    pub(crate) fn node(self) -> u32 {
        self.node
    }
}

/// A thread's recording: the world whose node runs (0: none) and the place
/// of its next record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recorder {
    world: u64,
    place: Place,
}

impl Recorder {
    pub(crate) const NONE: Recorder = Recorder {
        world: 0,
        place: Place::OFF_NODE,
    };

    /// The registration index of the recording node (`u32::MAX` off a node).
    pub(crate) fn node(self) -> u32 {
        self.place.node
    }

    /// The recording of node `node` of world `world`, before its first record.
    pub(crate) const fn of_node(world: u64, node: u32) -> Self {
        Self {
            world,
            place: Place::of_node(node),
        }
    }

    /// The recorder as three words, each stored and loaded whole by the
    /// thread's running state (see `running.rs`).
    pub(crate) const fn to_words(self) -> [u64; 3] {
        let Place {
            node,
            count,
            slice,
            in_slice,
        } = self.place;
        [
            self.world,
            node as u64 | (count as u64) << 32,
            slice as u64 | (in_slice as u64) << 32,
        ]
    }

    /// The recorder of [`to_words`](Self::to_words).
    pub(crate) const fn from_words([world, first, second]: [u64; 3]) -> Self {
        Self {
            world,
            place: Place {
                node: first as u32,
                count: (first >> 32) as u32,
                slice: second as u32,
                in_slice: (second >> 32) as u32,
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
/// they land by node (registration order), then in the node's record
/// order, the same for every thread count. Dropping it restores the
/// thread's previous recording, so recordings nest.
#[must_use = "the recording ends when the guard drops"]
pub(crate) struct Recording {
    previous: Recorder,
}

impl Recording {
    /// Records made on this thread belong to node `node` of world `world`.
    pub(crate) fn enter(world: u64, node: u32) -> Self {
        Self::at(Recorder::of_node(world, node))
    }

    fn at(recorder: Recorder) -> Self {
        Self {
            previous: running::replace_recorder(recorder),
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
    at: Recorder,
}

impl SliceRecording {
    /// Takes the current thread's place for the slices about to run; the
    /// caller's later records land after theirs.
    pub(crate) fn take() -> Self {
        let world = running::recorder().world;
        Self {
            at: Recorder {
                world,
                place: next_order(),
            },
        }
    }

    /// Records made on this thread belong to slice `slice` until the guard
    /// drops.
    pub(crate) fn enter(self, slice: usize) -> Recording {
        let slice = u32::try_from(slice).map_or(u32::MAX, |slice| slice.saturating_add(1));
        Recording::at(Recorder {
            world: self.at.world,
            place: Place {
                slice,
                in_slice: 0,
                ..self.at.place
            },
        })
    }
}

/// The registration index of the node recording on this thread, in
/// whichever world (`u32::MAX` off a node).
pub(crate) fn recording_node() -> u32 {
    running::recorder().place.node
}

/// The registration index of the node of world `world` recording on this
/// thread (`u32::MAX` off a node, or when the node is another world's).
pub(crate) fn recording_node_of(world: u64) -> u32 {
    let recorder = running::recorder();
    if recorder.world == world {
        recorder.place.node
    } else {
        u32::MAX
    }
}

/// The place of the next record made on this thread.
pub(crate) fn next_order() -> Place {
    running::update_recorder(|recorder| {
        let place = recorder.place;
        let mut next = place;
        if place.slice == 0 {
            next.count = place.count.wrapping_add(1);
        } else {
            next.in_slice = place.in_slice.wrapping_add(1);
        }
        recorder.place = next;
        place
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorders_keep_every_field_as_words() {
        let every_field = Recorder {
            world: u64::MAX - 3,
            place: Place {
                node: 7,
                count: u32::MAX,
                slice: 1 << 31,
                in_slice: 12,
            },
        };
        for recorder in [Recorder::NONE, Recorder::of_node(1, 0), every_field] {
            let back = Recorder::from_words(recorder.to_words());
            assert_eq!((back.world, back.place), (recorder.world, recorder.place));
        }
    }
}
