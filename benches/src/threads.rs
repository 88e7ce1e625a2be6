//! How many threads the parallel benches use.
//!
//! `SLUICE_BENCH_THREADS` lists the counts to run at, comma-separated, each
//! 1 to [`MAX_THREADS`] (for example `1,2,4,8,16` on a 16-core machine);
//! unset, it is 1 and every core. Benches that run one count take the
//! largest. bevy's `ComputeTaskPool` is made once per process, so its rows
//! use the largest count too ([`init_bevy_pool`]).

use std::env;
use std::fmt;

/// The environment variable naming the thread counts.
pub const VARIABLE: &str = "SLUICE_BENCH_THREADS";

/// The most threads a bench runs with.
pub const MAX_THREADS: usize = 64;

/// The machine's cores (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Why [`VARIABLE`] was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadThreads {
    /// The whole value.
    pub value: String,
    /// The entry that is not a count from 1 to [`MAX_THREADS`].
    pub entry: String,
}

impl fmt::Display for BadThreads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{VARIABLE}={:?}: {:?} is not a thread count from 1 to {MAX_THREADS} \
             (write counts separated by commas, such as 1,2,4,8)",
            self.value, self.entry
        )
    }
}

impl std::error::Error for BadThreads {}

/// The counts in `value` (see the module docs), ascending, each once.
pub fn parse(value: &str) -> Result<Vec<usize>, BadThreads> {
    let mut counts = Vec::new();
    for entry in value.split(',') {
        let count = entry
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|count| (1..=MAX_THREADS).contains(count))
            .ok_or_else(|| BadThreads {
                value: value.to_owned(),
                entry: entry.to_owned(),
            })?;
        counts.push(count);
    }
    counts.sort_unstable();
    counts.dedup();
    Ok(counts)
}

/// The counts to run at: [`VARIABLE`]'s, or 1 and every core.
///
/// # Panics
/// When [`VARIABLE`] is set but is not a list of counts: the bench stops
/// before measuring anything, with the message of [`BadThreads`].
pub fn thread_counts() -> Vec<usize> {
    match env::var(VARIABLE) {
        Ok(value) => parse(&value).unwrap_or_else(|bad| panic!("{bad}")),
        Err(_) => {
            let mut counts = vec![1, cores().min(MAX_THREADS)];
            counts.dedup();
            counts
        }
    }
}

/// The count for a bench that runs one: the largest of [`thread_counts`].
pub fn bench_threads() -> usize {
    thread_counts().last().copied().unwrap_or(1)
}

/// Makes bevy's compute pool with `threads` threads, unless this process
/// already made it (it is made once); the threads it has.
pub fn init_bevy_pool(threads: usize) -> usize {
    use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(threads).build())
        .thread_num()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_sorted_once_each() {
        assert_eq!(parse("8, 1,2,2,64").unwrap(), vec![1, 2, 8, 64]);
    }

    #[test]
    fn bad_entries_are_named() {
        for (value, entry) in [("0", "0"), ("65", "65"), ("1,x", "x"), ("", "")] {
            let bad = parse(value).unwrap_err();
            assert_eq!(bad.entry, entry);
            assert!(bad.to_string().contains(VARIABLE), "{bad}");
        }
    }
}
