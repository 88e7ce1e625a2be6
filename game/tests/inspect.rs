//! `sluice-game --inspect ADDR`: the game runs with the live inspector on a
//! loopback address, and refuses any other address before running a frame.

use sluice_game::{Config, GameError, run_inspected};
use sluice_inspect::InspectError;

fn small() -> Config {
    Config {
        threads: 2,
        frames: 20,
        entities: 400,
        timing: true,
    }
}

#[test]
fn the_game_runs_with_the_inspector_on_and_gives_the_same_checksum() {
    let mut frames = 0;
    let inspected = run_inspected(&small(), Some("127.0.0.1:0"), |_| frames += 1).unwrap();
    assert_eq!(frames, 20);
    let plain = sluice_game::run(&small(), |_| {}).unwrap();
    assert_eq!(
        inspected.checksum, plain.checksum,
        "the inspector reads, never changes, the game"
    );
}

#[test]
fn a_non_loopback_address_is_refused_by_name() {
    let error = run_inspected(&small(), Some("0.0.0.0:0"), |_| {}).unwrap_err();
    assert!(matches!(
        error,
        GameError::Inspect(InspectError::NotLoopback { .. })
    ));
    assert!(error.to_string().contains("0.0.0.0:0"), "{error}");
}
