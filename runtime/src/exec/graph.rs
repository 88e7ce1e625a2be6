//! The flat, compiled form of a plan that the executor runs.
//!
//! A [`CompiledGraph`] is a DAG in compressed sparse row (CSR) form: the
//! successors of node `n` are `successors[successor_offsets[n]..successor_offsets[n + 1]]`.
//! Alongside it sit the predecessor count of every node, the roots (nodes
//! with no predecessor) and a topological order (the serial order). Nothing
//! here refers to the planner's types: the planner hands over plain arrays.

use crate::sync::{Ordering, StaticAtomicU64};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// Source of [`CompiledGraph::id`]: every graph gets a fresh one, so an
/// [`ExecutionState`](super::ExecutionState) can check that it belongs to the
/// graph it is run with.
static NEXT_GRAPH_ID: StaticAtomicU64 = StaticAtomicU64::new(1);

/// A DAG of nodes, flattened for the executor.
///
/// Node indices are `0..node_count()`; they are registration indices, so
/// timings and failures are reported by them. The order the serial executor
/// follows is [`order`](Self::order), a topological order (by default the
/// stable one that breaks ties by the smaller index; the planner passes its
/// plan order with [`with_order`](Self::with_order)).
#[derive(Clone)]
pub struct CompiledGraph {
    id: u64,
    successor_offsets: Box<[u32]>,
    successors: Box<[u32]>,
    predecessor_counts: Box<[u32]>,
    roots: Box<[u32]>,
    order: Box<[u32]>,
    names: Box<[Cow<'static, str>]>,
    /// Per node, whether it runs only on the thread that called `run`
    /// (empty: no node is pinned).
    pinned: Box<[bool]>,
}

/// Why a set of arrays is not a valid [`CompiledGraph`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphError {
    /// More nodes or edges than fit in a `u32`.
    TooLarge,
    /// `successor_offsets` is empty, does not start at 0, decreases, or does
    /// not end at `successors.len()`.
    BadOffsets,
    /// An edge points at a node that does not exist.
    NodeOutOfRange {
        /// The node the edge leaves.
        from: u32,
        /// The missing node it points at.
        to: u32,
    },
    /// The given predecessor counts do not match the edges.
    PredecessorCountMismatch {
        /// The first node whose count is wrong.
        node: u32,
    },
    /// The edges contain a cycle (a self-edge included).
    Cycle {
        /// Some node on or behind the cycle (never ready).
        node: u32,
    },
    /// The order given to [`CompiledGraph::with_order`] is not a permutation
    /// of the nodes.
    OrderNotPermutation,
    /// The order given to [`CompiledGraph::with_order`] puts a node before one
    /// of its predecessors.
    OrderNotTopological {
        /// The predecessor.
        from: u32,
        /// The successor placed before it.
        to: u32,
    },
    /// The number of names is not the number of nodes.
    NameCountMismatch,
    /// A node given to [`CompiledGraph::with_pinned`] does not exist.
    PinnedOutOfRange {
        /// The missing node.
        node: u32,
    },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge => f.write_str("graph has more nodes or edges than fit in a u32"),
            Self::BadOffsets => f.write_str(
                "successor offsets must start at 0, never decrease, and end at the number of successors",
            ),
            Self::NodeOutOfRange { from, to } => {
                write!(f, "edge {from} -> {to} points at a node that does not exist")
            }
            Self::PredecessorCountMismatch { node } => {
                write!(f, "predecessor count of node {node} does not match the edges")
            }
            Self::Cycle { node } => write!(f, "graph has a cycle (node {node} never becomes ready)"),
            Self::OrderNotPermutation => f.write_str("order is not a permutation of the nodes"),
            Self::OrderNotTopological { from, to } => {
                write!(f, "order puts node {to} before its predecessor {from}")
            }
            Self::NameCountMismatch => f.write_str("number of names differs from number of nodes"),
            Self::PinnedOutOfRange { node } => {
                write!(f, "pinned node {node} does not exist")
            }
        }
    }
}

impl std::error::Error for GraphError {}

impl CompiledGraph {
    /// Builds a graph of `node_count` nodes from a list of `(from, to)` edges
    /// (duplicates allowed: each one counts).
    pub fn from_edges(node_count: usize, edges: &[(u32, u32)]) -> Result<Self, GraphError> {
        let n = u32::try_from(node_count).map_err(|_| GraphError::TooLarge)?;
        u32::try_from(edges.len()).map_err(|_| GraphError::TooLarge)?;
        let mut offsets = vec![0u32; node_count + 1];
        for &(from, to) in edges {
            if from >= n || to >= n {
                return Err(GraphError::NodeOutOfRange { from, to });
            }
            offsets[from as usize + 1] += 1;
        }
        for i in 0..node_count {
            offsets[i + 1] += offsets[i];
        }
        // Counting sort by source, stable in the given edge order.
        let mut cursor: Vec<u32> = offsets[..node_count].to_vec();
        let mut successors = vec![0u32; edges.len()];
        for &(from, to) in edges {
            let slot = &mut cursor[from as usize];
            successors[*slot as usize] = to;
            *slot += 1;
        }
        Self::from_csr(offsets, successors)
    }

    /// Builds a graph from CSR successor lists; predecessor counts, roots and
    /// the default order are computed.
    pub fn from_csr(successor_offsets: Vec<u32>, successors: Vec<u32>) -> Result<Self, GraphError> {
        let node_count = successor_offsets
            .len()
            .checked_sub(1)
            .ok_or(GraphError::BadOffsets)?;
        let mut counts = vec![0u32; node_count];
        validate_offsets(&successor_offsets, &successors)?;
        for from in 0..node_count {
            let range = successor_offsets[from] as usize..successor_offsets[from + 1] as usize;
            for &to in &successors[range] {
                let count = counts
                    .get_mut(to as usize)
                    .ok_or(GraphError::NodeOutOfRange {
                        from: from as u32,
                        to,
                    })?;
                *count += 1;
            }
        }
        Self::assemble(successor_offsets, successors, counts)
    }

    /// Builds a graph from the three arrays the planner keeps: CSR successor
    /// lists and predecessor counts, which are checked against the edges.
    pub fn from_parts(
        successor_offsets: Vec<u32>,
        successors: Vec<u32>,
        predecessor_counts: Vec<u32>,
    ) -> Result<Self, GraphError> {
        let graph = Self::from_csr(successor_offsets, successors)?;
        if predecessor_counts.len() != graph.node_count() {
            return Err(GraphError::PredecessorCountMismatch {
                node: predecessor_counts.len().min(graph.node_count()) as u32,
            });
        }
        if let Some(node) =
            (0..graph.node_count()).find(|&n| graph.predecessor_counts[n] != predecessor_counts[n])
        {
            return Err(GraphError::PredecessorCountMismatch { node: node as u32 });
        }
        Ok(graph)
    }

    fn assemble(
        successor_offsets: Vec<u32>,
        successors: Vec<u32>,
        predecessor_counts: Vec<u32>,
    ) -> Result<Self, GraphError> {
        let node_count = predecessor_counts.len();
        let roots: Box<[u32]> = (0..node_count as u32)
            .filter(|&n| predecessor_counts[n as usize] == 0)
            .collect();
        // Kahn's algorithm, smallest ready index first: a stable topological
        // order, and the cycle check.
        let mut remaining = predecessor_counts.clone();
        let mut ready: BinaryHeap<Reverse<u32>> = roots.iter().copied().map(Reverse).collect();
        let mut order = Vec::with_capacity(node_count);
        while let Some(Reverse(node)) = ready.pop() {
            order.push(node);
            let range = successor_offsets[node as usize] as usize
                ..successor_offsets[node as usize + 1] as usize;
            for &to in &successors[range] {
                let count = &mut remaining[to as usize];
                *count -= 1;
                if *count == 0 {
                    ready.push(Reverse(to));
                }
            }
        }
        if order.len() != node_count {
            let node = remaining.iter().position(|&c| c != 0).unwrap_or(0) as u32;
            return Err(GraphError::Cycle { node });
        }
        Ok(Self {
            id: NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed),
            successor_offsets: successor_offsets.into(),
            successors: successors.into(),
            predecessor_counts: predecessor_counts.into(),
            roots,
            order: order.into(),
            names: Box::new([]),
            pinned: Box::new([]),
        })
    }

    /// Replaces the serial order (by default the stable topological order
    /// with ties broken by the smaller index) with `order`, which must be a
    /// topological order of every node.
    pub fn with_order(mut self, order: Vec<u32>) -> Result<Self, GraphError> {
        let n = self.node_count();
        if order.len() != n {
            return Err(GraphError::OrderNotPermutation);
        }
        let mut position = vec![u32::MAX; n];
        for (i, &node) in order.iter().enumerate() {
            match position.get_mut(node as usize) {
                Some(p) if *p == u32::MAX => *p = i as u32,
                _ => return Err(GraphError::OrderNotPermutation),
            }
        }
        for from in 0..n as u32 {
            for &to in self.successors(from as usize) {
                if position[to as usize] < position[from as usize] {
                    return Err(GraphError::OrderNotTopological { from, to });
                }
            }
        }
        self.order = order.into();
        Ok(self)
    }

    /// Names the nodes (used for tracing spans); one name per node.
    pub fn with_names<I, S>(mut self, names: I) -> Result<Self, GraphError>
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        let names: Box<[Cow<'static, str>]> = names.into_iter().map(Into::into).collect();
        if names.len() != self.node_count() {
            return Err(GraphError::NameCountMismatch);
        }
        self.names = names;
        Ok(self)
    }

    /// Pins `nodes` to the thread that calls `run` (worker 0, the main
    /// thread in a game): the parallel executor runs them only there, and
    /// never lets another thread take them; every other node runs on any
    /// thread, as before. The order is unchanged. (The serial executor runs
    /// every node on the caller anyway.)
    pub fn with_pinned(mut self, nodes: impl IntoIterator<Item = u32>) -> Result<Self, GraphError> {
        let mut pinned = vec![false; self.node_count()];
        for node in nodes {
            match pinned.get_mut(node as usize) {
                Some(slot) => *slot = true,
                None => return Err(GraphError::PinnedOutOfRange { node }),
            }
        }
        self.pinned = if pinned.contains(&true) {
            pinned.into()
        } else {
            Box::new([])
        };
        Ok(self)
    }

    /// Whether `node` runs only on the thread that calls `run`.
    #[inline]
    pub fn is_pinned(&self, node: usize) -> bool {
        self.pinned.get(node).copied().unwrap_or(false)
    }

    /// Whether any node is pinned.
    #[inline]
    pub fn has_pinned(&self) -> bool {
        !self.pinned.is_empty()
    }

    /// A number unique to this graph (clones share it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.predecessor_counts.len()
    }

    /// The number of edges.
    pub fn edge_count(&self) -> usize {
        self.successors.len()
    }

    /// The successors of `node`.
    pub fn successors(&self, node: usize) -> &[u32] {
        let start = self.successor_offsets[node] as usize;
        let end = self.successor_offsets[node + 1] as usize;
        &self.successors[start..end]
    }

    /// The CSR offsets: `node_count() + 1` entries.
    pub fn successor_offsets(&self) -> &[u32] {
        &self.successor_offsets
    }

    /// The CSR successor array, indexed by [`successor_offsets`](Self::successor_offsets).
    pub fn successor_array(&self) -> &[u32] {
        &self.successors
    }

    /// The number of predecessors of every node.
    pub fn predecessor_counts(&self) -> &[u32] {
        &self.predecessor_counts
    }

    /// The nodes with no predecessor, ascending.
    pub fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// The topological order the serial executor follows.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The name of `node`, or `""` when the graph has no names.
    pub fn name(&self, node: usize) -> &str {
        self.names.get(node).map_or("", |name| name)
    }
}

impl fmt::Debug for CompiledGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledGraph")
            .field("id", &self.id)
            .field("node_count", &self.node_count())
            .field("edge_count", &self.edge_count())
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

fn validate_offsets(offsets: &[u32], successors: &[u32]) -> Result<(), GraphError> {
    if u32::try_from(successors.len()).is_err() || u32::try_from(offsets.len()).is_err() {
        return Err(GraphError::TooLarge);
    }
    let well_formed = offsets.first() == Some(&0)
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets.last().copied() == Some(successors.len() as u32);
    if well_formed {
        Ok(())
    } else {
        Err(GraphError::BadOffsets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_counts_roots_and_order() {
        let g = CompiledGraph::from_edges(5, &[(3, 1), (0, 1), (1, 2), (0, 2), (4, 0)]).unwrap();
        assert_eq!(g.node_count(), 5);
        assert_eq!(g.successors(0), &[1, 2]);
        assert_eq!(g.successors(3), &[1]);
        assert_eq!(g.predecessor_counts(), &[1, 2, 2, 0, 0]);
        assert_eq!(g.roots(), &[3, 4]);
        assert_eq!(g.order(), &[3, 4, 0, 1, 2]);
        let parts = CompiledGraph::from_parts(
            g.successor_offsets().to_vec(),
            g.successor_array().to_vec(),
            vec![1, 2, 2, 0, 0],
        )
        .unwrap();
        assert_eq!(parts.order(), g.order());
        assert_ne!(parts.id(), g.id());
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            CompiledGraph::from_edges(2, &[(0, 1), (1, 0)]).unwrap_err(),
            GraphError::Cycle { node: 0 }
        );
        assert!(matches!(
            CompiledGraph::from_edges(1, &[(0, 0)]),
            Err(GraphError::Cycle { .. })
        ));
        assert_eq!(
            CompiledGraph::from_edges(2, &[(0, 2)]).unwrap_err(),
            GraphError::NodeOutOfRange { from: 0, to: 2 }
        );
        assert_eq!(
            CompiledGraph::from_csr(vec![0, 2], vec![0]).unwrap_err(),
            GraphError::BadOffsets
        );
        assert_eq!(
            CompiledGraph::from_parts(vec![0, 1, 1], vec![1], vec![0, 0]).unwrap_err(),
            GraphError::PredecessorCountMismatch { node: 1 }
        );
        let g = CompiledGraph::from_edges(3, &[(0, 1)]).unwrap();
        assert_eq!(
            g.clone().with_order(vec![1, 0, 2]).unwrap_err(),
            GraphError::OrderNotTopological { from: 0, to: 1 }
        );
        assert_eq!(
            g.clone().with_order(vec![0, 0, 2]).unwrap_err(),
            GraphError::OrderNotPermutation
        );
        assert_eq!(
            g.clone().with_order(vec![2, 0, 1]).unwrap().order(),
            &[2, 0, 1]
        );
        assert_eq!(
            g.clone().with_names(["a"]).unwrap_err(),
            GraphError::NameCountMismatch
        );
        assert_eq!(g.with_names(["a", "b", "c"]).unwrap().name(1), "b");
    }

    #[test]
    fn empty_graph() {
        let g = CompiledGraph::from_edges(0, &[]).unwrap();
        assert_eq!(g.node_count(), 0);
        assert!(g.roots().is_empty());
        assert_eq!(g.name(0), "");
    }
}
