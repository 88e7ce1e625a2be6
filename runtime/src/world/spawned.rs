//! Entities spawned by commands, named before they exist: a
//! [`Commands::spawn`](super::Commands::spawn) hands back a [`Spawned`]
//! that later commands of the same iteration take wherever they take an
//! entity. The boundary lands commands in record order (by node, then
//! within it), so each spawn gets the same [`Entity`] for every thread
//! count, and a command naming a `Spawned` resolves it when it lands.

use std::fmt;

use crate::entity::{Entity, EntityError};

/// An entity a command of this iteration spawns at the boundary.
///
/// Later commands of the same iteration (of any node ordered after the
/// spawning one, or later in the same node) take it wherever they take an
/// entity ([`Commands::entity`](super::Commands::entity),
/// [`EntityCommands::insert_with`](super::EntityCommands::insert_with),
/// [`EntityCommands::insert_ref`](super::EntityCommands::insert_ref)). A
/// command whose `Spawned` has not landed (the spawn was refused, its node
/// failed, or it lands after the command) is refused, and so is one naming
/// a handle of an earlier iteration or of another world.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Spawned {
    /// The identity of the world's command queue.
    pub(crate) queue: u64,
    /// Which of the queue's iterations recorded the spawn.
    pub(crate) generation: u32,
    /// The spawn command's slot in the queue that iteration.
    pub(crate) slot: u32,
}

impl fmt::Display for Spawned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the entity spawned by command {} of iteration {}",
            self.slot, self.generation
        )
    }
}

/// The entity a command changes: one alive now, or one a command of this
/// iteration spawns.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CommandEntity {
    /// An entity alive when the command was recorded (still checked when it
    /// lands).
    Alive(Entity),
    /// An entity a command of this iteration spawns.
    Spawned(Spawned),
}

impl From<Entity> for CommandEntity {
    fn from(entity: Entity) -> Self {
        Self::Alive(entity)
    }
}

impl From<Spawned> for CommandEntity {
    fn from(spawned: Spawned) -> Self {
        Self::Spawned(spawned)
    }
}

impl fmt::Display for CommandEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Alive(entity) => entity.fmt(f),
            Self::Spawned(spawned) => spawned.fmt(f),
        }
    }
}

/// The entities the commands of the iteration now landing have spawned, by
/// command slot. Reused from boundary to boundary: a steady frame
/// allocates nothing here.
#[derive(Debug, Default)]
pub(crate) struct SpawnTable {
    queue: u64,
    generation: u32,
    /// By slot: the entity its spawn landed as, if it has.
    landed: Vec<Option<Entity>>,
}

impl SpawnTable {
    /// Starts the boundary of `generation` of `queue`, whose commands used
    /// `slots` slots.
    pub(crate) fn start(&mut self, queue: u64, generation: u32, slots: usize) {
        self.queue = queue;
        self.generation = generation;
        self.landed.clear();
        self.landed.resize(slots, None);
    }

    /// The command in `slot` spawned `entity`.
    pub(crate) fn landed(&mut self, slot: u32, entity: Entity) {
        if let Some(at) = self.landed.get_mut(slot as usize) {
            *at = Some(entity);
        }
    }

    /// The entity `target` names, or why there is none yet.
    pub(crate) fn resolve(&self, target: CommandEntity) -> Result<Entity, EntityError> {
        let spawned = match target {
            CommandEntity::Alive(entity) => return Ok(entity),
            CommandEntity::Spawned(spawned) => spawned,
        };
        if spawned.queue != self.queue || spawned.generation != self.generation {
            return Err(EntityError::StaleSpawned { spawned });
        }
        self.landed
            .get(spawned.slot as usize)
            .copied()
            .flatten()
            .ok_or(EntityError::SpawnNotLanded { spawned })
    }
}
