//! [`RollbackBuffer`]: the last frames' snapshots, for a rollback session.

use super::{RestoreError, Snapshot, SnapshotError};
use crate::world::World;

/// The snapshots of the last `capacity` frames saved, each slot's memory
/// reused by the frame that overwrites it: once warm, saving a frame of a
/// world whose shape did not grow allocates nothing.
///
/// ```
/// use sluice::{RestoreError, RollbackBuffer, World};
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Score(u32);
///
/// let mut world = World::new();
/// world.insert(Score(0));
/// world.snapshot_service::<Score>();
/// let mut buffer = RollbackBuffer::new(2);
/// for frame in 0..3 {
///     world.get_mut::<Score>().unwrap().0 = frame as u32 * 10;
///     buffer.save(frame, &world)?;
/// }
/// buffer.load(1, &mut world)?;
/// assert_eq!(world.get::<Score>(), Some(&Score(10)));
/// assert_eq!(buffer.load(0, &mut world), Err(RestoreError::NotKept { frame: 0 }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RollbackBuffer {
    /// The slots: the frame each holds (`None`: nothing, or a failed save)
    /// and its snapshot.
    slots: Vec<(Option<i64>, Snapshot)>,
    capacity: usize,
}

impl RollbackBuffer {
    /// A buffer keeping the last `capacity` frames saved (at least one: a
    /// capacity of 0 keeps one).
    pub fn new(capacity: usize) -> Self {
        Self {
            slots: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// How many frames it keeps at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Snapshots `world` as frame `frame`: into the slot already holding
    /// that frame (saved again after a rollback), else a free slot, else
    /// the slot of the oldest frame, whose memory it reuses.
    ///
    /// # Errors
    /// As [`World::snapshot_into`]; the slot then keeps nothing.
    pub fn save(&mut self, frame: i64, world: &World) -> Result<(), SnapshotError> {
        let index = match self.slots.iter().position(|(kept, _)| *kept == Some(frame)) {
            Some(index) => index,
            None if self.slots.len() < self.capacity => {
                self.slots.push((None, Snapshot::new()));
                self.slots.len() - 1
            }
            None => self
                .slots
                .iter()
                .enumerate()
                .min_by_key(|(_, (kept, _))| kept.map_or(i128::MIN, i128::from))
                .map(|(index, _)| index)
                .expect("a full buffer has a slot"),
        };
        let (kept, snapshot) = &mut self.slots[index];
        *kept = None;
        world.snapshot_into(snapshot)?;
        *kept = Some(frame);
        Ok(())
    }

    /// Restores frame `frame` into `world`.
    ///
    /// # Errors
    /// [`RestoreError::NotKept`] when the frame is not kept (never saved,
    /// or overwritten since); otherwise as [`World::restore`].
    pub fn load(&self, frame: i64, world: &mut World) -> Result<(), RestoreError> {
        let snapshot = self.get(frame).ok_or(RestoreError::NotKept { frame })?;
        world.restore(snapshot)
    }

    /// The snapshot of frame `frame`, if kept.
    pub fn get(&self, frame: i64) -> Option<&Snapshot> {
        self.slots
            .iter()
            .find(|(kept, _)| *kept == Some(frame))
            .map(|(_, snapshot)| snapshot)
    }

    /// The frames kept, in no particular order.
    pub fn frames(&self) -> impl Iterator<Item = i64> + '_ {
        self.slots.iter().filter_map(|(kept, _)| *kept)
    }

    /// Forgets every frame, keeping the memory.
    pub fn clear(&mut self) {
        for (kept, snapshot) in &mut self.slots {
            *kept = None;
            snapshot.clear();
        }
    }
}
