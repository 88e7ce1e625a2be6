//! The ggrs sessions over the battle: the sync test at check distances 2
//! to 7, two peers in one process (serial against a pool of 2) over a
//! lossy network, and two processes over loopback UDP.

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::Duration;

use sluice_game::rollback::{
    NetConditions, PeerSetup, Replay, RollbackError, run_local_pair, run_sync_test,
};

use crate::small;

/// Frames of the long runs: fewer in debug builds.
const FRAMES: u64 = if cfg!(debug_assertions) { 150 } else { 600 };

#[test]
fn sync_test_at_check_distances_2_to_7() {
    for check_distance in 2..=7 {
        let frames = FRAMES / 3 + check_distance as u64;
        let report = run_sync_test(&small(1), check_distance, frames, 21)
            .unwrap_or_else(|error| panic!("check distance {check_distance}: {error}"));
        assert_eq!(report.frames, frames);
        // Every frame past the check distance was rolled back and re-run.
        let rerun = frames - check_distance as u64 - 1;
        assert_eq!(report.stats.loads, rerun, "check distance {check_distance}");
        assert_eq!(
            report.stats.resimulated,
            rerun * check_distance as u64,
            "check distance {check_distance}"
        );
    }
}

#[test]
fn sync_test_refuses_a_bad_check_distance() {
    for distance in [0, 16, usize::MAX] {
        let error = run_sync_test(&small(1), distance, 10, 0).expect_err("out of range");
        assert!(matches!(error, RollbackError::Setting(_)), "{error}");
        assert!(error.to_string().contains("check distance"), "{error}");
    }
}

#[test]
fn two_peers_agree_on_every_confirmed_frame_over_a_lossy_network() {
    let peer = |threads, seed| PeerSetup {
        battle: small(threads),
        conditions: NetConditions::rough(seed),
    };
    let report = run_local_pair(
        [peer(1, 1), peer(2, 2)],
        FRAMES,
        5,
        Duration::from_secs(240),
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let confirmed = report.confirmed();
    assert!(confirmed >= FRAMES as i32, "{confirmed}");
    assert_eq!(report.first_divergence(), None, "the peers diverged");
    let [first, second] = &report.peers;
    for frame in 0..=FRAMES as usize {
        assert_eq!(
            first.checksums[frame], second.checksums[frame],
            "frame {frame}"
        );
    }
    // The peers predicted wrong and rolled back (which of them, and how
    // often, depends on timing); the network lost packets both ways; both
    // ran the same confirmed inputs.
    let loads: u64 = report.peers.iter().map(|peer| peer.stats.loads).sum();
    let rerun: u64 = report.peers.iter().map(|peer| peer.stats.resimulated).sum();
    assert!(
        loads > 0 && rerun >= loads,
        "{loads} rollbacks, {rerun} frames run again"
    );
    for peer in &report.peers {
        assert!(
            peer.net.lost > 0,
            "nothing lost from player {}",
            peer.player
        );
    }
    assert_eq!(
        first.inputs[..FRAMES as usize],
        second.inputs[..FRAMES as usize]
    );
    // The confirmed inputs replay to the confirmed checksum.
    let replay = Replay {
        units: small(1).entities,
        inputs: first.inputs[..FRAMES as usize].to_vec(),
        checksum: None,
    };
    assert_eq!(
        replay.play(1).expect("replays"),
        first.checksum_at(FRAMES).expect("confirmed")
    );
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|socket| socket.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn two_processes_over_udp_end_with_the_same_checksum() {
    let ports = [free_port(), free_port()];
    let frames = (FRAMES / 2).to_string();
    let dir = std::env::temp_dir().join(format!("sluice-udp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let children: Vec<_> = (0..2)
        .map(|player| {
            let remote = format!("127.0.0.1:{}", ports[1 - player]);
            let record = dir.join(format!("peer{player}.replay"));
            Command::new(env!("CARGO_BIN_EXE_sluice-game"))
                .args(["rollback", "--local-port", &ports[player].to_string()])
                .args(["--remote", &remote, "--player", &player.to_string()])
                .args(["--latency-ms", "5", "--jitter-ms", "10", "--loss", "10"])
                .args([
                    "--frames",
                    &frames,
                    "--entities",
                    &small(1).entities.to_string(),
                ])
                .args(["--threads", &(player + 1).to_string(), "--timeout", "120"])
                .arg("--record")
                .arg(&record)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sluice-game starts")
        })
        .collect();
    let outputs: Vec<String> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("sluice-game ends");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(
                output.status.success(),
                "{stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            );
            stdout
        })
        .collect();
    let checksum = |out: &str| {
        out.lines()
            .find_map(|line| line.strip_prefix("checksum "))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no checksum in {out}"))
    };
    assert_eq!(checksum(&outputs[0]), checksum(&outputs[1]), "{outputs:?}");
    // Each peer's recording replays to the checksum both confirmed.
    let replayed = Command::new(env!("CARGO_BIN_EXE_sluice-game"))
        .arg("--replay")
        .arg(dir.join("peer1.replay"))
        .output()
        .expect("sluice-game runs");
    let out = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        replayed.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert!(
        out.contains(&format!("checksum {}", checksum(&outputs[0]))),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn requests_out_of_order_are_errors_that_change_nothing() {
    use ggrs::{GameStateCell, GgrsRequest, InputStatus};
    use sluice_game::rollback::{BattleConfig, BattleInput, Rollback, SavedFrame};

    let mut rollback = Rollback::new(&small(2)).expect("the battle builds");
    let cell = GameStateCell::<SavedFrame>::default();
    let save = |frame| GgrsRequest::<BattleConfig>::SaveGameState {
        cell: cell.clone(),
        frame,
    };
    let load = |frame| GgrsRequest::<BattleConfig>::LoadGameState {
        cell: cell.clone(),
        frame,
    };
    let advance = || GgrsRequest::<BattleConfig>::AdvanceFrame {
        inputs: vec![(BattleInput::scripted(1, 0, 0), InputStatus::Confirmed); 2],
    };
    let error = rollback.handle(vec![load(0)]).expect_err("nothing saved");
    assert!(
        matches!(error, RollbackError::NothingSaved { frame: 0 }),
        "{error}"
    );
    let error = rollback
        .handle(vec![save(3)])
        .expect_err("the battle is at 0");
    assert!(
        matches!(
            error,
            RollbackError::FrameMismatch {
                requested: 3,
                battle: 0
            }
        ),
        "{error}"
    );
    let start = rollback.game().checksum().expect("a snapshot");
    rollback
        .handle(vec![save(0), advance(), advance()])
        .expect("in order");
    assert_eq!(rollback.game().frame(), 2);
    let moved = rollback.game().checksum().expect("a snapshot");
    assert_ne!(moved, start);
    // A load naming another frame than the cell's is refused before the
    // world changes.
    let error = rollback
        .handle(vec![load(1)])
        .expect_err("the cell holds 0");
    assert!(
        matches!(
            error,
            RollbackError::FrameMismatch {
                requested: 1,
                battle: 0
            }
        ),
        "{error}"
    );
    assert_eq!(rollback.game().checksum().expect("a snapshot"), moved);
    rollback.handle(vec![load(0)]).expect("in order");
    assert_eq!(rollback.game().frame(), 0);
    assert_eq!(rollback.game().checksum().expect("a snapshot"), start);
    // A short input list: the missing player plays the default input.
    rollback
        .handle(vec![GgrsRequest::AdvanceFrame { inputs: vec![] }])
        .expect("a frame with default inputs");
    assert_eq!(rollback.inputs()[0], [BattleInput::default(); 2]);
}
