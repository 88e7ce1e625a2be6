//! The battle: inputs steer it, and it is the same on every thread count.

use sluice_game::rollback::{BattleInput, PLAYERS, RollbackGame};

use crate::small;

fn run(threads: usize, frames: u64, inputs: impl Fn(u64) -> [BattleInput; PLAYERS]) -> u64 {
    let mut game = RollbackGame::new(&small(threads)).expect("the battle builds");
    for frame in 0..frames {
        game.advance(inputs(frame)).expect("the frame runs");
    }
    assert_eq!(game.frame(), frames);
    game.checksum().expect("a snapshot between frames")
}

fn scripted(seed: u64) -> impl Fn(u64) -> [BattleInput; PLAYERS] {
    move |frame| std::array::from_fn(|player| BattleInput::scripted(seed, player, frame))
}

#[test]
fn inputs_steer_the_battle_and_threads_do_not() {
    let frames = 120;
    let idle = run(1, frames, |_| [BattleInput::default(); PLAYERS]);
    let serial = run(1, frames, scripted(7));
    let parallel = run(2, frames, scripted(7));
    let four = run(4, frames, scripted(7));
    assert_eq!(serial, parallel, "1 thread vs 2");
    assert_eq!(serial, four, "1 thread vs 4");
    assert_ne!(idle, serial, "the inputs changed nothing");
    assert_ne!(
        serial,
        run(1, frames, scripted(8)),
        "another seed changed nothing"
    );
    // One player's one button on one frame is enough to change the end.
    let pressed = run(1, frames, |frame| {
        let mut inputs = [BattleInput::default(); PLAYERS];
        if frame == 10 {
            inputs[0].buttons = BattleInput::AGGRESSIVE;
        }
        inputs
    });
    assert_ne!(idle, pressed, "an airstrike changed nothing");
}

#[test]
fn any_input_bytes_are_a_valid_input() {
    // Hostile peers send any three bytes: the battle takes them.
    let checksum = run(1, 20, |frame| {
        let byte = (frame * 37) as u8;
        [
            BattleInput {
                nudge_x: i8::MIN,
                nudge_y: byte as i8,
                buttons: u8::MAX,
            },
            BattleInput {
                nudge_x: i8::MAX,
                nudge_y: i8::MIN,
                buttons: byte,
            },
        ]
    });
    assert_ne!(checksum, 0);
}

#[test]
fn scripted_inputs_hold_and_change() {
    let inputs: Vec<BattleInput> = (0..400)
        .map(|frame| BattleInput::scripted(3, 0, frame))
        .collect();
    let changes = inputs.windows(2).filter(|pair| pair[0] != pair[1]).count();
    // Held 8 to 39 frames: at least 10 changes in 400 frames, at most 50.
    assert!((10..=50).contains(&changes), "{changes} changes");
    assert!(inputs.iter().any(|input| input.aggressive()));
    assert_ne!(
        BattleInput::scripted(3, 0, 5),
        BattleInput::scripted(3, 1, 5),
        "both players play the same"
    );
}

#[test]
fn snapshots_leave_out_only_what_the_battle_rebuilds() {
    let mut game = RollbackGame::new(&small(1)).expect("the battle builds");
    game.advance([BattleInput::default(); PLAYERS])
        .expect("the frame runs");
    let snapshot = game.world().snapshot().expect("between frames");
    let left_out: Vec<&str> = snapshot.report().left_out().collect();
    // Scratch rebuilt every frame, constants, and this frame's messages,
    // all read in the frame that wrote them.
    let rebuilt = [
        "Grid<",
        "NavField",
        "Terrain",
        "NavBuilds",
        "Captains",
        "Damage",
        "Died",
        "PlayerInput",
        "NetOrder",
        "PropagationScratch",
    ];
    for name in &left_out {
        assert!(
            rebuilt.iter().any(|part| name.contains(part)),
            "{name} is left out of the battle's snapshots"
        );
    }
    assert!(snapshot.entity_count() > small(1).entities);
}

/// The director's scripts roll back with the battle: restored to frame
/// 20, the battle plays the same waves and beats (the cutscene's title
/// card at half a second, a wave every two seconds) to the same checksum,
/// on one thread and on two.
#[test]
fn the_directors_scripts_roll_back_with_the_battle() {
    use sluice::script::Scripts;
    use sluice_game::scripts::{Director, DirectorLog};

    let frames = 140;
    let mut ends = Vec::new();
    for threads in [1, 2] {
        let mut game = RollbackGame::new(&small(threads)).expect("the battle builds");
        let inputs = scripted(3);
        for frame in 0..20 {
            game.advance(inputs(frame)).expect("the frame runs");
        }
        let snapshot = game.world().snapshot().expect("between frames");
        let scripts_at = game.world().get::<Scripts<Director>>().unwrap().len();
        for frame in 20..frames {
            game.advance(inputs(frame)).expect("the frame runs");
        }
        let log = game.world().get::<DirectorLog>().cloned().unwrap();
        assert!(log.waves >= 1, "a wave came: {log:?}");
        assert!(!log.beats.is_empty(), "the cutscene played: {log:?}");
        let checksum = game.checksum().unwrap();

        game.restore(&snapshot).expect("a restore");
        assert_eq!(game.frame(), 20);
        let director = game.world().get::<DirectorLog>().cloned().unwrap();
        assert_eq!(director.waves, 0, "back before the first wave");
        assert_eq!(
            game.world().get::<Scripts<Director>>().unwrap().len(),
            scripts_at
        );
        for frame in 20..frames {
            game.advance(inputs(frame)).expect("the frame runs");
        }
        assert_eq!(
            game.world().get::<DirectorLog>(),
            Some(&log),
            "{threads} threads"
        );
        assert_eq!(game.checksum().unwrap(), checksum, "{threads} threads");
        ends.push(checksum);
    }
    assert_eq!(ends[0], ends[1], "1 thread vs 2");
}

/// The battle's world saves to bytes whole: the captains' references are
/// saved as the captains, the director's scripts with their ids. Loaded
/// into a fresh battle (which started scripts of its own while it was
/// built), it has the same checksum, every unit reads its captain's
/// position through its reference, and it plays on as the original does,
/// waves and cutscene included, on one thread and on two.
#[test]
fn the_battle_saves_and_loads_into_a_fresh_battle() {
    use sluice::{ComponentRef, Entity};
    use sluice_game::scripts::DirectorLog;
    use sluice_game::units::Pos;

    for threads in [1, 2] {
        let mut game = RollbackGame::new(&small(threads)).expect("the battle builds");
        let inputs = scripted(5);
        for frame in 0..10 {
            game.advance(inputs(frame)).expect("the frame runs");
        }
        let snapshot = game.world().snapshot().expect("between frames");
        assert_eq!(snapshot.not_saved(), Vec::<&str>::new(), "all of it saves");
        let mut bytes = Vec::new();
        snapshot.write_to(&mut bytes).expect("the battle saves");

        let mut fresh = RollbackGame::new(&small(threads)).expect("the battle builds");
        fresh
            .world_mut()
            .load_from(&bytes[..])
            .expect("the save loads");
        assert_eq!(fresh.checksum().unwrap(), game.checksum().unwrap());
        assert_eq!(fresh.frame(), game.frame());
        let follows: Vec<(Entity, ComponentRef<Pos>)> = fresh
            .world_mut()
            .query::<(Entity, &ComponentRef<Pos>)>()
            .iter()
            .map(|(unit, follows)| (unit, *follows))
            .collect();
        assert!(follows.len() > small(threads).entities / 2);
        for (unit, follows) in follows {
            let captain = fresh.world().entity(follows.target()).unwrap();
            assert_eq!(
                follows.get(fresh.world()),
                captain.get::<Pos>(),
                "{unit} reads its captain"
            );
        }
        for frame in 10..240 {
            game.advance(inputs(frame)).expect("the frame runs");
            fresh.advance(inputs(frame)).expect("the frame runs");
            assert_eq!(
                fresh.checksum().unwrap(),
                game.checksum().unwrap(),
                "frame {frame}, {threads} threads"
            );
        }
        assert_eq!(
            fresh.world().get::<DirectorLog>(),
            game.world().get::<DirectorLog>(),
            "the director's cues, {threads} threads"
        );
    }
}
