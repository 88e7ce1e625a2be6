// A cadence is `Fixed` or `Variable`; a misspelt one is refused on the
// value, with both listed.
use sluice::{World, factory};

struct Velocity(f32);
struct Position(f32);

#[factory(cadence = Fxed)]
fn step(velocity: &Velocity) -> Position {
    Position(velocity.0)
}

fn main() {
    let mut world = World::new();
    world.insert(Velocity(1.0));
    world.add_factory(step);
}
