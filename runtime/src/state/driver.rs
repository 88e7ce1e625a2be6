//! The state point: each state type's driver, and the loop that settles
//! them all.

use std::any::{Any, TypeId};

use crate::access::ServiceId;
use crate::organise::Schedule;
use crate::state::scoped::{despawn_on_enter, despawn_on_exit};
use crate::state::{
    ComputedStates, MAX_TRANSITIONS, NextState, OnEnter, OnExit, OnTransition, State, StateError,
    States,
};
use crate::world::{IterationError, World};

/// What one step of a driver did.
pub(crate) enum Step {
    /// Nothing to apply.
    Idle,
    /// A transition (or the initial enter): the values left and entered
    /// (`Debug` forms, "none" for absent).
    Moved(String, String),
}

/// One state type's side of the state point, type-erased.
pub(crate) trait StateDriver: Send + Sync {
    /// The state type.
    fn state(&self) -> TypeId;
    /// The state type's name.
    fn name(&self) -> &'static str;
    /// Applies at most one transition; `may_move` false refuses one that
    /// is due ([`StateError::TooManyTransitions`] is built by the caller).
    /// `before_exit` is called right before a held value is left (see
    /// [`BeforeExit`]).
    fn step(
        &mut self,
        world: &mut World,
        may_move: bool,
        before_exit: &mut BeforeExit<'_>,
    ) -> Result<Step, StepFailure>;
    /// The state this one lives inside (a sub-state's source), if any.
    fn scoped_in(&self) -> Option<TypeId> {
        None
    }
    /// Whether the world holds this state now.
    fn exists(&self, _world: &World) -> bool {
        false
    }
    /// Whether this sub-state stays through its source's transition to
    /// `to` (`same`: a transition to the value held, a re-entry).
    fn keeps_through(&self, _to: Option<&dyn Any>, _same: bool) -> bool {
        true
    }
    /// Leaves the value held (its source is leaving its own): `OnExit`,
    /// scoped entities, `State` removed, a pending request dropped.
    fn leave(&mut self, _world: &mut World) -> Result<(), StateError> {
        Ok(())
    }
    /// The driver's own bookkeeping, for a snapshot.
    fn marks(&self) -> StateMarks;
    /// Puts back bookkeeping taken by [`marks`](Self::marks).
    fn set_marks(&mut self, marks: StateMarks);
}

/// A state driver's own bookkeeping, captured by a snapshot beside the
/// state's services: whether the initial value was entered, and the
/// source's version last computed from (both meaningful only in the world
/// they were taken from).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StateMarks {
    /// A requested state's initial value was entered.
    pub(crate) entered: bool,
    /// A derived state's source version when last computed.
    pub(crate) seen: Option<u64>,
}

/// Called by a transition right before the value it leaves is exited,
/// with the value it goes to (`None`: the state goes) and whether that is
/// the same value: the state point makes the sub-states living inside it
/// leave first, deepest first.
pub(crate) type BeforeExit<'a> =
    dyn FnMut(&mut World, Option<&dyn Any>, bool) -> Result<(), StateError> + 'a;

/// A [`BeforeExit`] for a state nothing lives inside.
pub(crate) fn nothing_inside(
    _: &mut World,
    _: Option<&dyn Any>,
    _: bool,
) -> Result<(), StateError> {
    Ok(())
}

/// Why a step stopped.
pub(crate) enum StepFailure {
    /// A transition was due but `may_move` was false; the request was put
    /// back.
    Refused,
    /// A schedule failed; the transition completed.
    Schedule(StateError),
}

/// The drivers of one world, in the order the states were added.
#[derive(Default)]
pub(crate) struct StateDrivers {
    drivers: Vec<Box<dyn StateDriver>>,
    /// Every state type added: kept while the drivers are out for a state
    /// point, so a state added by one of its schedules is checked too.
    types: Vec<TypeId>,
}

impl StateDrivers {
    pub(super) fn has(&self, state: TypeId) -> bool {
        self.types.contains(&state)
    }

    pub(super) fn push(&mut self, driver: Box<dyn StateDriver>) {
        self.types.push(driver.state());
        self.drivers.push(driver);
    }

    /// Every driver's bookkeeping, by state type, into `into` (cleared
    /// first; its memory is reused).
    pub(crate) fn capture_marks(&self, into: &mut Vec<(TypeId, StateMarks)>) {
        into.clear();
        into.extend(
            self.drivers
                .iter()
                .map(|driver| (driver.state(), driver.marks())),
        );
    }

    /// Puts back the bookkeeping of every driver `marks` names; a state
    /// added since keeps its own.
    pub(crate) fn restore_marks(&mut self, marks: &[(TypeId, StateMarks)]) {
        for driver in &mut self.drivers {
            if let Some((_, mark)) = marks.iter().find(|(state, _)| *state == driver.state()) {
                driver.set_marks(*mark);
            }
        }
    }
}

/// Runs `schedule` if any node is in it; a failure is named for `S`.
fn run_for<S: States>(world: &mut World, schedule: Schedule) -> Result<(), StateError> {
    world
        .run_schedule_if_planned(&schedule)
        .map_err(|error| StateError::ScheduleFailed {
            state: std::any::type_name::<S>(),
            schedule: schedule.name().to_owned(),
            error: Box::new(error),
        })
}

/// Runs the steps of a transition of `S` from `from` to `to` (either may
/// be absent: the initial enter, a computed or sub-state appearing or
/// going). The sub-states living inside `from` leave first
/// (`before_exit`). Every step runs; the first failure is returned.
pub(crate) fn transition<S: States>(
    world: &mut World,
    from: Option<S>,
    to: Option<S>,
    before_exit: &mut BeforeExit<'_>,
) -> Result<(), StateError> {
    let mut first = None;
    let mut note = |result: Result<(), StateError>| {
        if let Err(error) = result {
            if first.is_some() {
                tracing::error!("{error}");
            } else {
                first = Some(error);
            }
        }
    };
    if let Some(from) = &from {
        let same = to.as_ref() == Some(from);
        note(before_exit(
            world,
            to.as_ref().map(|to| to as &dyn Any),
            same,
        ));
        note(run_for::<S>(world, OnExit(from.clone()).into()));
        let to_value = to.as_ref().unwrap_or(from);
        despawn_on_exit(world, from, to_value);
    }
    match &to {
        // In place when held: no allocation per transition (the version
        // moves as an insert's would).
        Some(to) => match world.get_mut::<State<S>>() {
            Some(state) => state.0 = to.clone(),
            None => world.insert(State(to.clone())),
        },
        None => drop(world.remove::<State<S>>()),
    }
    if let (Some(from), Some(to)) = (&from, &to) {
        note(run_for::<S>(
            world,
            OnTransition {
                from: from.clone(),
                to: to.clone(),
            }
            .into(),
        ));
    }
    if let Some(to) = &to {
        despawn_on_enter(world, to);
        note(run_for::<S>(world, OnEnter(to.clone()).into()));
    }
    first.map_or(Ok(()), Err)
}

/// The driver of a state set by requests ([`NextState`]).
struct Requested<S: States> {
    next: ServiceId,
    /// Whether the initial value was entered.
    entered: bool,
    _state: std::marker::PhantomData<fn() -> S>,
}

impl<S: States> StateDriver for Requested<S> {
    fn state(&self) -> TypeId {
        TypeId::of::<S>()
    }

    fn marks(&self) -> StateMarks {
        StateMarks {
            entered: self.entered,
            seen: None,
        }
    }

    fn set_marks(&mut self, marks: StateMarks) {
        self.entered = marks.entered;
    }

    fn name(&self) -> &'static str {
        std::any::type_name::<S>()
    }

    fn step(
        &mut self,
        world: &mut World,
        may_move: bool,
        before_exit: &mut BeforeExit<'_>,
    ) -> Result<Step, StepFailure> {
        if !self.entered {
            self.entered = true;
            if let Some(current) = world.get::<State<S>>().map(|state| state.0.clone()) {
                let label = format!("{current:?}");
                return transition::<S>(world, None, Some(current), before_exit)
                    .map(|()| Step::Moved("none".to_owned(), label))
                    .map_err(StepFailure::Schedule);
            }
        }
        apply_request::<S>(world, self.next, may_move, before_exit)
    }
}

/// Applies the request waiting in the `NextState<S>` of id `next`, if
/// any, to the state `S` held now.
pub(crate) fn apply_request<S: States>(
    world: &mut World,
    next: ServiceId,
    may_move: bool,
    before_exit: &mut BeforeExit<'_>,
) -> Result<Step, StepFailure> {
    // By id, found once: the idle check of every frame is a slot read.
    let Some((to, if_neq)) = world
        .service_by_id_mut(next)
        .and_then(|slot| slot.downcast_mut::<NextState<S>>())
        .and_then(NextState::take)
    else {
        return Ok(Step::Idle);
    };
    let current = world.get::<State<S>>().map(|state| state.0.clone());
    if if_neq && current.as_ref() == Some(&to) {
        return Ok(Step::Idle);
    }
    if !may_move {
        if let Some(next) = world
            .service_by_id_mut(next)
            .and_then(|slot| slot.downcast_mut::<NextState<S>>())
        {
            next.put_back((to, if_neq));
        }
        return Err(StepFailure::Refused);
    }
    let from = label_of(current.as_ref());
    let label = format!("{to:?}");
    transition::<S>(world, current, Some(to), before_exit)
        .map(|()| Step::Moved(from, label))
        .map_err(StepFailure::Schedule)
}

/// The driver of a computed state.
struct Computed<C: ComputedStates> {
    /// The source's `State` service, and its version when last computed
    /// (`None` before the first state point): an idle frame reads one
    /// version and computes nothing.
    source: ServiceId,
    seen: Option<u64>,
    _state: std::marker::PhantomData<fn() -> C>,
}

impl<C: ComputedStates> StateDriver for Computed<C> {
    fn state(&self) -> TypeId {
        TypeId::of::<C>()
    }

    fn marks(&self) -> StateMarks {
        StateMarks {
            entered: false,
            seen: self.seen,
        }
    }

    fn set_marks(&mut self, marks: StateMarks) {
        self.seen = marks.seen;
    }

    fn name(&self) -> &'static str {
        std::any::type_name::<C>()
    }

    fn step(
        &mut self,
        world: &mut World,
        may_move: bool,
        before_exit: &mut BeforeExit<'_>,
    ) -> Result<Step, StepFailure> {
        let version = world.service_version(self.source);
        if self.seen == Some(version) {
            return Ok(Step::Idle);
        }
        let current = world.get::<State<C>>().map(|state| state.0.clone());
        let wanted = world
            .get::<State<C::Source>>()
            .and_then(|source| C::compute(&source.0));
        if current == wanted {
            self.seen = Some(version);
            return Ok(Step::Idle);
        }
        if !may_move {
            return Err(StepFailure::Refused);
        }
        self.seen = Some(version);
        let from = label_of(current.as_ref());
        let label = label_of(wanted.as_ref());
        transition::<C>(world, current, wanted, before_exit)
            .map(|()| Step::Moved(from, label))
            .map_err(StepFailure::Schedule)
    }
}

impl World {
    /// Adds the state `S` with its default value as the initial one (see
    /// [`insert_state`](World::insert_state)); does nothing when the world
    /// already has it.
    pub fn init_state<S: States + Default>(&mut self) {
        if !self.states.has(TypeId::of::<S>()) {
            // Cannot fail: checked just above.
            let _ = self.insert_state(S::default());
        }
    }

    /// Adds the state `S` with `initial` as its value, entered (its
    /// `OnEnter` run) at the next state point: right after `Startup` on
    /// a world that has not run yet.
    ///
    /// # Errors
    /// [`StateError::AlreadyAdded`]; the state keeps its value.
    pub fn insert_state<S: States>(&mut self, initial: S) -> Result<(), StateError> {
        if self.states.has(TypeId::of::<S>()) {
            return Err(StateError::AlreadyAdded {
                state: std::any::type_name::<S>(),
            });
        }
        self.insert(State(initial));
        self.insert(NextState::<S>::default());
        // Snapshots capture the state, its pending request and (below,
        // `StateMarks`) the driver's bookkeeping.
        self.snapshots.add_service::<State<S>>();
        self.snapshots.add_service::<NextState<S>>();
        let next = self.service_id::<NextState<S>>();
        self.states.push(Box::new(Requested::<S> {
            next,
            entered: false,
            _state: std::marker::PhantomData,
        }));
        Ok(())
    }

    /// The one check of a state derived from `Source` (computed or sub):
    /// `Derived` is not added yet, and `Source` is.
    pub(crate) fn check_derived_state<Derived: 'static, Source: 'static>(
        &self,
    ) -> Result<(), StateError> {
        if self.states.has(TypeId::of::<Derived>()) {
            return Err(StateError::AlreadyAdded {
                state: std::any::type_name::<Derived>(),
            });
        }
        if !self.states.has(TypeId::of::<Source>()) {
            return Err(StateError::NoSource {
                state: std::any::type_name::<Derived>(),
                source: std::any::type_name::<Source>(),
            });
        }
        Ok(())
    }

    /// Adds the computed state `C`, derived from its source (which must
    /// be added first); it appears, changes and goes at the state points
    /// that follow.
    ///
    /// # Errors
    /// [`StateError::AlreadyAdded`], or [`StateError::NoSource`].
    pub fn add_computed_state<C: ComputedStates>(&mut self) -> Result<(), StateError> {
        self.check_derived_state::<C, C::Source>()?;
        let source = self.service_id::<State<C::Source>>();
        // Snapshots capture its value (a computed state has no request).
        self.snapshots.add_service::<State<C>>();
        self.states.push(Box::new(Computed::<C> {
            source,
            seen: None,
            _state: std::marker::PhantomData,
        }));
        Ok(())
    }

    /// The current value of the state `S`, if the world has it.
    pub fn state<S: States>(&self) -> Option<&S> {
        self.get::<State<S>>().map(State::get)
    }

    /// Requests `value` for the state `S` from outside the frame (as
    /// [`NextState::set`]); applied at the next state point. Does nothing
    /// when the world does not have `S`.
    pub fn set_next_state<S: States>(&mut self, value: S) {
        if let Some(next) = self.get_mut::<NextState<S>>() {
            next.set(value);
        }
    }

    /// Runs a state point now (see [the module](crate::state)): initial
    /// values entered, requests applied, computed states followed.
    ///
    /// # Errors
    /// [`IterationError::State`] (what [`StateError`] says), or
    /// [`IterationError::Reentrant`] from inside a whole-world system.
    pub fn apply_state_transitions(&mut self) -> Result<(), IterationError> {
        if self.is_running_whole() {
            return Err(IterationError::Reentrant);
        }
        self.settle_states()
    }

    /// The state point: every driver stepped, in order, again and again
    /// until none moves, or one failed or ran out of transitions.
    pub(crate) fn settle_states(&mut self) -> Result<(), IterationError> {
        if self.states.drivers.is_empty() {
            return Ok(());
        }
        let mut drivers = std::mem::take(&mut self.states.drivers);
        // Allocated only once something moves: an idle state point (most
        // frames) allocates nothing.
        let mut chains: Vec<Vec<String>> = Vec::new();
        let mut outcome = Ok(());
        'settle: loop {
            let mut moved = false;
            for at in 0..drivers.len() {
                let made = chains
                    .get(at)
                    .map_or(0, |chain| chain.len().saturating_sub(1));
                // A state's sub-states were added after it: they are in
                // `inside`, and leave before it does.
                let (head, inside) = drivers.split_at_mut(at + 1);
                let driver = &mut head[at];
                let moving = driver.state();
                let mut leave_inside = |world: &mut World, to: Option<&dyn Any>, same: bool| {
                    leave_sub_states(inside, moving, world, to, same)
                };
                match driver.step(self, made < MAX_TRANSITIONS, &mut leave_inside) {
                    Ok(Step::Idle) => {}
                    Ok(Step::Moved(from, to)) => {
                        moved = true;
                        if chains.len() <= at {
                            chains.resize_with(at + 1, Vec::new);
                        }
                        let chain = &mut chains[at];
                        if chain.is_empty() {
                            chain.push(from);
                        }
                        chain.push(to);
                    }
                    Err(StepFailure::Refused) => {
                        let chain = chains.get(at).cloned().unwrap_or_default();
                        outcome = Err(IterationError::State(StateError::TooManyTransitions {
                            state: driver.name(),
                            chain,
                        }));
                        break 'settle;
                    }
                    Err(StepFailure::Schedule(error)) => {
                        outcome = Err(IterationError::State(error));
                        break 'settle;
                    }
                }
            }
            if !moved {
                break;
            }
        }
        // States added by the schedules that ran settle at the next point.
        let added = std::mem::replace(&mut self.states.drivers, drivers);
        self.states.drivers.extend(added);
        outcome
    }
}

/// Makes the sub-states living inside `moving` (which is about to leave
/// its value for `to`) leave theirs, deepest first: a direct sub-state
/// that does not stay through the transition, and every sub-state living
/// inside one that leaves. `drivers` are those added after `moving`.
fn leave_sub_states(
    drivers: &mut [Box<dyn StateDriver>],
    moving: TypeId,
    world: &mut World,
    to: Option<&dyn Any>,
    same: bool,
) -> Result<(), StateError> {
    // Empty (no allocation) unless a sub-state leaves.
    let mut leaving: Vec<(usize, TypeId)> = Vec::new();
    for (at, driver) in drivers.iter().enumerate() {
        let Some(source) = driver.scoped_in() else {
            continue;
        };
        let leaves = if source == moving {
            !driver.keeps_through(to, same)
        } else {
            leaving.iter().any(|&(_, gone)| gone == source)
        };
        if leaves && driver.exists(world) {
            leaving.push((at, driver.state()));
        }
    }
    let mut first = Ok(());
    // Added after their sources: the reverse order is deepest first.
    for &(at, _) in leaving.iter().rev() {
        if let Err(error) = drivers[at].leave(world) {
            if first.is_ok() {
                first = Err(error);
            } else {
                tracing::error!("{error}");
            }
        }
    }
    first
}

/// A value's `Debug` form, "none" for absent.
pub(crate) fn label_of<S: std::fmt::Debug>(value: Option<&S>) -> String {
    value.map_or_else(|| "none".to_owned(), |value| format!("{value:?}"))
}
