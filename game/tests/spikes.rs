//! The game runs with the spike watch on and prints its list: every line
//! is a spike by the game's thresholds, and the list is the world's.

use sluice_game::report::{SPIKE_WATCH, WINDOW};
use sluice_game::{Config, run};

#[test]
fn the_report_lists_the_spikes_the_watch_reported() {
    let report = run(
        &Config {
            threads: 2,
            frames: WINDOW as u64 + 60,
            entities: 400,
            timing: false,
        },
        |_| {},
    )
    .expect("the game runs");
    let printed = report.to_string();
    assert!(
        printed.contains(&format!(
            "spikes (a node's run over 4x its peak of its last {WINDOW} runs and over 1.0 ms): {}",
            report.spikes_total
        )),
        "{printed}"
    );
    assert!(report.spikes.len() as u64 <= report.spikes_total);
    assert!(report.spikes.len() <= SPIKE_WATCH.keep);
    for spike in &report.spikes {
        // Judged only with a full window of runs, and no node runs more
        // than twice a frame (two fixed steps at most).
        assert!(spike.frame >= WINDOW as u64 / 2, "{spike:?}");
        assert!(spike.time >= SPIKE_WATCH.min, "{spike:?}");
        assert!(
            spike.time.as_secs_f64() > 4.0 * spike.peak.as_secs_f64(),
            "{spike:?}"
        );
        assert!(spike.mean <= spike.peak, "{spike:?}");
        assert!(printed.contains(&format!("frame {:>5}: {:<24}", spike.frame, spike.node)));
    }
}
