//! The stage view: membership lists, and first-fit packing.
//!
//! The default stage of a node (one more than its latest predecessor's) falls
//! out of the lane walk in `builder`; this module groups nodes by stage and
//! implements the alternative packing.

use fixedbitset::FixedBitSet;

use crate::access::{AccessSet, Touch};
use crate::plan::GraphView;
use crate::plan::NodeIndex;
use crate::plan::builder::MarkerPredecessors;
use crate::plan::order::Explicit;

/// Stage members as CSR over stages, each stage in plan order.
pub(crate) fn members(order: &[u32], stage_of: &[u32], stages: u32) -> (Vec<u32>, Vec<NodeIndex>) {
    let mut offsets = vec![0u32; stages as usize + 1];
    for &node in order {
        offsets[stage_of[node as usize] as usize + 1] += 1;
    }
    for s in 0..stages as usize {
        offsets[s + 1] += offsets[s];
    }
    let mut next = offsets.clone();
    let mut nodes = vec![NodeIndex(u32::MAX); order.len()];
    for &node in order {
        let slot = &mut next[stage_of[node as usize] as usize];
        nodes[*slot as usize] = NodeIndex(node);
        *slot += 1;
    }
    (offsets, nodes)
}

/// What the members of one first-fit stage touch, together.
#[derive(Default)]
struct StageUnion {
    shared: FixedBitSet,
    /// Gated or produced.
    writes: FixedBitSet,
    exclusive: bool,
    occupied: bool,
}

fn contains(set: &FixedBitSet, id: u32) -> bool {
    set.contains(id as usize)
}

fn insert(set: &mut FixedBitSet, id: u32) {
    set.grow(id as usize + 1);
    set.insert(id as usize);
}

impl StageUnion {
    /// Whether a node with `access` conflicts with no member.
    fn admits(&self, access: &AccessSet) -> bool {
        if !self.occupied {
            return true;
        }
        if self.exclusive || access.is_exclusive() {
            return false;
        }
        // A member's write meets any access; a member's read meets a write.
        !access.touches().iter().any(|touch| {
            contains(&self.writes, touch.id)
                || (touch.is(Touch::WRITES) && contains(&self.shared, touch.id))
        })
    }

    fn add(&mut self, access: &AccessSet) {
        self.occupied = true;
        self.exclusive |= access.is_exclusive();
        for touch in access.touches() {
            if touch.is(Touch::SHARED) {
                insert(&mut self.shared, touch.id);
            }
            if touch.is(Touch::WRITES) {
                insert(&mut self.writes, touch.id);
            }
        }
    }
}

/// First-fit: each node, in `order`, goes into the first stage after its
/// explicit predecessors whose members it does not conflict with. Returns the
/// new plan order: by stage, then by the old order.
///
/// The lane walk over the new order gives back exactly these stages: a node
/// placed above its lower bound conflicts with a member of the stage below it,
/// and every member of a stage conflicts with none of the others.
pub(crate) fn first_fit(
    graph: &GraphView<'_>,
    edges: &Explicit,
    marker_preds: &MarkerPredecessors,
    order: &[u32],
) -> Vec<u32> {
    let nodes = graph.nodes();
    let n = nodes.len();
    let mut stage_of = vec![0u32; n];
    let mut unions: Vec<StageUnion> = Vec::new();
    // A kept marker's level: one more than the largest stage it waits for.
    let mut levels = vec![u32::MAX; edges.vertices() - n];
    let inputs: Vec<Option<&[u32]>> = {
        let mut by_marker = vec![None; edges.vertices() - n];
        for (vertex, list) in &marker_preds.kept {
            by_marker[*vertex as usize - n] = Some(list.as_slice());
        }
        by_marker
    };
    for &node in order {
        let mut lowest = 0u32;
        marker_preds.each(edges, node, |from, _| {
            let bound = if (from as usize) < n {
                stage_of[from as usize] + 1
            } else {
                level(from as usize - n, n, &inputs, &stage_of, &mut levels)
            };
            lowest = lowest.max(bound);
        });
        let access = nodes[node as usize].access();
        let mut stage = lowest as usize;
        while stage < unions.len() && !unions[stage].admits(access) {
            stage += 1;
        }
        if stage == unions.len() {
            unions.push(StageUnion::default());
        }
        unions[stage].add(access);
        stage_of[node as usize] = stage as u32;
    }
    let (_, by_stage) = members(order, &stage_of, unions.len() as u32);
    by_stage.into_iter().map(|node| node.0).collect()
}

/// One more than the largest stage kept marker `k` waits for, memoised
/// (everything it waits for is placed before any node that waits for it).
fn level(k: usize, n: usize, inputs: &[Option<&[u32]>], stage_of: &[u32], memo: &mut [u32]) -> u32 {
    if memo[k] != u32::MAX {
        return memo[k];
    }
    let mut highest = 0;
    for &input in inputs[k].unwrap_or_default() {
        highest = highest.max(if (input as usize) < n {
            stage_of[input as usize] + 1
        } else {
            level(input as usize - n, n, inputs, stage_of, memo)
        });
    }
    memo[k] = highest;
    highest
}
