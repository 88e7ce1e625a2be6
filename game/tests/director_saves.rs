//! The director's scripts in a save: `scripts::start` registers the store
//! (`director`) and both step scripts (`wave_spawner`, `cutscene`), so a
//! world holding them is written to disk and loaded into a new one whose
//! director then asks for the same waves and beats, the cutscene's wait
//! for the first blood (a condition) included.

use std::time::Duration;

use sluice::script::{Scripts, SimClock};
use sluice::{NodeBuilder, World};
use sluice_game::scripts::{self, Battle, Cue, Director, Waves};

/// The cues collect took, in order.
#[derive(Debug, Default)]
struct Cues(Vec<Cue>);

/// A world with the director's scripts, gathered against a `Battle`
/// service the test sets, its cues kept.
fn world() -> World {
    let mut world = World::new();
    scripts::start(
        &mut world,
        Waves {
            period: Duration::from_millis(700),
            size: 2,
            cap: 100,
        },
    );
    world.insert(Battle { alive: 0, kills: 0 });
    world.insert(Cues::default());
    world.add_system(NodeBuilder::new("direct").system(
        |scripts: &mut Scripts<Director>, clock: &SimClock, battle: &Battle| {
            scripts.gather(clock, battle);
        },
    ));
    world.add_system(NodeBuilder::new("cues").after("direct").system(
        |scripts: &mut Scripts<Director>, cues: &mut Cues| {
            cues.0.extend(scripts.drain_intents().map(|(_, cue)| cue));
        },
    ));
    world
}

/// Plays `frames` frames of 100 ms, the first kill at frame `kill_at`;
/// the cues they gave.
fn play(world: &mut World, frames: usize, kill_at: usize) -> Vec<Cue> {
    let from = world.get::<Cues>().unwrap().0.len();
    for frame in 0..frames {
        if frame == kill_at {
            world.get_mut::<Battle>().unwrap().kills = 1;
        }
        world.update(Duration::from_millis(100)).unwrap();
    }
    world.get::<Cues>().unwrap().0[from..].to_vec()
}

#[test]
fn the_directors_scripts_save_and_load_waiting_on_the_first_blood() {
    let mut world = world();
    // Past the title card: the cutscene waits on the first blood.
    let before = play(&mut world, 8, usize::MAX);
    assert!(before.contains(&Cue::Beat("title card")), "{before:?}");
    let snapshot = world.snapshot().unwrap();
    assert!(
        !snapshot
            .not_saved()
            .iter()
            .any(|name| name.contains("Scripts<")),
        "the director's store is saved: {:?}",
        snapshot.not_saved()
    );
    let mut save = Vec::new();
    snapshot.write_to(&mut save).expect("the director saves");
    let after = play(&mut world, 60, 5);

    let mut loaded = self::world();
    loaded.load_from(&save[..]).expect("the director loads");
    loaded.get_mut::<Battle>().unwrap().kills = 0;
    let again = play(&mut loaded, 60, 5);
    assert_eq!(after, again, "the same waves and beats after the load");
    assert!(after.contains(&Cue::Beat("first blood")), "{after:?}");
    assert!(
        after.contains(&Cue::Beat("the battle is joined")),
        "{after:?}"
    );
}
