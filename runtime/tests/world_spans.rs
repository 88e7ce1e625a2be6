//! A world's node spans name the node that runs in them, on every
//! executor: in a test binary of its own, whose subscriber is the global
//! default (so that the pool's worker threads record too).

#[path = "support/span_name.rs"]
mod span_name;

use std::sync::{Arc, Mutex};

use span_name::span_name;

/// The `name` of the `node` span a thread is in, by span id (the
/// subscriber below hands ids out in creation order).
struct WorldSpans {
    names: Mutex<Vec<String>>,
}

thread_local! {
    static ENTERED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

static SUBSCRIBER: WorldSpans = WorldSpans {
    names: Mutex::new(Vec::new()),
};

impl tracing::Subscriber for &'static WorldSpans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let name = span_name(span);
        let mut names = self.names.lock().unwrap();
        names.push(name.unwrap_or_else(|| span.metadata().name().to_owned()));
        tracing::span::Id::from_u64(names.len() as u64)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, id: &tracing::span::Id) {
        ENTERED.with(|entered| entered.set(id.into_u64()));
    }
    fn exit(&self, _: &tracing::span::Id) {
        ENTERED.with(|entered| entered.set(0));
    }
}

/// A world's nodes after a group's barrier: each body runs in the span
/// named after its own node, on every executor (the trace once named the
/// node after a barrier by the barrier: `aim` as `(members of group
/// Combat)`).
#[test]
fn a_worlds_nodes_run_in_spans_named_after_them() {
    use sluice::{ExecutorKind, Group, NodeBuilder, World};
    tracing::subscriber::set_global_default(&SUBSCRIBER).expect("the binary's only subscriber");
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let seen: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
        let mut world = World::with_pool(sluice::ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        world.add_group(Group::new("Early"));
        world.add_group(Group::new("Combat").after("Early"));
        world.add_group(Group::new("Late").after("Combat"));
        // Six members on each side of a group's end: more edges folded
        // (36) than kept as a barrier vertex (12), so the plan keeps one.
        let members = |group: &'static str, count: usize| {
            (0..count).map(move |i| (format!("{group}#{i}"), Some(group)))
        };
        let nodes: Vec<(String, Option<&str>)> = [("input".to_owned(), None)]
            .into_iter()
            .chain(members("Early", 6))
            .chain(members("Combat", 6))
            .chain(members("Late", 6))
            .chain([("render".to_owned(), None)])
            .collect();
        for (name, group) in nodes {
            let seen = Arc::clone(&seen);
            let mut node = NodeBuilder::new(name.clone());
            if let Some(group) = group {
                node = node.in_group(group);
            }
            world.add_system(node.run(move |_cx| {
                let span = ENTERED.with(std::cell::Cell::get);
                seen.lock().unwrap().push((name.clone(), span));
            }));
        }
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        let names = SUBSCRIBER.names.lock().unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 20 * 3, "{executor:?}: every node ran thrice");
        for (node, span) in seen.iter() {
            let ran_in = span
                .checked_sub(1)
                .and_then(|at| names.get(at as usize))
                .map_or("(no span)", String::as_str);
            assert_eq!(
                ran_in, node,
                "{executor:?}: `{node}` ran in the span of {ran_in:?}"
            );
        }
    }
}
