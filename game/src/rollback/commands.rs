//! What `sluice-game --record`, `--replay` and `rollback` run (see
//! [`crate::cli::Options`]).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use crate::cli::{Command, Options, RollbackArgs};
use crate::rollback::battle::BattleSetup;
use crate::rollback::peers::{PeerSetup, UdpPeer, run_udp_peer};
use crate::rollback::replay::Replay;
use crate::rollback::socket::NetConditions;

/// Runs the rollback mode `options` ask for, writing what it finds to
/// `out`; `None` when they ask for the game itself. The error is the
/// message for standard error.
pub fn run(options: &Options, cores: usize, out: &mut dyn Write) -> Option<Result<(), String>> {
    let setup = BattleSetup {
        threads: options.threads.unwrap_or(cores).max(1),
        entities: options.entities,
    };
    if let Some(Command::Rollback(args)) = &options.command {
        return Some(peer(args, options, setup, out));
    }
    if let Some(path) = &options.replay {
        return Some(replay(path, setup.threads, out));
    }
    let path = options.record.as_ref()?;
    Some(record(path, options, setup, out))
}

fn record(
    path: &Path,
    options: &Options,
    setup: BattleSetup,
    out: &mut dyn Write,
) -> Result<(), String> {
    let replay = Replay::record_scripted(&setup, options.frames, options.seed)
        .map_err(|error| error.to_string())?;
    write_replay(path, &replay)?;
    let _ = writeln!(
        out,
        "rollback battle: {} units, {} frames, {} threads; checksum {:016x}\nrecorded: {}",
        setup.entities,
        options.frames,
        setup.threads,
        replay.checksum.unwrap_or_default(),
        path.display()
    );
    Ok(())
}

fn write_replay(path: &Path, replay: &Replay) -> Result<(), String> {
    let file = File::create(path).map_err(|error| format!("{}: {error}", path.display()))?;
    replay
        .write_to(BufWriter::new(file))
        .map_err(|error| format!("{}: {error}", path.display()))
}

fn replay(path: &Path, threads: usize, out: &mut dyn Write) -> Result<(), String> {
    let file = File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let replay = Replay::read_from(BufReader::new(file))
        .map_err(|error| format!("{}: {error}", path.display()))?;
    let checksum = replay.play(threads).map_err(|error| error.to_string())?;
    let _ = writeln!(
        out,
        "replay of {}: {} units, {} frames, {threads} threads; checksum {checksum:016x}",
        path.display(),
        replay.units,
        replay.inputs.len()
    );
    match replay.checksum {
        Some(recorded) if recorded != checksum => Err(format!(
            "{}: the replay ends with checksum {checksum:016x}, the recording with {recorded:016x}",
            path.display()
        )),
        Some(_) => {
            let _ = writeln!(out, "the same checksum as recorded");
            Ok(())
        }
        None => Ok(()),
    }
}

fn peer(
    args: &RollbackArgs,
    options: &Options,
    setup: BattleSetup,
    out: &mut dyn Write,
) -> Result<(), String> {
    let conditions = NetConditions {
        latency: Duration::from_millis(args.latency_ms),
        jitter: Duration::from_millis(args.jitter_ms),
        loss: f64::from(args.loss) / 100.0,
        reorder: 0.0,
        seed: options.seed ^ u64::from(args.player),
    };
    let peer = UdpPeer {
        setup: PeerSetup {
            battle: setup,
            conditions,
        },
        local_port: args.local_port,
        remote: args.remote,
        player: usize::from(args.player),
        frames: options.frames,
        seed: options.seed,
        limit: Duration::from_secs(args.timeout),
    };
    let report = run_udp_peer(&peer).map_err(|error| error.to_string())?;
    let checksum = report
        .checksum_at(options.frames)
        .ok_or_else(|| format!("frame {} was not confirmed", options.frames))?;
    let _ = writeln!(
        out,
        "rollback peer {}: {} frames confirmed; rollbacks {}, frames run again {}; packets sent {}, lost {}",
        args.player,
        options.frames,
        report.stats.loads,
        report.stats.resimulated,
        report.net.sent,
        report.net.lost
    );
    let _ = writeln!(out, "checksum {checksum:016x}");
    if let Some(path) = &args.record {
        let replay = Replay {
            units: setup.entities,
            inputs: report
                .inputs
                .get(..options.frames as usize)
                .ok_or_else(|| format!("frame {} was not run", options.frames))?
                .to_vec(),
            checksum: Some(checksum),
        };
        write_replay(path, &replay)?;
        let _ = writeln!(out, "recorded: {}", path.display());
    }
    Ok(())
}
