//! Entity disabling (issue 36): the `Disabled` marker hides an entity from
//! every query that does not name it or allow it, on every executor, in
//! `get`, `Single`, `Populated` and parallel queries; references
//! (`ComponentRef`, `Target<T>`) still reach a disabled target.

#[path = "support/executors.rs"]
mod executors;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use executors::{executors, world_on};

use sluice::prelude::*;
use sluice::{Allow, Disabled, QueryEntityError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seen(u32);

#[test]
fn queries_skip_disabled_entities_unless_they_ask() {
    let mut world = World::new();
    let on = world.spawn((Hp(1),));
    let off = world.spawn((Hp(2), Disabled));
    let sum = |world: &mut World| world.query::<&Hp>().iter().map(|hp| hp.0).sum::<u32>();
    assert_eq!(sum(&mut world), 1);
    assert_eq!(world.query::<Entity>().iter().count(), 1);
    assert_eq!(
        world
            .query_filtered::<&Hp, Allow<Disabled>>()
            .iter()
            .map(|hp| hp.0)
            .sum::<u32>(),
        3
    );
    assert_eq!(
        world
            .query_filtered::<&Hp, With<Disabled>>()
            .iter()
            .map(|hp| hp.0)
            .sum::<u32>(),
        2
    );
    assert_eq!(
        world
            .query_filtered::<&Hp, Without<Disabled>>()
            .iter()
            .map(|hp| hp.0)
            .sum::<u32>(),
        1
    );
    let mut flags: Vec<(u32, bool)> = world
        .query::<(&Hp, Has<Disabled>)>()
        .iter()
        .map(|(hp, off)| (hp.0, off))
        .collect();
    flags.sort_unstable_by_key(|&(hp, _)| hp);
    assert_eq!(flags, [(1, false), (2, true)]);
    assert_eq!(world.query::<(&Hp, Option<&Disabled>)>().iter().count(), 2);
    assert_eq!(world.query::<&Disabled>().iter().count(), 1);
    // Nested in a tuple filter or an `Or`, it still asks.
    assert_eq!(
        world
            .query_filtered::<&Hp, (With<Hp>, Allow<Disabled>)>()
            .iter()
            .count(),
        2
    );
    assert_eq!(
        world
            .query_filtered::<&Hp, Or<(With<Disabled>, Changed<Hp>)>>()
            .iter()
            .count(),
        2
    );
    // `get` says why, naming the way in.
    let query = world.query::<&Hp>();
    assert_eq!(query.get(on).map(|hp| hp.0), Ok(1));
    let refused = query.get(off).unwrap_err();
    assert_eq!(refused, QueryEntityError::Disabled(off));
    assert_eq!(refused.entity(), off);
    assert!(refused.to_string().contains("Allow<Disabled>"), "{refused}");
    assert_eq!(
        world
            .query_filtered::<&Hp, Allow<Disabled>>()
            .get(off)
            .map(|hp| hp.0),
        Ok(2)
    );
    // Direct access still reaches it; enabling it again shows it.
    assert_eq!(world.entity(off).unwrap().get::<Hp>(), Some(&Hp(2)));
    world
        .entity_mut(off)
        .unwrap()
        .remove::<(Disabled,)>()
        .unwrap();
    assert_eq!(sum(&mut world), 3);
    world.entity_mut(on).unwrap().insert((Disabled,)).unwrap();
    assert_eq!(sum(&mut world), 2);
}

#[test]
fn systems_single_and_populated_skip_disabled_entities_on_every_executor() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world.spawn((Hp(1),));
        world.spawn((Hp(10), Disabled));
        let single = world.spawn((Seen(0),));
        world.spawn((Seen(0), Disabled));
        static SUM: AtomicUsize = AtomicUsize::new(0);
        static ALL: AtomicUsize = AtomicUsize::new(0);
        SUM.store(0, Ordering::SeqCst);
        ALL.store(0, Ordering::SeqCst);
        world.add_system(NodeBuilder::new("sum").system(|q: Query<&Hp>| {
            SUM.fetch_add(q.iter().map(|hp| hp.0 as usize).sum(), Ordering::SeqCst);
        }));
        world.add_system(
            NodeBuilder::new("all").system(|q: Query<&Hp, Allow<Disabled>>| {
                ALL.fetch_add(q.iter().map(|hp| hp.0 as usize).sum(), Ordering::SeqCst);
            }),
        );
        // One enabled `Seen` and one disabled: `Single` sees exactly one.
        world.add_system(
            NodeBuilder::new("single").system(|mut seen: Single<&mut Seen>| {
                seen.0 += 1;
            }),
        );
        world.add_system(NodeBuilder::new("populated").system(
            |hidden: Populated<&Hp, With<Disabled>>| {
                assert_eq!(hidden.iter().count(), 1);
            },
        ));
        world.run_iteration().unwrap();
        let label = format!("{kind:?} on {threads}");
        assert_eq!(SUM.load(Ordering::SeqCst), 1, "{label}");
        assert_eq!(ALL.load(Ordering::SeqCst), 11, "{label}");
        assert_eq!(
            world.entity(single).unwrap().get::<Seen>(),
            Some(&Seen(1)),
            "{label}"
        );
    }
}

#[test]
fn parallel_queries_skip_disabled_entities() {
    let mut world = World::new();
    let count = if cfg!(miri) { 8 } else { 1000 };
    for i in 0..count {
        if i % 2 == 0 {
            world.spawn((Hp(1),));
        } else {
            world.spawn((Hp(1), Disabled));
        }
    }
    let total = Mutex::new(0u32);
    world
        .query::<&Hp>()
        .par_for_each(|hp| *total.lock().unwrap() += hp.0);
    assert_eq!(*total.lock().unwrap(), count / 2);
    // The world's parallel query node, on every executor.
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        for i in 0..count {
            world.spawn((Hp(i), Seen(0)));
            world.spawn((Hp(i), Seen(0), Disabled));
        }
        world.add_par_query::<(&mut Seen, &Hp), ()>(
            NodeBuilder::new("mark"),
            7,
            |(mut seen, hp)| {
                seen.0 = hp.0 + 1;
            },
        );
        world.add_par_query::<&mut Seen, Allow<Disabled>>(
            NodeBuilder::new("all"),
            7,
            |mut seen| {
                seen.0 += 1000;
            },
        );
        world.run_iteration().unwrap();
        let mut marked: Vec<(u32, bool)> = world
            .query_filtered::<(&Seen, Has<Disabled>), ()>()
            .iter()
            .map(|(seen, off)| (seen.0, off))
            .collect();
        marked.sort_unstable();
        let label = format!("{kind:?} on {threads}");
        assert!(
            marked.iter().all(|&(seen, off)| (seen >= 1001) != off),
            "{label}: only the enabled rows were marked"
        );
        assert_eq!(marked.len(), 2 * count as usize, "{label}");
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Heading(f32);

/// A reference names its target: a disabled target is still reached by
/// `ComponentRef::get` and by `Target<T>` in a query; a disabled
/// *referring* entity is skipped unless the query asks.
#[test]
fn references_reach_a_disabled_target_and_a_disabled_follower_is_skipped() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        // Disabled before it is frozen: a frozen entity never gains one.
        let leader = world.spawn((Pos(5.0), Disabled));
        world.freeze(leader).unwrap();
        let reference = ComponentRef::<Pos>::new(&world, leader).unwrap();
        assert_eq!(reference.get(&world), Some(&Pos(5.0)));
        let follower = world.spawn((Heading(0.0), reference));
        let asleep = world.spawn((Heading(0.0), reference, Disabled));
        world.add_system(NodeBuilder::new("steer").system(
            |mut q: Query<(&mut Heading, Target<Pos>)>| {
                q.for_each(|(mut heading, target)| {
                    heading.0 = target.expect("a disabled target is still reached").0;
                });
            },
        ));
        world.run_iteration().unwrap();
        let label = format!("{kind:?} on {threads}");
        let heading = |world: &World, e| world.entity(e).unwrap().get::<Heading>().copied();
        assert_eq!(heading(&world, follower), Some(Heading(5.0)), "{label}");
        assert_eq!(
            heading(&world, asleep),
            Some(Heading(0.0)),
            "{label}: skipped"
        );
        // Asking for disabled entities reaches the asleep follower too.
        world
            .query_filtered::<(&mut Heading, Target<Pos>), Allow<Disabled>>()
            .for_each(|(mut heading, target)| heading.0 = target.unwrap().0 * 2.0);
        assert_eq!(heading(&world, asleep), Some(Heading(10.0)), "{label}");
        // A frozen disabled target cannot be enabled again.
        assert_eq!(
            world.entity_mut(leader).unwrap().remove::<(Disabled,)>(),
            Err(EntityError::Frozen { entity: leader })
        );
    }
}
