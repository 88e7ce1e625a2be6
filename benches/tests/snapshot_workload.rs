//! The `snapshot` bench's workload computes the same thing on sluice (the
//! serial executor and a pool of 2 and 4 threads) and on bevy_ggrs, and
//! an 8-frame rollback on either side gives back the frames it replays;
//! sluice's checksum is the same on every thread count, and a save loads
//! back to it.

#[allow(dead_code)]
#[path = "../benches/snapshot_workload/mod.rs"]
mod snapshot_workload;

use snapshot_workload::{ROLLBACK_FRAMES, check_same, sluice_rollback_buffer, sluice_world};

const UNITS: usize = 2_000;

#[test]
fn sluice_and_bevy_ggrs_agree_before_and_after_a_rollback() {
    for threads in [1, 2, 4] {
        check_same(UNITS, threads);
    }
}

#[test]
fn checksum_is_the_same_on_every_thread_count_and_survives_a_save() {
    let checksums: Vec<u64> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut world = sluice_world(UNITS, threads);
            let buffer = sluice_rollback_buffer(&mut world);
            let last = buffer.get(ROLLBACK_FRAMES).expect("frame 8 kept");
            let first = buffer.get(0).expect("frame 0 kept");
            // The frames moved the units: the checksum sees it.
            assert_ne!(first.checksum(), last.checksum());
            last.checksum()
        })
        .collect();
    assert_eq!(checksums[0], checksums[1], "serial and 2 threads");
    assert_eq!(checksums[0], checksums[2], "serial and 4 threads");

    let mut world = sluice_world(UNITS, 2);
    let saved = world.snapshot().expect("snapshot");
    let mut file = Vec::new();
    saved.write_to(&mut file).expect("save");
    for _ in 0..3 {
        world.run_iteration().expect("frame");
    }
    assert_ne!(
        world.snapshot().expect("snapshot").checksum(),
        saved.checksum()
    );
    world.load_from(file.as_slice()).expect("load");
    assert_eq!(
        world.snapshot().expect("snapshot").checksum(),
        saved.checksum()
    );
}
