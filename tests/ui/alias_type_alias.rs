// A type alias names the same service: `&mut Health` and `&mut Hp` would be
// two `&mut` to one value.
use sluice::{World, system};

struct Hp(i32);
type Health = Hp;

#[system]
fn regen(hp: &mut Hp, health: &mut Health) {
    hp.0 += 1;
    health.0 += 1;
}

fn main() {
    let mut world = World::new();
    world.add_system(regen);
}
