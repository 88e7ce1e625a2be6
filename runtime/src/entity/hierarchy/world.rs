//! The relation from the world, between iterations or in a whole-world
//! system: attach, detach, despawn a subtree, and walk.

use super::relation;
use super::traverse::{Ancestors, DescendantsBreadthFirst, DescendantsDepthFirst};
use crate::entity::{Bundle, Entities, Entity, EntityError};
use crate::world::World;

impl World {
    /// Makes `parent` the parent of `child` (Bevy's
    /// `entity_mut(child).insert(ChildOf(parent))`): `child` is listed last
    /// in `parent`'s [`Children`](crate::Children), unlisted from its old
    /// parent's. Setting the parent it already has changes nothing.
    ///
    /// Hooks and observers of `ChildOf` see it as an insert: `Add` and
    /// `Insert` for a first parent, `Replace` (the old parent still named)
    /// then `Insert` for another (chapter 16 of the guide, "Reparenting").
    ///
    /// ```
    /// use sluice::{EntityError, World};
    ///
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.set_parent(b, a)?;
    /// assert_eq!(world.parent(b), Some(a));
    /// assert_eq!(world.set_parent(a, b), Err(EntityError::ParentCycle { child: a, parent: b }));
    /// # Ok::<(), EntityError>(())
    /// ```
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] (either is not alive),
    /// [`EntityError::OwnParent`], [`EntityError::ParentCycle`] (`parent`
    /// descends from `child`: the message names both),
    /// [`EntityError::Frozen`] (a frozen entity would change archetype).
    /// A refused change changes nothing.
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), EntityError> {
        self.observed_attach(child, parent)
    }

    /// Attaches `child` to `parent`: [`set_parent`](Self::set_parent)
    /// from the parent's side.
    ///
    /// # Errors
    /// As [`set_parent`](Self::set_parent).
    pub fn add_child(&mut self, parent: Entity, child: Entity) -> Result<(), EntityError> {
        self.observed_attach(child, parent)
    }

    /// Spawns an entity with `bundle` as the last child of `parent`.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] or [`EntityError::Frozen`] for the
    /// parent, [`EntityError::DuplicateComponent`] for the bundle; nothing
    /// is spawned.
    pub fn spawn_child<B: Bundle>(
        &mut self,
        parent: Entity,
        bundle: B,
    ) -> Result<Entity, EntityError> {
        if !self.entities().contains(parent) {
            return Err(EntityError::NoSuchEntity { entity: parent });
        }
        // Spawned as any entity (its hooks and observers run), then listed.
        let child = self.observed_spawn(bundle)?;
        if let Err(error) = self.observed_attach(child, parent) {
            // Only a frozen parent without children gets here.
            let _ = self.despawn(child);
            return Err(error);
        }
        Ok(child)
    }

    /// Takes `child` off its parent; the parent it had (`None` when it had
    /// none, or a stale one). Hooks and observers of `ChildOf` see its
    /// `Replace` then `Remove` first (nothing when it had no parent).
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`], or [`EntityError::Frozen`] when it
    /// has a parent (nothing changes).
    pub fn remove_parent(&mut self, child: Entity) -> Result<Option<Entity>, EntityError> {
        self.observed_detach(child)
    }

    /// Despawns `entity` and its whole subtree, children before parents,
    /// and how many entities that was. A plain [`despawn`](Self::despawn)
    /// does the same (it returns no count). The entities of the subtree a
    /// hook or observer it set off despawned first are gone all the same
    /// but not counted.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] (nothing changes).
    pub fn despawn_recursive(&mut self, entity: Entity) -> Result<usize, EntityError> {
        self.observed_despawn_tree(entity)
    }

    /// `child`'s parent, if it has a live one (a stale parent reads as
    /// none).
    pub fn parent(&self, child: Entity) -> Option<Entity> {
        relation::parent_of(self.entities(), child)
    }

    /// `parent`'s children in order (empty when it has none or is not
    /// alive).
    pub fn children(&self, parent: Entity) -> &[Entity] {
        relation::children_of(self.entities(), parent)
    }

    /// Every descendant of `root`, depth-first in pre-order: a parent
    /// before its children, children in order, a whole subtree before the
    /// next sibling.
    ///
    /// ```
    /// use sluice::World;
    ///
    /// let mut world = World::new();
    /// let root = world.spawn(());
    /// let a = world.spawn_child(root, ())?;
    /// let b = world.spawn_child(root, ())?;
    /// let a1 = world.spawn_child(a, ())?;
    /// assert_eq!(world.descendants(root).collect::<Vec<_>>(), [a, a1, b]);
    /// assert_eq!(world.descendants_breadth_first(root).collect::<Vec<_>>(), [a, b, a1]);
    /// assert_eq!(world.ancestors(a1).collect::<Vec<_>>(), [a, root]);
    /// # Ok::<(), sluice::EntityError>(())
    /// ```
    pub fn descendants(&self, root: Entity) -> DescendantsDepthFirst<'_, &Entities> {
        DescendantsDepthFirst::new(self.entities(), root)
    }

    /// Every descendant of `root` level by level (children, then
    /// grandchildren, ...), each level in order.
    pub fn descendants_breadth_first(
        &self,
        root: Entity,
    ) -> DescendantsBreadthFirst<'_, &Entities> {
        DescendantsBreadthFirst::new(self.entities(), root)
    }

    /// The ancestors of `entity`, its parent first, up to its root.
    pub fn ancestors(&self, entity: Entity) -> Ancestors<&Entities> {
        let entities = self.entities();
        Ancestors::new(entities, entity, entities.len())
    }
}
