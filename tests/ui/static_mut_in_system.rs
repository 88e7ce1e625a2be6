// State behind the graph's back: `static mut` in a system body.
use sluice::{World, system};

struct Hp(i32);

#[system]
fn count(hp: &Hp) {
    static mut SEEN: i32 = 0;
    unsafe { SEEN += hp.0 };
}

fn main() {
    let mut world = World::new();
    world.add_system(count);
}
