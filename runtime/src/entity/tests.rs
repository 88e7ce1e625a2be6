//! Tests of the whole store: stale handles, churn, drops, panics, freezing,
//! archetype moves (the property test against a model is in `model.rs`).

use super::*;
use crate::sync::{Arc, AtomicUsize, Ordering};

#[derive(Clone, Copy, PartialEq, Debug)]
struct Pos(f32, f32);
#[derive(Clone, Copy, PartialEq, Debug)]
struct Vel(f32, f32);
#[derive(Clone, PartialEq, Debug)]
struct Name(String);
#[derive(Clone, Copy, PartialEq, Debug)]
struct Marker;

/// Counts its drops; panics in `drop` when `bomb` is set.
struct Counted {
    drops: Arc<AtomicUsize>,
    bomb: bool,
}

impl Counted {
    fn new(drops: &Arc<AtomicUsize>) -> Self {
        Self {
            drops: drops.clone(),
            bomb: false,
        }
    }
    fn bomb(drops: &Arc<AtomicUsize>) -> Self {
        Self {
            drops: drops.clone(),
            bomb: true,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
        if self.bomb {
            panic!("Counted::drop panics");
        }
    }
}

fn n(full: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { full }
}

#[test]
fn smoke() {
    let mut entities = Entities::new();
    let a = entities.spawn((Pos(1.0, 2.0), Vel(0.5, 0.0)));
    let b = entities.spawn((Pos(3.0, 4.0),));
    assert_eq!(entities.len(), 2);
    assert_eq!(entities.get::<Pos>(a), Some(&Pos(1.0, 2.0)));
    assert_eq!(entities.get::<Vel>(b), None);
    assert_eq!(entities.get::<Name>(a), None, "unregistered type");
    entities.get_mut::<Pos>(b).unwrap().0 = 9.0;
    assert_eq!(entities.get::<Pos>(b), Some(&Pos(9.0, 4.0)));
    assert_ne!(entities.archetype_of(a), entities.archetype_of(b));
    assert!(entities.contains(a));
    let summary: Vec<_> = entities
        .archetypes()
        .map(|a| (a.id(), a.components().len(), a.len()))
        .collect();
    assert_eq!(
        summary,
        [
            (ArchetypeId(0), 0, 0),
            (ArchetypeId(1), 2, 1),
            (ArchetypeId(2), 1, 1)
        ]
    );
    let empty = entities.spawn(());
    assert_eq!(entities.archetype_of(empty), Some(ArchetypeId::EMPTY));
    assert_eq!(
        a.to_string(),
        format!("Entity({}v{})", a.slot(), a.generation())
    );
}

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Entities>();
    check::<Entity>();
}

#[test]
fn stale_entity() {
    let mut entities = Entities::new();
    let old = entities.spawn((Pos(1.0, 1.0), Name("old".into())));
    entities.despawn(old).unwrap();
    let new = entities.spawn((Pos(2.0, 2.0), Name("new".into())));
    assert_eq!(old.slot(), new.slot(), "the slot is reused");
    assert_eq!((old.generation(), new.generation()), (1, 2));
    assert_eq!(entities.get::<Pos>(old), None);
    assert_eq!(entities.get_mut::<Name>(old), None);
    assert!(!entities.contains(old));
    assert_eq!(entities.archetype_of(old), None);
    assert_eq!(
        entities.despawn(old),
        Err(EntityError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        entities.insert(old, (Vel(0.0, 0.0),)),
        Err(EntityError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        entities.remove::<(Pos,)>(old),
        Err(EntityError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        entities.freeze(old),
        Err(EntityError::NoSuchEntity { entity: old })
    );
    assert_eq!(entities.get::<Name>(new), Some(&Name("new".into())));
    let message = EntityError::NoSuchEntity { entity: old }.to_string();
    assert!(message.contains(&old.to_string()), "{message}");
}

#[test]
fn churn_reuses_rows() {
    let mut entities = Entities::new();
    let keep: Vec<_> = (0..10)
        .map(|i| entities.spawn((Pos(i as f32, 0.0), Name(i.to_string()))))
        .collect();
    let (slots_before, _) = entities.footprint();
    let mut last: Option<Entity> = None;
    for i in 0..n(10_000, 200) {
        let e = entities.spawn((Pos(0.0, i as f32), Name("churn".into())));
        if let Some(previous) = last {
            assert_eq!(e.slot(), previous.slot(), "the freed slot is reused");
            assert_eq!(
                e.generation(),
                previous.generation() + 1,
                "a reused slot moves on to its next generation"
            );
            assert_ne!(e.id(), previous.id(), "ids are never reused");
        }
        if i % 3 == 0 {
            entities.insert(e, (Vel(1.0, 1.0),)).unwrap();
        }
        entities.despawn(e).unwrap();
        if let Some(previous) = last {
            assert!(entities.get::<Pos>(previous).is_none());
        }
        last = Some(e);
    }
    let (slots, capacity) = entities.footprint();
    assert!(
        slots <= (slots_before + 1).next_power_of_two(),
        "the slots stay as many as the live entities need: {slots_before} -> {slots}"
    );
    assert!(capacity <= 32, "columns stay small: {capacity}");
    for (i, e) in keep.iter().enumerate() {
        assert_eq!(entities.get::<Name>(*e), Some(&Name(i.to_string())));
        assert_eq!(entities.get::<Pos>(*e), Some(&Pos(i as f32, 0.0)));
    }
    assert_eq!(entities.len(), 10);
}

#[test]
fn despawn_moves_the_last_row() {
    let mut entities = Entities::new();
    let all: Vec<_> = (0..5)
        .map(|i| entities.spawn((Pos(i as f32, 0.0),)))
        .collect();
    entities.despawn(all[1]).unwrap();
    for (i, e) in all.iter().enumerate().filter(|(i, _)| *i != 1) {
        assert_eq!(entities.get::<Pos>(*e), Some(&Pos(i as f32, 0.0)));
    }
    let table = entities
        .archetype(entities.archetype_of(all[0]).unwrap())
        .unwrap();
    assert_eq!(table.entities(), &[all[0], all[4], all[2], all[3]]);
}

#[test]
fn drops() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut entities = Entities::new();
    let a = entities.spawn((Counted::new(&drops), Pos(0.0, 0.0)));
    let b = entities.spawn((Counted::new(&drops),));
    let c = entities.spawn((Counted::new(&drops), Name("c".into())));
    entities.despawn(a).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    entities.insert(b, (Counted::new(&drops),)).unwrap();
    assert_eq!(
        drops.load(Ordering::Relaxed),
        2,
        "the overwritten value is dropped"
    );
    entities.insert(b, (Pos(1.0, 1.0),)).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 2, "a move drops nothing");
    let (taken,) = entities.remove::<(Counted,)>(c).unwrap();
    assert_eq!(
        drops.load(Ordering::Relaxed),
        2,
        "removed values are returned, not dropped"
    );
    drop(taken);
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    drop(entities);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        4,
        "b's component dropped with the store"
    );
}

#[test]
fn panicking_drop() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut entities = Entities::new();
    let bystander = entities.spawn((Counted::new(&drops), Name("bystander".into())));
    let victim = entities.spawn((Counted::bomb(&drops), Name("victim".into())));
    let last = entities.spawn((Counted::new(&drops), Name("last".into())));
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entities.despawn(victim)));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert!(!entities.contains(victim));
    assert_eq!(
        entities.get::<Name>(last),
        Some(&Name("last".into())),
        "the moved row is fixed up"
    );
    assert_eq!(
        entities.get::<Name>(bystander),
        Some(&Name("bystander".into()))
    );
    assert_eq!(entities.len(), 2);

    // Overwrite a bomb: the insert completes, then the old value panics.
    let target = entities.spawn((Counted::bomb(&drops),));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        entities.insert(target, (Counted::new(&drops), Pos(5.0, 5.0)))
    }));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    assert_eq!(entities.get::<Pos>(target), Some(&Pos(5.0, 5.0)));
    assert!(!entities.get::<Counted>(target).unwrap().bomb);

    // The store still works, and every value is dropped exactly once.
    let fresh = entities.spawn((Counted::new(&drops), Name("fresh".into())));
    entities.despawn(bystander).unwrap();
    assert_eq!(entities.get::<Name>(fresh), Some(&Name("fresh".into())));
    drop(entities);
    assert_eq!(drops.load(Ordering::Relaxed), 6);
}

#[test]
fn zst() {
    let mut entities = Entities::new();
    let all: Vec<_> = (0..n(100, 10))
        .map(|i| entities.spawn((Marker, Pos(i as f32, 0.0))))
        .collect();
    entities.despawn(all[0]).unwrap();
    assert_eq!(entities.get::<Marker>(all[1]), Some(&Marker));
    let (marker,) = entities.remove::<(Marker,)>(all[2]).unwrap();
    assert_eq!(marker, Marker);
    assert_eq!(entities.get::<Marker>(all[2]), None);
    entities.insert(all[2], (Marker,)).unwrap();
    assert_eq!(entities.get::<Pos>(all[2]), Some(&Pos(2.0, 0.0)));
}

#[test]
fn freeze() {
    let mut entities = Entities::new();
    let e = entities.spawn((Pos(0.0, 0.0),));
    entities.freeze(e).unwrap();
    assert!(entities.is_frozen(e));
    let archetype = entities.archetype_of(e);
    assert_eq!(
        entities.insert(e, (Vel(1.0, 0.0),)),
        Err(EntityError::Frozen { entity: e })
    );
    assert_eq!(
        entities.insert(e, (Pos(1.0, 0.0),)),
        Err(EntityError::Frozen { entity: e })
    );
    assert_eq!(
        entities.remove::<(Pos,)>(e),
        Err(EntityError::Frozen { entity: e })
    );
    assert_eq!(entities.archetype_of(e), archetype);
    assert_eq!(
        entities.get::<Pos>(e),
        Some(&Pos(0.0, 0.0)),
        "nothing changed"
    );
    entities.get_mut::<Pos>(e).unwrap().0 = 3.0;
    assert_eq!(
        entities.get::<Pos>(e),
        Some(&Pos(3.0, 0.0)),
        "values stay writable"
    );
    entities.despawn(e).unwrap();
    assert!(!entities.is_frozen(e));
    let other = entities.spawn((Pos(0.0, 0.0),));
    assert!(!entities.is_frozen(other), "the reused slot is not frozen");
}

#[test]
fn insert_overwrites() {
    let mut entities = Entities::new();
    let e = entities.spawn((Pos(0.0, 0.0), Name("a".into())));
    let spawned = entities.tick();
    let at = |tick: u32| ComponentTicks {
        added: spawned,
        changed: tick,
    };
    let archetype = entities.archetype_of(e);
    entities.insert(e, (Name("b".into()),)).unwrap();
    let renamed = entities.tick();
    assert!(
        Entities::is_newer(renamed, spawned),
        "every write takes a fresh tick"
    );
    assert_eq!(entities.archetype_of(e), archetype, "no move");
    assert_eq!(entities.get::<Name>(e), Some(&Name("b".into())));
    assert_eq!(
        entities.ticks::<Name>(e),
        Some(at(renamed)),
        "overwritten: changed"
    );
    assert_eq!(entities.ticks::<Pos>(e), Some(at(spawned)), "untouched");
    entities.insert(e, (Vel(1.0, 1.0), Pos(2.0, 2.0))).unwrap();
    let moved = entities.tick();
    assert_eq!(entities.get::<Pos>(e), Some(&Pos(2.0, 2.0)));
    assert_eq!(entities.ticks::<Pos>(e), Some(at(moved)));
    assert_eq!(
        entities.ticks::<Vel>(e),
        Some(ComponentTicks {
            added: moved,
            changed: moved
        })
    );
    assert_eq!(
        entities.ticks::<Name>(e),
        Some(at(renamed)),
        "ticks move with the row"
    );
    entities.get_mut::<Vel>(e).unwrap();
    assert_eq!(
        entities.ticks::<Vel>(e),
        Some(ComponentTicks {
            added: moved,
            changed: entities.tick()
        }),
        "get_mut marks the component changed"
    );
    assert!(Entities::is_newer(entities.tick(), moved));
}

#[test]
fn remove_returns_values() {
    let mut entities = Entities::new();
    let e = entities.spawn((Pos(1.0, 0.0), Vel(2.0, 0.0), Name("n".into())));
    let other = entities.spawn((Pos(7.0, 0.0), Vel(8.0, 0.0), Name("o".into())));
    let (name, pos) = entities.remove::<(Name, Pos)>(e).unwrap();
    assert_eq!((name, pos), (Name("n".into()), Pos(1.0, 0.0)));
    assert_eq!(entities.get::<Vel>(e), Some(&Vel(2.0, 0.0)));
    assert_eq!(entities.get::<Pos>(e), None);
    assert_eq!(entities.get::<Name>(other), Some(&Name("o".into())));
    assert_eq!(
        entities.remove::<(Vel, Pos)>(e),
        Err(EntityError::MissingComponent {
            entity: e,
            component: std::any::type_name::<Pos>()
        })
    );
    assert_eq!(
        entities.get::<Vel>(e),
        Some(&Vel(2.0, 0.0)),
        "a refused remove changes nothing"
    );
    assert_eq!(entities.remove::<()>(e), Ok(()));
    assert_eq!(
        entities.remove::<(Vel, Vel)>(e),
        Err(EntityError::DuplicateComponent {
            component: std::any::type_name::<Vel>()
        })
    );
}

#[test]
fn duplicate_component() {
    let mut entities = Entities::new();
    let error = entities
        .try_spawn((Pos(0.0, 0.0), Pos(1.0, 1.0)))
        .unwrap_err();
    assert_eq!(
        error,
        EntityError::DuplicateComponent {
            component: std::any::type_name::<Pos>()
        }
    );
    assert!(error.to_string().contains("Pos"));
    let e = entities.spawn((Marker,));
    assert!(
        entities
            .insert(e, (Name("a".into()), Name("b".into())))
            .is_err()
    );
    let twin = entities.spawn((Marker,));
    assert_eq!(
        entities.archetype_of(e),
        entities.archetype_of(twin),
        "the refused insert moved nothing"
    );
    let panic = std::panic::catch_unwind(|| Entities::new().spawn((Vel(0.0, 0.0), Vel(0.0, 0.0))))
        .unwrap_err();
    assert!(panic.downcast_ref::<String>().unwrap().contains("Vel"));
}

#[test]
fn archetype_transitions_cached() {
    let mut entities = Entities::new();
    let a = entities.spawn((Pos(0.0, 0.0),));
    let b = entities.spawn((Pos(1.0, 0.0),));
    let from = entities.archetype_of(a).unwrap();
    assert!(!entities.has_insert_edge::<(Vel,)>(from));
    entities.insert(a, (Vel(0.0, 0.0),)).unwrap();
    assert!(entities.has_insert_edge::<(Vel,)>(from));
    let count = entities.archetypes().len();
    entities.insert(b, (Vel(0.0, 0.0),)).unwrap();
    assert_eq!(entities.archetypes().len(), count);
    assert_eq!(entities.archetype_of(a), entities.archetype_of(b));
    entities.remove::<(Vel,)>(a).unwrap();
    assert_eq!(entities.archetype_of(a), Some(from), "found by its set");
}

#[test]
fn spawn_batch() {
    let mut entities = Entities::new();
    let count = n(1000, 20);
    let all = entities.spawn_batch((0..count).map(|i| (Pos(i as f32, 0.0), Name(i.to_string()))));
    assert_eq!(all.len(), count);
    assert_eq!(entities.len(), count);
    for (i, e) in all.iter().enumerate() {
        assert_eq!(entities.get::<Name>(*e), Some(&Name(i.to_string())));
    }
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, e)| (e.slot() as usize, e.generation()) == (i, 1)),
        "a store that never despawned hands out slots in spawn order"
    );
}

/// `check_ticks` runs once per interval and moves every stored tick older
/// than `MAX_TICK_AGE` up to that age, so comparisons stay right across the
/// `u32` wrap.
#[test]
fn old_ticks_are_clamped() {
    let mut store = Entities::new();
    let old = store.spawn((Pos(0.0, 0.0),));
    let born = store.ticks::<Pos>(old).unwrap().changed;
    assert_eq!(store.check_ticks(), None, "no pass before an interval");
    store.advance_ticks(MAX_TICK_AGE + 2 * TICK_CHECK_INTERVAL);
    let fresh = store.spawn((Pos(1.0, 1.0),));
    let fresh_ticks = store.ticks::<Pos>(fresh).unwrap();
    let now = store.check_ticks().expect("an interval passed");
    assert!(now.wrapping_sub(fresh_ticks.changed) < MAX_TICK_AGE);
    let clamped = store.ticks::<Pos>(old).unwrap();
    assert_eq!(clamped.changed, now.wrapping_sub(MAX_TICK_AGE));
    assert_eq!(clamped.added, now.wrapping_sub(MAX_TICK_AGE));
    assert_ne!(clamped.changed, born);
    assert_eq!(
        store.ticks::<Pos>(fresh).unwrap(),
        fresh_ticks,
        "young ticks kept"
    );
    assert_eq!(store.check_ticks(), None, "one pass per interval");
    // Past the wrap, the clamped row still reads as older than a recent cursor.
    let later = store.advance_ticks(u32::MAX / 2 + 7);
    store.check_ticks().expect("an interval passed");
    let cursor = later.wrapping_sub(1);
    assert!(!Entities::is_newer(
        store.ticks::<Pos>(old).unwrap().changed,
        cursor
    ));
}

/// A slot reused until its generations run out is retired: its last
/// entity's despawn frees nothing, the next spawn takes a fresh slot, and
/// no handle the slot ever had reads anything (the hook jumps the slot to
/// near `u32::MAX` instead of four billion spawns).
#[test]
fn a_slot_out_of_generations_is_retired() {
    let mut entities = Entities::new();
    let keep = entities.spawn((Pos(7.0, 7.0),));
    let first = entities.spawn((Pos(0.0, 0.0), Name("first".into())));
    entities.despawn(first).unwrap();
    entities.age_free_slots(std::num::NonZeroU32::new(u32::MAX - 1).unwrap());
    let mut stale = vec![first];
    for generation in [u32::MAX - 1, u32::MAX] {
        let e = entities.spawn((Pos(1.0, 1.0), Name(generation.to_string())));
        assert_eq!((e.slot(), e.generation()), (first.slot(), generation));
        for &old in &stale {
            assert_eq!(entities.get::<Name>(old), None, "{old} is stale");
        }
        entities.despawn(e).unwrap();
        stale.push(e);
    }
    assert_eq!(entities.retired_slots(), 1);
    let fresh = entities.spawn((Pos(2.0, 2.0), Name("fresh".into())));
    assert_eq!(
        (fresh.slot(), fresh.generation()),
        (2, 1),
        "the retired slot is never handed out again"
    );
    for &old in &stale {
        assert!(!entities.contains(old));
        assert_eq!(entities.get::<Pos>(old), None);
        assert_eq!(
            entities.despawn(old),
            Err(EntityError::NoSuchEntity { entity: old })
        );
    }
    let ids: std::collections::HashSet<u64> = stale
        .iter()
        .chain([&keep, &fresh])
        .map(|e| e.id())
        .collect();
    assert_eq!(ids.len(), stale.len() + 2, "every id is distinct");
    assert_eq!(entities.get::<Pos>(keep), Some(&Pos(7.0, 7.0)));
    assert_eq!(entities.get::<Name>(fresh), Some(&Name("fresh".into())));
    assert_eq!(entities.len(), 2);
}

/// An archetype's columns share one allocation (`ColumnBlock`) and grow
/// together: values of every size and alignment (a zero-sized one among
/// them) keep their bytes and alignment through every growth, through
/// moves to and from other archetypes and despawns, and each is dropped
/// once with the store.
#[test]
fn an_archetypes_columns_grow_together() {
    #[derive(Clone, Copy, PartialEq, Debug)]
    #[repr(align(64))]
    struct Wide(u32);
    let drops = Arc::new(AtomicUsize::new(0));
    let mut entities = Entities::new();
    let count = n(3000, 40);
    let spawn = |entities: &mut Entities, i: usize| {
        entities.spawn((
            Wide(i as u32),
            Marker,
            Name(i.to_string()),
            Counted::new(&drops),
            i as u16,
        ))
    };
    // One by one: the block grows many times, copying what is there.
    let mut all: Vec<_> = (0..count).map(|i| spawn(&mut entities, i)).collect();
    // Then a batch into the same archetype, past its capacity.
    all.extend(entities.spawn_batch((count..2 * count).map(|i| {
        (
            Wide(i as u32),
            Marker,
            Name(i.to_string()),
            Counted::new(&drops),
            i as u16,
        )
    })));
    let check = |entities: &Entities, i: usize, e: Entity| {
        let wide = entities.get::<Wide>(e).expect("alive");
        assert_eq!(*wide, Wide(i as u32));
        assert_eq!((&raw const *wide).addr() % 64, 0, "aligned in its part");
        assert_eq!(entities.get::<Name>(e), Some(&Name(i.to_string())));
        assert_eq!(entities.get::<u16>(e), Some(&(i as u16)));
        assert_eq!(entities.get::<Marker>(e), Some(&Marker));
    };
    for (i, &e) in all.iter().enumerate() {
        check(&entities, i, e);
    }
    // Every third moves to another archetype (growing its block) and every
    // sixth back again; every fifth is despawned.
    for (i, &e) in all.iter().enumerate() {
        if i % 3 == 0 {
            entities.insert(e, (Pos(i as f32, 0.0),)).unwrap();
        }
    }
    for (i, &e) in all.iter().enumerate() {
        if i % 6 == 0 {
            let (pos,) = entities.remove::<(Pos,)>(e).unwrap();
            assert_eq!(pos, Pos(i as f32, 0.0));
        }
        if i % 5 == 0 {
            entities.despawn(e).unwrap();
        }
    }
    let despawned = all.len().div_ceil(5);
    assert_eq!(drops.load(Ordering::Relaxed), despawned);
    for (i, &e) in all.iter().enumerate() {
        if i % 5 != 0 {
            check(&entities, i, e);
            let moved = i % 3 == 0 && i % 6 != 0;
            assert_eq!(entities.get::<Pos>(e).is_some(), moved);
        }
    }
    drop(entities);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        all.len(),
        "each dropped once"
    );
}
