//! What the user registered for the inspector to show: component `Debug`
//! views, message counts, scripts and states. Each is a plain function
//! pointer over the world, called on the game thread between frames.

use std::fmt::Debug;

use sluice::message::Messages;
use sluice::script::{ScriptKind, Scripts, Waiting};
use sluice::state::States;
use sluice::{Component, EntityRef, World};

use crate::snapshot::{MessageCount, ScriptView, StateView};

/// The longest `Debug` text shown for one component or state; longer text
/// is cut (and says so).
pub(crate) const MAX_TEXT: usize = 4096;

type ComponentText = fn(&EntityRef<'_>) -> Option<String>;
type MessagesSent = fn(&mut World) -> Option<u64>;
type ScriptList = fn(&World, &mut Vec<ScriptView>);
type StateText = fn(&World) -> Option<String>;

/// The registrations, each kept once (by type name).
#[derive(Default)]
pub(crate) struct Watches {
    pub(crate) components: Vec<(&'static str, ComponentText)>,
    pub(crate) messages: Vec<(&'static str, MessagesSent)>,
    /// Per message type: its sent total and the frame counter at the last
    /// snapshot.
    pub(crate) messages_seen: Vec<(u64, u64)>,
    pub(crate) scripts: Vec<(&'static str, ScriptList)>,
    pub(crate) states: Vec<(&'static str, StateText)>,
}

fn add<F>(list: &mut Vec<(&'static str, F)>, name: &'static str, f: F) {
    if !list.iter().any(|(seen, _)| *seen == name) {
        list.push((name, f));
    }
}

/// `value`'s `Debug` text, cut at [`MAX_TEXT`] bytes.
pub(crate) fn debug_text(value: &dyn Debug) -> String {
    let mut text = format!("{value:?}");
    if text.len() > MAX_TEXT {
        let mut cut = MAX_TEXT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("… (cut)");
    }
    text
}

impl Watches {
    pub(crate) fn component<C: Component + Debug>(&mut self) {
        add(&mut self.components, std::any::type_name::<C>(), |entity| {
            entity.get::<C>().map(|value| debug_text(value))
        });
    }

    pub(crate) fn messages<T: Send + Sync + 'static>(&mut self) {
        // `get_mut`, not `messages_mut`: reading must not register the type.
        add(&mut self.messages, std::any::type_name::<T>(), |world| {
            world.get_mut::<Messages<T>>().map(Messages::sent)
        });
    }

    pub(crate) fn scripts<K: ScriptKind>(&mut self) {
        add(
            &mut self.scripts,
            std::any::type_name::<K>(),
            |world, into| {
                let Some(scripts) = world.get::<Scripts<K>>() else {
                    return;
                };
                let kind = std::any::type_name::<K>();
                into.extend(scripts.iter().map(|info| ScriptView {
                    kind: kind.to_owned(),
                    id: info.id.to_string(),
                    name: info.name.to_owned(),
                    waits_on: waits_on(info.waiting),
                }));
            },
        );
    }

    pub(crate) fn state<S: States>(&mut self) {
        add(&mut self.states, std::any::type_name::<S>(), |world| {
            world.state::<S>().map(|value| debug_text(value))
        });
    }

    /// Each registered type's messages: the total sent, and the mean per
    /// frame since the previous snapshot (`frame` is the frame counter now).
    pub(crate) fn message_counts(&mut self, world: &mut World, frame: u64) -> Vec<MessageCount> {
        self.messages_seen.resize(self.messages.len(), (0, 0));
        self.messages
            .iter()
            .zip(&mut self.messages_seen)
            .map(|((name, sent), seen)| {
                let total = sent(world);
                let per_frame = total.map(|total| {
                    let frames = frame.saturating_sub(seen.1).max(1);
                    let per_frame = total.saturating_sub(seen.0) as f32 / frames as f32;
                    *seen = (total, frame);
                    per_frame
                });
                MessageCount {
                    message: (*name).to_owned(),
                    sent: total,
                    per_frame,
                }
            })
            .collect()
    }

    pub(crate) fn script_views(&self, world: &World) -> Vec<ScriptView> {
        let mut views = Vec::new();
        for (_, list) in &self.scripts {
            list(world, &mut views);
        }
        views
    }

    pub(crate) fn state_views(&self, world: &World) -> Vec<StateView> {
        self.states
            .iter()
            .map(|(name, text)| StateView {
                state: (*name).to_owned(),
                value: text(world),
            })
            .collect()
    }
}

/// What a script waits on, in words.
fn waits_on(waiting: Waiting) -> String {
    match waiting {
        Waiting::Start => "start (runs at the next gather)".to_owned(),
        Waiting::Time(at) => format!("simulation time {at:?}"),
        Waiting::FixedTime(at) => format!("fixed time {at:?}"),
        Waiting::NextTick => "the next gather".to_owned(),
        Waiting::Condition(Some(location)) => format!("a condition at {location}"),
        Waiting::Condition(None) => "a condition".to_owned(),
        Waiting::Other => "a future (polled each gather)".to_owned(),
        _ => format!("{waiting:?}"),
    }
}
