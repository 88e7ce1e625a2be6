//! Under loom: an OS thread that speaks up when a model stops moving.
//!
//! loom runs every model thread on the test's one OS thread, so a model
//! thread that blocks outside loom (a node joining a `std::thread` that
//! waits for a model thread, a std lock, channel or sleep) stops them all,
//! and the test would hang without a word. The watchdog watches the
//! model's progress (executions started; nodes, slices and tasks starting
//! and ending) and when it has not moved for the stall time, says on
//! stderr what is likely wrong, and keeps it for the failure report.

use std::time::{Duration, Instant};

use crate::sync::os::{Arc, AtomicU64, Condvar, Mutex, Ordering};

/// What the model's thread and the watchdog share.
#[derive(Default)]
pub(super) struct Progress {
    /// Moves on every execution started and every event logged.
    ticks: AtomicU64,
    /// Executions started.
    executions: AtomicU64,
    stop: Mutex<bool>,
    wake: Condvar,
    warnings: Mutex<Vec<String>>,
}

impl Progress {
    /// An execution started.
    pub(super) fn execution(&self) {
        self.executions.fetch_add(1, Ordering::Relaxed);
        self.tick();
    }

    /// Something happened.
    pub(super) fn tick(&self) {
        self.ticks.fetch_add(1, Ordering::Relaxed);
    }
}

/// The watching thread; stopped and joined when dropped.
pub(super) struct Watchdog {
    progress: Arc<Progress>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Watches `progress`, speaking up after `stall` without a tick.
    pub(super) fn start(progress: Arc<Progress>, stall: Duration) -> Self {
        let watched = Arc::clone(&progress);
        let thread = std::thread::Builder::new()
            .name("sluice-model-watchdog".to_owned())
            .spawn(move || watch(&watched, stall))
            .ok();
        Self { progress, thread }
    }

    /// What the watchdog said so far.
    pub(super) fn warnings(&self) -> Vec<String> {
        self.progress
            .warnings
            .lock()
            .map(|warnings| warnings.clone())
            .unwrap_or_default()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Ok(mut stop) = self.progress.stop.lock() {
            *stop = true;
        }
        self.progress.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn watch(progress: &Progress, stall: Duration) {
    let look = (stall / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut seen = progress.ticks.load(Ordering::Relaxed);
    let mut since = Instant::now();
    let mut warned = false;
    let Ok(mut stop) = progress.stop.lock() else {
        return;
    };
    loop {
        // Checked under the lock before each wait: a stop set before this
        // thread first waits is not missed.
        if *stop {
            return;
        }
        stop = match progress.wake.wait_timeout(stop, look) {
            Ok((stop, _)) => stop,
            Err(_) => return,
        };
        let ticks = progress.ticks.load(Ordering::Relaxed);
        if ticks != seen {
            (seen, since, warned) = (ticks, Instant::now(), false);
            continue;
        }
        if !warned && since.elapsed() >= stall {
            warned = true;
            let warning = format!(
                "sluice::model: execution {} has not moved for {:.1} s (no node, slice or task \
                 started or ended). A model thread blocked outside loom stops every model \
                 thread, since loom runs them all on one OS thread: a node joining a \
                 std::thread that waits for a model thread, a std lock, channel or sleep. \
                 Inside a model use sluice::sync (and sluice::sync::thread::spawn).",
                progress.executions.load(Ordering::Relaxed),
                since.elapsed().as_secs_f64()
            );
            eprintln!("{warning}");
            if let Ok(mut warnings) = progress.warnings.lock() {
                warnings.push(warning);
            }
        }
    }
}
