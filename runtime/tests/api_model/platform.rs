//! Issue 37's plugins and states in the API model, each case on a world of
//! its own (on the model's pool, serial or parallel at random), against a
//! reference written from the documentation alone.
//!
//! Plugins: four plugin types with random requirements (cycles included),
//! added one by one in a random order (repeats are duplicates, omissions
//! leave requirements missing). The model: a duplicate name is refused and
//! changes nothing; a plugin is built once every plugin it requires is
//! built, the first ready in the order added first; a plugin left waiting
//! makes the run fail with `IterationError::Plugin` (a missing type when
//! one is, else a cycle); built plugins' systems run in the order built.
//!
//! States: one state of three values whose `OnEnter`/`OnExit` schedules
//! may request another value, and random requests (`set`, `set_if_neq`)
//! made between frames. The model: the initial value entered after
//! `Startup`; at each state point the request applied, a request made in
//! `OnExit` replaced by one made in `OnEnter`, `set_if_neq` to the current
//! value dropped, `set` to it a transition; at most `MAX_TRANSITIONS` per
//! point, past which the error names the values gone through and the
//! request waits.
//!
//! Sub-states: a sub-state of two values living in a random set of its
//! source's three values, with random requests for both between frames.
//! The model: a state point is passes of the source then the sub-state;
//! the sub-state is entered (a waiting request its first value) right
//! after its source enters a value it lives in, leaves right before its
//! source exits unless the source goes to another value it lives in, and
//! a request for it while it is absent is dropped.
//!
//! Issue 39, in both state cases: between frames the world may be
//! snapshotted (with a request pending) and later restored. The model
//! takes back its clone: the value, the pending request, whether the
//! initial value was entered, and the log (opted in), so the frames after
//! the restore are the frames that followed the snapshot.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::plugin::{Plugin, PluginError, Requires};
use sluice::state::{
    MAX_TRANSITIONS, NextState, OnEnter, OnExit, State, StateError, States, SubStates,
};
use sluice::{ExecutorKind, IterationError, NodeBuilder, ThreadPool, World};

use super::{Op, check};

/// The operations of this module.
#[derive(Debug, Clone)]
pub(super) enum PlatformOp {
    /// Plugin `n` requires the plugins of `requires[n]` (indices 0..4);
    /// `adds` are added one by one.
    Plugins {
        requires: [Vec<u8>; 4],
        adds: Vec<u8>,
        parallel: bool,
    },
    /// `on_enter[v]` / `on_exit[v]` request a value when `v` is entered /
    /// left; each frame first makes its request `(value, if_neq)`.
    States {
        on_enter: [Option<u8>; 3],
        on_exit: [Option<u8>; 3],
        frames: Vec<Option<(u8, bool)>>,
        parallel: bool,
        rollback: Rollback,
    },
    /// A sub-state living in the source values `lives_in`, entered with
    /// `initial`; each frame first requests `(source, if_neq)` and a
    /// sub-state value.
    SubStates {
        lives_in: [bool; 3],
        initial: u8,
        frames: Vec<SubStateFrame>,
        parallel: bool,
        rollback: Rollback,
    },
}

/// Issue 39: before frame `.0` (its requests made) the world is
/// snapshotted, and before frame `.1` (its requests made) restored, when
/// `.1` comes at or after `.0`: the state, its pending request and the
/// state point's bookkeeping come back, so the frames after it are those
/// that followed the snapshot.
type Rollback = (u8, u8);

/// One frame's requests of a sub-state case: the source's `(value,
/// if_neq)` and the sub-state's value.
type SubStateFrame = (Option<(u8, bool)>, Option<u8>);

pub(super) fn op() -> impl Strategy<Value = Op> {
    let requires = proptest::collection::vec(0u8..4, 0..3);
    let plugins = (
        [
            requires.clone(),
            requires.clone(),
            requires.clone(),
            requires,
        ],
        proptest::collection::vec(0u8..4, 0..7),
        any::<bool>(),
    )
        .prop_map(|(requires, adds, parallel)| PlatformOp::Plugins {
            requires,
            adds,
            parallel,
        });
    let request = proptest::option::of(0u8..3);
    let states = (
        [request.clone(), request.clone(), request.clone()],
        [request.clone(), request.clone(), request],
        proptest::collection::vec(proptest::option::of((0u8..3, any::<bool>())), 1..6),
        any::<bool>(),
        (0u8..6, 0u8..7),
    )
        .prop_map(
            |(on_enter, on_exit, frames, parallel, rollback)| PlatformOp::States {
                on_enter,
                on_exit,
                frames,
                parallel,
                rollback,
            },
        );
    let sub_states = (
        any::<[bool; 3]>(),
        0u8..2,
        proptest::collection::vec(
            (
                proptest::option::of((0u8..3, any::<bool>())),
                proptest::option::of(0u8..2),
            ),
            1..8,
        ),
        any::<bool>(),
        (0u8..8, 0u8..9),
    )
        .prop_map(
            |(lives_in, initial, frames, parallel, rollback)| PlatformOp::SubStates {
                lives_in,
                initial,
                frames,
                parallel,
                rollback,
            },
        );
    prop_oneof![plugins, states, sub_states].prop_map(Op::Platform)
}

fn world(pool: &ThreadPool, parallel: bool) -> World {
    let mut world = World::with_pool(pool.clone());
    world.set_executor(if parallel {
        ExecutorKind::Parallel
    } else {
        ExecutorKind::Serial
    });
    world
}

/// What ran, in order (opted into snapshots: it comes back with the
/// state).
#[derive(Debug, Default, Clone)]
struct Log(Vec<String>);

/// Issue 39's rollback inside a states case: before frame `index`, a
/// snapshot kept with a clone of the model, or a restore taking it back.
fn roll<M: Clone>(
    world: &mut World,
    model: &mut M,
    saved: &mut Option<(sluice::Snapshot, M)>,
    index: usize,
    (take, restore): Rollback,
) -> Result<(), TestCaseError> {
    if index == usize::from(take) {
        let snapshot = world
            .snapshot()
            .map_err(|e| TestCaseError::fail(format!("frame {index}: snapshot: {e}")))?;
        check(snapshot.report().is_complete(), || {
            format!(
                "frame {index}: the states left out {:?}",
                snapshot.report().entries()
            )
        })?;
        *saved = Some((snapshot, model.clone()));
    }
    if index == usize::from(restore)
        && let Some((snapshot, kept)) = saved.as_ref()
    {
        world
            .restore(snapshot)
            .map_err(|e| TestCaseError::fail(format!("frame {index}: restore: {e}")))?;
        model.clone_from(kept);
    }
    Ok(())
}

struct Pl<const N: u8> {
    requires: Vec<u8>,
}

impl<const N: u8> Plugin for Pl<N> {
    fn requires(&self) -> Requires {
        self.requires
            .iter()
            .fold(Requires::new(), |requires, &n| match n {
                0 => requires.plugin::<Pl<0>>(),
                1 => requires.plugin::<Pl<1>>(),
                2 => requires.plugin::<Pl<2>>(),
                _ => requires.plugin::<Pl<3>>(),
            })
    }

    fn build(&self, world: &mut World) {
        world
            .get_mut::<Log>()
            .expect("the log")
            .0
            .push(format!("build {N}"));
        world.add_system(
            NodeBuilder::new(format!("plugin {N}"))
                .system(|log: &mut Log| log.0.push(format!("run {N}"))),
        );
    }
}

fn add(world: &mut World, n: u8, requires: &[u8]) -> Result<(), PluginError> {
    let requires = requires.to_vec();
    match n {
        0 => world.add_plugin(Pl::<0> { requires }),
        1 => world.add_plugin(Pl::<1> { requires }),
        2 => world.add_plugin(Pl::<2> { requires }),
        _ => world.add_plugin(Pl::<3> { requires }),
    }
}

/// The reference: which plugins are added and built, and what was logged.
/// The reference: which adds are duplicates, what was built in order,
/// and which plugin types are built.
fn plugins_model(requires: &[Vec<u8>; 4], adds: &[u8]) -> (Vec<bool>, Vec<String>, Vec<bool>) {
    let mut added: Vec<u8> = Vec::new();
    let mut built = [false; 4];
    let mut log = Vec::new();
    let mut duplicates = Vec::new();
    for &n in adds {
        if added.contains(&n) {
            duplicates.push(true);
            continue;
        }
        duplicates.push(false);
        added.push(n);
        while let Some(&ready) = added.iter().find(|&&p| {
            !built[p as usize] && requires[p as usize].iter().all(|&r| built[r as usize])
        }) {
            built[ready as usize] = true;
            log.push(format!("build {ready}"));
        }
    }
    (duplicates, log, built.to_vec())
}

pub(super) fn apply(op: &PlatformOp, pool: &ThreadPool) -> Result<(), TestCaseError> {
    match op {
        PlatformOp::Plugins {
            requires,
            adds,
            parallel,
        } => {
            let mut world = world(pool, *parallel);
            world.init_service::<Log>();
            let (duplicates, mut log, built) = plugins_model(requires, adds);
            for (&n, &duplicate) in adds.iter().zip(&duplicates) {
                let result = add(&mut world, n, &requires[n as usize]);
                let refused = matches!(&result, Err(PluginError::Duplicate { plugin }) if plugin.contains(&format!("Pl<{n}>")));
                check(
                    refused == duplicate && (duplicate || result.is_ok()),
                    || format!("adding plugin {n} (a duplicate: {duplicate}): {result:?}"),
                )?;
            }
            let logged = world.get::<Log>().unwrap().0.clone();
            check(logged == log, || {
                format!("built {logged:?}, the model {log:?}")
            })?;
            let added: Vec<u8> = {
                let mut seen = Vec::new();
                for &n in adds {
                    if !seen.contains(&n) {
                        seen.push(n);
                    }
                }
                seen
            };
            let waiting: Vec<u8> = added
                .iter()
                .copied()
                .filter(|&n| !built[n as usize])
                .collect();
            let result = world.run_iteration();
            if waiting.is_empty() {
                check(result.is_ok(), || format!("every plugin built: {result:?}"))?;
                log.extend(
                    (0..log.len())
                        .map(|at| log[at].replace("build", "run"))
                        .collect::<Vec<_>>(),
                );
                let logged = world.get::<Log>().unwrap().0.clone();
                check(logged == log, || {
                    format!("ran {logged:?}, the model {log:?}")
                })?;
            } else {
                let missing = waiting
                    .iter()
                    .any(|&n| requires[n as usize].iter().any(|r| !added.contains(r)));
                let ok = match &result {
                    Err(IterationError::Plugin(PluginError::MissingRequirement { .. })) => missing,
                    Err(IterationError::Plugin(PluginError::Cycle { plugins })) => {
                        !missing && plugins.len() >= 2 && plugins.first() == plugins.last()
                    }
                    _ => false,
                };
                check(ok, || {
                    format!("plugins {waiting:?} wait (missing: {missing}): {result:?}")
                })?;
            }
        }
        PlatformOp::States {
            on_enter,
            on_exit,
            frames,
            parallel,
            rollback,
        } => states(pool, *parallel, on_enter, on_exit, frames, *rollback)?,
        PlatformOp::SubStates {
            lives_in,
            initial,
            frames,
            parallel,
            rollback,
        } => sub_states(pool, *parallel, *lives_in, *initial, frames, *rollback)?,
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Value(u8);
impl States for Value {}

/// The reference model of one state.
#[derive(Clone)]
struct StateModel {
    current: u8,
    entered: bool,
    pending: Option<(u8, bool)>,
    log: Vec<String>,
}

impl StateModel {
    /// A state point; the chain of values on error.
    fn point(
        &mut self,
        on_enter: &[Option<u8>; 3],
        on_exit: &[Option<u8>; 3],
    ) -> Option<Vec<String>> {
        let mut chain: Vec<String> = Vec::new();
        if !self.entered {
            self.entered = true;
            self.log.push(format!("enter {}", self.current));
            chain.extend(["none".to_owned(), format!("Value({})", self.current)]);
            if let Some(next) = on_enter[self.current as usize] {
                self.pending = Some((next, false));
            }
        }
        while let Some((to, if_neq)) = self.pending.take() {
            if if_neq && to == self.current {
                continue;
            }
            if chain.len().saturating_sub(1) >= MAX_TRANSITIONS {
                self.pending = Some((to, if_neq));
                return Some(chain);
            }
            if chain.is_empty() {
                chain.push(format!("Value({})", self.current));
            }
            self.log.push(format!("exit {}", self.current));
            if let Some(next) = on_exit[self.current as usize] {
                self.pending = Some((next, false));
            }
            self.current = to;
            self.log.push(format!("enter {to}"));
            if let Some(next) = on_enter[to as usize] {
                self.pending = Some((next, false));
            }
            chain.push(format!("Value({to})"));
        }
        None
    }
}

fn states(
    pool: &ThreadPool,
    parallel: bool,
    on_enter: &[Option<u8>; 3],
    on_exit: &[Option<u8>; 3],
    frames: &[Option<(u8, bool)>],
    rollback: Rollback,
) -> Result<(), TestCaseError> {
    let mut world = world(pool, parallel);
    world.init_service::<Log>();
    world.snapshot_service::<Log>();
    world.insert_state(Value(0)).expect("a new world");
    let (enter_requests, exit_requests) = (*on_enter, *on_exit);
    for v in 0..3u8 {
        world.add_system(
            NodeBuilder::new(format!("enter {v}"))
                .in_schedule(OnEnter(Value(v)))
                .system(move |log: &mut Log, next: &mut NextState<Value>| {
                    log.0.push(format!("enter {v}"));
                    if let Some(to) = enter_requests[v as usize] {
                        next.set(Value(to));
                    }
                }),
        );
        world.add_system(
            NodeBuilder::new(format!("exit {v}"))
                .in_schedule(OnExit(Value(v)))
                .system(move |log: &mut Log, next: &mut NextState<Value>| {
                    log.0.push(format!("exit {v}"));
                    if let Some(to) = exit_requests[v as usize] {
                        next.set(Value(to));
                    }
                }),
        );
    }
    world.add_system(
        NodeBuilder::new("frame").system(|state: &State<Value>, log: &mut Log| {
            log.0.push(format!("frame {}", state.get().0));
        }),
    );
    let mut model = StateModel {
        current: 0,
        entered: false,
        pending: None,
        log: Vec::new(),
    };
    let mut saved = None;
    for (index, request) in frames.iter().enumerate() {
        if let Some((value, if_neq)) = *request {
            let next = world.get_mut::<NextState<Value>>().expect("added");
            if if_neq {
                next.set_if_neq(Value(value));
            } else {
                next.set(Value(value));
            }
            model.pending = Some((value, if_neq));
        }
        roll(&mut world, &mut model, &mut saved, index, rollback)?;
        let result = world.run_iteration();
        let mut expected = None;
        // The initial value is entered at the first state point (the
        // first frame's, or the first after a restore to before it).
        if !model.entered {
            expected = model.point(on_enter, on_exit);
        }
        if expected.is_none() {
            model.log.push(format!("frame {}", model.current));
            expected = model.point(on_enter, on_exit);
        }
        match (&result, expected) {
            (Ok(()), None) => {}
            (
                Err(IterationError::State(StateError::TooManyTransitions { chain, .. })),
                Some(model_chain),
            ) => {
                check(*chain == model_chain, || {
                    format!("the chain {chain:?}, the model {model_chain:?}")
                })?;
            }
            (result, expected) => {
                return Err(TestCaseError::fail(format!(
                    "frame {index}: {result:?}, the model expected {expected:?}"
                )));
            }
        }
        let logged = &world.get::<Log>().unwrap().0;
        check(*logged == model.log, || {
            format!(
                "frame {index}: logged {logged:?}, the model {:?}",
                model.log
            )
        })?;
        let state = world.state::<Value>().map(|v| v.0);
        check(state == Some(model.current), || {
            format!("state {state:?}, the model {}", model.current)
        })?;
        let pending = world
            .get::<NextState<Value>>()
            .unwrap()
            .pending()
            .map(|v| v.0);
        check(pending == model.pending.map(|p| p.0), || {
            format!("pending {pending:?}, the model {:?}", model.pending)
        })?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Source(u8);
impl States for Source {}

/// The source values it lives in, bit `v` for `Source(v)`, set by the case.
static LIVES_IN: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
/// Its initial value, set by the case.
static INITIAL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inner(u8);
impl States for Inner {}
impl SubStates for Inner {
    type Source = Source;
    fn should_exist(source: &Source) -> Option<Self> {
        use std::sync::atomic::Ordering::Relaxed;
        (LIVES_IN.load(Relaxed) & (1 << source.0) != 0).then(|| Inner(INITIAL.load(Relaxed)))
    }
}

/// Cases setting `LIVES_IN` run one at a time.
static SUB_STATE_CASE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The reference model of a source and its sub-state.
#[derive(Clone)]
struct SubStateModel {
    lives_in: [bool; 3],
    initial: u8,
    source: u8,
    inner: Option<u8>,
    entered: bool,
    pending_source: Option<(u8, bool)>,
    pending_inner: Option<u8>,
    log: Vec<String>,
}

impl SubStateModel {
    fn point(&mut self) {
        // Whether the source's `State` changed since the sub-state last
        // looked (the initial enter sets it on the first point).
        let mut source_moved = false;
        loop {
            let mut moved = false;
            if !self.entered {
                self.entered = true;
                self.log.push(format!("enter s{}", self.source));
                moved = true;
                source_moved = true;
            } else if let Some((to, if_neq)) = self.pending_source.take()
                // `set_if_neq` to the value held is dropped (taken all the same).
                && !(if_neq && to == self.source)
            {
                if let Some(inner) = self.inner
                    && (to == self.source || !self.lives_in[to as usize])
                {
                    self.log.push(format!("exit u{inner}"));
                    self.inner = None;
                    self.pending_inner = None;
                }
                self.log.push(format!("exit s{}", self.source));
                self.source = to;
                self.log.push(format!("enter s{to}"));
                moved = true;
                source_moved = true;
            }
            let mut entered_inner = false;
            if std::mem::take(&mut source_moved)
                && self.inner.is_none()
                && self.lives_in[self.source as usize]
            {
                let first = self.pending_inner.take().unwrap_or(self.initial);
                self.log.push(format!("enter u{first}"));
                self.inner = Some(first);
                moved = true;
                entered_inner = true;
            }
            if !entered_inner {
                match self.inner {
                    None => self.pending_inner = None,
                    Some(inner) => {
                        if let Some(to) = self.pending_inner.take() {
                            self.log.push(format!("exit u{inner}"));
                            self.log.push(format!("enter u{to}"));
                            self.inner = Some(to);
                            moved = true;
                        }
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }
}

fn sub_states(
    pool: &ThreadPool,
    parallel: bool,
    lives_in: [bool; 3],
    initial: u8,
    frames: &[SubStateFrame],
    rollback: Rollback,
) -> Result<(), TestCaseError> {
    use std::sync::atomic::Ordering::Relaxed;
    let _one_case = SUB_STATE_CASE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    LIVES_IN.store(
        lives_in
            .iter()
            .enumerate()
            .fold(0, |bits, (v, &lives)| bits | (u8::from(lives) << v)),
        Relaxed,
    );
    INITIAL.store(initial, Relaxed);
    let mut world = world(pool, parallel);
    world.init_service::<Log>();
    world.snapshot_service::<Log>();
    world.insert_state(Source(0)).expect("a new world");
    world.add_sub_state::<Inner>().expect("its source is added");
    for v in 0..3u8 {
        world.add_system_to(OnEnter(Source(v)), move |log: &mut Log| {
            log.0.push(format!("enter s{v}"));
        });
        world.add_system_to(OnExit(Source(v)), move |log: &mut Log| {
            log.0.push(format!("exit s{v}"));
        });
    }
    for v in 0..2u8 {
        world.add_system_to(OnEnter(Inner(v)), move |log: &mut Log| {
            log.0.push(format!("enter u{v}"));
        });
        world.add_system_to(OnExit(Inner(v)), move |log: &mut Log| {
            log.0.push(format!("exit u{v}"));
        });
    }
    let mut model = SubStateModel {
        lives_in,
        initial,
        source: 0,
        inner: None,
        entered: false,
        pending_source: None,
        pending_inner: None,
        log: Vec::new(),
    };
    let mut saved = None;
    for (index, &(source, inner)) in frames.iter().enumerate() {
        if let Some((value, if_neq)) = source {
            let next = world.get_mut::<NextState<Source>>().expect("added");
            if if_neq {
                next.set_if_neq(Source(value));
            } else {
                next.set(Source(value));
            }
            model.pending_source = Some((value, if_neq));
        }
        if let Some(value) = inner {
            world.set_next_state(Inner(value));
            model.pending_inner = Some(value);
        }
        roll(&mut world, &mut model, &mut saved, index, rollback)?;
        let result = world.run_iteration();
        check(result.is_ok(), || format!("frame {index}: {result:?}"))?;
        model.point();
        let logged = &world.get::<Log>().unwrap().0;
        check(*logged == model.log, || {
            format!(
                "frame {index}: logged {logged:?}, the model {:?}",
                model.log
            )
        })?;
        let held = (
            world.state::<Source>().map(|v| v.0),
            world.state::<Inner>().map(|v| v.0),
        );
        check(held == (Some(model.source), model.inner), || {
            format!(
                "frame {index}: held {held:?}, the model {:?}",
                (model.source, model.inner)
            )
        })?;
        let pending = world
            .get::<NextState<Inner>>()
            .unwrap()
            .pending()
            .map(|v| v.0);
        check(pending.is_none(), || {
            format!("frame {index}: a sub-state request left: {pending:?}")
        })?;
    }
    Ok(())
}
