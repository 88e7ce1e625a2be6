//! Concurrent and pooled collections for the sluice runtime.
//!
//! Each structure is safe only under the access pattern the frame graph
//! permits, and its Rust signature says which: operations that may overlap
//! take `&self`, operations that must run alone take `&mut self`, so the
//! borrow checker holds the phase boundary.
//!
//! [The guide](https://example.invalid/sluice/blob/main/docs/guide/README.md) shows them
//! in use (its chapter "The collections"), and
//! [ARCHITECTURE.md](https://example.invalid/sluice/blob/main/ARCHITECTURE.md) places
//! this crate under the runtime, which depends on it; it depends on nothing
//! else of ours.

mod sync;
#[cfg(all(test, not(loom)))]
mod test_support;

mod append_arena;
mod get_or_add;
mod ledger_map;
mod lock_on_resize_array;
pub mod mpsc;
mod pool;
mod pooled_list;
mod ring_histories;
mod ring_history;

pub use append_arena::{AppendArena, ArenaAppender, Drain as AppendArenaDrain, Full};
pub use get_or_add::{GetOrAddMap, Ref as GetOrAddRef};
pub use ledger_map::LedgerMap;
pub use lock_on_resize_array::{
    Appender as LockOnResizeArrayAppender, Drain as LockOnResizeArrayDrain,
    Iter as LockOnResizeArrayIter, IterMut as LockOnResizeArrayIterMut, LockOnResizeArray,
};
pub use mpsc::{Consumer, Drain as ConsumerDrain, Producer};
pub use pool::{Pool, Pooled, Taken};
pub use pooled_list::PooledList;
pub use ring_histories::{
    History as RingHistoriesHistory, Iter as RingHistoriesIter, RingHistories,
};
pub use ring_history::{Iter as RingHistoryIter, RingHistory};
