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

/// The calling thread's CPU time: unlike wall time, it does not grow while
/// the thread waits for a core on a busy machine. `None` off Linux.
fn thread_cpu_time() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY:
        // - `now` is a valid, writable `timespec` for the call's duration.
        // - CLOCK_THREAD_CPUTIME_ID is a clock every Linux has; on failure
        //   the return value says so and `now` is not read.
        let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

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
    let mut inspector_calls = Vec::with_capacity(rounds * frames);
    let mut inspector_cpu = Duration::ZERO;
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
                    let cpu_before = thread_cpu_time();
                    inspector.frame(on.world_mut());
                    if let (Some(before), Some(after)) = (cpu_before, thread_cpu_time()) {
                        inspector_cpu += after.saturating_sub(before);
                    }
                    let end = Instant::now();
                    inspector_time += end - before_inspector;
                    inspector_calls.push(end - before_inspector);
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
    let snapshots = received.load(Ordering::Relaxed);
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
        "{units} units, {rounds} rounds of {frames} frames a side, 2 threads, one WebSocket client ({snapshots} snapshots received)"
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
    // The server's work per snapshot: serializing it once (what every
    // client then shares), timed alone; the fastest tenth of many runs.
    let snapshot = inspector.snapshot();
    let mut serializing: Vec<Duration> = (0..200)
        .map(|_| {
            let begin = Instant::now();
            let json = serde_json::to_string(&*snapshot).unwrap();
            std::hint::black_box(json);
            begin.elapsed()
        })
        .collect();
    serializing.sort();
    let serialize = serializing[serializing.len() / 10];
    let frames_on = times_on.len() as u32;
    let game_thread = inspector_cpu / frames_on;
    let server = serialize * snapshots as u32 / frames_on;
    let per_frame = game_thread + server;
    println!(
        "inspector CPU a frame: {:.2} us on the game thread (Inspector::frame, thread CPU time, first call included) + {:.2} us on the server ({} snapshots serialized at {:.1} us) = {:.2} us, {:.3}% of the off side's median frame",
        game_thread.as_secs_f64() * 1e6,
        server.as_secs_f64() * 1e6,
        snapshots,
        serialize.as_secs_f64() * 1e6,
        per_frame.as_secs_f64() * 1e6,
        per_frame.as_secs_f64() / median_off.as_secs_f64() * 100.0
    );
    // The first call turns timing on and draws the plan's picture: once.
    let steady = &inspector_calls[1..];
    let steady_mean = steady.iter().sum::<Duration>() / steady.len() as u32;
    println!(
        "Inspector::frame after its first call: {:.1} us a frame on average ({:.3}% of the off side's mean frame); the first call {:.0} us",
        steady_mean.as_secs_f64() * 1e6,
        steady_mean.as_secs_f64() / mean_off.as_secs_f64() * 100.0,
        inspector_calls[0].as_secs_f64() * 1e6
    );
    inspector_calls.sort();
    let slowest: Vec<String> = inspector_calls
        .iter()
        .rev()
        .take(5)
        .map(|d| format!("{:.0}", d.as_secs_f64() * 1e6))
        .collect();
    println!(
        "Inspector::frame: median {:.1} us, slowest (us) {}",
        inspector_calls[inspector_calls.len() / 2].as_secs_f64() * 1e6,
        slowest.join(", ")
    );
    // One publish alone: an inspector that publishes on every call, on the
    // other world (between its frames), timed over many calls; the
    // fastest tenth says what a publish costs without the machine's noise.
    let mut every = sluice_inspect::Inspector::start(
        "127.0.0.1:0",
        sluice_inspect::InspectorOptions {
            publish_every: Duration::ZERO,
            ..sluice_inspect::InspectorOptions::default()
        },
    )?;
    every.frame(off.world_mut());
    let mut publishes: Vec<Duration> = (0..400)
        .map(|_| {
            let begin = Instant::now();
            every.frame(off.world_mut());
            begin.elapsed()
        })
        .collect();
    publishes.sort();
    println!(
        "one publish (snapshot built and swapped in): median {:.1} us, fastest tenth {:.1} us",
        publishes[publishes.len() / 2].as_secs_f64() * 1e6,
        publishes[publishes.len() / 10].as_secs_f64() * 1e6
    );
    let begin = Instant::now();
    let svg = on.world_mut().plan_svg()?;
    println!(
        "World::plan_svg: {:.0} us ({} bytes)",
        begin.elapsed().as_secs_f64() * 1e6,
        svg.len()
    );
    Ok(())
}
