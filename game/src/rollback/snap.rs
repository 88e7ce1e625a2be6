//! TEMPORARY stand-in for `sluice::snapshot` until `snapcore` lands.
#![allow(missing_docs, dead_code)]
use sluice::World;
#[derive(Debug, Default)]
pub struct Snapshot;
#[derive(Debug)]
pub struct SnapshotError;
#[derive(Debug)]
pub struct RestoreError;
impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stub")
    }
}
impl std::fmt::Display for RestoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stub")
    }
}
pub trait Shim {
    fn snapshot_component<T: Send + Sync + Clone + 'static>(&mut self) -> &mut Self;
    fn snapshot_service<T: Send + Sync + Clone + 'static>(&mut self) -> &mut Self;
    fn snapshot_into(&self, into: &mut Snapshot) -> Result<(), SnapshotError>;
    fn restore(&mut self, s: &Snapshot) -> Result<(), RestoreError>;
}
impl Shim for World {
    fn snapshot_component<T: Send + Sync + Clone + 'static>(&mut self) -> &mut Self {
        self
    }
    fn snapshot_service<T: Send + Sync + Clone + 'static>(&mut self) -> &mut Self {
        self
    }
    fn snapshot_into(&self, _into: &mut Snapshot) -> Result<(), SnapshotError> {
        Ok(())
    }
    fn restore(&mut self, _s: &Snapshot) -> Result<(), RestoreError> {
        Err(RestoreError)
    }
}
