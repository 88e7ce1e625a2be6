//! `--trace FILE`: a Chrome/Perfetto trace of the run. The runtime wraps
//! every node in a `node` span (its name as a field) and every batch slice
//! in a `batch` span; the game adds a `frame` span per update. Each span is
//! shown as `node: steer`, `batch`, `frame`. Open the file in
//! `ui.perfetto.dev` or `chrome://tracing`.

use std::fmt;
use std::path::Path;

use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_chrome::{ChromeLayerBuilder, EventOrSpan, FlushGuard};
use tracing_subscriber::layer::Context;
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// Installs the Chrome layer as the global subscriber; the trace is written
/// when the returned guard drops.
///
/// # Errors
/// When a global subscriber is already installed.
pub fn install(path: &Path) -> Result<FlushGuard, String> {
    let (chrome, guard) = ChromeLayerBuilder::new()
        .file(path)
        .include_args(true)
        .name_fn(Box::new(span_name))
        .build();
    tracing_subscriber::registry()
        .with(NodeNames)
        .with(chrome)
        .try_init()
        .map_err(|error| format!("cannot trace: {error}"))?;
    Ok(guard)
}

type Inner = tracing_subscriber::layer::Layered<NodeNames, Registry>;

/// A span is shown with its node's name where it has one.
fn span_name(event_or_span: &EventOrSpan<'_, '_, Inner>) -> String {
    match event_or_span {
        EventOrSpan::Event(event) => event.metadata().name().to_owned(),
        EventOrSpan::Span(span) => match span.extensions().get::<NodeName>() {
            Some(node) => format!("{}: {}", span.name(), node.0),
            None => span.name().to_owned(),
        },
    }
}

/// A span's `name` field, kept in its extensions for [`span_name`].
struct NodeName(String);

/// Records each new span's `name` field.
struct NodeNames;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for NodeNames {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut visitor = NameField(None);
        attrs.record(&mut visitor);
        if let (Some(name), Some(span)) = (visitor.0, ctx.span(id)) {
            span.extensions_mut().insert(NodeName(name));
        }
    }
}

struct NameField(Option<String>);

impl Visit for NameField {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "name" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "name" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}
