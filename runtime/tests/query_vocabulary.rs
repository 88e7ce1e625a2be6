//! Issue 36, queries: `Has<T>`, `Or<(..)>`, `AnyOf<(..)>`, `Single` and
//! `Populated` (skipping, not failing, their system), `get_many`,
//! `get_many_mut`, `iter_many`, `iter_combinations` and
//! `iter_combinations_mut`. Each on every executor kind and on 1, 2 and 4
//! threads, where the result must be the serial one.

#[path = "support/executors.rs"]
mod executors;

use executors::{executors, world_on};
use std::collections::BTreeSet;

use sluice::{
    Added, AnyOf, Changed, Commands, Entity, Has, NodeBuilder, Or, Populated, Query,
    QueryEntityError, Single, With, Without, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hp(u32);
struct Shield;
struct Player;
struct Enemy;

/// What the systems under test saw, frame by frame.
#[derive(Debug, Default, PartialEq)]
struct Seen(Vec<Vec<u32>>);

#[test]
fn has_yields_whether_the_entity_has_the_component_and_matches_every_entity() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        let bare = world.spawn((Hp(10),));
        let shielded = world.spawn((Hp(10), Shield));
        world.spawn((Shield,));
        world.add_system(NodeBuilder::new("hit").system(
            |mut hit: Query<(&mut Hp, Has<Shield>)>| {
                hit.for_each(|(mut hp, shielded)| hp.0 -= if shielded { 1 } else { 4 });
            },
        ));
        // Has declares nothing on Shield's lane: it runs beside a writer.
        world.add_system(
            NodeBuilder::new("polish").system(|mut shields: Query<&mut Shield>| {
                shields.for_each(|_| {});
            }),
        );
        world.add_system(NodeBuilder::new("count").system(
            |all: Query<(Entity, Has<Shield>)>, seen: &mut Seen| {
                seen.0
                    .push(all.iter().map(|(_, has)| u32::from(has)).collect());
            },
        ));
        world.run_iteration().unwrap();
        let hp = |world: &World, e| world.entity(e).unwrap().get::<Hp>().unwrap().0;
        assert_eq!(
            (hp(&world, bare), hp(&world, shielded)),
            (6, 9),
            "{kind:?} x{threads}"
        );
        let mut seen = world.get::<Seen>().unwrap().0[0].clone();
        seen.sort_unstable();
        assert_eq!(seen, [0, 1, 1], "{kind:?} x{threads}");
    }
}

type Hostile = Or<(With<Enemy>, With<Player>)>;
type Touched = Or<(Changed<Hp>, Added<Vel>)>;

#[test]
fn or_keeps_an_entity_that_any_element_keeps_by_archetype_and_by_row() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        world.spawn((Hp(1),));
        world.spawn((Hp(2), Enemy));
        world.spawn((Hp(3), Player));
        let late = world.spawn((Hp(4),));
        world.add_system(NodeBuilder::new("hostile").system(
            |hostile: Query<&Hp, Hostile>,
             touched: Query<&Hp, Touched>,
             neither: Query<&Hp, (Without<Enemy>, Without<Player>)>,
             seen: &mut Seen| {
                let sorted = |it: &mut dyn Iterator<Item = &Hp>| {
                    let mut v: Vec<u32> = it.map(|hp| hp.0).collect();
                    v.sort_unstable();
                    v
                };
                seen.0.push(sorted(&mut hostile.iter()));
                seen.0.push(sorted(&mut touched.iter()));
                seen.0.push(sorted(&mut neither.iter()));
            },
        ));
        world.run_iteration().unwrap();
        // Between frames: one entity gains a Vel (Added), another's Hp is
        // written (Changed); the rest are untouched.
        world.entity_mut(late).unwrap().insert((Vel(0.0),)).unwrap();
        world
            .query_filtered::<&mut Hp, With<Enemy>>()
            .for_each(|mut hp| hp.0 = 20);
        world.run_iteration().unwrap();
        let seen = &world.get::<Seen>().unwrap().0;
        assert_eq!(seen[0], [2, 3], "{kind:?} x{threads}");
        assert_eq!(
            seen[1],
            [1, 2, 3, 4],
            "first run sees every row: {kind:?} x{threads}"
        );
        assert_eq!(seen[2], [1, 4]);
        assert_eq!(seen[3], [3, 20]);
        assert_eq!(
            seen[4],
            [4, 20],
            "only the written and the added: {kind:?} x{threads}"
        );
        assert_eq!(seen[5], [1, 4]);
    }
}

#[test]
fn any_of_matches_entities_with_at_least_one_element_and_writes_what_they_have() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        let hp_only = world.spawn((Hp(3),));
        let shield_only = world.spawn((Pos(1.0),));
        let both = world.spawn((Hp(5), Pos(2.0)));
        world.spawn((Enemy,));
        world.add_system(NodeBuilder::new("heal").system(
            |mut any: Query<AnyOf<(&mut Hp, &Pos)>>, seen: &mut Seen| {
                let mut shapes = Vec::new();
                any.for_each(|(hp, pos)| {
                    shapes.push(u32::from(hp.is_some()) * 2 + u32::from(pos.is_some()));
                    if let Some(mut hp) = hp {
                        hp.0 += pos.map_or(1, |p| p.0 as u32);
                    }
                });
                shapes.sort_unstable();
                seen.0.push(shapes);
            },
        ));
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Seen>().unwrap().0[0],
            [1, 2, 3],
            "{kind:?} x{threads}"
        );
        let hp = |e| world.entity(e).unwrap().get::<Hp>().map(|hp| hp.0);
        assert_eq!(
            (hp(hp_only), hp(shield_only), hp(both)),
            (Some(4), None, Some(7))
        );
    }
}

/// A system that follows the one player, counting its runs.
#[derive(Debug, Default)]
struct Followed(Vec<f32>);

#[test]
fn single_skips_its_system_with_no_match_or_two_and_keeps_its_change_cursor() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Followed::default());
        world.insert(Seen::default());
        world.add_system(NodeBuilder::new("camera").system(
            |player: Single<&Pos, With<Player>>,
             moved: Query<&Hp, Changed<Hp>>,
             followed: &mut Followed,
             seen: &mut Seen| {
                followed.0.push(player.0);
                seen.0.push(moved.iter().map(|hp| hp.0).collect());
            },
        ));
        world.run_iteration().unwrap(); // none: skipped, not failed
        let first = world.spawn((Pos(1.0), Player, Hp(1)));
        world.run_iteration().unwrap(); // one: runs
        world.spawn((Pos(2.0), Player));
        world.run_iteration().unwrap(); // two: skipped
        // Written while the system was skipped: seen when it next runs.
        world.entity_mut(first).unwrap().get_mut::<Hp>().unwrap().0 = 9;
        world.run_iteration().unwrap(); // still two: skipped
        world.despawn(first).unwrap();
        world.run_iteration().unwrap(); // one again: runs
        assert_eq!(
            world.get::<Followed>().unwrap().0,
            [1.0, 2.0],
            "{kind:?} x{threads}"
        );
        // The second run saw no Hp change since its first run: the entity
        // holding the written Hp is gone; the cursor did not move while it
        // was skipped (checked next with a surviving entity).
        assert_eq!(world.get::<Seen>().unwrap().0, [vec![1], vec![]]);
    }
}

#[test]
fn a_skipped_single_leaves_changes_for_its_next_run() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        let hp = world.spawn((Hp(1),));
        world.add_system(NodeBuilder::new("watch").system(
            |_player: Single<Entity, With<Player>>,
             moved: Query<&Hp, Changed<Hp>>,
             seen: &mut Seen| {
                seen.0.push(moved.iter().map(|hp| hp.0).collect());
            },
        ));
        let player = world.spawn((Player,));
        world.run_iteration().unwrap(); // runs: sees the new Hp
        world.despawn(player).unwrap();
        world.run_iteration().unwrap(); // skipped
        world.entity_mut(hp).unwrap().get_mut::<Hp>().unwrap().0 = 7;
        world.run_iteration().unwrap(); // skipped
        world.spawn((Player,));
        world.run_iteration().unwrap(); // runs: the change made while skipped
        world.run_iteration().unwrap(); // runs: nothing new
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            [vec![1], vec![7], vec![]],
            "{kind:?} x{threads}"
        );
    }
}

#[test]
fn single_writes_through_its_item_and_serves_a_run_condition() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        let boss = world.spawn((Hp(100), Enemy));
        world.spawn((Hp(5),));
        world.add_system(
            NodeBuilder::new("strike")
                .system(|mut boss: Single<&mut Hp, With<Enemy>>| boss.0 -= 10),
        );
        world.add_system(
            NodeBuilder::new("cheer")
                .system(|mut hp: Query<&mut Hp, Without<Enemy>>| hp.for_each(|mut hp| hp.0 += 1))
                .run_if(|player: Single<&Hp, With<Player>>| player.0 > 0),
        );
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        let hp = |world: &World, e| world.entity(e).unwrap().get::<Hp>().unwrap().0;
        assert_eq!(hp(&world, boss), 80, "{kind:?} x{threads}");
        assert_eq!(world.query::<&Hp>().iter().map(|hp| hp.0).sum::<u32>(), 85);
    }
}

#[test]
fn populated_skips_its_system_when_nothing_matches() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        world.insert(Frames(0));
        world.add_system(NodeBuilder::new("spawner").system(
            |commands: Commands, frames: &mut Frames| {
                if frames.0 == 0 {
                    commands.spawn((Enemy, Hp(1)));
                }
                frames.0 += 1;
            },
        ));
        world.add_system(NodeBuilder::new("fight").after("spawner").system(
            |mut enemies: Populated<&mut Hp, With<Enemy>>, seen: &mut Seen| {
                enemies.for_each(|mut hp| hp.0 += 1);
                seen.0.push(enemies.iter_mut().map(|hp| hp.0).collect());
            },
        ));
        world.run_iteration().unwrap(); // the spawn lands at the boundary
        assert!(world.get::<Seen>().unwrap().0.is_empty());
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            [vec![2], vec![3]],
            "{kind:?} x{threads}"
        );
    }
}

#[test]
fn get_many_mut_refuses_one_entity_twice_and_marks_nothing_on_refusal() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        let a = world.spawn((Hp(1),));
        let b = world.spawn((Hp(2),));
        let gone = world.spawn((Hp(3),));
        world.despawn(gone).unwrap();
        world.insert(Targets(vec![a, b, gone]));
        world.add_system(NodeBuilder::new("swap").system(
            |mut hp: Query<&mut Hp>, targets: &Targets, seen: &mut Seen| {
                let [a, b, gone] = [targets.0[0], targets.0[1], targets.0[2]];
                assert_eq!(
                    hp.get_many_mut([a, a]).err(),
                    Some(QueryEntityError::AliasedMutability(a))
                );
                assert_eq!(
                    hp.get_many_mut([b, gone]).err(),
                    Some(QueryEntityError::NoSuchEntity(gone))
                );
                if seen.0.is_empty() {
                    let [mut x, mut y] = hp.get_many_mut([a, b]).unwrap();
                    std::mem::swap(&mut *x, &mut *y);
                }
                seen.0.push(vec![]);
            },
        ));
        world.add_system(NodeBuilder::new("read").after("swap").system(
            |hp: Query<&Hp>,
             changed: Query<Entity, Changed<Hp>>,
             targets: &Targets,
             seen: &mut Seen| {
                let [x, y] = hp.get_many([targets.0[1], targets.0[1]]).unwrap();
                assert_eq!(x, y);
                let mut row: Vec<u32> = hp.iter_many(&targets.0).map(|hp| hp.0).collect();
                row.push(changed.iter().count() as u32);
                seen.0.push(row);
            },
        ));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        let seen = &world.get::<Seen>().unwrap().0;
        assert_eq!(
            seen[1],
            [2, 1, 2],
            "swapped, two changed: {kind:?} x{threads}"
        );
        assert_eq!(
            seen[3],
            [2, 1, 0],
            "refusals mark nothing: {kind:?} x{threads}"
        );
    }
}

struct Targets(Vec<Entity>);

struct Frames(u32);

#[test]
fn iter_combinations_yields_each_set_once_across_archetypes() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.insert(Seen::default());
        for i in 0..6 {
            if i % 2 == 0 {
                world.spawn((Hp(i),));
            } else {
                world.spawn((Hp(i), Enemy));
            }
        }
        world.add_system(
            NodeBuilder::new("pairs").system(|hp: Query<&Hp>, seen: &mut Seen| {
                let pairs: BTreeSet<(u32, u32)> = hp
                    .iter_combinations()
                    .map(|[a, b]| (a.0.min(b.0), a.0.max(b.0)))
                    .collect();
                let triples = hp.iter_combinations::<3>().count();
                let none =
                    hp.iter_combinations::<7>().count() + hp.iter_combinations::<0>().count();
                seen.0.push(vec![
                    pairs.len() as u32,
                    hp.iter_combinations::<2>().count() as u32,
                ]);
                seen.0.push(vec![triples as u32, none as u32]);
            }),
        );
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            [vec![15, 15], vec![20, 0]],
            "{kind:?} x{threads}"
        );
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Body {
    pos: f32,
    force: f32,
}

#[test]
fn iter_combinations_mut_gives_the_serial_n_body_forces() {
    let n = if cfg!(miri) { 5 } else { 40 };
    let start: Vec<f32> = (0..n)
        .map(|i| (i * 7 % 13) as f32 + i as f32 * 0.5)
        .collect();
    // The expected forces, pair by pair in iteration (spawn) order.
    let mut expected = vec![0.0f32; n];
    for i in 0..n {
        for j in i + 1..n {
            let pull = 1.0 / (start[j] - start[i]);
            expected[i] += pull;
            expected[j] -= pull;
        }
    }
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        let bodies: Vec<Entity> = start
            .iter()
            .map(|&pos| world.spawn((Body { pos, force: 0.0 },)))
            .collect();
        world.add_system(
            NodeBuilder::new("gravity").system(|mut bodies: Query<&mut Body>| {
                let mut pairs = bodies.iter_combinations_mut();
                while let Some([mut a, mut b]) = pairs.fetch_next() {
                    let pull = 1.0 / (b.pos - a.pos);
                    a.force += pull;
                    b.force -= pull;
                }
            }),
        );
        world.add_system(NodeBuilder::new("count").system(
            |mut bodies: Query<(Entity, &mut Body)>| {
                let mut triples = 0;
                bodies
                    .iter_combinations_mut::<3>()
                    .for_each(|[(a, _), (b, _), (c, _)]| {
                        assert!(a != b && b != c && a != c);
                        triples += 1;
                    });
                assert_eq!(
                    triples,
                    bodies.count() * (bodies.count() - 1) * (bodies.count() - 2) / 6
                );
            },
        ));
        world.run_iteration().unwrap();
        for (body, want) in bodies.iter().zip(&expected) {
            let got = world.entity(*body).unwrap().get::<Body>().unwrap().force;
            assert_eq!(got, *want, "{kind:?} x{threads}");
        }
    }
}
