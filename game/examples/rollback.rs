//! The rollback battle (issue 39): what one rollback costs, and two peers
//! playing it over a lossy in-process network.
//!
//! `cargo run --release -p sluice-game --example rollback -- [UNITS] [FRAMES] [THREADS] [ROUNDS]`
//! (defaults: 20000 units, 300 frames, every core, 20 rounds; 0 frames
//! skips the two peers, for `valgrind --tool=callgrind`).
//!
//! 1. Runs the battle 60 frames, takes a snapshot, then times, many
//!    times over, one 8-frame rollback: `World::restore` and 8 frames run
//!    again, beside the 8 frames alone.
//! 2. Plays two peers in this thread (player 0 on one thread, player 1 on
//!    the pool), first over a perfect network, then over a rough one (20
//!    ms + up to 30 ms, 10% loss), and prints the confirmed frames per
//!    second and how often each peer rolled back.

use std::time::{Duration, Instant};

use sluice::Snapshot;
use sluice_game::rollback::{
    BattleInput, BattleSetup, NetConditions, PLAYERS, PeerSetup, RollbackGame, run_local_pair,
};

fn inputs(frame: u64) -> [BattleInput; PLAYERS] {
    std::array::from_fn(|player| BattleInput::scripted(39, player, frame))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let units: usize = args.next().map_or(Ok(20_000), |arg| arg.parse())?;
    let frames: u64 = args.next().map_or(Ok(300), |arg| arg.parse())?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads: usize = args.next().map_or(Ok(cores), |arg| arg.parse())?;
    let setup = BattleSetup {
        threads,
        entities: units,
    };

    // 1. One 8-frame rollback.
    let mut game = RollbackGame::new(&setup)?;
    for frame in 0..60 {
        game.advance(inputs(frame))?;
    }
    let mut snapshot = Snapshot::new();
    let begin = Instant::now();
    game.save_into(&mut snapshot)?;
    let first_snapshot = begin.elapsed();
    let start = game.frame();
    let rounds: u32 = args.next().map_or(Ok(20), |arg| arg.parse())?;
    let (mut forward, mut restore, mut snapshot_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut end = None;
    for _ in 0..rounds {
        let begin = Instant::now();
        game.save_into(&mut snapshot)?;
        snapshot_time += begin.elapsed();
        let begin = Instant::now();
        for frame in start..start + 8 {
            game.advance(inputs(frame))?;
        }
        forward += begin.elapsed();
        let begin = Instant::now();
        game.restore(&snapshot)?;
        restore += begin.elapsed();
        let checksum = game.checksum()?;
        assert_eq!(
            *end.get_or_insert(checksum),
            checksum,
            "a restore lost something"
        );
    }
    let per = |total: Duration| total.as_secs_f64() * 1e3 / f64::from(rounds);
    println!(
        "{units} units, {threads} threads: snapshot {:.3} ms (first, allocating {:.3} ms, {} bytes held); \
         8 frames {:.3} ms; restore {:.3} ms; one 8-frame rollback (restore + 8 frames) {:.3} ms",
        per(snapshot_time),
        first_snapshot.as_secs_f64() * 1e3,
        snapshot.heap_bytes(),
        per(forward),
        per(restore),
        per(forward + restore),
    );

    let begin = Instant::now();
    let checksum = snapshot.checksum();
    println!(
        "the snapshot's checksum {checksum:016x} (xxh3 of its saved state) took {:.3} ms",
        begin.elapsed().as_secs_f64() * 1e3
    );

    // 2. Two peers in this thread.
    if frames == 0 {
        return Ok(());
    }
    for (name, conditions) in [
        ("perfect", [NetConditions::PERFECT; PLAYERS]),
        ("rough", [NetConditions::rough(1), NetConditions::rough(2)]),
    ] {
        let peer = |player: usize, threads| PeerSetup {
            battle: BattleSetup {
                threads,
                entities: units,
            },
            conditions: conditions[player],
        };
        let report = run_local_pair(
            [peer(0, 1), peer(1, threads)],
            frames,
            39,
            Duration::from_secs(600),
        )?;
        println!(
            "two peers, {name} network: {} frames confirmed in {:.2} s: {:.1} frames/s; \
             rollbacks {} and {}, frames run again {} and {}; packets lost {} and {}; diverged at {:?}",
            report.confirmed(),
            report.running.as_secs_f64(),
            report.frames_per_second(),
            report.peers[0].stats.loads,
            report.peers[1].stats.loads,
            report.peers[0].stats.resimulated,
            report.peers[1].stats.resimulated,
            report.peers[0].net.lost,
            report.peers[1].net.lost,
            report.first_divergence(),
        );
        for peer in &report.peers {
            let stats = peer.stats;
            println!(
                "  player {}: {} frames run, {} saves (snapshot and checksum) {:.3} ms each, {} restores {:.3} ms each",
                peer.player,
                stats.advances,
                stats.saves,
                stats.save_time.as_secs_f64() * 1e3 / stats.saves.max(1) as f64,
                stats.loads,
                stats.restore_time.as_secs_f64() * 1e3 / stats.loads.max(1) as f64,
            );
        }
    }
    Ok(())
}
