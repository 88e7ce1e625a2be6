//! Steering: captains walk to their rally points (the player's stick for
//! red, the network peer's orders for blue); units steer towards their slot
//! in their captain's formation, read through a `ComponentRef`, blended with
//! the navigation flow towards the enemy.

use sluice::{FrameTime, Query, Target, system};

use crate::feed::{InputState, Orders};
use crate::math::Vec2;
use crate::navigation::{NavField, Terrain};
use crate::units::{ARENA, CAPTAINS, Captain, Pos, Slot, Team, Vel, base};

/// How fast captains walk, world units per second.
pub const CAPTAIN_SPEED: f32 = 80.0;
/// How fast units run, world units per second.
pub const UNIT_SPEED: f32 = 90.0;

/// Walks each captain towards its rally point; where a wall is in the way,
/// it follows the navigation flow instead.
#[system(stage = "Think", group = "Ai")]
pub fn lead(
    time: &FrameTime,
    input: &InputState,
    orders: &Orders,
    nav: &NavField,
    terrain: &Terrain,
    mut captains: Query<(&mut Pos, &Captain)>,
) {
    let step = CAPTAIN_SPEED * time.delta.as_secs_f32();
    captains.for_each(|(mut pos, captain)| {
        let lane = Vec2::new(0.0, (f32::from(captain.index) - 1.5) * 160.0);
        let goal = match captain.team {
            0 => input.rally + lane,
            _ => orders.waypoints[usize::from(captain.index) % CAPTAINS],
        };
        let toward = goal - pos.0;
        if toward.length() <= step {
            return;
        }
        let mut next = pos.0 + toward.normalized_or_zero() * step;
        if terrain.blocked(next) {
            next = pos.0 + nav.flow(captain.team, pos.0) * step;
        }
        pos.0 = next.clamp(0.0, ARENA - 0.01);
    });
}

/// Steers every unit (in parallel slices) towards its formation slot beside
/// its captain, read through the unit's `ComponentRef<Pos>`; a unit whose
/// captain is gone heads home.
#[system(stage = "Think", group = "Ai", after = "lead")]
pub fn steer(nav: &NavField, mut units: Query<(&mut Vel, &Pos, &Team, &Slot, Target<Pos>)>) {
    units.par_for_each(|(mut vel, pos, team, slot, captain)| {
        let goal = captain.map_or(base(team.0), |captain| captain.0 + slot.0);
        let toward = goal - pos.0;
        let urgency = (toward.length() / 32.0).min(1.0);
        let seek = toward.normalized_or_zero() * 0.8 + nav.flow(team.0, pos.0) * 0.2;
        let desired = seek * (UNIT_SPEED * urgency);
        vel.0 = vel.0 * 0.85 + desired * 0.15;
    });
}

/// The plugin of captains walking to their rally points and units following them.
#[derive(Debug, Default)]
pub struct SteeringPlugin;

impl sluice::plugin::Plugin for SteeringPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new()
            .plugin::<crate::FramePlugin>()
            .plugin::<crate::feed::FeedPlugin>()
            .plugin::<crate::navigation::NavigationPlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.add_system(lead);
        world.add_system(steer);
    }
}
