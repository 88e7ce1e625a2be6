// Reading a service while producing it: the read borrows a value that `set`
// replaces.
use sluice::{Out, World, factory};

mod assets {
    pub struct Mesh(pub u32);
}
use assets::Mesh;

#[factory]
fn remesh(old: &Mesh, mut mesh: Out<assets::Mesh>) {
    mesh.set(Mesh(old.0 + 1));
}

fn main() {
    let mut world = World::new();
    world.add_factory(remesh);
}
