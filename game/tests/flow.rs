//! The game as plugins and its flow through states: title, battle,
//! results, driven frame by frame; the battle's checksum, pinned.

use sluice_game::combat::Score;
use sluice_game::flow::{GameFlow, Outcome};
use sluice_game::units::Census;
use sluice_game::{Config, Game, report, run};

fn config(threads: usize, frames: u64) -> Config {
    Config {
        threads,
        frames,
        entities: 600,
        timing: false,
    }
}

#[test]
fn title_battle_results() {
    let mut game = Game::new(&config(2, 40)).unwrap();
    // Built from plugins, every one of them built.
    let plugins: Vec<(String, bool)> = game
        .world()
        .plugins()
        .map(|(name, built)| (name.to_owned(), built))
        .collect();
    assert_eq!(plugins.len(), 12, "{plugins:?}");
    assert!(plugins.iter().all(|(_, built)| *built));
    assert!(plugins[0].0.ends_with("FramePlugin"));
    assert!(plugins[10].0.ends_with("TurretsPlugin"));
    assert!(plugins[11].0.ends_with("FlowPlugin"));

    assert_eq!(game.flow(), GameFlow::Title);
    game.frame().unwrap();
    // Headless, the title lasted no frame.
    assert_eq!(game.flow(), GameFlow::Battle);
    for _ in 1..39 {
        game.frame().unwrap();
        assert_eq!(game.flow(), GameFlow::Battle);
    }
    assert!(!game.world().get::<Outcome>().unwrap().tallied);
    game.frame().unwrap();
    assert_eq!(game.flow(), GameFlow::Results);
    let outcome = game.world().get::<Outcome>().unwrap().clone();
    assert!(outcome.tallied);
    assert_eq!(outcome.kills, game.world().get::<Score>().unwrap().kills);
    assert_eq!(outcome.alive, game.world().get::<Census>().unwrap().alive);
    assert!(outcome.alive.iter().sum::<u64>() > 0);

    // The battle is over: no more frames run.
    let before = report::checksum(&mut game);
    assert_eq!(game.frame().unwrap(), std::time::Duration::ZERO);
    assert_eq!(game.frames(), 40);
    assert_eq!(report::checksum(&mut game), before);
}

#[test]
fn a_battle_of_no_length_never_ends() {
    // The `game` bench drives a game of `frames: 0` for as long as it
    // measures.
    let mut game = Game::new(&config(1, 0)).unwrap();
    for _ in 0..5 {
        game.frame().unwrap();
    }
    assert_eq!(game.flow(), GameFlow::Battle);
    assert_eq!(game.frames(), 5);
}

#[test]
fn the_battle_checksum_is_pinned() {
    // Taken when the game began mounting turrets by default (the plugin
    // split, commit 470756f, had not moved the earlier values
    // 0xebf1_6bf3_9c84_03fd and 0xb97b_ba98_bf6e_ac4c); 2 threads, the
    // same on 1 and 4 (`determinism.rs`).
    for (frames, entities, expected) in [
        (300, 600, 0xf8e6_ee4d_fe0d_b0af_u64),
        (120, 3000, 0x092d_6b2c_3e85_617c),
    ] {
        let report = run(
            &Config {
                entities,
                ..config(2, frames)
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(
            report.checksum, expected,
            "{frames} frames, {entities} units"
        );
    }
}
