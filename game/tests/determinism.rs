//! The game is reproducible: the final checksum is the same for every
//! thread count, and every capability it exercises did its work.

use sluice_game::{Config, run};

fn config(threads: usize) -> Config {
    Config {
        threads,
        frames: 300,
        entities: 600,
        timing: false,
    }
}

#[test]
fn checksum_is_the_same_on_1_2_and_4_threads() {
    let reports: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| run(&config(threads), |_| {}).expect("the game runs"))
        .collect();
    let one = &reports[0];
    for report in &reports[1..] {
        assert_eq!(
            one.checksum, report.checksum,
            "1 thread vs {} threads:\n{}\n{}",
            report.config.threads, one.state, report.state
        );
        assert_eq!(one.state, report.state);
    }
    // The run exercised what it claims: combat through messages, deaths
    // and respawns through commands, sparks, assets, the factory skipped
    // while the terrain held still, input in step.
    let state = &one.state;
    for expected in [
        "asset chunks 2; terrain revision 2, navigation built 3 times",
        "inputs 300 (0 out of step), network orders 20 (0 out of step)",
    ] {
        assert!(state.contains(expected), "{expected:?} not in {state}");
    }
    assert!(
        !state.contains("kills: red 0 blue 0"),
        "nobody died: {state}"
    );
    assert!(!state.contains("sparks emitted 0"), "no sparks: {state}");
}

#[test]
fn another_run_gives_another_checksum() {
    let base = run(&config(2), |_| {}).expect("the game runs");
    let more = run(
        &Config {
            entities: 602,
            ..config(2)
        },
        |_| {},
    )
    .expect("the game runs");
    assert_ne!(base.checksum, more.checksum);
}
