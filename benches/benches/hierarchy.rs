//! Hierarchies (issue 37): transform propagation and subtree despawn,
//! sluice beside bevy_ecs 0.20 + bevy_transform 0.20 in one group.
//!
//! Propagation rows, one frame each (a mover system, then propagation):
//!
//! - `static`: 100,000 entities in 1,000 trees of 100 (a root, 9
//!   children, 90 grandchildren); nothing moves.
//! - `roots_10pct`: the same scene, every tenth root moved each frame
//!   (10,000 entities recomputed).
//! - `deep_chain`: one chain of 100,000 entities, its root moved each
//!   frame (every entity recomputed, necessarily in order).
//! - `many_small`: 10,000 hierarchies of 10 (a root and 9 children),
//!   every tenth root moved each frame: the case Flecs v4.1's
//!   non-fragmenting `Parent` storage is for. sluice stores `ChildOf` as a
//!   column, so these 100,000 entities live in two archetypes.
//!
//! sluice: `TransformPropagation` on the parallel executor; bevy: its
//! `mark_dirty_trees`, `propagate_parent_transforms` and
//! `sync_simple_transforms` chained, as `TransformPlugin` adds them, with
//! the static-scene optimisation on (its default), on its multi-threaded
//! executor. Both sides with `sluice_benches::threads::bench_threads()`
//! threads (`SLUICE_BENCH_THREADS`).
//!
//! `despawn_subtree`: despawning the root of a 100,001-entity subtree (a
//! root, 100 children, 999 grandchildren each): sluice's `World::despawn`
//! (children before parents), bevy's `World::despawn` (which despawns
//! `Children` with it).
//!
//! After criterion's figures, a summary measures both sides again in
//! interleaved rounds and prints the ratios (`-- --summary-only` skips
//! criterion).

#![allow(missing_docs)]

use std::time::Duration;

use bevy_ecs::hierarchy::ChildOf as BevyChildOf;
use bevy_ecs::prelude::{
    Component, Entity as BevyEntity, IntoScheduleConfigs, Query as BevyQuery, Schedule,
    With as BevyWith, World as BevyWorld,
};
use bevy_transform::components::{GlobalTransform as BevyGlobal, Transform as BevyTransform};
use bevy_transform::systems::{
    StaticTransformOptimizations, mark_dirty_trees, propagate_parent_transforms,
    sync_simple_transforms,
};
use criterion::{BatchSize, Criterion};
use sluice::exec::ThreadPool;
use sluice::{
    Entity, ExecutorKind, GlobalTransform, NodeBuilder, Query, Transform, TransformPropagation,
    With, World,
};
use sluice_benches::rounds::interleaved_medians;
use sluice_benches::threads::{bench_threads, init_bevy_pool};

/// Moved each frame.
#[derive(Component)]
struct Moving;

/// A scene: `trees` trees, each level's fan-out in `fanout`, the levels
/// repeated `repeat` times (a chain is one tree of fan-out 1), every
/// `move_every`-th root moving (0: none).
#[derive(Clone, Copy)]
struct Scene {
    name: &'static str,
    trees: usize,
    fanout: &'static [usize],
    repeat: usize,
    move_every: usize,
}

const SCENES: [Scene; 4] = [
    Scene {
        name: "static",
        trees: 1_000,
        fanout: &[9, 10],
        repeat: 1,
        move_every: 0,
    },
    Scene {
        name: "roots_10pct",
        trees: 1_000,
        fanout: &[9, 10],
        repeat: 1,
        move_every: 10,
    },
    Scene {
        name: "deep_chain",
        trees: 1,
        fanout: &[1],
        repeat: 99_999,
        move_every: 1,
    },
    Scene {
        name: "many_small",
        trees: 10_000,
        fanout: &[9],
        repeat: 1,
        move_every: 10,
    },
];

fn local(n: usize) -> (f32, f32, f32) {
    let n = n as f32;
    (n * 0.001, 1.0, -n * 0.002)
}

/// Builds `scene` through `spawn(parent, n)`, returning each root.
fn build<E: Copy>(scene: Scene, mut spawn: impl FnMut(Option<E>, usize) -> E) -> Vec<E> {
    let mut n = 0;
    let mut roots = Vec::new();
    for _ in 0..scene.trees {
        n += 1;
        let root = spawn(None, n);
        roots.push(root);
        let mut frontier = vec![root];
        for &fanout in scene
            .fanout
            .iter()
            .cycle()
            .take(scene.fanout.len() * scene.repeat)
        {
            let mut below = Vec::with_capacity(frontier.len() * fanout);
            for &parent in &frontier {
                for _ in 0..fanout {
                    n += 1;
                    below.push(spawn(Some(parent), n));
                }
            }
            frontier = below;
        }
    }
    roots
}

fn sluice_scene(scene: Scene, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    TransformPropagation::add_to(&mut world);
    let roots = build(scene, |parent: Option<Entity>, n| {
        let (x, y, z) = local(n);
        let transform = Transform::from_xyz(x, y, z);
        match parent {
            None => world.spawn((transform,)),
            Some(parent) => world.spawn_child(parent, (transform,)).expect("alive"),
        }
    });
    if scene.move_every > 0 {
        for root in roots.into_iter().step_by(scene.move_every) {
            world
                .entity_mut(root)
                .unwrap()
                .insert((Moving,))
                .expect("alive");
        }
    }
    world.add_system(NodeBuilder::new("move").system(
        |mut moving: Query<&mut Transform, With<Moving>>| {
            moving.for_each(|mut t| t.translation.x += 1.0);
        },
    ));
    world.run_iteration().expect("first frame");
    world
}

fn bevy_scene(scene: Scene) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_resource(StaticTransformOptimizations::default());
    let roots = build(scene, |parent: Option<BevyEntity>, n| {
        let (x, y, z) = local(n);
        let transform = BevyTransform::from_xyz(x, y, z);
        match parent {
            None => world.spawn(transform).id(),
            Some(parent) => world.spawn((transform, BevyChildOf(parent))).id(),
        }
    });
    if scene.move_every > 0 {
        for root in roots.into_iter().step_by(scene.move_every) {
            world.entity_mut(root).insert(Moving);
        }
    }
    let mover = |mut moving: BevyQuery<&mut BevyTransform, BevyWith<Moving>>| {
        for mut t in &mut moving {
            t.translation.x += 1.0;
        }
    };
    let mut schedule = Schedule::default();
    schedule.add_systems(
        (
            mover,
            mark_dirty_trees,
            propagate_parent_transforms,
            sync_simple_transforms,
        )
            .chain(),
    );
    schedule.run(&mut world);
    (world, schedule)
}

/// Both sides' world position of the scene's deepest-built entity, to
/// check they compute the same thing before timing.
fn check_same(scene: Scene, sluice: &mut World, bevy: &mut BevyWorld) {
    let ours: f32 = sluice
        .query::<&GlobalTransform>()
        .iter()
        .map(|g| g.translation().y)
        .fold(0.0, f32::max);
    let theirs: f32 = bevy
        .query::<&BevyGlobal>()
        .iter(bevy)
        .map(|g| g.translation().y)
        .fold(0.0, f32::max);
    assert!(
        (ours - theirs).abs() <= 1e-3 * theirs.abs().max(1.0),
        "{}: sluice {ours}, bevy {theirs}",
        scene.name
    );
}

/// The subtree despawned: a root, 100 children, 999 grandchildren each.
const DESPAWN_WIDE: usize = 100;
const DESPAWN_DEEP: usize = 999;

#[derive(Component)]
struct Hp(#[allow(dead_code)] u32);

fn sluice_subtree() -> (World, Entity) {
    let mut world = World::new();
    let root = world.spawn((Hp(0),));
    for _ in 0..DESPAWN_WIDE {
        let branch = world.spawn_child(root, (Hp(1),)).expect("alive");
        for _ in 0..DESPAWN_DEEP {
            world.spawn_child(branch, (Hp(2),)).expect("alive");
        }
    }
    (world, root)
}

fn bevy_subtree() -> (BevyWorld, BevyEntity) {
    let mut world = BevyWorld::new();
    let root = world.spawn(Hp(0)).id();
    for _ in 0..DESPAWN_WIDE {
        let branch = world.spawn((Hp(1), BevyChildOf(root))).id();
        for _ in 0..DESPAWN_DEEP {
            world.spawn((Hp(2), BevyChildOf(branch)));
        }
    }
    (world, root)
}

fn criterion_rows(c: &mut Criterion, threads: usize) {
    let mut group = c.benchmark_group("hierarchy");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for scene in SCENES {
        let mut sluice = sluice_scene(scene, threads);
        let (mut bevy, mut schedule) = bevy_scene(scene);
        check_same(scene, &mut sluice, &mut bevy);
        group.bench_function(format!("propagate/{}/sluice", scene.name), |b| {
            b.iter(|| sluice.run_iteration().expect("frame"));
        });
        group.bench_function(format!("propagate/{}/bevy", scene.name), |b| {
            b.iter(|| schedule.run(&mut bevy));
        });
    }
    group.sample_size(10);
    group.bench_function("despawn_subtree/sluice", |b| {
        b.iter_batched(
            sluice_subtree,
            |(mut world, root)| {
                world.despawn(root).expect("alive");
                world
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("despawn_subtree/bevy", |b| {
        b.iter_batched(
            bevy_subtree,
            |(mut world, root)| {
                world.despawn(root);
                world
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

fn summary(threads: usize) {
    println!("\nhierarchy summary ({threads} threads; medians of interleaved rounds, ns/frame)");
    println!("| row | sluice | bevy | bevy / sluice |");
    println!("| --- | --- | --- | --- |");
    for scene in SCENES {
        enum Side {
            Sluice(Box<World>),
            Bevy(Box<(BevyWorld, Schedule)>),
        }
        let mut sides = [
            Side::Sluice(Box::new(sluice_scene(scene, threads))),
            Side::Bevy(Box::new(bevy_scene(scene))),
        ];
        let medians =
            interleaved_medians(
                &mut sides,
                7,
                Duration::from_millis(300),
                |side| match side {
                    Side::Sluice(world) => world.run_iteration().expect("frame"),
                    Side::Bevy(bevy) => {
                        let (world, schedule) = &mut **bevy;
                        schedule.run(world);
                    }
                },
            );
        println!(
            "| propagate/{} | {:.0} | {:.0} | {:.2}x |",
            scene.name,
            medians[0],
            medians[1],
            medians[1] / medians[0]
        );
    }
    // Despawn: one subtree per sample, built outside the timing.
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..7 {
        let (mut world, root) = sluice_subtree();
        let start = std::time::Instant::now();
        world.despawn(root).expect("alive");
        ours.push(start.elapsed().as_nanos() as f64);
        drop(world);
        let (mut world, root) = bevy_subtree();
        let start = std::time::Instant::now();
        world.despawn(root);
        theirs.push(start.elapsed().as_nanos() as f64);
    }
    let (ours, theirs) = (
        sluice_benches::rounds::median(ours),
        sluice_benches::rounds::median(theirs),
    );
    println!(
        "| despawn_subtree | {ours:.0} | {theirs:.0} | {:.2}x |",
        theirs / ours
    );
}

fn main() {
    let threads = bench_threads();
    let bevy_threads = init_bevy_pool(threads);
    assert_eq!(
        bevy_threads, threads,
        "bevy's pool has {bevy_threads} threads"
    );
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--summary-only") {
        let mut criterion = Criterion::default().configure_from_args();
        criterion_rows(&mut criterion, threads);
        criterion.final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary(threads);
    }
}
