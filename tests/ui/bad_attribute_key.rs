// A misspelled key is refused, with the list of keys that exist.
use sluice::{World, system};

#[system(afterr = "spawner")]
fn spawn_wave() {}

fn main() {
    let mut world = World::new();
    world.add_system(spawn_wave);
}
