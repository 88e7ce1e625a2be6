//! "Why does `b` wait for `a`?": the chain of edges between two nodes.

use std::collections::VecDeque;

use crate::plan::{Edge, NodeIndex, Plan};

impl Plan {
    /// The shortest chain of edges that orders `a` before `b` (breadth-first
    /// over successors), or `None` when `b` does not wait for `a`. Empty when
    /// `a == b`.
    pub fn why(&self, a: NodeIndex, b: NodeIndex) -> Option<Vec<Edge<'_>>> {
        const UNSEEN: u32 = u32::MAX;
        // Reached nodes (and barriers) remember the edge they were reached by.
        let mut via = vec![UNSEEN; self.successor_offsets.len() - 1];
        let mut queue = VecDeque::from([a.0]);
        while let Some(node) = queue.pop_front() {
            if node == b.0 {
                break;
            }
            let start = self.successor_offsets[node as usize] as usize;
            let end = self.successor_offsets[node as usize + 1] as usize;
            for i in start..end {
                let to = self.successor_targets[i];
                if to != a.0 && via[to as usize] == UNSEEN {
                    via[to as usize] = self.successor_edges[i];
                    queue.push_back(to);
                }
            }
        }
        if a != b && via[b.index()] == UNSEEN {
            return None;
        }
        let mut chain = Vec::new();
        let mut node = b.0;
        while node != a.0 {
            let edge = self.edge(via[node as usize]);
            node = edge.from.0;
            chain.push(edge);
        }
        chain.reverse();
        Some(chain)
    }
}
