//! The battle's cost against its frame number: both sides run the same
//! frames from the start, in windows of 50, and each window's mean frame
//! time is printed with the ratio sluice / bevy. It shows why the battle
//! bench's summary times both sides on the same frames: the cost drifts
//! as the armies meet and thin out.
//!
//! `cargo run --release -p sluice-benches --example battle_phase [-- THREADS [UNITS [WINDOWS]]]`
//! (defaults: 1 thread, 20,000 units, 30 windows).

use std::time::Instant;

use sluice_benches::battle::Battle;
use sluice_benches::battle::bevy::BevyBattle;
use sluice_benches::battle::sluice::SluiceBattle;

const WINDOW: usize = 50;

fn arg(index: usize, default: usize) -> usize {
    std::env::args()
        .nth(index)
        .map_or(default, |s| s.parse().expect("a whole number"))
}

fn main() {
    let (threads, units, windows) = (arg(1, 1), arg(2, 20_000), arg(3, 30));
    sluice_benches::threads::init_bevy_pool(threads);
    let mut sides: [Box<dyn Battle>; 2] = [
        Box::new(SluiceBattle::new(units, threads)),
        Box::new(BevyBattle::new(units)),
    ];
    println!("{units} units, {threads} thread(s), mean frame time per window of {WINDOW}");
    for window in 0..windows {
        let mut ms = [0.0f64; 2];
        for (side, ms) in sides.iter_mut().zip(&mut ms) {
            let start = Instant::now();
            for _ in 0..WINDOW {
                side.frame();
            }
            *ms = start.elapsed().as_secs_f64() * 1e3 / WINDOW as f64;
        }
        let [sluice, bevy] = &mut sides;
        let same = sluice.outcome() == bevy.outcome();
        println!(
            "frames {:>5}-{:<5} sluice {:>8.3} ms  bevy {:>8.3} ms  sluice/bevy {:.3}x{}",
            window * WINDOW,
            (window + 1) * WINDOW,
            ms[0],
            ms[1],
            ms[0] / ms[1],
            if same { "" } else { "  OUTCOMES DIFFER" }
        );
    }
}
