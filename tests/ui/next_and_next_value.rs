// `Out<Next<Level>>` produces the service `NextValue<Level>`; gating that same
// service in the signature would alias the pending value.
use sluice::{Next, NextValue, Out, World, factory};

struct Level(u32);

#[factory]
fn advance(level: &Level, mut next: Out<Next<Level>>, pending: &mut NextValue<Level>) {
    let _ = pending.get();
    next.set(Level(level.0 + 1));
}

fn main() {
    let mut world = World::new();
    world.add_factory(advance);
}
