//! Each body of the `game_rollback` bench once, at a small size: a
//! rollback gives back the frames it replays, the checksum is the same on
//! every thread count, and a save loads back to the checksum saved.

#[allow(dead_code)]
#[path = "../benches/game_rollback_workload/mod.rs"]
mod game_rollback_workload;

use game_rollback_workload::{
    ROLLBACK_FRAMES, capture, checksum, game, load, restore, rollback8, save,
};
use sluice::Snapshot;

const UNITS: usize = 600;

#[test]
fn every_body_runs_and_gives_back_what_it_saved() {
    let (mut game, snapshot) = game(UNITS, 1);
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

    // A save (the captains' references as their entities) loads back to
    // the checksum saved, after the battle moved on.
    let mut bytes = vec![1, 2, 3];
    save(&snapshot, &mut bytes);
    assert!(bytes.starts_with(b"SLUICESV"), "emptied first");
    rollback8(&mut game, &snapshot);
    load(&mut game, &bytes);
    assert_eq!(game.frame(), start);
    capture(&game, &mut after);
    assert_eq!(checksum(&after), saved);
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
