//! Hierarchies: `ChildOf`/`Children` kept consistent through attach,
//! reparent, detach and despawn; cycles refused by name; stale links never
//! followed; transform propagation equal on every executor and thread
//! count, skipping what did not change. Hostile cases: reparenting while
//! propagation runs, a subtree of 1,000,000 entities despawned at once, a
//! relation whose target was despawned.

use std::sync::{Arc, Mutex};

use sluice::exec::ThreadPool;
use sluice::glam::{Quat, Vec3};
use sluice::{
    ChildOf, Children, Commands, Entity, EntityError, ExecutorKind, GlobalTransform,
    IterationError, NodeBuilder, Query, Transform, TransformPropagation, With, World,
};

/// Every link agrees both ways: each `ChildOf` names a live parent that
/// lists the child once; each `Children` is non-empty and lists live
/// children naming it.
fn assert_consistent(world: &mut World) {
    let children: Vec<(Entity, Vec<Entity>)> = world
        .query::<(Entity, &Children)>()
        .iter()
        .map(|(e, c)| (e, c.to_vec()))
        .collect();
    let parents: Vec<(Entity, Entity)> = world
        .query::<(Entity, &ChildOf)>()
        .iter()
        .map(|(e, of)| (e, of.parent()))
        .collect();
    for (parent, list) in &children {
        assert!(!list.is_empty(), "{parent} keeps an empty Children");
        for child in list {
            assert_eq!(
                world.parent(*child),
                Some(*parent),
                "{child} listed by {parent}"
            );
            assert_eq!(list.iter().filter(|c| *c == child).count(), 1);
        }
    }
    for (child, parent) in &parents {
        assert!(
            world.entity(*parent).is_some(),
            "{child} names dead {parent}"
        );
        assert!(world.children(*parent).contains(child));
    }
}

#[test]
fn attach_reparent_detach_keep_both_sides() -> Result<(), EntityError> {
    let mut world = World::new();
    let (a, b) = (world.spawn(()), world.spawn(()));
    let kids: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
    for &kid in &kids {
        world.set_parent(kid, a)?;
    }
    assert_eq!(world.children(a), &kids[..]);
    // The same parent again changes nothing, not even the order.
    world.set_parent(kids[0], a)?;
    assert_eq!(world.children(a), &kids[..]);
    // Reparent: leaves a's list, goes last in b's.
    world.set_parent(kids[1], b)?;
    assert_eq!(world.children(a), [kids[0], kids[2], kids[3]]);
    assert_eq!(world.children(b), [kids[1]]);
    assert_eq!(world.parent(kids[1]), Some(b));
    // Detach: b loses its last child and its Children with it.
    assert_eq!(world.remove_parent(kids[1])?, Some(b));
    assert!(world.entity(b).unwrap().get::<Children>().is_none());
    assert!(world.entity(kids[1]).unwrap().get::<ChildOf>().is_none());
    assert_eq!(world.remove_parent(kids[1])?, None);
    assert_consistent(&mut world);
    Ok(())
}

#[test]
fn cycles_and_own_parent_are_refused_by_name_and_change_nothing() -> Result<(), EntityError> {
    let mut world = World::new();
    let root = world.spawn(());
    let mid = world.spawn_child(root, ())?;
    let leaf = world.spawn_child(mid, ())?;
    let error = world.set_parent(root, leaf).unwrap_err();
    assert_eq!(
        error,
        EntityError::ParentCycle {
            child: root,
            parent: leaf
        }
    );
    let message = error.to_string();
    assert!(message.contains(&root.to_string()) && message.contains(&leaf.to_string()));
    assert_eq!(
        world.set_parent(mid, mid),
        Err(EntityError::OwnParent { entity: mid })
    );
    assert_eq!(
        world.add_child(leaf, mid),
        Err(EntityError::ParentCycle {
            child: mid,
            parent: leaf
        })
    );
    assert_eq!(world.parent(root), None);
    assert_eq!(world.children(root), [mid]);
    assert_eq!(world.children(mid), [leaf]);
    assert_consistent(&mut world);
    // Dead entities on either side.
    let dead = world.spawn(());
    world.despawn(dead)?;
    assert_eq!(
        world.set_parent(dead, root),
        Err(EntityError::NoSuchEntity { entity: dead })
    );
    assert_eq!(
        world.set_parent(leaf, dead),
        Err(EntityError::NoSuchEntity { entity: dead })
    );
    assert_eq!(world.parent(leaf), Some(mid));
    Ok(())
}

#[test]
fn frozen_entities_refuse_what_would_move_them() -> Result<(), EntityError> {
    let mut world = World::new();
    let (parent, child) = (world.spawn(()), world.spawn(()));
    world.freeze(child)?;
    assert_eq!(
        world.set_parent(child, parent),
        Err(EntityError::Frozen { entity: child })
    );
    assert!(world.children(parent).is_empty());
    let other = world.spawn(());
    world.freeze(parent)?;
    assert_eq!(
        world.set_parent(other, parent),
        Err(EntityError::Frozen { entity: parent })
    );
    assert_eq!(world.parent(other), None);
    Ok(())
}

/// Records the order of despawns through `Drop`.
struct Tracked(Entity, Arc<Mutex<Vec<Entity>>>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.1.lock().unwrap().push(self.0);
    }
}

#[test]
fn despawning_a_parent_despawns_its_subtree_children_first() -> Result<(), EntityError> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut world = World::new();
    let outside = world.spawn(());
    let root = world.spawn(());
    world.set_parent(root, outside)?;
    let mut parent_of = Vec::new();
    let mut frontier = vec![root];
    for _ in 0..3 {
        let mut next = Vec::new();
        for &parent in &frontier {
            for _ in 0..3 {
                let child = world.spawn_child(parent, ())?;
                parent_of.push((child, parent));
                next.push(child);
            }
        }
        frontier = next;
    }
    let all: Vec<Entity> = std::iter::once(root)
        .chain(world.descendants(root))
        .collect();
    assert_eq!(all.len(), 1 + 3 + 9 + 27);
    for &e in &all {
        world
            .entity_mut(e)
            .unwrap()
            .insert((Tracked(e, log.clone()),))?;
    }
    world.despawn(root)?;
    let order = log.lock().unwrap().clone();
    assert_eq!(order.len(), all.len());
    let at = |e: Entity| order.iter().position(|&x| x == e).unwrap();
    for (child, parent) in parent_of {
        assert!(at(child) < at(parent), "{child} despawned after its parent");
    }
    assert!(all.iter().all(|&e| world.entity(e).is_none()));
    // The parent outside the subtree lost it from its list.
    assert!(world.children(outside).is_empty());
    assert_consistent(&mut world);
    Ok(())
}

#[test]
fn a_subtree_of_a_million_despawns_at_once() -> Result<(), EntityError> {
    // Under Miri, a few hundred.
    let (wide, deep) = if cfg!(miri) { (5, 49) } else { (1_000, 999) };
    let mut world = World::new();
    let keep = world.spawn(());
    let root = world.spawn(());
    let branches = world.spawn_batch((0..wide).map(|_| ()));
    for &branch in &branches {
        world.set_parent(branch, root)?;
        let leaves = world.spawn_batch((0..deep).map(|_| ()));
        for leaf in leaves {
            world.set_parent(leaf, branch)?;
        }
    }
    // And a deep chain under the first leaf: no recursion to overflow.
    let chain = if cfg!(miri) { 50 } else { 100_000 };
    let mut at = world.children(branches[0])[0];
    for _ in 0..chain {
        at = world.spawn_child(at, ())?;
    }
    let total = 1 + wide * (deep + 1) + chain;
    assert_eq!(world.entities().len(), total + 1);
    assert_eq!(world.despawn_recursive(root)?, total);
    assert_eq!(world.entities().len(), 1);
    assert!(world.entity(keep).is_some());
    assert_eq!(
        world.despawn_recursive(root),
        Err(EntityError::NoSuchEntity { entity: root })
    );
    Ok(())
}

struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("bomb in a subtree");
    }
}

#[test]
fn a_panicking_drop_in_a_subtree_loses_nothing_else() -> Result<(), EntityError> {
    let mut world = World::new();
    let root = world.spawn(());
    let a = world.spawn_child(root, ())?;
    let bomb = world.spawn_child(a, (Bomb,))?;
    let b = world.spawn_child(root, ())?;
    let survivor = world.spawn(());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.despawn(root)));
    assert!(caught.is_err(), "the panic is reported");
    for e in [root, a, bomb, b] {
        assert!(world.entity(e).is_none(), "{e} still alive");
    }
    assert!(world.entity(survivor).is_some());
    assert_eq!(world.entities().len(), 1);
    Ok(())
}

#[test]
fn a_stale_relation_is_never_followed() -> Result<(), EntityError> {
    let mut world = World::new();
    let parent = world.spawn(());
    let child = world.spawn_child(parent, ())?;
    let grandchild = world.spawn_child(child, ())?;
    // Behind the runtime's back: the store's own despawn knows nothing of
    // the relation.
    world.entities_mut().despawn(parent)?;
    assert_eq!(world.parent(child), None);
    assert_eq!(world.ancestors(grandchild).collect::<Vec<_>>(), [child]);
    // A new entity in the old slot is not the parent.
    let newcomer = world.spawn(());
    assert_eq!(world.parent(child), None);
    assert!(world.children(newcomer).is_empty());
    // Reattaching repairs the relation.
    world.set_parent(child, newcomer)?;
    assert_eq!(world.parent(child), Some(newcomer));
    assert_consistent(&mut world);

    // A `ChildOf` taken off with the generic API and put on another entity
    // is not a link: the list does not name that entity.
    let taken = world
        .entity_mut(grandchild)
        .unwrap()
        .remove::<(ChildOf,)>()?;
    let forger = world.spawn(taken);
    assert_eq!(world.descendants(newcomer).collect::<Vec<_>>(), [child]);
    assert!(!world.descendants(child).any(|e| e == forger));
    world.despawn(newcomer)?;
    assert!(
        world.entity(forger).is_some(),
        "a forged link is not followed"
    );
    assert!(world.entity(grandchild).is_some());
    Ok(())
}

#[test]
fn traversals_in_order() -> Result<(), EntityError> {
    let mut world = World::new();
    let root = world.spawn(());
    let a = world.spawn_child(root, ())?;
    let b = world.spawn_child(root, ())?;
    let a1 = world.spawn_child(a, ())?;
    let a2 = world.spawn_child(a, ())?;
    let b1 = world.spawn_child(b, ())?;
    let a11 = world.spawn_child(a1, ())?;
    assert_eq!(
        world.descendants(root).collect::<Vec<_>>(),
        [a, a1, a11, a2, b, b1]
    );
    assert_eq!(
        world.descendants_breadth_first(root).collect::<Vec<_>>(),
        [a, b, a1, a2, b1, a11]
    );
    assert_eq!(world.ancestors(a11).collect::<Vec<_>>(), [a1, a, root]);
    assert_eq!(world.ancestors(root).count(), 0);
    assert_eq!(world.descendants(a11).count(), 0);
    Ok(())
}

#[test]
fn commands_build_and_change_the_hierarchy_in_command_order() {
    #[derive(Default)]
    struct Step(u32);
    struct Captain;
    struct Soldier;

    let mut world = World::new();
    world.insert(Step::default());
    let loner = world.spawn(());
    world.add_system(NodeBuilder::new("orders").system(
        move |step: &mut Step,
              captains: Query<Entity, With<Captain>>,
              soldiers: Query<Entity, With<Soldier>>,
              commands: Commands<'_>| {
            step.0 += 1;
            match step.0 {
                1 => {
                    commands.spawn_with((Captain,)).with_children(|squad| {
                        squad.spawn((Soldier,));
                        squad.spawn((Soldier,));
                    });
                    commands
                        .entity(loner)
                        .set_parent(commands.spawn((Captain,)));
                }
                2 => {
                    let captains: Vec<Entity> = captains.iter().collect();
                    // A cycle, refused at the boundary; the rest lands.
                    commands
                        .entity(captains[0])
                        .set_parent(soldiers.iter().next().unwrap());
                    commands.entity(loner).remove_parent();
                    commands.entity(captains[1]).add_child(loner);
                }
                3 => {
                    let captain = captains.iter().next().unwrap();
                    commands.entity(captain).despawn_recursive();
                }
                _ => {}
            }
        },
    ));
    world.run_iteration().unwrap();
    let captains: Vec<Entity> = world
        .query_filtered::<Entity, With<Captain>>()
        .iter()
        .collect();
    assert_eq!(captains.len(), 2);
    let squad = captains
        .iter()
        .copied()
        .find(|&c| world.children(c).len() == 2)
        .unwrap();
    assert_eq!(world.parent(loner).map(|p| p != squad), Some(true));

    let error = world.run_iteration().unwrap_err();
    let IterationError::Boundary(failures) = &error else {
        panic!("expected a refused command, got {error}");
    };
    assert_eq!(failures.len(), 1);
    assert!(matches!(
        failures[0].refused_because(),
        Some(EntityError::ParentCycle { .. })
    ));
    assert!(error.to_string().contains("set parent"), "{error}");
    assert_consistent(&mut world);

    world.run_iteration().unwrap();
    assert_eq!(
        world
            .query_filtered::<Entity, With<Soldier>>()
            .iter()
            .count(),
        0
    );
    assert_consistent(&mut world);
}

/// A forest of `trees` trees, `fanout` children per node, `depth` levels
/// under each root; transforms differ per entity.
fn forest(world: &mut World, trees: usize, fanout: usize, depth: usize) -> Vec<Entity> {
    let mut roots = Vec::new();
    let mut n = 0.0f32;
    let mut next = || {
        n += 1.0;
        Transform::from_xyz(n * 0.5, -n, n * 0.25)
            // No sin or cos: Miri makes those differ from call to call.
            .with_rotation(Quat::from_xyzw(0.0, 0.0, n * 0.005, 1.0).normalize())
            .with_scale(Vec3::splat(1.0 + (n % 3.0) * 0.1))
    };
    for _ in 0..trees {
        let root = world.spawn((next(),));
        roots.push(root);
        let mut frontier = vec![root];
        for _ in 0..depth {
            let mut below = Vec::new();
            for &parent in &frontier {
                for _ in 0..fanout {
                    below.push(world.spawn_child(parent, (next(),)).unwrap());
                }
            }
            frontier = below;
        }
    }
    roots
}

/// Runs an iteration; the random reparenting may ask for a cycle, which
/// is refused by name at the boundary (the rest lands).
fn run_allowing_cycles(world: &mut World) {
    match world.run_iteration() {
        Ok(()) => {}
        Err(IterationError::Boundary(failures)) => {
            for failure in &failures {
                assert!(
                    matches!(
                        failure.refused_because(),
                        Some(EntityError::ParentCycle { .. })
                    ),
                    "{failure}"
                );
            }
        }
        Err(error) => panic!("{error}"),
    }
}

fn sizes() -> (usize, usize, usize) {
    if cfg!(miri) { (2, 1, 1) } else { (40, 3, 3) }
}

/// Runs frames of moves, reparents and detaches, some recorded while
/// propagation runs (a system beside it whose commands land at the
/// boundary), and returns every entity's world transform after each.
fn run_frames(executor: ExecutorKind, threads: usize) -> Vec<Vec<(Entity, [f32; 12])>> {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    TransformPropagation::add_to(&mut world);
    let (trees, fanout, depth) = sizes();
    let roots = forest(&mut world, trees, fanout, depth);
    #[derive(Default)]
    struct Frame(usize);
    world.insert(Frame::default());
    let roots_for_system = roots.clone();
    let frame_count = if cfg!(miri) { 2 } else { 8 };
    // Runs beside propagation (it reads Transform only through commands).
    world.add_system(NodeBuilder::new("reparent while propagating").system(
        move |frame: &mut Frame, commands: Commands<'_>| {
            frame.0 += 1;
            if frame.0 > frame_count {
                return;
            }
            let roots = &roots_for_system;
            let a = roots[frame.0 % roots.len()];
            let b = roots[(frame.0 * 7 + 3) % roots.len()];
            if a != b {
                commands.entity(a).set_parent(b);
            }
            if frame.0.is_multiple_of(3) {
                commands
                    .entity(roots[(frame.0 * 5) % roots.len()])
                    .remove_parent();
            }
        },
    ));
    let mut frames = Vec::new();
    for frame in 0..frame_count {
        // Move every fifth entity's local transform between frames.
        let mut moved = 0;
        world.query::<&mut Transform>().for_each(|mut t| {
            moved += 1;
            if (moved + frame) % 5 == 0 {
                t.translation.x += 1.5;
                t.rotation *= Quat::from_xyzw(0.0, 0.05, 0.0, 1.0).normalize();
            }
        });
        run_allowing_cycles(&mut world);
        let mut snapshot: Vec<(Entity, [f32; 12])> = world
            .query::<(Entity, &GlobalTransform)>()
            .iter()
            .map(|(e, g)| (e, g.affine().to_cols_array()))
            .collect();
        snapshot.sort_by_key(|(e, _)| *e);
        frames.push(snapshot);
    }
    // Reparenting landed after propagation ran; one more frame with nothing
    // moved brings every value up to date: check it against a from-scratch
    // computation.
    world.run_iteration().unwrap();
    let entities: Vec<Entity> = world.query::<Entity>().iter().collect();
    for e in entities {
        let expected = world.ancestors(e).fold(
            world
                .entity(e)
                .unwrap()
                .get::<Transform>()
                .unwrap()
                .compute_affine(),
            |acc, up| {
                world
                    .entity(up)
                    .unwrap()
                    .get::<Transform>()
                    .unwrap()
                    .compute_affine()
                    * acc
            },
        );
        let got = world
            .entity(e)
            .unwrap()
            .get::<GlobalTransform>()
            .unwrap()
            .affine();
        assert!(
            got.abs_diff_eq(expected, 1e-3),
            "{e}: propagated {got:?}, from scratch {expected:?}"
        );
    }
    assert_consistent(&mut world);
    frames
}

#[test]
fn propagation_is_the_same_on_every_executor_and_thread_count() {
    let serial = run_frames(ExecutorKind::Serial, 1);
    let others: &[(ExecutorKind, usize)] = if cfg!(miri) {
        &[(ExecutorKind::Parallel, 2)]
    } else {
        &[
            (ExecutorKind::Parallel, 2),
            (ExecutorKind::Parallel, 4),
            (ExecutorKind::Adaptive, 3),
        ]
    };
    for &(executor, threads) in others {
        assert_eq!(
            run_frames(executor, threads),
            serial,
            "{executor:?} on {threads} threads"
        );
    }
}

#[test]
fn propagation_skips_subtrees_that_did_not_change() {
    let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
    TransformPropagation::add_to(&mut world);
    let roots = forest(&mut world, 4, 2, 2);
    world.run_iteration().unwrap();
    let ticks = |world: &World| -> Vec<u32> {
        let mut all: Vec<Entity> = Vec::new();
        for &root in &roots {
            all.push(root);
            all.extend(world.descendants(root));
        }
        all.iter()
            .map(|&e| {
                world
                    .entity(e)
                    .unwrap()
                    .ticks::<GlobalTransform>()
                    .unwrap()
                    .changed
            })
            .collect()
    };
    let before = ticks(&world);
    world.run_iteration().unwrap();
    assert_eq!(ticks(&world), before, "a static scene writes nothing");

    // Move one child of the second tree: only its subtree is written.
    let moved = world.children(roots[1])[0];
    world
        .entity_mut(moved)
        .unwrap()
        .get_mut::<Transform>()
        .unwrap()
        .translation
        .y += 2.0;
    world.run_iteration().unwrap();
    let after = ticks(&world);
    let subtree: Vec<Entity> = std::iter::once(moved)
        .chain(world.descendants(moved))
        .collect();
    let mut all: Vec<Entity> = Vec::new();
    for &root in &roots {
        all.push(root);
        all.extend(world.descendants(root));
    }
    for (i, e) in all.iter().enumerate() {
        assert_eq!(
            after[i] != before[i],
            subtree.contains(e),
            "{e}: written iff in the moved subtree"
        );
    }
    let parent_at = world
        .entity(roots[1])
        .unwrap()
        .get::<GlobalTransform>()
        .unwrap()
        .translation();
    let at = world
        .entity(moved)
        .unwrap()
        .get::<GlobalTransform>()
        .unwrap();
    assert_ne!(at.translation(), parent_at);
}

#[test]
fn detaching_makes_a_root_and_reattaching_follows_the_new_parent() -> Result<(), EntityError> {
    let mut world = World::new();
    TransformPropagation::add_to(&mut world);
    let a = world.spawn((Transform::from_xyz(10.0, 0.0, 0.0),));
    let b = world.spawn((Transform::from_xyz(0.0, 100.0, 0.0),));
    let c = world.spawn_child(a, (Transform::from_xyz(1.0, 1.0, 1.0),))?;
    let at = |world: &World| {
        world
            .entity(c)
            .unwrap()
            .get::<GlobalTransform>()
            .unwrap()
            .translation()
    };
    world.run_iteration().unwrap();
    assert_eq!(at(&world), Vec3::new(11.0, 1.0, 1.0));
    world.set_parent(c, b)?;
    world.run_iteration().unwrap();
    assert_eq!(at(&world), Vec3::new(1.0, 101.0, 1.0));
    world.remove_parent(c)?;
    world.run_iteration().unwrap();
    assert_eq!(at(&world), Vec3::new(1.0, 1.0, 1.0));
    Ok(())
}

/// A small deterministic generator (xorshift64), so the moves are the
/// same on every executor.
struct Moves(u64);

impl Moves {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Marks some roots: a second roots' archetype.
struct RootMark;
/// Marks some children: more children's archetypes.
struct ChildMark;

/// Many small trees (a root, 9 children, every fourth child with 2 of its
/// own) spread over six archetypes, more than the walk's fetch cache
/// keeps; each frame moves a random tenth of all entities (roots,
/// children and grandchildren alike; the moves touch every archetype, so
/// the change scan reads all 17,600 rows, in parallel). After every frame each entity's
/// `GlobalTransform` must equal a naive recompute from its root down
/// (bit for bit: the same products in the same order). Returns the
/// snapshots.
fn many_small_frames(executor: ExecutorKind, threads: usize) -> Vec<Vec<(Entity, [f32; 12])>> {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    TransformPropagation::add_to(&mut world);
    // 1,100 trees are 17,600 entities: the change scan crosses into its
    // parallel form (16,384 rows); the other propagation tests stay below.
    let (trees, frames): (usize, usize) = if cfg!(miri) { (6, 2) } else { (1_100, 5) };
    let mut n = 0.0f32;
    let mut local = || {
        n += 1.0;
        Transform::from_xyz(n * 0.25, -n * 0.5, n)
            .with_rotation(Quat::from_xyzw(n * 0.003, 0.0, 0.0, 1.0).normalize())
            .with_scale(Vec3::splat(1.0 + (n % 4.0) * 0.05))
    };
    for tree in 0..trees {
        let root = world.spawn((local(),));
        if tree.is_multiple_of(3) {
            world.entity_mut(root).unwrap().insert((RootMark,)).unwrap();
        }
        for child in 0..9usize {
            let child_entity = world.spawn_child(root, (local(),)).unwrap();
            if child.is_multiple_of(5) {
                world
                    .entity_mut(child_entity)
                    .unwrap()
                    .insert((ChildMark,))
                    .unwrap();
            }
            if child.is_multiple_of(4) {
                for _ in 0..2 {
                    world.spawn_child(child_entity, (local(),)).unwrap();
                }
            }
        }
    }
    let mut moves = Moves(0x9e37_79b9_7f4a_7c15);
    let mut snapshots = Vec::new();
    for _ in 0..frames {
        world.query::<&mut Transform>().for_each(|mut t| {
            if moves.next().is_multiple_of(10) {
                t.translation.y += 0.75;
                t.rotation = (t.rotation * Quat::from_xyzw(0.0, 0.0, 0.02, 1.0)).normalize();
            }
        });
        world.run_iteration().unwrap();
        let mut snapshot: Vec<(Entity, [f32; 12])> = world
            .query::<(Entity, &GlobalTransform)>()
            .iter()
            .map(|(e, g)| (e, g.affine().to_cols_array()))
            .collect();
        snapshot.sort_by_key(|(e, _)| *e);
        for &(entity, got) in &snapshot {
            let mut chain: Vec<Entity> = world.ancestors(entity).collect();
            chain.reverse();
            chain.push(entity);
            let expected = chain
                .iter()
                .fold(sluice::glam::Affine3A::IDENTITY, |acc, &e| {
                    acc * world
                        .entity(e)
                        .unwrap()
                        .get::<Transform>()
                        .unwrap()
                        .compute_affine()
                });
            assert_eq!(
                got,
                expected.to_cols_array(),
                "{entity} on {executor:?} with {threads} threads"
            );
        }
        snapshots.push(snapshot);
    }
    snapshots
}

#[test]
fn many_small_trees_moved_at_random_match_a_naive_recompute_on_every_executor() {
    let serial = many_small_frames(ExecutorKind::Serial, 1);
    assert_eq!(
        serial[0].len(),
        if cfg!(miri) { 6 } else { 1_100 } * (1 + 9 + 3 * 2)
    );
    let others: &[(ExecutorKind, usize)] = if cfg!(miri) {
        &[(ExecutorKind::Parallel, 2)]
    } else {
        &[(ExecutorKind::Parallel, 2), (ExecutorKind::Parallel, 4)]
    };
    for &(executor, threads) in others {
        assert_eq!(
            many_small_frames(executor, threads),
            serial,
            "{executor:?} on {threads} threads"
        );
    }
}

#[test]
fn a_despawned_parent_is_refused_by_name_directly_and_through_commands_on_every_executor() {
    for executor in [ExecutorKind::Serial, ExecutorKind::Parallel] {
        let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
        world.set_executor(executor);
        let dead = world.spawn(());
        let child = world.spawn(());
        world.despawn(dead).unwrap();
        let gone = Err(EntityError::NoSuchEntity { entity: dead });
        assert_eq!(world.set_parent(child, dead), gone);
        assert_eq!(world.add_child(dead, child), gone);
        assert_eq!(world.add_child(child, dead), gone);
        assert_eq!(world.spawn_child(dead, ()).map(|_| ()), gone);
        assert_eq!(world.entities().len(), 1, "nothing spawned");
        world.add_system(NodeBuilder::new("links to the dead").system(
            move |commands: Commands<'_>| {
                commands.entity(child).set_parent(dead);
                commands.entity(dead).with_children(|children| {
                    children.spawn(());
                });
                commands.entity(dead).despawn_recursive();
            },
        ));
        let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
            panic!("{executor:?}: expected the commands refused");
        };
        let texts: Vec<String> = failures.iter().map(ToString::to_string).collect();
        assert_eq!(texts.len(), 3, "{executor:?}: {texts:?}");
        assert!(
            texts.iter().all(|text| text.contains(&format!("{dead}"))),
            "each names the dead parent: {texts:?}"
        );
        assert!(texts[0].contains("set parent"), "{texts:?}");
        assert!(texts[2].contains("despawn subtree"), "{texts:?}");
        // What the other commands did stands: the child spawned for the
        // dead parent is a root, the first child untouched.
        assert_eq!(world.parent(child), None);
        assert_eq!(world.entities().len(), 2);
        assert_consistent(&mut world);
    }
}
