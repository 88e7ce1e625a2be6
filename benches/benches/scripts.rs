//! Durable scripts (issue 11): 10,000 wave spawners, each waiting ten ticks
//! between intents, staggered so 1,000 are due every tick (`scripts/tick`);
//! and the same waiting a hundred ticks, 100 due every tick
//! (`scripts/sparse_tick`). One tick: the clock advances 10 ms, the due
//! scripts run and emit, and a collect system applies the intents (a sum).
//!
//! - `sluice_async`: `async` scripts (`cx.wait(100 ms)` in a loop) in
//!   `Scripts`, a gather system and a collect system, `World::update`;
//! - `sluice_step`: the same as `StepScript`s (state as data);
//! - `sluice_state_machine`: the hand-written equivalent in one system, a
//!   `Vec` of (next wake, who) scanned every tick, in the same kind of world;
//! - `bevy_timers`: bevy_ecs 0.20, one entity per spawner with a timer
//!   component (bevy_time's `Timer` logic: tick by the delta, fire and
//!   rewind when it runs out) and a system that ticks them and pushes
//!   intents into a resource, then a collect system, on the multi-threaded
//!   executor.
//!
//! The sluice worlds use a pool of one thread per core; `SCRIPTS_THREADS=1`
//! (or any count) sets it.

use std::hint::black_box;
use std::time::Duration;

use bevy_ecs::prelude::{
    Component, Query as BevyQuery, ResMut, Resource, Schedule, World as BevyWorld,
};
use bevy_ecs::schedule::{IntoScheduleConfigs, MultiThreadedExecutor};
use criterion::{Criterion, criterion_group, criterion_main};
use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
use sluice::{NodeBuilder, World};

const SCRIPTS: u64 = 10_000;
const TICK: Duration = Duration::from_millis(10);

/// Wave spawners: they read nothing and emit who they are.
struct Spawners;

impl ScriptKind for Spawners {
    type View<'v> = ();
    type Intent = u64;
}

/// What the collect systems sum the intents into.
#[derive(Default, Resource)]
struct Total(u64);

/// The first wait of spawner `who`: staggered over the `period` ticks.
fn first_wait(who: u64, period: u32) -> Duration {
    TICK * (who % u64::from(period)) as u32 + TICK / 2
}

fn world_with(scripts: Scripts<Spawners>) -> World {
    let mut world = match std::env::var("SCRIPTS_THREADS") {
        Ok(n) => World::with_pool(sluice::exec::ThreadPool::new(n.parse().unwrap()).unwrap()),
        Err(_) => World::new(),
    };
    world.insert(SimClock::new());
    world.insert(Total::default());
    world.insert(scripts);
    world
        .add_system(NodeBuilder::new("gather").system(
            |scripts: &mut Scripts<Spawners>, clock: &SimClock| scripts.gather(clock, &()),
        ));
    world.add_system(NodeBuilder::new("collect").system(
        |scripts: &mut Scripts<Spawners>, total: &mut Total| {
            total.0 += scripts.drain_intents().map(|(_, who)| who).sum::<u64>();
        },
    ));
    world
}

fn async_world(period: u32) -> World {
    let mut scripts = Scripts::<Spawners>::new();
    for who in 0..SCRIPTS {
        scripts.start("spawner", move |cx| async move {
            cx.wait(first_wait(who, period)).await;
            loop {
                cx.emit(who);
                cx.wait(TICK * period).await;
            }
        });
    }
    world_with(scripts)
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Spawner {
    who: u64,
    period: u32,
    started: bool,
}

impl StepScript<Spawners> for Spawner {
    fn step(&mut self, cx: &mut Step<'_, '_, Spawners>) -> Wait<Spawners> {
        if std::mem::replace(&mut self.started, true) {
            cx.emit(self.who);
            Wait::For(TICK * self.period)
        } else {
            Wait::For(first_wait(self.who, self.period))
        }
    }
}

fn step_world(period: u32) -> World {
    let mut scripts = Scripts::<Spawners>::new();
    for who in 0..SCRIPTS {
        scripts.start_step(
            "spawner",
            Spawner {
                who,
                period,
                started: false,
            },
        );
    }
    world_with(scripts)
}

/// The hand-written state machine: every spawner's next wake, scanned.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Machines {
    next: Vec<(Duration, u64)>,
    intents: Vec<u64>,
}

fn state_machine_world(period: u32) -> World {
    let mut world = World::new();
    world.insert(SimClock::new());
    world.insert(Total::default());
    world.insert(Machines {
        next: (0..SCRIPTS)
            .map(|who| (first_wait(who, period) + TICK, who))
            .collect(),
        intents: Vec::new(),
    });
    world.add_system(NodeBuilder::new("machines").system(
        move |machines: &mut Machines, clock: &SimClock, total: &mut Total| {
            let Machines { next, intents } = machines;
            for (wake, who) in next.iter_mut() {
                if *wake <= clock.now() {
                    intents.push(*who);
                    *wake += TICK * period;
                }
            }
            total.0 += intents.drain(..).sum::<u64>();
        },
    ));
    world
}

/// bevy_time's `Timer`, repeating: ticked by the delta, fires when it runs
/// out and rewinds by its period.
#[derive(Component)]
struct SpawnTimer {
    elapsed: Duration,
    duration: Duration,
    period: Duration,
    who: u64,
    finished: bool,
}

#[derive(Default, Resource)]
struct Intents(Vec<u64>);

fn bevy_tick(mut timers: BevyQuery<&mut SpawnTimer>, mut intents: ResMut<Intents>) {
    for mut timer in &mut timers {
        let timer = &mut *timer;
        timer.elapsed += TICK;
        timer.finished = timer.elapsed >= timer.duration;
        if timer.finished {
            timer.elapsed -= timer.duration;
            timer.duration = timer.period;
            intents.0.push(timer.who);
        }
    }
}

fn bevy_collect(mut intents: ResMut<Intents>, mut total: ResMut<Total>) {
    total.0 += intents.0.drain(..).sum::<u64>();
}

/// One group: every contender at `period` ticks between intents.
fn group(c: &mut Criterion, name: &str, period: u32) {
    let mut group = c.benchmark_group(name);
    for (name, mut world) in [
        ("sluice_async", async_world(period)),
        ("sluice_step", step_world(period)),
        ("sluice_state_machine", state_machine_world(period)),
    ] {
        for _ in 0..period + 10 {
            world.update(TICK).expect("runs");
        }
        let before = world.get::<Total>().expect("total").0;
        world.update(TICK).expect("runs");
        let per_tick = world.get::<Total>().expect("total").0 - before;
        assert!(per_tick > 0, "{name}: spawners fire");
        group.bench_function(name, |b| {
            b.iter(|| world.update(black_box(TICK)).expect("runs"))
        });
    }

    let mut bevy = BevyWorld::new();
    bevy.insert_resource(Total::default());
    bevy.insert_resource(Intents::default());
    bevy.spawn_batch((0..SCRIPTS).map(|who| SpawnTimer {
        elapsed: Duration::ZERO,
        duration: first_wait(who, period) + TICK,
        period: TICK * period,
        who,
        finished: false,
    }));
    let mut schedule = Schedule::default();
    schedule.set_executor(MultiThreadedExecutor::new());
    schedule.add_systems((bevy_tick, bevy_collect).chain());
    for _ in 0..period + 10 {
        schedule.run(&mut bevy);
    }
    group.bench_function("bevy_timers", |b| b.iter(|| schedule.run(&mut bevy)));
    group.finish();
}

/// Saves (issue 39): the 10,000 step spawners' store written to a warm
/// `Vec` (`World::save_scripts`, `save_step_script`: each script's type
/// name, id, name, wait and state) and loaded back into the world
/// (`load_from`: decoded, checked, then put back); beside the peer, the
/// hand-written state machine's `Machines` (the same spawners as plain
/// data) saved as a service and loaded the same way.
fn save_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("scripts/save_load");
    let mut scripts = step_world(10);
    scripts
        .snapshot_scripts::<Spawners>()
        .save_scripts::<Spawners>("spawners")
        .save_step_script::<Spawners, Spawner>("spawner");
    let mut machines = state_machine_world(10);
    machines.save_service::<Machines>("machines");
    for (name, world) in [
        ("sluice_step", &mut scripts),
        ("state_machine_service", &mut machines),
    ] {
        for _ in 0..20 {
            world.update(TICK).expect("runs");
        }
        let snapshot = world.snapshot().expect("between frames");
        assert!(
            snapshot.not_saved().is_empty(),
            "{name}: {:?}",
            snapshot.not_saved()
        );
        let mut save = Vec::new();
        snapshot.write_to(&mut save).expect("saves");
        println!("scripts/save_load/{name}: a save of {} bytes", save.len());
        group.bench_function(format!("save/{name}"), |b| {
            b.iter(|| {
                save.clear();
                snapshot.write_to(&mut save).expect("saves");
            })
        });
        group.bench_function(format!("load/{name}"), |b| {
            b.iter(|| world.load_from(&save[..]).expect("loads"))
        });
    }
    group.finish();
}

fn scripts(c: &mut Criterion) {
    group(c, "scripts/tick", 10);
    group(c, "scripts/sparse_tick", 100);
    save_load(c);
}

criterion_group!(benches, scripts);
criterion_main!(benches);
