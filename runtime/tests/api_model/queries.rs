//! Issue 36's query vocabulary in the API model: `get_many_mut` (with the
//! same entity twice, dead and component-less entities), and `Single` /
//! `Populated` systems with zero, one and several matches.
//!
//! `GetManyMut(a, b)` swaps two entities' `P` through
//! `World::query::<&mut P>().get_many_mut([a, b])`: the model predicts the
//! reason for a refusal (the first dead or `P`-less entity in order, then
//! the same entity twice) and, on success, the swap and both rows stamped
//! changed; a refusal writes and stamps nothing.
//!
//! `Vocabulary` reads the world through `Has<V>`, `AnyOf<(&P, &V)>` under
//! an `Or<(With<P>, With<V>)>` filter, and `iter_many` over picked
//! entities (dead, `P`-less and repeated ones among them): the model
//! predicts every item from the entities. `Combinations` visits every pair
//! of `P` rows through `iter_combinations_mut::<2>()`, adding one to both
//! (so each of `n` rows gains `n - 1` and is stamped changed when `n >= 2`),
//! and checks `iter_combinations::<2>()` saw `n (n - 1) / 2` distinct pairs.
//!
//! `Skipping` runs one iteration with two nodes registered last:
//! `Single<(Entity, &P), Without<V>>` and `Populated<Entity, (With<P>,
//! With<V>)>`, each logging what it saw. Which entities match is fixed
//! for the iteration (structure changes only at the boundary), so the
//! model predicts it from the entities before the run: the single one, or
//! a skipped body (not a failure) with none or two; the populated count,
//! or a skipped body with none.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{
    AnyOf, Entity, Has, NodeBuilder, Or, Populated, QueryEntityError, Single, With, Without,
};

use super::{Model, P, Real, V, check, run_and_compare};

/// One query-vocabulary operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum QueryOp {
    /// `get_many_mut([a, b])` on two picked entities (often the same).
    GetManyMut(u8, u8),
    /// An iteration with a `Single` and a `Populated` node.
    Skipping,
    /// `Has`, `AnyOf` and `Or` over the world, and `iter_many` over three
    /// picked entities.
    Vocabulary([u8; 3]),
    /// Every pair of `P` rows, read and then written.
    Combinations,
}

pub(super) fn op() -> impl Strategy<Value = QueryOp> {
    prop_oneof![
        // One in three picks the same entity twice.
        3 => (any::<u8>(), any::<u8>(), 0u8..3).prop_map(|(a, b, same)| {
            QueryOp::GetManyMut(a, if same == 0 { a } else { b })
        }),
        2 => Just(QueryOp::Skipping),
        2 => any::<[u8; 3]>().prop_map(QueryOp::Vocabulary),
        1 => Just(QueryOp::Combinations),
    ]
}

pub(super) fn apply(op: QueryOp, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    match op {
        QueryOp::GetManyMut(a, b) => get_many_mut(a, b, real, model),
        QueryOp::Skipping => skipping(real, model),
        QueryOp::Vocabulary(picks) => vocabulary(picks, real, model),
        QueryOp::Combinations => combinations(real, model),
    }
}

fn vocabulary(picks: [u8; 3], real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    type Item = (bool, Option<i64>, Option<i64>);
    let index = super::handle_index(real)?;
    let mut got: Vec<(usize, Item)> = Vec::new();
    for (entity, has_v, (p, v)) in real
        .world
        .query_filtered::<(Entity, Has<V>, AnyOf<(&P, &V)>), Or<(With<P>, With<V>)>>()
        .iter()
    {
        let at = *index
            .get(&entity)
            .ok_or_else(|| TestCaseError::fail(format!("{entity:?} is not in the model")))?;
        got.push((at, (has_v, p.map(|p| p.0), v.map(|v| v.0))));
    }
    got.sort_by_key(|&(at, _)| at);
    let expected: Vec<(usize, Item)> = (model.ents.iter().enumerate())
        .filter(|(_, e)| e.alive && (e.p.is_some() || e.v.is_some()))
        .map(|(at, e)| (at, (e.v.is_some(), e.p, e.v)))
        .collect();
    check(got == expected, || {
        format!("Has/AnyOf/Or: {got:?}, the model says {expected:?}")
    })?;

    let Some(picked) = picks
        .iter()
        .map(|&at| model.pick(at))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(());
    };
    let handles: Vec<Entity> = picked.iter().map(|&at| real.ents[at]).collect();
    let got: Vec<i64> = (real.world.query::<&P>().iter_many(handles.iter().copied()))
        .map(|p| p.0)
        .collect();
    let expected: Vec<i64> = (picked.iter())
        .filter_map(|&at| model.ents[at].alive.then_some(model.ents[at].p).flatten())
        .collect();
    check(got == expected, || {
        format!("iter_many({picked:?}): {got:?}, the model says {expected:?}")
    })
}

fn combinations(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let rows: Vec<usize> = (model.ents.iter().enumerate())
        .filter(|(_, e)| e.alive && e.p.is_some())
        .map(|(at, _)| at)
        .collect();
    let n = rows.len();
    let mut pairs: Vec<(Entity, Entity)> = Vec::new();
    (real.world.query::<(Entity, &P)>())
        .iter_combinations::<2>()
        .for_each(|[(a, _), (b, _)]| pairs.push((a.min(b), a.max(b))));
    let seen = pairs.len();
    pairs.sort();
    pairs.dedup();
    check(
        seen == n * n.saturating_sub(1) / 2 && pairs.len() == seen,
        || {
            format!(
                "iter_combinations::<2>() over {n} rows: {seen} pairs, {} distinct",
                pairs.len()
            )
        },
    )?;
    (real.world.query::<&mut P>())
        .iter_combinations_mut::<2>()
        .for_each(|[mut a, mut b]| {
            a.0 += 1;
            b.0 += 1;
        });
    if n >= 2 {
        let stamp = model.fresh();
        for at in rows {
            let e = &mut model.ents[at];
            e.p = e.p.map(|p| p + n as i64 - 1);
            e.p_changed = stamp;
        }
    }
    super::compare_all(real, model)
}

fn get_many_mut(a: u8, b: u8, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let (Some(i), Some(j)) = (model.pick(a), model.pick(b)) else {
        return Ok(());
    };
    let (first, second) = (real.ents[i], real.ents[j]);
    let refusal = |k: usize, entity: Entity| {
        let e = &model.ents[k];
        if !e.alive {
            Some(QueryEntityError::NoSuchEntity(entity))
        } else if e.p.is_none() {
            Some(QueryEntityError::MissingComponent {
                entity,
                component: std::any::type_name::<P>(),
            })
        } else {
            None
        }
    };
    let expected = refusal(i, first)
        .or_else(|| refusal(j, second))
        .or((i == j).then_some(QueryEntityError::AliasedMutability(second)));
    let got = real
        .world
        .query::<&mut P>()
        .get_many_mut([first, second])
        .map(|[mut x, mut y]| std::mem::swap(&mut *x, &mut *y))
        .err();
    check(got == expected, || {
        format!("get_many_mut([#{i}, #{j}]): {got:?}, the model says {expected:?}")
    })?;
    if expected.is_none() {
        let stamp = model.fresh();
        let (pi, pj) = (model.ents[i].p, model.ents[j].p);
        for (k, p) in [(i, pj), (j, pi)] {
            model.ents[k].p = p;
            model.ents[k].p_changed = stamp;
        }
    }
    Ok(())
}

/// What the two nodes saw: the single's entity (per run), the populated
/// count (per run).
#[derive(Debug, Default)]
struct SkipLog {
    single: Vec<Entity>,
    populated: Vec<usize>,
}

fn skipping(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let live = || {
        model
            .ents
            .iter()
            .enumerate()
            .filter(|(_, e)| e.alive && e.p.is_some())
    };
    let lone: Vec<usize> = live()
        .filter(|(_, e)| e.v.is_none())
        .map(|(i, _)| i)
        .collect();
    let paired = live().filter(|(_, e)| e.v.is_some()).count();
    let log = Arc::new(Mutex::new(SkipLog::default()));
    let (single_log, populated_log) = (Arc::clone(&log), Arc::clone(&log));
    let single = real
        .world
        .add_system(NodeBuilder::new("single").spike_exempt().system(
            move |lone: Single<'_, (Entity, &P), Without<V>>| {
                single_log.lock().unwrap().single.push(lone.0);
            },
        ));
    let populated = real
        .world
        .add_system(NodeBuilder::new("populated").spike_exempt().system(
            move |paired: Populated<'_, Entity, (With<P>, With<V>)>| {
                populated_log.lock().unwrap().populated.push(paired.count());
            },
        ));
    let result = real.world.run_iteration();
    for node in [single, populated] {
        real.world
            .remove_node(node)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    let ran = result.is_ok();
    run_and_compare(result, real, model)?;
    if !ran {
        return Ok(());
    }
    let log = log.lock().unwrap();
    let expected: Vec<Entity> = match lone[..] {
        [i] => vec![real.ents[i]],
        _ => vec![],
    };
    check(log.single == expected, || {
        format!(
            "Single over {} lone P: saw {:?}, the model says {expected:?}",
            lone.len(),
            log.single
        )
    })?;
    let expected: Vec<usize> = if paired == 0 { vec![] } else { vec![paired] };
    check(log.populated == expected, || {
        format!(
            "Populated: saw {:?}, the model says {expected:?}",
            log.populated
        )
    })
}
