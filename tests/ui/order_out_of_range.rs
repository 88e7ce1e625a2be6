// `order` must fit an `i32`.
use sluice::{World, system};

struct Score(u32);

#[system(order = -2147483649)]
fn count(score: &mut Score) {
    score.0 += 1;
}

fn main() {
    let mut world = World::new();
    world.insert(Score(0));
    world.add_system(count);
}
