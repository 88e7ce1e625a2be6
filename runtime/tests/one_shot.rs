//! Issue 36, one-shot systems: `World::run_system_once`,
//! `register_system` / `run_system` / `unregister_system`, and
//! `Commands::run_system`, with their errors (unknown or removed id,
//! recursion, a missing service, a refused or unsupported node, a panic),
//! on every executor kind and on 1, 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics, world_on};
use sluice::prelude::*;
use sluice::{BoundaryStep, Messages};

#[derive(Debug, Default)]
struct Log(Vec<i64>);

#[derive(Debug)]
struct Mark(i64);

#[derive(Debug, Clone, Copy)]
struct Health(u32);

fn log_mark(mark: &Mark, log: &mut Log) {
    log.0.push(mark.0);
}

#[test]
fn run_system_once_lands_its_commands_before_returning() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.spawn((Health(10),));
        world.insert(Log::default());
        world
            .run_system_once(
                |mut query: Query<&mut Health>, commands: Commands<'_>, log: &mut Log| {
                    for mut health in query.iter_mut() {
                        health.0 -= 1;
                        log.0.push(i64::from(health.0));
                    }
                    commands.spawn((Health(5),));
                    commands.insert(Mark(7));
                },
            )
            .unwrap();
        let mut healths: Vec<u32> = world.query::<&Health>().iter().map(|h| h.0).collect();
        healths.sort_unstable();
        assert_eq!(healths, [5, 9], "{executor:?} on {threads}");
        assert_eq!(world.get::<Mark>().unwrap().0, 7);
        // The world runs on as before; the one-shot node is gone.
        world.add_system(NodeBuilder::new("log").system(log_mark));
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Log>().unwrap().0, [9, 7]);
    }
}

#[test]
fn a_registered_system_keeps_its_local_until_unregistered() {
    fn count(mut calls: Local<i64>, log: &mut Log) {
        *calls += 1;
        log.0.push(*calls);
    }
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.add_system(NodeBuilder::new("frame").system(|log: &mut Log| log.0.push(0)));
        let id = world.register_system(count);
        let twin = world.register_system(count);
        world.run_system(id).unwrap();
        world.run_iteration().unwrap();
        world.run_system(id).unwrap();
        world.run_system(twin).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [1, 0, 2, 1, 0],
            "{executor:?} on {threads}"
        );
        world.unregister_system(id).unwrap();
        let error = world.run_system(id).unwrap_err();
        assert!(matches!(error, RunSystemError::Removed { .. }), "{error}");
        assert!(error.to_string().contains("count"), "names it: {error}");
        assert!(world.unregister_system(id).is_err());
        // Another world's id is not this world's.
        let other = World::new().register_system(count);
        let error = world.run_system(other).unwrap_err();
        assert!(matches!(error, RunSystemError::NotRegistered(_)), "{error}");
        // A plain node's index is no one-shot system either.
        world.run_system(twin).unwrap();
        assert_eq!(world.get::<Log>().unwrap().0.last(), Some(&2));
    }
}

#[test]
fn commands_run_system_lands_in_command_order() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.insert(Mark(0));
        let id = world.register_system(log_mark);
        world.add_system(
            NodeBuilder::new("ask").system(move |commands: Commands<'_>| {
                commands.insert(Mark(1));
                commands.run_system(id);
                commands.insert(Mark(2));
                commands.run_system(id);
            }),
        );
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [1, 2],
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn commands_run_system_on_a_removed_id_is_a_boundary_failure_naming_it() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.insert(Mark(3));
        let id = world.register_system(log_mark);
        world.unregister_system(id).unwrap();
        world.add_system(
            NodeBuilder::new("ask").system(move |commands: Commands<'_>| {
                commands.run_system(id);
                commands.insert(Mark(4));
            }),
        );
        let IterationError::Boundary(failures) = world.run_iteration().unwrap_err() else {
            panic!("a boundary failure");
        };
        assert_eq!(failures.len(), 1, "{failures:?}");
        let failure = failures[0].to_string();
        assert!(
            failure.contains("log_mark") && failure.contains("unregistered"),
            "{failure}"
        );
        assert!(matches!(
            failures[0].step(),
            BoundaryStep::Command { index: 0, .. }
        ));
        assert_eq!(
            world.get::<Mark>().unwrap().0,
            4,
            "the other command landed"
        );
    }
}

#[derive(Debug)]
struct Note(i64);

#[test]
fn a_panicking_one_shot_lands_nothing_and_the_world_goes_on() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.add_system(NodeBuilder::new("read").system(
            |mut notes: Subscribe<Note>, log: &mut Log| {
                log.0.extend(notes.unread().map(|n| n.0));
            },
        ));
        let boom = world.register_system(NodeBuilder::new("boom").system(
            |commands: Commands<'_>, notes: Publish<Note>| {
                commands.insert(Mark(1));
                notes.send(Note(1));
                panic!("{PLANNED}");
            },
        ));
        let fine = world.register_system(
            NodeBuilder::new("fine").system(|notes: Publish<Note>| notes.send(Note(2))),
        );
        let error = world.run_system(boom).unwrap_err();
        assert!(
            matches!(&error, RunSystemError::Panicked { system, .. } if system == "boom"),
            "{error}"
        );
        world.run_system(fine).unwrap();
        assert!(world.get::<Mark>().is_none(), "its command did not land");
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [2],
            "{executor:?} on {threads}"
        );
        assert!(
            world.run_system(boom).is_err(),
            "it may run (and fail) again"
        );
        world.run_iteration().unwrap();
    }
}

/// The id of the system that runs itself.
struct Me(Option<SystemId>);

#[test]
fn a_system_running_itself_is_refused_by_name() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.insert(Me(None));
        let again = world.register_system(NodeBuilder::new("again").world(|world: &mut World| {
            let me = world.get::<Me>().unwrap().0.unwrap();
            let error = world.run_system(me).unwrap_err();
            assert!(matches!(error, RunSystemError::Recursive { .. }), "{error}");
            assert!(error.to_string().contains("again"), "{error}");
            world.get_mut::<Log>().unwrap().0.push(1);
        }));
        world.get_mut::<Me>().unwrap().0 = Some(again);
        world.run_system(again).unwrap();
        // Through its own command: refused as it lands, reported by name.
        let queued = world.register_system(NodeBuilder::new("queued").system(
            |me: &Me, commands: Commands<'_>| {
                commands.run_system(me.0.unwrap());
            },
        ));
        world.get_mut::<Me>().unwrap().0 = Some(queued);
        let error = world.run_system(queued).unwrap_err();
        let RunSystemError::CommandsFailed { system, failures } = &error else {
            panic!("its command failed: {error}");
        };
        assert_eq!(system, "queued");
        assert!(failures[0].to_string().contains("itself"), "{error}");
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [1],
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn what_cannot_run_is_a_clear_error_never_a_panic() {
    struct Absent;
    let mut world = World::new();
    // A missing service, named with the system.
    let error = world
        .run_system_once(NodeBuilder::new("needs").system(|_: &Absent| {}))
        .unwrap_err();
    let RunSystemError::MissingServices(missing) = &error else {
        panic!("{error}");
    };
    assert_eq!(missing[0].node, "needs");
    assert!(missing[0].service.contains("Absent"), "{error}");
    // A factory produces: not a one-shot system.
    let error = world
        .run_system_once(NodeBuilder::new("makes").factory(|| Mark(1)))
        .unwrap_err();
    assert!(
        matches!(error, RunSystemError::Unsupported { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("makes"), "{error}");
    // A run condition false: skipped, which is fine.
    world.insert(Log::default());
    world
        .run_system_once(
            NodeBuilder::new("skipped")
                .system(|log: &mut Log| log.0.push(1))
                .run_if(|| false),
        )
        .unwrap();
    assert!(world.get::<Log>().unwrap().0.is_empty());
    // None of it planned anything, or left anything behind.
    world.run_iteration().unwrap();
    assert!(world.get::<Messages<Note>>().is_none());
}

/// Whether the conditioned whole-world system may run.
struct Open(bool);

#[test]
fn a_whole_world_one_shot_obeys_its_condition_and_keeps_its_body() {
    let mut world = World::new();
    world.insert(Log::default());
    world.insert(Open(false));
    let id = world.register_system(
        NodeBuilder::new("gated")
            .world(|world: &mut World| world.get_mut::<Log>().unwrap().0.push(1))
            .run_if(|open: &Open| open.0),
    );
    world.run_system(id).unwrap();
    assert!(world.get::<Log>().unwrap().0.is_empty(), "skipped");
    world.get_mut::<Open>().unwrap().0 = true;
    world.run_system(id).unwrap();
    world.run_system(id).unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, [1, 1]);
}
