// A misspelt service type is reported once: the aliasing check beside the
// function names the same type but adds no second "cannot find type".
use sluice::{World, system};

struct Hp(i32);

#[system]
fn heal(current: &Hp, hp: &mut Hpp) {
    hp.0 = current.0;
}

fn main() {
    let mut world = World::new();
    world.add_system(heal);
}
