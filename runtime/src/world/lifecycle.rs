//! Lifecycle (reference 004): `on_create` in creation order when a node
//! first joins a plan, `on_destroy` in reverse of the actual creation order
//! when the node is removed or the world dropped.
//!
//! Creation order follows `create_after` / `create_before` among the nodes
//! created together (the same rules as update order, without groups or
//! first/last), ties by registration order. A node created later than a node
//! that should have followed it (registered afterwards) breaks the order; the
//! destruction order still reverses what actually happened.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{self, AssertUnwindSafe};

use crate::node::NodeState;
use crate::plan::{
    Diagnostic, DiagnosticKind, Level, NodeIndex, NodeRef, PlanErrors, Plans, Relation,
};
use crate::world::Context;
use crate::world::World;
use crate::world::error::{BoundaryFailure, BoundaryStep};

/// A lifecycle hook: exclusive access to the services its node declares.
pub(crate) type Hook = Box<dyn FnMut(&mut Context<'_>) + Send>;

/// A node's hooks.
#[derive(Default)]
pub(crate) struct NodeHooks {
    pub(crate) on_create: Option<Hook>,
    pub(crate) on_destroy: Option<Hook>,
}

/// Which nodes were created, in the order they were.
#[derive(Default)]
pub(crate) struct Lifecycle {
    /// Per node (registration index): its hooks, when it has any.
    pub(crate) hooks: Vec<Option<Box<NodeHooks>>>,
    /// Per node: whether it has been created.
    pub(crate) created: Vec<bool>,
    /// The nodes created, in the order they were.
    pub(crate) order: Vec<NodeIndex>,
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle")
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl World {
    /// The nodes in `plans` not created yet, in creation order; SL0002 for a
    /// `create_after`/`create_before` naming no node, SL0001 for a cycle.
    pub(super) fn creation_order(&self, plans: &Plans) -> Result<Vec<NodeIndex>, PlanErrors> {
        let nodes = self.graph.nodes();
        let n = nodes.len();
        let created = |i: usize| self.lifecycle.created.get(i).copied().unwrap_or(false);
        let mut pending = vec![false; n];
        for (_, plan) in plans.iter() {
            for node in plan.order() {
                pending[node.index()] = !created(node.index());
            }
        }
        if !pending.iter().any(|&p| p) {
            return Ok(Vec::new());
        }
        let live = |i: usize| nodes[i].state() != NodeState::Removed;
        let find = |target: &str, each: &mut dyn FnMut(usize)| {
            let mut found = false;
            for i in (0..n).filter(|&i| live(i)) {
                if nodes[i].key() == target || nodes[i].name() == target {
                    each(i);
                    found = true;
                }
            }
            found
        };
        let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut waiting = vec![0u32; n];
        let mut diagnostics = Vec::new();
        for i in (0..n).filter(|&i| pending[i]) {
            let node = &nodes[i];
            for (relation, list) in [
                (Relation::After, node.create_after()),
                (Relation::Before, node.create_before()),
            ] {
                for target in list {
                    let known = find(target, &mut |other| {
                        // Created nodes are behind us; others wait their turn.
                        if other == i || !pending[other] {
                            return;
                        }
                        let (from, to) = match relation {
                            Relation::After => (other, i),
                            _ => (i, other),
                        };
                        successors[from].push(to);
                        waiting[to] += 1;
                    });
                    if !known {
                        let message = format!(
                            "`{}` is created {relation} `{target}`, which is not a registered \
                             node; check the spelling or register it",
                            node.name()
                        );
                        let kind = DiagnosticKind::UnknownTarget {
                            source: NodeRef::Node(NodeIndex(i as u32)),
                            target: target.to_string(),
                            relation,
                        };
                        diagnostics.push(Diagnostic::new(
                            Level::Error,
                            kind,
                            message,
                            vec![node.name().to_owned()],
                        ));
                    }
                }
            }
        }
        if !diagnostics.is_empty() {
            return Err(PlanErrors::new(diagnostics));
        }
        let mut ready: BinaryHeap<Reverse<usize>> = (0..n)
            .filter(|&i| pending[i] && waiting[i] == 0)
            .map(Reverse)
            .collect();
        let mut order = Vec::new();
        while let Some(Reverse(i)) = ready.pop() {
            order.push(NodeIndex(i as u32));
            for &to in &successors[i] {
                waiting[to] -= 1;
                if waiting[to] == 0 {
                    ready.push(Reverse(to));
                }
            }
        }
        let left: Vec<usize> = (0..n).filter(|&i| pending[i] && waiting[i] > 0).collect();
        if left.is_empty() {
            return Ok(order);
        }
        let names: Vec<String> = left.iter().map(|&i| nodes[i].name().to_owned()).collect();
        let message = format!(
            "creation cycle among {}: `create_after`/`create_before` order each after \
             another; remove or reverse one of them",
            names.join(", ")
        );
        let kind = DiagnosticKind::Cycle {
            path: left
                .iter()
                .map(|&i| NodeRef::Node(NodeIndex(i as u32)))
                .collect(),
        };
        Err(PlanErrors::new(vec![Diagnostic::new(
            Level::Error,
            kind,
            message,
            names,
        )]))
    }

    /// Runs `on_create` for `order` (from [`creation_order`](Self::creation_order)),
    /// recording each node created; a hook that panics is listed and its
    /// node counts as not created.
    pub(super) fn create(&mut self, order: &[NodeIndex], failures: &mut Vec<BoundaryFailure>) {
        let n = self.graph.nodes().len();
        self.lifecycle.created.resize(n, false);
        for &node in order {
            match self.run_hook(node, true) {
                Ok(()) => {
                    self.lifecycle.created[node.index()] = true;
                    self.lifecycle.order.push(node);
                }
                Err(failure) => failures.push(failure),
            }
        }
    }

    /// Runs `node`'s `on_destroy` if it was created, and forgets its creation.
    pub(super) fn destroy(&mut self, node: NodeIndex) -> Option<BoundaryFailure> {
        if !self
            .lifecycle
            .created
            .get(node.index())
            .copied()
            .unwrap_or(false)
        {
            return None;
        }
        self.lifecycle.created[node.index()] = false;
        self.lifecycle.order.retain(|&n| n != node);
        self.run_hook(node, false).err()
    }

    /// Destroys every created node, in reverse of the order they were created.
    pub(super) fn destroy_all(&mut self) -> Vec<BoundaryFailure> {
        let mut failures = Vec::new();
        while let Some(&node) = self.lifecycle.order.last() {
            failures.extend(self.destroy(node));
        }
        failures
    }

    fn run_hook(&mut self, node: NodeIndex, create: bool) -> Result<(), BoundaryFailure> {
        let Some(Some(hooks)) = self.lifecycle.hooks.get_mut(node.index()) else {
            return Ok(());
        };
        let slot = if create {
            &mut hooks.on_create
        } else {
            &mut hooks.on_destroy
        };
        let Some(mut hook) = slot.take() else {
            return Ok(());
        };
        let (graph, slots) = self.graph.parts_mut();
        let env = crate::system::NodeEnv {
            cells: crate::system::ServiceCells::new(slots),
            graph: &graph,
            descriptor: &graph.nodes()[node.index()],
        };
        // SAFETY: the world is borrowed exclusively (`&mut self`) and no
        // iteration runs: the hook's context is the only way to the services.
        let mut context = unsafe { Context::exclusive(env) };
        let result = panic::catch_unwind(AssertUnwindSafe(|| hook(&mut context)));
        if let Some(Some(hooks)) = self.lifecycle.hooks.get_mut(node.index()) {
            let slot = if create {
                &mut hooks.on_create
            } else {
                &mut hooks.on_destroy
            };
            *slot = Some(hook);
        }
        result.map_err(|payload| {
            let name = self.graph.nodes()[node.index()].name().to_owned();
            let step = if create {
                BoundaryStep::Create { node: name }
            } else {
                BoundaryStep::Destroy { node: name }
            };
            BoundaryFailure::new(step, payload)
        })
    }
}
