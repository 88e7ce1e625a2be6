//! The guide's chapter "Hierarchies" (`docs/guide/15-hierarchies.md`),
//! runnable: `cargo run --example hierarchy`.
//!
//! A fleet of ships, each carrying turrets that carry barrels, built from
//! a system with `with_children`; the ships move every frame and
//! `propagate_transforms` carries the turrets along; a cycle is refused by
//! name; a ship is sunk (its subtree goes with it, children first); a
//! turret is handed to another ship. The same frames run on one thread and
//! on four and give bit-identical world transforms.

use sluice::exec::ThreadPool;
use sluice::glam::Quat;
use sluice::{
    Commands, Entity, EntityError, ExecutorKind, GlobalTransform, IterationError, NodeBuilder,
    Query, Transform, TransformPropagation, With, World,
};

struct Ship;
struct Turret;

const SHIPS: usize = 200;

/// Runs the fleet for a few frames on `threads` threads and returns every
/// entity's world transform, sorted by entity.
fn fleet(threads: usize) -> Result<Vec<(Entity, [f32; 12])>, IterationError> {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("a pool"));
    world.set_executor(if threads == 1 {
        ExecutorKind::Serial
    } else {
        ExecutorKind::Parallel
    });
    TransformPropagation::add_to(&mut world);
    world.add_system(NodeBuilder::new("launch").system(
        |ships: Query<Entity, With<Ship>>, commands: Commands| {
            if !ships.is_empty() {
                return;
            }
            for n in 0..SHIPS {
                let at = Transform::from_xyz(n as f32 * 10.0, 0.0, 0.0);
                commands.spawn_with((Ship, at)).with_children(|ship| {
                    for side in [-1.0, 1.0] {
                        let turret = ship.spawn((Turret, Transform::from_xyz(side, 1.0, 0.0)));
                        ship.commands().entity(turret).with_children(|turret| {
                            turret.spawn((Transform::from_xyz(0.0, 0.0, 2.0),));
                        });
                    }
                });
            }
        },
    ));
    world.add_system(NodeBuilder::new("sail").system(
        |mut ships: Query<&mut Transform, With<Ship>>| {
            ships.for_each(|mut t| {
                t.translation.z += 1.0;
                t.rotation *= Quat::from_rotation_y(0.05);
            });
        },
    ));
    for _ in 0..3 {
        world.run_iteration()?;
    }
    let ships: Vec<Entity> = world
        .query_filtered::<Entity, With<Ship>>()
        .iter()
        .collect();
    let turret = world.children(ships[0])[0];
    let barrel = world.children(turret)[0];

    // A cycle is refused by name and changes nothing.
    let refused = world.set_parent(ships[0], barrel);
    assert_eq!(
        refused,
        Err(EntityError::ParentCycle {
            child: ships[0],
            parent: barrel
        })
    );
    if threads == 1 {
        println!("refused: {}", refused.unwrap_err());
    }

    // Hand the turret to another ship, sink the first one.
    world.set_parent(turret, ships[1]).expect("alive");
    let before = world.entities().len();
    world.despawn(ships[0]).expect("alive");
    assert_eq!(world.entities().len(), before - 3); // the ship, a turret, its barrel
    assert!(
        world.entity(barrel).is_some(),
        "the handed-over turret's barrel stays"
    );
    world.run_iteration()?;

    let at = world
        .entity(barrel)
        .unwrap()
        .get::<GlobalTransform>()
        .unwrap()
        .translation();
    let ship_at = world
        .entity(ships[1])
        .unwrap()
        .get::<GlobalTransform>()
        .unwrap()
        .translation();
    assert!(
        (at - ship_at).length() < 3.0,
        "the barrel rides its new ship"
    );
    if threads == 1 {
        println!(
            "{} entities; the handed-over barrel is at {at:.2}, its new ship at {ship_at:.2}",
            world.entities().len()
        );
        let depth: Vec<usize> = world
            .descendants(ships[1])
            .map(|e| world.ancestors(e).count())
            .collect();
        println!("ship 1's subtree, depth first, by depth: {depth:?}");
    }
    let mut all: Vec<(Entity, [f32; 12])> = world
        .query::<(Entity, &GlobalTransform)>()
        .iter()
        .map(|(e, g)| (e, g.affine().to_cols_array()))
        .collect();
    all.sort_by_key(|(e, _)| *e);
    Ok(all)
}

fn main() -> Result<(), IterationError> {
    let one = fleet(1)?;
    let four = fleet(4)?;
    assert_eq!(
        one, four,
        "the same world transforms on one thread and on four"
    );
    println!(
        "{} world transforms, identical on 1 and 4 threads",
        one.len()
    );
    Ok(())
}
