//! Properties of the planner on random graphs (up to 200 nodes over up to 16
//! services), checked against plain reference rules written out here.

use proptest::prelude::*;
use sluice::{
    DiagnosticKind, Graph, NodeBuilder, NodeIndex, NodeRef, Packing, Plan, PlanOptions, Reason,
};

/// One random node: services read and written (a write implies a read).
#[derive(Debug, Clone)]
struct Spec {
    reads: Vec<usize>,
    writes: Vec<usize>,
    exclusive: bool,
}

/// A random graph: nodes, and ordering declarations `(from, to, as_after)`:
/// `to.after(from)` when `as_after`, else `from.before(to)`.
#[derive(Debug, Clone)]
struct Input {
    nodes: Vec<Spec>,
    orderings: Vec<(usize, usize, bool)>,
}

impl Input {
    fn touches(&self, node: usize, service: usize) -> bool {
        let spec = &self.nodes[node];
        spec.reads.contains(&service) || spec.writes.contains(&service)
    }

    /// The plan-format rule: one writes what the other reads or writes, or
    /// either is exclusive.
    fn conflicts(&self, a: usize, b: usize) -> bool {
        let (sa, sb) = (&self.nodes[a], &self.nodes[b]);
        sa.exclusive
            || sb.exclusive
            || sa.writes.iter().any(|&s| self.touches(b, s))
            || sb.writes.iter().any(|&s| self.touches(a, s))
    }

    fn declared(&self, from: usize, to: usize) -> bool {
        self.orderings.iter().any(|&(f, t, _)| f == from && t == to)
    }

    fn graph(&self) -> Graph {
        let mut graph = Graph::new();
        for (i, spec) in self.nodes.iter().enumerate() {
            let mut node = NodeBuilder::new(format!("n{i}"));
            for &s in &spec.reads {
                node = node.reads_named(format!("S{s}"));
            }
            for &s in &spec.writes {
                node = node.gates_named(format!("S{s}"));
            }
            if spec.exclusive {
                node = node.exclusive();
            }
            for &(from, to, as_after) in &self.orderings {
                if as_after && to == i {
                    node = node.after(format!("n{from}"));
                } else if !as_after && from == i {
                    node = node.before(format!("n{to}"));
                }
            }
            graph.add_node(node);
        }
        graph
    }

    /// Plan order by the reference rule: repeatedly take the lowest
    /// registration index whose declared predecessors are all placed.
    fn reference_order(&self) -> Option<Vec<usize>> {
        let n = self.nodes.len();
        let mut placed = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let next = (0..n).find(|&v| {
                !placed[v]
                    && self
                        .orderings
                        .iter()
                        .all(|&(from, to, _)| to != v || placed[from])
            })?;
            placed[next] = true;
            order.push(next);
        }
        Some(order)
    }

    /// The reference stage rule: each node, in `order`, in the earliest stage
    /// after every earlier node it conflicts with or must follow.
    fn reference_stages(&self, order: &[usize]) -> Vec<usize> {
        let mut stage = vec![0; self.nodes.len()];
        for (i, &v) in order.iter().enumerate() {
            stage[v] = order[..i]
                .iter()
                .filter(|&&u| self.conflicts(u, v) || self.declared(u, v))
                .map(|&u| stage[u] + 1)
                .max()
                .unwrap_or(0);
        }
        stage
    }

    /// The reference first-fit rule over the reference order.
    fn reference_first_fit(&self, order: &[usize]) -> Vec<usize> {
        let mut stage = vec![usize::MAX; self.nodes.len()];
        let mut members: Vec<Vec<usize>> = Vec::new();
        for &v in order {
            let lowest = (0..self.nodes.len())
                .filter(|&u| self.declared(u, v))
                .map(|u| stage[u] + 1)
                .max()
                .unwrap_or(0);
            let mut s = lowest;
            while s < members.len() && members[s].iter().any(|&u| self.conflicts(u, v)) {
                s += 1;
            }
            if s == members.len() {
                members.push(Vec::new());
            }
            members[s].push(v);
            stage[v] = s;
        }
        stage
    }
}

fn spec(services: usize) -> impl Strategy<Value = Spec> {
    let ids = prop::collection::vec(0..services, 0..4);
    (ids.clone(), ids, prop::bool::weighted(0.04)).prop_map(|(reads, writes, exclusive)| Spec {
        reads,
        writes,
        exclusive,
    })
}

/// Nodes plus orderings that agree with a hidden random permutation (so the
/// graph is acyclic but the order is not registration order).
fn acyclic() -> impl Strategy<Value = Input> {
    (1usize..=200, 1usize..=16)
        .prop_flat_map(|(n, services)| {
            let rank = Just((0..n).collect::<Vec<usize>>()).prop_shuffle();
            let pairs = prop::collection::vec((0..n, 0..n, any::<bool>()), 0..n);
            (prop::collection::vec(spec(services), n), rank, pairs)
        })
        .prop_map(|(nodes, rank, pairs)| {
            let orderings = pairs
                .into_iter()
                .filter(|&(a, b, _)| rank[a] < rank[b])
                .collect();
            Input { nodes, orderings }
        })
}

/// Nodes plus arbitrary orderings: cycles likely.
fn any_orderings() -> impl Strategy<Value = Input> {
    (1usize..=40, 1usize..=8)
        .prop_flat_map(|(n, services)| {
            let pairs = prop::collection::vec((0..n, 0..n, any::<bool>()), 0..2 * n);
            (prop::collection::vec(spec(services), n), pairs)
        })
        .prop_map(|(nodes, orderings)| Input { nodes, orderings })
}

/// What each node reaches through the plan's edges.
fn reachability(plan: &Plan) -> Vec<Vec<bool>> {
    let n = plan.len();
    let compiled = plan.compiled();
    let mut reach = vec![vec![false; n]; n];
    for &v in compiled.order.iter().rev() {
        for &to in compiled.successors(v) {
            let (low, high) = reach.split_at_mut((v as usize).max(to as usize));
            let (from_set, to_set) = if (v as usize) < (to as usize) {
                (&mut low[v as usize], &high[0])
            } else {
                (&mut high[0], &low[to as usize])
            };
            from_set[to as usize] = true;
            for (target, &reached) in from_set.iter_mut().zip(to_set) {
                *target |= reached;
            }
        }
    }
    reach
}

fn stages_of(plan: &Plan) -> Vec<usize> {
    (0..plan.len())
        .map(|i| plan.stage_of(NodeIndex(i as u32)))
        .collect()
}

/// The properties every plan of an acyclic input has, whatever the packing.
fn check_plan(input: &Input, plan: &Plan) -> Result<(), TestCaseError> {
    let n = input.nodes.len();
    let reach = reachability(plan);
    let pos = |v: usize| plan.position(NodeIndex(v as u32));
    for &(from, to, _) in &input.orderings {
        prop_assert!(pos(from) < pos(to), "n{from} must come before n{to}");
        prop_assert!(reach[from][to], "n{to} must wait for n{from}");
    }
    for (a, reached_from_a) in reach.iter().enumerate() {
        for b in a + 1..n {
            if input.conflicts(a, b) {
                prop_assert!(
                    reached_from_a[b] || reach[b][a],
                    "conflicting n{a} and n{b} are not ordered"
                );
            }
        }
    }
    for edge in plan.edges() {
        let (from, to) = (edge.from.index(), edge.to.index());
        prop_assert!(pos(from) < pos(to));
        prop_assert!(!edge.reasons.is_empty());
        for reason in edge.reasons {
            let justified = match *reason {
                Reason::After => input.orderings.contains(&(from, to, true)),
                Reason::Before => input.orderings.contains(&(from, to, false)),
                Reason::Exclusive => input.nodes[from].exclusive || input.nodes[to].exclusive,
                Reason::Lane { service, .. } => {
                    let name = plan.service_name(service);
                    let s: usize = name[1..].parse().unwrap();
                    input.touches(from, s)
                        && input.touches(to, s)
                        && (input.nodes[from].writes.contains(&s)
                            || input.nodes[to].writes.contains(&s))
                }
                _ => false,
            };
            prop_assert!(justified, "unjustified {reason:?} on n{from} -> n{to}");
        }
    }
    // The stage view is the longest path in the plan's own order.
    let order: Vec<usize> = plan.order().map(NodeIndex::index).collect();
    prop_assert_eq!(stages_of(plan), input.reference_stages(&order));
    Ok(())
}

/// Order, edges with reasons, stages: everything two equal plans share.
type Snapshot = (Vec<u32>, Vec<(u32, u32, Vec<Reason>)>, Vec<Vec<NodeIndex>>);

fn snapshot(plan: &Plan) -> Snapshot {
    (
        plan.compiled().order.clone(),
        plan.edges()
            .map(|e| (e.from.0, e.to.0, e.reasons.to_vec()))
            .collect(),
        plan.stages().map(<[NodeIndex]>::to_vec).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn plans_follow_the_rule_of_ordering(input in acyclic()) {
        let plan = input.graph().build(&PlanOptions::default()).unwrap();
        let reference = input.reference_order().unwrap();
        let order: Vec<usize> = plan.order().map(NodeIndex::index).collect();
        prop_assert_eq!(&order, &reference);
        check_plan(&input, &plan)?;
        prop_assert_eq!(stages_of(&plan), input.reference_stages(&reference));
        let again = input.graph().build(&PlanOptions::default()).unwrap();
        prop_assert_eq!(snapshot(&plan), snapshot(&again));
    }

    #[test]
    fn first_fit_plans_follow_the_reference_packing(input in acyclic()) {
        let options = PlanOptions { packing: Packing::FirstFit, ..PlanOptions::default() };
        let plan = input.graph().build(&options).unwrap();
        check_plan(&input, &plan)?;
        let reference = input.reference_order().unwrap();
        prop_assert_eq!(stages_of(&plan), input.reference_first_fit(&reference));
        let again = input.graph().build(&options).unwrap();
        prop_assert_eq!(snapshot(&plan), snapshot(&again));
    }

    #[test]
    fn cycles_are_real(input in any_orderings()) {
        let result = input.graph().build(&PlanOptions::default());
        match (input.reference_order(), result) {
            (Some(_), Ok(plan)) => check_plan(&input, &plan)?,
            (None, Err(errors)) => {
                let mut cycles = 0;
                for diagnostic in errors.diagnostics() {
                    let DiagnosticKind::Cycle { path } = &diagnostic.kind else { continue };
                    cycles += 1;
                    let index = |r: &NodeRef| match r {
                        NodeRef::Node(n) => n.index(),
                        _ => unreachable!("no markers or groups here"),
                    };
                    for (i, step) in path.iter().enumerate() {
                        let next = &path[(i + 1) % path.len()];
                        prop_assert!(
                            input.declared(index(step), index(next)),
                            "{} -> {} is not a declared ordering", index(step), index(next)
                        );
                    }
                    let mut members: Vec<usize> = path.iter().map(index).collect();
                    members.sort_unstable();
                    members.dedup();
                    prop_assert_eq!(members.len(), path.len(), "a cycle visits each node once");
                }
                prop_assert!(cycles > 0);
            }
            (reference, result) => prop_assert!(
                false,
                "reference acyclic: {}, planner: {:?}",
                reference.is_some(),
                result.err()
            ),
        }
    }
}
