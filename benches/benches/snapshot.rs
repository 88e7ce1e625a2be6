//! Snapshots, rollback and saves (issue 39): sluice beside bevy_ggrs 0.22
//! (on its own bevy 0.19) and beside a plain `Vec<T>` clone of the same
//! columns, the physical floor, in one group.
//!
//! The world has the game's shape: `n` units (20,000 and 200,000), each
//! with six plain `Copy` components modelled on `game/src/units.rs`
//! (`Pos`, `Vel`, `Health`, `Team`, `Slot`, `Weapon`), defined here so
//! both sides store exactly the same bytes. Rows, `snapshot/ROW/N/SIDE`:
//!
//! - `capture`: sluice `World::snapshot_into` a warm [`Snapshot`];
//!   bevy_ggrs its `SaveWorld` schedule with
//!   `rollback_component_with_copy` for the six components (what
//!   `ComponentSnapshotPlugin<CopyStrategy<T>>` runs each frame: one
//!   `HashMap<RollbackId, T>` per component, plus its entity and
//!   `RollbackOrdered` snapshots), driven as bevy_ggrs's own bench drives
//!   it (`World::run_schedule`, outside a session); the floor
//!   `Vec::clone_from` of six columns.
//! - `restore`: sluice `World::restore`; bevy_ggrs `LoadWorld` at the saved
//!   frame; the floor the same six `clone_from` the other way.
//! - `capture_checksum`: the capture plus the checksum of the state.
//!   sluice: `Snapshot::checksum` (xxh3 of the postcard encoding, streamed);
//!   bevy_ggrs: the same `SaveWorld` with `checksum_component` for the six
//!   components and `ChecksumPlugin` (a SeaHash per component value, XORed).
//! - `rollback8`: one 8-frame rollback end to end: restore the oldest
//!   kept frame, then 8 times (run the frame's three systems, keep a
//!   snapshot of the frame). sluice: `RollbackBuffer::load` then
//!   `run_iteration` + `RollbackBuffer::save`; bevy_ggrs: `LoadWorld`
//!   then `AdvanceWorld` + `SaveWorld`, as its session does.
//! - `save_file` / `load_file` (sluice only: bevy_ggrs has no saves):
//!   `Snapshot::write_to` a buffered file in a temporary directory, and
//!   `World::load_from` it back.
//!
//! Both sides run single-threaded (sluice's serial executor; bevy 0.19
//! here is built without `multi_threaded`). After criterion's figures a
//! summary prints the bytes each side keeps per snapshot and the file's
//! size (`-- --summary-only` skips criterion).

#![allow(missing_docs)]

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::time::Duration;

use criterion::Criterion;
use sluice::Snapshot;

mod snapshot_workload;
use snapshot_workload::{
    COUNTS, Columns, ROLLBACK_FRAMES, check_same, ggrs_rollback8, ggrs_side,
    sluice_rollback_buffer, sluice_rollback8, sluice_world,
};

fn criterion_rows(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    let dir = tempfile::tempdir().expect("temporary directory");
    for n in COUNTS {
        check_same(n, 1);
        let mut world = sluice_world(n, 1);
        let mut snapshot = Snapshot::new();
        world.snapshot_into(&mut snapshot).expect("snapshot");
        let mut app = ggrs_side::app(n, false);
        let mut app_checksum = ggrs_side::app(n, true);
        let columns = Columns::new(n);
        let mut copy = columns.clone();

        group.bench_function(format!("capture/{n}/sluice"), |b| {
            b.iter(|| world.snapshot_into(&mut snapshot).expect("snapshot"));
        });
        let mut frame = 0;
        group.bench_function(format!("capture/{n}/bevy_ggrs"), |b| {
            b.iter(|| {
                frame += 1;
                ggrs_side::save(&mut app, frame);
            });
        });
        group.bench_function(format!("capture/{n}/vec_floor"), |b| {
            b.iter(|| copy.copy_from(&columns));
        });

        group.bench_function(format!("restore/{n}/sluice"), |b| {
            b.iter(|| world.restore(&snapshot).expect("restore"));
        });
        group.bench_function(format!("restore/{n}/bevy_ggrs"), |b| {
            b.iter(|| ggrs_side::load(&mut app, frame));
        });
        let mut back = columns.clone();
        group.bench_function(format!("restore/{n}/vec_floor"), |b| {
            b.iter(|| back.copy_from(&copy));
        });

        group.bench_function(format!("checksum/{n}/sluice"), |b| {
            b.iter(|| snapshot.checksum());
        });
        group.bench_function(format!("capture_checksum/{n}/sluice"), |b| {
            b.iter(|| {
                world.snapshot_into(&mut snapshot).expect("snapshot");
                snapshot.checksum()
            });
        });
        let mut frame = 0;
        group.bench_function(format!("capture_checksum/{n}/bevy_ggrs"), |b| {
            b.iter(|| {
                frame += 1;
                ggrs_side::save(&mut app_checksum, frame);
            });
        });
        drop(app_checksum);

        let mut buffer = sluice_rollback_buffer(&mut world);
        group.bench_function(format!("rollback8/{n}/sluice"), |b| {
            b.iter(|| sluice_rollback8(&mut world, &mut buffer));
        });
        drop(buffer);
        let mut app = ggrs_side::app(n, false);
        for frame in 1..=ROLLBACK_FRAMES as i32 {
            ggrs_side::advance(&mut app);
            ggrs_side::save(&mut app, frame);
        }
        group.bench_function(format!("rollback8/{n}/bevy_ggrs"), |b| {
            b.iter(|| ggrs_rollback8(&mut app));
        });
        drop(app);

        let path = dir.path().join(format!("units_{n}.save"));
        // Written once here too, so that `load_file` runs alone under a filter.
        let file = File::create(&path).expect("create");
        snapshot.write_to(BufWriter::new(file)).expect("save");
        group.sample_size(10);
        group.bench_function(format!("save_file/{n}/sluice"), |b| {
            b.iter(|| {
                let file = File::create(&path).expect("create");
                snapshot.write_to(BufWriter::new(file)).expect("save");
            });
        });
        group.bench_function(format!("load_file/{n}/sluice"), |b| {
            b.iter(|| {
                let file = File::open(&path).expect("open");
                world.load_from(BufReader::new(file)).expect("load");
            });
        });
        group.sample_size(20);
    }
    group.finish();
}

/// The bytes each side keeps per snapshot, and the save's size.
fn summary() {
    println!("\nsnapshot summary: bytes kept per snapshot, and the save on disk");
    println!(
        "| units | sluice `heap_bytes` | bevy_ggrs (component maps, estimated) | vec floor | save file |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let dir = tempfile::tempdir().expect("temporary directory");
    for n in COUNTS {
        let world = sluice_world(n, 1);
        let snapshot = world.snapshot().expect("snapshot");
        assert_eq!(snapshot.entity_count(), n);
        let path = dir.path().join("units.save");
        let file = File::create(&path).expect("create");
        snapshot.write_to(BufWriter::new(file)).expect("save");
        let file_bytes = std::fs::metadata(&path).expect("metadata").len();
        println!(
            "| {n} | {} | {} | {} | {file_bytes} |",
            snapshot.heap_bytes(),
            ggrs_side::bytes_per_snapshot(n),
            Columns::new(n).value_bytes(),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--summary-only") {
        let mut criterion = Criterion::default().configure_from_args();
        criterion_rows(&mut criterion);
        criterion.final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
