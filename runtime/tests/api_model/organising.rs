//! Issue 36's conditions on groups and silenced ambiguities in the API
//! model: a group whose condition holds, is false, or panics through a
//! combinator (`or`, `and(not(..))`), and two nodes whose ambiguity one of
//! them silences (or that name a node that does not exist); a condition
//! reading another's result (`pipe`) that panics on a false one.
//!
//! The model knows what the documentation promises: the group's condition
//! is evaluated once per iteration whatever the number of members, which
//! run exactly when it holds; a combination short-circuits, and an operand
//! that panics fails the iteration naming `run_if(<group>)`, no member
//! running. A silenced pair is reported as silenced by its node, never as a
//! warning; an unknown name is SL0002 and the world plans again once the
//! node is gone. Each op's nodes sit in `PostUpdate` (the condition with
//! them, in the earliest phase of its members), touch only services of
//! their own, and are removed again.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{ConditionExt, Group, IterationError, Level, NodeBuilder, Phase, not};

use super::systems::{ran_whole, remove};
use super::{Model, Op, Real, apply as apply_op, check, check_panicked, compare_iteration};

/// How the group's condition is combined.
#[derive(Debug, Clone, Copy)]
pub(super) enum Combined {
    /// `holds` alone.
    Plain,
    /// `holds.or(panics)`: panics when `holds` is false.
    OrPanics,
    /// `holds.and(not(panics))`: panics when `holds` is true.
    AndNotPanics,
    /// `holds.pipe(passes_or_panics)`: reads `holds`' result, panics when
    /// it is false.
    Piped,
}

/// The operations of this module.
#[derive(Debug, Clone)]
pub(super) enum OrganisingOp {
    /// A group of `members` nodes under a condition that returns `holds`,
    /// combined as `combined`; one iteration.
    GroupCondition {
        members: u8,
        holds: bool,
        combined: Combined,
    },
    /// Two nodes gating one service, the first silencing the pair (by name,
    /// or with all), or naming a node that does not exist.
    Silence { all: bool, unknown: bool },
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    let combined = prop_oneof![
        Just(Combined::Plain),
        Just(Combined::OrPanics),
        Just(Combined::AndNotPanics),
        Just(Combined::Piped),
    ];
    prop_oneof![
        (1u8..6, any::<bool>(), combined).prop_map(|(members, holds, combined)| {
            OrganisingOp::GroupCondition {
                members,
                holds,
                combined,
            }
        }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(all, unknown)| OrganisingOp::Silence { all, unknown }),
    ]
    .prop_map(Op::Organising)
}

/// What the group's condition returns, how often it ran, and how often
/// the members ran.
#[derive(Debug, Default)]
struct GroupProbe {
    holds: bool,
    evaluations: AtomicU32,
    runs: AtomicU32,
}

/// The service the silenced pair gates.
#[derive(Debug, Default)]
struct SilenceProbe(u32);

fn holds(probe: &GroupProbe) -> bool {
    probe.evaluations.fetch_add(1, Ordering::Relaxed);
    probe.holds
}

fn panics(_: &GroupProbe) -> bool {
    std::panic::panic_any(super::INJECTED);
}

fn passes_or_panics(held: bool, _: &GroupProbe) -> bool {
    if !held {
        std::panic::panic_any(super::INJECTED);
    }
    held
}

/// Groups cannot be removed: each op declares one of its own.
static GROUPS: AtomicUsize = AtomicUsize::new(0);

pub(super) fn apply(
    op: &OrganisingOp,
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
) -> Result<(), TestCaseError> {
    match *op {
        OrganisingOp::GroupCondition {
            members,
            holds: verdict,
            combined,
        } => {
            real.world.insert(GroupProbe {
                holds: verdict,
                ..GroupProbe::default()
            });
            let name = format!("probe_group{}", GROUPS.fetch_add(1, Ordering::Relaxed));
            // Exempt from the spike watch, whose model tracks only its own
            // nodes: the members and the condition (a member) with it.
            real.world
                .add_group(Group::new(name.clone()).spike_exempt());
            let condition = match combined {
                Combined::Plain => real.world.run_group_if(name.clone(), holds),
                Combined::OrPanics => real.world.run_group_if(name.clone(), holds.or(panics)),
                Combined::AndNotPanics => real
                    .world
                    .run_group_if(name.clone(), holds.and(not(panics))),
                Combined::Piped => real
                    .world
                    .run_group_if(name.clone(), holds.pipe(passes_or_panics)),
            };
            let nodes: Vec<_> = (0..members)
                .map(|i| {
                    real.world.add_system(
                        NodeBuilder::new(format!("{name}_member{i}"))
                            .in_group(name.clone())
                            .phase(Phase::PostUpdate)
                            .system(|probe: &GroupProbe| {
                                probe.runs.fetch_add(1, Ordering::Relaxed);
                            }),
                    )
                })
                .collect();
            let result = real.world.run_iteration();
            let refused = model.run();
            remove(&mut real.world, condition)?;
            for node in nodes {
                remove(&mut real.world, node)?;
            }
            let fails = match combined {
                Combined::Plain => false,
                Combined::OrPanics | Combined::Piped => !verdict,
                Combined::AndNotPanics => verdict,
            };
            let probe = real.world.get::<GroupProbe>().expect("the probe");
            let (evaluations, runs) = (
                probe.evaluations.load(Ordering::Relaxed),
                probe.runs.load(Ordering::Relaxed),
            );
            check(evaluations == 1, || {
                format!("the group's condition was evaluated {evaluations} times, not once")
            })?;
            let expected = if verdict && !fails {
                u32::from(members)
            } else {
                0
            };
            check(runs == expected, || {
                format!("{runs} member runs, the model {expected} ({combined:?}, {verdict})")
            })?;
            if fails {
                // As `Op::InjectPanic`: a node in `PostUpdate` failed.
                model.spikes.injected = true;
                let condition = format!("run_if({name})");
                check_panicked(&result, refused, |nodes| nodes == [condition])?;
            } else {
                ran_whole(&result, refused)?;
            }
            compare_iteration(real, model)
        }
        OrganisingOp::Silence { all, unknown } => {
            real.world.insert(SilenceProbe::default());
            let first = NodeBuilder::new("silence_a").phase(Phase::PostUpdate);
            let first = match (unknown, all) {
                (true, _) => first.ambiguous_with("silence_nobody"),
                (false, true) => first.ambiguous_with_all(),
                (false, false) => first.ambiguous_with("silence_b"),
            };
            let gate = |probe: &mut SilenceProbe| probe.0 += 1;
            let a = real.world.add_system(first.spike_exempt().system(gate));
            let b = real.world.add_system(
                NodeBuilder::new("silence_b")
                    .phase(Phase::PostUpdate)
                    .spike_exempt()
                    .system(gate),
            );
            if unknown {
                let planned = real.world.plan();
                remove(&mut real.world, a)?;
                remove(&mut real.world, b)?;
                let Err(IterationError::Plan(errors)) = planned else {
                    return Err(TestCaseError::fail(format!(
                        "an unknown ambiguous_with planned: {planned:?}"
                    )));
                };
                return check(
                    errors
                        .errors()
                        .any(|e| e.code == "SL0002" && e.message.contains("silence_nobody")),
                    || format!("no SL0002 naming the unknown node: {errors}"),
                );
            }
            apply_op(&Op::Run, real, model, serial)?;
            let plan = real
                .world
                .plan()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let pair = "`silence_a` and `silence_b`";
            let about = |d: &&sluice::Diagnostic| d.code == "SL0008" && d.message.contains(pair);
            let levels: Vec<Level> = plan
                .diagnostics()
                .iter()
                .filter(about)
                .map(|d| d.level)
                .collect();
            remove(&mut real.world, a)?;
            remove(&mut real.world, b)?;
            check(levels == [Level::Silenced], || {
                format!("the silenced pair was reported at {levels:?}")
            })
        }
    }
}
