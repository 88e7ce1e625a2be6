use sluice::Bundle;

struct Pos(f32);
struct Vel(f32);

// `#[bundle]` on a plain component: `Vel` is a component, not a bundle.
#[derive(Bundle)]
struct Body {
    pos: Pos,
    #[bundle]
    vel: Vel,
}

fn main() {}
