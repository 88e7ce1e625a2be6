//! Helpers shared by the sluice integration tests.

/// The README's Rust examples, compiled and run as doctests so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
