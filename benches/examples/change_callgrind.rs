//! `change_detection`'s frame alone (`benches/benches/change_detection.rs`:
//! a writer over 100,000 rows writing one in `every`, then a `Changed`
//! reader), for counting instructions per row under callgrind, sluice's
//! serial executor or bevy_ecs' single-threaded schedule:
//!
//! ```text
//! cargo build --release -p sluice-benches --example change_callgrind
//! valgrind --tool=callgrind --toggle-collect='*frame_*' \
//!     target/release/examples/change_callgrind sluice 1 20
//! ```
//!
//! Arguments: `sluice` or `bevy`, `every` (1: `write_all`, 10:
//! `partial_write`), the frames counted (after two uncounted ones).
//! The instructions divided by the frames and 100,000 are one row's, the
//! writer's and the reader's together.

use bevy_ecs::prelude::{
    Changed as BevyChanged, Component, IntoScheduleConfigs, Query as BevyQuery, ResMut, Resource,
    Schedule, World as BevyWorld,
};
use bevy_ecs::schedule::SingleThreadedExecutor;
use sluice::exec::ThreadPool;
use sluice::{Changed, ExecutorKind, NodeBuilder, Query, World};

const ENTITIES: u32 = 100_000;

#[derive(Component, Clone, Copy)]
struct A(u32);

#[derive(Component, Clone, Copy)]
struct Index(u32);

#[derive(Resource, Default)]
struct Count(usize);

fn due(index: u32, every: u32) -> bool {
    index.is_multiple_of(every)
}

fn sluice_world(every: u32) -> World {
    let mut world = World::with_pool(ThreadPool::new(1).expect("pool"));
    world.set_executor(ExecutorKind::Serial);
    world.spawn_batch((0..ENTITIES).map(|i| (A(0), Index(i))));
    world.insert(Count::default());
    world.add_system(
        NodeBuilder::new("write").system(move |mut rows: Query<(&mut A, &Index)>| {
            rows.for_each(|(mut a, index)| {
                if due(index.0, every) {
                    a.0 += 1;
                }
            });
        }),
    );
    world.add_system(NodeBuilder::new("read").after("write").system(
        |changed: Query<&A, Changed<A>>, count: &mut Count| {
            count.0 = changed.iter().count();
        },
    ));
    world
}

fn bevy_world(every: u32) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.spawn_batch((0..ENTITIES).map(|i| (A(0), Index(i))));
    world.insert_resource(Count::default());
    let write = move |mut rows: BevyQuery<(&mut A, &Index)>| {
        for (mut a, index) in &mut rows {
            if due(index.0, every) {
                a.0 += 1;
            }
        }
    };
    let read = |changed: BevyQuery<&A, BevyChanged<A>>, mut count: ResMut<Count>| {
        count.0 = changed.iter().count();
    };
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((write, read).chain());
    (world, schedule)
}

#[inline(never)]
fn frame_sluice(world: &mut World) {
    world.run_iteration().expect("runs");
}

#[inline(never)]
fn frame_bevy(world: &mut BevyWorld, schedule: &mut Schedule) {
    schedule.run(world);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let peer = args.next().unwrap_or_else(|| "sluice".into());
    let every: u32 = args.next().map_or(1, |a| a.parse().expect("every"));
    let frames: usize = args.next().map_or(20, |a| a.parse().expect("frames"));
    let expected = (ENTITIES as usize).div_ceil(every as usize);
    match peer.as_str() {
        "sluice" => {
            let mut world = sluice_world(every);
            for _ in 0..2 {
                world.run_iteration().expect("runs");
            }
            for _ in 0..frames {
                frame_sluice(&mut world);
            }
            assert_eq!(world.get::<Count>().unwrap().0, expected);
        }
        "bevy" => {
            let (mut world, mut schedule) = bevy_world(every);
            for _ in 0..2 {
                schedule.run(&mut world);
            }
            for _ in 0..frames {
                frame_bevy(&mut world, &mut schedule);
            }
            assert_eq!(world.resource::<Count>().0, expected);
        }
        other => panic!("unknown peer {other:?} (sluice or bevy)"),
    }
    println!("{peer}: every {every}, {frames} frames");
}
