// One mistake, one error: the fallback keeps the function `clock`
// defined, so every later use of the name compiles as if it were right.
use sluice::{NodeBuilder, World, system};

struct Time(f32);
struct Ticks(u64);

#[system(after = "input", before = "render")]
fn clock(time: Time, ticks: &mut Ticks) {
    ticks.0 += time.0 as u64;
}

fn main() {
    let mut world = World::new();
    world.add_system(clock);
    world.add_system(clock);
    world.add_system(NodeBuilder::new("input").system(|_t: &Ticks| {}));
    let mut ticks = Ticks(0);
    clock(Time(1.0), &mut ticks);
    let _copy = clock;
    let _ = world.run_iteration();
}
