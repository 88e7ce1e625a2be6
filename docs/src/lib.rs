//! The sluice guide, compiled: each module below is one chapter of
//! [`docs/guide/`](https://example.invalid/sluice/docs/guide), included
//! with `#[doc = include_str!(..)]`, so every Rust block in the guide
//! builds and runs as a doctest (`cargo test -p sluice-guide --doc`) and
//! the guide cannot drift from the code. Each chapter has a runnable
//! example beside it in `examples/` (`cargo run --example NAME`).

#[doc = include_str!("../guide/01-systems-and-services.md")]
pub mod systems_and_services {}

#[doc = include_str!("../guide/02-the-plan.md")]
pub mod the_plan {}

#[doc = include_str!("../guide/03-organising-a-frame.md")]
pub mod organising_a_frame {}

#[doc = include_str!("../guide/04-entities-and-queries.md")]
pub mod entities_and_queries {}

#[doc = include_str!("../guide/05-messages.md")]
pub mod messages {}

#[doc = include_str!("../guide/06-scripts.md")]
pub mod scripts {}

#[doc = include_str!("../guide/07-main-thread-and-appenders.md")]
pub mod main_thread_and_appenders {}

#[doc = include_str!("../guide/08-batch-processors.md")]
pub mod batch_processors {}

#[doc = include_str!("../guide/09-the-executor.md")]
pub mod the_executor {}

#[doc = include_str!("../guide/10-spike-watch.md")]
pub mod spike_watch {}

#[doc = include_str!("../guide/11-loom.md")]
pub mod loom {}

#[doc = include_str!("../guide/12-clis.md")]
pub mod clis {}

#[doc = include_str!("../guide/13-collections.md")]
pub mod collections {}

#[doc = include_str!("../guide/14-plugins-and-states.md")]
pub mod plugins_and_states {}
#[doc = include_str!("../guide/15-hierarchies.md")]
pub mod hierarchies {}
#[doc = include_str!("../guide/16-hooks-and-observers.md")]
pub mod hooks_and_observers {}
#[doc = include_str!("../guide/17-rendering.md")]
pub mod rendering {}
#[doc = include_str!("../guide/18-the-live-inspector.md")]
pub mod the_live_inspector {}
#[doc = include_str!("../guide/19-snapshots-saves-and-rollback.md")]
pub mod snapshots_saves_and_rollback {}
