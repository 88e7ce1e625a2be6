//! Issue 36's sparse-set storage in the API model: choosing a component's
//! storage is an operation, and a component kept in either storage is
//! added, removed and queried beside the model's `P`.
//!
//! `Register(sparse)` asks for `Tag`'s storage: the first choice is taken,
//! the same choice again is accepted, the other refused by name
//! (`StorageAlreadyChosen`), also once `Tag` was first inserted without a
//! choice (a table component from then on). `Toggle(e, t)` inserts `Tag(t)`
//! on an entity without one and removes it (returning the value) from one
//! with one; a dead entity has no view, a frozen one refuses. `Look`
//! compares `Query<(Entity, &P), With<Tag>>` and `Query<(Entity, &Tag)>`
//! with the model: whatever the storage, the tagged live entities; and
//! `Query<&Tag>`'s values (the sparse set's column read in order).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{ComponentError, Entity, EntityError, StorageType, With};

use super::{Model, P, Real, check};

/// The component whose storage the operations choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Tag(i8);

/// One sparse-storage operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum SparseOp {
    /// `World::register_component::<Tag>`, a sparse set or a table.
    Register(bool),
    /// Inserts or removes `Tag` on a picked entity.
    Toggle(u8, i8),
    /// Queries `Tag` and compares.
    Look,
}

/// What the model knows of `Tag`.
#[derive(Debug, Default)]
pub(super) struct SparseModel {
    /// Its storage, once chosen (registered, or first inserted: a table).
    storage: Option<StorageType>,
    /// The value on each model entity that has one (dead ones ignored).
    pub(super) tags: BTreeMap<usize, i8>,
}

pub(super) fn op() -> impl Strategy<Value = SparseOp> {
    prop_oneof![
        1 => any::<bool>().prop_map(SparseOp::Register),
        4 => (any::<u8>(), any::<i8>()).prop_map(|(e, t)| SparseOp::Toggle(e, t)),
        2 => Just(SparseOp::Look),
    ]
}

pub(super) fn apply(op: SparseOp, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    match op {
        SparseOp::Register(sparse) => register(sparse, real, model),
        SparseOp::Toggle(e, t) => toggle(e, t, real, model),
        SparseOp::Look => look(real, model),
    }
}

fn register(sparse: bool, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let requested = if sparse {
        StorageType::SparseSet
    } else {
        StorageType::Table
    };
    let got = real
        .world
        .register_component::<Tag>(requested)
        .map(drop)
        .err();
    let state = &mut model.sparse.storage;
    let expected = match *state {
        Some(storage) if storage != requested => Some(ComponentError::StorageAlreadyChosen {
            component: std::any::type_name::<Tag>(),
            storage,
            requested,
        }),
        _ => None,
    };
    state.get_or_insert(requested);
    check(got == expected, || {
        format!("register_component::<Tag>({requested:?}): {got:?}, the model says {expected:?}")
    })
}

fn toggle(e: u8, t: i8, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let Some(i) = model.pick(e) else {
        return Ok(());
    };
    let entity = real.ents[i];
    let ent = &model.ents[i];
    let Some(mut view) = real.world.entity_mut(entity) else {
        return check(!ent.alive, || format!("#{i} is alive but has no view"));
    };
    check(ent.alive, || format!("#{i} is dead but has a view"))?;
    let tags = &mut model.sparse.tags;
    let (got, expected) = match tags.get(&i).copied() {
        Some(had) => {
            let got = view.remove::<(Tag,)>().map(|(Tag(v),)| v);
            let expected = if ent.frozen {
                Err(EntityError::Frozen { entity })
            } else {
                Ok(had)
            };
            if expected.is_ok() {
                tags.remove(&i);
            }
            (got.map(Some), expected.map(Some))
        }
        None => {
            let got = view.insert((Tag(t),)).map(|_| None);
            let expected = if ent.frozen {
                Err(EntityError::Frozen { entity })
            } else {
                Ok(None)
            };
            if expected.is_ok() {
                tags.insert(i, t);
                model.sparse.storage.get_or_insert(StorageType::Table);
            }
            (got, expected)
        }
    };
    check(got == expected, || {
        format!("toggling Tag on #{i}: {got:?}, the model says {expected:?}")
    })
}

pub(super) fn look(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let index: BTreeMap<Entity, usize> =
        real.ents.iter().enumerate().map(|(i, &e)| (e, i)).collect();
    let tagged = |i: &usize| model.ents[*i].alive;
    let expected: BTreeSet<(usize, i8)> = model
        .sparse
        .tags
        .iter()
        .filter(|(i, _)| tagged(i))
        .map(|(&i, &t)| (i, t))
        .collect();
    let got: BTreeSet<(usize, i8)> = real
        .world
        .query::<(Entity, &Tag)>()
        .iter()
        .filter_map(|(e, tag)| Some((*index.get(&e)?, tag.0)))
        .collect();
    check(got == expected, || {
        format!("Query<(Entity, &Tag)>: {got:?}, the model says {expected:?}")
    })?;
    // `&Tag` alone: a sparse `Tag` reads its set's column in order (the
    // dense set walk), without an entity to name, so compare the values.
    let mut values: Vec<i8> = expected.iter().map(|&(_, t)| t).collect();
    values.sort_unstable();
    let query = real.world.query::<&Tag>();
    let mut got: Vec<i8> = query.iter().map(|tag| tag.0).collect();
    got.sort_unstable();
    check(got == values && query.count() == values.len(), || {
        format!("Query<&Tag>: {got:?}, the model says {values:?}")
    })?;
    let expected: BTreeSet<usize> = expected
        .iter()
        .map(|&(i, _)| i)
        .filter(|&i| model.ents[i].p.is_some())
        .collect();
    let got: BTreeSet<usize> = real
        .world
        .query_filtered::<(Entity, &P), With<Tag>>()
        .iter()
        .filter_map(|(e, _)| index.get(&e).copied())
        .collect();
    check(got == expected, || {
        format!("Query<(Entity, &P), With<Tag>>: {got:?}, the model says {expected:?}")
    })
}
