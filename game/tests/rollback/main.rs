//! Issue 39's rollback battle: its inputs steer it, replays play back to
//! the same checksum, the lossy socket, and the ggrs sessions (sync test,
//! two peers in one process, two processes over UDP).

mod battle;
mod replay;
mod sessions;
mod socket;

use sluice_game::rollback::BattleSetup;

/// A battle small enough for debug builds.
pub fn small(threads: usize) -> BattleSetup {
    BattleSetup {
        threads,
        entities: if cfg!(debug_assertions) { 600 } else { 4_000 },
    }
}
