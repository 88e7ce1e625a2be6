//! The world's view the inspector publishes, and the entity look-ups it
//! answers: plain data, serialized by the server (never on the game
//! thread).

use std::collections::VecDeque;

use serde::Serialize;
use sluice::{Entity, NodeIndex, World};

use crate::InspectorOptions;
use crate::watch::Watches;

/// One published view of the world.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Snapshot {
    /// Increases with every snapshot.
    pub version: u64,
    /// Frames the inspector has seen ([`Inspector::frames`](crate::Inspector::frames)).
    pub frame: u64,
    /// Iterations of the variable plan the world has run.
    pub iterations: u64,
    /// Whether the world is paused from the inspector.
    pub paused: bool,
    /// Which picture of the plan is current (`/api/plan.svg` serves it).
    pub plan_version: u64,
    /// Frame times.
    pub frames: FrameView,
    /// Every node's last time, the costliest first.
    pub nodes: Vec<NodeTiming>,
    /// The newest spikes, newest first.
    pub spikes: Vec<SpikeView>,
    /// Spikes reported so far.
    pub spikes_total: u64,
    /// Live entities.
    pub entities: u64,
    /// Archetypes holding entities.
    pub archetypes_total: u64,
    /// The largest archetypes, largest first.
    pub archetypes: Vec<ArchetypeView>,
    /// Messages sent per registered type.
    pub messages: Vec<MessageCount>,
    /// Live scripts of the registered kinds.
    pub scripts: Vec<ScriptView>,
    /// Registered states' values.
    pub states: Vec<StateView>,
    /// Plugins added, in order, and whether each is built.
    pub plugins: Vec<PluginView>,
}

/// Frame times, in milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FrameView {
    /// The time between the last two calls of `frame`.
    pub last_ms: f32,
    /// The longest of `history_ms`: the running peak.
    pub peak_ms: f32,
    /// Their mean.
    pub mean_ms: f32,
    /// The recent frame times, oldest first.
    pub history_ms: Vec<f32>,
    /// The last iteration's wall time as the executor measured it.
    pub run_wall_ms: f32,
}

/// One node's time in its cadence's last run.
#[derive(Debug, Clone, Serialize)]
pub struct NodeTiming {
    /// Its index.
    pub node: u32,
    /// Its name.
    pub name: String,
    /// `variable` or `fixed`.
    pub cadence: &'static str,
    /// How long it took, in milliseconds.
    pub ms: f32,
    /// When it started in its run, in milliseconds.
    pub start_ms: f32,
}

/// One spike (see [`sluice::Spike`]).
#[derive(Debug, Clone, Serialize)]
pub struct SpikeView {
    /// The node's name.
    pub name: String,
    /// The iteration it happened in.
    pub iteration: u64,
    /// Its time, in milliseconds.
    pub ms: f32,
    /// The peak of the runs before it.
    pub peak_ms: f32,
    /// Their mean.
    pub mean_ms: f32,
}

/// One archetype.
#[derive(Debug, Clone, Serialize)]
pub struct ArchetypeView {
    /// Its id.
    pub id: u32,
    /// Entities in it.
    pub entities: u64,
    /// Its components' type names.
    pub components: Vec<String>,
}

/// Messages of one type.
#[derive(Debug, Clone, Serialize)]
pub struct MessageCount {
    /// The message type's name.
    pub message: String,
    /// Sent since the world made them (`None`: the world has no such
    /// messages).
    pub sent: Option<u64>,
    /// The mean sent per frame since the previous snapshot.
    pub per_frame: Option<f32>,
}

/// One live script.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptView {
    /// Its kind's type name.
    pub kind: String,
    /// Its id.
    pub id: String,
    /// The name it was started with.
    pub name: String,
    /// What it waits on, in words.
    pub waits_on: String,
}

/// One state.
#[derive(Debug, Clone, Serialize)]
pub struct StateView {
    /// The state type's name.
    pub state: String,
    /// Its value's `Debug` text (`None`: not in the world).
    pub value: Option<String>,
}

/// One plugin.
#[derive(Debug, Clone, Serialize)]
pub struct PluginView {
    /// Its name.
    pub name: String,
    /// Whether it is built.
    pub built: bool,
}

/// One entity and its components.
#[derive(Debug, Clone, Serialize)]
pub struct EntityView {
    /// Its id ([`Entity::id`]).
    pub id: u64,
    /// How it prints (`Entity(slot v generation)`).
    pub entity: String,
    /// Its archetype.
    pub archetype: u32,
    /// Its components, in archetype order.
    pub components: Vec<ComponentView>,
}

/// One component of an entity.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentView {
    /// The type's name.
    pub name: String,
    /// Its `Debug` text when the type is registered with the inspector.
    pub debug: Option<String>,
}

/// A page of entities.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EntityList {
    /// Live entities in all.
    pub total: u64,
    /// Where the page starts.
    pub offset: u64,
    /// The page.
    pub entities: Vec<EntityListItem>,
}

/// One entity of a page.
#[derive(Debug, Clone, Serialize)]
pub struct EntityListItem {
    /// Its id.
    pub id: u64,
    /// How it prints.
    pub entity: String,
    /// Its archetype.
    pub archetype: u32,
}

/// What the inspector itself knows of the frame.
pub(crate) struct Frame<'a> {
    pub(crate) version: u64,
    pub(crate) frame: u64,
    pub(crate) paused: bool,
    pub(crate) plan_version: u64,
    pub(crate) frame_times: &'a VecDeque<f32>,
}

fn ms(duration: std::time::Duration) -> f32 {
    duration.as_secs_f32() * 1e3
}

/// The world's view now.
pub(crate) fn build(
    world: &mut World,
    frame: Frame<'_>,
    watches: &mut Watches,
    options: &InspectorOptions,
) -> Snapshot {
    let history_ms: Vec<f32> = frame.frame_times.iter().copied().collect();
    let peak_ms = history_ms.iter().copied().fold(0.0, f32::max);
    let mean_ms = if history_ms.is_empty() {
        0.0
    } else {
        history_ms.iter().sum::<f32>() / history_ms.len() as f32
    };
    let frames = FrameView {
        last_ms: history_ms.last().copied().unwrap_or(0.0),
        peak_ms,
        mean_ms,
        history_ms,
        run_wall_ms: ms(world.run_stats().wall),
    };
    let mut nodes = Vec::new();
    if let Ok(plans) = world.plans() {
        let names = plans.variable();
        for (cadence, timings) in [
            ("variable", world.timings()),
            ("fixed", world.fixed_timings()),
        ] {
            for (index, timing) in timings.iter().enumerate() {
                if timing.ran {
                    nodes.push(NodeTiming {
                        node: index as u32,
                        name: names.node_name(NodeIndex(index as u32)).to_owned(),
                        cadence,
                        ms: ms(timing.duration),
                        start_ms: ms(timing.start),
                    });
                }
            }
        }
    }
    nodes.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    let spikes = world
        .spikes()
        .rev()
        .take(options.spikes_shown)
        .map(|spike| SpikeView {
            name: spike.name.to_string(),
            iteration: spike.iteration,
            ms: ms(spike.time),
            peak_ms: ms(spike.peak),
            mean_ms: ms(spike.mean),
        })
        .collect();
    let store = world.entities();
    let mut held: Vec<_> = store.archetypes().filter(|a| !a.is_empty()).collect();
    let archetypes_total = held.len() as u64;
    held.sort_by_key(|a| std::cmp::Reverse(a.len()));
    let archetypes = held
        .iter()
        .take(options.archetypes_shown)
        .map(|archetype| ArchetypeView {
            id: archetype.id().index() as u32,
            entities: archetype.len() as u64,
            components: archetype
                .components()
                .iter()
                .map(|&id| store.components().info(id).name().to_owned())
                .collect(),
        })
        .collect();
    let entities = store.len() as u64;
    let messages = watches.message_counts(world, frame.frame);
    Snapshot {
        version: frame.version,
        frame: frame.frame,
        iterations: world.iterations(),
        paused: frame.paused,
        plan_version: frame.plan_version,
        frames,
        nodes,
        spikes,
        spikes_total: world.spikes_total(),
        entities,
        archetypes_total,
        archetypes,
        messages,
        scripts: watches.script_views(world),
        states: watches.state_views(world),
        plugins: world
            .plugins()
            .map(|(name, built)| PluginView {
                name: name.to_owned(),
                built,
            })
            .collect(),
    }
}

/// The live entity with this id, found by a walk over the archetypes (only
/// when a client asks).
fn find(world: &World, id: u64) -> Option<(Entity, u32)> {
    world.entities().archetypes().find_map(|archetype| {
        archetype
            .entities()
            .iter()
            .find(|entity| entity.id() == id)
            .map(|&entity| (entity, archetype.id().index() as u32))
    })
}

/// Entity `id` with its components (`None`: no live entity has that id).
pub(crate) fn entity(world: &World, id: u64, watches: &Watches) -> Option<EntityView> {
    let (entity, archetype) = find(world, id)?;
    let view = world.entity(entity)?;
    let store = world.entities();
    let held = store
        .archetypes()
        .find(|a| a.id().index() as u32 == archetype)?;
    let components = held
        .components()
        .iter()
        .map(|&component| {
            let name = store.components().info(component).name();
            let debug = watches
                .components
                .iter()
                .find(|(registered, _)| *registered == name)
                .and_then(|(_, text)| text(&view));
            ComponentView {
                name: name.to_owned(),
                debug,
            }
        })
        .collect();
    Some(EntityView {
        id,
        entity: entity.to_string(),
        archetype,
        components,
    })
}

/// Live entities `offset..offset + limit`, archetype by archetype.
pub(crate) fn entities(world: &World, offset: usize, limit: usize) -> EntityList {
    let store = world.entities();
    let page = store
        .archetypes()
        .flat_map(|archetype| {
            let id = archetype.id().index() as u32;
            archetype.entities().iter().map(move |&entity| (entity, id))
        })
        .skip(offset)
        .take(limit)
        .map(|(entity, archetype)| EntityListItem {
            id: entity.id(),
            entity: entity.to_string(),
            archetype,
        })
        .collect();
    EntityList {
        total: store.len() as u64,
        offset: offset as u64,
        entities: page,
    }
}
