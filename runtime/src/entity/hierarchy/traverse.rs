//! Walking the relation: descendants depth-first or level by level, and
//! ancestors, from the world ([`World::descendants`](crate::World::descendants))
//! or from a system's [`LinksQuery`].

use std::collections::VecDeque;

use super::{ChildOf, Children};
use crate::entity::query::{Query, QueryFilter};
use crate::entity::{Entities, Entity};

/// Where a walk reads the relation: the world's store, or a system's
/// query. A step down is verified: a listed child is followed only when
/// its `ChildOf` names the parent back (a link broken behind the runtime's
/// back is not followed).
pub trait Links<'a>: Copy {
    /// `parent`'s children.
    fn children(self, parent: Entity) -> &'a [Entity];
    /// Whether `child` is alive and names `parent`.
    fn names(self, child: Entity, parent: Entity) -> bool;
    /// `child`'s live parent.
    fn parent(self, child: Entity) -> Option<Entity>;
}

impl<'a> Links<'a> for &'a Entities {
    fn children(self, parent: Entity) -> &'a [Entity] {
        super::relation::children_of(self, parent)
    }
    fn names(self, child: Entity, parent: Entity) -> bool {
        super::relation::is_child_of(self, child, parent)
    }
    fn parent(self, child: Entity) -> Option<Entity> {
        super::relation::parent_of(self, child)
    }
}

/// Every descendant of an entity, depth-first in pre-order (a parent
/// before its children, children in their listed order, a whole subtree
/// before the next sibling); the entity itself is not included.
#[derive(Debug)]
pub struct DescendantsDepthFirst<'a, L> {
    links: L,
    /// Per level: the parent and the children of it still to visit.
    stack: Vec<(Entity, std::slice::Iter<'a, Entity>)>,
}

impl<'a, L: Links<'a>> DescendantsDepthFirst<'a, L> {
    pub(crate) fn new(links: L, root: Entity) -> Self {
        Self {
            links,
            stack: vec![(root, links.children(root).iter())],
        }
    }
}

impl<'a, L: Links<'a>> Iterator for DescendantsDepthFirst<'a, L> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        loop {
            let (parent, children) = self.stack.last_mut()?;
            let parent = *parent;
            let Some(&child) = children.next() else {
                self.stack.pop();
                continue;
            };
            if !self.links.names(child, parent) {
                continue;
            }
            let below = self.links.children(child);
            if !below.is_empty() {
                self.stack.push((child, below.iter()));
            }
            return Some(child);
        }
    }
}

/// Every descendant of an entity level by level: its children, then their
/// children, each level in listed order (by parent, then child); the
/// entity itself is not included.
#[derive(Debug)]
pub struct DescendantsBreadthFirst<'a, L> {
    links: L,
    queue: VecDeque<Entity>,
    /// The parent whose children are being handed out, and those left.
    current: Option<(Entity, std::slice::Iter<'a, Entity>)>,
}

impl<'a, L: Links<'a>> DescendantsBreadthFirst<'a, L> {
    pub(crate) fn new(links: L, root: Entity) -> Self {
        Self {
            links,
            queue: VecDeque::new(),
            current: Some((root, links.children(root).iter())),
        }
    }
}

impl<'a, L: Links<'a>> Iterator for DescendantsBreadthFirst<'a, L> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        loop {
            let Some((parent, children)) = &mut self.current else {
                let parent = self.queue.pop_front()?;
                self.current = Some((parent, self.links.children(parent).iter()));
                continue;
            };
            let parent = *parent;
            let Some(&child) = children.next() else {
                self.current = None;
                continue;
            };
            if self.links.names(child, parent) {
                self.queue.push_back(child);
                return Some(child);
            }
        }
    }
}

/// The ancestors of an entity, its parent first, up to its root; a stale
/// parent ends the walk.
#[derive(Debug)]
pub struct Ancestors<L> {
    links: L,
    at: Entity,
    /// Steps left: the relation is acyclic, this only guards one forged
    /// behind the runtime's back.
    left: usize,
}

impl<'a, L: Links<'a>> Ancestors<L> {
    pub(crate) fn new(links: L, entity: Entity, bound: usize) -> Self {
        Self {
            links,
            at: entity,
            left: bound,
        }
    }
}

impl<'a, L: Links<'a>> Iterator for Ancestors<L> {
    type Item = Entity;

    fn next(&mut self) -> Option<Entity> {
        self.left = self.left.checked_sub(1)?;
        self.at = self.links.parent(self.at)?;
        Some(self.at)
    }
}

/// The query a system walks the relation through: both lanes shared
/// (`'a` is the elided lifetime a signature writes as
/// `Query<(Option<&ChildOf>, Option<&Children>)>`).
pub type LinksQuery<'w, 'a, F = ()> = Query<'w, (Option<&'a ChildOf>, Option<&'a Children>), F>;

/// A system's view of the relation through a [`LinksQuery`].
pub struct QueryLinks<'q, 'w, 'a, F: QueryFilter> {
    query: &'q LinksQuery<'w, 'a, F>,
}

impl<F: QueryFilter> Clone for QueryLinks<'_, '_, '_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: QueryFilter> Copy for QueryLinks<'_, '_, '_, F> {}

impl<F: QueryFilter> std::fmt::Debug for QueryLinks<'_, '_, '_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryLinks")
    }
}

impl<'q, F: QueryFilter> Links<'q> for QueryLinks<'q, '_, '_, F> {
    fn children(self, parent: Entity) -> &'q [Entity] {
        match self.query.get(parent) {
            Ok((_, Some(children))) => children.as_slice(),
            _ => &[],
        }
    }
    fn names(self, child: Entity, parent: Entity) -> bool {
        matches!(self.query.get(child), Ok((Some(of), _)) if of.parent() == parent)
    }
    fn parent(self, child: Entity) -> Option<Entity> {
        let parent = self.query.get(child).ok()?.0?.parent();
        self.query.get(parent).is_ok().then_some(parent)
    }
}

/// Walks the relation from a system, through a [`LinksQuery`]
/// (`Query<(Option<&ChildOf>, Option<&Children>)>`), whose two shared
/// lanes are all a walk reads.
///
/// ```
/// use sluice::{ChildOf, Children, NodeBuilder, Query, World};
///
/// struct Seen(Vec<sluice::Entity>);
/// let mut world = World::new();
/// let root = world.spawn(());
/// let a = world.spawn_child(root, ())?;
/// let b = world.spawn_child(a, ())?;
/// world.insert(Seen(Vec::new()));
/// world.add_system(NodeBuilder::new("walk").system(
///     move |links: Query<(Option<&ChildOf>, Option<&Children>)>, seen: &mut Seen| {
///         seen.0 = links.iter_descendants(root).collect();
///         assert_eq!(links.iter_ancestors(b).collect::<Vec<_>>(), [a, root]);
///     },
/// ));
/// world.run_iteration().unwrap();
/// assert_eq!(world.get::<Seen>().unwrap().0, [a, b]);
/// # Ok::<(), sluice::EntityError>(())
/// ```
impl<'w, 'a, F: QueryFilter> LinksQuery<'w, 'a, F> {
    /// Every descendant of `root`, depth-first in pre-order.
    pub fn iter_descendants(
        &self,
        root: Entity,
    ) -> DescendantsDepthFirst<'_, QueryLinks<'_, 'w, 'a, F>> {
        DescendantsDepthFirst::new(QueryLinks { query: self }, root)
    }

    /// Every descendant of `root`, level by level.
    pub fn iter_descendants_breadth_first(
        &self,
        root: Entity,
    ) -> DescendantsBreadthFirst<'_, QueryLinks<'_, 'w, 'a, F>> {
        DescendantsBreadthFirst::new(QueryLinks { query: self }, root)
    }

    /// The ancestors of `entity`, its parent first.
    pub fn iter_ancestors(&self, entity: Entity) -> Ancestors<QueryLinks<'_, 'w, 'a, F>> {
        Ancestors::new(QueryLinks { query: self }, entity, usize::MAX)
    }
}
