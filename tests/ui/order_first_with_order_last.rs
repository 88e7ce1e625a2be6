// A node is first or last among its siblings, not both: the second flag
// is refused.
use sluice::{World, system};

struct Velocity(f32);

#[system(group = "Physics", order_first, order_last)]
fn integrate(velocity: &mut Velocity) {
    velocity.0 *= 0.5;
}

fn main() {
    let mut world = World::new();
    world.insert(Velocity(1.0));
    world.add_system(integrate);
}
