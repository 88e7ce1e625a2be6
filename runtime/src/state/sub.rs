//! Sub-states: a state that lives inside one value (or a few) of its
//! source, entered after the source's `OnEnter` and left before its
//! `OnExit`.

use std::any::{Any, TypeId};

use crate::access::ServiceId;
use crate::state::driver::{
    BeforeExit, StateDriver, StateMarks, Step, StepFailure, apply_request, label_of,
    nothing_inside, transition,
};
use crate::state::{NextState, State, StateError, States};
use crate::world::World;

/// A state that exists only while its source holds a value for which
/// [`should_exist`](Self::should_exist) gives one (Bevy's `SubStates`):
/// entered with that value right after the source's `OnEnter`, then
/// requested like any state ([`NextState`]), and left (its `OnExit` run,
/// its scoped entities despawned, [`State<Self>`] removed) right before
/// the source's `OnExit`.
///
/// Through a transition of its source to another value in which it
/// exists, it keeps its value and nothing of it runs. A same-value
/// transition of its source (`set` to the value held: a restart) is a
/// new stay, so the sub-state leaves and is entered again with its
/// initial value. A request for it made while it does not exist is
/// dropped at the state point; one pending when it is entered is its
/// first value instead of the initial one.
///
/// ```
/// use sluice::prelude::*;
/// use sluice::state::SubStates;
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
/// enum Game { #[default] Title, Battle }
/// impl States for Game {}
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
/// enum Pause { #[default] Running, Paused }
/// impl States for Pause {}
/// impl SubStates for Pause {
///     type Source = Game;
///     fn should_exist(game: &Game) -> Option<Self> {
///         (*game == Game::Battle).then(Pause::default)
///     }
/// }
///
/// let mut world = World::new();
/// world.init_state::<Game>();
/// world.add_sub_state::<Pause>().unwrap();
/// world.run_iteration()?;
/// assert_eq!(world.state::<Pause>(), None);
/// world.set_next_state(Game::Battle);
/// world.run_iteration()?;
/// assert_eq!(world.state::<Pause>(), Some(&Pause::Running));
/// world.set_next_state(Pause::Paused);
/// world.run_iteration()?;
/// assert_eq!(world.state::<Pause>(), Some(&Pause::Paused));
/// world.set_next_state(Game::Title);
/// world.run_iteration()?;
/// assert_eq!(world.state::<Pause>(), None);
/// # Ok::<(), IterationError>(())
/// ```
pub trait SubStates: States {
    /// The state it lives inside.
    type Source: States;

    /// Its value on entry while the source holds `source`, or `None` for
    /// "does not exist in that value".
    fn should_exist(source: &Self::Source) -> Option<Self>;
}

/// The driver of a sub-state.
struct Sub<T: SubStates> {
    /// The source's `State` service, and its version when last looked at
    /// (`None` before the first state point).
    source: ServiceId,
    seen: Option<u64>,
    next: ServiceId,
    _state: std::marker::PhantomData<fn() -> T>,
}

impl<T: SubStates> Sub<T> {
    fn drop_request(&self, world: &mut World) {
        if let Some(next) = world
            .service_by_id_mut(self.next)
            .and_then(|slot| slot.downcast_mut::<NextState<T>>())
        {
            next.reset();
        }
    }
}

impl<T: SubStates> StateDriver for Sub<T> {
    fn state(&self) -> TypeId {
        TypeId::of::<T>()
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
        std::any::type_name::<T>()
    }

    fn scoped_in(&self) -> Option<TypeId> {
        Some(TypeId::of::<T::Source>())
    }

    fn exists(&self, world: &World) -> bool {
        world.get::<State<T>>().is_some()
    }

    fn keeps_through(&self, to: Option<&dyn Any>, same: bool) -> bool {
        !same
            && to
                .and_then(|to| to.downcast_ref::<T::Source>())
                .is_some_and(|to| T::should_exist(to).is_some())
    }

    fn leave(&mut self, world: &mut World) -> Result<(), StateError> {
        self.drop_request(world);
        let Some(current) = world.get::<State<T>>().map(|state| state.0.clone()) else {
            return Ok(());
        };
        // The sub-states inside this one were made to leave already.
        transition::<T>(world, Some(current), None, &mut nothing_inside)
    }

    fn step(
        &mut self,
        world: &mut World,
        may_move: bool,
        before_exit: &mut BeforeExit<'_>,
    ) -> Result<Step, StepFailure> {
        let version = world.service_version(self.source);
        if self.seen != Some(version) {
            let held = world.get::<State<T>>().map(|state| state.0.clone());
            let initial = world
                .get::<State<T::Source>>()
                .and_then(|source| T::should_exist(&source.0));
            match (held, initial) {
                (None, Some(initial)) => {
                    if !may_move {
                        return Err(StepFailure::Refused);
                    }
                    self.seen = Some(version);
                    // A request waiting for it is its first value.
                    let first = world
                        .service_by_id_mut(self.next)
                        .and_then(|slot| slot.downcast_mut::<NextState<T>>())
                        .and_then(NextState::take)
                        .map_or(initial, |(requested, _)| requested);
                    let label = format!("{first:?}");
                    return transition::<T>(world, None, Some(first), before_exit)
                        .map(|()| Step::Moved("none".to_owned(), label))
                        .map_err(StepFailure::Schedule);
                }
                // Its source went without leaving a value (a computed
                // source, a state removed by hand): it goes too.
                (Some(held), None) => {
                    if !may_move {
                        return Err(StepFailure::Refused);
                    }
                    self.seen = Some(version);
                    self.drop_request(world);
                    let from = label_of(Some(&held));
                    return transition::<T>(world, Some(held), None, before_exit)
                        .map(|()| Step::Moved(from, "none".to_owned()))
                        .map_err(StepFailure::Schedule);
                }
                _ => self.seen = Some(version),
            }
        }
        if world.get::<State<T>>().is_none() {
            // Not held: a request for it has nothing to apply to.
            self.drop_request(world);
            return Ok(Step::Idle);
        }
        apply_request::<T>(world, self.next, may_move, before_exit)
    }
}

impl World {
    /// Adds the sub-state `T`, living inside its source (which must be
    /// added first): it is entered and left at the state points that
    /// follow, as its source enters and leaves the values it exists in.
    ///
    /// # Errors
    /// [`StateError::AlreadyAdded`], or [`StateError::NoSource`].
    pub fn add_sub_state<T: SubStates>(&mut self) -> Result<(), StateError> {
        self.check_derived_state::<T, T::Source>()?;
        self.insert(NextState::<T>::default());
        // Snapshots capture its value and pending request.
        self.snapshots.add_service::<State<T>>();
        self.snapshots.add_service::<NextState<T>>();
        let next = self.service_id::<NextState<T>>();
        let source = self.service_id::<State<T::Source>>();
        self.states.push(Box::new(Sub::<T> {
            source,
            seen: None,
            next,
            _state: std::marker::PhantomData,
        }));
        Ok(())
    }
}
