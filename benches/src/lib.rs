//! Shared workload generators for the sluice benchmarks.
