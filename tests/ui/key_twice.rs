// A node has one instance key: the second `key` is refused.
use sluice::{World, system};

struct Brain(u32);

#[system(key = "ai::update#1", key = "ai::update#2")]
fn update(brain: &mut Brain) {
    brain.0 += 1;
}

fn main() {
    let mut world = World::new();
    world.insert(Brain(0));
    world.add_system(update);
}
