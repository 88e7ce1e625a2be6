//! The game's rolled-back battle (issue 39's benchmarks): snapshot,
//! restore and checksum of [`RollbackGame`](sluice_game::rollback::RollbackGame)'s
//! world at 20,000 and 200,000 units and an 8-frame rollback end to end.
//! Rows, `game_rollback/ROW/N`:
//!
//! - `capture`: `World::snapshot_into` a warm snapshot (no allocation);
//! - `restore`: `World::restore` of it;
//! - `checksum`: `Snapshot::checksum` of it (what the rollback session
//!   hands ggrs with every save);
//! - `rollback8`: restore, then the 8 frames after it again.
//!
//! No save or load on disk: the battle's captains are followed through a
//! `ComponentRef<Pos>`, captured by snapshots but with no saved form, so
//! `write_to` refuses the world (`SaveError::NotSaved`); the `snapshot`
//! bench's `save_file`/`load_file` rows save units of the same shape.
//!
//! Single-threaded (the world's pool of 1: every node on the calling
//! thread). Unlike `snapshot`'s six `Copy` components, this is the game's
//! real world: units, captains, turrets with their hierarchy and
//! transforms, and the services that change.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, SamplingMode};

mod game_rollback_workload;
use game_rollback_workload::{COUNTS, capture, checksum, game, restore, rollback8};

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
        println!(
            "game_rollback/{n}: a snapshot holds {} bytes",
            snapshot.heap_bytes()
        );
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    criterion_rows(&mut criterion);
    criterion.final_summary();
}
