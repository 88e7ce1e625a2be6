//! sluice: a runtime that runs a game's frame as a graph.
//!
//! Systems and factories declare the services they touch; the planner turns
//! those declarations into a plan whose edges carry their reasons.

pub mod access;
pub mod node;
pub mod registry;

pub use access::{AccessKind, AccessSet, ServiceId, ServiceTable};
pub use node::{Label, Marker, NodeBuilder, NodeDescriptor};
pub use registry::{Registry, ServiceSlot};
