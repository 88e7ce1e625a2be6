//! One side of the battle run for a number of frames, for comparing the
//! two ECSs' instructions under callgrind (repeatable on a loaded machine,
//! where the wall-clock figures are not):
//!
//! ```text
//! cargo build --release -p sluice-benches --example battle_callgrind
//! valgrind --tool=callgrind target/release/examples/battle_callgrind sluice 2000 200 1
//! valgrind --tool=callgrind target/release/examples/battle_callgrind bevy 2000 200 1
//! ```
//!
//! Arguments: the side (`sluice` or `bevy`), units (2,000: the arena
//! scales, so the work per unit is that of the bench's sizes), frames
//! (200: contact, then the fight), threads (1). It prints the outcome, the
//! same for both sides.

use sluice_benches::battle::Battle;
use sluice_benches::battle::bevy::BevyBattle;
use sluice_benches::battle::sluice::SluiceBattle;
use sluice_benches::threads::init_bevy_pool;

fn main() {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_else(|| "sluice".to_owned());
    let units: usize = args.next().map_or(2_000, |a| a.parse().expect("units"));
    let frames: u64 = args.next().map_or(200, |a| a.parse().expect("frames"));
    let threads: usize = args.next().map_or(1, |a| a.parse().expect("threads"));
    let mut battle: Box<dyn Battle> = match side.as_str() {
        "sluice" => Box::new(SluiceBattle::new(units, threads)),
        "bevy" => {
            init_bevy_pool(threads);
            Box::new(BevyBattle::new(units))
        }
        other => panic!("unknown side {other:?} (sluice, bevy)"),
    };
    for _ in 0..frames {
        battle.frame();
    }
    println!("{side}: {:?}", battle.outcome());
}
