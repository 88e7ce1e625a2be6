// `&Hp` and `&mut Hp` in one signature: which access does the node have?
use sluice::{World, system};

struct Hp(i32);

#[system]
fn heal(current: &Hp, hp: &mut Hp) {
    hp.0 = current.0 + 1;
}

fn main() {
    let mut world = World::new();
    world.add_system(heal);
}
