//! States: a value that says which part of the game runs (title, battle,
//! results), with schedules that run when it changes.
//!
//! A state is a service plus schedules and run conditions; the planner
//! knows nothing of it.
//!
//! - [`State<S>`] holds the current value (read it as `&State<S>`);
//!   [`NextState<S>`] holds a request (`&mut NextState<S>` and
//!   [`set`](NextState::set)).
//! - [`OnExit`], [`OnTransition`] and [`OnEnter`] name schedules (give
//!   them to [`NodeBuilder::in_schedule`](crate::NodeBuilder::in_schedule));
//!   [`in_state`] is a run condition.
//! - [`DespawnOnExit`], [`DespawnOnEnter`] and [`DespawnWhen`] scope an
//!   entity to a state.
//! - [`ComputedStates`]: a state derived from another, which exists only
//!   while its [`compute`](ComputedStates::compute) gives a value.
//! - [`SubStates`]: a state that lives inside a value of another (paused
//!   or running, only in battle), entered with an initial value and then
//!   requested like any state.
//!
//! # The state point
//!
//! Requests are applied at **the state point**: right after the boundary
//! of each iteration of the variable plan (every command and message of the
//! frame has landed), before [`World::run_iteration`](crate::World::run_iteration) or
//! [`World::update`](crate::World::update) returns, and once right after the `Startup` schedule
//! (the first run), where each state added before it enters its initial
//! value. A state added later enters its initial value at the next state
//! point; [`World::apply_state_transitions`](crate::World::apply_state_transitions) runs a state point now.
//!
//! A transition from `a` to `b` runs, in order: `OnExit(a)`, despawns the
//! entities scoped to leave with `a` (and those whose [`DespawnWhen`]
//! holds), sets `State` to `b`, runs `OnTransition { from: a, to: b }`,
//! despawns the entities scoped to go when `b` is entered, runs
//! `OnEnter(b)`. Each schedule runs to completion with its own boundary
//! (its commands land before the next step). A request made during a
//! transition (in `OnExit`, `OnEnter`...) is applied right after it, at
//! the same state point, and so on, at most [`MAX_TRANSITIONS`] times per
//! state type and state point: past that, [`StateError::TooManyTransitions`]
//! names the state and the values it went through, the request left stays
//! in [`NextState`] for the next state point, and every transition already
//! made stands. States settle in the order they were added; a computed
//! state follows its source's transition at the same state point.
//!
//! [`NextState`] holds one request: a second [`set`](NextState::set) in
//! the same frame replaces the first (the later in plan order wins, the
//! same on every executor). `set` to the current value is a transition
//! (exit and enter run again); [`set_if_neq`](NextState::set_if_neq) is
//! dropped at the state point when it names the current value.
//!
//! A frame whose plan failed ([`IterationError::NodePanicked`]) applies no
//! transition at its end; requests wait for the next state point.
//!
//! ```
//! use sluice::prelude::*;
//! use sluice::state::{NextState, OnEnter, State, States, in_state};
//!
//! #[derive(Debug, Clone, PartialEq, Eq, Default)]
//! enum Flow { #[default] Title, Battle }
//! impl States for Flow {}
//!
//! #[derive(Default)]
//! struct Ticks(u32);
//!
//! let mut world = World::new();
//! world.init_service::<Ticks>();
//! world.init_state::<Flow>();
//! world.add_system(
//!     NodeBuilder::new("start")
//!         .in_schedule(OnEnter(Flow::Title))
//!         .system(|next: &mut NextState<Flow>| next.set(Flow::Battle)),
//! );
//! world.add_system(
//!     NodeBuilder::new("tick")
//!         .system(|ticks: &mut Ticks| ticks.0 += 1)
//!         .run_if(in_state(Flow::Battle)),
//! );
//! world.run_iteration()?;
//! // Title was entered after Startup and left at the same state point.
//! assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
//! assert_eq!(world.get::<Ticks>().unwrap().0, 1);
//! # Ok::<(), IterationError>(())
//! ```

mod driver;
mod scoped;
mod sub;

use std::fmt;

use crate::organise::Schedule;
use crate::world::IterationError;

pub use scoped::{DespawnOnEnter, DespawnOnExit, DespawnWhen};
pub use sub::SubStates;

pub(crate) use driver::{StateDrivers, StateMarks};

/// How many transitions one state type may make at one state point.
pub const MAX_TRANSITIONS: usize = 16;

/// A state type: usually a fieldless enum. Its `Debug` form names its
/// schedules (`OnEnter(game::Flow::Battle)`), so two values with the same
/// `Debug` form share them.
pub trait States: Clone + PartialEq + Eq + fmt::Debug + Send + Sync + 'static {}

/// A state derived from another (its source): it exists (the world holds
/// [`State<Self>`]) only while [`compute`](Self::compute) gives a value,
/// and follows every transition of its source at the same state point.
/// It cannot be requested ([`NextState`] of it does nothing).
pub trait ComputedStates: States {
    /// The state it is derived from.
    type Source: States;

    /// Its value for the source's value `source`, or `None` for "does not
    /// exist".
    fn compute(source: &Self::Source) -> Option<Self>;
}

/// The current value of the state `S`. Read it as `&State<S>` (or
/// [`World::state`](crate::World::state)); it changes only at the state point.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct State<S: States>(S);

impl<S: States> State<S> {
    /// The current value.
    pub fn get(&self) -> &S {
        &self.0
    }
}

impl<S: States> std::ops::Deref for State<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

/// The request for the state `S`'s next value, applied at the state
/// point. Write it as `&mut NextState<S>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NextState<S: States> {
    request: Option<(S, bool)>,
}

impl<S: States> Default for NextState<S> {
    fn default() -> Self {
        Self { request: None }
    }
}

impl<S: States> NextState<S> {
    /// Requests `value`, replacing an earlier request. A value equal to the
    /// current one is a transition all the same (its exit and enter run).
    pub fn set(&mut self, value: S) {
        self.request = Some((value, false));
    }

    /// Requests `value` unless it is the current value when the request is
    /// applied (then it is dropped and nothing runs).
    pub fn set_if_neq(&mut self, value: S) {
        self.request = Some((value, true));
    }

    /// Withdraws the request.
    pub fn reset(&mut self) {
        self.request = None;
    }

    /// The value requested, if any.
    pub fn pending(&self) -> Option<&S> {
        self.request.as_ref().map(|(value, _)| value)
    }

    pub(crate) fn take(&mut self) -> Option<(S, bool)> {
        self.request.take()
    }

    pub(crate) fn put_back(&mut self, request: (S, bool)) {
        // A request made meanwhile is newer: it stays.
        self.request.get_or_insert(request);
    }
}

/// The schedule run when the state takes this value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnEnter<S: States>(pub S);

/// The schedule run when the state leaves this value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnExit<S: States>(pub S);

/// The schedule run between the exit of `from` and the enter of `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnTransition<S: States> {
    /// The value left.
    pub from: S,
    /// The value entered.
    pub to: S,
}

fn schedule_name<S: States>(kind: &str, value: &S) -> String {
    format!("{kind}({}::{value:?})", std::any::type_name::<S>())
}

impl<S: States> From<OnEnter<S>> for Schedule {
    fn from(on: OnEnter<S>) -> Self {
        Schedule::named(schedule_name("OnEnter", &on.0))
    }
}

impl<S: States> From<OnExit<S>> for Schedule {
    fn from(on: OnExit<S>) -> Self {
        Schedule::named(schedule_name("OnExit", &on.0))
    }
}

impl<S: States> From<OnTransition<S>> for Schedule {
    fn from(on: OnTransition<S>) -> Self {
        Schedule::named(format!(
            "OnTransition({}::{:?} -> {:?})",
            std::any::type_name::<S>(),
            on.from,
            on.to
        ))
    }
}

/// A run condition: whether the state `S` is `value` (false while the
/// world holds no `State<S>`).
pub fn in_state<S: States>(value: S) -> impl FnMut(Option<&State<S>>) -> bool + Send + 'static {
    move |state: Option<&State<S>>| state.is_some_and(|state| state.0 == value)
}

/// A run condition: whether the world holds the state `S` (a computed
/// state exists only while its source's value gives it one).
pub fn state_exists<S: States>(state: Option<&State<S>>) -> bool {
    state.is_some()
}

/// Why a state point failed.
#[non_exhaustive]
#[derive(Debug)]
pub enum StateError {
    /// The state `state` made [`MAX_TRANSITIONS`] transitions at one state
    /// point and was asked for another: `chain` lists the values it went
    /// through, the first being where it stood before. The last request
    /// stays in [`NextState`] for the next state point; the transitions
    /// made stand.
    TooManyTransitions {
        /// The state type.
        state: &'static str,
        /// The values, in order (`Debug` forms).
        chain: Vec<String>,
    },
    /// A system of the schedule `schedule`, run for the state `state`,
    /// failed. The transition it belonged to was completed (its other
    /// schedules ran); the state point stopped after it, and requests
    /// left wait for the next one.
    ScheduleFailed {
        /// The state type.
        state: &'static str,
        /// The schedule (`OnEnter(game::Flow::Battle)`).
        schedule: String,
        /// What failed.
        error: Box<IterationError>,
    },
    /// [`World::insert_state`](crate::World::insert_state),
    /// [`World::add_computed_state`](crate::World::add_computed_state) or
    /// [`World::add_sub_state`](crate::World::add_sub_state) for a state
    /// type the world already has; nothing changed (request a value with
    /// [`NextState`] instead).
    AlreadyAdded {
        /// The state type.
        state: &'static str,
    },
    /// [`World::add_computed_state`](crate::World::add_computed_state) or
    /// [`World::add_sub_state`](crate::World::add_sub_state) before its
    /// source was added.
    NoSource {
        /// The computed or sub-state type.
        state: &'static str,
        /// Its source type.
        source: &'static str,
    },
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::TooManyTransitions { state, chain } => write!(
                f,
                "state `{state}` was asked for more than {MAX_TRANSITIONS} transitions at one \
                 state point: {}; the last request waits for the next state point",
                chain.join(" -> ")
            ),
            StateError::ScheduleFailed {
                state,
                schedule,
                error,
            } => write!(f, "state `{state}`: schedule `{schedule}` failed: {error}"),
            StateError::AlreadyAdded { state } => {
                write!(f, "state `{state}` is already added to this world")
            }
            StateError::NoSource { state, source } => write!(
                f,
                "state `{state}` is derived from or lives inside `{source}`, which must be \
                 added first"
            ),
        }
    }
}

impl std::error::Error for StateError {}
