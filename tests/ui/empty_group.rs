// A group is named; an empty name is refused.
use sluice::{World, system};

struct Velocity(f32);

#[system(group = "")]
fn integrate(velocity: &mut Velocity) {
    velocity.0 *= 0.5;
}

fn main() {
    let mut world = World::new();
    world.insert(Velocity(1.0));
    world.add_system(integrate);
}
