//! Replays: recorded and played back to the same checksum, through the
//! library and through `sluice-game --record/--replay`; garbage and cut
//! files are errors naming the line and byte.

use std::process::Command;

use sluice_game::rollback::{BattleInput, Replay, ReplayError};

use crate::small;

#[test]
fn a_recorded_run_replays_to_its_checksum_on_any_thread_count() {
    let recorded = Replay::record_scripted(&small(1), 90, 11).expect("the battle runs");
    let mut file = Vec::new();
    recorded.write_to(&mut file).expect("into memory");
    let read = Replay::read_from(&file[..]).expect("what it wrote");
    assert_eq!(read, recorded);
    let checksum = recorded.checksum.expect("recorded with its checksum");
    assert_eq!(read.play(1).expect("replays"), checksum);
    assert_eq!(read.play(3).expect("replays"), checksum);
    // A replay with one input changed ends elsewhere.
    let mut changed = read.clone();
    changed.inputs[40][1].nudge_x = changed.inputs[40][1].nudge_x.wrapping_add(100);
    assert_ne!(changed.play(1).expect("replays"), checksum);
}

fn error(text: &str) -> ReplayError {
    Replay::read_from(text.as_bytes()).expect_err("a bad replay")
}

const HEADER: &str = "sluice-replay 1\nunits 100\nframes 2\n";

#[test]
fn bad_replays_name_the_line_and_byte() {
    let cases: [(String, &str); 12] = [
        (
            String::new(),
            "replay line 1: the file ends inside its header",
        ),
        (
            "sluice-replay 2\n".into(),
            "replay line 1, byte 1: expected \"sluice-replay 1\", found \"sluice-replay 2\"",
        ),
        (
            "sluice-replay 1\nunits many\n".into(),
            "replay line 2, byte 7: expected \"units N\" (N from 2), found \"many\"",
        ),
        (
            "sluice-replay 1\nunits 1\nframes 1\n".into(),
            "replay line 2, byte 7: expected a unit count from 2, found \"units 1\"",
        ),
        (
            "sluice-replay 1\nunits 100\nframes 99999999999\n".into(),
            "replay line 3, byte 8: expected a frame count up to 2^32 - 1, found \"frames 99999999999\"",
        ),
        (
            format!("{HEADER}0 1 2 3 4 5 6\n"),
            "replay line 5: the file ends after 1 of its 2 frames",
        ),
        (
            format!("{HEADER}0 1 2 3 4 5 6\n2 1 2 3 4 5 6\n"),
            "replay line 5: frame 2 where frame 1 belongs",
        ),
        (
            format!("{HEADER}0 1 2 3 4 500 6\n1 1 2 3 4 5 6\n"),
            "replay line 4, byte 11: expected a nudge from -128 to 127, found \"500\"",
        ),
        (
            format!("{HEADER}0 1 2 3 4 5 -6\n1 1 2 3 4 5 6\n"),
            "replay line 4, byte 13: expected buttons from 0 to 255, found \"-6\"",
        ),
        (
            format!("{HEADER}0 1 2 3 4 5\n"),
            "replay line 4, byte 12: expected nudge_x nudge_y buttons for each of the two players, found \"the end of the line\"",
        ),
        (
            format!("{HEADER}0 1 2 3 4 5 6 7\n"),
            "replay line 4, byte 15: expected the end of the line, found \"7\"",
        ),
        (
            format!("{HEADER}checksum xyz\n"),
            "replay line 4, byte 10: expected a hexadecimal checksum, found \"xyz\"",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(&text).to_string(), expected, "for {text:?}");
    }
    // Comments and blank lines are skipped; trailing lines are refused.
    let good = format!("# a comment\n\n{HEADER}0 1 2 3 4 5 6\n\n1 0 0 0 0 0 0\n");
    assert_eq!(
        Replay::read_from(good.as_bytes())
            .expect("valid")
            .inputs
            .len(),
        2
    );
    assert_eq!(
        error(&format!("{good}junk\n")).to_string(),
        "replay line 9, byte 1: expected the end of the file, found \"junk\""
    );
}

#[test]
fn binary_garbage_and_huge_lines_are_errors() {
    let garbage: Vec<u8> = (0..10_000u32)
        .map(|index| (index.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let error = Replay::read_from(&garbage[..]).expect_err("garbage");
    assert!(
        matches!(
            error,
            ReplayError::NotText { line: 1 }
                | ReplayError::LongLine { line: 1 }
                | ReplayError::Unexpected { line: 1, .. }
        ),
        "{error}"
    );
    let long = format!("{HEADER}0{}\n", " 1".repeat(1_000_000));
    assert_eq!(
        Replay::read_from(long.as_bytes())
            .expect_err("too long")
            .to_string(),
        "replay line 4: longer than 256 bytes"
    );
    let mut not_text = HEADER.as_bytes().to_vec();
    not_text.extend_from_slice(b"0 1 2 \xff\xfe 4 5 6\n");
    assert_eq!(
        Replay::read_from(&not_text[..])
            .expect_err("not UTF-8")
            .to_string(),
        "replay line 4: not UTF-8 text"
    );
}

#[test]
fn every_cut_of_a_replay_is_an_error_not_a_panic() {
    let replay = Replay {
        units: 100,
        inputs: vec![
            [BattleInput {
                nudge_x: -128,
                nudge_y: 127,
                buttons: 255
            }; 2];
            3
        ],
        checksum: Some(0x0123_4567_89ab_cdef),
    };
    let mut file = Vec::new();
    replay.write_to(&mut file).expect("into memory");
    // Every cut but the one of the final newline alone.
    for cut in 0..file.len() - 1 {
        // A cut inside the last line may still parse as a shorter number:
        // never as the whole replay.
        if let Ok(read) = Replay::read_from(&file[..cut]) {
            assert_ne!(read, replay, "cut at {cut} read as the whole");
        }
    }
    assert_eq!(Replay::read_from(&file[..]).expect("whole"), replay);
}

fn sluice_game(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sluice-game"))
        .args(args)
        .output()
        .expect("sluice-game runs")
}

#[test]
fn the_command_line_records_and_replays() {
    let dir = std::env::temp_dir().join(format!("sluice-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join("battle.replay");
    let path = file.to_str().expect("a UTF-8 path");
    let recorded = sluice_game(&[
        "--entities",
        "400",
        "--frames",
        "60",
        "--threads",
        "1",
        "--record",
        path,
    ]);
    let stdout = String::from_utf8_lossy(&recorded.stdout);
    assert!(
        recorded.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let checksum = stdout
        .split("checksum ")
        .nth(1)
        .expect("a checksum")
        .get(..16)
        .expect("16 digits");
    let replayed = sluice_game(&["--replay", path, "--threads", "2"]);
    let out = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        replayed.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert!(out.contains(&format!("checksum {checksum}")), "{out}");
    assert!(out.contains("the same checksum as recorded"), "{out}");

    // A changed input: the replay runs, and says it ended elsewhere.
    let text = std::fs::read_to_string(&file).expect("the replay");
    let tampered: String = text
        .lines()
        .map(|line| {
            if line.starts_with("30 ") {
                "30 127 127 1 -127 -127 1\n".to_owned()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_ne!(tampered, text);
    std::fs::write(&file, &tampered).expect("written");
    let replayed = sluice_game(&["--replay", path]);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(!replayed.status.success());
    assert!(stderr.contains("the recording with"), "{stderr}");

    // A cut file: the line is named, exit status 1.
    std::fs::write(&file, &text[..text.len() / 2]).expect("written");
    let replayed = sluice_game(&["--replay", path]);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert_eq!(replayed.status.code(), Some(1));
    assert!(stderr.contains("battle.replay: replay line"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let missing = sluice_game(&["--replay", "/nonexistent/replay"]);
    assert_eq!(missing.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}
