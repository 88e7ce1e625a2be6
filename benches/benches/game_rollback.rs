//! The game's rolled-back battle (issue 39's benchmarks): snapshot,
//! restore and checksum of [`RollbackGame`](sluice_game::rollback::RollbackGame)'s
//! world at 20,000 and 200,000 units and an 8-frame rollback end to end.
//! Rows, `game_rollback/ROW/N`:
//!
//! - `capture`: `World::snapshot_into` a warm snapshot (no allocation);
//! - `restore`: `World::restore` of it;
//! - `checksum`: `Snapshot::checksum` of it (what the rollback session
//!   hands ggrs with every save);
//! - `rollback8`: restore, then the 8 frames after it again;
//! - `save`: `Snapshot::write_to` of it into a warm `Vec` (a save on disk
//!   without the disk: the captains' references as their entities; the
//!   director's scripts are not saved, as they have no saved form yet);
//! - `load`: `World::load_from` of that save (read, checked, restored,
//!   the references bound again).
//!
//! Single-threaded (the world's pool of 1: every node on the calling
//! thread). Unlike `snapshot`'s six `Copy` components, this is the game's
//! real world: units, captains, turrets with their hierarchy and
//! transforms, and the services that change.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, SamplingMode};

mod game_rollback_workload;
use game_rollback_workload::{COUNTS, capture, checksum, game, load, restore, rollback8, save};

fn criterion_rows(c: &mut Criterion) {
    let mut group = c.benchmark_group("game_rollback");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for n in COUNTS {
        if n > 20_000 {
            // A 200,000-unit frame takes tens of milliseconds.
            group.sample_size(10).sampling_mode(SamplingMode::Flat);
        } else {
            group.sample_size(20).sampling_mode(SamplingMode::Auto);
        }
        let (mut game, mut snapshot) = game(n, 1);
        group.bench_function(format!("capture/{n}"), |b| {
            b.iter(|| capture(&game, &mut snapshot));
        });
        group.bench_function(format!("restore/{n}"), |b| {
            b.iter(|| restore(&mut game, &snapshot));
        });
        group.bench_function(format!("checksum/{n}"), |b| {
            b.iter(|| checksum(&snapshot));
        });
        group.bench_function(format!("rollback8/{n}"), |b| {
            b.iter(|| rollback8(&mut game, &snapshot));
        });
        let mut bytes = Vec::new();
        group.bench_function(format!("save/{n}"), |b| {
            b.iter(|| save(&snapshot, &mut bytes));
        });
        group.bench_function(format!("load/{n}"), |b| {
            b.iter(|| load(&mut game, &bytes));
        });
        println!(
            "game_rollback/{n}: a snapshot holds {} bytes, a save {}",
            snapshot.heap_bytes(),
            bytes.len()
        );
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    criterion_rows(&mut criterion);
    criterion.final_summary();
}
