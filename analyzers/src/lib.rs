//! Static checks over sluice sources (`check`) and the reader of the plan
//! text format (`plan_cli`): the library behind the `sluice` CLI.
//!
//! [The guide](https://example.invalid/sluice/blob/main/docs/guide/README.md)'s chapter
//! "The command lines" shows `sluice plan` and `sluice check` at work;
//! [ARCHITECTURE.md](https://example.invalid/sluice/blob/main/ARCHITECTURE.md) says
//! where the checks shared with the macros live (`sluice-rules`).

pub mod check;
pub mod cli;
pub mod input;
pub mod plan_cli;
mod progress;
