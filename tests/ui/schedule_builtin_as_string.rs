// `schedule = "Startup"` names the built-in schedule as a string (as
// `Schedule::named("Startup")` does): refused, with the path to write
// instead.
use sluice::{World, system};

struct Config(u32);

#[system(schedule = "Startup")]
fn load(config: &mut Config) {
    config.0 = 1;
}

fn main() {
    let mut world = World::new();
    world.insert(Config(0));
    world.add_system(load);
}
