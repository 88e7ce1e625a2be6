//! What the world's hooks and observers (`world/observe/`) ask of the
//! store: component ids by type, a bundle's ids, an entity's components.
//! Kept apart from `store.rs` so the store's hot paths stay as they are.

use super::bundle::Bundle;
use super::component::{Component, ComponentId};
use super::entity::Entity;
use super::store::Entities;

impl Entities {
    /// The id of component `C`, registering it if the store has not seen
    /// it yet.
    pub(crate) fn component_id_registering<C: Component>(&mut self) -> ComponentId {
        self.components.register::<C>()
    }

    /// Appends the ids of `B`'s components, in field order, to `ids`
    /// (registering types the store has not seen).
    pub(crate) fn bundle_ids<B: Bundle>(&mut self, ids: &mut Vec<ComponentId>) {
        B::register(&mut self.components, ids);
    }

    /// Whether any component requires another (`required.rs`): a spawn or
    /// insert may then add components its bundle does not name.
    pub(crate) fn has_requirements(&self) -> bool {
        !self.required.is_empty()
    }

    /// The ids of `entity`'s components (in id order); empty when it is
    /// not alive.
    pub(crate) fn component_ids(&self, entity: Entity) -> &[ComponentId] {
        self.archetype_of(entity)
            .and_then(|id| self.archetype(id))
            .map_or(&[], |archetype| archetype.components())
    }

    /// Appends the ids of `entity`'s components (in id order) to `ids`;
    /// nothing when it is not alive.
    pub(crate) fn components_of(&self, entity: Entity, ids: &mut Vec<ComponentId>) {
        if let Some(archetype) = self.archetype_of(entity).and_then(|id| self.archetype(id)) {
            ids.extend_from_slice(archetype.components());
        }
    }
}
