//! The counting global allocator of the allocation tests, one module for
//! all of them: `runtime/tests/no_alloc.rs` and `no_alloc_commands.rs`
//! (`#[path = "support/counting_alloc.rs"]`), `tests/tests/world_batch_alloc.rs`
//! and `collections/tests/get_or_add_alloc.rs` (by a `#[path]` up to this
//! file). The including test binary installs it:
//!
//! ```ignore
//! #[path = "support/counting_alloc.rs"]
//! mod counting_alloc;
//!
//! #[global_allocator]
//! static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;
//! ```
//!
//! Every call is forwarded to `System`; while a measurement runs, the
//! allocations (and reallocations) of the threads it covers are counted:
//! [`Threads::This`] the calling thread only (so the harness's own threads,
//! which allocate when they please, cannot make a count flaky), or
//! [`Threads::Every`] every thread (a pool's workers too; the test binary
//! must then run one test function, or no harness, so nothing else
//! allocates meanwhile). [`traced_allocations_during`] also keeps the
//! backtraces of the first allocations, for the failure message.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// The counting allocator (install it with `#[global_allocator]`).
#[derive(Debug)]
pub struct Counting;

/// Which threads' allocations a measurement counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Only the thread that measures.
    This,
    /// Every thread of the process.
    Every,
}

/// Counting on every thread.
static EVERY: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// How many of the first counted allocations capture a backtrace.
static TRACED: AtomicUsize = AtomicUsize::new(0);
/// Those backtraces.
static TRACES: Mutex<Vec<String>> = Mutex::new(Vec::new());

thread_local! {
    /// Counting on this thread. `const` cells with no destructor: reading
    /// them never allocates, on any thread, at any time.
    static THIS: Cell<bool> = const { Cell::new(false) };
    /// Set while this thread captures a backtrace (which allocates itself).
    static TRACING: Cell<bool> = const { Cell::new(false) };
}

/// Counts one allocation of `layout` if a measurement covers this thread.
fn counted(layout: Layout) {
    if !(EVERY.load(Ordering::Relaxed) || THIS.with(Cell::get)) || TRACING.with(Cell::get) {
        return;
    }
    let seen = ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    if seen < TRACED.load(Ordering::Relaxed) {
        TRACING.with(|tracing| tracing.set(true));
        let trace = std::backtrace::Backtrace::force_capture();
        let thread = std::thread::current();
        let entry = format!(
            "allocation of {} bytes on thread {:?}:\n{trace}",
            layout.size(),
            thread.name().unwrap_or("?")
        );
        TRACES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(entry);
        TRACING.with(|tracing| tracing.set(false));
    }
}

// SAFETY:
// - Every call is forwarded unchanged to `System`, which upholds the
//   `GlobalAlloc` contract; counting (and capturing a backtrace, guarded
//   against recursion per thread) has no effect on the memory returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted(layout);
        // SAFETY:
        // - Forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counted(layout);
        // SAFETY:
        // - Forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counted(layout);
        // SAFETY:
        // - Forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY:
        // - Forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Counts the allocations `f` makes on `threads`.
pub fn allocations_during(threads: Threads, f: impl FnOnce()) -> usize {
    traced_allocations_during(threads, 0, f).0
}

/// Counts the allocations `f` makes on `threads`, with the backtraces of
/// the first `traced` of them.
pub fn traced_allocations_during(
    threads: Threads,
    traced: usize,
    f: impl FnOnce(),
) -> (usize, Vec<String>) {
    TRACES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    TRACED.store(traced, Ordering::SeqCst);
    ALLOCATIONS.store(0, Ordering::SeqCst);
    match threads {
        Threads::This => THIS.with(|this| this.set(true)),
        Threads::Every => EVERY.store(true, Ordering::SeqCst),
    }
    f();
    match threads {
        Threads::This => THIS.with(|this| this.set(false)),
        Threads::Every => EVERY.store(false, Ordering::SeqCst),
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst);
    // An allocation counted on another thread may still be capturing its
    // backtrace.
    let wanted = allocations.min(traced);
    for _ in 0..10_000 {
        if TRACES.lock().unwrap_or_else(PoisonError::into_inner).len() >= wanted {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let traces = std::mem::take(&mut *TRACES.lock().unwrap_or_else(PoisonError::into_inner));
    (allocations, traces)
}
