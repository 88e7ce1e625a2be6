//! sluice: a runtime that runs a game's frame as a graph.
//!
//! Systems and factories declare the services they touch; the planner turns
//! those declarations into a plan whose edges carry their reasons.
