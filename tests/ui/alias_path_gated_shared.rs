// `Hp` and `m::Hp` are one type spelled two ways: SA0002 compares tokens and
// cannot see it; the compiler can, and refuses the second access.
use sluice::{World, system};

mod m {
    pub struct Hp(pub i32);
}
use m::Hp;

#[system]
fn heal(current: &Hp, hp: &mut m::Hp) {
    hp.0 = current.0 + 1;
}

fn main() {
    let mut world = World::new();
    world.add_system(heal);
}
