//! The one place both sides of the relation change: attach, detach,
//! despawn a subtree. Each checks everything first and then changes, so a
//! refused change changes nothing.
//!
//! These change the store alone and fire nothing; the world's
//! `observed_attach` / `observed_detach` (`hierarchy/observed.rs`) wrap
//! them, firing `ChildOf`'s lifecycle events around them when anything
//! observes it.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::{ChildOf, Children};
use crate::entity::{Entities, Entity, EntityError};

/// `child`'s parent, if it has one that is alive: a stale parent (one
/// despawned behind the runtime's back) is never followed.
#[inline]
pub(crate) fn parent_of(entities: &Entities, child: Entity) -> Option<Entity> {
    let parent = entities.get::<ChildOf>(child)?.parent();
    entities.contains(parent).then_some(parent)
}

/// `parent`'s children (empty when it has none or is not alive).
#[inline]
pub(crate) fn children_of(entities: &Entities, parent: Entity) -> &[Entity] {
    entities
        .get::<Children>(parent)
        .map_or(&[][..], Children::as_slice)
}

/// Whether `child` is alive and its `ChildOf` names `parent`: the check
/// every walk down makes before following a listed child.
#[inline]
pub(crate) fn is_child_of(entities: &Entities, child: Entity, parent: Entity) -> bool {
    entities
        .get::<ChildOf>(child)
        .is_some_and(|of| of.parent() == parent)
}

/// Makes `parent` the parent of `child`: lists `child` last in
/// `parent`'s [`Children`] and unlists it from its old parent's. Setting
/// the parent it has already changes nothing.
///
/// # Errors
/// As [`check_attach`]. A refused attach changes nothing.
pub(crate) fn attach(
    entities: &mut Entities,
    child: Entity,
    parent: Entity,
) -> Result<(), EntityError> {
    match check_attach(entities, child, parent)? {
        Attach::Unchanged => Ok(()),
        Attach::Move { old } => {
            apply_attach(entities, child, parent, Some(old));
            Ok(())
        }
        Attach::First => {
            apply_attach(entities, child, parent, None);
            Ok(())
        }
    }
}

/// What attaching a child to a parent would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attach {
    /// It has that parent already: nothing changes.
    Unchanged,
    /// It has a parent (`old`, alive or not): its `ChildOf` is replaced.
    Move {
        /// The parent it had.
        old: Entity,
    },
    /// It has no parent: it gains a `ChildOf`.
    First,
}

/// Everything [`attach`] checks before changing anything, and what it
/// would do.
///
/// # Errors
/// [`EntityError::NoSuchEntity`] (either not alive),
/// [`EntityError::OwnParent`], [`EntityError::ParentCycle`] (`parent`
/// descends from `child`), [`EntityError::Frozen`] (the child has no
/// parent yet, or the parent no children, and it cannot change archetype).
pub(crate) fn check_attach(
    entities: &Entities,
    child: Entity,
    parent: Entity,
) -> Result<Attach, EntityError> {
    if child == parent {
        return Err(EntityError::OwnParent { entity: child });
    }
    for entity in [child, parent] {
        if !entities.contains(entity) {
            return Err(EntityError::NoSuchEntity { entity });
        }
    }
    // Walk up from the parent: meeting the child means a cycle. A child
    // without children cannot be met (so building a deep chain leaf by
    // leaf costs no walk). The relation is acyclic, so the walk ends; the
    // bound only guards a relation forged behind the runtime's back.
    let mut at = parent;
    let steps = if entities.get::<Children>(child).is_some() {
        entities.len() + 1
    } else {
        0
    };
    for _ in 0..steps {
        if at == child {
            return Err(EntityError::ParentCycle { child, parent });
        }
        match parent_of(entities, at) {
            Some(up) => at = up,
            None => break,
        }
    }
    let old = entities.get::<ChildOf>(child).map(ChildOf::parent);
    if old == Some(parent) && children_of(entities, parent).contains(&child) {
        return Ok(Attach::Unchanged);
    }
    if old.is_none() && entities.is_frozen(child) {
        return Err(EntityError::Frozen { entity: child });
    }
    if entities.get::<Children>(parent).is_none() && entities.is_frozen(parent) {
        return Err(EntityError::Frozen { entity: parent });
    }
    Ok(match old {
        Some(old) => Attach::Move { old },
        None => Attach::First,
    })
}

/// The change [`check_attach`] allowed: both alive, no cycle, neither
/// frozen where it would change archetype (so nothing here can fail).
fn apply_attach(entities: &mut Entities, child: Entity, parent: Entity, old: Option<Entity>) {
    if let Some(old) = old {
        unlist(entities, old, child);
    }
    match entities.get_mut::<ChildOf>(child) {
        Some(of) => of.0 = parent,
        // Cannot fail: alive, not frozen (checked), one field.
        None => drop(entities.insert(child, (ChildOf(parent),))),
    }
    match entities.get_mut::<Children>(parent) {
        Some(children) => children.0.push(child),
        None => drop(entities.insert(parent, (Children(vec![child]),))),
    }
}

/// Takes `child` off its parent: unlists it and removes its `ChildOf`. The
/// parent it had, if that one was alive; `None` when it had none.
///
/// # Errors
/// [`EntityError::NoSuchEntity`], or [`EntityError::Frozen`] when it has a
/// parent and cannot change archetype (nothing changes).
pub(crate) fn detach(
    entities: &mut Entities,
    child: Entity,
) -> Result<Option<Entity>, EntityError> {
    if !entities.contains(child) {
        return Err(EntityError::NoSuchEntity { entity: child });
    }
    let Some(parent) = entities.get::<ChildOf>(child).map(ChildOf::parent) else {
        return Ok(None);
    };
    if entities.is_frozen(child) {
        return Err(EntityError::Frozen { entity: child });
    }
    unlist(entities, parent, child);
    entities.remove_present::<(ChildOf,)>(child)?;
    Ok(entities.contains(parent).then_some(parent))
}

/// Takes `child` out of `parent`'s list (if `parent` is alive and lists
/// it), removing the list with its last entry unless `parent` is frozen.
fn unlist(entities: &mut Entities, parent: Entity, child: Entity) {
    let Some(children) = entities.get_mut::<Children>(parent) else {
        return;
    };
    children.0.retain(|&listed| listed != child);
    if children.0.is_empty() && !entities.is_frozen(parent) {
        // Cannot fail: alive, not frozen, one field.
        let _ = entities.remove_present::<(Children,)>(parent);
    }
}

/// Despawns `entity` keeping the relation whole: with its subtree when it
/// has children, unlisted from its parent when it has one; a plain despawn
/// otherwise (one registry lookup more than [`Entities::despawn`] while no
/// hierarchy exists, two otherwise).
///
/// # Errors
/// [`EntityError::NoSuchEntity`].
pub(crate) fn despawn_related(entities: &mut Entities, entity: Entity) -> Result<(), EntityError> {
    let Some(child_of) = entities.components().id_of::<ChildOf>() else {
        return entities.despawn(entity);
    };
    let children = entities.components().id_of::<Children>();
    let (archetype, _) = entities
        .location_of(entity)
        .ok_or(EntityError::NoSuchEntity { entity })?;
    if archetype.contains(child_of) || children.is_some_and(|id| archetype.contains(id)) {
        despawn_tree(entities, entity).map(drop)
    } else {
        entities.despawn(entity)
    }
}

/// Despawns `root` and every descendant, children before parents (the
/// deepest level first, each level in reverse listing order), after
/// unlisting `root` from its parent. How many entities it despawned.
///
/// Only verified links are followed (a listed child whose `ChildOf` names
/// another entity is left alone). If a component's `Drop` panics, the rest
/// of the subtree is still despawned, and the first panic is resumed once
/// it is: nothing done is lost.
///
/// # Errors
/// [`EntityError::NoSuchEntity`] (nothing changes).
pub(crate) fn despawn_tree(entities: &mut Entities, root: Entity) -> Result<usize, EntityError> {
    let order = take_subtree(entities, root)?;
    Ok(despawn_in_order(&order, |entity| entities.despawn(entity)))
}

/// Unlists `root` from its parent and returns its subtree, `root` first
/// and every child after its parent (level by level, each level in listing
/// order): despawned in reverse, children go before parents.
///
/// # Errors
/// [`EntityError::NoSuchEntity`] (nothing changes).
pub(crate) fn take_subtree(
    entities: &mut Entities,
    root: Entity,
) -> Result<Vec<Entity>, EntityError> {
    if !entities.contains(root) {
        return Err(EntityError::NoSuchEntity { entity: root });
    }
    if let Some(parent) = entities.get::<ChildOf>(root).map(ChildOf::parent) {
        unlist(entities, parent, root);
    }
    let mut order = vec![root];
    let mut next = 0;
    // The relation is acyclic; the bound only guards one forged behind the
    // runtime's back, whose repeats then despawn once (the rest are refused
    // as already gone).
    let bound = entities.len();
    while next < order.len() && order.len() <= bound {
        let parent = order[next];
        next += 1;
        let Some(children) = entities.get::<Children>(parent) else {
            continue;
        };
        for &child in children.iter() {
            if is_child_of(entities, child, parent) {
                order.push(child);
            }
        }
    }
    Ok(order)
}

/// Despawns `order` in reverse with `despawn` (one entity each), going on
/// past an entity already gone (refused) and past a panic (a component's
/// `Drop`, a hook's), the first of which is resumed once all are done.
/// How many it despawned.
pub(crate) fn despawn_in_order(
    order: &[Entity],
    mut despawn: impl FnMut(Entity) -> Result<(), EntityError>,
) -> usize {
    let mut despawned = 0;
    let mut panic = None;
    for &entity in order.iter().rev() {
        match catch_unwind(AssertUnwindSafe(|| despawn(entity))) {
            Ok(Ok(())) => despawned += 1,
            Ok(Err(_)) => {}
            Err(payload) => {
                // The entity is gone (the store is consistent after a
                // panicking `Drop`); go on with the rest.
                despawned += 1;
                panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
    despawned
}
