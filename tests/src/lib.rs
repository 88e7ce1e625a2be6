//! Helpers shared by the sluice integration tests.
