//! Durable scripts: long-lived game logic written as straight-line code
//! that waits (reference 003's "durable scripts scheduled as systems across
//! gather and collect phases against a simulation clock, with their own
//! storage").
//!
//! A script kind ([`ScriptKind`]) names what its scripts see while they run
//! (a [`View`](ScriptKind::View) of shared borrows) and what they produce
//! ([`Intent`](ScriptKind::Intent)s). Its scripts live in a [`Scripts`]
//! service, and a game runs them with two ordinary systems every tick:
//!
//! - **gather** takes `&mut Scripts<K>` and shared access to whatever the
//!   view borrows, and calls [`Scripts::gather`]: every script that is due
//!   runs on the world's pool, in parallel, reading the view and pushing
//!   intents into its own storage;
//! - **collect** takes `&mut Scripts<K>` and gated access to what the
//!   intents change, and applies [`Scripts::drain_intents`], which yields
//!   them in script order (start order), then emission order.
//!
//! Scripts touch nothing but the view and their own intents while they run,
//! so the result is the same for every thread count.
//!
//! A script is either `async` ([`Scripts::start`], awaiting
//! [`ScriptCx::wait`], [`wait_fixed`](ScriptCx::wait_fixed),
//! [`wait_until`](ScriptCx::wait_until) and
//! [`next_tick`](ScriptCx::next_tick)) or a [`StepScript`]: a state machine
//! over plain data, which [`Scripts::snapshot`] can save and
//! [`Scripts::restore`] bring back (with the world's clock,
//! [`World::clock_snapshot`](crate::World::clock_snapshot), that is a
//! save). A store inserted with
//! [`World::insert_scripts`](crate::World::insert_scripts) is part of the
//! world's own snapshots ([`World::snapshot`](crate::World::snapshot)):
//! rolled back with the rest, no extra call. Waits are in [`SimClock`] time: a paused
//! clock wakes no script. A panicking script ends with a [`ScriptFailure`]
//! naming it; no other script is affected.
//!
//! ```
//! use std::time::Duration;
//! use sluice::script::{ScriptKind, Scripts, SimClock};
//! use sluice::{NodeBuilder, World};
//!
//! /// Enemy waves: scripts see how many enemies are alive and ask for spawns.
//! struct Waves;
//! impl ScriptKind for Waves {
//!     type View<'v> = &'v Alive;
//!     type Intent = u32;
//! }
//! struct Alive(u32);
//!
//! let mut world = World::new();
//! world.insert(SimClock::new());
//! world.insert(Alive(0));
//! let mut scripts = Scripts::<Waves>::new();
//! scripts.start("waves", |cx| async move {
//!     for wave in 1..=3 {
//!         cx.wait_until(|alive| alive.0 == 0).await;
//!         cx.emit(wave * 5);
//!         cx.wait(Duration::from_secs(1)).await;
//!     }
//! });
//! world.insert(scripts);
//! world.add_system(NodeBuilder::new("waves.gather").system(
//!     |scripts: &mut Scripts<Waves>, clock: &SimClock, alive: &Alive| {
//!         scripts.gather(clock, &alive);
//!     },
//! ));
//! world.add_system(NodeBuilder::new("waves.collect").system(
//!     |scripts: &mut Scripts<Waves>, alive: &mut Alive| {
//!         for (_script, spawn) in scripts.drain_intents() {
//!             alive.0 += spawn;
//!         }
//!     },
//! ));
//! world.update(Duration::from_millis(500)).unwrap();
//! assert_eq!(world.get::<Alive>().unwrap().0, 5, "the first wave at once");
//! world.get_mut::<Alive>().unwrap().0 = 0; // the player clears it
//! world.update(Duration::from_secs(1)).unwrap(); // its wait is over: wave 2
//! assert_eq!(world.get::<Alive>().unwrap().0, 10);
//! ```

mod clock;
mod cx;
#[cfg(feature = "serde")]
pub(crate) mod saved;
mod snapshot;
pub(crate) mod step;
mod store;
mod timers;

use std::panic::Location;
use std::time::Duration;

pub use clock::SimClock;
pub use cx::{NextTick, ScriptCx, WaitFor, WaitUntil};
pub use snapshot::{NotRestorable, ScriptSnapshot};
pub use step::{Step, StepScript, Wait};
pub use store::{ScriptFailure, ScriptInfo, Scripts};

/// A kind of script: what its scripts read while they run and what they
/// produce.
pub trait ScriptKind: 'static {
    /// What a running script reads: built by the gather system from its
    /// shared parameters (a reference, a tuple of references, a struct of
    /// them). Shared by the scripts running in parallel.
    type View<'v>: Sync;
    /// What a script asks the collect phase to do.
    type Intent: Send + 'static;
}

/// A script in a [`Scripts`] store: unique for the store's lifetime. An
/// id never names another script: not once its script is cancelled or
/// ended, nor once a [`restore`](Scripts::restore) took it away, and ids
/// handed out after a restore are new ones. A restored script keeps its
/// saved id (so ids a game saved beside a snapshot stay good) unless the
/// store had handed that id to another script: see [`Scripts::restore`].
/// Ids are plain numbers: two worlds that start the same scripts in the
/// same order hand out the same ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScriptId {
    /// Start order: the order collect applies intents in.
    serial: u64,
    /// The slot in the store.
    key: u32,
}

impl ScriptId {
    /// The start order of this script in its store (from 0).
    pub fn serial(self) -> u64 {
        self.serial
    }
}

impl std::fmt::Display for ScriptId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.serial)
    }
}

/// What a script is waiting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Waiting {
    /// Started, not yet run: it runs at the next gather.
    Start,
    /// [`SimClock::now`] to reach this time.
    Time(Duration),
    /// [`SimClock::fixed_now`] to reach this time.
    FixedTime(Duration),
    /// The next gather.
    NextTick,
    /// A condition, checked at every gather; where an `async` script
    /// awaited it.
    Condition(Option<&'static Location<'static>>),
    /// A future that is not sluice's: polled at every gather.
    Other,
}
