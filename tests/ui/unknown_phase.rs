// A phase is one of the three built-in ones; a misspelt one is refused on
// the value, with the three listed.
use sluice::{World, system};

struct Input(u32);

#[system(phase = PreUpdat)]
fn read_input(input: &mut Input) {
    input.0 += 1;
}

fn main() {
    let mut world = World::new();
    world.insert(Input(0));
    world.add_system(read_input);
}
