// A node borrows its services: `Time` by value is not a declaration.
use sluice::{World, system};

struct Time(f32);

#[system]
fn clock(time: Time, ticks: &mut u64) {
    *ticks += time.0 as u64;
}

fn main() {
    let mut world = World::new();
    world.add_system(clock);
}
