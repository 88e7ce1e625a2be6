// A node's recording handles borrow its run: a thread that could outlive
// the node (a detached `std::thread::spawn`) cannot take one, so nothing
// is ever recorded for a node after it returned.
use sluice::{Append, Commands, NodeBuilder, World};

struct V(u32);

fn main() {
    let mut world = World::new();
    world.add_system(NodeBuilder::new("detached").system(
        |out: Append<V>, commands: Commands| {
            std::thread::spawn(move || {
                out.push(V(1));
                commands.spawn(());
            });
        },
    ));
}
