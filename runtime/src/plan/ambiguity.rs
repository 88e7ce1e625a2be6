//! SL0008: conflicting nodes ordered only by registration order.
//!
//! A pair of nodes is ambiguous when they conflict (one writes a service the
//! other touches, or one is exclusive) and no path of explicit or produce
//! edges joins them. The pairs are reported grouped: one diagnostic per
//! service with ambiguous pairs (a pair that conflicts on several services is
//! counted in each of their groups), then one for the pairs with an exclusive
//! node (whatever else they share). Each diagnostic
//! lists the first [`LISTED`] pairs (in plan order of the later node, then of
//! the earlier) and says how many pairs there are in all.
//!
//! The world's own factories (`sluice::plan`, `sluice::execution`) are in no
//! pair. They touch only the world's private services (no user node may name
//! one: SL0010), so they conflict only with exclusive nodes, and their order
//! beside those is the runtime's, not the user's registration order: being
//! registered before anything else, they precede every node not declared
//! ahead of them in every world, and the whole world's lane turns that into
//! an edge every executor follows. There is nothing for the user to declare.
//! (An edge added by the runtime instead would turn a user's
//! `before("sluice::plan")` into a cycle, and would have to know which plans
//! hold the factories: only the variable cadence's.)
//!
//! Cost: nothing is kept per pair. The nodes are taken in plan order in
//! chunks of 64; for each chunk, one pass over the explicit edges (in reverse
//! topological order) gives, per vertex, the bit set of the chunk's nodes it
//! reaches, and each lane's accessors placed before the chunk's end are
//! matched against the chunk's members of that lane a word at a time. Time is
//! `O((V + E) * N / 64 + T * N / 64)` for `V` vertices, `E` explicit edges,
//! `N` nodes and `T` service accesses (the edge pass is skipped when there are
//! no explicit edges); memory is `O(V + T)` plus the listed pairs.

use crate::access::{ServiceId, Touch};
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level};
use crate::plan::order::Explicit;
use crate::plan::silence::Silencing;
use crate::plan::{GraphView, NodeIndex, Plan};

/// How many pairs one SL0008 diagnostic lists; the rest are counted.
pub(crate) const LISTED: usize = 8;

const WORD: usize = 64;

/// The ambiguous pairs of one service (or of the exclusive nodes): the count
/// and the first few.
#[derive(Default)]
struct Group {
    total: u64,
    /// `(later position, earlier position)`, sorted, at most [`LISTED`].
    listed: Vec<(u32, u32)>,
    /// The pairs silenced on purpose, counted and listed apart.
    silenced_total: u64,
    /// `(later position, earlier position)`, at most [`LISTED`].
    silenced: Vec<(u32, u32)>,
}

/// One lane: its accessors' plan positions in order, and which of them write.
struct Lanes {
    /// Per service, where its accessors start in `members` (CSR).
    offsets: Vec<u32>,
    /// `(position, writes)` of each accessor, by service, in plan order.
    members: Vec<(u32, bool)>,
    /// Per service, where its writers start in `writers` (CSR).
    writer_offsets: Vec<u32>,
    /// Positions of each lane's writers, by service, in plan order.
    writers: Vec<u32>,
}

impl Lanes {
    fn new(graph: &GraphView<'_>, order: &[u32], services: usize) -> Self {
        let nodes = graph.nodes();
        let mut offsets = vec![0u32; services + 1];
        let mut writer_offsets = vec![0u32; services + 1];
        // Only the plan's own nodes: another cadence's are not in its lanes.
        for &node in order {
            for touch in nodes[node as usize].access().touches() {
                offsets[touch.service().index() + 1] += 1;
                if touch.is(Touch::WRITES) {
                    writer_offsets[touch.service().index() + 1] += 1;
                }
            }
        }
        for s in 0..services {
            offsets[s + 1] += offsets[s];
            writer_offsets[s + 1] += writer_offsets[s];
        }
        let mut members = vec![(0u32, false); offsets[services] as usize];
        let mut writers = vec![0u32; writer_offsets[services] as usize];
        let mut next = offsets.clone();
        let mut next_writer = writer_offsets.clone();
        for (position, &node) in order.iter().enumerate() {
            for touch in nodes[node as usize].access().touches() {
                let s = touch.service().index();
                let writes = touch.is(Touch::WRITES);
                members[next[s] as usize] = (position as u32, writes);
                next[s] += 1;
                if writes {
                    writers[next_writer[s] as usize] = position as u32;
                    next_writer[s] += 1;
                }
            }
        }
        Self {
            offsets,
            members,
            writer_offsets,
            writers,
        }
    }

    fn members(&self, service: usize) -> &[(u32, bool)] {
        &self.members[self.offsets[service] as usize..self.offsets[service + 1] as usize]
    }

    fn writers(&self, service: usize) -> &[u32] {
        &self.writers
            [self.writer_offsets[service] as usize..self.writer_offsets[service + 1] as usize]
    }
}

/// The pairs of one chunk of 64 plan positions starting at `start`, that is
/// the positions whose bit is set in the masks.
struct Chunk<'a> {
    start: usize,
    end: usize,
    /// Per vertex, the chunk's nodes it reaches through explicit edges
    /// (empty when there are none).
    down: &'a [u64],
    order: &'a [u32],
    /// The plan positions of the world's own factories, ascending: in no
    /// pair (see the module's docs).
    own: &'a [u32],
    /// The chunk's bits of `own`.
    own_mask: u64,
    /// What the nodes silence (`None`: nothing).
    silencing: Option<&'a Silencing>,
}

impl Chunk<'_> {
    /// Adds to `group` the pairs of `earlier` (a position before the chunk's
    /// end) with each later position of the chunk in `candidates` that it
    /// does not reach.
    fn pairs(&self, earlier: u32, candidates: u64, group: &mut Group, found: &mut Vec<(u32, u32)>) {
        if self.own.binary_search(&earlier).is_ok() {
            return;
        }
        let at = earlier as usize;
        // Only positions after `earlier`: every bit above its own.
        let mut mask = candidates & !self.own_mask;
        if at >= self.start {
            let shift = at - self.start + 1;
            mask &= if shift >= WORD { 0 } else { !0u64 << shift };
        }
        if mask == 0 {
            return;
        }
        if let Some(reached) = self.down.get(self.order[at] as usize) {
            mask &= !reached;
        }
        if let Some(silencing) = self.silencing {
            let mut bits = mask;
            while bits != 0 {
                let bit = bits & bits.wrapping_neg();
                let later = self.start + bits.trailing_zeros() as usize;
                if silencing.by(self.order[at], self.order[later]).is_some() {
                    mask &= !bit;
                    group.silenced_total += 1;
                    if group.silenced.len() < LISTED {
                        group.silenced.push((later as u32, earlier));
                    }
                }
                bits &= !bit;
            }
        }
        group.total += u64::from(mask.count_ones());
        if group.listed.len() < LISTED {
            let mut bits = mask;
            let mut taken = 0;
            while bits != 0 && taken < LISTED {
                let later = self.start + bits.trailing_zeros() as usize;
                found.push((later as u32, earlier));
                bits &= bits - 1;
                taken += 1;
            }
        }
    }

    /// The masks' pairs for one lane: `all` holds the chunk's accessors,
    /// `writes` its writers; a writer conflicts with every accessor, a
    /// reader only with the writers.
    fn lane(
        &self,
        all: u64,
        writes: u64,
        members: impl Iterator<Item = (u32, bool)>,
        group: &mut Group,
        found: &mut Vec<(u32, u32)>,
    ) {
        found.clear();
        for (earlier, earlier_writes) in members {
            if earlier as usize >= self.end {
                break;
            }
            let candidates = if earlier_writes { all } else { writes };
            self.pairs(earlier, candidates, group, found);
        }
        if group.listed.len() < LISTED && !found.is_empty() {
            found.sort_unstable();
            let room = LISTED - group.listed.len();
            group.listed.extend(found.iter().take(room).copied());
        }
    }
}

/// Every group of conflicting nodes that no path of explicit or produce
/// edges joins: one diagnostic per service (in id order), then one for the
/// exclusive nodes.
pub(crate) fn find(
    graph: &GraphView<'_>,
    edges: &Explicit,
    released: &[u32],
    plan: &Plan,
    level: Level,
    silencing: Option<&Silencing>,
) -> Vec<Diagnostic> {
    let nodes = graph.nodes();
    let order = &plan.node_order;
    let n = order.len();
    let services = graph.table().len();
    let lanes = Lanes::new(graph, order, services);
    let exclusive: Vec<u32> = (0..n as u32)
        .filter(|&p| nodes[order[p as usize] as usize].access().is_exclusive())
        .collect();
    let own: Vec<u32> = (0..n as u32)
        .filter(|&p| nodes[order[p as usize] as usize].is_builtin())
        .collect();

    let mut groups: Vec<Group> = (0..services).map(|_| Group::default()).collect();
    let mut world = Group::default();
    // Per service, its accessors and writers among the chunk's nodes.
    let mut masks = vec![(0u64, 0u64); services];
    let mut touched: Vec<usize> = Vec::new();
    let mut found: Vec<(u32, u32)> = Vec::new();
    let has_edges = !edges.from.is_empty();
    let mut down = if has_edges {
        vec![0u64; edges.vertices()]
    } else {
        Vec::new()
    };
    let mut position_of = Vec::new();
    // Per vertex, its index in `released`.
    let mut released_at = Vec::new();
    if has_edges {
        position_of = vec![u32::MAX; edges.vertices()];
        for (position, &node) in order.iter().enumerate() {
            position_of[node as usize] = position as u32;
        }
        released_at = vec![0u32; edges.vertices()];
        for (at, &vertex) in released.iter().enumerate() {
            released_at[vertex as usize] = at as u32;
        }
    }
    // `down` may be non-zero only for `released[..written]`.
    let mut written = 0;

    for start in (0..n).step_by(WORD) {
        let end = (start + WORD).min(n);
        if has_edges {
            // A vertex released after every node of the chunk reaches none
            // of them (its successors are released later still): its set
            // is empty, and the pass stops short of it.
            let last = order[start..end]
                .iter()
                .map(|&node| released_at[node as usize] as usize + 1)
                .max()
                .unwrap_or(0);
            for &vertex in released.get(last..written).unwrap_or_default() {
                down[vertex as usize] = 0;
            }
            written = last;
            reach_chunk(
                edges,
                &released[..last],
                &position_of,
                start,
                end,
                &mut down,
            );
        }
        let own_mask = own
            .iter()
            .filter(|&&p| (start..end).contains(&(p as usize)))
            .fold(0u64, |mask, &p| mask | 1u64 << (p as usize - start));
        let chunk = Chunk {
            start,
            end,
            down: &down,
            order,
            own: &own,
            own_mask,
            silencing,
        };
        for position in start..end {
            let bit = 1u64 << (position - start);
            for touch in nodes[order[position] as usize].access().touches() {
                let s = touch.service().index();
                if masks[s] == (0, 0) {
                    touched.push(s);
                }
                masks[s].0 |= bit;
                if touch.is(Touch::WRITES) {
                    masks[s].1 |= bit;
                }
            }
        }
        touched.sort_unstable();
        for &s in &touched {
            let (all, writes) = std::mem::take(&mut masks[s]);
            if writes == 0 {
                // Only the lane's writers conflict with these readers.
                let writers = lanes.writers(s).iter().map(|&p| (p, true));
                chunk.lane(all, writes, writers, &mut groups[s], &mut found);
            } else {
                let members = lanes.members(s).iter().copied();
                chunk.lane(all, writes, members, &mut groups[s], &mut found);
            }
        }
        touched.clear();
        // The whole-world lane: every node reads it, exclusive nodes gate it.
        let all = if end - start == WORD {
            !0u64
        } else {
            (1u64 << (end - start)) - 1
        };
        let writes = exclusive
            .iter()
            .filter(|&&p| (start..end).contains(&(p as usize)))
            .fold(0u64, |mask, &p| mask | 1u64 << (p as usize - start));
        if writes == 0 {
            // Only the exclusive nodes conflict with these.
            let writers = exclusive.iter().map(|&p| (p, true));
            chunk.lane(all, writes, writers, &mut world, &mut found);
        } else {
            let members = (0..end as u32).map(|p| (p, exclusive.binary_search(&p).is_ok()));
            chunk.lane(all, writes, members, &mut world, &mut found);
        }
    }

    let mut diagnostics = Vec::new();
    let services = groups
        .iter()
        .enumerate()
        .map(|(s, group)| (Some(ServiceId(s as u32)), group));
    for (service, group) in services.chain([(None, &world)]) {
        if group.total > 0 {
            diagnostics.push(diagnostic(plan, service, group, level));
        }
        if let (Some(silencing), true) = (silencing, group.silenced_total > 0) {
            diagnostics.push(silenced(plan, service, group, silencing));
        }
    }
    diagnostics
}

/// The pairs of `group` silenced on purpose, at [`Level::Silenced`], each
/// with who silenced it.
fn silenced(
    plan: &Plan,
    service: Option<ServiceId>,
    group: &Group,
    silencing: &Silencing,
) -> Diagnostic {
    let order = &plan.node_order;
    let mut listed = group.silenced.clone();
    listed.sort_unstable();
    let pairs: Vec<_> = listed
        .iter()
        .map(|&(later, earlier)| {
            let (a, b) = (order[earlier as usize], order[later as usize]);
            let by = silencing.by(a, b).cloned().expect("listed as silenced");
            (NodeIndex(a), NodeIndex(b), by)
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    let mut message = format!("{} pair", group.silenced_total);
    if group.silenced_total != 1 {
        message.push('s');
    }
    match service {
        Some(s) => message.push_str(&format!(
            " conflicting on {} ordered by registration order on purpose: ",
            plan.service_name(s)
        )),
        None => {
            message.push_str(" with an exclusive node ordered by registration order on purpose: ")
        }
    }
    for (i, (a, b, by)) in pairs.iter().enumerate() {
        let (a, b) = (plan.node_name(*a), plan.node_name(*b));
        for name in [a, b] {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        if i > 0 {
            message.push_str(", ");
        }
        let who = match by.by {
            crate::plan::NodeRef::Node(n) => format!("`{}`", plan.node_name(n)),
            crate::plan::NodeRef::Group(g) => format!("group `{}`", plan.hierarchy.group_name(g)),
            crate::plan::NodeRef::Marker(m) => format!("`{}`", plan.marker_name(m)),
        };
        let how = match &by.with {
            Some(target) => format!("ambiguous_with(\"{target}\")"),
            None => "ambiguous_with_all()".to_owned(),
        };
        message.push_str(&format!("`{a}` and `{b}` (silenced by {who}: {how})"));
    }
    let more = group.silenced_total - pairs.len() as u64;
    if more > 0 {
        message.push_str(&format!(", and {more} more"));
    }
    let kind = DiagnosticKind::SilencedAmbiguity {
        service,
        pairs,
        total: group.silenced_total,
    };
    Diagnostic::new(Level::Silenced, kind, message, names)
}

/// Fills `down[v]` with the nodes at plan positions `start..end` that vertex
/// `v` reaches through explicit edges (bit `p - start` for position `p`).
/// `released` is the start of a topological order of every vertex, up to
/// the last of the chunk's nodes; every vertex after it has an empty set in
/// `down`.
fn reach_chunk(
    edges: &Explicit,
    released: &[u32],
    position_of: &[u32],
    start: usize,
    end: usize,
    down: &mut [u64],
) {
    for &vertex in released.iter().rev() {
        let mut set = 0u64;
        for &edge in edges.successors(vertex) {
            let to = edges.to[edge as usize] as usize;
            set |= down[to];
            if let Some(&p) = position_of.get(to)
                && (start..end).contains(&(p as usize))
            {
                set |= 1u64 << (p as usize - start);
            }
        }
        down[vertex as usize] = set;
    }
}

fn diagnostic(plan: &Plan, service: Option<ServiceId>, group: &Group, level: Level) -> Diagnostic {
    let order = &plan.node_order;
    let pairs: Vec<(NodeIndex, NodeIndex)> = group
        .listed
        .iter()
        .map(|&(later, earlier)| {
            (
                NodeIndex(order[earlier as usize]),
                NodeIndex(order[later as usize]),
            )
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    for &(a, b) in &pairs {
        for node in [a, b] {
            let name = plan.node_name(node);
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    // Written piece by piece: a plan of thousands of nodes has a diagnostic
    // per service, and `format!` per pair was a tenth of its build.
    let mut message = String::with_capacity(160 + 48 * pairs.len());
    let on = |message: &mut String| match service {
        Some(s) => {
            message.push_str(" conflict on ");
            message.push_str(plan.service_name(s));
        }
        None => message.push_str(" conflict (one is exclusive)"),
    };
    let quoted = |message: &mut String, name: &str| {
        message.push('`');
        message.push_str(name);
        message.push('`');
    };
    if let ([(first, second)], 1) = (pairs.as_slice(), group.total) {
        let (a, b) = (plan.node_name(*first), plan.node_name(*second));
        quoted(&mut message, a);
        message.push_str(" and ");
        quoted(&mut message, b);
        on(&mut message);
        message.push_str(" and are ordered only by registration order (");
        quoted(&mut message, a);
        message.push_str(" first); declare ");
        quoted(&mut message, b);
        message.push_str(" after ");
        quoted(&mut message, a);
        message.push_str(" (or the reverse) to make the order intentional");
    } else {
        message.push_str(&group.total.to_string());
        message.push_str(" pairs of nodes");
        on(&mut message);
        message.push_str(" and are ordered only by registration order (earlier node first): ");
        for (i, &(a, b)) in pairs.iter().enumerate() {
            if i > 0 {
                message.push_str(", ");
            }
            quoted(&mut message, plan.node_name(a));
            message.push_str(" and ");
            quoted(&mut message, plan.node_name(b));
        }
        let more = group.total - pairs.len() as u64;
        if more > 0 {
            message.push_str(", and ");
            message.push_str(&more.to_string());
            message.push_str(" more");
        }
        message.push_str(
            "; declare one node of each pair after the other to make the order intentional",
        );
    }
    let kind = DiagnosticKind::Ambiguity {
        service,
        pairs,
        total: group.total,
    };
    Diagnostic::new(level, kind, message, names)
}
