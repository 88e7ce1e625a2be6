//! Every shape the macros accept, registered and run, with no warning:
//! documented public nodes, private ones, methods, factories with tuple and
//! `Next` outputs, run conditions, markers by path, and `allow_locks`.
#![deny(warnings, missing_docs, missing_debug_implementations)]

use std::sync::Mutex;

use sluice::{Marker, Next, Out, World, factory, run_condition, system};

/// Seconds since start.
#[derive(Debug, Default)]
pub struct Clock(pub f32);
/// Hit points.
#[derive(Debug, Default)]
pub struct Hp(pub i32);
/// A mesh.
#[derive(Debug, Default)]
pub struct Mesh(pub u32);
/// A collider.
#[derive(Debug, Default)]
pub struct Collider(pub u32);
/// The level.
#[derive(Debug, Default)]
pub struct Level(pub u32);
/// Paused or not.
#[derive(Debug, Default)]
pub struct Paused(pub bool);
/// The counter's total.
#[derive(Debug, Default)]
pub struct Total(pub u32);
/// A lock kept for a C library.
#[derive(Debug, Default)]
pub struct Ffi(pub Mutex<u32>);

/// Phase markers, named by path.
pub mod phases {
    /// The marker every update runs after.
    #[derive(Debug)]
    pub struct PreUpdate;
}

/// Advances the clock.
#[system(before = "regenerate", after = phases::PreUpdate)]
pub fn advance(clock: &mut Clock) {
    clock.0 += 1.0;
}

#[system(name = "regenerate", run_if = running)]
fn regen(clock: &Clock, hp: &mut Hp) {
    hp.0 += clock.0 as i32;
}

#[run_condition]
fn running(paused: &Paused) -> bool {
    !paused.0
}

/// Builds the mesh and its collider.
#[factory]
pub fn mesher(level: &Level, mut collider: Out<Collider>) -> (Mesh, Next<Level>) {
    collider.set(Collider(level.0));
    (Mesh(level.0 * 2), Level(level.0 + 1))
}

#[system(exclusive, allow_locks = "the C library keeps its own lock")]
fn call_ffi(ffi: &Ffi) {
    *ffi.0.lock().unwrap() += 1;
}

/// A service with methods as nodes.
#[derive(Debug, Default)]
pub struct Counter(pub u32);

impl Counter {
    /// Counts hit points.
    #[system(after = "regenerate")]
    pub fn count(&mut self, hp: &Hp) {
        self.0 += hp.0 as u32;
    }

    #[factory]
    fn summary(&self) -> Total {
        Total(self.0)
    }

    #[run_condition]
    fn counted(&self) -> bool {
        self.0 > 0
    }
}

#[system(run_if = Counter::counted)]
fn report(counter: &Counter) {
    assert!(counter.0 > 0);
}

fn main() {
    let mut world = World::new();
    world.insert(Clock::default());
    world.insert(Hp::default());
    world.insert(Level::default());
    world.insert(Paused::default());
    world.insert(Ffi::default());
    world.insert(Counter::default());
    world.add_marker(Marker::new("PreUpdate"));
    world.add_system(advance);
    world.add_system(regen);
    world.add_factory(mesher);
    world.add_system(call_ffi);
    world.add_system(Counter::count_system());
    world.add_factory(Counter::summary_factory());
    world.add_system(report);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert!(world.get::<Counter>().unwrap().0 > 0);
    assert!(world.get::<Total>().is_some());
    assert!(world.get::<Mesh>().is_some());
    assert!(running(&Paused(false)));
    let mut hp = Hp::default();
    regen(&Clock::default(), &mut hp);
}
