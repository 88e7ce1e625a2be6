//! Issue 36's entity vocabulary in the API model: `insert_if_new`,
//! removing a bundle the entity only partly has, derived bundles naming
//! one type twice (nested), a panicking `Drop` in a bundle field, required
//! components (cycles refused by name), and a disabled entity reached
//! through `Target<T>` and `ComponentRef`.
//!
//! The model knows what the documentation promises. `InsertIfNew` gives a
//! live, unfrozen entity its `V` only if it has none; `RemovePartly`
//! removes `(V, Absent)`, dropping the `V` if there and naming every
//! component that was not (`Absent` always); `InsertTwice` is refused as
//! `DuplicateComponent` naming `V` and changes nothing. `Require(a, b)`
//! registers marker `a` requiring marker `b`: the model keeps the graph and
//! predicts `Ok`, `AlreadyRequired` or the cycle's path, then spawns one
//! marker and checks the entity got exactly the markers reachable from it.
//! `DisabledRef` and `Grenade` work on entities of their own, despawned
//! before the op ends, so the main model's entities are untouched.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{Allow, Bundle, ComponentRef, Disabled, Entity, EntityError, RequiredError, Target};

use super::{INJECTED, Model, Real, V, check};

/// A component no model entity ever has.
#[derive(Debug)]
struct Absent;

/// Names `V` twice: once itself, once in a nested bundle.
#[derive(Bundle)]
struct Twice {
    v: V,
    #[bundle]
    again: (V,),
}

/// The markers requirements link.
#[derive(Debug, Default)]
struct R0;
#[derive(Debug, Default)]
struct R1;
#[derive(Debug, Default)]
struct R2;
#[derive(Debug, Default)]
struct R3;

/// What a disabled reference target holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark(i64);

/// A component whose `Drop` panics when armed.
struct Grenade(bool);

impl Drop for Grenade {
    fn drop(&mut self) {
        if self.0 {
            std::panic::panic_any(INJECTED);
        }
    }
}

/// One entity-vocabulary operation.
#[derive(Debug, Clone, Copy)]
pub(super) enum EntityOp {
    /// `insert_if_new((V(v),))` on a picked entity.
    InsertIfNew(u8, i64),
    /// `remove_present::<(V, Absent)>()` on a picked entity.
    RemovePartly(u8),
    /// Insert `Twice` (names `V` twice, nested) on a picked entity.
    InsertTwice(u8),
    /// Marker `a` requires marker `b` (0..4 each), then a spawn of `a`.
    Require(u8, u8),
    /// A disabled frozen target and two followers, one disabled.
    DisabledRef(i64),
    /// A bundle whose field's `Drop` panics when overwritten.
    Grenade,
}

pub(super) fn op() -> impl Strategy<Value = EntityOp> {
    prop_oneof![
        2 => (any::<u8>(), -50i64..50).prop_map(|(at, v)| EntityOp::InsertIfNew(at, v)),
        2 => any::<u8>().prop_map(EntityOp::RemovePartly),
        1 => any::<u8>().prop_map(EntityOp::InsertTwice),
        2 => (0u8..4, 0u8..4).prop_map(|(a, b)| EntityOp::Require(a, b)),
        1 => (-50i64..50).prop_map(EntityOp::DisabledRef),
        1 => Just(EntityOp::Grenade),
    ]
}

/// The requirement graph registered so far: `edges[a]` lists what marker
/// `a` requires, in registration order.
#[derive(Debug, Default)]
pub(super) struct EntityModel {
    edges: [Vec<u8>; 4],
}

impl EntityModel {
    /// A path of requirements from `from` to `to`, both included.
    fn path(&self, from: u8, to: u8) -> Option<Vec<u8>> {
        if from == to {
            return Some(vec![from]);
        }
        self.edges[from as usize].iter().find_map(|&next| {
            let mut rest = self.path(next, to)?;
            rest.insert(0, from);
            Some(rest)
        })
    }

    /// Every marker reachable from `from`, itself included.
    fn closure(&self, from: u8) -> [bool; 4] {
        let mut seen = [false; 4];
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            if !std::mem::replace(&mut seen[at as usize], true) {
                stack.extend(&self.edges[at as usize]);
            }
        }
        seen
    }
}

fn marker_name(marker: u8) -> &'static str {
    [
        std::any::type_name::<R0>(),
        std::any::type_name::<R1>(),
        std::any::type_name::<R2>(),
        std::any::type_name::<R3>(),
    ][marker as usize]
}

pub(super) fn apply(op: EntityOp, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    match op {
        EntityOp::InsertIfNew(at, v) => insert_if_new(at, v, real, model),
        EntityOp::RemovePartly(at) => remove_partly(at, real, model),
        EntityOp::InsertTwice(at) => insert_twice(at, real, model),
        EntityOp::Require(a, b) => require(a, b, real, model),
        EntityOp::DisabledRef(mark) => disabled_ref(mark, real),
        EntityOp::Grenade => grenade(real),
    }
}

/// `Err("frozen")` for a frozen entity, `None` for a dead one, else `Ok`.
fn movable(model: &Model, i: usize) -> Option<Result<(), &'static str>> {
    let e = &model.ents[i];
    match (e.alive, e.frozen) {
        (false, _) => None,
        (true, true) => Some(Err("frozen")),
        (true, false) => Some(Ok(())),
    }
}

fn reason(error: EntityError) -> &'static str {
    match error {
        EntityError::Frozen { .. } => "frozen",
        EntityError::DuplicateComponent { component }
            if component == std::any::type_name::<V>() =>
        {
            "duplicate V"
        }
        _ => "other",
    }
}

fn insert_if_new(at: u8, v: i64, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let Some(i) = model.pick(at) else {
        return Ok(());
    };
    let got = real
        .world
        .entity_mut(real.ents[i])
        .map(|mut e| e.insert_if_new((V(v),)).map(drop).map_err(reason));
    let expected = movable(model, i);
    check(got == expected, || {
        format!("insert_if_new V({v}) on #{i}: {got:?}, model {expected:?}")
    })?;
    if expected == Some(Ok(())) {
        let e = &mut model.ents[i];
        e.v = e.v.or(Some(v));
    }
    Ok(())
}

fn remove_partly(at: u8, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let Some(i) = model.pick(at) else {
        return Ok(());
    };
    let got = real
        .world
        .entity_mut(real.ents[i])
        .map(|mut e| e.remove_present::<(V, Absent)>().map_err(reason));
    let expected = movable(model, i).map(|movable| {
        movable.map(|()| {
            let mut absent = Vec::new();
            if model.ents[i].v.is_none() {
                absent.push(std::any::type_name::<V>());
            }
            absent.push(std::any::type_name::<Absent>());
            absent
        })
    });
    check(got == expected, || {
        format!("remove_present (V, Absent) on #{i}: {got:?}, model {expected:?}")
    })?;
    if let Some(Ok(_)) = expected {
        model.ents[i].v = None;
    }
    Ok(())
}

fn insert_twice(at: u8, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let Some(i) = model.pick(at) else {
        return Ok(());
    };
    let got = real.world.entity_mut(real.ents[i]).map(|mut e| {
        e.insert(Twice {
            v: V(1),
            again: (V(2),),
        })
        .map(drop)
        .map_err(reason)
    });
    // The entity is checked before the bundle: a frozen one says so.
    let expected = movable(model, i).map(|movable| movable.and(Err("duplicate V")));
    check(got == expected, || {
        format!("insert Twice on #{i}: {got:?}, model {expected:?}")
    })
}

fn register(real: &mut Real, a: u8, b: u8) -> Result<(), RequiredError> {
    macro_rules! pair {
        ($($x:literal $a:ty),*) => {
            match a {
                $($x => match b {
                    0 => real.world.register_required::<$a, R0>(),
                    1 => real.world.register_required::<$a, R1>(),
                    2 => real.world.register_required::<$a, R2>(),
                    _ => real.world.register_required::<$a, R3>(),
                },)*
                _ => unreachable!("markers are 0..4"),
            }
        };
    }
    pair!(0 R0, 1 R1, 2 R2, 3 R3)
}

fn spawn_marker(real: &mut Real, a: u8) -> Entity {
    match a {
        0 => real.world.spawn((R0,)),
        1 => real.world.spawn((R1,)),
        2 => real.world.spawn((R2,)),
        _ => real.world.spawn((R3,)),
    }
}

fn require(a: u8, b: u8, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let expected = if let Some(path) = model.entities.path(b, a) {
        let mut names: Vec<_> = path.into_iter().map(marker_name).collect();
        names.insert(0, marker_name(a));
        Err(RequiredError::Cycle { path: names })
    } else if model.entities.edges[a as usize].contains(&b) {
        Err(RequiredError::AlreadyRequired {
            component: marker_name(a),
            required: marker_name(b),
        })
    } else {
        Ok(())
    };
    let got = register(real, a, b);
    check(got == expected, || {
        format!("R{a} requires R{b}: {got:?}, model {expected:?}")
    })?;
    if expected.is_ok() {
        model.entities.edges[a as usize].push(b);
    }
    let spawned = spawn_marker(real, a);
    let view = real.world.entity(spawned).expect("just spawned");
    let has = [
        view.has::<R0>(),
        view.has::<R1>(),
        view.has::<R2>(),
        view.has::<R3>(),
    ];
    let expected = model.entities.closure(a);
    real.world.despawn(spawned).expect("alive");
    check(has == expected, || {
        format!("a spawn of R{a} holds markers {has:?}, the model {expected:?}")
    })
}

fn disabled_ref(mark: i64, real: &mut Real) -> Result<(), TestCaseError> {
    let world = &mut real.world;
    let target = world.spawn((Mark(mark), Disabled));
    world.freeze(target).expect("alive");
    let reference = ComponentRef::<Mark>::new(&*world, target).expect("frozen, with a Mark");
    let awake = world.spawn((reference,));
    let asleep = world.spawn((reference, Disabled));
    let read = reference.get(&*world).copied();
    let mut seen: Vec<(Entity, Option<i64>)> = world
        .query::<(Entity, Target<Mark>)>()
        .iter()
        .map(|(e, m)| (e, m.map(|m| m.0)))
        .collect();
    let mut allowed: Vec<(Entity, Option<i64>)> = world
        .query_filtered::<(Entity, Target<Mark>), Allow<Disabled>>()
        .iter()
        .map(|(e, m)| (e, m.map(|m| m.0)))
        .collect();
    let marks = world.query::<&Mark>().iter().count();
    for e in [target, awake, asleep] {
        world.despawn(e).expect("alive");
    }
    seen.sort_unstable();
    allowed.sort_unstable();
    check(read == Some(Mark(mark)), || {
        format!("ComponentRef to a disabled target read {read:?}")
    })?;
    check(seen == [(awake, Some(mark))], || {
        format!("Target<Mark> without asking saw {seen:?}")
    })?;
    let mut both = vec![(awake, Some(mark)), (asleep, Some(mark))];
    both.sort_unstable();
    check(allowed == both, || {
        format!("Target<Mark> with Allow<Disabled> saw {allowed:?}")
    })?;
    check(marks == 0, || {
        format!("Query<&Mark> saw the disabled target ({marks})")
    })
}

fn grenade(real: &mut Real) -> Result<(), TestCaseError> {
    #[derive(Bundle)]
    struct Armed {
        mark: Mark,
        #[bundle]
        load: (Grenade,),
    }
    let world = &mut real.world;
    let e = world.spawn(Armed {
        mark: Mark(1),
        load: (Grenade(true),),
    });
    let replaced = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.entities_mut().insert(
            e,
            Armed {
                mark: Mark(2),
                load: (Grenade(false),),
            },
        )
    }));
    let (mark, armed) = {
        let view = world.entity(e).expect("alive");
        (
            view.get::<Mark>().copied(),
            view.get::<Grenade>().map(|g| g.0),
        )
    };
    world.despawn(e).expect("alive");
    check(replaced.is_err(), || {
        "the old grenade's drop panicked".into()
    })?;
    check((mark, armed) == (Some(Mark(2)), Some(false)), || {
        format!("after the panicking drop: {mark:?}, armed {armed:?}")
    })
}
