//! The battle reaches the same outcome on sluice and on bevy_ecs, and on
//! sluice at one thread and at two: units, kills, hits and a checksum of
//! every unit's exact state after the armies have fought a while.

use sluice_benches::battle::bevy::BevyBattle;
use sluice_benches::battle::sluice::SluiceBattle;
use sluice_benches::battle::{Battle, Outcome, WARM_UP_FRAMES};
use sluice_benches::threads::init_bevy_pool;

const UNITS: usize = 2_000;

fn run(mut battle: impl Battle, frames: u64) -> Outcome {
    for _ in 0..frames {
        battle.frame();
    }
    battle.outcome()
}

#[test]
fn sluice_and_bevy_reach_the_same_outcome() {
    init_bevy_pool(2);
    let frames = WARM_UP_FRAMES + 120;
    let bevy = run(BevyBattle::new(UNITS), frames);
    let sluice_one = run(SluiceBattle::new(UNITS, 1), frames);
    let sluice_two = run(SluiceBattle::new(UNITS, 2), frames);
    // The battle was fought: units died and were replaced, all of them.
    assert!(bevy.score.kills.iter().all(|&kills| kills > 20), "{bevy:?}");
    assert!(bevy.score.hits > bevy.score.kills.iter().sum::<u64>());
    assert_eq!(bevy.alive, [UNITS as u64 / 2; 2]);
    assert_eq!(sluice_one, bevy, "sluice on one thread and bevy differ");
    assert_eq!(sluice_two, bevy, "sluice on two threads and bevy differ");
}

#[test]
fn the_outcome_moves_with_the_frames() {
    init_bevy_pool(2);
    let early = run(SluiceBattle::new(UNITS, 2), WARM_UP_FRAMES);
    let later = run(SluiceBattle::new(UNITS, 2), WARM_UP_FRAMES + 1);
    assert_ne!(early.checksum, later.checksum);
}
