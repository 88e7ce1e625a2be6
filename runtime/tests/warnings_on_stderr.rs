//! Issue 23: a program with no `tracing` subscriber still sees its plan's
//! warnings. With no subscriber listening, a world writes each SL0008
//! warning of a newly installed plan to stderr, once per plan; with one
//! listening, the warnings go to it (replan.rs counts them) and stderr stays
//! quiet.
//!
//! Stderr is the process's, so the worlds run in a child process: this test
//! binary, re-run on one test with `SLUICE_WARNINGS_CHILD` set.

use std::process::Command;

use sluice::{NodeBuilder, World};

#[derive(Debug, Default)]
struct Shared(u32);

const CHILD: &str = "SLUICE_WARNINGS_CHILD";

/// Two writers of one service ordered only by registration: SL0008. Runs
/// three iterations (one plan), then registers a third writer (a second
/// plan) and runs two more.
fn ambiguous_world() {
    let mut world = World::new();
    world.insert(Shared::default());
    world.add_system(NodeBuilder::new("first").system(|s: &mut Shared| s.0 += 1));
    world.add_system(NodeBuilder::new("second").system(|s: &mut Shared| s.0 += 2));
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    world.add_system(NodeBuilder::new("third").system(|s: &mut Shared| s.0 += 3));
    for _ in 0..2 {
        world.run_iteration().unwrap();
    }
}

#[test]
fn child_world() {
    match std::env::var(CHILD).as_deref() {
        Ok("bare") => ambiguous_world(),
        Ok("subscribed") => {
            let subscriber = tracing_subscriber::registry();
            tracing::subscriber::with_default(subscriber, ambiguous_world);
        }
        _ => {}
    }
}

fn child_stderr(mode: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_world", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .output()
        .unwrap();
    assert!(output.status.success(), "the child failed: {output:?}");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn without_a_subscriber_each_plan_prints_its_warnings_once_on_stderr() {
    let stderr = child_stderr("bare");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("sluice: warning[SL0008]"))
        .collect();
    assert_eq!(
        warnings.len(),
        2,
        "one per plan, not per iteration: {stderr}"
    );
    assert!(warnings[0].contains("first") && warnings[0].contains("second"));
    assert!(warnings[1].contains("third"), "{}", warnings[1]);
}

#[test]
fn with_a_subscriber_stderr_stays_quiet() {
    let stderr = child_stderr("subscribed");
    assert!(!stderr.contains("SL0008"), "{stderr}");
}
