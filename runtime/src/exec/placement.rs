//! Keeping a worker off its callers' cores.
//!
//! With one more runnable thread than cores (another process's busy thread
//! beside the caller and a worker on a 2-core machine), the kernel places
//! two of the three on one core and has no reason to move either: any
//! placement is as balanced as any other. When the two that share are the
//! run's caller and a worker, the pool has one core between them while the
//! other process has a core to itself, and a pool frame costs what an
//! inline one does. Measured on a 2-vCPU machine beside one spinning
//! process (`busy`, 1,000 systems of 1 to 5 µs): frames of 3.1 ms with the
//! worker on the caller's core, for seconds at a time, against 1.6 to 3.1
//! ms (2.6 on average) with the worker beside the other process.
//!
//! So a worker whose yield came back late (another thread wanted its core)
//! checks whether it is on the core of a caller running on the pool, and if
//! so narrows its affinity to the cores it was allowed at start less that
//! one: the kernel moves it at once. It widens again (less the caller's
//! new core) only when it meets a caller again. On a quiet machine yields
//! come back at once and nothing here runs; the callers' threads are never
//! touched. Linux only (elsewhere, and under loom and Miri, a no-op);
//! `ThreadPoolBuilder::keep_off_callers_cores(false)` turns it off, and
//! `PoolStats::moves` counts the moves.
//!
//! A caller records its core once every [`CALLER_CPU_EVERY`] runs of its
//! seat (a vDSO call, some nanoseconds; threads move between cores on the
//! scale of milliseconds).

use std::time::Duration;

use crate::sync::Cell;
use crate::sync::atomic::{AtomicU32, Ordering};

/// A yield that takes longer than this handed the core to another thread.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const LATE_YIELD: Duration = Duration::from_micros(50);

/// A caller records its core at the first of every this many runs of its
/// seat.
pub(crate) const CALLER_CPU_EVERY: u32 = 16;

/// No core recorded.
const UNKNOWN: u32 = u32::MAX;

/// The core each external seat's caller was last seen on, by seat.
#[derive(Debug)]
pub(crate) struct CallerCpus {
    /// [`UNKNOWN`] until the seat's caller records one. Relaxed: a stale
    /// core costs a worker at most one needless move.
    cpus: Box<[AtomicU32]>,
}

impl CallerCpus {
    pub(crate) fn new(seats: usize) -> Self {
        Self {
            cpus: (0..seats).map(|_| AtomicU32::new(UNKNOWN)).collect(),
        }
    }

    /// Records the calling thread's core for `seat`, at the first of every
    /// [`CALLER_CPU_EVERY`] runs (`generation` counts the seat's runs).
    #[inline]
    pub(crate) fn record(&self, seat: usize, generation: u32) {
        if generation.is_multiple_of(CALLER_CPU_EVERY)
            && let (Some(slot), Some(cpu)) = (self.cpus.get(seat), current_cpu())
        {
            slot.store(cpu, Ordering::Relaxed);
        }
    }

    /// Whether a caller of one of `active` seats was last seen on `cpu`.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn any_on(&self, cpu: u32, mut active: impl FnMut(usize) -> bool) -> bool {
        self.cpus
            .iter()
            .enumerate()
            .any(|(seat, slot)| slot.load(Ordering::Relaxed) == cpu && active(seat))
    }
}

/// A worker's placement: the cores it may run on at start, and the one it
/// keeps off now.
#[derive(Debug)]
pub(crate) struct WorkerPlacement {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    allowed: Option<libc::cpu_set_t>,
    /// The core its affinity leaves out ([`UNKNOWN`]: none).
    avoided: Cell<u32>,
}

impl WorkerPlacement {
    /// The calling (worker) thread's placement as it starts.
    pub(crate) fn of_current_thread() -> Self {
        Self {
            #[cfg(all(target_os = "linux", not(loom), not(miri)))]
            allowed: linux::affinity(),
            avoided: Cell::new(UNKNOWN),
        }
    }

    /// Keeps the calling thread off `cpu` (if it may run elsewhere);
    /// whether it moved.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn avoid(&self, cpu: u32) -> bool {
        if self.avoided.get() == cpu {
            return false;
        }
        #[cfg(all(target_os = "linux", not(loom), not(miri)))]
        if let Some(allowed) = &self.allowed
            && linux::set_affinity_without(allowed, cpu)
        {
            self.avoided.set(cpu);
            return true;
        }
        false
    }

    /// Cores the thread may run on at most (1 where unknown).
    #[cfg(test)]
    fn cores(&self) -> usize {
        #[cfg(all(target_os = "linux", not(loom), not(miri)))]
        if let Some(allowed) = &self.allowed {
            // SAFETY: `allowed` is a live `cpu_set_t`.
            return unsafe { libc::CPU_COUNT(allowed) } as usize;
        }
        1
    }
}

/// The core the calling thread runs on, where the platform says.
#[inline]
pub(crate) fn current_cpu() -> Option<u32> {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    {
        linux::current_cpu()
    }
    #[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
    {
        None
    }
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod linux {
    use std::mem;

    #[inline]
    pub(super) fn current_cpu() -> Option<u32> {
        // SAFETY: `sched_getcpu` takes no arguments and touches no memory
        // of ours.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).ok()
    }

    /// The calling thread's affinity mask.
    pub(super) fn affinity() -> Option<libc::cpu_set_t> {
        // SAFETY: `cpu_set_t` is a plain bit array, valid all zeros.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY:
        // - pid 0 is the calling thread;
        // - `set` is a live `cpu_set_t` of the size passed.
        let result =
            unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
        (result == 0).then_some(set)
    }

    /// Restricts the calling thread to `allowed` less `cpu`; false (and
    /// nothing changed) when that leaves no core or the kernel refuses.
    pub(super) fn set_affinity_without(allowed: &libc::cpu_set_t, cpu: u32) -> bool {
        let mut set = *allowed;
        let cpu = cpu as usize;
        if cpu < libc::CPU_SETSIZE as usize {
            // SAFETY: `cpu` is below `CPU_SETSIZE`, inside the set.
            unsafe { libc::CPU_CLR(cpu, &mut set) };
        }
        // SAFETY: `set` is a live `cpu_set_t`.
        if unsafe { libc::CPU_COUNT(&set) } == 0 {
            return false;
        }
        // SAFETY:
        // - pid 0 is the calling thread;
        // - `set` is a live `cpu_set_t` of the size passed.
        unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_recorded_once_in_a_while() {
        let cpus = CallerCpus::new(2);
        cpus.record(1, 1);
        assert!(!cpus.any_on(UNKNOWN - 1, |_| true));
        cpus.record(1, CALLER_CPU_EVERY);
        match current_cpu() {
            Some(cpu) => {
                assert!(cpus.any_on(cpu, |seat| seat == 1));
                assert!(!cpus.any_on(cpu, |seat| seat == 0), "seat 1 is not active");
            }
            None => assert!(!cpus.any_on(0, |_| true)),
        }
    }

    /// A thread told to avoid its core runs elsewhere when it may (on one
    /// core, nothing changes).
    #[test]
    fn a_worker_moves_off_a_callers_core() {
        std::thread::spawn(|| {
            let placement = WorkerPlacement::of_current_thread();
            let Some(cpu) = current_cpu() else {
                return;
            };
            let cores = placement.cores();
            let moved = placement.avoid(cpu);
            assert_eq!(moved, cores > 1, "{cores} cores");
            if moved {
                assert_ne!(current_cpu(), Some(cpu), "moved off core {cpu}");
                assert!(!placement.avoid(cpu), "already off it");
            }
        })
        .join()
        .expect("the probe thread");
    }
}
