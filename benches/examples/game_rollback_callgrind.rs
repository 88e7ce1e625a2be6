//! `game_rollback`'s steps (`benches/benches/game_rollback.rs`) alone, for
//! counting instructions under callgrind: a warm `snapshot_into`, a
//! `restore`, a `Snapshot::checksum` and one frame of the game's
//! rolled-back battle, each in its own function.
//!
//! ```text
//! cargo build --release -p sluice-benches --example game_rollback_callgrind
//! valgrind --tool=callgrind --toggle-collect='*counted_checksum*' \
//!     target/release/examples/game_rollback_callgrind 20000 5
//! ```
//!
//! Arguments: the units (20,000 by default) and how many times each step
//! runs (5). Toggle `counted_capture`, `counted_restore`,
//! `counted_checksum` or `counted_frame`, and divide by the count.

#[allow(dead_code)]
#[path = "../benches/game_rollback_workload/mod.rs"]
mod game_rollback_workload;

use game_rollback_workload::{capture, checksum, game, inputs, restore};
use sluice::Snapshot;
use sluice_game::rollback::RollbackGame;

#[inline(never)]
fn counted_capture(game: &RollbackGame, snapshot: &mut Snapshot) {
    capture(game, snapshot);
}

#[inline(never)]
fn counted_restore(game: &mut RollbackGame, snapshot: &Snapshot) {
    restore(game, snapshot);
}

#[inline(never)]
fn counted_checksum(snapshot: &Snapshot) -> u64 {
    checksum(snapshot)
}

#[inline(never)]
fn counted_frame(game: &mut RollbackGame) {
    let frame = game.frame();
    game.advance(inputs(frame)).expect("frame");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let units: usize = args
        .next()
        .map_or(20_000, |arg| arg.parse().expect("units"));
    let count: usize = args.next().map_or(5, |arg| arg.parse().expect("count"));
    let (mut game, mut snapshot) = game(units, 1);
    let mut sum = 0u64;
    for _ in 0..count {
        counted_capture(&game, &mut snapshot);
        sum ^= counted_checksum(&snapshot);
        counted_frame(&mut game);
        counted_restore(&mut game, &snapshot);
    }
    println!("{units} units, {count} rounds: checksums xor {sum:016x}");
}
