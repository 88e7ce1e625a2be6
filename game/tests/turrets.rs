//! Turrets riding their units (`sluice_game::turrets`, in the default
//! game): each turret's world transform follows its carrier, a despawned
//! unit takes its turret with it, and the result is the same on 1 and 4
//! threads.

use sluice::{ChildOf, Entity, GlobalTransform, World};
use sluice_game::turrets::{EVERY, OFFSET, Turret};
use sluice_game::units::Pos;
use sluice_game::{Config, Game};

/// Every turret's `(entity, world position)`, sorted, after checking
/// each rides a live carrier at the right place.
fn turrets_of(world: &mut World) -> Vec<(Entity, [f32; 3])> {
    let rows: Vec<(Entity, Entity, [f32; 3])> = world
        .query::<(Entity, &Turret, &ChildOf, &GlobalTransform)>()
        .iter()
        .map(|(e, _, of, g)| (e, of.parent(), g.translation().to_array()))
        .collect();
    let mut out = Vec::new();
    for (turret, carrier, at) in rows {
        let pos = world
            .entity(carrier)
            .and_then(|c| c.get::<Pos>().copied())
            .unwrap_or_else(|| panic!("{turret} rides {carrier}, which is gone"));
        let expected = [pos.0.x + OFFSET.x, pos.0.y + OFFSET.y, OFFSET.z];
        for axis in 0..3 {
            assert!(
                (at[axis] - expected[axis]).abs() < 1e-3,
                "{turret} at {at:?}, its carrier's seat at {expected:?}"
            );
        }
        out.push((turret, at));
    }
    out.sort_by_key(|(e, _)| *e);
    out
}

fn play(threads: usize) -> (usize, usize, Vec<(Entity, [f32; 3])>) {
    let mut game = Game::new(&Config {
        threads,
        frames: 0,
        entities: 600,
        timing: false,
    })
    .expect("the game starts");
    // The game mounted them (its `TurretsPlugin`).
    let mounted = game.world_mut().query::<&Turret>().iter().count();
    // One in EVERY of the 600 units, but for the captains (frozen).
    assert!(
        mounted <= 600usize.div_ceil(EVERY) && mounted > 600 / EVERY - 20,
        "{mounted} turrets"
    );
    for _ in 0..200 {
        game.frame().expect("a frame");
    }
    let world = game.world_mut();
    let alive = turrets_of(world);
    // A carrier despawned (as `combat::reap` does when a unit falls) takes
    // its turret with it.
    let (turret, carrier) = world
        .query::<(Entity, &ChildOf, &Turret)>()
        .iter()
        .map(|(e, of, _)| (e, of.parent()))
        .next()
        .expect("a turret");
    world.despawn(carrier).expect("alive");
    assert!(
        world.entity(turret).is_none(),
        "the turret fell with its carrier"
    );
    game.frame().expect("a frame after the fall");
    let after = turrets_of(game.world_mut());
    assert_eq!(after.len(), alive.len() - 1);
    (mounted, alive.len(), alive)
}

#[test]
fn turrets_follow_their_units_and_fall_with_them() {
    let (mounted, left, one) = play(1);
    assert!(mounted > 50, "{mounted} turrets mounted");
    assert!(
        left <= mounted && left > 1,
        "{left} of {mounted} turrets still riding"
    );
    let (_, _, four) = play(4);
    assert_eq!(
        one, four,
        "the same turrets at the same places on 1 and 4 threads"
    );
}
