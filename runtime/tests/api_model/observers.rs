//! Issue 37's hooks and observers in the API model: a random script of
//! entity changes and triggers, made directly or recorded as commands by
//! one system (landing at the boundary on a random executor), in a world
//! with every hook of `A` and observers of `A`'s and `B`'s lifecycle and of
//! a custom event, one of which records a follow-up insert. Each hook and
//! observer logs; the log is compared with a reference model's.
//!
//! The model knows only the documented order: per change, `Replace` then
//! `Remove` (observers, then the hook) for what goes, in component id
//! order; the change; `Add` then `Insert` (hook, then observers) for what
//! comes; then what they recorded lands, depth first, before the next
//! change. A change naming a despawned entity does nothing. Observers
//! watching one entity (attached by `EntityCommands::observe` or
//! `World::observe_entity`) run after the global one, in the order they
//! were attached, and go with their entity. Each case
//! builds a world of its own on the shared pool, so the other modules'
//! entities are untouched.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::prelude::*;
use sluice::{Add, Event, ExecutorKind, Insert, On, Remove, Replace, ThreadPool};

use super::check;

/// One change of the script, on the entity spawned `n`-th (modulo how
/// many were spawned).
#[derive(Debug, Clone, Copy)]
pub(super) enum Change {
    /// Spawns with `A` and/or `B` (bit 0, bit 1).
    Spawn(u8),
    Insert(u8, u8),
    Remove(u8, u8),
    Despawn(u8),
    Poke(u8),
    /// Attaches an observer of `Poke` watching the entity
    /// (`EntityCommands::observe` / `World::observe_entity`).
    Watch(u8),
}

/// The operation: a script, made through commands on an executor (or
/// directly), with `B`'s observer cascading an insert of `A` or not.
#[derive(Debug, Clone)]
pub(super) struct ObserveOp {
    changes: Vec<Change>,
    by_command: Option<u8>,
    cascade: bool,
}

pub(super) fn op() -> impl Strategy<Value = super::Op> {
    let change = prop_oneof![
        3 => (0u8..4).prop_map(Change::Spawn),
        2 => (any::<u8>(), 1u8..4).prop_map(|(e, m)| Change::Insert(e, m)),
        2 => (any::<u8>(), 1u8..4).prop_map(|(e, m)| Change::Remove(e, m)),
        1 => any::<u8>().prop_map(Change::Despawn),
        1 => any::<u8>().prop_map(Change::Poke),
        1 => any::<u8>().prop_map(Change::Watch),
    ];
    (
        proptest::collection::vec(change, 1..12),
        proptest::option::of(0u8..3),
        any::<bool>(),
    )
        .prop_map(|(changes, by_command, cascade)| {
            super::Op::Observe(ObserveOp {
                changes,
                by_command,
                cascade,
            })
        })
}

#[derive(Debug)]
struct Id(u32);
#[derive(Debug)]
struct A;
#[derive(Debug)]
struct B;
#[derive(Debug)]
struct Poke;
impl Event for Poke {}
#[derive(Debug, Default)]
struct Log(Vec<String>);
#[derive(Debug)]
struct Cascade(bool);

const A_BIT: u8 = 1;
const B_BIT: u8 = 2;

/// The model: each entity's components (`None`: despawned), the log.
#[derive(Default)]
struct ModelWorld {
    ents: Vec<Option<u8>>,
    /// By entity: how many observers watch it (they go when it does).
    watchers: Vec<usize>,
    log: Vec<String>,
    cascade: bool,
}

impl ModelWorld {
    fn replace_remove(&mut self, id: usize, going: u8, removing: bool) {
        if going & A_BIT != 0 {
            self.log.push(format!("obs replace A {id}"));
            self.log.push(format!("hook replace A {id}"));
        }
        if removing {
            if going & A_BIT != 0 {
                self.log.push(format!("obs remove A {id}"));
                self.log.push(format!("hook remove A {id}"));
            }
            if going & B_BIT != 0 {
                self.log.push(format!("obs remove B {id}"));
            }
        }
    }

    fn add_insert(&mut self, id: usize, added: u8, written: u8) {
        if added & A_BIT != 0 {
            self.log.push(format!("hook add A {id}"));
            self.log.push(format!("obs add A {id}"));
        }
        if added & B_BIT != 0 {
            self.log.push(format!("obs add B {id}"));
        }
        if written & A_BIT != 0 {
            self.log.push(format!("hook insert A {id}"));
            self.log.push(format!("obs insert A {id}"));
        }
        // What `B`'s observer recorded lands after the change.
        if added & B_BIT != 0 && self.cascade {
            self.insert(id, A_BIT);
        }
    }

    fn insert(&mut self, id: usize, mask: u8) {
        let Some(before) = self.ents[id] else { return };
        self.replace_remove(id, before & mask, false);
        self.ents[id] = Some(before | mask);
        self.add_insert(id, mask & !before, mask);
    }

    fn apply(&mut self, change: Change) {
        let pick =
            |ents: &Vec<Option<u8>>, e: u8| (!ents.is_empty()).then(|| usize::from(e) % ents.len());
        match change {
            Change::Spawn(mask) => {
                let id = self.ents.len();
                self.ents.push(Some(mask));
                self.watchers.push(0);
                self.add_insert(id, mask, mask);
            }
            Change::Insert(e, mask) => {
                if let Some(id) = pick(&self.ents, e) {
                    self.insert(id, mask);
                }
            }
            Change::Remove(e, mask) => {
                if let Some(id) = pick(&self.ents, e)
                    && let Some(before) = self.ents[id]
                {
                    self.replace_remove(id, before & mask, true);
                    self.ents[id] = Some(before & !mask);
                }
            }
            Change::Despawn(e) => {
                if let Some(id) = pick(&self.ents, e)
                    && let Some(before) = self.ents[id]
                {
                    self.replace_remove(id, before, true);
                    self.ents[id] = None;
                    self.watchers[id] = 0;
                }
            }
            Change::Poke(e) => {
                if let Some(id) = pick(&self.ents, e)
                    && self.ents[id].is_some()
                {
                    // The global observer was registered first.
                    self.log.push(format!("poke {id}"));
                    for _ in 0..self.watchers[id] {
                        self.log.push(format!("watch poke {id}"));
                    }
                }
            }
            Change::Watch(e) => {
                // A despawned entity's watch is refused: nothing changes.
                if let Some(id) = pick(&self.ents, e)
                    && self.ents[id].is_some()
                {
                    self.watchers[id] += 1;
                }
            }
        }
    }
}

fn id_of(world: &sluice::HookWorld<'_>, entity: Entity) -> u32 {
    world
        .entity(entity)
        .and_then(|e| e.get::<Id>())
        .map_or(u32::MAX, |id| id.0)
}

fn push(world: &mut sluice::HookWorld<'_>, line: String) {
    world.get_mut::<Log>().expect("the log").0.push(line);
}

/// The observer a `Watch` attaches.
fn watcher(on: On<Poke>, ids: Query<&Id>, log: &mut Log) {
    let id = ids
        .get(on.target().expect("a target"))
        .map_or(u32::MAX, |id| id.0);
    log.0.push(format!("watch poke {id}"));
}

/// A world with every hook of `A` and the observers, logging.
fn observed_world(pool: &ThreadPool, executor: ExecutorKind, cascade: bool) -> World {
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    world.insert(Log::default());
    world.insert(Cascade(cascade));
    // Component ids in the order Id, A, B.
    let first = world.spawn((Id(u32::MAX), A, B));
    world.despawn(first).expect("alive");
    world
        .on_add::<A>(|cx, w| {
            let id = id_of(w, cx.entity);
            push(w, format!("hook add A {id}"));
        })
        .expect("first hook");
    world
        .on_insert::<A>(|cx, w| {
            let id = id_of(w, cx.entity);
            push(w, format!("hook insert A {id}"));
        })
        .expect("first hook");
    world
        .on_replace::<A>(|cx, w| {
            let id = id_of(w, cx.entity);
            push(w, format!("hook replace A {id}"));
        })
        .expect("first hook");
    world
        .on_remove::<A>(|cx, w| {
            let id = id_of(w, cx.entity);
            push(w, format!("hook remove A {id}"));
        })
        .expect("first hook");
    fn logger<E: Event>(what: &'static str) -> impl FnMut(On<E>, Query<&Id>, &mut Log) {
        move |on: On<E>, ids: Query<&Id>, log: &mut Log| {
            let id = ids
                .get(on.target().expect("a target"))
                .map_or(u32::MAX, |id| id.0);
            log.0.push(format!("{what} {id}"));
        }
    }
    world
        .add_observer::<Add<A>, _>(logger::<Add<A>>("obs add A"))
        .expect("observer");
    world
        .add_observer::<Insert<A>, _>(logger::<Insert<A>>("obs insert A"))
        .expect("observer");
    world
        .add_observer::<Replace<A>, _>(logger::<Replace<A>>("obs replace A"))
        .expect("observer");
    world
        .add_observer::<Remove<A>, _>(logger::<Remove<A>>("obs remove A"))
        .expect("observer");
    world
        .add_observer::<Add<B>, _>(
            |on: On<Add<B>>,
             ids: Query<&Id>,
             log: &mut Log,
             cascade: &Cascade,
             commands: Commands<'_>| {
                let target = on.target().expect("a target");
                log.0.push(format!(
                    "obs add B {}",
                    ids.get(target).map_or(u32::MAX, |id| id.0)
                ));
                if cascade.0 {
                    commands.entity(target).insert((A,));
                }
            },
        )
        .expect("observer");
    world
        .add_observer::<Remove<B>, _>(logger::<Remove<B>>("obs remove B"))
        .expect("observer");
    world
        .add_observer::<Poke, _>(logger::<Poke>("poke"))
        .expect("observer");
    world
}

/// Applies `mask`'s components through `insert` or `remove`.
macro_rules! by_mask {
    ($mask:expr, $call:ident) => {
        match $mask {
            1 => $call!((A,)),
            2 => $call!((B,)),
            _ => $call!((A, B)),
        }
    };
}

pub(super) fn apply(op: &ObserveOp, pool: &ThreadPool) -> Result<(), TestCaseError> {
    let executor = match op.by_command {
        Some(0) => ExecutorKind::Serial,
        Some(1) => ExecutorKind::Parallel,
        _ => ExecutorKind::Adaptive,
    };
    let mut world = observed_world(pool, executor, op.cascade);
    let mut model = ModelWorld {
        cascade: op.cascade,
        ..ModelWorld::default()
    };
    for &change in &op.changes {
        model.apply(change);
    }
    if op.by_command.is_some() {
        let changes = op.changes.clone();
        world.add_system(NodeBuilder::new("script").system(
            move |commands: Commands<'_>, mut done: Local<bool>| {
                if std::mem::replace(&mut *done, true) {
                    return;
                }
                let mut spawned = Vec::new();
                let pick = |spawned: &Vec<sluice::Spawned>, e: u8| {
                    (!spawned.is_empty()).then(|| spawned[usize::from(e) % spawned.len()])
                };
                for &change in &changes {
                    match change {
                        Change::Spawn(mask) => {
                            let id = Id(spawned.len() as u32);
                            spawned.push(match mask {
                                0 => commands.spawn((id,)),
                                1 => commands.spawn((id, A)),
                                2 => commands.spawn((id, B)),
                                _ => commands.spawn((id, A, B)),
                            });
                        }
                        Change::Insert(e, mask) => {
                            if let Some(e) = pick(&spawned, e) {
                                let entity = commands.entity(e);
                                macro_rules! ins { ($b:expr) => { entity.insert($b) }; }
                                by_mask!(mask, ins);
                            }
                        }
                        Change::Remove(e, mask) => {
                            if let Some(e) = pick(&spawned, e) {
                                let entity = commands.entity(e);
                                macro_rules! rem { (($($t:ident),+ $(,)?)) => { entity.remove::<($($t,)*)>() }; }
                                by_mask!(mask, rem);
                            }
                        }
                        Change::Despawn(e) => {
                            if let Some(e) = pick(&spawned, e) {
                                commands.despawn(e);
                            }
                        }
                        Change::Poke(e) => {
                            if let Some(e) = pick(&spawned, e) {
                                commands.trigger_targets(Poke, e);
                            }
                        }
                        Change::Watch(e) => {
                            if let Some(e) = pick(&spawned, e) {
                                commands.entity(e).observe::<Poke, _>(watcher);
                            }
                        }
                    }
                }
            },
        ));
        // Commands naming a despawned entity are refused (reported); the
        // rest lands.
        let _ = world.run_iteration();
    } else {
        let mut ents: Vec<Entity> = Vec::new();
        let pick = |ents: &Vec<Entity>, e: u8| {
            (!ents.is_empty()).then(|| ents[usize::from(e) % ents.len()])
        };
        for &change in &op.changes {
            match change {
                Change::Spawn(mask) => {
                    let id = Id(ents.len() as u32);
                    ents.push(match mask {
                        0 => world.spawn((id,)),
                        1 => world.spawn((id, A)),
                        2 => world.spawn((id, B)),
                        _ => world.spawn((id, A, B)),
                    });
                }
                Change::Insert(e, mask) => {
                    if let Some(e) = pick(&ents, e)
                        && let Some(mut entity) = world.entity_mut(e)
                    {
                        macro_rules! ins {
                            ($b:expr) => {
                                entity.insert($b).map(drop)
                            };
                        }
                        by_mask!(mask, ins).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    }
                }
                Change::Remove(e, mask) => {
                    if let Some(e) = pick(&ents, e)
                        && let Some(mut entity) = world.entity_mut(e)
                    {
                        macro_rules! rem { (($($t:ident),+ $(,)?)) => { entity.remove_present::<($($t,)*)>().map(drop) }; }
                        by_mask!(mask, rem).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    }
                }
                Change::Despawn(e) => {
                    if let Some(e) = pick(&ents, e) {
                        let _ = world.despawn(e);
                    }
                }
                Change::Poke(e) => {
                    if let Some(e) = pick(&ents, e)
                        && world.entities().contains(e)
                    {
                        world
                            .trigger_targets(Poke, e)
                            .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    }
                }
                Change::Watch(e) => {
                    if let Some(e) = pick(&ents, e) {
                        let watched = world.observe_entity::<Poke, _>(e, watcher);
                        check(watched.is_ok() == world.entities().contains(e), || {
                            format!("observe_entity of {e}: {watched:?}")
                        })?;
                    }
                }
            }
        }
        let failures = world.take_observer_failures();
        check(failures.is_empty(), || {
            format!("hooks failed: {failures:?}")
        })?;
    }
    let log = std::mem::take(&mut world.get_mut::<Log>().expect("the log").0);
    check(log == model.log, || {
        format!(
            "hooks and observers logged\n{log:#?}\nthe model says\n{:#?}",
            model.log
        )
    })?;
    let mut real: Vec<(u32, bool, bool)> = world
        .query::<(&Id, Has<A>, Has<B>)>()
        .iter()
        .map(|(id, a, b)| (id.0, a, b))
        .collect();
    real.sort_unstable();
    let expected: Vec<(u32, bool, bool)> = model
        .ents
        .iter()
        .enumerate()
        .filter_map(|(id, mask)| mask.map(|m| (id as u32, m & A_BIT != 0, m & B_BIT != 0)))
        .collect();
    check(real == expected, || {
        format!("entities {real:?}, the model's {expected:?}")
    })
}
