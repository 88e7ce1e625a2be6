// A run condition is read-only.
use sluice::{World, run_condition, system};

struct Paused(bool);

#[run_condition]
fn running(paused: &mut Paused) -> bool {
    !paused.0
}

#[system(run_if = running)]
fn tick() {}

fn main() {
    let mut world = World::new();
    world.add_system(tick);
}
