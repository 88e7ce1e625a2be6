//! The state point: each state type's driver, and the loop that settles
//! them all.

use std::any::TypeId;

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
    fn step(&mut self, world: &mut World, may_move: bool) -> Result<Step, StepFailure>;
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
    fn has(&self, state: TypeId) -> bool {
        self.types.contains(&state)
    }

    fn push(&mut self, driver: Box<dyn StateDriver>) {
        self.types.push(driver.state());
        self.drivers.push(driver);
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
/// be absent: the initial enter, a computed state appearing or going),
/// setting the state with `set`. Every step runs; the first failure is
/// returned.
fn transition<S: States>(
    world: &mut World,
    from: Option<S>,
    to: Option<S>,
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

    fn name(&self) -> &'static str {
        std::any::type_name::<S>()
    }

    fn step(&mut self, world: &mut World, may_move: bool) -> Result<Step, StepFailure> {
        if !self.entered {
            self.entered = true;
            if let Some(current) = world.get::<State<S>>().map(|state| state.0.clone()) {
                let label = format!("{current:?}");
                return transition::<S>(world, None, Some(current))
                    .map(|()| Step::Moved("none".to_owned(), label))
                    .map_err(StepFailure::Schedule);
            }
        }
        // By id, found once: the idle check of every frame is a slot read.
        let Some((to, if_neq)) = world
            .service_by_id_mut(self.next)
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
                .service_by_id_mut(self.next)
                .and_then(|slot| slot.downcast_mut::<NextState<S>>())
            {
                next.put_back((to, if_neq));
            }
            return Err(StepFailure::Refused);
        }
        let from = label_of(current.as_ref());
        let label = format!("{to:?}");
        transition::<S>(world, current, Some(to))
            .map(|()| Step::Moved(from, label))
            .map_err(StepFailure::Schedule)
    }
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

    fn name(&self) -> &'static str {
        std::any::type_name::<C>()
    }

    fn step(&mut self, world: &mut World, may_move: bool) -> Result<Step, StepFailure> {
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
        transition::<C>(world, current, wanted)
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
        let next = self.service_id::<NextState<S>>();
        self.states.push(Box::new(Requested::<S> {
            next,
            entered: false,
            _state: std::marker::PhantomData,
        }));
        Ok(())
    }

    /// Adds the computed state `C`, derived from its source (which must
    /// be added first); it appears, changes and goes at the state points
    /// that follow.
    ///
    /// # Errors
    /// [`StateError::AlreadyAdded`], or [`StateError::NoSource`].
    pub fn add_computed_state<C: ComputedStates>(&mut self) -> Result<(), StateError> {
        if self.states.has(TypeId::of::<C>()) {
            return Err(StateError::AlreadyAdded {
                state: std::any::type_name::<C>(),
            });
        }
        if !self.states.has(TypeId::of::<C::Source>()) {
            return Err(StateError::NoSource {
                state: std::any::type_name::<C>(),
                source: std::any::type_name::<C::Source>(),
            });
        }
        let source = self.service_id::<State<C::Source>>();
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
            for (at, driver) in drivers.iter_mut().enumerate() {
                let made = chains
                    .get(at)
                    .map_or(0, |chain| chain.len().saturating_sub(1));
                match driver.step(self, made < MAX_TRANSITIONS) {
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

/// A value's `Debug` form, "none" for absent.
fn label_of<S: std::fmt::Debug>(value: Option<&S>) -> String {
    value.map_or_else(|| "none".to_owned(), |value| format!("{value:?}"))
}
