//! Physics on the fixed cadence: once per whole fixed step the frame's
//! delta accrued, before the frame's variable plan. Units move along their
//! velocity, stop at walls and stay in the arena; guns reload.

use sluice::{FixedTime, Query, system};

use crate::navigation::Terrain;
use crate::units::{ARENA, Pos, Vel, Weapon};

/// Moves every unit one fixed step (in parallel slices of the pool): a
/// step into a wall cancels that axis of the velocity.
#[system(cadence = Fixed, group = "Physics", stage = "Simulate")]
pub fn integrate(time: &FixedTime, terrain: &Terrain, mut units: Query<(&mut Pos, &mut Vel)>) {
    let dt = time.step.as_secs_f32();
    units.par_for_each(|(mut pos, mut vel)| {
        let mut next = pos.0;
        next.x += vel.0.x * dt;
        if terrain.blocked(next) {
            next.x = pos.0.x;
            vel.0.x = -vel.0.x * 0.5;
        }
        next.y += vel.0.y * dt;
        if terrain.blocked(next) {
            next.y = pos.0.y;
            vel.0.y = -vel.0.y * 0.5;
        }
        pos.0 = next.clamp(0.0, ARENA - 0.01);
    });
}

/// Counts every gun's cooldown down by one step.
#[system(cadence = Fixed, group = "Physics", stage = "Simulate")]
pub fn reload(mut weapons: Query<&mut Weapon>) {
    weapons.par_for_each(|mut weapon| weapon.cooldown = weapon.cooldown.saturating_sub(1));
}

/// The plugin of movement and reloading on the fixed cadence.
#[derive(Debug, Default)]
pub struct PhysicsPlugin;

impl sluice::plugin::Plugin for PhysicsPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new()
            .plugin::<crate::FramePlugin>()
            .plugin::<crate::navigation::NavigationPlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.add_system(integrate);
        world.add_system(reload);
    }
}
