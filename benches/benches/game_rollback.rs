//! The game's rolled-back battle (issue 39's benchmarks): snapshot,
//! restore and checksum of [`RollbackGame`](sluice_game::rollback::RollbackGame)'s
//! world at 20,000 and 200,000 units, an 8-frame rollback end to end, and
//! a save to a file and a load from it. Rows, `game_rollback/ROW/N`:
//!
//! - `capture`: `World::snapshot_into` a warm snapshot (no allocation);
//! - `restore`: `World::restore` of it;
//! - `checksum`: `Snapshot::checksum` of it (what the rollback session
//!   hands ggrs with every save);
//! - `rollback8`: restore, then the 8 frames after it again;
//! - `save_file` / `load_file`: `Snapshot::write_to` a buffered file in a
//!   temporary directory, `World::load_from` it back.
//!
//! Single-threaded (the world's pool of 1: every node on the calling
//! thread). Unlike `snapshot`'s six `Copy` components, this is the game's
//! real world: units, captains, turrets with their hierarchy and
//! transforms, and the services that change.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, SamplingMode};

mod game_rollback_workload;
use game_rollback_workload::{
    COUNTS, capture, checksum, game, load_file, restore, rollback8, save_file,
};

fn criterion_rows(c: &mut Criterion) {
    let mut group = c.benchmark_group("game_rollback");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    let dir = tempfile::tempdir().expect("temporary directory");
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
        let path = dir.path().join(format!("game_{n}.save"));
        // Written once here too, so that `load_file` runs alone under a filter.
        save_file(&snapshot, &path);
        group.sample_size(10);
        group.bench_function(format!("save_file/{n}"), |b| {
            b.iter(|| save_file(&snapshot, &path));
        });
        group.bench_function(format!("load_file/{n}"), |b| {
            b.iter(|| load_file(&mut game, &path));
        });
        let bytes = std::fs::metadata(&path).map_or(0, |meta| meta.len());
        println!(
            "game_rollback/{n}: a snapshot holds {} bytes; the save is {bytes} bytes",
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
