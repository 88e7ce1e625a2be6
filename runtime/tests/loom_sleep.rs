//! Loom model of the sleep/notify handshake (`exec/pool.rs`,
//! `Registry::sleep` and `Registry::notify`, with their `SeqCst` fences).
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_sleep`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.
//!
//! crossbeam's injector and parker are replaced by the stand-ins of
//! `src/sync.rs` (see there for what is assumed): the injector's `is_empty`
//! is an `Acquire` load of what its push stored `Release`, as crossbeam's,
//! so only the protocol's own fences keep the waker and the sleeper from
//! missing each other.

#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use sluice::exec::loom_hooks::Sleepers;

/// A participant with nothing to do goes to sleep while another thread
/// publishes a job and notifies. Either the sleeper's re-check sees the job
/// or the waker sees the sleeper: the job always runs. A lost wake-up is a
/// thread parked forever, which loom reports as a deadlock.
#[test]
fn a_published_job_is_never_slept_through() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let sleepers = Arc::new(Sleepers::new(1));
            let sleeper = {
                let sleepers = sleepers.clone();
                thread::spawn(move || sleepers.wait_for_job())
            };
            sleepers.publish();
            sleeper.join().unwrap();
            assert!(sleepers.job_ran());
        });
}
