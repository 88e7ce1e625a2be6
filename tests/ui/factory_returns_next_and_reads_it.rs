// `-> Next<Level>` produces `NextValue<Level>`; `&NextValue<Level>` reads the
// very value being produced.
use sluice::{Next, NextValue, World, factory};

struct Level(u32);

#[factory]
fn advance(level: &Level, pending: &NextValue<Level>) -> Next<Level> {
    Level(level.0 + u32::from(pending.get().is_some()))
}

fn main() {
    let mut world = World::new();
    world.add_factory(advance);
}
