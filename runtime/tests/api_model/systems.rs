//! Issue 36's system vocabulary in the API model: a `Local<T>` on a node
//! that is removed and registered again, a custom command
//! (`Commands::queue`) that panics between commands that land, and run
//! conditions combined (`not`, `and`, `or`) over a condition that panics.
//!
//! The model knows what the documentation promises: a local counts its
//! node's runs from `Default`, and a new registration starts afresh; custom
//! commands land in record order beside the built-in ones, and one that
//! panics is a boundary failure naming it while the others land; a
//! combination short-circuits (a panicking operand it skips never runs),
//! and an operand that panics fails the node as any condition does. Each
//! op's node is registered after every other (in `PostUpdate`), touches
//! only services of its own, and is removed again, so the rows follow the
//! model as `Op::Run` does.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{
    BoundaryStep, Commands, ConditionExt, IterationError, Local, NodeBuilder, Phase, World, not,
};

use super::{Model, Op, Real, apply as apply_op, check, check_panicked, compare_iteration};

/// The operations of this module.
#[derive(Debug, Clone)]
pub(super) enum SystemsOp {
    /// A node counting its runs in a `Local<u32>` runs this many
    /// iterations, is removed, registered again and run once more.
    LocalReadded { runs: u8 },
    /// A node queues a custom command writing `k`, a built-in insert, a
    /// custom command that panics, and one more custom command.
    PanickingCommand { k: i8 },
    /// A node guarded by `yes.or(panics)` (short-circuit: runs) and one by
    /// `yes.and(not(panics))` (fails), or only the first.
    PanickingCondition { with_failing: bool },
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4).prop_map(|runs| SystemsOp::LocalReadded { runs }),
        (-20i8..20).prop_map(|k| SystemsOp::PanickingCommand { k }),
        any::<bool>().prop_map(|with_failing| SystemsOp::PanickingCondition { with_failing }),
    ]
    .prop_map(Op::Systems)
}

/// What the local-counting node last saw.
#[derive(Debug, Default)]
struct LocalSeen(u32);

/// What the custom commands recorded, in landing order.
#[derive(Debug, Default)]
struct CustomLog(Vec<i64>);

/// The built-in command's service, read by the custom command after it.
#[derive(Debug)]
struct CustomMark(i64);

/// Which of the conditioned nodes ran their body.
#[derive(Debug, Default)]
struct Guarded(u32);

/// A node of this module: after every other (in `PostUpdate`), and
/// exempt from the spike watch, whose model tracks only its own nodes and
/// the systems of `Op::AddSystem`.
fn probe(name: &'static str) -> NodeBuilder {
    NodeBuilder::new(name)
        .phase(Phase::PostUpdate)
        .spike_exempt()
}

fn yes() -> bool {
    true
}

fn panics(_: &Guarded) -> bool {
    std::panic::panic_any(super::INJECTED);
}

fn count_runs(mut runs: Local<u32>, seen: &mut LocalSeen) {
    *runs += 1;
    seen.0 = *runs;
}

pub(super) fn apply(
    op: &SystemsOp,
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
) -> Result<(), TestCaseError> {
    match *op {
        SystemsOp::LocalReadded { runs } => {
            real.world.insert(LocalSeen::default());
            let node = || probe("local_probe");
            let first = real.world.add_system(node().system(count_runs));
            for _ in 0..runs {
                apply_op(&Op::Run, real, model, serial)?;
            }
            let seen = real.world.get::<LocalSeen>().map_or(u32::MAX, |s| s.0);
            check(seen == u32::from(runs), || {
                format!("a local counted {seen} runs of {runs}")
            })?;
            remove(&mut real.world, first)?;
            let again = real.world.add_system(node().system(count_runs));
            apply_op(&Op::Run, real, model, serial)?;
            let seen = real.world.get::<LocalSeen>().map_or(u32::MAX, |s| s.0);
            check(seen == 1, || {
                format!("registered again, its local counted {seen} (not from Default)")
            })?;
            remove(&mut real.world, again)
        }
        SystemsOp::PanickingCommand { k } => {
            let k = i64::from(k);
            real.world.insert(CustomLog::default());
            let node =
                real.world
                    .add_system(probe("queuer").system(move |commands: Commands<'_>| {
                        commands.queue(move |world: &mut World| log(world, k));
                        commands.insert(CustomMark(k + 1));
                        commands.queue(|_: &mut World| std::panic::panic_any(super::INJECTED));
                        commands.queue(|world: &mut World| {
                            let mark = world.get::<CustomMark>().map_or(i64::MIN, |m| m.0);
                            log(world, mark);
                        });
                    }));
            let result = real.world.run_iteration();
            let refused = model.run();
            remove(&mut real.world, node)?;
            let Err(IterationError::Boundary(failures)) = &result else {
                return Err(TestCaseError::fail(format!(
                    "an iteration with a panicking custom command returned {result:?}"
                )));
            };
            let custom: Vec<&str> = failures
                .iter()
                .filter_map(|failure| match failure.step() {
                    BoundaryStep::Command { what, .. } if what.starts_with("custom command") => {
                        Some(what.as_str())
                    }
                    _ => None,
                })
                .collect();
            check(custom.len() == 1 && failures.len() == refused + 1, || {
                format!("one custom command failure beside {refused} refused: {failures:?}")
            })?;
            let landed = &real.world.get::<CustomLog>().expect("the custom log").0;
            check(*landed == [k, k + 1], || {
                format!(
                    "the other commands landed in record order: {landed:?}, not [{k}, {}]",
                    k + 1
                )
            })?;
            compare_iteration(real, model)
        }
        SystemsOp::PanickingCondition { with_failing } => {
            real.world.insert(Guarded::default());
            let skipped = real.world.add_system(
                probe("short_circuit")
                    .system(|guarded: &mut Guarded| guarded.0 += 1)
                    .run_if(yes.or(panics)),
            );
            let failing = with_failing.then(|| {
                real.world.add_system(
                    probe("combined")
                        .system(|guarded: &mut Guarded| guarded.0 += 100)
                        .run_if(yes.and(not(panics))),
                )
            });
            let result = real.world.run_iteration();
            let refused = model.run();
            remove(&mut real.world, skipped)?;
            if let Some(failing) = failing {
                remove(&mut real.world, failing)?;
                // As `Op::InjectPanic`: a node in `PostUpdate` failed.
                model.spikes.injected = true;
                check_panicked(&result, refused, |nodes| nodes == ["combined"])?;
            } else {
                ran_whole(&result, refused)?;
            }
            let guarded = real.world.get::<Guarded>().map_or(u32::MAX, |g| g.0);
            check(guarded == 1, || {
                format!("the short-circuited node ran {guarded} (the failed one added nothing)")
            })?;
            compare_iteration(real, model)
        }
    }
}

/// An iteration no node failed: `Ok`, or only the model's refused commands.
fn ran_whole(result: &Result<(), IterationError>, refused: usize) -> Result<(), TestCaseError> {
    match result {
        Ok(()) => check(refused == 0, || {
            format!("the model refused {refused} commands")
        }),
        Err(IterationError::Boundary(failures)) => check(
            failures.len() == refused && failures.iter().all(|f| f.refused_because().is_some()),
            || format!("{failures:?} beside {refused} refused commands"),
        ),
        Err(error) => Err(TestCaseError::fail(format!(
            "the short-circuited panic ran: {error}"
        ))),
    }
}

fn log(world: &mut World, value: i64) {
    if let Some(log) = world.get_mut::<CustomLog>() {
        log.0.push(value);
    }
}

fn remove(world: &mut World, node: sluice::NodeIndex) -> Result<(), TestCaseError> {
    world
        .remove_node(node)
        .map_err(|e| TestCaseError::fail(e.to_string()))
}
