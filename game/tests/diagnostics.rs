//! The game shows its plan's diagnostics (issue 23): the printed report has
//! a "plan diagnostics" section listing every warning of the world's plan
//! (`world.plan()?.diagnostics()`, SL0008 ambiguities), so a warning is
//! seen on stdout as well as on stderr.

use std::process::Command;

use sluice_game::report::RunReport;
use sluice_game::{Config, Game};

fn config() -> Config {
    Config {
        threads: 2,
        frames: 3,
        entities: 200,
        timing: false,
    }
}

/// What the world's own plan reports, through the public API.
fn plan_diagnostics() -> Vec<String> {
    let mut game = Game::new(&config()).expect("the game starts");
    // The first update inserts the frame's services the plan checks for.
    game.frame().expect("a frame runs");
    let plan = game.world_mut().plan().expect("the game plans");
    plan.diagnostics().iter().map(ToString::to_string).collect()
}

#[test]
fn the_games_output_lists_its_plans_diagnostics() {
    let plot = std::env::temp_dir().join(format!("sluice-diagnostics-{}.svg", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_sluice-game"))
        .args([
            "--threads",
            "2",
            "--frames",
            "3",
            "--entities",
            "200",
            "--plot",
        ])
        .arg(&plot)
        .output()
        .expect("the game runs");
    let _ = std::fs::remove_file(&plot);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let expected = plan_diagnostics();
    let header = if expected.is_empty() {
        "plan diagnostics: none".to_owned()
    } else {
        format!("plan diagnostics: {}", expected.len())
    };
    assert!(stdout.contains(&header), "no `{header}` in:\n{stdout}");
    for diagnostic in &expected {
        assert!(
            stdout.contains(&format!("  {diagnostic}\n")),
            "`{diagnostic}` missing from:\n{stdout}"
        );
    }
}

#[test]
fn the_report_prints_every_diagnostic_or_none() {
    let mut report = RunReport::new(&config());
    assert!(report.to_string().contains("plan diagnostics: none\n"));
    report.diagnostics = vec![
        "warning[SL0008]: `a` and `b` conflict".into(),
        "warning[SL0008]: `c` and `d` conflict".into(),
    ];
    let printed = report.to_string();
    assert!(
        printed.contains(
            "plan diagnostics: 2\n  warning[SL0008]: `a` and `b` conflict\n  \
             warning[SL0008]: `c` and `d` conflict\n"
        ),
        "{printed}"
    );
}

/// The game is the example a user copies: every pair of its systems that
/// conflicts is ordered on purpose (`after = ..`), so its plan warns of
/// nothing and a new system that races one of them shows up here.
#[test]
fn the_games_plan_has_no_ambiguity() {
    assert_eq!(plan_diagnostics(), Vec::<String>::new());
}
