//! Issue 39's snapshots in the API model: `Take` snapshots the world
//! (`World::snapshot`) and the model keeps a clone of its reference
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
//! stays as it is on both sides: messages, services not opted in, the
//! other world. The scripts' intent log is opted in (its ids name the
//! scripts of the timeline it was logged in): it comes back with the
//! model's `intents`. The observers' log (`ChangeLog`, naming entities) is
//! opted in: it comes back with the model's `observed`. Handles made after the snapshot (entities, references)
//! are forgotten with it: the ids they name are handed out again.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{ComponentRef, PartKind, Snapshot};

use sluice::script::{ScriptId, Scripts};

use super::{ChangeLog, Director, Ent, Model, P, Real, ScriptLog, V, check, compare_all, sparse};

/// One snapshot operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum SnapshotOp {
    /// `World::snapshot`, kept with a clone of the model.
    Take,
    /// `World::restore` of the kept snapshot.
    Restore,
}

/// What the model keeps of a snapshot.
#[derive(Debug, Clone)]
pub(super) struct SavedModel {
    ents: Vec<Ent>,
    refs: usize,
    tags: std::collections::BTreeMap<usize, i8>,
    cursors: std::collections::HashMap<usize, u64>,
    stamp: u64,
    now: std::time::Duration,
    observed: Vec<(usize, Vec<usize>)>,
    scripts: super::ModelScripts,
    intents: Vec<(usize, (u8, u8))>,
}

/// What the real side keeps: the snapshot and how many handles there
/// were.
#[derive(Debug)]
pub(super) struct SavedReal {
    snapshot: Snapshot,
    ents: usize,
    refs: usize,
    script_ids: usize,
}

pub(super) fn op() -> impl Strategy<Value = SnapshotOp> {
    prop_oneof![Just(SnapshotOp::Take), Just(SnapshotOp::Restore)]
}

/// Opts the model's components into the world's snapshots.
pub(super) fn install(world: &mut sluice::World) {
    world
        .snapshot_component::<P>()
        .snapshot_component::<V>()
        .snapshot_component::<ComponentRef<P>>()
        .snapshot_component::<sparse::Tag>()
        .snapshot_service::<ChangeLog>()
        .snapshot_service::<ScriptLog>();
}

pub(super) fn apply(
    op: SnapshotOp,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    match op {
        SnapshotOp::Take => {
            let snapshot = real
                .world
                .snapshot()
                .map_err(|e| TestCaseError::fail(format!("snapshot: {e}")))?;
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
            let alive = model.ents.iter().filter(|e| e.alive).count();
            check(snapshot.entity_count() == alive, || {
                format!(
                    "{} entities in the snapshot, {alive} alive",
                    snapshot.entity_count()
                )
            })?;
            real.snapshot = Some(SavedReal {
                snapshot,
                ents: real.ents.len(),
                refs: real.refs.len(),
                script_ids: real.script_ids.len(),
            });
            model.snapshot = Some(SavedModel {
                ents: model.ents.clone(),
                refs: model.refs.len(),
                tags: model.sparse.tags.clone(),
                cursors: model.cursors.clone(),
                stamp: model.stamp,
                now: model.now,
                observed: model.observed.clone(),
                scripts: model.scripts.clone(),
                intents: model.intents.clone(),
            });
        }
        SnapshotOp::Restore => {
            let (Some(saved_real), Some(saved)) = (&real.snapshot, &model.snapshot) else {
                return Ok(());
            };
            real.world
                .restore(&saved_real.snapshot)
                .map_err(|e| TestCaseError::fail(format!("restore: {e}")))?;
            real.ents.truncate(saved_real.ents);
            real.refs.truncate(saved_real.refs);
            real.script_ids.truncate(saved_real.script_ids);
            real.save = None;
            model.save = None;
            model.scripts.clone_from(&saved.scripts);
            model.intents.clone_from(&saved.intents);
            model.ents.clone_from(&saved.ents);
            model.refs.truncate(saved.refs);
            model.sparse.tags.clone_from(&saved.tags);
            model.cursors.clone_from(&saved.cursors);
            model.stamp = saved.stamp;
            model.now = saved.now;
            model.observed.clone_from(&saved.observed);
            compare_all(real, model)?;
            sparse::look(real, model)?;
            compare_scripts(real, model)?;
        }
    }
    Ok(())
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
