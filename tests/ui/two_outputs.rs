// Two `Out` of one service (through an alias): two writers of one slot.
use sluice::{Out, World, factory};

struct Mesh(u32);
type Model = Mesh;

#[factory]
fn mesher(mut mesh: Out<Mesh>, mut model: Out<Model>) {
    mesh.set(Mesh(1));
    model.set(Mesh(2));
}

fn main() {
    let mut world = World::new();
    world.add_factory(mesher);
}
