//! `hierarchy`'s propagation frames (`benches/benches/hierarchy.rs`) alone,
//! for counting instructions under callgrind: sluice's serial executor
//! beside bevy_ecs + bevy_transform 0.20's single-threaded schedule (its
//! `ComputeTaskPool` of one thread), each frame a mover then propagation.
//!
//! ```text
//! cargo build --release -p sluice-benches --example hierarchy_callgrind
//! valgrind --tool=callgrind --toggle-collect='*frame_*' \
//!     target/release/examples/hierarchy_callgrind sluice many_small 20
//! ```
//!
//! Arguments: `sluice` or `bevy`; the scene, `many_small` (10,000 trees of
//! a root and 9 children) or `roots_10pct` (1,000 trees of 100); the
//! frames counted (after two uncounted ones). Every tenth root moves, so
//! 10,000 entities are recomputed a frame: the instructions divided by the
//! frames and 10,000 are one moved entity's, everything in the frame
//! counted.

use bevy_ecs::hierarchy::ChildOf as BevyChildOf;
use bevy_ecs::prelude::{
    Component, Entity as BevyEntity, IntoScheduleConfigs, Query as BevyQuery, Schedule,
    With as BevyWith, World as BevyWorld,
};
use bevy_ecs::schedule::SingleThreadedExecutor;
use bevy_transform::components::Transform as BevyTransform;
use bevy_transform::systems::{
    StaticTransformOptimizations, mark_dirty_trees, propagate_parent_transforms,
    sync_simple_transforms,
};
use sluice::exec::ThreadPool;
use sluice::{
    Entity, ExecutorKind, NodeBuilder, Query, Transform, TransformPropagation, With, World,
};

#[derive(Component)]
struct Moving;

/// Trees and each level's fan-out.
fn scene(name: &str) -> (usize, &'static [usize]) {
    match name {
        "many_small" => (10_000, &[9]),
        "roots_10pct" => (1_000, &[9, 10]),
        other => panic!("unknown scene {other:?}: many_small or roots_10pct"),
    }
}

/// Builds the scene through `spawn(parent, n)`; every tenth root is
/// handed to `moving`.
fn build<E: Copy>(
    (trees, fanout): (usize, &[usize]),
    mut spawn: impl FnMut(Option<E>, usize) -> E,
    mut moving: impl FnMut(E),
) {
    let mut n = 0;
    for tree in 0..trees {
        n += 1;
        let root = spawn(None, n);
        if tree % 10 == 0 {
            moving(root);
        }
        let mut frontier = vec![root];
        for &count in fanout {
            let mut below = Vec::new();
            for &parent in &frontier {
                for _ in 0..count {
                    n += 1;
                    below.push(spawn(Some(parent), n));
                }
            }
            frontier = below;
        }
    }
}

fn local(n: usize) -> (f32, f32, f32) {
    let n = n as f32;
    (n * 0.001, 1.0, -n * 0.002)
}

fn sluice_world(name: &str) -> World {
    let mut world = World::with_pool(ThreadPool::new(1).expect("pool"));
    world.set_executor(ExecutorKind::Serial);
    TransformPropagation::add_to(&mut world);
    let mut movers = Vec::new();
    build(
        scene(name),
        |parent: Option<Entity>, n| {
            let (x, y, z) = local(n);
            let transform = Transform::from_xyz(x, y, z);
            match parent {
                None => world.spawn((transform,)),
                Some(parent) => world.spawn_child(parent, (transform,)).expect("alive"),
            }
        },
        |root| movers.push(root),
    );
    for root in movers {
        world
            .entity_mut(root)
            .expect("alive")
            .insert((Moving,))
            .expect("alive");
    }
    world.add_system(NodeBuilder::new("move").system(
        |mut moving: Query<&mut Transform, With<Moving>>| {
            moving.for_each(|mut t| t.translation.x += 1.0);
        },
    ));
    world
}

fn bevy_world(name: &str) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_resource(StaticTransformOptimizations::default());
    let mut movers = Vec::new();
    build(
        scene(name),
        |parent: Option<BevyEntity>, n| {
            let (x, y, z) = local(n);
            let transform = BevyTransform::from_xyz(x, y, z);
            match parent {
                None => world.spawn(transform).id(),
                Some(parent) => world.spawn((transform, BevyChildOf(parent))).id(),
            }
        },
        |root| movers.push(root),
    );
    for root in movers {
        world.entity_mut(root).insert(Moving);
    }
    let mover = |mut moving: BevyQuery<&mut BevyTransform, BevyWith<Moving>>| {
        for mut t in &mut moving {
            t.translation.x += 1.0;
        }
    };
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems(
        (
            mover,
            mark_dirty_trees,
            propagate_parent_transforms,
            sync_simple_transforms,
        )
            .chain(),
    );
    (world, schedule)
}

#[inline(never)]
fn frame_sluice(world: &mut World) {
    world.run_iteration().expect("frame");
}

#[inline(never)]
fn frame_bevy(world: &mut BevyWorld, schedule: &mut Schedule) {
    schedule.run(world);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let side = args.get(1).map_or("sluice", String::as_str);
    let name = args.get(2).map_or("many_small", String::as_str);
    let frames: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(20);
    sluice_benches::threads::init_bevy_pool(1);
    match side {
        "sluice" => {
            let mut world = sluice_world(name);
            for _ in 0..2 {
                world.run_iteration().expect("frame");
            }
            for _ in 0..frames {
                frame_sluice(&mut world);
            }
        }
        "bevy" => {
            let (mut world, mut schedule) = bevy_world(name);
            for _ in 0..2 {
                schedule.run(&mut world);
            }
            for _ in 0..frames {
                frame_bevy(&mut world, &mut schedule);
            }
        }
        other => panic!("unknown side {other:?}: sluice or bevy"),
    }
}
