//! The guide's section "Bundles, required components and disabled
//! entities" (`docs/guide/04-entities-and-queries.md`), runnable:
//! `cargo run --example bundles`.
//!
//! A wave of soldiers spawned from a derived bundle with a nested body;
//! every soldier requires `Health` (made at 100 unless given) and health
//! requires a `Regen` rate. Wounded soldiers are disabled (hidden from the
//! marching system, still counted by a system that asks for them), healed
//! with `insert_if_new`-style care, and their gear removed even where only
//! part of it is there. The same frames run on one thread and on four and
//! give the same result.

use sluice::exec::ThreadPool;
use sluice::prelude::*;
use sluice::{Allow, Disabled};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Soldier(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(i32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Regen(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shield;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Banner;

#[derive(Bundle)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle)]
struct Recruit {
    soldier: Soldier,
    #[bundle]
    body: Body,
}

/// What a frame ends with: how many march, how many rest, total health.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Report {
    marching: usize,
    resting: usize,
    health: i32,
}

/// Each soldier at the end: its number, position and health.
type Roll = Vec<(u32, f32, i32)>;

fn campaign(threads: usize) -> Result<(Report, Roll), Box<dyn std::error::Error>> {
    let mut world = World::with_pool(ThreadPool::new(threads)?);
    world.register_required_with::<Soldier, Health>(|| Health(100))?;
    world.register_required_with::<Health, Regen>(|| Regen(5))?;
    world.insert(Report::default());
    for i in 0..40u32 {
        let recruit = Recruit {
            soldier: Soldier(i),
            body: Body {
                pos: Pos(0.0),
                vel: Vel(1.0 + (i % 3) as f32),
            },
        };
        let e = world.spawn(recruit);
        if i % 4 == 0 {
            // A veteran: its own health, kept over the requirement's.
            world.entity_mut(e).unwrap().insert((Health(60), Shield))?;
        }
    }
    world.add_system(
        NodeBuilder::new("march").system(|mut q: Query<(&mut Pos, &Vel)>| {
            q.for_each(|(mut pos, vel)| pos.0 += vel.0);
        }),
    );
    world.add_system(NodeBuilder::new("skirmish").after("march").system(
        |q: Query<(Entity, &Soldier, &Pos, &Health)>, commands: Commands| {
            for (e, soldier, pos, health) in q.iter() {
                if soldier.0 % 5 == 1 && pos.0 > 3.0 && health.0 > 0 {
                    // Wounded: disabled, and the gear dropped, part or all.
                    commands
                        .entity(e)
                        .insert((Health(health.0 - 70), Disabled))
                        .remove::<(Shield, Banner)>();
                }
            }
        },
    ));
    world.add_system(NodeBuilder::new("field hospital").system(
        |q: Query<(Entity, &Health, &Regen), With<Disabled>>, commands: Commands| {
            for (e, health, regen) in q.iter() {
                let healed = health.0 + regen.0 * 20;
                let entity = commands.entity(e);
                entity.insert((Health(healed),));
                if healed >= 50 {
                    entity.remove::<(Disabled,)>().insert_if_new((Banner,));
                }
            }
        },
    ));
    world.add_system(NodeBuilder::new("report").after("skirmish").system(
        |marching: Query<&Soldier>,
         all: Query<(&Health, Has<Disabled>), Allow<Disabled>>,
         report: &mut Report| {
            report.marching = marching.iter().count();
            report.resting = all.iter().filter(|(_, off)| *off).count();
            report.health = all.iter().map(|(h, _)| h.0).sum();
        },
    ));
    for _ in 0..6 {
        world.run_iteration()?;
    }
    let report = *world.get::<Report>().expect("inserted");
    let mut soldiers: Roll = world
        .query_filtered::<(&Soldier, &Pos, &Health), Allow<Disabled>>()
        .iter()
        .map(|(s, p, h)| (s.0, p.0, h.0))
        .collect();
    soldiers.sort_by_key(|s| s.0);
    Ok((report, soldiers))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let one = campaign(1)?;
    let four = campaign(4)?;
    assert_eq!(one, four, "the same campaign on one thread and on four");
    let (report, soldiers) = one;
    println!(
        "{} marching, {} resting, {} health in all",
        report.marching, report.resting, report.health
    );
    for (id, pos, health) in soldiers.iter().filter(|s| s.0 % 5 == 1).take(3) {
        println!("soldier {id}: at {pos:.1}, health {health}");
    }
    assert_eq!(report.marching + report.resting, 40);
    Ok(())
}
