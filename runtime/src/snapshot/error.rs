//! Why a snapshot or a restore was refused.

use std::fmt;

use crate::entity::StorageType;

/// Why [`World::snapshot`](crate::World::snapshot) (or
/// [`snapshot_into`](crate::World::snapshot_into),
/// [`RollbackBuffer::save`](crate::RollbackBuffer::save)) took nothing. The
/// world is never changed by a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Asked from inside an iteration (a whole-world system or a custom
    /// command): the world is half way through a frame.
    DuringIteration,
    /// The world is strict ([`World::set_snapshot_strict`](crate::World::set_snapshot_strict))
    /// and holds state no snapshot would capture.
    LeftOut {
        /// What is not opted in, each as `kind name` (`component
        /// game::Pos`, `service game::Score`, `local ...`).
        names: Vec<String>,
    },
    /// A value's `Clone` panicked while it was captured; the snapshot
    /// written into is left empty.
    Panicked {
        /// The type whose `Clone` panicked.
        what: String,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuringIteration => write!(
                f,
                "snapshot refused: the world is running an iteration (take it between updates)"
            ),
            Self::LeftOut { names } => write!(
                f,
                "snapshot refused: the world is strict and these are not opted into snapshots: {}",
                names.join(", ")
            ),
            Self::Panicked { what } => write!(
                f,
                "snapshot failed: cloning {what} panicked (the snapshot is left empty)"
            ),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Why [`World::restore`](crate::World::restore) (or
/// [`RollbackBuffer::load`](crate::RollbackBuffer::load)) was refused. But
/// for [`DropPanicked`](Self::DropPanicked), the world is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreError {
    /// Asked from inside an iteration (a whole-world system or a custom
    /// command).
    DuringIteration,
    /// The snapshot holds nothing: never filled, or its capture failed.
    Empty,
    /// The snapshot left out components that had rows, so the world could
    /// not be given back as it was.
    LeftOut {
        /// The component types left out.
        names: Vec<String>,
    },
    /// The snapshot holds a component or service type this world does not
    /// snapshot (a snapshot of another world, or a type opted in there
    /// only).
    NotOptedIn {
        /// `component name` or `service name`.
        what: String,
    },
    /// A component type is kept in a table in the snapshot and in a sparse
    /// set in the world, or the other way round.
    StorageDiffers {
        /// The component type.
        component: &'static str,
        /// Its storage in the snapshot.
        snapshot: StorageType,
        /// Its storage in the world.
        world: StorageType,
    },
    /// The snapshot contradicts itself (a damaged or forged save): what is
    /// wrong, and where.
    Corrupt {
        /// What is wrong.
        what: String,
    },
    /// The snapshot holds a [`Local`](crate::Local) value
    /// ([`World::snapshot_local`](crate::World::snapshot_local)) of a node
    /// this world no longer has (removed since): the world's nodes differ
    /// from the snapshot's.
    NodeGone {
        /// The `Local` type, and its slot.
        local: String,
    },
    /// [`RollbackBuffer::load`](crate::RollbackBuffer::load): no snapshot
    /// of that frame is kept (never saved, or overwritten since).
    NotKept {
        /// The frame asked for.
        frame: i64,
    },
    /// A value's `Clone` panicked while the snapshot was copied out; the
    /// world is unchanged.
    Panicked {
        /// The type whose `Clone` panicked.
        what: String,
    },
    /// The restore finished (the world is as the snapshot was), but the
    /// `Drop` of values it replaced panicked.
    DropPanicked {
        /// The types whose `Drop` panicked.
        what: Vec<String>,
    },
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuringIteration => write!(
                f,
                "restore refused: the world is running an iteration (restore between updates)"
            ),
            Self::Empty => write!(f, "restore refused: the snapshot holds nothing"),
            Self::LeftOut { names } => write!(
                f,
                "restore refused: the snapshot left out components that had rows, so the world \
                 cannot be given back as it was: {}",
                names.join(", ")
            ),
            Self::NotOptedIn { what } => write!(
                f,
                "restore refused: the snapshot holds {what}, which this world does not snapshot"
            ),
            Self::StorageDiffers {
                component,
                snapshot,
                world,
            } => write!(
                f,
                "restore refused: component {component} is kept as {snapshot:?} in the snapshot \
                 and as {world:?} in the world"
            ),
            Self::Corrupt { what } => {
                write!(f, "restore refused: the snapshot is inconsistent: {what}")
            }
            Self::NodeGone { local } => write!(
                f,
                "restore refused: the snapshot holds {local} of a node this world no longer has"
            ),
            Self::NotKept { frame } => {
                write!(f, "restore refused: no snapshot of frame {frame} is kept")
            }
            Self::Panicked { what } => write!(
                f,
                "restore failed: cloning {what} out of the snapshot panicked (the world is unchanged)"
            ),
            Self::DropPanicked { what } => write!(
                f,
                "restored, but dropping the replaced values of {} panicked",
                what.join(", ")
            ),
        }
    }
}

impl std::error::Error for RestoreError {}
