//! A property test: random spawn, despawn, insert, remove and freeze
//! against a plain model (entity id to component values), checking every
//! live and stale handle after each step, and that no id is handed out
//! twice, also when slots run out of generations and retire. Each run keeps
//! a random subset of the three components in sparse sets
//! ([`StorageType::SparseSet`]), and checks what queries of every term
//! kind see against the model too.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::num::NonZeroU32;

use proptest::prelude::*;

use super::*;

/// Components of the model test.
#[derive(Clone, PartialEq, Debug)]
struct C0(u32);
#[derive(Clone, PartialEq, Debug)]
struct C1(String);
#[derive(Clone, Copy, PartialEq, Debug)]
struct C2;

#[derive(Clone, Debug)]
enum Op {
    Spawn(u8, u32),
    Despawn(usize),
    Insert(usize, u8, u32),
    Remove(usize, u8),
    Freeze(usize),
    /// Moves every free slot on to `u32::MAX - n` (the store's test hook),
    /// so the next reuses reach the last generation and retire the slot.
    Age(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..8, any::<u32>()).prop_map(|(m, v)| Op::Spawn(m, v)),
        any::<usize>().prop_map(Op::Despawn),
        (any::<usize>(), 1u8..8, any::<u32>()).prop_map(|(e, m, v)| Op::Insert(e, m, v)),
        (any::<usize>(), 1u8..8).prop_map(|(e, m)| Op::Remove(e, m)),
        any::<usize>().prop_map(Op::Freeze),
        (0u8..3).prop_map(Op::Age),
    ]
}

/// The model: entity id to (frozen, component index to value).
type Model = HashMap<u64, (bool, BTreeMap<u8, u32>)>;

fn model_values(mask: u8, value: u32) -> BTreeMap<u8, u32> {
    (0..3)
        .filter(|bit| mask & (1 << bit) != 0)
        .map(|bit| (bit, value))
        .collect()
}

/// Inserts (or removes, returning whether all were there) the components
/// of `mask` through the generic API, one bundle type per mask.
fn insert_mask(entities: &mut Entities, e: Entity, mask: u8, v: u32) -> Result<(), EntityError> {
    match mask {
        0 => entities.insert(e, ()),
        1 => entities.insert(e, (C0(v),)),
        2 => entities.insert(e, (C1(v.to_string()),)),
        3 => entities.insert(e, (C1(v.to_string()), C0(v))),
        4 => entities.insert(e, (C2,)),
        5 => entities.insert(e, (C0(v), C2)),
        6 => entities.insert(e, (C2, C1(v.to_string()))),
        _ => entities.insert(e, (C0(v), C1(v.to_string()), C2)),
    }
}

fn remove_mask(entities: &mut Entities, e: Entity, mask: u8) -> Result<(), EntityError> {
    match mask {
        1 => entities.remove::<(C0,)>(e).map(drop),
        2 => entities.remove::<(C1,)>(e).map(drop),
        3 => entities.remove::<(C1, C0)>(e).map(drop),
        4 => entities.remove::<(C2,)>(e).map(drop),
        5 => entities.remove::<(C0, C2)>(e).map(drop),
        6 => entities.remove::<(C2, C1)>(e).map(drop),
        _ => entities.remove::<(C0, C1, C2)>(e).map(drop),
    }
}

fn check(entities: &mut Entities, handles: &[Entity], model: &Model) {
    assert_eq!(entities.len(), model.len());
    check_queries(entities, model);
    let entities = &*entities;
    for &e in handles {
        let Some((frozen, values)) = model.get(&e.id()) else {
            assert!(!entities.contains(e));
            assert_eq!(entities.get::<C0>(e), None);
            continue;
        };
        assert_eq!(entities.is_frozen(e), *frozen);
        assert_eq!(entities.get::<C0>(e).map(|c| c.0), values.get(&0).copied());
        assert_eq!(
            entities.get::<C1>(e).map(|c| c.0.clone()),
            values.get(&1).map(u32::to_string)
        );
        assert_eq!(entities.get::<C2>(e).is_some(), values.contains_key(&2));
    }
}

/// What queries of each term kind see, against the model: `&C0`,
/// `Option<&C1>`, `Has<C2>`, `With`/`Without`, `Or` and `AnyOf`, whichever
/// storage each component has.
fn check_queries(entities: &mut Entities, model: &Model) {
    use std::collections::BTreeSet;
    type Row = (u64, Option<u32>, Option<String>, bool);
    let expected: BTreeSet<Row> = model
        .iter()
        .map(|(&id, (_, values))| {
            let c1 = values.get(&1).map(u32::to_string);
            (id, values.get(&0).copied(), c1, values.contains_key(&2))
        })
        .collect();
    let seen: BTreeSet<Row> =
        Query::<(Entity, Option<&C0>, Option<&C1>, Has<C2>)>::exclusive(entities)
            .iter()
            .map(|(e, c0, c1, c2)| (e.id(), c0.map(|c| c.0), c1.map(|c| c.0.clone()), c2))
            .collect();
    assert_eq!(seen, expected);
    let having = |f: &dyn Fn(&Row) -> bool| expected.iter().filter(|r| f(r)).count();
    let with = Query::<&C0, With<C2>>::exclusive(entities).iter().count();
    assert_eq!(with, having(&|r| r.1.is_some() && r.3));
    let without = Query::<Entity, (Without<C1>, With<C0>)>::exclusive(entities).count();
    assert_eq!(without, having(&|r| r.1.is_some() && r.2.is_none()));
    let either = Query::<Entity, Or<(With<C1>, With<C2>)>>::exclusive(entities).count();
    assert_eq!(either, having(&|r| r.2.is_some() || r.3));
    let any = Query::<AnyOf<(&C0, &C2)>>::exclusive(entities)
        .iter()
        .count();
    assert_eq!(any, having(&|r| r.1.is_some() || r.3));
    let both = Query::<(&mut C0, &C1)>::exclusive(entities)
        .iter_mut()
        .count();
    assert_eq!(both, having(&|r| r.1.is_some() && r.2.is_some()));
}

/// Registers the components whose bit is set in `sparse` as sparse sets.
fn register_storage(entities: &mut Entities, sparse: u8) {
    let storage = |bit: u8| {
        if sparse & (1 << bit) != 0 {
            StorageType::SparseSet
        } else {
            StorageType::Table
        }
    };
    entities.register_component::<C0>(storage(0)).unwrap();
    entities.register_component::<C1>(storage(1)).unwrap();
    entities.register_component::<C2>(storage(2)).unwrap();
}

fn run_model(sparse: u8, ops: &[Op]) {
    let mut entities = Entities::new();
    register_storage(&mut entities, sparse);
    let mut model = Model::new();
    let mut handles = Vec::new();
    let mut ids = HashSet::new();
    for op in ops {
        match *op {
            Op::Spawn(mask, v) => {
                let e = entities.spawn(());
                assert!(ids.insert(e.id()), "{e} was handed out before");
                insert_mask(&mut entities, e, mask, v).unwrap();
                model.insert(e.id(), (false, model_values(mask, v)));
                handles.push(e);
            }
            Op::Age(n) => {
                entities.age_free_slots(NonZeroU32::new(u32::MAX - u32::from(n)).unwrap());
            }
            Op::Despawn(i) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                let result = entities.despawn(e);
                assert_eq!(result.is_ok(), model.remove(&e.id()).is_some());
            }
            Op::Insert(i, mask, v) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                let result = insert_mask(&mut entities, e, mask, v);
                match model.get_mut(&e.id()) {
                    None => assert_eq!(result, Err(EntityError::NoSuchEntity { entity: e })),
                    Some((true, _)) => assert_eq!(result, Err(EntityError::Frozen { entity: e })),
                    Some((false, values)) => {
                        result.unwrap();
                        values.extend(model_values(mask, v));
                    }
                }
            }
            Op::Remove(i, mask) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                let result = remove_mask(&mut entities, e, mask);
                match model.get_mut(&e.id()) {
                    None => assert_eq!(result, Err(EntityError::NoSuchEntity { entity: e })),
                    Some((true, _)) => assert_eq!(result, Err(EntityError::Frozen { entity: e })),
                    Some((false, values)) => {
                        let wanted = model_values(mask, 0);
                        if wanted.keys().all(|k| values.contains_key(k)) {
                            result.unwrap();
                            values.retain(|k, _| !wanted.contains_key(k));
                        } else {
                            assert!(
                                matches!(result, Err(EntityError::MissingComponent { .. })),
                                "{result:?}"
                            );
                        }
                    }
                }
            }
            Op::Freeze(i) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                let result = entities.freeze(e);
                match model.get_mut(&e.id()) {
                    None => assert!(result.is_err()),
                    Some((frozen, _)) => {
                        result.unwrap();
                        *frozen = true;
                    }
                }
            }
            _ => {}
        }
        check(&mut entities, &handles, &model);
    }
}

fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig {
            cases: 4,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    } else {
        ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn matches_the_model(
        sparse in 0u8..8,
        ops in prop::collection::vec(op(), 1..if cfg!(miri) { 24 } else { 120 }),
    ) {
        run_model(sparse, &ops);
    }
}
