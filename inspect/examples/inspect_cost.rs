//! What the live inspector costs a frame: two identical games of 20,000
//! units (the same frames, the same work: the game is deterministic), one
//! without an inspector and one with an inspector and one WebSocket client
//! connected and reading every snapshot, run in interleaved rounds of
//! frames so that machine noise falls on both alike.
//!
//! `cargo run --release -p sluice-inspect --example inspect_cost -- [ROUNDS] [FRAMES] [UNITS]`
//!
//! Prints each side's median and mean frame time (the game's update plus,
//! on the inspected side, `Inspector::frame`), the ratio, and the mean
//! time of `Inspector::frame` itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sluice_game::{Config, Game};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    let frames: usize = args.next().map_or(Ok(25), |a| a.parse())?;
    let units: usize = args.next().map_or(Ok(20_000), |a| a.parse())?;
    let config = Config {
        threads: 2,
        frames: (rounds * frames) as u64 + 10,
        entities: units,
        timing: true,
    };
    let mut off = Game::new(&config)?;
    let mut on = Game::new(&config)?;
    let mut inspector = sluice_game::inspect::start("127.0.0.1:0")?;
    // The inspector turns per-node timing on; the game already has it on
    // both sides (`Config::timing`), so both measure the same clocks.

    // One client, connected and reading every snapshot as it comes.
    let received = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let client = {
        let url = format!("ws://{}/ws", inspector.local_addr());
        let received = Arc::clone(&received);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
                while !stop.load(Ordering::Relaxed) {
                    match tokio::time::timeout(Duration::from_millis(200), socket.next()).await {
                        Ok(Some(Ok(message))) => {
                            let text = message.into_text().unwrap_or_default();
                            if text.contains("\"snapshot\"") {
                                received.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Ok(_) => break,
                        Err(_) => {}
                    }
                }
            });
        })
    };

    let mut times_off = Vec::with_capacity(rounds * frames);
    let mut times_on = Vec::with_capacity(rounds * frames);
    let mut inspector_time = Duration::ZERO;
    for round in 0..rounds {
        // Alternate which side goes first, so neither always runs on a
        // warmer cache.
        for side in 0..2 {
            let inspected = (side + round) % 2 == 1;
            for _ in 0..frames {
                if inspected {
                    let begin = Instant::now();
                    on.frame()?;
                    let before_inspector = Instant::now();
                    inspector.frame(on.world_mut());
                    let end = Instant::now();
                    inspector_time += end - before_inspector;
                    times_on.push(end - begin);
                } else {
                    let begin = Instant::now();
                    off.frame()?;
                    times_off.push(begin.elapsed());
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = client.join();

    let stats = |times: &mut Vec<Duration>| {
        times.sort();
        let median = times[times.len() / 2];
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        (median, mean)
    };
    let (median_off, mean_off) = stats(&mut times_off);
    let (median_on, mean_on) = stats(&mut times_on);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{units} units, {rounds} rounds of {frames} frames a side, 2 threads, one WebSocket client ({} snapshots received)",
        received.load(Ordering::Relaxed)
    );
    println!(
        "inspector off: median {:.3} ms, mean {:.3} ms",
        ms(median_off),
        ms(mean_off)
    );
    println!(
        "inspector on:  median {:.3} ms, mean {:.3} ms",
        ms(median_on),
        ms(mean_on)
    );
    println!(
        "on / off: median {:+.2}%, mean {:+.2}%",
        (ms(median_on) / ms(median_off) - 1.0) * 100.0,
        (ms(mean_on) / ms(mean_off) - 1.0) * 100.0
    );
    let per_frame = inspector_time / times_on.len() as u32;
    println!(
        "Inspector::frame itself: {:.1} us a frame on average ({:.3}% of the off side's mean frame)",
        per_frame.as_secs_f64() * 1e6,
        per_frame.as_secs_f64() / mean_off.as_secs_f64() * 100.0
    );
    Ok(())
}
