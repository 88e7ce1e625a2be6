//! Snapshots, rollback and saves (issue 39): sluice beside bevy_ggrs 0.22
//! (on its own bevy 0.19) and beside a plain `Vec<T>` clone of the same
//! columns, the physical floor, in one group.
//!
//! The world has the game's shape: `n` units (20,000 and 200,000), each
//! with six plain `Copy` components modelled on `game/src/units.rs`
//! (`Pos`, `Vel`, `Health`, `Team`, `Slot`, `Weapon`), defined here so
//! both sides store exactly the same bytes. Rows, `snapshot/ROW/N/SIDE`:
//!
//! - `capture`: sluice `World::snapshot_into` a warm [`Snapshot`] with
//!   incremental capture off (every value copied, every time);
//!   bevy_ggrs its `SaveWorld` schedule with
//!   `rollback_component_with_copy` for the six components (what
//!   `ComponentSnapshotPlugin<CopyStrategy<T>>` runs each frame: one
//!   `HashMap<RollbackId, T>` per component, plus its entity and
//!   `RollbackOrdered` snapshots), driven as bevy_ggrs's own bench drives
//!   it (`World::run_schedule`, outside a session); the floor
//!   `Vec::clone_from` of six columns.
//! - `capture_shape` and `capture_moving`: sluice's incremental capture
//!   (`sluice_incremental`: a warm snapshot of the same world keeps the
//!   component types whose columns did not change since) beside the full
//!   one (`sluice_full`), after a frame's writes. `shape`, the game's: the
//!   frame writes `Pos`, `Weapon` and `Health` and never `Vel`, `Team` or
//!   `Slot` (as the three systems do); `moving`: it writes all six. The
//!   writes are one `get_mut` per type on one unit, which marks the whole
//!   column changed as a system writing every row does, so the rows time
//!   the capture alone; bevy_ggrs copies every component every frame
//!   whatever changed: its row is `capture`'s.
//! - `restore`: sluice `World::restore`; bevy_ggrs `LoadWorld` at the saved
//!   frame; the floor the same six `clone_from` the other way.
//! - `capture_checksum`: the capture plus the checksum of the state.
//!   sluice: `Snapshot::checksum` (xxh3-64 of each part's fixed-width
//!   encoding, then of the part hashes);
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
use sluice::{Entity, Snapshot, World};

mod snapshot_workload;
use snapshot_workload::units::{Health, Pos, Slot, Team, Vel, Weapon};
use snapshot_workload::{
    COUNTS, Columns, ROLLBACK_FRAMES, check_same, ggrs_rollback8, ggrs_side,
    sluice_rollback_buffer, sluice_rollback8, sluice_world,
};

/// A frame's writes, as far as a capture can tell: one `get_mut` per
/// written type on `unit` marks that type's column changed (the game's
/// three systems write `Pos`, `Weapon` and `Health`; `all` writes the
/// other three too).
fn write_frame(world: &mut World, unit: Entity, all: bool) {
    let mut unit = world.entity_mut(unit).expect("a unit");
    unit.get_mut::<Pos>().expect("Pos").x += 1.0;
    unit.get_mut::<Weapon>().expect("Weapon").cooldown ^= 1;
    unit.get_mut::<Health>().expect("Health").0 += 1;
    if all {
        unit.get_mut::<Vel>().expect("Vel").x += 1.0;
        unit.get_mut::<Team>().expect("Team").0 ^= 1;
        unit.get_mut::<Slot>().expect("Slot").x += 1.0;
    }
}

/// Any one unit of `world`.
fn first_unit(world: &mut World) -> Entity {
    world.query::<Entity>().iter().next().expect("a unit")
}

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
        snapshot.set_incremental(false);
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

        let unit = first_unit(&mut world);
        let mut incremental = Snapshot::new();
        world.snapshot_into(&mut incremental).expect("snapshot");
        for (row, all) in [("capture_shape", false), ("capture_moving", true)] {
            group.bench_function(format!("{row}/{n}/sluice_full"), |b| {
                b.iter(|| {
                    write_frame(&mut world, unit, all);
                    world.snapshot_into(&mut snapshot).expect("snapshot");
                });
            });
            group.bench_function(format!("{row}/{n}/sluice_incremental"), |b| {
                b.iter(|| {
                    write_frame(&mut world, unit, all);
                    world.snapshot_into(&mut incremental).expect("snapshot");
                });
            });
            assert_eq!(incremental.reused_components(), if all { 0 } else { 3 });
        }
        drop(incremental);

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
    let mut copied = Vec::new();
    for n in COUNTS {
        let mut world = sluice_world(n, 1);
        copied.push((n, copied_bytes(&mut world)));
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
    println!(
        "\nincremental capture: bytes of values and ticks copied per capture \
         (the rest of a capture, the entity list and slot table, is copied always)"
    );
    println!("| units | full | incremental, game's shape | incremental, all moving |");
    println!("| --- | --- | --- | --- |");
    for (n, [full, shape, moving]) in copied {
        println!("| {n} | {full} | {shape} | {moving} |");
    }
}

/// The bytes of values and ticks a capture copies: full, then incremental
/// after the game's frame (`Vel`, `Team`, `Slot` kept) and after a frame
/// that writes everything (nothing kept); each kept count checked.
fn copied_bytes(world: &mut World) -> [usize; 3] {
    // A value and its two `u32` ticks, per row.
    let row = |size: usize| size + 2 * size_of::<u32>();
    let written = row(size_of::<Pos>()) + row(size_of::<Weapon>()) + row(size_of::<Health>());
    let kept = row(size_of::<Vel>()) + row(size_of::<Team>()) + row(size_of::<Slot>());
    let n = world.entities().len();
    let unit = first_unit(world);
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).expect("snapshot");
    write_frame(world, unit, false);
    world.snapshot_into(&mut snapshot).expect("snapshot");
    assert_eq!(snapshot.reused_components(), 3);
    write_frame(world, unit, true);
    world.snapshot_into(&mut snapshot).expect("snapshot");
    assert_eq!(snapshot.reused_components(), 0);
    [n * (written + kept), n * written, n * (written + kept)]
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
