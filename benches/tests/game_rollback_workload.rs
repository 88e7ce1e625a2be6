//! Each body of the `game_rollback` bench once, at a small size: a
//! rollback gives back the frames it replays, the checksum is the same on
//! every thread count, and a save loads back to the state it holds.

#[allow(dead_code)]
#[path = "../benches/game_rollback_workload/mod.rs"]
mod game_rollback_workload;

use game_rollback_workload::{
    ROLLBACK_FRAMES, capture, checksum, game, load_file, restore, rollback8, save_file,
};
use sluice::Snapshot;

const UNITS: usize = 600;

#[test]
fn every_body_runs_and_gives_back_what_it_saved() {
    let (mut game, mut snapshot) = game(UNITS, 1);
    let start = game.frame();
    let saved = checksum(&snapshot);

    // A rollback runs the same 8 frames each time.
    rollback8(&mut game, &snapshot);
    assert_eq!(game.frame(), start + ROLLBACK_FRAMES);
    let mut after = Snapshot::new();
    capture(&game, &mut after);
    let ahead = checksum(&after);
    assert_ne!(ahead, saved, "the frames moved the battle");
    rollback8(&mut game, &snapshot);
    capture(&game, &mut after);
    assert_eq!(
        checksum(&after),
        ahead,
        "a rollback replays the same frames"
    );

    restore(&mut game, &snapshot);
    assert_eq!(game.frame(), start);
    capture(&game, &mut after);
    assert_eq!(checksum(&after), saved);

    // A save on disk loads back to the saved state.
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("game.save");
    save_file(&snapshot, &path);
    rollback8(&mut game, &snapshot);
    load_file(&mut game, &path);
    capture(&game, &mut after);
    assert_eq!(checksum(&after), saved);
    assert_eq!(game.frame(), start);
    capture(&game, &mut snapshot);
    assert_eq!(checksum(&snapshot), saved);
}

#[test]
fn checksum_is_the_same_on_every_thread_count() {
    let serial = {
        let (mut game, snapshot) = game(UNITS, 1);
        rollback8(&mut game, &snapshot);
        let mut after = Snapshot::new();
        capture(&game, &mut after);
        checksum(&after)
    };
    for threads in [2, 4] {
        let (mut game, snapshot) = game(UNITS, threads);
        rollback8(&mut game, &snapshot);
        let mut after = Snapshot::new();
        capture(&game, &mut after);
        assert_eq!(checksum(&after), serial, "{threads} threads");
    }
}
