//! Probe: the sluice side of `benches/hierarchy.rs`'s `many_small` and
//! `roots_10pct` scenes, for `perf record` (not a row).
#![allow(missing_docs)]
use sluice::exec::ThreadPool;
use sluice::{
    Entity, ExecutorKind, NodeBuilder, Query, Transform, TransformPropagation, With, World,
};

struct Moving;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (trees, fanout): (usize, &[usize]) = if args.get(1).map(String::as_str) == Some("small") {
        (10_000, &[9])
    } else {
        (1_000, &[9, 10])
    };
    let frames: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(500);
    let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    TransformPropagation::add_to(&mut world);
    let mut roots = Vec::new();
    for t in 0..trees {
        let root = world.spawn((Transform::from_xyz(t as f32, 0.0, 0.0),));
        roots.push(root);
        let mut frontier: Vec<Entity> = vec![root];
        for &f in fanout {
            let mut below = Vec::new();
            for &p in &frontier {
                for _ in 0..f {
                    below.push(
                        world
                            .spawn_child(p, (Transform::from_xyz(0.0, 1.0, 0.0),))
                            .unwrap(),
                    );
                }
            }
            frontier = below;
        }
    }
    let moving = if args.get(1).map(String::as_str) == Some("static") {
        usize::MAX
    } else {
        10
    };
    for root in roots
        .into_iter()
        .step_by(moving)
        .skip(usize::from(moving == usize::MAX))
    {
        world.entity_mut(root).unwrap().insert((Moving,)).unwrap();
    }
    world.add_system(NodeBuilder::new("move").system(
        |mut q: Query<&mut Transform, With<Moving>>| {
            q.for_each(|mut t| t.translation.x += 1.0);
        },
    ));
    world.run_iteration().unwrap();
    let start = std::time::Instant::now();
    for _ in 0..frames {
        world.run_iteration().unwrap();
    }
    println!("{:?} per frame", start.elapsed() / frames as u32);
}
