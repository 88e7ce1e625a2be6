//! Procedural macros for sluice. Not written yet: this crate exports nothing.
