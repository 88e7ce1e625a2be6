// One mistake, one error: `&mut Hp` twice is SA0002's (spelled the same);
// `&m::Hp` aliases both of them, and is reported once, not once per `&mut Hp`.
use sluice::{World, system};

mod m {
    pub struct Hp(pub i32);
}
use m::Hp;

#[system]
fn heal(a: &mut Hp, b: &mut Hp, c: &m::Hp) {
    a.0 = b.0 + c.0;
}

fn main() {
    let mut world = World::new();
    world.add_system(heal);
}
