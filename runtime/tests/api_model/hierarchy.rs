//! Issue 37's hierarchy in the API model: a scenario of attaches,
//! reparents, detaches, cycle attempts, spawns under a parent and subtree
//! despawns on entities of its own, compared after every step with a
//! plain reference forest; everything it spawned is despawned before the
//! op ends, so the main model's entities are untouched.
//!
//! The model knows what the documentation promises: `set_parent(c, p)`
//! refuses `c == p` (`OwnParent`), a dead `c` then a dead `p`
//! (`NoSuchEntity`), and a `p` that descends from `c` (`ParentCycle`
//! naming both), changing nothing; otherwise `c` leaves its old parent's
//! list and goes last in `p`'s (staying in place when `p` already is its
//! parent). `remove_parent` returns the old parent. `despawn` takes the
//! whole subtree and unlists the entity from its parent. The world's
//! `parent`, `children`, `descendants` (depth-first) and
//! `descendants_breadth_first` then agree with the model for every node,
//! and every dead node is gone.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{Entity, EntityError, World};

use super::{Op, Real, check};

/// One step of a scenario; indices pick among the scenario's nodes (dead
/// ones included, which the world must refuse).
#[derive(Debug, Clone, Copy)]
pub(super) enum HierarchyStep {
    /// Spawn a node, under the picked live node when `Some`.
    Spawn(Option<u8>),
    /// `set_parent(child, parent)`.
    SetParent(u8, u8),
    /// `add_child(parent, child)`.
    AddChild(u8, u8),
    /// `remove_parent(child)`.
    RemoveParent(u8),
    /// `despawn(node)` (its subtree with it).
    Despawn(u8),
    /// `despawn_recursive(node)`, checking the count.
    DespawnRecursive(u8),
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    let step = prop_oneof![
        4 => proptest::option::weighted(0.8, any::<u8>()).prop_map(HierarchyStep::Spawn),
        4 => (any::<u8>(), any::<u8>()).prop_map(|(c, p)| HierarchyStep::SetParent(c, p)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(p, c)| HierarchyStep::AddChild(p, c)),
        2 => any::<u8>().prop_map(HierarchyStep::RemoveParent),
        1 => any::<u8>().prop_map(HierarchyStep::Despawn),
        1 => any::<u8>().prop_map(HierarchyStep::DespawnRecursive),
    ];
    proptest::collection::vec(step, 1..32).prop_map(Op::Hierarchy)
}

/// The reference forest.
#[derive(Debug, Default)]
struct Forest {
    entities: Vec<Entity>,
    alive: Vec<bool>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
}

impl Forest {
    fn pick(&self, at: u8) -> Option<usize> {
        (!self.entities.is_empty()).then(|| at as usize % self.entities.len())
    }

    fn pick_alive(&self, at: u8) -> Option<usize> {
        let alive: Vec<usize> = (0..self.entities.len())
            .filter(|&i| self.alive[i])
            .collect();
        (!alive.is_empty()).then(|| alive[at as usize % alive.len()])
    }

    fn add(&mut self, entity: Entity, parent: Option<usize>) {
        let index = self.entities.len();
        self.entities.push(entity);
        self.alive.push(true);
        self.parent.push(parent);
        self.children.push(Vec::new());
        if let Some(parent) = parent {
            self.children[parent].push(index);
        }
    }

    /// What `set_parent(c, p)` must return, applying it when `Ok`.
    fn set_parent(&mut self, c: usize, p: usize) -> Result<(), EntityError> {
        let (child, parent) = (self.entities[c], self.entities[p]);
        if c == p {
            return Err(EntityError::OwnParent { entity: child });
        }
        for (i, entity) in [(c, child), (p, parent)] {
            if !self.alive[i] {
                return Err(EntityError::NoSuchEntity { entity });
            }
        }
        let mut at = Some(p);
        while let Some(i) = at {
            if i == c {
                return Err(EntityError::ParentCycle { child, parent });
            }
            at = self.parent[i];
        }
        if self.parent[c] == Some(p) {
            return Ok(());
        }
        if let Some(old) = self.parent[c] {
            self.children[old].retain(|&x| x != c);
        }
        self.parent[c] = Some(p);
        self.children[p].push(c);
        Ok(())
    }

    /// Kills `i`'s subtree; how many died.
    fn despawn(&mut self, i: usize) -> usize {
        if let Some(parent) = self.parent[i] {
            self.children[parent].retain(|&x| x != i);
        }
        let mut stack = vec![i];
        let mut count = 0;
        while let Some(at) = stack.pop() {
            self.alive[at] = false;
            count += 1;
            stack.extend(std::mem::take(&mut self.children[at]));
        }
        count
    }

    fn depth_first(&self, i: usize, out: &mut Vec<Entity>) {
        for &c in &self.children[i] {
            out.push(self.entities[c]);
            self.depth_first(c, out);
        }
    }

    fn breadth_first(&self, i: usize) -> Vec<Entity> {
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([i]);
        while let Some(at) = queue.pop_front() {
            for &c in &self.children[at] {
                out.push(self.entities[c]);
                queue.push_back(c);
            }
        }
        out
    }

    /// The world agrees with the forest, node by node.
    fn compare(&self, world: &World, step: &HierarchyStep) -> Result<(), TestCaseError> {
        for i in 0..self.entities.len() {
            let entity = self.entities[i];
            if !self.alive[i] {
                check(world.entity(entity).is_none(), || {
                    format!("after {step:?}: {entity} should be gone")
                })?;
                continue;
            }
            let parent = self.parent[i].map(|p| self.entities[p]);
            check(world.parent(entity) == parent, || {
                format!(
                    "after {step:?}: {entity}'s parent {:?}, model {parent:?}",
                    world.parent(entity)
                )
            })?;
            let children: Vec<Entity> =
                self.children[i].iter().map(|&c| self.entities[c]).collect();
            check(world.children(entity) == children.as_slice(), || {
                format!(
                    "after {step:?}: {entity}'s children {:?}, model {children:?}",
                    world.children(entity)
                )
            })?;
            let mut depth_first = Vec::new();
            self.depth_first(i, &mut depth_first);
            check(
                world.descendants(entity).collect::<Vec<_>>() == depth_first,
                || {
                    format!(
                        "after {step:?}: {entity}'s descendants differ from the model's {depth_first:?}"
                    )
                },
            )?;
            check(
                world.descendants_breadth_first(entity).collect::<Vec<_>>()
                    == self.breadth_first(i),
                || format!("after {step:?}: {entity}'s levels differ"),
            )?;
        }
        Ok(())
    }
}

pub(super) fn apply(steps: &[HierarchyStep], real: &mut Real) -> Result<(), TestCaseError> {
    let world = &mut real.world;
    let live_before = world.entities().len();
    let mut forest = Forest::default();
    for step in steps {
        match *step {
            HierarchyStep::Spawn(under) => {
                let parent = under.and_then(|at| forest.pick_alive(at));
                let entity = match parent {
                    Some(p) => world
                        .spawn_child(forest.entities[p], ())
                        .map_err(|e| TestCaseError::fail(format!("spawn_child: {e}")))?,
                    None => world.spawn(()),
                };
                forest.add(entity, parent);
            }
            HierarchyStep::SetParent(c, p) | HierarchyStep::AddChild(p, c) => {
                let (Some(c), Some(p)) = (forest.pick(c), forest.pick(p)) else {
                    continue;
                };
                let (child, parent) = (forest.entities[c], forest.entities[p]);
                let got = if matches!(step, HierarchyStep::AddChild(..)) {
                    world.add_child(parent, child)
                } else {
                    world.set_parent(child, parent)
                };
                let expected = forest.set_parent(c, p);
                check(got == expected, || {
                    format!("{step:?}: the world returned {got:?}, the model {expected:?}")
                })?;
            }
            HierarchyStep::RemoveParent(c) => {
                let Some(c) = forest.pick(c) else { continue };
                let child = forest.entities[c];
                let got = world.remove_parent(child);
                let expected = if forest.alive[c] {
                    let old = forest.parent[c].take();
                    if let Some(old) = old {
                        forest.children[old].retain(|&x| x != c);
                    }
                    Ok(old.map(|o| forest.entities[o]))
                } else {
                    Err(EntityError::NoSuchEntity { entity: child })
                };
                check(got == expected, || {
                    format!("{step:?}: the world returned {got:?}, the model {expected:?}")
                })?;
            }
            HierarchyStep::Despawn(i) | HierarchyStep::DespawnRecursive(i) => {
                let Some(i) = forest.pick(i) else { continue };
                let entity = forest.entities[i];
                let recursive = matches!(step, HierarchyStep::DespawnRecursive(_));
                let got = if recursive {
                    world.despawn_recursive(entity)
                } else {
                    world.despawn(entity).map(|()| 0)
                };
                let expected = if forest.alive[i] {
                    let count = forest.despawn(i);
                    Ok(if recursive { count } else { 0 })
                } else {
                    Err(EntityError::NoSuchEntity { entity })
                };
                check(got == expected, || {
                    format!("{step:?}: the world returned {got:?}, the model {expected:?}")
                })?;
            }
        }
        forest.compare(world, step)?;
    }
    // Leave the world as it was: every root takes its subtree.
    for i in 0..forest.entities.len() {
        if forest.alive[i] && forest.parent[i].is_none() {
            let count = forest.despawn(i);
            let got = world.despawn_recursive(forest.entities[i]);
            check(got == Ok(count), || {
                format!("the final despawn: {got:?}, model {count}")
            })?;
        }
    }
    check(world.entities().len() == live_before, || {
        "the scenario left entities behind".to_string()
    })
}
