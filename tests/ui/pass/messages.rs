//! `#[system]`s that send and read messages: `Publish<T>` and
//! `Subscribe<T>` are handles taken by value, beside services.
#![deny(warnings)]

use sluice::{Publish, Subscribe, World, system};

struct Damage(u32);
#[derive(Debug, Default)]
struct Total(u32);

#[system]
fn strike(hits: Publish<'_, Damage>) {
    hits.send(Damage(5));
}

#[system(after = "strike")]
fn apply(mut hits: Subscribe<'_, Damage>, total: &mut Total) {
    total.0 += hits.unread().map(|damage| damage.0).sum::<u32>();
}

fn main() {
    let mut world = World::new();
    world.insert(Total::default());
    world.add_system(strike);
    world.add_system(apply);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Total>().unwrap().0, 5);
}
