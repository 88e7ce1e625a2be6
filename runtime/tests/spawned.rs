//! `Commands::spawn` hands back a `Spawned` (issue 23): later commands of
//! the same iteration link new entities to each other and aim
//! `ComponentRef`s at them, resolved at the boundary in command order, so
//! the ids are the same for every executor and thread count; a handle that
//! cannot resolve is refused, naming why.

use sluice::exec::ThreadPool;
use sluice::{
    Commands, ComponentRef, Entity, EntityError, ExecutorKind, IterationError, NodeBuilder,
    Spawned, World,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Squad(u32, u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
/// A follower names its leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Follows(Entity);
/// A follower reads its leader's position through a reference.
#[derive(Debug)]
struct Aim(ComponentRef<Pos>);
/// Handles kept from one iteration to the next (a misuse).
#[derive(Debug, Default)]
struct Kept(Vec<Spawned>);

fn counts() -> (u32, u32) {
    if cfg!(miri) { (2, 2) } else { (6, 20) }
}
/// The executors compared with the serial run; under Miri the parallel one
/// only: the adaptive executor runs the serial path until its first probe,
/// 32 iterations in, further than a test runs under Miri.
fn parallel_kinds() -> &'static [ExecutorKind] {
    if cfg!(miri) {
        &[ExecutorKind::Parallel]
    } else {
        &[ExecutorKind::Parallel, ExecutorKind::Adaptive]
    }
}

/// Squads spawned by parallel systems: each follower is linked to its
/// leader and aims at its position, and the whole world (ids, links,
/// positions read through the references) is the same on every executor
/// and thread count.
#[test]
fn links_between_new_entities_land_the_same_for_every_thread_count() {
    let (systems, squads) = counts();
    let run = |executor: ExecutorKind, threads: usize| {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
        world.set_executor(executor);
        for system in 0..systems {
            world.add_system(NodeBuilder::new(format!("squads{system}")).system(
                move |commands: Commands<'_>| {
                    for squad in 0..squads {
                        if squad % 5 == 2 {
                            std::hint::black_box((0..300).sum::<u32>());
                        }
                        let leader = commands.spawn((Squad(system, squad), Pos(squad as f32)));
                        commands.entity(leader).freeze();
                        for _ in 0..2 {
                            let follower = commands.spawn((Squad(system, squad),));
                            commands
                                .entity(follower)
                                .insert_with(leader, |l| (Follows(l),))
                                .insert_ref::<Pos, _>(leader, |r| (Aim(r),));
                        }
                    }
                },
            ));
        }
        for _ in 0..2 {
            world.run_iteration().unwrap();
        }
        let links: Vec<(Entity, Squad, Entity)> = world
            .query::<(Entity, &Squad, &Follows)>()
            .iter()
            .map(|(e, squad, follows)| (e, *squad, follows.0))
            .collect();
        let mut followers: Vec<(u64, Squad, u64, Squad, f32)> = links
            .into_iter()
            .map(|(e, squad, leader)| {
                let aim = world.entity(e).unwrap().get::<Aim>().unwrap();
                let aimed = aim.0.get(&world).expect("the leader is alive").0;
                let leaders_squad = *world.entity(leader).unwrap().get::<Squad>().unwrap();
                (e.id(), squad, leader.id(), leaders_squad, aimed)
            })
            .collect();
        followers.sort_by_key(|f| f.0);
        followers
    };
    let serial = run(ExecutorKind::Serial, 0);
    assert_eq!(serial.len(), (2 * 2 * systems * squads) as usize);
    for &(_, squad, _, leaders_squad, aimed) in &serial {
        assert_eq!(
            squad, leaders_squad,
            "a follower follows its own squad's leader"
        );
        assert_eq!(aimed, squad.1 as f32, "and aims at its position");
    }
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    for &threads in threads {
        for &executor in parallel_kinds() {
            assert_eq!(
                run(executor, threads),
                serial,
                "{executor:?} on {threads} threads"
            );
        }
    }
}

/// The refusals: a spawn refused makes the commands naming it refused; a
/// handle kept into the next iteration, or used in another world, is
/// stale. Nothing else is lost.
#[test]
fn unresolvable_handles_are_refused() {
    let mut world = World::new();
    world.insert(Kept::default());
    world.add_system(NodeBuilder::new("spawner").system(
        |commands: Commands<'_>, kept: &mut Kept| {
            if kept.0.is_empty() {
                // A bundle naming one type twice: refused at the boundary.
                let bad = commands.spawn((Pos(1.0), Pos(2.0)));
                commands.entity(bad).insert((Squad(0, 0),));
                let good = commands.spawn((Pos(3.0),));
                commands.entity(good).insert_with(bad, |l| (Follows(l),));
                kept.0.extend([bad, good]);
            } else {
                // Last iteration's handle: stale now.
                commands.entity(kept.0[1]).insert((Squad(1, 1),));
            }
        },
    ));
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("the duplicate bundle and the commands naming it are refused");
    };
    let kept = world.get::<Kept>().unwrap().0.clone();
    let reasons: Vec<_> = failures
        .iter()
        .map(|f| f.refused_because().copied())
        .collect();
    assert!(
        matches!(reasons[0], Some(EntityError::DuplicateComponent { .. })),
        "{reasons:?}"
    );
    assert_eq!(
        reasons[1],
        Some(EntityError::SpawnNotLanded { spawned: kept[0] })
    );
    assert_eq!(
        reasons[2],
        Some(EntityError::SpawnNotLanded { spawned: kept[0] })
    );
    assert_eq!(reasons.len(), 3);
    assert!(
        failures[1].to_string().contains("has not landed"),
        "{}",
        failures[1]
    );
    let good: Vec<f32> = world.query::<&Pos>().iter().map(|p| p.0).collect();
    assert_eq!(
        good,
        vec![3.0],
        "the good spawn landed, without the link to the refused one"
    );
    assert_eq!(world.query::<&Follows>().iter().count(), 0);

    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("last iteration's handle is stale");
    };
    assert_eq!(
        failures[0].refused_because().copied(),
        Some(EntityError::StaleSpawned { spawned: kept[1] })
    );
    assert_eq!(world.query::<&Squad>().iter().count(), 0);

    // Another world's handle, in the same generation of its queue.
    let mut other = World::new();
    other.insert(Kept(vec![kept[1]]));
    other.add_system(
        NodeBuilder::new("borrower").system(|commands: Commands<'_>, kept: &Kept| {
            commands.entity(kept.0[0]).insert((Squad(2, 2),));
        }),
    );
    let Err(IterationError::Boundary(failures)) = other.run_iteration() else {
        panic!("another world's handle is stale here");
    };
    assert_eq!(
        failures[0].refused_because().copied(),
        Some(EntityError::StaleSpawned { spawned: kept[1] })
    );
}

/// A node that fails lands none of its spawns (nothing starts after it, so
/// no node of that iteration names them), and its handles are stale in the
/// next iteration: on every executor.
#[test]
fn a_failed_nodes_spawns_do_not_resolve() {
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
        world.set_executor(executor);
        world.insert(Kept::default());
        world.add_system(NodeBuilder::new("fails").system(
            |commands: Commands<'_>, kept: &mut Kept| {
                if kept.0.is_empty() {
                    kept.0.push(commands.spawn((Pos(1.0),)));
                    panic!("after recording a spawn");
                }
            },
        ));
        world.add_system(NodeBuilder::new("links").system(
            |commands: Commands<'_>, kept: &Kept| {
                if let Some(&leader) = kept.0.first() {
                    let follower = commands.spawn((Squad(0, 0),));
                    commands
                        .entity(follower)
                        .insert_with(leader, |l| (Follows(l),));
                }
            },
        ));
        let Err(IterationError::NodePanicked(_)) = world.run_iteration() else {
            panic!("{executor:?}: the node panics");
        };
        assert_eq!(world.query::<&Pos>().iter().count(), 0, "{executor:?}");
        let leader = world.get::<Kept>().unwrap().0[0];
        let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
            panic!("{executor:?}: the failed node's handle is refused");
        };
        assert_eq!(
            failures[0].refused_because().copied(),
            Some(EntityError::StaleSpawned { spawned: leader }),
            "{executor:?}"
        );
        assert_eq!(
            world.query::<&Squad>().iter().count(),
            1,
            "{executor:?}: the follower spawned"
        );
        assert_eq!(
            world.query::<&Follows>().iter().count(),
            0,
            "{executor:?}: unlinked"
        );
    }
}
