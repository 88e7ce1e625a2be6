use sluice::Bundle;

struct Pos(f32);
struct Vel(f32);

#[derive(Bundle)]
struct Body {
    pos: Pos,
    vel: Vel,
    again: Pos,
}

fn main() {}
