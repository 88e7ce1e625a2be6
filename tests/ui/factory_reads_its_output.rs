// A factory that returns `Mesh` while reading it (through another path).
use sluice::{World, factory};

mod assets {
    pub struct Mesh(pub u32);
}

type Model = assets::Mesh;

#[factory]
fn remesh(old: &Model) -> assets::Mesh {
    assets::Mesh(old.0 + 1)
}

fn main() {
    let mut world = World::new();
    world.add_factory(remesh);
}
