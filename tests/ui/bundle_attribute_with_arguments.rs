use sluice::Bundle;

struct Pos(f32);
struct Vel(f32);

#[derive(Bundle)]
struct Body {
    pos: Pos,
    #[bundle(flatten)]
    vel: (Vel,),
}

fn main() {}
