// One mistake, one error, for a factory: the fallback keeps the function
// `mesher` defined (returning its `Declared`), so registering it and calling
// it compile as if it were right.
use sluice::{World, factory};

struct Terrain(u32);
struct Mesh(u32);

#[factory(after = "input")]
fn mesher(terrain: Terrain) -> Mesh {
    Mesh(terrain.0 * 2)
}

fn main() {
    let mut world = World::new();
    world.add_factory(mesher);
    let mesh: Mesh = mesher(Terrain(1)).into_inner();
    let _ = mesh.0;
    let _ = world.run_iteration();
}
