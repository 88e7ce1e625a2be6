//! `Local`s in saves (issue 39): `World::save_local::<T>(name)` saves each
//! such local by its node's instance key (the name unless set) and its
//! position among that node's locals, and a load in a new world that
//! registered the same systems (in any order, beside others) puts each
//! back into its node. A node missing, or two of one key, is refused by
//! name, and the world is unchanged; on the serial executor and on a pool
//! of 2.

use sluice::snapshot::{LoadError, RegistrationError, SaveError, SectionKind};
use sluice::{ExecutorKind, Local, NodeBuilder, NodeIndex, ThreadPool, World};

/// What the counting nodes last saw: `(counter's runs, tally's two
/// locals)`.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    runs: u32,
    tally: (u32, String),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Hp(u32);

fn counter(mut runs: Local<u32>, seen: &mut Seen) {
    *runs += 1;
    seen.runs = *runs;
}

/// Two locals of two types: the second at position 1.
fn tally(mut sum: Local<u32>, mut trail: Local<String>, seen: &mut Seen) {
    *sum += 10;
    trail.push('x');
    seen.tally = (*sum, trail.clone());
}

fn world(parallel: bool) -> World {
    let mut world = if parallel {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(ExecutorKind::Parallel);
        world
    } else {
        let mut world = World::new();
        world.set_executor(ExecutorKind::Serial);
        world
    };
    world.insert(Seen::default());
    world
        .save_local::<u32>("u32")
        .save_local::<String>("string")
        .save_component::<Hp>("hp");
    world
}

/// A world that ran `counter` and `tally` three times, saved.
fn saved(parallel: bool) -> Vec<u8> {
    let mut world = world(parallel);
    world.add_system(NodeBuilder::new("counter").system(counter));
    world.add_system(NodeBuilder::new("tally").system(tally));
    world.spawn((Hp(5),));
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    let snapshot = world.snapshot().unwrap();
    assert!(
        snapshot
            .not_saved()
            .iter()
            .all(|name| !name.contains("Local"))
    );
    let mut save = Vec::new();
    snapshot.write_to(&mut save).unwrap();
    save
}

fn seen(world: &World) -> Seen {
    world.get::<Seen>().unwrap().clone()
}

#[test]
fn a_load_in_a_new_world_puts_each_local_back_into_its_node_by_name() {
    for parallel in [false, true] {
        let save = saved(parallel);
        // Registered in another order, after an unrelated node with a
        // local of its own: other slots, the same names and positions.
        let mut world = world(parallel);
        world.add_system(
            NodeBuilder::new("unrelated").system(|mut own: Local<'_, u32>| *own += 100),
        );
        world.add_system(NodeBuilder::new("tally").system(tally));
        world.add_system(NodeBuilder::new("counter").system(counter));
        world.load_from(&save[..]).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            seen(&world),
            Seen {
                runs: 4,
                tally: (40, "xxxx".to_owned())
            },
            "parallel: {parallel}"
        );
    }
}

#[test]
fn a_load_into_a_world_without_the_node_is_refused_by_name_and_changes_nothing() {
    for parallel in [false, true] {
        let save = saved(parallel);
        let mut world = world(parallel);
        world.add_system(NodeBuilder::new("tally").system(tally));
        let hp = world.spawn((Hp(1),));
        world.run_iteration().unwrap();
        let error = world.load_from(&save[..]).unwrap_err();
        assert!(
            matches!(&error, LoadError::NodeMissing { node, local } if node == "counter" && local == "u32"),
            "{error:?}"
        );
        assert!(error.to_string().contains("`counter`"), "{error}");
        // Nothing changed: the entity, the tally's locals.
        assert_eq!(world.entity(hp).unwrap().get::<Hp>(), Some(&Hp(1)));
        world.run_iteration().unwrap();
        assert_eq!(seen(&world).tally, (20, "xx".to_owned()));
    }
}

#[test]
fn a_load_into_a_world_with_two_nodes_of_that_key_is_refused() {
    for parallel in [false, true] {
        let save = saved(parallel);
        let mut world = world(parallel);
        world.add_system(NodeBuilder::new("tally").system(tally));
        world.add_system(NodeBuilder::new("counter").system(counter));
        world.add_system(NodeBuilder::new("counter").system(counter));
        let hp = world.spawn((Hp(1),));
        let error = world.load_from(&save[..]).unwrap_err();
        assert!(
            matches!(&error, LoadError::NodeAmbiguous { node, count: 2 } if node == "counter"),
            "{error:?}"
        );
        assert_eq!(world.entity(hp).unwrap().get::<Hp>(), Some(&Hp(1)));
    }
}

#[test]
fn a_node_whose_local_differs_is_refused_as_a_shape() {
    let save = saved(false);
    let mut world = world(false);
    // `counter` has no local here; `tally`'s first is a `String`.
    world.add_system(NodeBuilder::new("counter").system(|seen: &mut Seen| seen.runs = 0));
    world.add_system(NodeBuilder::new("tally").system(tally));
    let error = world.load_from(&save[..]).unwrap_err();
    assert!(
        matches!(&error, LoadError::Shape { kind: SectionKind::Locals, reason, .. } if reason.contains("`counter` has no local #0")),
        "{error:?}"
    );
    let mut world = world_with_swapped_tally();
    let error = world.load_from(&save[..]).unwrap_err();
    assert!(
        matches!(&error, LoadError::Shape { reason, .. } if reason.contains("#0 of `tally` is not")),
        "{error:?}"
    );
}

fn world_with_swapped_tally() -> World {
    let mut world = world(false);
    world.add_system(NodeBuilder::new("counter").system(counter));
    world.add_system(
        NodeBuilder::new("tally").system(|_trail: Local<'_, String>, _sum: Local<'_, u32>| {}),
    );
    world
}

#[test]
fn a_save_refuses_the_locals_of_two_nodes_of_one_key() {
    let mut world = world(false);
    world.add_system(NodeBuilder::new("counter").system(counter));
    // Registered, though the world cannot plan (SL0004).
    let second: NodeIndex = world.add_system(NodeBuilder::new("counter").system(counter));
    let snapshot = world.snapshot().unwrap();
    let error = snapshot.write_to(Vec::new()).unwrap_err();
    assert!(
        matches!(&error, SaveError::AmbiguousNode { node, count: 2 } if node == "counter"),
        "{error:?}"
    );
    // One of them gone: the next snapshot saves.
    world.remove_node(second).unwrap();
    world.snapshot().unwrap().write_to(Vec::new()).unwrap();
}

#[test]
fn two_nodes_of_one_name_are_told_apart_by_their_keys() {
    let build = |world: &mut World, first: bool| {
        let left = NodeBuilder::new("counter").key("left").system(counter);
        let right = NodeBuilder::new("counter").key("right").system(
            |mut runs: Local<'_, u32>, seen: &mut Seen| {
                *runs += 1000;
                seen.tally.0 = *runs;
            },
        );
        if first {
            world.add_system(left);
            world.add_system(right);
        } else {
            world.add_system(right);
            world.add_system(left);
        }
    };
    let mut original = world(true);
    build(&mut original, true);
    original.run_iteration().unwrap();
    original.run_iteration().unwrap();
    let mut save = Vec::new();
    original.snapshot().unwrap().write_to(&mut save).unwrap();
    let mut loaded = world(true);
    build(&mut loaded, false);
    loaded.load_from(&save[..]).unwrap();
    loaded.run_iteration().unwrap();
    let seen = seen(&loaded);
    assert_eq!((seen.runs, seen.tally.0), (3, 3000));
}

#[test]
fn a_local_not_saved_is_left_as_it_is_and_named() {
    let mut world = World::new();
    world.insert(Seen::default());
    world.snapshot_local::<u32>();
    world.add_system(NodeBuilder::new("counter").system(counter));
    world.run_iteration().unwrap();
    let snapshot = world.snapshot().unwrap();
    assert!(
        snapshot
            .not_saved()
            .iter()
            .any(|name| name.contains("Local"))
    );
    let mut save = Vec::new();
    snapshot.write_to(&mut save).unwrap();
    world.run_iteration().unwrap();
    world.load_from(&save[..]).unwrap();
    world.run_iteration().unwrap();
    assert_eq!(
        seen(&world).runs,
        3,
        "a load leaves unsaved locals as they are"
    );
}

#[test]
fn a_save_name_is_one_type_across_locals_components_and_services() {
    let mut world = World::new();
    world.save_component::<Hp>("hp");
    let refused = world.try_save_local::<u32>("hp").map(|_| ()).unwrap_err();
    assert!(matches!(
        refused,
        RegistrationError::NameTaken { name: "hp", .. }
    ));
    world.save_local::<u32>("runs");
    let refused = world
        .try_save_local::<u32>("count")
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(
        refused,
        RegistrationError::AlreadyNamed { name: "runs", .. }
    ));
    let refused = world
        .try_save_service::<Hp>("runs")
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(
        refused,
        RegistrationError::NameTaken { name: "runs", .. }
    ));
    // The same registration again is a no-op.
    world.try_save_local::<u32>("runs").unwrap();
}

#[test]
fn a_save_holding_a_local_type_this_world_does_not_save_is_refused() {
    let save = saved(false);
    let mut world = World::new();
    world.insert(Seen::default());
    world.save_component::<Hp>("hp").save_local::<u32>("u32");
    world.add_system(NodeBuilder::new("counter").system(counter));
    world.add_system(NodeBuilder::new("tally").system(tally));
    let error = world.load_from(&save[..]).unwrap_err();
    assert!(
        matches!(&error, LoadError::UnknownType { kind: SectionKind::Locals, name } if name == "string"),
        "{error:?}"
    );
}

/// The checksum covers each saved local, by its node's key and position:
/// two worlds that ran the same frames with their systems registered in
/// opposite orders (so their locals sit in other slots) agree; a saved
/// local that differs changes it, and `divergence` names it as
/// `key[position]`; a local only snapshotted (not saved) is in neither.
#[test]
fn the_checksum_covers_saved_locals_by_key_and_position() {
    for parallel in [false, true] {
        let run = |order: &[&str], frames: u32| {
            let mut world = world(parallel);
            for &name in order {
                match name {
                    "counter" => world.add_system(NodeBuilder::new("counter").system(counter)),
                    _ => world.add_system(NodeBuilder::new("tally").system(tally)),
                };
            }
            for _ in 0..frames {
                world.run_iteration().unwrap();
            }
            (world.snapshot().unwrap(), seen(&world))
        };
        let (forward, seen_forward) = run(&["counter", "tally"], 3);
        let (backward, seen_backward) = run(&["tally", "counter"], 3);
        assert_eq!(seen_forward, seen_backward);
        assert_eq!(
            forward.checksum(),
            backward.checksum(),
            "parallel: {parallel}"
        );
        assert_eq!(forward.divergence(&backward), None);

        // `Seen` is not saved, so only the locals tell four frames from
        // three: the checksum sees them, and the report names the first.
        let (later, _) = run(&["counter", "tally"], 4);
        assert_ne!(forward.checksum(), later.checksum());
        let divergence = forward.divergence(&later).expect("the locals differ");
        assert_eq!(divergence.kind, SectionKind::Locals);
        assert_eq!(divergence.name, "counter[0]");
        assert!(
            divergence.to_string().contains("counter[0]"),
            "{divergence}"
        );

        // Without the registrations, the locals are snapshotted only and
        // the two snapshots check the same.
        let unsaved = |frames: u32| {
            let mut world = World::new();
            world.insert(Seen::default());
            world.snapshot_local::<u32>().snapshot_local::<String>();
            world.add_system(NodeBuilder::new("counter").system(counter));
            for _ in 0..frames {
                world.run_iteration().unwrap();
            }
            world.snapshot().unwrap()
        };
        assert_eq!(unsaved(3).checksum(), unsaved(4).checksum());
        assert_eq!(unsaved(3).divergence(&unsaved(4)), None);
    }
}

/// A save read back (`read_snapshot`) keeps its locals' keys: written
/// again it still holds them, with the same checksum, and a new world
/// loads them from the copy. (Read back, they once lost their keys: the
/// copy had no locals section and another checksum; found by the API
/// model once the checksum covered locals.)
#[test]
fn a_save_read_back_and_written_again_keeps_its_locals() {
    for parallel in [false, true] {
        let save = saved(parallel);
        let mut reader = world(parallel);
        reader.add_system(NodeBuilder::new("counter").system(counter));
        reader.add_system(NodeBuilder::new("tally").system(tally));
        let read = reader.read_snapshot(&save[..]).unwrap();
        let mut copy = Vec::new();
        read.write_to(&mut copy).unwrap();
        let original = reader.read_snapshot(&save[..]).unwrap();
        assert_eq!(read.checksum(), original.checksum());
        let again = reader.read_snapshot(&copy[..]).unwrap();
        assert_eq!(again.checksum(), original.checksum());

        let mut world = world(parallel);
        world.add_system(NodeBuilder::new("tally").system(tally));
        world.add_system(NodeBuilder::new("counter").system(counter));
        world.load_from(&copy[..]).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            seen(&world),
            Seen {
                runs: 4,
                tally: (40, "xxxx".to_owned())
            },
            "parallel: {parallel}"
        );
    }
}
