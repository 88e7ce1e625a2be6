//! Hierarchies: a parent/child relation as two plain components the
//! runtime keeps consistent, and transform propagation down it.
//!
//! - [`ChildOf`] on a child names its parent; [`Children`] on a parent
//!   lists its children in a stable order (the order they were attached).
//!   Both are ordinary components in archetype columns: queries read them
//!   (`Query<&Children>`, `Query<&ChildOf>`), and their lanes order
//!   systems like any component's.
//! - `relation.rs`: the one place both sides change, on `&mut Entities`
//!   (attach, detach, despawn a subtree). The world's API
//!   (`world.rs`), the commands (`commands.rs`) and a plain despawn all
//!   land through it, so the two sides never disagree. The world's API
//!   and the commands go through `World::observed_attach` /
//!   `observed_detach` (`world/observe/reparent.rs`), which fire
//!   `ChildOf`'s lifecycle events (hooks and observers) around it: `Add`
//!   and `Insert` on a first attach, `Replace` then `Insert` on a move,
//!   `Replace` then `Remove` on a detach; a despawn fires them as for any
//!   component.
//! - `traverse.rs`: from a parent to its children and back, descendants
//!   depth-first or level by level, ancestors.
//! - `transform.rs`: [`Transform`], [`GlobalTransform`] and
//!   [`propagate_transforms`], an ordinary system that recomputes only the
//!   subtrees that changed, in parallel across them.
//!
//! **Storage.** `ChildOf(Entity)` is one column of the child's archetype:
//! every child of every parent shares one archetype (per set of other
//! components), whatever its parent. Flecs stores `(ChildOf, parent)` as a
//! pair, part of the archetype's identity, so every parent made its own
//! table until v4.1 added a non-fragmenting `Parent` storage; sluice has no
//! pairs, so it never fragments: 10,000 hierarchies of 10 entities live in
//! two archetypes (parents with `Children`, leaves without), not 10,000
//! (`benches/benches/hierarchy.rs`, row `many_small`).
//!
//! **Invariants** (kept by `relation.rs`): a child's `ChildOf` names a
//! live parent whose `Children` lists it exactly once; a `Children` lists
//! only live entities whose `ChildOf` names it, and is never empty (it is
//! removed with its last child, unless its entity is frozen); the relation
//! is acyclic (an attach that would close a cycle is refused,
//! [`EntityError::ParentCycle`](crate::EntityError::ParentCycle)). Every
//! traversal still checks each link both ways before following it, so a
//! link broken behind the runtime's back (a `remove::<(ChildOf,)>()`
//! through the generic API, which no hook sees yet) is never followed:
//! a stale parent reads as none.

mod commands;
mod relation;
mod transform;
mod traverse;
mod world;

pub use commands::ChildSpawner;
pub(crate) use relation::{
    Attach, attach as relation_attach, check_attach, despawn_in_order, despawn_related,
    despawn_tree, detach as relation_detach, take_subtree,
};
pub use transform::{
    GlobalTransform, PROPAGATE_TRANSFORMS, Transform, TransformPropagation, propagate_transforms,
};
pub use traverse::{
    Ancestors, DescendantsBreadthFirst, DescendantsDepthFirst, Links, LinksQuery, QueryLinks,
};

use super::Entity;

/// The parent of the entity that holds it. Attach with
/// [`World::set_parent`](crate::World::set_parent) or
/// [`EntityCommands::set_parent`](crate::EntityCommands::set_parent) (or
/// the `add_child`/`with_children` forms); the runtime then lists the
/// entity in the parent's [`Children`]. Despawning the parent despawns the
/// child with it, children before parents.
///
/// It has no public constructor and is not `Clone`: the hierarchy's own
/// API is the only way to attach, so the two sides cannot disagree. That
/// API fires `ChildOf`'s lifecycle events (`Add`, `Insert`, `Replace`,
/// `Remove`) for hooks and observers, as an insert or removal would.
///
/// ```
/// use sluice::{ChildOf, Children, World};
///
/// let mut world = World::new();
/// let ship = world.spawn(());
/// let turret = world.spawn(());
/// world.set_parent(turret, ship)?;
/// assert_eq!(world.entity(turret).unwrap().get::<ChildOf>().unwrap().parent(), ship);
/// assert_eq!(world.entity(ship).unwrap().get::<Children>().unwrap().as_slice(), [turret]);
/// world.despawn(ship)?; // the turret goes first
/// assert!(world.entity(turret).is_none());
/// # Ok::<(), sluice::EntityError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChildOf(Entity);

impl ChildOf {
    /// The parent's entity (alive while the runtime keeps the relation:
    /// see the module's invariants).
    #[inline]
    pub fn parent(&self) -> Entity {
        self.0
    }
}

/// An entity event that propagates ([`Event::next_target`](crate::Event::next_target)
/// through [`traverse::<ChildOf>`](crate::traverse)) bubbles up to the
/// parent, then its parent, to the root; a stale parent ends the walk.
impl crate::Traversal for ChildOf {
    fn next(&self) -> Option<Entity> {
        Some(self.0)
    }
}

/// The children of the entity that holds it, in the order they were
/// attached (a child reattached to the same parent keeps its place; one
/// moved away and back goes last). Kept by the runtime from the children's
/// [`ChildOf`]; never empty.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Children(Vec<Entity>);

impl Children {
    /// The children, in order.
    #[inline]
    pub fn as_slice(&self) -> &[Entity] {
        &self.0
    }

    /// The children, in order.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, Entity> {
        self.0.iter()
    }

    /// How many children.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none (only a frozen parent keeps an empty list).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `entity` is one of them.
    pub fn contains(&self, entity: Entity) -> bool {
        self.0.contains(&entity)
    }
}

impl std::ops::Deref for Children {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Children {
    type Item = &'a Entity;
    type IntoIter = std::slice::Iter<'a, Entity>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// How a save writes the hierarchy (the `serde` feature): a [`ChildOf`]
/// as its parent, [`Children`] as the list. Neither type is `Deserialize`:
/// a load makes them again, and checks that both sides agree, before any
/// of them reaches a world.
#[cfg(feature = "serde")]
pub(crate) struct ChildOfEncoding;

#[cfg(feature = "serde")]
impl crate::snapshot::codec::Encoding<ChildOf> for ChildOfEncoding {
    type Saved<'a> = Entity;
    type Read = Entity;

    fn saved(value: &ChildOf) -> Entity {
        value.0
    }

    fn restored(parent: Entity) -> Result<ChildOf, String> {
        Ok(ChildOf(parent))
    }
}

/// See [`ChildOfEncoding`].
#[cfg(feature = "serde")]
pub(crate) struct ChildrenEncoding;

#[cfg(feature = "serde")]
impl crate::snapshot::codec::Encoding<Children> for ChildrenEncoding {
    type Saved<'a> = &'a [Entity];
    type Read = Vec<Entity>;

    fn saved(value: &Children) -> &[Entity] {
        &value.0
    }

    fn restored(children: Vec<Entity>) -> Result<Children, String> {
        if children.is_empty() {
            return Err("an empty Children (the runtime never keeps one)".to_owned());
        }
        Ok(Children(children))
    }
}
