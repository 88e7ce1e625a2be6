//! Scripts whose state is data: [`StepScript`], restorable from a
//! [`ScriptSnapshot`](super::ScriptSnapshot).

use std::time::Duration;

use super::{ScriptId, ScriptKind};

/// A script written as a state machine over plain data, so it can be
/// snapshotted and restored ([`Scripts::snapshot`](super::Scripts::snapshot)).
///
/// To be restorable a script must keep all its state in `self` (no
/// captured handles, channels or `async` state) and be `Clone` (and
/// `Sync`, as plain data is: a world's snapshot clones it through a shared
/// borrow of the world, [`World::snapshot`](crate::World::snapshot)); what it
/// waits on is the [`Wait`] it returns, which the snapshot records. An
/// `async` script cannot be snapshotted: its state is compiler-generated.
///
/// ```
/// use std::time::Duration;
/// use sluice::script::{ScriptKind, Step, StepScript, Wait};
///
/// struct Waves;
/// impl ScriptKind for Waves {
///     type View<'v> = u32; // enemies alive
///     type Intent = u32;   // spawn this many
/// }
///
/// #[derive(Clone)]
/// struct Spawner { wave: u32 }
///
/// impl StepScript<Waves> for Spawner {
///     fn step(&mut self, cx: &mut Step<'_, '_, Waves>) -> Wait<Waves> {
///         if self.wave == 3 {
///             return Wait::Done;
///         }
///         self.wave += 1;
///         cx.emit(self.wave * 10);
///         Wait::Until(|alive| *alive == 0)
///     }
/// }
/// ```
pub trait StepScript<K: ScriptKind>: Send + Sync + 'static {
    /// Runs the script from where it waited to its next wait.
    fn step(&mut self, cx: &mut Step<'_, '_, K>) -> Wait<K>;

    /// The wait this script is in after its last step, given back from
    /// its state alone, for a script whose last step returned
    /// [`Wait::Until`]: a save on disk (`World::save_step_script`, the
    /// `serde` feature) records that the script waits on a condition, not the function (a
    /// function pointer means nothing in another process), and a load asks
    /// the loaded state for it again. Return the same `Wait::Until` as the
    /// step did (one function returning it, called from both, keeps them
    /// one). `None` (the default), or a wait that is not a condition: a
    /// script waiting on a condition cannot be saved to disk (the save is
    /// refused, naming it). In-memory snapshots never call it.
    fn resume_wait(&self) -> Option<Wait<K>> {
        None
    }
}

/// A condition on the gather's view, as [`Wait::Until`] holds it.
pub(crate) type UntilFn<K> = for<'a, 'v> fn(&'a <K as ScriptKind>::View<'v>) -> bool;

/// What a [`StepScript`] waits on after a step.
pub enum Wait<K: ScriptKind> {
    /// Simulation time ([`SimClock::now`](super::SimClock::now)) to pass.
    For(Duration),
    /// Fixed-cadence simulation time to pass.
    ForFixed(Duration),
    /// The next gather that runs scripts.
    NextTick,
    /// A condition on the gather's view, checked at every gather.
    Until(for<'a, 'v> fn(&'a K::View<'v>) -> bool),
    /// Nothing: the script has ended.
    Done,
}

impl<K: ScriptKind> Clone for Wait<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: ScriptKind> Copy for Wait<K> {}

impl<K: ScriptKind> std::fmt::Debug for Wait<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wait::For(duration) => f.debug_tuple("For").field(duration).finish(),
            Wait::ForFixed(duration) => f.debug_tuple("ForFixed").field(duration).finish(),
            Wait::NextTick => f.write_str("NextTick"),
            Wait::Until(_) => f.write_str("Until(..)"),
            Wait::Done => f.write_str("Done"),
        }
    }
}

/// A [`StepScript`]'s view of one gather: time, the view, its intents.
pub struct Step<'s, 'v, K: ScriptKind> {
    pub(super) id: ScriptId,
    pub(super) now: Duration,
    pub(super) fixed_now: Duration,
    pub(super) view: &'s K::View<'v>,
    pub(super) intents: &'s mut Vec<K::Intent>,
}

impl<K: ScriptKind> std::fmt::Debug for Step<'_, '_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("id", &self.id)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<'v, K: ScriptKind> Step<'_, 'v, K> {
    /// This script's id.
    pub fn id(&self) -> ScriptId {
        self.id
    }

    /// Simulation time at this gather.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Fixed-cadence simulation time at this gather.
    pub fn fixed_now(&self) -> Duration {
        self.fixed_now
    }

    /// The gather's view.
    pub fn view(&self) -> &K::View<'v> {
        self.view
    }

    /// Hands an intent to the collect phase.
    pub fn emit(&mut self, intent: K::Intent) {
        self.intents.push(intent);
    }
}

/// A boxed step script that can copy itself (for snapshots).
pub(crate) trait StepBody<K: ScriptKind>: Send + Sync {
    fn step(&mut self, cx: &mut Step<'_, '_, K>) -> Wait<K>;
    fn boxed_clone(&self) -> Box<dyn StepBody<K>>;
    /// Clones itself into `into`: through [`Clone::clone_from`] when
    /// `into` holds a script of its own type (a snapshot taken again
    /// reuses the memory), else into a new box.
    fn clone_into_box(&self, into: &mut Box<dyn StepBody<K>>);
    /// Itself as `Any`, for `clone_into_box`'s downcast.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// Itself as `Any`, for a save's codec (found by its type).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    fn as_any(&self) -> &dyn std::any::Any;
    /// Its type's name, for errors.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    fn type_name(&self) -> &'static str;
    /// The condition of [`StepScript::resume_wait`], if it gives one.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    fn resume_until(&self) -> Option<UntilFn<K>>;
}

impl<K: ScriptKind, S: StepScript<K> + Clone> StepBody<K> for S {
    fn step(&mut self, cx: &mut Step<'_, '_, K>) -> Wait<K> {
        StepScript::step(self, cx)
    }

    fn boxed_clone(&self) -> Box<dyn StepBody<K>> {
        Box::new(self.clone())
    }

    fn clone_into_box(&self, into: &mut Box<dyn StepBody<K>>) {
        match into.as_any_mut().downcast_mut::<S>() {
            Some(kept) => kept.clone_from(self),
            None => *into = Box::new(self.clone()),
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<S>()
    }

    fn resume_until(&self) -> Option<UntilFn<K>> {
        match StepScript::resume_wait(self) {
            Some(Wait::Until(condition)) => Some(condition),
            _ => None,
        }
    }
}
