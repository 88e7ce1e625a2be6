// A `ComponentRef` target is shared only: a query reads another entity's
// component through its reference and cannot write it.
use sluice::{Query, Target};

struct Pos(f32);
struct Heading(f32);

fn steer(mut q: Query<(&mut Heading, Target<Pos>)>) {
    q.for_each(|(mut heading, target)| {
        if let Some(pos) = target {
            heading.0 = pos.0;
            pos.0 = 0.0;
        }
    });
}

fn main() {
    let _ = steer;
}
