//! The relation from running systems: hierarchy commands, landing at the
//! boundary in command order through [`relation`](super::relation), like
//! every other command.

use crate::entity::Bundle;
use crate::world::{CommandEntity, Commands, EntityCommands, Spawned};

impl EntityCommands<'_> {
    /// Makes `parent` (alive now, or [`Spawned`] this iteration) this
    /// entity's parent at the boundary; refused there, changing nothing,
    /// as [`World::set_parent`](crate::World::set_parent) refuses (a cycle
    /// names both entities).
    pub fn set_parent(&self, parent: impl Into<CommandEntity>) -> &Self {
        let parent = parent.into();
        self.push_relation("set parent", move |world, child| {
            let parent = world.resolve(parent)?;
            world.observed_attach(child, parent)
        });
        self
    }

    /// Takes this entity off its parent at the boundary (nothing if it has
    /// none by then).
    pub fn remove_parent(&self) -> &Self {
        self.push_relation("remove parent", |world, child| {
            world.observed_detach(child).map(drop)
        });
        self
    }

    /// Makes `child` (alive now, or [`Spawned`] this iteration) this
    /// entity's last child at the boundary.
    pub fn add_child(&self, child: impl Into<CommandEntity>) -> &Self {
        let child = child.into();
        self.push_relation("add child", move |world, parent| {
            let child = world.resolve(child)?;
            world.observed_attach(child, parent)
        });
        self
    }

    /// Spawns children of this entity: each `spawn` of the [`ChildSpawner`]
    /// records a spawn and its attach, landing in that order.
    ///
    /// ```
    /// use sluice::{Commands, NodeBuilder, World};
    ///
    /// struct Captain;
    /// struct Soldier(u32);
    ///
    /// let mut world = World::new();
    /// world.add_system(NodeBuilder::new("muster").system(|commands: Commands| {
    ///     commands.spawn_with((Captain,)).with_children(|squad| {
    ///         for n in 0..3 {
    ///             squad.spawn((Soldier(n),));
    ///         }
    ///     });
    /// }));
    /// world.run_iteration().unwrap();
    /// let captain = world.query_filtered::<sluice::Entity, sluice::With<Captain>>().iter().next().unwrap();
    /// assert_eq!(world.children(captain).len(), 3);
    /// ```
    pub fn with_children(&self, spawn: impl FnOnce(&mut ChildSpawner<'_>)) -> &Self {
        let mut spawner = ChildSpawner {
            commands: self.commands(),
            parent: self.id(),
        };
        spawn(&mut spawner);
        self
    }

    /// Despawns this entity and its subtree, children before parents (a
    /// plain [`despawn`](Self::despawn) does the same).
    pub fn despawn_recursive(&self) {
        self.push_relation("despawn subtree", |world, entity| {
            world.observed_despawn_tree(entity).map(drop)
        });
    }
}

/// Spawns the children of one entity from a running system
/// ([`EntityCommands::with_children`]).
#[derive(Debug)]
pub struct ChildSpawner<'w> {
    commands: Commands<'w>,
    parent: CommandEntity,
}

impl ChildSpawner<'_> {
    /// Spawns an entity with `bundle` as the parent's last child (at the
    /// boundary, in command order).
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Spawned {
        let child = self.commands.spawn(bundle);
        self.commands.entity(child).set_parent(self.parent);
        child
    }

    /// The parent spawned under.
    pub fn parent(&self) -> CommandEntity {
        self.parent
    }

    /// The commands, for other changes.
    pub fn commands(&self) -> Commands<'_> {
        self.commands
    }
}

impl Commands<'_> {
    /// Spawns an entity with `bundle` and returns its commands, as
    /// [`spawn`](Self::spawn) then [`entity`](Self::entity) would: the
    /// start of `commands.spawn_with(..).with_children(..)`.
    pub fn spawn_with<B: Bundle>(&self, bundle: B) -> EntityCommands<'_> {
        let spawned = self.spawn(bundle);
        self.entity(spawned)
    }
}
