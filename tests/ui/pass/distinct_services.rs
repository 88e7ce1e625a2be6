//! The aliasing check refuses only what aliases: distinct services, shared
//! access twice (even through another path or an alias), and a `Next<T>`
//! beside `T` itself (two services: `T` and `NextValue<T>`) all compile and run.
#![deny(warnings)]

use sluice::{Next, NextValue, Out, World, factory, system};

mod m {
    #[derive(Debug, Default)]
    pub struct Hp(pub i32);
}
use m::Hp;
type Health = Hp;

#[derive(Debug, Default)]
struct Armor(i32);
#[derive(Debug, Default)]
struct Level(u32);
#[derive(Debug, Default)]
struct Mesh(u32);
#[derive(Debug, Default)]
struct Seen(u32);

/// `&A, &A`: shared twice is allowed, spelled the same or not.
#[system]
fn look(a: &Hp, b: &Hp, c: &m::Hp, d: &Health, armor: &mut Armor) {
    armor.0 = a.0 + b.0 + c.0 + d.0;
}

/// Distinct services, every access.
#[system(after = "look")]
fn hit(hp: &mut Hp, armor: &Armor) {
    hp.0 -= armor.0;
}

/// `Next<Level>` produces `NextValue<Level>`, not `Level`: gating `Level`
/// beside it is no alias.
#[factory]
fn advance(level: &mut Level, mut next: Out<Next<Level>>, mut mesh: Out<Mesh>) {
    let current = &mut level.0;
    next.set(Level(*current + 1));
    mesh.set(Mesh(level.0));
}

/// Reads the pending value after its producer: one access, no alias.
#[system(after = "advance")]
fn peek(pending: &NextValue<Level>, seen: &mut Seen) {
    seen.0 = pending.get().map_or(0, |l| l.0);
}

/// A factory returning `Next<T>` while reading `T`.
#[factory]
fn grow(mesh: &Mesh) -> Next<Mesh> {
    Mesh(mesh.0 + 1)
}

fn main() {
    // Local types too: the check is emitted beside the function.
    struct Local(u8);
    #[system]
    fn local(a: &Local, b: &Local, hp: &mut Hp) {
        hp.0 += i32::from(a.0 + b.0);
    }

    let mut world = World::new();
    world.insert(Hp(10));
    world.insert(Armor(0));
    world.insert(Level(0));
    world.insert(Seen(0));
    world.insert(Local(0));
    world.add_system(look);
    world.add_system(hit);
    world.add_factory(advance);
    world.add_system(peek);
    world.add_factory(grow);
    world.add_system(local);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Level>().unwrap().0, 2);
    assert_eq!(world.get::<Seen>().unwrap().0, 2);
}
