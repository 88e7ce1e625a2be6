//! A spike is reported through `tracing` (issue 20's spike watch): one
//! warning per spike, with the node, the iteration and the times as fields;
//! none for an exempt node or with the watch off. In a test binary of its
//! own: tracing caches each callsite's interest process-wide, and another
//! test reaching the same callsite without a subscriber could race this
//! one's scoped subscriber.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice::{ExecutorKind, NodeBuilder, SpikeWatch, World};

/// Every event's level and fields, values written out.
#[derive(Default)]
struct Events(Mutex<Vec<(tracing::Level, BTreeMap<String, String>)>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl tracing::Subscriber for Events {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let level = *event.metadata().level();
        self.0.lock().unwrap().push((level, fields));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[derive(Debug, Default, Clone, Copy)]
struct Frame(u64);

/// Long against no-op frames, with a floor of 40 ms: a no-op frame held up
/// 40 ms would be reported, one held up 50 ms would hide the sleep, both
/// far beyond what a loaded machine does to one frame.
const SLEEP: Duration = Duration::from_millis(100);

/// Frames `0..6`, each with its `Frame`; "slow" and the exempt "vsync"
/// sleep on frame 4.
fn run(watch: Option<SpikeWatch>) -> Vec<(tracing::Level, BTreeMap<String, String>)> {
    let mut world = World::new();
    world.set_executor(ExecutorKind::Serial);
    world.insert(Frame(0));
    for (name, exempt) in [("slow", false), ("vsync", true)] {
        let node = NodeBuilder::new(name);
        let node = if exempt { node.spike_exempt() } else { node };
        world.add_system(node.system(|frame: &Frame| {
            if frame.0 == 4 {
                std::thread::sleep(SLEEP);
            }
        }));
    }
    world.set_spike_watch(watch).unwrap();
    let events = Arc::new(Events::default());
    tracing::subscriber::with_default(Arc::clone(&events), || {
        for frame in 0..6 {
            world.insert(Frame(frame));
            world.run_iteration().unwrap();
        }
    });
    assert_eq!(world.spikes_total(), u64::from(watch.is_some()));
    let events = std::mem::take(&mut *events.0.lock().unwrap());
    events
        .into_iter()
        .filter(|(_, fields)| {
            fields
                .get("message")
                .is_some_and(|m| m.starts_with("spike:"))
        })
        .collect()
}

#[test]
fn a_spike_is_one_tracing_warning_with_its_node_iteration_and_times() {
    let watch = SpikeWatch {
        window: 3,
        ratio: 2.0,
        min: Duration::from_millis(40),
        keep: 8,
    };
    let spikes = run(Some(watch));
    assert_eq!(spikes.len(), 1, "{spikes:?}");
    let (level, fields) = &spikes[0];
    assert_eq!(*level, tracing::Level::WARN);
    assert_eq!(fields["node"], "slow");
    assert_eq!(fields["iteration"], "4");
    let time_us: u64 = fields["time_us"].parse().unwrap();
    let peak_us: u64 = fields["peak_us"].parse().unwrap();
    let mean_us: u64 = fields["mean_us"].parse().unwrap();
    assert!(time_us >= SLEEP.as_micros() as u64, "{fields:?}");
    assert!(peak_us * 2 < time_us && mean_us <= peak_us, "{fields:?}");
    assert!(
        fields["message"].starts_with("spike: `slow` took "),
        "{fields:?}"
    );
}

#[test]
fn no_warning_with_the_watch_off() {
    assert_eq!(run(None), []);
}
