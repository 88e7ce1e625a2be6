// `order` is an integer literal (an `i32`), not a float or a string.
use sluice::{World, system};

struct Score(u32);

#[system(order = 1.5)]
fn count(score: &mut Score) {
    score.0 += 1;
}

fn main() {
    let mut world = World::new();
    world.insert(Score(0));
    world.add_system(count);
}
