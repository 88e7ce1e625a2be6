//! `--trace`: a Chrome trace with the runtime's node spans named after
//! their nodes, the async tasks, the boundaries and the game's frames.

use sluice_game::{Config, run, trace};

#[test]
fn trace_names_nodes_batches_and_frames() {
    let path = std::env::temp_dir().join(format!("sluice-game-trace-{}.json", std::process::id()));
    let guard = trace::install(&path).expect("no other subscriber in this test binary");
    run(
        &Config {
            threads: 2,
            frames: 5,
            entities: 300,
            timing: false,
        },
        |_| {},
    )
    .expect("the game runs");
    drop(guard);
    let text = std::fs::read_to_string(&path).expect("the trace is written");
    let _ = std::fs::remove_file(&path);
    for name in [
        "\"node: steer\"",
        "\"node: integrate\"",
        "\"node: particles\"",
        "\"frame\"",
        "\"task\"",
        "\"boundary\"",
    ] {
        assert!(text.contains(name), "{name} not in the trace");
    }
}
