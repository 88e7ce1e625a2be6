//! Issue 39's snapshots in the API model: `Take` snapshots the world
//! (`World::snapshot`), `TakeInto` into the kept snapshot's memory
//! (`World::snapshot_into`: incremental, keeping the types whose columns
//! did not change since), and the model keeps a clone of its reference
//! state; `Restore` gives the world back as it was (`World::restore`) and
//! the model takes its clone back: every entity of the model (alive,
//! frozen, `P`, `V`, its link and `P`'s ticks), the sparse `Tag`s, the
//! change stamp and every system's change cursor (a system registered
//! since has none: it sees every row), and the simulation clock (a
//! restore puts the world's clocks back). What is not captured stays as
//! it is on both sides: messages, scripts, services not opted in, the
//! other world. The observers' log (`ChangeLog`, naming entities) is
//! opted in: it comes back with the model's `observed`. Handles made after the snapshot (entities, references)
//! are forgotten with it: the ids they name are handed out again.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{ComponentRef, PartKind, Snapshot};

use super::{ChangeLog, Ent, Model, P, Real, V, check, compare_all, sparse};

/// One snapshot operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum SnapshotOp {
    /// `World::snapshot`, kept with a clone of the model.
    Take,
    /// `World::snapshot_into` the kept snapshot (incremental: the types
    /// whose columns did not change since are kept, not copied), kept with
    /// a clone of the model.
    TakeInto,
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
}

/// What the real side keeps: the snapshot and how many handles there
/// were.
#[derive(Debug)]
pub(super) struct SavedReal {
    snapshot: Snapshot,
    ents: usize,
    refs: usize,
}

pub(super) fn op() -> impl Strategy<Value = SnapshotOp> {
    prop_oneof![
        Just(SnapshotOp::Take),
        Just(SnapshotOp::TakeInto),
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
        .snapshot_service::<ChangeLog>();
}

pub(super) fn apply(
    op: SnapshotOp,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    match op {
        SnapshotOp::Take | SnapshotOp::TakeInto => {
            let snapshot = match (op, real.snapshot.take()) {
                (SnapshotOp::TakeInto, Some(SavedReal { mut snapshot, .. })) => {
                    real.world
                        .snapshot_into(&mut snapshot)
                        .map_err(|e| TestCaseError::fail(format!("snapshot_into: {e}")))?;
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
            });
            model.snapshot = Some(SavedModel {
                ents: model.ents.clone(),
                refs: model.refs.len(),
                tags: model.sparse.tags.clone(),
                cursors: model.cursors.clone(),
                stamp: model.stamp,
                now: model.now,
                observed: model.observed.clone(),
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
            model.ents.clone_from(&saved.ents);
            model.refs.truncate(saved.refs);
            model.sparse.tags.clone_from(&saved.tags);
            model.cursors.clone_from(&saved.cursors);
            model.stamp = saved.stamp;
            model.now = saved.now;
            model.observed.clone_from(&saved.observed);
            compare_all(real, model)?;
            sparse::look(real, model)?;
        }
    }
    Ok(())
}
