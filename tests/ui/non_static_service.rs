// A service is 'static: the world holds it across iterations.
use sluice::{World, system};

struct Names<'a>(&'a [String]);

#[system]
fn greet(names: &Names<'_>) {
    let _ = names.0.len();
}

fn main() {
    let mut world = World::new();
    world.add_system(greet);
}
