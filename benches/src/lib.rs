//! Shared workload generators for the sluice benchmarks.

pub mod battle;
pub mod plan_workload;
pub mod rounds;
pub mod services;
pub mod spike_worlds;
pub mod threads;
