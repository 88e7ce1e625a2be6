//! Every organisation key the macros accept, on free functions, factories
//! and methods (generic impls included), registered and run with no
//! warning.
#![deny(warnings, missing_docs, missing_debug_implementations)]

use std::time::Duration;

use sluice::{Group, World, factory, system};

/// Input read this frame.
#[derive(Debug, Default)]
pub struct Input(pub u32);
/// Physics state.
#[derive(Debug, Default)]
pub struct Body(pub u32);
/// What was presented.
#[derive(Debug, Default)]
pub struct Frame(pub u32);
/// Saved games.
#[derive(Debug, Default)]
pub struct Saves(pub u32);
/// The sound mix.
#[derive(Debug, Default)]
pub struct Mix(pub u32);

/// Reads input first.
#[system(phase = PreUpdate, order = -1, key = "input::read")]
pub fn read_input(input: &mut Input) {
    input.0 += 1;
}

#[system(phase = sluice::Phase::Update, group = "Physics", order_first, cadence = Fixed)]
fn collide(body: &mut Body) {
    body.0 += 1;
}

#[system(group = "Physics", order_last, cadence = sluice::Cadence::Fixed, order = 2147483647)]
fn integrate(body: &mut Body) {
    body.0 += 1;
}

#[factory(phase = PostUpdate, set = "Audio", cadence = Variable, order = 3)]
fn mix(input: &Input) -> Mix {
    Mix(input.0)
}

#[system(schedule = Startup)]
fn boot(frame: &mut Frame) {
    frame.0 = 0;
}

#[system(schedule = "Save", name = "save_game")]
fn save(saves: &mut Saves) {
    saves.0 += 1;
}

#[system(schedule = Update, after = "read_input", before = PostUpdate)]
fn present(frame: &mut Frame, input: &Input) {
    frame.0 += input.0;
}

/// A service whose methods are nodes.
#[derive(Debug, Default)]
pub struct Tracker<T>(pub Vec<T>);

impl<T: Send + Sync + Default + 'static> Tracker<T> {
    /// Tracks one more frame, keyed by its path through `Tracker<T>`.
    #[system(phase = PostUpdate, order_last)]
    pub fn track(&mut self) {
        self.0.push(T::default());
    }

    /// Counts in the fixed cadence, under a key of its own.
    #[system(cadence = Fixed, key = "tracker::fixed")]
    pub fn fixed(&mut self) {
        self.0.push(T::default());
    }
}

fn main() {
    let mut world = World::new();
    world.insert(Input::default());
    world.insert(Body::default());
    world.insert(Frame::default());
    world.insert(Saves::default());
    world.insert(Tracker::<u8>::default());
    world.add_group(Group::new("Physics"));
    world.add_set("Audio", 0);
    world.add_system(read_input);
    world.add_system(collide);
    world.add_system(integrate);
    world.add_factory(mix);
    world.add_system(boot);
    world.add_system(save);
    world.add_system(present);
    world.add_system(Tracker::<u8>::track_system());
    world.add_system(Tracker::<u8>::fixed_system());
    world.update(Duration::from_millis(20)).unwrap();
    world.run_schedule("Save").unwrap();
    assert_eq!(world.get::<Body>().unwrap().0, 2);
    assert_eq!(world.get::<Saves>().unwrap().0, 1);
    assert_eq!(world.get::<Mix>().unwrap().0, 1);
    assert_eq!(world.get::<Frame>().unwrap().0, 1);
    assert_eq!(world.get::<Tracker<u8>>().unwrap().0.len(), 2);
}
