//! What a game written with sluice reaches for: `use sluice::prelude::*;`.
//!
//! The world and its registrations, the signature vocabulary (services,
//! queries, messages, appenders, commands, run conditions and their
//! combinators, per-system state), organisation, and the macros. Everything
//! else (the plan's views, the engine, the collections' handles) is imported
//! by name from the crate root.
//!
//! ```
//! use sluice::prelude::*;
//!
//! #[derive(Default)]
//! struct Score(u32);
//! struct Paused(bool);
//!
//! fn paused(paused: &Paused) -> bool {
//!     paused.0
//! }
//!
//! fn tally(mut frames: Local<u32>, score: &mut Score) {
//!     *frames += 1;
//!     score.0 = *frames;
//! }
//!
//! let mut world = World::new();
//! world.init_service::<Score>();
//! world.insert(Paused(false));
//! world.add_system(NodeBuilder::new("tally").system(tally).run_if(not(paused)));
//! world.run_iteration()?;
//! world.run_iteration()?;
//! assert_eq!(world.get::<Score>().unwrap().0, 2);
//! # Ok::<(), IterationError>(())
//! ```

pub use crate::entity::{
    Added, AnyOf, Bundle, Changed, Component, ComponentRef, Entity, EntityError, Has, Mut, Or,
    Populated, Query, Ref, Removed, Single, StorageType, Target, With, Without,
};
pub use crate::entity::{Allow, Disabled};
pub use crate::entity::{ChildOf, Children, GlobalTransform, Transform, TransformPropagation};
pub use crate::exec::BatchProcessor;
pub use crate::message::{MessageSender, Publish, Subscribe};
pub use crate::node::{Marker, NodeBuilder};
pub use crate::organise::{Cadence, Group, Phase, Schedule};
pub use crate::plugin::{Plugin, PluginGroup, PluginGroupBuilder, Requires};
pub use crate::snapshot::{RestoreError, RollbackBuffer, Snapshot, SnapshotError};
pub use crate::state::{
    ComputedStates, DespawnOnEnter, DespawnOnExit, NextState, OnEnter, OnExit, OnTransition, State,
    States, SubStates, in_state,
};
pub use crate::system::{
    Append, AppendBuffer, ConditionExt, Gate, Local, Next, NonSend, NonSendMut, Out, Tracked, not,
    service_added, service_changed, service_exists,
};
pub use crate::world::{
    Commands, Context, EntityCommands, EntityMut, EntityRef, ExecutorKind, FixedTime, FrameTime,
    FromWorld, IntoSystem, IterationError, NodeSpec, RunSystemError, SystemId, World,
};
pub use sluice_macros::{Bundle, factory, run_condition, system};
