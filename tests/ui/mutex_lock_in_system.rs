// The graph orders access to services; a lock in a body is a service in
// disguise. (`allow_locks = "reason"` opts out; see pass/nodes.rs.)
use std::sync::Mutex;

use sluice::{World, system};

struct Scores(Mutex<Vec<u32>>);

#[system]
fn record(scores: &Scores) {
    scores.0.lock().unwrap().push(1);
}

fn main() {
    let mut world = World::new();
    world.add_system(record);
}
