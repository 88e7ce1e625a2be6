//! The `game_rollback` bench's bodies, over the game's own rolled-back
//! world ([`RollbackGame`]: the battle's units, captains, turrets and their
//! hierarchy, with every service that changes), shared with its test
//! (`benches/tests/game_rollback_workload.rs`).

use sluice::Snapshot;
use sluice_game::rollback::{BattleInput, BattleSetup, PLAYERS, RollbackGame};

/// Units in the bench's two worlds.
pub const COUNTS: [usize; 2] = [20_000, 200_000];

/// Frames the battle runs before it is measured, so that units have
/// moved, fought and died.
pub const WARM_UP_FRAMES: u64 = 30;

/// Frames run again in one rollback.
pub const ROLLBACK_FRAMES: u64 = 8;

/// Both players' scripted inputs of `frame` (the example's).
pub fn inputs(frame: u64) -> [BattleInput; PLAYERS] {
    std::array::from_fn(|player| BattleInput::scripted(39, player, frame))
}

/// The game's rolled-back battle of `units` units on `threads` threads,
/// run [`WARM_UP_FRAMES`] frames, and a warm snapshot of it.
pub fn game(units: usize, threads: usize) -> (RollbackGame, Snapshot) {
    let mut game = RollbackGame::new(&BattleSetup {
        threads,
        entities: units,
    })
    .expect("the pool starts");
    for frame in 0..WARM_UP_FRAMES {
        game.advance(inputs(frame)).expect("frame");
    }
    let mut snapshot = Snapshot::new();
    game.save_into(&mut snapshot).expect("snapshot");
    (game, snapshot)
}

/// `snapshot_into` a warm snapshot.
pub fn capture(game: &RollbackGame, snapshot: &mut Snapshot) {
    game.save_into(snapshot).expect("snapshot");
}

/// `World::restore`.
pub fn restore(game: &mut RollbackGame, snapshot: &Snapshot) {
    game.restore(snapshot).expect("restore");
}

/// The checksum of the snapshot (what the session sends ggrs each save).
pub fn checksum(snapshot: &Snapshot) -> u64 {
    snapshot.checksum()
}

/// Writes `snapshot` as a save into `bytes` (emptied first, its memory
/// kept): everything but the director's scripts, which have no saved form
/// (a load leaves the world's own as they are).
pub fn save(snapshot: &Snapshot, bytes: &mut Vec<u8>) {
    bytes.clear();
    snapshot.write_to(&mut *bytes).expect("the battle saves");
}

/// `World::load_from` of a save: read, checked, restored, and the
/// captains' references bound again.
pub fn load(game: &mut RollbackGame, bytes: &[u8]) {
    game.world_mut().load_from(bytes).expect("the save loads");
}

/// One 8-frame rollback end to end: restore `snapshot`, then run the
/// [`ROLLBACK_FRAMES`] frames after it again with their inputs.
pub fn rollback8(game: &mut RollbackGame, snapshot: &Snapshot) {
    game.restore(snapshot).expect("restore");
    let start = game.frame();
    for frame in start..start + ROLLBACK_FRAMES {
        game.advance(inputs(frame)).expect("frame");
    }
}
