//! Snapshots (placeholder until the snapcore skeleton is merged).

#[cfg(feature = "serde")]
mod checksum;
#[cfg(feature = "serde")]
mod file;
