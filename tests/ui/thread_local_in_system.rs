// A node may run on any worker thread: `thread_local!` state is not a service.
use std::cell::Cell;

use sluice::{World, system};

struct Hp(i32);

#[system]
fn count(hp: &Hp) {
    thread_local! {
        static SEEN: Cell<i32> = const { Cell::new(0) };
    }
    SEEN.with(|seen| seen.set(seen.get() + hp.0));
}

fn main() {
    let mut world = World::new();
    world.add_system(count);
}
