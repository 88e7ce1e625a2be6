//! Issue 39's saves in the API model: `LoadBack` snapshots the world,
//! writes the snapshot as a save, reads it back and loads it into the same
//! world. Whatever the model knows is as it was (every entity, `P`, `V`,
//! the sparse `Tag`s, `P`'s ticks), except that every node starts over:
//! a save keeps no node's change cursor, so each next run sees every row
//! as new (the model forgets its cursors). The snapshot read back has the
//! checksum of the one written and no divergence from it. A world with
//! component rows not saved is refused by name (`SaveError::NotSaved`,
//! exactly the report's left-out components) and nothing changes.
//!
//! The model's references (`ComponentRef<P>`) are saved
//! (`World::save_component_ref`), each as its target: after a load every
//! linked entity's `Target<P>` reads what the model's reference reads (its
//! target's `P`, or nothing once the target is gone). A reference made on
//! the other world (foreign: it reads nothing) held by a live entity makes
//! the save refuse (`SaveError::ForeignReference`, naming a holder of
//! one), and nothing changes.
//!
//! The counters' `Local<i64>` are saved too (`World::save_local`, by each
//! node's key, `Counter#serial`, and position): the load puts each back
//! into its node, so the next runs count on from where they were (the
//! model's `locals` stay as they are), and the save names no `Local` as
//! not saved.
//!
//! The step scripts' store is saved (`World::save_scripts`, its `Ticker`s
//! with `World::save_step_script`): a load puts the saved scripts back,
//! with their states and waits, under new ids where the store had handed
//! out others since (the model keeps its numbers: the store's live
//! scripts, by id, are the model's in start order); their intents after
//! it are the model's. The read-back snapshot's checksum and divergence
//! cover them.
//!
//! `Keep` writes a save and keeps it with a clone of the model;
//! `LoadKept`, later, loads it into the same world: the model takes back
//! its clone (entities, `P`'s ticks, the tags, the clock, the counters'
//! locals, the observers' log, saved as a service, the step scripts)
//! except what a save does not hold (the reader's messages, the scripts'
//! intent log) and the nodes' cursors (every
//! node starts over). A
//! counter removed since leaves its saved local no node: the load is
//! refused naming the node's key, and nothing changes.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::snapshot::{LoadError, SaveError};

use super::{Model, P, Real, V, check, compare_all, sparse};

/// A kept save's bytes, with the entity, reference and script handles
/// there were then.
pub(super) type KeptSave = (
    Vec<u8>,
    Vec<sluice::Entity>,
    Vec<sluice::ComponentRef<P>>,
    Vec<sluice::script::ScriptId>,
);

/// One save operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum SaveOp {
    /// Save, read back, compare, load into the same world.
    LoadBack,
    /// Save, kept (with a clone of the model) for a later `LoadKept`.
    Keep,
    /// Load the kept save, later.
    LoadKept,
}

pub(super) fn op() -> impl Strategy<Value = SaveOp> {
    prop_oneof![
        Just(SaveOp::LoadBack),
        Just(SaveOp::Keep),
        Just(SaveOp::LoadKept)
    ]
}

/// Registers the model's components for saving.
pub(super) fn install(world: &mut sluice::World) {
    world
        .save_component::<P>("p")
        .save_component::<V>("v")
        .save_component::<sparse::Tag>("tag")
        .save_local::<i64>("counter")
        .save_service::<super::ChangeLog>("change_log")
        .save_scripts::<super::Director>("director")
        .save_step_script::<super::Director, super::Ticker>("ticker")
        .save_component_ref::<P>("ref_p");
}

/// Whether a live entity of the model holds a reference made on the
/// other world (which a save refuses).
fn holds_foreign(model: &Model) -> bool {
    model
        .ents
        .iter()
        .any(|e| e.alive && e.link.is_some_and(|link| model.refs[link].foreign))
}

/// Checks a `ForeignReference` refusal: the model holds a foreign
/// reference, and the holder named is one of its holders.
fn foreign_refused(
    real: &Real,
    model: &Model,
    holder: sluice::Entity,
) -> Result<(), TestCaseError> {
    let named = real.ents.iter().position(|&e| e == holder);
    check(
        named.is_some_and(|i| {
            let e = &model.ents[i];
            e.alive && e.link.is_some_and(|link| model.refs[link].foreign)
        }),
        || {
            format!(
                "ForeignReference names {holder} (model #{named:?}), no holder of a foreign one"
            )
        },
    )
}

pub(super) fn apply(op: SaveOp, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    match op {
        SaveOp::LoadBack => load_back(real, model),
        SaveOp::Keep => {
            let snapshot = real
                .world
                .snapshot()
                .map_err(|e| TestCaseError::fail(format!("snapshot: {e}")))?;
            let mut bytes = Vec::new();
            match snapshot.write_to(&mut bytes) {
                Ok(()) => {
                    check(!holds_foreign(model), || {
                        "a save holding a foreign reference was written".to_owned()
                    })?;
                    real.kept_save = Some((
                        bytes,
                        real.ents.clone(),
                        real.refs.clone(),
                        real.script_ids.clone(),
                    ));
                    model.kept_save = Some(super::snapshots::keep(model));
                }
                // Component rows not saved (`LoadBack` checks the names).
                Err(SaveError::NotSaved { .. }) => {}
                Err(SaveError::ForeignReference { holder, .. }) => {
                    foreign_refused(real, model, holder)?;
                }
                Err(error) => return Err(TestCaseError::fail(format!("write_to: {error}"))),
            }
            Ok(())
        }
        SaveOp::LoadKept => load_kept(real, model),
    }
}

/// Loads the kept save: the model goes back to its clone but keeps what
/// a save does not hold (messages, the observers' log), and every node
/// starts over. A counter removed since has no node for its local: the
/// load is refused naming its key (`LoadError::NodeMissing`), and nothing
/// changes.
fn load_kept(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let (Some((bytes, ents, refs, script_ids)), Some(saved)) = (&real.kept_save, &model.kept_save)
    else {
        return Ok(());
    };
    let gone = saved.counter_gone(model);
    match (real.world.load_from(&bytes[..]), gone) {
        (Ok(()), None) => {}
        (Err(LoadError::NodeMissing { node, local }), Some(serial)) => {
            check(
                node == format!("Counter#{serial}") && local == "counter",
                || format!("NodeMissing names {node:?} ({local:?}), the removed counter #{serial}"),
            )?;
            return compare_all(real, model);
        }
        (result, gone) => {
            return Err(TestCaseError::fail(format!(
                "load_from: {result:?}, with counter {gone:?} removed since"
            )));
        }
    }
    real.ents.clone_from(ents);
    real.refs.clone_from(refs);
    // The scripts' handles too: those made since are forgotten.
    let script_ids = script_ids.clone();
    real.reset_script_ids(&script_ids, true);
    saved.clone().put_back(model, true);
    real.adopt_loaded_scripts(model)?;
    forget_script_snapshot(real, model);
    compare_all(real, model)?;
    sparse::look(real, model)
}

fn load_back(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let fail =
        |what: &str, error: &dyn std::fmt::Display| TestCaseError::fail(format!("{what}: {error}"));
    let snapshot = real.world.snapshot().map_err(|e| fail("snapshot", &e))?;
    let mut bytes = Vec::new();
    match snapshot.write_to(&mut bytes) {
        Ok(()) => {}
        Err(SaveError::NotSaved { names }) => {
            // The components left out of the snapshot, and those it holds
            // that are not registered for saving: those, and nothing else.
            let left_out: Vec<String> = snapshot
                .report()
                .entries()
                .iter()
                .filter(|entry| entry.kind() == sluice::PartKind::Component)
                .map(|entry| entry.name().to_owned())
                .collect();
            let not_saved = snapshot.not_saved();
            let explained = names
                .iter()
                .all(|name| left_out.contains(name) || not_saved.contains(&name.as_str()));
            check(
                !names.is_empty() && explained && left_out.iter().all(|n| names.contains(n)),
                || {
                    format!(
                        "NotSaved names {names:?}; left out {left_out:?}, not saved {not_saved:?}"
                    )
                },
            )?;
            return compare_all(real, model);
        }
        Err(SaveError::ForeignReference { holder, .. }) => {
            foreign_refused(real, model, holder)?;
            return compare_all(real, model);
        }
        Err(error) => return Err(fail("write_to", &error)),
    }
    check(!holds_foreign(model), || {
        "a save holding a foreign reference was written".to_owned()
    })?;
    let unsaved_locals: Vec<&str> = (snapshot.not_saved().into_iter())
        .filter(|name| name.contains("Local<") || name.contains("Scripts<"))
        .collect();
    check(unsaved_locals.is_empty(), || {
        format!("the counters' locals and the scripts are saved, but {unsaved_locals:?} are not")
    })?;
    let read = real
        .world
        .read_snapshot(&bytes[..])
        .map_err(|e| fail("read_snapshot", &e))?;
    check(read.checksum() == snapshot.checksum(), || {
        "the snapshot read back has another checksum".to_owned()
    })?;
    check(snapshot.divergence(&read).is_none(), || {
        format!(
            "the snapshot read back diverges: {:?}",
            snapshot.divergence(&read)
        )
    })?;
    check(read.entity_count() == snapshot.entity_count(), || {
        format!(
            "{} entities read back, {} saved",
            read.entity_count(),
            snapshot.entity_count()
        )
    })?;
    real.world
        .load_from(&bytes[..])
        .map_err(|e| fail("load_from", &e))?;
    // A save keeps no node's cursor: every node starts over.
    model.cursors.clear();
    real.adopt_loaded_scripts(model)?;
    forget_script_snapshot(real, model);
    compare_all(real, model)?;
    sparse::look(real, model)
}

/// A load puts the script store back exactly, as a restore into the
/// world it was taken from does (the saved ids and the ids to hand out
/// next), and the store counts as a new one: a `ScriptSnapshot` taken
/// before would restore as another store's (new ids), so it is forgotten
/// on both sides.
fn forget_script_snapshot(real: &mut Real, model: &mut Model) {
    real.save = None;
    model.save = None;
}
