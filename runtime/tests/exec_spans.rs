//! Node spans, in a test binary of their own: tracing caches each
//! callsite's interest process-wide, and a pool of another test creating the
//! same span on its worker threads while this test's scoped subscriber is
//! registered can cache "never" for it (a flake seen in CI).

#[path = "support/span_name.rs"]
mod span_name;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use sluice::exec::NodeOutcome;
use sluice::{CompiledGraph, ExecutionState, SerialExecutor};
use span_name::span_name;

/// A subscriber that records the `name` field of every span.
struct SpanNames(Mutex<Vec<String>>);

impl tracing::Subscriber for SpanNames {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let name = span_name(span);
        let mut names = self.0.lock().unwrap();
        if span.metadata().name() == "node" {
            names.push(name.unwrap_or_default());
        }
        tracing::span::Id::from_u64(names.len() as u64 + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn every_node_runs_in_a_span_named_after_it() {
    let graph = CompiledGraph::from_edges(3, &[(0, 1)])
        .unwrap()
        .with_names(["input", "physics", "render"])
        .unwrap();
    let mut state = ExecutionState::new(&graph);
    let subscriber = Arc::new(SpanNames(Mutex::new(Vec::new())));
    tracing::subscriber::with_default(Arc::clone(&subscriber), || {
        SerialExecutor::new()
            .run(&graph, &mut state, |_| NodeOutcome::Done)
            .unwrap();
    });
    let names: HashSet<String> = subscriber.0.lock().unwrap().iter().cloned().collect();
    assert_eq!(
        names,
        ["input", "physics", "render"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}
