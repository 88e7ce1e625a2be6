//! Concurrent and pooled collections for the sluice runtime.
//!
//! Each structure is safe only under the access pattern the frame graph
//! permits, and its Rust signature says which: operations that may overlap
//! take `&self`, operations that must run alone take `&mut self`, so the
//! borrow checker holds the phase boundary.

mod sync;
