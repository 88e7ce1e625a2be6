//! The guide's chapter "The spike watch" (`docs/guide/10-spike-watch.md`), runnable:
//! `cargo run --example spikes`.
//!
//! A frame of three nodes runs 60 iterations under the spike watch: one
//! node hitches once (and is reported, once), an exempt node waits every
//! few frames (and is never reported), and a node behind a run condition
//! is judged only on the runs of its body.

use std::time::Duration;

use sluice::{NodeBuilder, SpikeWatch, World};

/// Counts the frames; read by the nodes to decide when to misbehave.
struct Frame(u32);

/// The frame in which `stream_level` hitches.
const HITCH_FRAME: u32 = 30;
/// How long the hitch takes: far above the watch's floor below.
const HITCH: Duration = Duration::from_millis(40);

fn main() {
    let mut world = World::new();
    world.insert(Frame(0));
    world.add_system(NodeBuilder::new("count_frames").system(|frame: &mut Frame| frame.0 += 1));
    // Ordinary work that hitches once: a spike.
    let stream = world.add_system(
        NodeBuilder::new("stream_level")
            .after("count_frames")
            .system(|frame: &Frame| {
                if frame.0 == HITCH_FRAME {
                    std::thread::sleep(HITCH);
                }
            }),
    );
    // Its time is not its own (it waits for the display): exempt.
    let present = world.add_system(
        NodeBuilder::new("present")
            .after("count_frames")
            .spike_exempt()
            .system(|frame: &Frame| {
                if frame.0.is_multiple_of(10) {
                    std::thread::sleep(HITCH);
                }
            }),
    );
    // Runs one frame in four: its skipped runs add nothing to its history.
    let autosave = world.add_system(
        NodeBuilder::new("autosave")
            .after("count_frames")
            .system(|| {})
            .run_if(|frame: &Frame| frame.0.is_multiple_of(4)),
    );

    world
        .set_spike_watch(Some(SpikeWatch {
            window: 8,
            ratio: 4.0,
            min: Duration::from_millis(10),
            keep: 16,
        }))
        .expect("every field in range");

    for _ in 0..12 {
        world.run_iteration().expect("the frame runs");
    }
    // 12 frames, the body of `autosave` ran in 3 (frames 4, 8, 12): only
    // those are in its history.
    let saves = world.spike_history(autosave).expect("watched").len();
    println!("autosave after 12 frames: {saves} runs in its history");
    assert_eq!(saves, 3);
    for _ in 12..60 {
        world.run_iteration().expect("the frame runs");
    }

    for spike in world.spikes() {
        println!("spike: {spike}");
    }
    let spikes: Vec<_> = world.spikes().collect();
    assert_eq!(spikes.len(), 1, "one hitch, one spike");
    assert_eq!(&*spikes[0].name, "stream_level");
    assert_eq!(spikes[0].node, stream);
    // `iteration` counts the iterations that ran before: frame 30 is the
    // 30th iteration, so 29 ran before it.
    assert_eq!(spikes[0].iteration, u64::from(HITCH_FRAME - 1));
    assert!(spikes[0].time >= HITCH);
    assert!(spikes[0].time > spikes[0].peak * 4);
    assert_eq!(world.spikes_total(), 1);

    // The exempt node has no history; the others hold their last 8 runs.
    assert!(
        world.spike_history(present).is_none(),
        "exempt nodes are not watched"
    );
    let history = world.spike_history(stream).expect("watched");
    println!(
        "stream_level: {} runs, peak {:?}, mean {:?}",
        history.len(),
        history.peak().expect("full"),
        history.mean().expect("full")
    );
    assert_eq!(history.len(), 8);
    assert_eq!(world.spike_history(autosave).expect("watched").len(), 8);

    // Off: the histories go, the spikes already reported stay.
    world.set_spike_watch(None).expect("off is always accepted");
    assert!(world.spike_history(stream).is_none());
    assert_eq!(world.spikes().len(), 1);
    println!("watch off: {} spike kept", world.spikes().len());
}
