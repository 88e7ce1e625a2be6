//! The hierarchy's changes as lifecycle events of `ChildOf`: attaching a
//! child fires `Add` (its first parent) and `Insert`, moving it to another
//! parent fires `Replace` (the old parent still readable) then `Insert`,
//! and detaching it fires `Replace` then `Remove`, in the order of the
//! [module docs](super) (observers before the hook on the way out, the
//! hook first on the way in). Nothing observing `ChildOf`, the plain
//! relation change runs alone.

use crate::entity::hierarchy::{Attach, ChildOf, check_attach, relation_attach, relation_detach};
use crate::entity::{ComponentId, Entity, EntityError};
use crate::world::World;

use super::Lifecycle;
use super::dispatch::Link;

impl World {
    /// `ChildOf`'s id, when something reacts to any of `events` on it.
    fn child_of_observed(&self, events: u8) -> Option<ComponentId> {
        if !self.observe.active {
            return None;
        }
        let id = self.entities().components().id_of::<ChildOf>()?;
        self.observe.any_interest(&[id], events).then_some(id)
    }

    /// Makes `parent` the parent of `child` (see `relation::attach`),
    /// firing `ChildOf`'s `Replace` before a move, and `Add` (a first
    /// parent) and `Insert` after. Setting the parent it has fires
    /// nothing; a refused attach fires nothing and changes nothing.
    pub(crate) fn observed_attach(
        &mut self,
        child: Entity,
        parent: Entity,
    ) -> Result<(), EntityError> {
        let events = Lifecycle::Replace.bit() | Lifecycle::Add.bit() | Lifecycle::Insert.bit();
        let Some(child_of) = self.child_of_observed(events) else {
            return relation_attach(self.entities_mut(), child, parent);
        };
        let change = check_attach(self.entities(), child, parent)?;
        if change == Attach::Unchanged {
            return Ok(());
        }
        let link = Link {
            what: "set parent",
            name: std::any::type_name::<ChildOf>(),
            entity: Some(child),
        };
        self.deliver(link, |world| {
            if let Attach::Move { .. } = change {
                world.fire_all(Lifecycle::Replace, &[child_of], child);
            }
            // Checked again: a `Replace` hook may have written components
            // in place (it cannot change archetypes).
            let first = world.entities().get::<ChildOf>(child).is_none();
            relation_attach(world.entities_mut(), child, parent)?;
            if first {
                world.fire_all(Lifecycle::Add, &[child_of], child);
            }
            world.fire_all(Lifecycle::Insert, &[child_of], child);
            Ok(())
        })
    }

    /// Takes `child` off its parent (see `relation::detach`), firing
    /// `ChildOf`'s `Replace` then `Remove` first (the parent still
    /// readable). No parent: nothing fires.
    pub(crate) fn observed_detach(&mut self, child: Entity) -> Result<Option<Entity>, EntityError> {
        let events = Lifecycle::Replace.bit() | Lifecycle::Remove.bit();
        let Some(child_of) = self.child_of_observed(events) else {
            return relation_detach(self.entities_mut(), child);
        };
        if !self.entities().contains(child) {
            return Err(EntityError::NoSuchEntity { entity: child });
        }
        if self.entities().get::<ChildOf>(child).is_none() {
            return Ok(None);
        }
        if self.entities().is_frozen(child) {
            return Err(EntityError::Frozen { entity: child });
        }
        let link = Link {
            what: "remove parent",
            name: std::any::type_name::<ChildOf>(),
            entity: Some(child),
        };
        self.deliver(link, |world| {
            world.fire_all(Lifecycle::Replace, &[child_of], child);
            world.fire_all(Lifecycle::Remove, &[child_of], child);
            relation_detach(world.entities_mut(), child)
        })
    }
}
