//! Issue 39's snapshots in the API model: `Take` snapshots the world
//! (`World::snapshot`), `TakeInto` into the kept snapshot's memory
//! (`World::snapshot_into`: incremental, keeping the types whose columns
//! did not change since; `TakeIntoFull` with incremental captures off,
//! which must keep none), and the model keeps a clone of its reference
//! state; `Restore` gives the world back as it was (`World::restore`) and
//! the model takes its clone back: every entity of the model (alive,
//! frozen, `P`, `V`, its link and `P`'s ticks), the sparse `Tag`s, the
//! change stamp and every system's change cursor (a system registered
//! since has none: it sees every row), and the simulation clock (a
//! restore puts the world's clocks back), and the step scripts (the
//! store is opted in: each live script with its state and wait, and the
//! ids to hand out next, so the scripts started after a restore get the
//! ids, and the model's numbers, that the ones undone got; a
//! `ScriptSnapshot` saved before a restore is forgotten on both sides: it
//! would restore as another store's, with new ids). What is not captured
//! stays as it is on both sides: services not opted in, the other world.
//! The scripts' intent log is opted in (its ids name the scripts of the
//! timeline it was logged in): it comes back with the model's `intents`.
//! The observers' log (`ChangeLog`, naming entities) is opted in: it
//! comes back with the model's `observed`. Handles made after the
//! snapshot (entities, references) are forgotten with it: the ids they
//! name are handed out again.
//!
//! Messages `M` are opted in (`World::snapshot_messages`): the reader's
//! unread messages come back (what writers sent in the iteration before
//! the snapshot, and what the sender's queue handed over at that
//! iteration's boundary), and the reader reads them again. The rule for a
//! message sent from outside the frame (the model's sender, on another
//! thread): it is part of a snapshot once a boundary has drained it. What
//! the sender sent that no boundary has drained is in none; a restore
//! leaves it in the queue, so the next boundary hands it over whenever it
//! was sent, and what a boundary drained after the snapshot is undone
//! with the log.
//!
//! `Sys::Counter`'s `Local<i64>` is opted in (`World::snapshot_local`):
//! each counter registered at the snapshot gets its count back (0 if it
//! had not run); one registered since keeps its own. A counter removed
//! since makes the restore refuse (`RestoreError::NodeGone`), and nothing
//! changes. The snapshot's report leaves out no `Local` and not `M`.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::snapshot::RestoreError;
use sluice::{ComponentRef, PartKind, Snapshot};

use sluice::script::{ScriptId, Scripts};

use super::{
    ChangeLog, Director, Ent, M, Model, P, Real, ScriptLog, Sys, V, check, compare_all, sparse,
};

/// One snapshot operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum SnapshotOp {
    /// `World::snapshot`, kept with a clone of the model.
    Take,
    /// `World::snapshot_into` the kept snapshot (incremental: the types
    /// whose columns did not change since are kept, not copied), kept with
    /// a clone of the model.
    TakeInto,
    /// `World::snapshot_into` the kept snapshot with incremental captures
    /// turned off (`Snapshot::set_incremental(false)`: every type copied
    /// again), then on again for the next `TakeInto`.
    TakeIntoFull,
    /// `World::restore` of the kept snapshot.
    Restore,
}

/// What the model keeps of a snapshot.
#[derive(Debug, Clone)]
pub(super) struct SavedModel {
    ents: Vec<Ent>,
    refs: Vec<super::Ref>,
    tags: std::collections::BTreeMap<usize, i8>,
    cursors: std::collections::HashMap<usize, u64>,
    stamp: u64,
    now: std::time::Duration,
    observed: Vec<(usize, Vec<usize>)>,
    /// The reader's unread messages: sent by writers, and drained from
    /// the sender.
    sent_by_nodes: Vec<i64>,
    drained: Vec<i64>,
    /// Every counter registered: its serial and its count.
    counters: Vec<(usize, i64)>,
    /// The step scripts (snapshots and saves) and the intents they
    /// logged (snapshots only).
    scripts: super::ModelScripts,
    intents: Vec<(usize, (u8, u8))>,
}

/// What the real side keeps: the snapshot and the handles there were
/// (kept whole, not counted: a load between the snapshot and its restore
/// may have dropped some).
#[derive(Debug)]
pub(super) struct SavedReal {
    snapshot: Snapshot,
    ents: Vec<sluice::Entity>,
    refs: Vec<ComponentRef<P>>,
    script_ids: Vec<ScriptId>,
}

pub(super) fn op() -> impl Strategy<Value = SnapshotOp> {
    prop_oneof![
        Just(SnapshotOp::Take),
        Just(SnapshotOp::TakeInto),
        Just(SnapshotOp::TakeIntoFull),
        Just(SnapshotOp::Restore)
    ]
}

/// Opts the model's components into the world's snapshots.
pub(super) fn install(world: &mut sluice::World) {
    world
        .snapshot_component::<P>()
        .snapshot_component::<V>()
        .snapshot_component::<ComponentRef<P>>()
        .snapshot_component::<sparse::Tag>()
        .snapshot_service::<ChangeLog>()
        .snapshot_service::<ScriptLog>()
        .snapshot_messages::<M>()
        .snapshot_local::<i64>();
}

pub(super) fn apply(
    op: SnapshotOp,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    match op {
        SnapshotOp::Take | SnapshotOp::TakeInto | SnapshotOp::TakeIntoFull => {
            let snapshot = match (op, real.snapshot.take()) {
                (
                    SnapshotOp::TakeInto | SnapshotOp::TakeIntoFull,
                    Some(SavedReal { mut snapshot, .. }),
                ) => {
                    let full = matches!(op, SnapshotOp::TakeIntoFull);
                    snapshot.set_incremental(!full);
                    real.world
                        .snapshot_into(&mut snapshot)
                        .map_err(|e| TestCaseError::fail(format!("snapshot_into: {e}")))?;
                    if full {
                        check(snapshot.reused_components() == 0, || {
                            format!(
                                "a capture with incremental off kept {} component types",
                                snapshot.reused_components()
                            )
                        })?;
                        snapshot.set_incremental(true);
                    }
                    snapshot
                }
                _ => real
                    .world
                    .snapshot()
                    .map_err(|e| TestCaseError::fail(format!("snapshot: {e}")))?,
            };
            let components: Vec<String> = snapshot
                .report()
                .entries()
                .iter()
                .filter(|entry| entry.kind() == PartKind::Component)
                .map(ToString::to_string)
                .collect();
            let scripts_left_out = snapshot
                .report()
                .entries()
                .iter()
                .any(|entry| entry.kind() == PartKind::Scripts);
            check(!scripts_left_out, || {
                "the store of step scripts, drained by collect, is captured".into()
            })?;
            check(components.is_empty(), || {
                format!("every component with rows is opted in, but {components:?} are left out")
            })?;
            let opted_in: Vec<String> = snapshot
                .report()
                .entries()
                .iter()
                .filter(|entry| {
                    entry.kind() == PartKind::Local
                        || entry.kind() == PartKind::Messages && entry.name().ends_with("::M>")
                })
                .map(ToString::to_string)
                .collect();
            check(opted_in.is_empty(), || {
                format!("the counters' locals and `M` are opted in, but {opted_in:?} are left out")
            })?;
            let alive = model.ents.iter().filter(|e| e.alive).count();
            check(snapshot.entity_count() == alive, || {
                format!(
                    "{} entities in the snapshot, {alive} alive",
                    snapshot.entity_count()
                )
            })?;
            real.snapshot = Some(SavedReal {
                snapshot,
                ents: real.ents.clone(),
                refs: real.refs.clone(),
                script_ids: real.script_ids.clone(),
            });
            model.snapshot = Some(keep(model));
        }
        SnapshotOp::Restore => {
            let (Some(saved_real), Some(saved)) = (&real.snapshot, &model.snapshot) else {
                return Ok(());
            };
            let gone = saved.counter_gone(model).is_some();
            match real.world.restore(&saved_real.snapshot) {
                Ok(()) if !gone => {}
                Err(RestoreError::NodeGone { local }) if gone => {
                    check(local.contains("i64"), || {
                        format!("NodeGone names {local:?}, not the counter's local")
                    })?;
                    // Refused: nothing changed.
                    return compare_all(real, model);
                }
                result => {
                    return Err(TestCaseError::fail(format!(
                        "restore: {result:?}, with a counter removed since: {gone}"
                    )));
                }
            }
            real.ents.clone_from(&saved_real.ents);
            real.refs.clone_from(&saved_real.refs);
            let ids = saved_real.script_ids.clone();
            real.reset_script_ids(&ids, true);
            // A `ScriptSnapshot` taken before would restore as another
            // store's (new ids): forgotten on both sides.
            real.save = None;
            model.save = None;
            let saved = saved.clone();
            saved.put_back(model, false);
            compare_all(real, model)?;
            sparse::look(real, model)?;
            compare_scripts(real, model)?;
        }
    }
    Ok(())
}

/// What the model keeps of a snapshot (or a save) taken now.
pub(super) fn keep(model: &Model) -> SavedModel {
    SavedModel {
        ents: model.ents.clone(),
        refs: model.refs.clone(),
        tags: model.sparse.tags.clone(),
        cursors: model.cursors.clone(),
        stamp: model.stamp,
        now: model.now,
        observed: model.observed.clone(),
        sent_by_nodes: model.sent_by_nodes.clone(),
        drained: model.drained.clone(),
        counters: model
            .systems
            .iter()
            .filter(|(system, _)| *system == Sys::Counter)
            .map(|&(_, serial)| (serial, model.locals.get(&serial).copied().unwrap_or(0)))
            .collect(),
        scripts: model.scripts.clone(),
        intents: model.intents.clone(),
    }
}

impl SavedModel {
    /// Whether a counter registered then has been removed since (its
    /// local has no node to go back to).
    pub(super) fn counter_gone(&self, model: &Model) -> Option<usize> {
        self.counters
            .iter()
            .map(|&(serial, _)| serial)
            .find(|serial| !model.systems.iter().any(|(_, s)| s == serial))
    }

    /// The model as it was kept. From a save (`from_disk`): every node
    /// starts over (no cursors), and what a save does not hold stays: the
    /// messages and the scripts' intent log (opted into snapshots, not
    /// saves); the scripts come back (their store is saved).
    pub(super) fn put_back(self, model: &mut Model, from_disk: bool) {
        model.ents = self.ents;
        model.refs = self.refs;
        model.sparse.tags = self.tags;
        model.stamp = self.stamp;
        model.now = self.now;
        model.observed = self.observed;
        if from_disk {
            model.cursors.clear();
        } else {
            model.cursors = self.cursors;
            model.sent_by_nodes = self.sent_by_nodes;
            model.drained = self.drained;
            model.intents = self.intents;
        }
        model.scripts = self.scripts;
        // `sent_by_sender`, in no snapshot, stays.
        for (serial, count) in self.counters {
            model.locals.insert(serial, count);
        }
    }
}

/// The store's live scripts are the model's, by id.
fn compare_scripts(real: &Real, model: &Model) -> Result<(), TestCaseError> {
    let mut live: Vec<ScriptId> = real
        .world
        .get::<Scripts<Director>>()
        .expect("the store")
        .iter()
        .map(|info| info.id)
        .collect();
    live.sort_unstable();
    let mut expected: Vec<ScriptId> = model
        .scripts
        .0
        .iter()
        .map(|(index, _, _)| real.script_ids[*index])
        .collect();
    expected.sort_unstable();
    check(live == expected, || {
        format!("after a restore the store holds {live:?}, the model {expected:?}")
    })
}
