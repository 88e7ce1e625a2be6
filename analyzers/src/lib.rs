//! Static checks over sluice sources (`check`) and the reader of the plan
//! text format (`plan_cli`): the library behind the `sluice` CLI.

pub mod check;
pub mod input;
pub mod plan_cli;
