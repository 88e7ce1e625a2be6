//! `state_transition`: one transition of a state whose `OnEnter` schedule
//! holds 100 systems (each bumping one shared counter, so they run one
//! after another on every executor), from `A` to `B` and back, one
//! transition per iteration: sluice's `World::apply_state_transitions`
//! after a `NextState` request, beside bevy_state 0.20's `StateTransition`
//! schedule run after `NextState::set` on a bevy_ecs 0.20 world (its
//! `OnEnter` schedules on bevy's multi-threaded executor, its default, and
//! on the single-threaded one). Both run the exit schedules too (empty
//! here) and despawn nothing.
//!
//! After criterion's figures, a summary measures every peer again,
//! interleaved, and prints the ratios (`--summary-only` skips criterion).

#![allow(missing_docs)]

use std::time::Duration;

use bevy_ecs::prelude::{ResMut, Resource};
use bevy_ecs::schedule::{
    IntoScheduleConfigs, MultiThreadedExecutor, Schedule, Schedules, SingleThreadedExecutor,
};
use bevy_ecs::world::World as BevyWorld;
use bevy_state::prelude::{NextState as BevyNext, OnEnter as BevyOnEnter, State as BevyState};
use bevy_state::state::{FreelyMutableState, StateTransition, StateTransitionEvent, States};
use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice::exec::ThreadPool;
use sluice::state::{NextState, OnEnter};
use sluice::{ExecutorKind, NodeBuilder, World};
use sluice_benches::rounds::interleaved_medians;
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const SYSTEMS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, States)]
enum Level {
    #[default]
    A,
    B,
}

impl sluice::state::States for Level {}

#[derive(Default, Resource)]
struct Counter(u64);

/// One side of the comparison (a world each, built once: their sizes do
/// not matter).
#[allow(clippy::large_enum_variant)]
enum Peer {
    Sluice(World, Level),
    Bevy(BevyWorld, Level),
}

impl Peer {
    const NAMES: [&'static str; 4] = ["sluice_adaptive", "sluice_serial", "bevy_mt", "bevy_st"];

    fn new(name: &str) -> Self {
        match name {
            "sluice_adaptive" => Peer::Sluice(sluice_world(ExecutorKind::Adaptive), Level::A),
            "sluice_serial" => Peer::Sluice(sluice_world(ExecutorKind::Serial), Level::A),
            "bevy_mt" => Peer::Bevy(bevy_world(true), Level::A),
            _ => Peer::Bevy(bevy_world(false), Level::A),
        }
    }

    /// One transition, to the other value.
    fn transition(&mut self) {
        match self {
            Peer::Sluice(world, at) => {
                *at = other(*at);
                world.get_mut::<NextState<Level>>().expect("added").set(*at);
                world.apply_state_transitions().expect("transitions");
            }
            Peer::Bevy(world, at) => {
                *at = other(*at);
                world.resource_mut::<BevyNext<Level>>().set(*at);
                world.run_schedule(StateTransition);
            }
        }
    }

    fn counter(&self) -> u64 {
        match self {
            Peer::Sluice(world, _) => world.get::<Counter>().expect("inserted").0,
            Peer::Bevy(world, _) => world.resource::<Counter>().0,
        }
    }
}

fn other(level: Level) -> Level {
    match level {
        Level::A => Level::B,
        Level::B => Level::A,
    }
}

fn sluice_world(executor: ExecutorKind) -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(executor);
    world.init_service::<Counter>();
    world.insert_state(Level::A).expect("a new world");
    for level in [Level::A, Level::B] {
        for index in 0..SYSTEMS {
            world.add_system(
                NodeBuilder::new(format!("enter {level:?} {index}"))
                    .in_schedule(OnEnter(level))
                    .system(|counter: &mut Counter| counter.0 += 1),
            );
        }
    }
    // Planned, the initial value entered.
    world.run_iteration().expect("runs");
    world
}

/// A bevy world with the state and its schedules, on the multi-threaded
/// executor (bevy's default) or the single-threaded one.
fn bevy_world(multi_threaded: bool) -> BevyWorld {
    let mut world = BevyWorld::new();
    world.init_resource::<Counter>();
    bevy_ecs::message::MessageRegistry::register_message::<StateTransitionEvent<Level>>(&mut world);
    world.init_resource::<BevyState<Level>>();
    world.init_resource::<BevyNext<Level>>();
    world.init_resource::<Schedules>();
    bevy_state::state::setup_state_transitions_in_world(&mut world);
    {
        let mut schedules = world.resource_mut::<Schedules>();
        let transition = schedules
            .get_mut(StateTransition)
            .expect("set up just above");
        Level::register_state(transition);
        for level in [Level::A, Level::B] {
            let mut schedule = Schedule::new(BevyOnEnter(level));
            if multi_threaded {
                schedule.set_executor(MultiThreadedExecutor::new());
            } else {
                schedule.set_executor(SingleThreadedExecutor::new());
            }
            for _ in 0..SYSTEMS {
                schedule.add_systems(
                    (|mut counter: ResMut<Counter>| counter.0 += 1).ambiguous_with_all(),
                );
            }
            schedules.insert(schedule);
        }
    }
    // Built and warmed: one round trip.
    world.resource_mut::<BevyNext<Level>>().set(Level::B);
    world.run_schedule(StateTransition);
    world.resource_mut::<BevyNext<Level>>().set(Level::A);
    world.run_schedule(StateTransition);
    world
}

fn state_transition(c: &mut Criterion) {
    init_bevy_pool(bench_threads());
    let mut group = c.benchmark_group("state_transition");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for name in Peer::NAMES {
        let mut peer = Peer::new(name);
        group.bench_function(BenchmarkId::new(name, SYSTEMS), |b| {
            b.iter(|| peer.transition());
        });
        assert!(peer.counter() > 0, "{name}: the OnEnter systems ran");
    }
    group.finish();
}

fn summary() {
    const ROUNDS: usize = 7;
    init_bevy_pool(bench_threads());
    let mut peers: Vec<Peer> = Peer::NAMES.iter().map(|name| Peer::new(name)).collect();
    let before: Vec<u64> = peers.iter().map(Peer::counter).collect();
    peers.iter_mut().for_each(Peer::transition);
    for ((name, peer), before) in Peer::NAMES.iter().zip(&peers).zip(before) {
        assert_eq!(
            peer.counter() - before,
            SYSTEMS as u64,
            "{name}: one transition runs the {SYSTEMS} OnEnter systems once"
        );
    }
    let medians = interleaved_medians(
        &mut peers,
        ROUNDS,
        Duration::from_millis(100),
        Peer::transition,
    );
    println!(
        "\nstate_transition summary ({SYSTEMS} OnEnter systems, median of {ROUNDS} interleaved rounds of 100 ms):"
    );
    for (name, ns) in Peer::NAMES.iter().zip(&medians) {
        println!("{name:>16} {:>9.2} us", ns / 1e3);
    }
    println!(
        "   sluice_adaptive / bevy_mt = {:.2}x, sluice_serial / bevy_st = {:.2}x",
        medians[0] / medians[2],
        medians[1] / medians[3]
    );
}

criterion_group!(benches, state_transition);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--summary-only") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
