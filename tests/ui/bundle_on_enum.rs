use sluice::Bundle;

struct Pos(f32);

#[derive(Bundle)]
enum Either {
    Here(Pos),
    There,
}

fn main() {}
