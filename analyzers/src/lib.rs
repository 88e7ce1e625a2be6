//! Static checks over sluice sources, shared by the `sluice` CLI.

pub mod check;
