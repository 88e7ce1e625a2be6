//! A derived bundle with a nested derived bundle and a nested tuple.

use sluice::{Bundle, World};

struct Pos(f32);
struct Vel(f32);
struct Hp(u32);
struct Tag;

#[derive(Bundle)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle)]
struct Unit(Hp, #[bundle] Body, #[bundle] (Tag,));

fn main() {
    let mut world = World::new();
    let e = world.spawn(Unit(Hp(1), Body { pos: Pos(0.0), vel: Vel(1.0) }, (Tag,)));
    let view = world.entity(e).unwrap();
    assert_eq!(view.get::<Hp>().unwrap().0, 1);
    assert_eq!(view.get::<Pos>().unwrap().0, 0.0);
    assert_eq!(view.get::<Vel>().unwrap().0, 1.0);
    assert!(view.has::<Tag>());
}
