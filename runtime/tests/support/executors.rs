//! What the tests of issue 34 and 36 share: every executor kind on 1, 2
//! and 4 threads (2 under Miri), a world on one of them, and a panic hook
//! that keeps planned failures off the output.

use std::sync::Once;

use sluice::{ExecutorKind, ThreadPool, World};

/// The message a test's planned panic starts with.
#[allow(dead_code)] // not every test binary plans a failure
pub const PLANNED: &str = "planned failure";

/// Keeps the panics whose message starts with [`PLANNED`] off the test
/// output; any other panic is printed as usual.
#[allow(dead_code)]
pub fn quiet_planned_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(PLANNED) {
                default(info);
            }
        }));
    });
}

/// Every executor kind on 1, 2 and 4 threads; under Miri the serial and
/// the parallel executor on 2. The adaptive executor runs its inline side
/// (the serial executor's path) until its first probe, 32 iterations in
/// (`world::adaptive::MIN_INTERVAL`), further than a test runs under Miri:
/// there it would repeat the serial run at Miri's cost.
pub fn executors() -> Vec<(ExecutorKind, usize)> {
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    let kinds: &[ExecutorKind] = if cfg!(miri) {
        &[ExecutorKind::Serial, ExecutorKind::Parallel]
    } else {
        &[
            ExecutorKind::Serial,
            ExecutorKind::Parallel,
            ExecutorKind::Adaptive,
        ]
    };
    kinds
        .iter()
        .flat_map(|&kind| threads.iter().map(move |&n| (kind, n)))
        .collect()
}

/// A world on a pool of its own of `threads` threads, run by `executor`.
#[allow(dead_code)] // not every test binary builds its own worlds
pub fn world_on(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world
}
