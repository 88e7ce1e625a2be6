// An aliasing pair is reported beside the node's other mistakes, all at once.
use sluice::{World, system};

mod m {
    pub struct Hp(pub i32);
}
use m::Hp;

struct Time(f32);

#[system]
fn heal(time: Time, current: &Hp, hp: &mut m::Hp) {
    hp.0 = current.0 + time.0 as i32;
}

fn main() {
    let mut world = World::new();
    world.add_system(heal);
}
