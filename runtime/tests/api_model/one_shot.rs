//! Issue 36's one-shot systems in the API model: `World::run_system_once`
//! of a system that records commands and may panic, `World::run_system` /
//! `Commands::run_system` on an unregistered id, and a system that runs
//! itself.
//!
//! The model knows what the documentation promises: a one-shot system's
//! commands land before the call returns, and nothing it recorded lands if
//! it panics (the error names it); an unregistered id is an error naming
//! the system, and through a command a boundary failure beside which the
//! other commands land; a system running itself is refused by name. None
//! of it touches the model's entities or systems, and the world runs on
//! (`Op::Run` follows each case).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{BoundaryStep, Commands, IterationError, NodeBuilder, RunSystemError, World};

use super::systems::{probe, remove};
use super::{Model, Op, Real, apply as apply_op, check};

/// The operations of this module.
#[derive(Debug, Clone)]
pub(super) enum OneShotOp {
    /// `run_system_once` of a system queueing a custom command logging `k`
    /// and inserting a service; it panics after recording, with `panics`.
    RunOnce { k: i8, panics: bool },
    /// A system registered and unregistered, then run by id (directly, or
    /// from a command of a node, with `by_command`).
    RunRemoved { by_command: bool },
    /// A whole-world system that runs itself.
    Recursive,
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<i8>(), any::<bool>()).prop_map(|(k, panics)| OneShotOp::RunOnce { k, panics }),
        any::<bool>().prop_map(|by_command| OneShotOp::RunRemoved { by_command }),
        Just(OneShotOp::Recursive),
    ]
    .prop_map(Op::OneShot)
}

/// What this module's systems logged, in landing order.
#[derive(Debug, Default)]
struct OneShotLog(Vec<i64>);

/// A service a one-shot system's command inserts.
#[derive(Debug)]
struct OneShotMark(i64);

fn logged(world: &World) -> Vec<i64> {
    world
        .get::<OneShotLog>()
        .map(|log| log.0.clone())
        .unwrap_or_default()
}

pub(super) fn apply(
    op: &OneShotOp,
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
) -> Result<(), TestCaseError> {
    real.world.insert(OneShotLog::default());
    real.world.remove::<OneShotMark>();
    match *op {
        OneShotOp::RunOnce { k, panics } => {
            let k = i64::from(k);
            let result = real
                .world
                .run_system_once(NodeBuilder::new("one_shot").system(
                    move |commands: Commands<'_>| {
                        commands.queue(move |world: &mut World| {
                            world.get_mut::<OneShotLog>().expect("the log").0.push(k);
                        });
                        commands.insert(OneShotMark(k));
                        if panics {
                            std::panic::panic_any(super::INJECTED);
                        }
                    },
                ));
            let mark = real.world.get::<OneShotMark>().map(|m| m.0);
            if panics {
                check(
                    matches!(&result, Err(RunSystemError::Panicked { system, .. }) if system == "one_shot"),
                    || format!("a panicking one-shot system returned {result:?}"),
                )?;
                check(logged(&real.world).is_empty() && mark.is_none(), || {
                    format!("its commands landed: {:?}, {mark:?}", logged(&real.world))
                })?;
            } else {
                check(result.is_ok(), || {
                    format!("a one-shot system returned {result:?}")
                })?;
                check(logged(&real.world) == [k] && mark == Some(k), || {
                    format!(
                        "its commands: {:?}, {mark:?}, not [{k}]",
                        logged(&real.world)
                    )
                })?;
            }
        }
        OneShotOp::RunRemoved { by_command } => {
            let id = real.world.register_system(
                NodeBuilder::new("removed_one").system(|log: &mut OneShotLog| log.0.push(-1)),
            );
            real.world
                .unregister_system(id)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            if by_command {
                let node = real.world.add_system(probe("asks_removed").system(
                    move |commands: Commands<'_>| {
                        commands.run_system(id);
                        commands.queue(|world: &mut World| {
                            world.get_mut::<OneShotLog>().expect("the log").0.push(1);
                        });
                    },
                ));
                let result = real.world.run_iteration();
                let refused = model.run();
                remove(&mut real.world, node)?;
                let Err(IterationError::Boundary(failures)) = &result else {
                    return Err(TestCaseError::fail(format!(
                        "running a removed id from a command returned {result:?}"
                    )));
                };
                let named = failures.iter().filter(|failure| {
                    matches!(failure.step(), BoundaryStep::Command { what, .. } if what.starts_with("run one-shot"))
                        && failure.to_string().contains("removed_one")
                });
                check(named.count() == 1 && failures.len() == refused + 1, || {
                    format!("one failure naming the system beside {refused} refused: {failures:?}")
                })?;
                check(logged(&real.world) == [1], || {
                    format!("the other command landed: {:?}", logged(&real.world))
                })?;
                return super::compare_iteration(real, model);
            }
            let result = real.world.run_system(id);
            check(
                matches!(&result, Err(RunSystemError::Removed { system }) if system == "removed_one"),
                || format!("running a removed id returned {result:?}"),
            )?;
        }
        OneShotOp::Recursive => {
            let id = real.world.register_system(NodeBuilder::new("itself").world(
                move |world: &mut World| {
                    let again = world.get::<SelfId>().and_then(|me| me.0);
                    if let Some(again) = again {
                        let refused = matches!(
                            world.run_system(again),
                            Err(RunSystemError::Recursive { ref system }) if system == "itself"
                        );
                        world
                            .get_mut::<OneShotLog>()
                            .expect("the log")
                            .0
                            .push(i64::from(refused));
                    }
                },
            ));
            real.world.insert(SelfId(Some(id)));
            let result = real.world.run_system(id);
            real.world
                .unregister_system(id)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            check(result.is_ok() && logged(&real.world) == [1], || {
                format!("running itself: {result:?}, {:?}", logged(&real.world))
            })?;
        }
    }
    // The world runs on as the model does.
    apply_op(&Op::Run, real, model, serial)
}

/// The id of the system that runs itself.
#[derive(Debug)]
struct SelfId(Option<sluice::SystemId>);
